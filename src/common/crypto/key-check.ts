import type { ClientBase } from 'pg';
import { AppConfig, ConfigError } from '../../config';
import { SecretBox } from './secret-box';

/**
 * Stops a start whose ENCRYPTION_KEY cannot open the secrets the database already holds (the key was changed, or
 * a generated one replaced): otherwise every route and delivery that needs one fails on its own, as a 500 or a
 * delivery that never goes. A user and a webhook always carry a sealed value; one of each is tried, and the start
 * goes on if any opens (or there is none yet). Read only, once, before the application starts, on `db`.
 */
export async function checkEncryptionKey(config: AppConfig, db: ClientBase): Promise<void> {
  const { rows } = await db.query<{ sealed: string }>(
    `(SELECT access_key_encrypted AS sealed FROM dashboard_users LIMIT 1)
     UNION ALL (SELECT secret_encrypted FROM webhooks LIMIT 1)`,
  );
  const sealed = rows.map((r) => r.sealed);
  const box = new SecretBox(config);
  const opens = (value: string) => {
    try {
      box.decrypt(value);
      return true;
    } catch {
      return false;
    }
  };
  if (sealed.length === 0 || sealed.some(opens)) return;
  const whose = config.generatedSecrets.includes('ENCRYPTION_KEY')
    ? `the key generated into ${config.dataDir}/secrets.json (no ENCRYPTION_KEY set)`
    : 'this key';
  throw new ConfigError(
    `Invalid configuration:\n  ENCRYPTION_KEY: ${whose} does not open the secrets the database holds, sealed with ` +
      'another key: set ENCRYPTION_KEY to the key they were written with',
  );
}
