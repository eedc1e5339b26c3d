// first: tracing must be set up before the modules it instruments are loaded
import { stopTracing } from './tracing';
import 'reflect-metadata';
import { Client } from 'pg';
import { checkEncryptionKey } from './common/crypto/key-check';
import { STOP_SIGNALS } from './common/stop-signals';
import { ConfigError, loadConfigFromEnvironment } from './config';
import { CONNECT_TIMEOUT_MS, runMigrations } from './database/data-source';
import { resolveInfrastructure } from './database/infrastructure';
import { boundHeapGrowth } from './heap-growth';
import { settleQueuePrefix } from './queue/queue-prefix';

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
  for (const warning of config.warnings) say(warning);
  // a worker's heap is collected before it fills with garbage (see there)
  if (config.role === 'worker') boundHeapGrowth();
  const { infra, applied, prefix } = await explained('PostgreSQL (DATABASE_URL)', async () => {
    const infra = await resolveInfrastructure(config, say);
    const applied = await runMigrations(config.database.url!);
    // what the start reads of the database before the application, on one connection
    const db = new Client({ connectionString: config.database.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    await db.connect();
    try {
      await checkEncryptionKey(config, db);
      return { infra, applied, prefix: await settleQueuePrefix(config, db) };
    } finally {
      await db.end();
    }
  });
  if (applied.length) say(`applied migrations: ${applied.join(', ')}`);
  if (prefix) say(`Redis keys start with ${prefix}, this database's own (QUEUE_PREFIX is not set)`);

  // the application's modules are loaded only now: a start that cannot succeed (no database, Redis refusing it, the
  // wrong ENCRYPTION_KEY) says why without loading them first, which took over half of its time
  const { createApp } = await import('./bootstrap');
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
    for (const name of STOP_SIGNALS) process.removeListener(name, stop);
    // die of the signal, as without a handler, unless something went wrong
    if (code === 0) process.kill(process.pid, signal);
    else process.exit(code);
  };
  for (const name of STOP_SIGNALS) process.on(name, stop);
  // BullMQ (5.81) closes a connection still being set up (its Redis down or frozen) by dropping its listeners first;
  // the set-up's failure then rejects with nobody to hear it. While stopping, that one is expected: it must not turn
  // the stop into a crash. Any other unhandled rejection ends the process, as Node's default does.
  process.on('unhandledRejection', (reason) => {
    if (stopping && reason instanceof Error && reason.message === 'Connection is closed.') return;
    throw reason;
  });
  // a stop that hangs (a peer that never answers) still ends: past SHUTDOWN_TIMEOUT the process exits
  const limit = config.shutdownTimeoutMs;
  const bounded = () =>
    setTimeout(() => {
      say(`did not stop within ${limit / 1000} s (SHUTDOWN_TIMEOUT): exiting`);
      process.exit(1);
    }, limit).unref();
  for (const name of STOP_SIGNALS) process.once(name, bounded);
  try {
    await app.listen(config.port, config.host);
  } catch (err) {
    // a worker's HTTP serves only /health and /metrics: one more worker on a machine (or one given the API's PORT)
    // runs without them rather than not at all
    if (config.role === 'worker' && (err as { code?: unknown }).code === 'EADDRINUSE') {
      say(
        `role worker running without /health and /metrics: ${config.host}:${config.port} is taken (give it a PORT of its own)`,
      );
      return;
    }
    throw explanation(`listening on ${config.host}:${config.port} (HOST, PORT)`, err);
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // an IPv6 address in a URL is bracketed: http://[::1]:3000, not http://::1:3000
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  say(`role ${config.role} listening on http://${host}:${port}${config.runsApi ? ' (docs at /docs)' : ''}`);
}

/** Errors of the outside world that say all there is to say: their message, without a stack. */
const PLAIN_ERRORS = new RegExp(
  '^(' +
    [
      'ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EADDRINUSE|EADDRNOTAVAIL|EACCES|ETIMEDOUT|EHOSTUNREACH|ECONNRESET|EPROTO',
      // TLS to the database (sslmode): a certificate the client does not trust
      'DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      'CERT_HAS_EXPIRED|ERR_TLS_CERT_ALTNAME_INVALID',
      // PostgreSQL refusing the connection: no such database, authentication, no permission, too many clients,
      // shutting down or starting up, a bad setting given in DATABASE_URL's options
      '3D000|28[0-9A-Z]{3}|42501|08[0-9A-Z]{3}|53[0-9A-Z]{3}|57P[0-9A-Z]{2}|22023|42704',
    ].join('|') +
    ')$',
);
/** The same, known by their message alone (pg gives them no code). */
const PLAIN_MESSAGES = /does not support SSL connections/;

class StartupError extends Error {}

/** Runs a start-up step; a failure of the outside world is reported with the step and the variables it depends on. */
async function explained<T>(step: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw explanation(step, err);
  }
}

/** What a failed start-up step throws: a failure of the outside world as a StartupError naming the step, else `err`. */
function explanation(step: string, err: unknown): unknown {
  const code = String((err as { code?: unknown } | undefined)?.code ?? '');
  const message = String((err as Error | undefined)?.message);
  // pg's time limit on opening a connection says so in its message alone, without a code
  const unanswered = /timeout exceeded when trying to connect|connection timeout/.test(message);
  if (!PLAIN_ERRORS.test(code) && !unanswered && !PLAIN_MESSAGES.test(message)) return err;
  let hint = code === '3D000' ? ' (create it, e.g. with createdb, or name one that exists)' : '';
  if (unanswered) hint = ` (nothing answered within ${CONNECT_TIMEOUT_MS / 1000} s: is a PostgreSQL server there?)`;
  return new StartupError(`${step}: ${(err as Error).message}${hint}`);
}

main().catch((err) => {
  const plain = err instanceof StartupError || err instanceof ConfigError;
  say(`failed to start: ${plain ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
