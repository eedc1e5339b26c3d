import 'reflect-metadata';
import { createApp } from './bootstrap';
import { ConfigError, loadConfigFromEnvironment } from './config';
import { runMigrations } from './database/data-source';
import { resolveInfrastructure } from './database/infrastructure';

const say = (msg: string) => process.stderr.write(`[gateway-management] ${msg}\n`);

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfigFromEnvironment();
  } catch (err) {
    if (err instanceof ConfigError) {
      say(err.message);
      process.exit(1);
    }
    throw err;
  }
  if (config.generatedSecrets.length > 0) {
    say(`no ${config.generatedSecrets.join(', ')} in the environment: using generated values kept in ${config.dataDir}/secrets.json`);
    const file = `${config.dataDir}/secrets.json`;
    say(`  read them with: cat ${file}   (set the variables, or NODE_ENV=production, to stop this)`);
  }
  const infra = await resolveInfrastructure(config, say);
  const applied = await runMigrations(config.database.url!);
  if (applied.length) say(`applied migrations: ${applied.join(', ')}`);

  const app = await createApp(config);
  const stopEmbedded = async () => {
    await infra.embeddedPostgres?.stop().catch(() => undefined);
  };
  app.getHttpAdapter().getInstance().addHook('onClose', async () => stopEmbedded());
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  say(`role ${config.role} listening on http://${config.host}:${port}${config.runsApi ? ' (docs at /docs)' : ''}`);
}

main().catch((err) => {
  say(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
