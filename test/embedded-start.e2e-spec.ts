import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { ServiceProcess } from './helpers/service-process';
import { deleteQueueKeys } from './helpers/test-env';
import { relocatedHome } from '../src/database/embedded-postgres';
import { ENV_REDIS_URL, ENV_RUN_ID, testQueuePrefix } from './setup/test-infra';

/** A service with no DATABASE_URL on `dataDir`, on a port of its own. */
const serviceVars = (dataDir: string, queuePrefix: string) => ({
  DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  REDIS_URL: process.env[ENV_REDIS_URL]!,
  QUEUE_PREFIX: queuePrefix,
  LOG_LEVEL: 'warn',
});

describe('npm start with no DATABASE_URL', () => {
  // One data directory for the file: the first test starts on it empty (initdb, the migrations, generated secrets);
  // the second needs one a service has run on, and takes that one over rather than initialising another.
  let dataDir: string;
  let queuePrefix: string;
  beforeAll(() => {
    // mode 700, as mkdtemp makes it: as root, PostgreSQL runs as the postgres user, who cannot enter it
    dataDir = mkdtempSync(join(tmpdir(), 'gwm-embedded-'));
    queuePrefix = `${testQueuePrefix(process.env[ENV_RUN_ID]!)}embedded`;
  });
  afterAll(async () => {
    // a server a failed run left behind is stopped here, as the service would
    for (const dir of [join(dataDir, 'postgres'), join(relocatedHome(dataDir), 'data')]) {
      const lock = join(dir, 'postmaster.pid');
      if (existsSync(lock)) {
        try {
          process.kill(Number(readFileSync(lock, 'utf8').split('\n')[0]), 'SIGINT');
        } catch {
          // already gone
        }
      }
    }
    await deleteQueueKeys(process.env[ENV_REDIS_URL]!, queuePrefix);
    rmSync(relocatedHome(dataDir), { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs an embedded PostgreSQL under the data directory, generates secrets, is ready, and stops without a warning', async () => {
    const svc = await ServiceProcess.start(serviceVars(dataDir, queuePrefix), 90_000);
    let stopped = false;
    try {
      expect(svc.output).toContain('embedded PostgreSQL listening');
      const ready = await request(`http://127.0.0.1:${svc.port}/health/ready`);
      expect(ready.statusCode).toBe(200);
      expect(await ready.body.json()).toMatchObject({
        status: 'ok',
        details: { postgres: { status: 'up' }, redis: { status: 'up' } },
      });
      // the generated secrets are kept and work
      const secrets = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8'));
      const list = await request(`http://127.0.0.1:${svc.port}/portal-api/webhooks`, {
        headers: { authorization: secrets.PORTAL_API_TOKEN },
      });
      expect(list.statusCode).toBe(200);
      expect(await list.body.json()).toEqual([]);

      // a second service on the same data directory says why it cannot start, without a stack trace
      const second = await ServiceProcess.start(serviceVars(dataDir, queuePrefix), 60_000).then(
        async (started) => {
          await started.kill('SIGTERM');
          return 'started';
        },
        (err: Error) => err.message,
      );
      expect(second).toContain('failed to start: PostgreSQL (DATABASE_URL unset): the embedded PostgreSQL in ');
      expect(second).toContain('lock file "postmaster.pid" already exists');
      expect(second).toContain('a second `npm start` from this folder?');
      expect(second).not.toMatch(/^\s+at /m);

      // stopping closes the outbox listener, the workers and the pools before the embedded database
      await svc.kill('SIGTERM');
      stopped = true;
      expect(svc.output).not.toMatch(/"level":(40|50|60)/);
      expect(svc.output).not.toMatch(/error|warn/i);
    } finally {
      if (!stopped) await svc.kill('SIGTERM');
    }
  }, 120_000);

  it('after a service was killed (SIGKILL), the next start stops the PostgreSQL it left running and keeps the data; SIGHUP stops both', async () => {
    const vars = serviceVars(dataDir, queuePrefix);
    let last: ServiceProcess | undefined;
    try {
      const first = await ServiceProcess.start(vars, 90_000);
      last = first;
      const token = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8')).PORTAL_API_TOKEN;
      const created = await request(`http://127.0.0.1:${first.port}/portal-api/apps`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: JSON.stringify({ Name: 'kept across the crash' }),
      });
      expect(created.statusCode).toBe(200);
      await created.body.text();
      await first.kill('SIGKILL');

      const second = await ServiceProcess.start(vars, 90_000);
      last = second;
      expect(second.output).toContain('stopping the embedded PostgreSQL (pid ');
      const apps = await request(`http://127.0.0.1:${second.port}/portal-api/apps`, {
        headers: { authorization: token },
      });
      expect(apps.statusCode).toBe(200);
      expect((await apps.body.json()) as { Name: string }[]).toMatchObject([{ Name: 'kept across the crash' }]);

      // SIGHUP (a closing terminal) stops it as SIGTERM does, its embedded PostgreSQL included (Node's default for
      // SIGHUP ended the process on the spot, and left that running)
      expect(await second.signalAndWait('SIGHUP')).toBeNull();
      for (const dir of [join(dataDir, 'postgres'), join(relocatedHome(dataDir), 'data')])
        expect(existsSync(join(dir, 'postmaster.pid'))).toBe(false);
    } finally {
      await last?.kill('SIGTERM');
    }
  }, 240_000);
});
