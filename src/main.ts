// first: tracing must be set up before the modules it instruments are loaded
import { stopTracing } from './tracing';
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
    say(
      `no ${config.generatedSecrets.join(', ')} in the environment: using generated values kept in ${config.dataDir}/secrets.json`,
    );
    const file = `${config.dataDir}/secrets.json`;
    say(`  read them with: cat ${file}   (set the variables, or NODE_ENV=production, to stop this)`);
  }
  const infra = await resolveInfrastructure(config, say);
  const applied = await runMigrations(config.database.url!);
  if (applied.length) say(`applied migrations: ${applied.join(', ')}`);

  const app = await createApp(config, [], { closeOnSignals: false });
  // Shutdown in order: the app first (HTTP, the outbox listener, queue workers, then the connection pools),
  // and only then the embedded PostgreSQL they all use.
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    let code = 0;
    try {
      await app.close();
    } catch (err) {
      say(`error while stopping: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      code = 1;
    }
    await stopTracing();
    await infra.embeddedPostgres?.stop().catch(() => undefined);
    process.exitCode = code;
    process.removeListener('SIGTERM', stop);
    process.removeListener('SIGINT', stop);
    // die of the signal, as without a handler, unless something went wrong
    if (code === 0) process.kill(process.pid, signal);
    else process.exit(code);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  say(`role ${config.role} listening on http://${config.host}:${port}${config.runsApi ? ' (docs at /docs)' : ''}`);
}

main().catch((err) => {
  say(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
