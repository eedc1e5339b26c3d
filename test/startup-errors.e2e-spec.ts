import { createServer, Socket } from 'node:net';
import { request } from 'undici';
import { ServiceProcess } from './helpers/service-process';
import { useTestEnv } from './helpers/use-service';

/** A start-up that cannot succeed says why, naming the variables to look at, without a stack trace. */
describe('start-up failures', () => {
  const env = useTestEnv();

  const failure = async (vars: Record<string, string>): Promise<string> => {
    try {
      env.adopt(await ServiceProcess.start({ ...env.vars, ...vars }, 30_000));
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('the service started');
  };

  // A server that accepts the connection and never answers makes the start wait out the client's 10 s limit: that
  // start runs from the beginning of the file, beside the other tests (it only waits), and the last test reads what
  // it said.
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  let unanswered: Promise<{ message: string; ms: number }>;
  beforeAll(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const started = Date.now();
    unanswered = ServiceProcess.start(
      { ...env.vars, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/any` },
      30_000,
    )
      .then(
        async (svc) => {
          await svc.close();
          return 'the service started';
        },
        (err: Error) => err.message,
      )
      .then((message) => ({ message, ms: Date.now() - started }));
  });
  afterAll(async () => {
    await unanswered;
    sockets.forEach((s) => s.destroy());
    await new Promise((resolve) => silent.close(resolve));
  }, 40_000);

  it('names DATABASE_URL when its database does not exist, and HOST and PORT when it cannot listen', async () => {
    const missing = env.vars.DATABASE_URL.replace(/\/[^/?]+(\?|$)/, '/no_such_database_here$1');
    const db = await failure({ DATABASE_URL: missing });
    expect(db).toContain(
      'failed to start: PostgreSQL (DATABASE_URL): database "no_such_database_here" does not exist (create it',
    );
    expect(db).not.toMatch(/^\s+at /m);

    // an address of no interface of this machine (TEST-NET-1): binding fails here, nothing is sent anywhere
    const host = await failure({ HOST: '192.0.2.1', ROLE: 'api' });
    expect(host).toContain('failed to start: listening on 192.0.2.1:');
    expect(host).toContain('(HOST, PORT)');
    expect(host).not.toMatch(/^\s+at /m);
  });

  it('names DATABASE_URL, without a stack trace, when PostgreSQL refuses a setting it gives or TLS it asks for', async () => {
    const withQuery = (query: string) =>
      env.vars.DATABASE_URL + (env.vars.DATABASE_URL.includes('?') ? '&' : '?') + query;
    const setting = await failure({ DATABASE_URL: withQuery('options=-c%20statement_timeout%3Dabc') });
    expect(setting).toContain('failed to start: PostgreSQL (DATABASE_URL): invalid value for parameter');
    expect(setting).not.toMatch(/^\s+at /m);

    // a server that answers the client's request for TLS with "no", as one without TLS does
    const sockets: Socket[] = [];
    const plain = createServer((socket) => {
      sockets.push(socket);
      socket.once('data', () => socket.write('N'));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const { port } = plain.address() as { port: number };
    try {
      const tls = await failure({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/any?sslmode=no-verify` });
      expect(tls).toContain('failed to start: PostgreSQL (DATABASE_URL): The server does not support SSL connections');
      expect(tls).not.toMatch(/^\s+at /m);
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((resolve) => plain.close(resolve));
    }
  }, 40_000);

  it('names REDIS_URL when the server refuses its database number or its credentials', async () => {
    // ioredis alone carries on after a refused SELECT, on database 0: another application's keys
    const database = await failure({ REDIS_URL: 'redis://127.0.0.1:6379/99' });
    expect(database).toContain('failed to start: Invalid configuration:');
    expect(database).toContain('REDIS_URL: the server refuses it: ERR DB index is out of range');
    expect(database).not.toMatch(/^\s+at /m);

    const credentials = await failure({ REDIS_URL: 'redis://no-such-user:secret@127.0.0.1:6379' });
    expect(credentials).toContain('REDIS_URL: the server refuses it: WRONGPASS');
    expect(credentials).not.toContain('secret');
  });

  it('names ENCRYPTION_KEY when it does not open the secrets the database holds', async () => {
    const first = await ServiceProcess.start({ ...env.vars, ROLE: 'api' });
    try {
      // a user's access key is kept sealed with the key
      const created = await request(`http://127.0.0.1:${first.port}/admin/users`, {
        method: 'POST',
        headers: { 'admin-auth': env.vars.ADMIN_SECRET, 'content-type': 'application/json' },
        body: JSON.stringify({ email_address: 'sealed@example.com', first_name: 'Se', last_name: 'Aled' }),
      });
      expect(created.statusCode).toBe(200);
      await created.body.text();
    } finally {
      await first.close();
    }

    const other = await failure({ ENCRYPTION_KEY: 'ff'.repeat(32) });
    expect(other).toContain('failed to start: Invalid configuration:');
    expect(other).toContain('ENCRYPTION_KEY: this key does not open the secrets the database holds');
    expect(other).not.toMatch(/^\s+at /m);

    // the key they were written with starts as before
    const again = env.adopt(await ServiceProcess.start({ ...env.vars, ROLE: 'api' }));
    expect(again.output).toContain('role api listening on');
  }, 60_000);

  it('names DATABASE_URL when the server there accepts the connection but never answers', async () => {
    const { message: db, ms } = await unanswered;
    expect(db).toContain('failed to start: PostgreSQL (DATABASE_URL): ');
    expect(db).toContain('nothing answered within 10 s');
    expect(db).not.toMatch(/^\s+at /m);
    expect(ms).toBeLessThan(25_000);
  }, 40_000);
});
