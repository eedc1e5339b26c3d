import { ENV_ADMIN_URL, ENV_TEMPLATE, withAdminClient } from './test-infra';

export default async function globalTeardown(): Promise<void> {
  const adminUrl = process.env[ENV_ADMIN_URL];
  const template = process.env[ENV_TEMPLATE];
  if (adminUrl && template) {
    await withAdminClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`)).catch(() => undefined);
  }
  const embedded = (globalThis as Record<string, unknown>).__embeddedPostgres as { stop(): Promise<void> } | undefined;
  await embedded?.stop();
}
