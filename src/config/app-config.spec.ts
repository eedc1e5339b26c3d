import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEFAULT_RETRY_SCHEDULE, loadConfig } from './app-config';

const secrets = {
  GATEWAY_SECRET: 'g'.repeat(20),
  ADMIN_SECRET: 'a'.repeat(20),
  PORTAL_API_TOKEN: 'p'.repeat(20),
  ENCRYPTION_KEY: 'ab'.repeat(32),
};

describe('loadConfig', () => {
  const dataDir = () => mkdtempSync(join(tmpdir(), 'gwm-config-'));

  it('applies the documented defaults', () => {
    const c = loadConfig({ ...secrets, DATA_DIR: dataDir() });
    expect(c.port).toBe(3000);
    expect(c.role).toBe('all');
    // until the start settles the database's own (settleQueuePrefix)
    expect(c.redis.prefix).toBe('{gwm}');
    expect(c.redis.prefixFromDatabase).toBe(true);
    expect(c.redis.cluster).toBeUndefined();
    expect(c.webhooks.retentionDays).toBe(30);
    expect(c.dashboard.pageSize).toBe(10);
    expect(c.webhooks.allowedCidrs).toEqual([]);
    expect(c.webhooks.retrySchedule).toEqual(DEFAULT_RETRY_SCHEDULE);
    expect(c.secrets.encryptionKey).toHaveLength(32);
    expect(c.generatedSecrets).toEqual([]);
  });

  it.each([
    ['PORT', 'abc'],
    ['ROLE', 'both'],
    ['DATABASE_URL', 'mysql://x'],
    ['DCR_REGISTRATION_ENDPOINT', 'ftp://idp.example/register'],
    ['DCR_REGISTRATION_ENDPOINT', 'https://'],
    ['DCR_REGISTRATION_ENDPOINT', 'https://idp example.com/register'],
    ['DCR_REGISTRATION_ENDPOINT', 'http://idp.example:99999/register'],
    ['DCR_INITIAL_ACCESS_TOKEN', 'first-line\nsecond-line'],
    ['DATABASE_URL', 'postgres://postgres@127.0.0.1:99999/db'],
    ['DATABASE_URL', 'postgres://postgres:p#ss@127.0.0.1:5432/db'],
    ['REDIS_URL', 'http://x'],
    ['ENCRYPTION_KEY', 'short'],
    ['ENCRYPTION_KEY', 'ab'.repeat(31)],
    ['ENCRYPTION_KEY', 'ab'.repeat(33)],
    ['ENCRYPTION_KEY', Buffer.alloc(31, 7).toString('base64')],
    ['ENCRYPTION_KEY', Buffer.alloc(33, 7).toString('base64')],
    ['ENCRYPTION_KEY', 'a'.repeat(31)],
    ['ENCRYPTION_KEY', 'a b'.repeat(10) + 'ab'],
    ['ENCRYPTION_KEY', Buffer.alloc(32, 0xfb).toString('base64').replace('+', '-')],
    ['WEBHOOK_ALLOWED_CIDRS', '10.0.0.0/99'],
    ['WEBHOOK_ALLOWED_CIDRS', '127.0.0.0/8,010.0.0.0/8'],
    ['WEBHOOK_ALLOWED_CIDRS', '10.1/16'],
    ['WEBHOOK_ALLOWED_CIDRS', '0x7f.0.0.1/32'],
    ['WEBHOOK_ALLOWED_CIDRS', '127.0.0.256'],
    ['WEBHOOK_ALLOWED_CIDRS', '010.0.0.1'],
    ['QUEUE_PREFIX', '{bull'],
    ['QUEUE_PREFIX', '{{bull}}'],
    ['QUEUE_PREFIX', 'test/prefix'],
    ['WEBHOOK_RETRY_SCHEDULE', '0,.5'],
    ['WEBHOOK_RETRY_SCHEDULE', '0,1.'],
    ['WEBHOOK_RETRY_SCHEDULE', '0,five'],
    ['WEBHOOK_RETRY_SCHEDULE', '0,99999999999999999999999,5'],
    ['WEBHOOK_RETRY_SCHEDULE', '0,2592001'],
    ['PORT', '3e3'],
    ['PORT', '0x10'],
    ['PORT', '3000.0'],
    ['WEBHOOK_DISABLE_AFTER', '5'],
    ['WEBHOOK_DISABLE_AFTER', 'soon'],
    ['WEBHOOK_DISABLE_AFTER', '-5d'],
    ['WEBHOOK_DISABLE_AFTER', '10ms'],
    ['DASHBOARD_PAGE_SIZE', '0'],
    ['DASHBOARD_PAGE_SIZE', '1001'],
    ['GATEWAY_SECRET', ' '.repeat(20)],
    ['ADMIN_SECRET', ' admin-secret-with-blanks '],
    ['PORTAL_API_TOKEN', 'portal-token-0123456789\t'],
    ['PORTAL_API_TOKEN', 'portal-tökén-0123456789'],
    ['REDIS_CLUSTER_NODES', 'localhost'],
    ['REDIS_CLUSTER_NODES', '127.0.0.1:70000'],
    ['REDIS_URL', 'redis-cluster://'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/abc'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/99x'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/1/2'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/01'],
    ['REDIS_URL', 'redis://[::1'],
    ['REDIS_URL', 'redis://127.0.0.1:6379?db=2'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/0?password=secret'],
    ['REDIS_URL', 'redis://127.0.0.1:6379/#2'],
    ['DELIVERY_RETENTION_DAYS', '0'],
    ['DELIVERY_RETENTION_DAYS', 'week'],
    ['DELIVERY_RETENTION_DAYS', '36501'],
    ['WEBHOOK_CONCURRENCY', '0'],
    ['WEBHOOK_CONCURRENCY', '1001'],
    ['PORT', '65536'],
    ['IDEMPOTENCY_KEY_TTL', '24'],
    ['IDEMPOTENCY_KEY_TTL', '500ms'],
    ['SHUTDOWN_TIMEOUT', '30'],
    ['SHUTDOWN_TIMEOUT', '500ms'],
    ['SHUTDOWN_TIMEOUT', '2h'],
    ['SHUTDOWN_TIMEOUT', '30d'],
    ['DATABASE_STATEMENT_TIMEOUT', '30'],
    ['DATABASE_STATEMENT_TIMEOUT', '500ms'],
    ['DATABASE_STATEMENT_TIMEOUT', '2h'],
  ])('fails start-up naming %s when it is %p', (name, value) => {
    expect(() => loadConfig({ ...secrets, DATA_DIR: dataDir(), [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...secrets, DATA_DIR: dataDir(), [name]: value })).toThrow(name);
  });

  it.each(['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379/', 'redis://127.0.0.1:6379/0', 'rediss://h:6380/15'])(
    'takes REDIS_URL %p, with or without a database number',
    (url) => {
      expect(loadConfig({ ...secrets, DATA_DIR: dataDir(), REDIS_URL: url }).redis.url).toBe(url);
    },
  );

  it.each([
    'postgres://postgres@127.0.0.1:5432/db',
    'postgresql://u:p%23ss@[::1]:5432/db?sslmode=disable',
    'postgres://u@/db?host=/var/run/postgresql',
    'postgres:///db?host=/var/run/postgresql',
    'postgres://u:pa ss@db.example:5432/db',
  ])('takes DATABASE_URL %p, as the Postgres client reads it', (url) => {
    expect(loadConfig({ ...secrets, DATA_DIR: dataDir(), DATABASE_URL: url }).database.url).toBe(url);
  });

  it('takes a DCR_REGISTRATION_ENDPOINT with a host and its token', () => {
    const c = loadConfig({
      ...secrets,
      DATA_DIR: dataDir(),
      DCR_REGISTRATION_ENDPOINT: 'https://[::1]:8443/realms/x/clients-registrations/openid-connect',
      DCR_INITIAL_ACCESS_TOKEN: 'eyJhbGciOi.J9.x-_~+/=',
    });
    expect(c.dcr.registrationEndpoint).toBe('https://[::1]:8443/realms/x/clients-registrations/openid-connect');
    expect(c.dcr.initialAccessToken).toBe('eyJhbGciOi.J9.x-_~+/=');
  });

  it.each([
    ['base64', Buffer.alloc(32, 0xfb).toString('base64')],
    ['base64 without its padding', Buffer.alloc(32, 0xfb).toString('base64').replace(/=$/, '')],
    ['base64url', Buffer.alloc(32, 0xfb).toString('base64url')],
    ['hex in capitals', Buffer.alloc(32, 0xfb).toString('hex').toUpperCase()],
  ])('takes a 32-byte ENCRYPTION_KEY as %s', (_form, value) => {
    const c = loadConfig({ ...secrets, DATA_DIR: dataDir(), ENCRYPTION_KEY: value });
    expect(c.secrets.encryptionKey.equals(Buffer.alloc(32, 0xfb))).toBe(true);
  });

  it('takes credentials of printable ASCII with blanks inside', () => {
    const c = loadConfig({ ...secrets, DATA_DIR: dataDir(), ADMIN_SECRET: 'correct horse battery staple ~!"#$%' });
    expect(c.secrets.admin).toBe('correct horse battery staple ~!"#$%');
  });

  it('gives one true reason for a value of the wrong form, not every rule it also fails', () => {
    const reason = (vars: Record<string, string>) => {
      try {
        loadConfig({ ...secrets, DATA_DIR: dataDir(), ...vars });
      } catch (err) {
        return (err as Error).message.split('\n').slice(1).join('\n').trim();
      }
      return 'started';
    };
    expect(reason({ PORT: 'abc' })).toBe('PORT: PORT must be an integer number');
    expect(reason({ PORT: '70000' })).toBe('PORT: PORT must not be greater than 65535');
    expect(reason({ WEBHOOK_RETRY_SCHEDULE: '0,2592001' })).toBe(
      'WEBHOOK_RETRY_SCHEDULE: WEBHOOK_RETRY_SCHEDULE must not wait more than 2592000 seconds (30 days) before an attempt',
    );
    expect(reason({ WEBHOOK_RETRY_SCHEDULE: '0,2592000' })).toBe('started');
  });

  it('takes a DASHBOARD_PAGE_SIZE from 1 to 1000', () => {
    for (const size of [1, 1000])
      expect(
        loadConfig({ ...secrets, DATA_DIR: dataDir(), DASHBOARD_PAGE_SIZE: String(size) }).dashboard.pageSize,
      ).toBe(size);
  });

  it('takes a WEBHOOK_CONCURRENCY from 1 to 1000 and a DELIVERY_RETENTION_DAYS from 1 to 36500', () => {
    const load = (env: Record<string, string>) => loadConfig({ ...secrets, DATA_DIR: dataDir(), ...env }).webhooks;
    for (const n of [1, 1000]) expect(load({ WEBHOOK_CONCURRENCY: String(n) }).concurrency).toBe(n);
    for (const n of [1, 36500]) expect(load({ DELIVERY_RETENTION_DAYS: String(n) }).retentionDays).toBe(n);
  });

  it('names DATA_DIR when the generated secrets cannot be read or kept', () => {
    const dir = dataDir();
    writeFileSync(join(dir, 'secrets.json'), '{broken');
    expect(() => loadConfig({ DATA_DIR: dir })).toThrow(
      /^DATA_DIR: .*secrets\.json holds the generated secrets and cannot be read/,
    );
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    expect(() => loadConfig({ DATA_DIR: join(file, 'below') })).toThrow(/^DATA_DIR: cannot keep the generated secrets/);
  });

  it('requires every secret in production, naming the missing ones', () => {
    expect(() =>
      loadConfig({ NODE_ENV: 'production', GATEWAY_SECRET: secrets.GATEWAY_SECRET, DATA_DIR: dataDir() }),
    ).toThrow(/ADMIN_SECRET: required[\s\S]*PORTAL_API_TOKEN: required[\s\S]*ENCRYPTION_KEY: required/);
  });

  it('outside production generates missing secrets once and keeps them under the data directory', () => {
    const dir = dataDir();
    const first = loadConfig({ DATA_DIR: dir });
    expect(first.generatedSecrets).toEqual(['GATEWAY_SECRET', 'ADMIN_SECRET', 'PORTAL_API_TOKEN', 'ENCRYPTION_KEY']);
    const second = loadConfig({ DATA_DIR: dir });
    expect(second.secrets.admin).toBe(first.secrets.admin);
    expect(second.secrets.encryptionKey.equals(first.secrets.encryptionKey)).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')).ADMIN_SECRET).toBe(first.secrets.admin);
    // a variable that is set wins over the stored one
    expect(loadConfig({ DATA_DIR: dir, ADMIN_SECRET: secrets.ADMIN_SECRET }).secrets.admin).toBe(secrets.ADMIN_SECRET);
  });

  it("refuses, naming DATA_DIR, a data directory that cannot be made (Node's own recursive mkdir spun on it)", () => {
    expect(() => loadConfig({ DATA_DIR: '/proc/gwm-no-such/data' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: '/proc/gwm-no-such/data' })).toThrow(
      /^DATA_DIR: cannot keep the generated secrets in \/proc\/gwm-no-such\/data\/secrets.json \(ENOENT/,
    );
  });

  it('parses the allow-list, retry schedule and a base64 key', () => {
    const c = loadConfig({
      ...secrets,
      DATA_DIR: dataDir(),
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128,0.0.0.0/0,10.20.30.40/32,::ffff:127.0.0.1/128',
      WEBHOOK_RETRY_SCHEDULE: '0, 1,2',
      ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    expect(c.webhooks.allowedCidrs).toEqual([
      '127.0.0.0/8',
      '::1/128',
      '0.0.0.0/0',
      '10.20.30.40/32',
      '::ffff:127.0.0.1/128',
    ]);
    expect(c.webhooks.retrySchedule).toEqual([0, 1, 2]);
    expect(c.secrets.encryptionKey.equals(Buffer.alloc(32, 7))).toBe(true);
  });

  it('takes values a test rig may write: a single address as an allowed range, a braced QUEUE_PREFIX, fractions of a second', () => {
    const c = loadConfig({
      ...secrets,
      DATA_DIR: dataDir(),
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1, ::1,10.0.0.0/8',
      QUEUE_PREFIX: '{bull}',
      WEBHOOK_RETRY_SCHEDULE: '0, 0.5,1.25',
    });
    expect(c.webhooks.allowedCidrs).toEqual(['127.0.0.1/32', '::1/128', '10.0.0.0/8']);
    // the form the start prints the prefix in, and the same keys as QUEUE_PREFIX=bull
    expect(c.redis.prefix).toBe('{bull}');
    expect(loadConfig({ ...secrets, DATA_DIR: dataDir(), QUEUE_PREFIX: 'bull' }).redis.prefix).toBe('{bull}');
    expect(c.webhooks.retrySchedule).toEqual([0, 0.5, 1.25]);
  });

  it('outside production takes a credential of any length, and says which are shorter than 16 characters', () => {
    const c = loadConfig({ ...secrets, ADMIN_SECRET: 'a', PORTAL_API_TOKEN: 'p'.repeat(15), DATA_DIR: dataDir() });
    expect(c.secrets.admin).toBe('a');
    expect(c.secrets.portal).toBe('p'.repeat(15));
    const short = '16 characters, easy to guess (refused when NODE_ENV=production)';
    expect(c.warnings).toEqual([`ADMIN_SECRET: shorter than ${short}`, `PORTAL_API_TOKEN: shorter than ${short}`]);
    expect(loadConfig({ ...secrets, DATA_DIR: dataDir() }).warnings).toEqual([]);
  });

  it('refuses in production a credential shorter than 16 characters, naming it', () => {
    const production = { ...secrets, NODE_ENV: 'production', DATA_DIR: dataDir() };
    expect(() => loadConfig({ ...production, ADMIN_SECRET: 'a'.repeat(15) })).toThrow(
      /^Invalid configuration:\n {2}ADMIN_SECRET: shorter than 16 characters, easy to guess \(refused when NODE_ENV=production\)$/,
    );
    expect(loadConfig({ ...production, ADMIN_SECRET: 'a'.repeat(16) }).secrets.admin).toBe('a'.repeat(16));
  });

  it('takes one value for the credentials of two families outside production, saying so; refuses it in production', () => {
    const base = { ...secrets, DATA_DIR: dataDir() };
    const c = loadConfig({ ...base, GATEWAY_SECRET: 'secret', ADMIN_SECRET: 'secret', PORTAL_API_TOKEN: 'secret' });
    expect(c.secrets).toMatchObject({ gateway: 'secret', admin: 'secret', portal: 'secret' });
    const same = (name: string, other: string) =>
      `${name}: the same as ${other}, so a credential of one family opens the other (refused when NODE_ENV=production)`;
    expect(c.warnings).toEqual(
      expect.arrayContaining([same('ADMIN_SECRET', 'GATEWAY_SECRET'), same('PORTAL_API_TOKEN', 'GATEWAY_SECRET')]),
    );
    const production = { ...base, NODE_ENV: 'production' };
    expect(() => loadConfig({ ...production, ADMIN_SECRET: secrets.PORTAL_API_TOKEN })).toThrow(
      same('PORTAL_API_TOKEN', 'ADMIN_SECRET'),
    );
    // a generated one differs from the others
    expect(loadConfig({ ADMIN_SECRET: secrets.ADMIN_SECRET, DATA_DIR: dataDir() }).generatedSecrets).toHaveLength(3);
  });

  it('takes an ENCRYPTION_KEY of 32 plain characters outside production as its bytes, saying so; not in production', () => {
    const key = '0123456789abcdef0123456789abcdef';
    const c = loadConfig({ ...secrets, DATA_DIR: dataDir(), ENCRYPTION_KEY: key });
    expect(c.secrets.encryptionKey.equals(Buffer.from(key))).toBe(true);
    expect(c.warnings).toEqual([
      'ENCRYPTION_KEY: 32 characters taken as they are, not as hex or base64 (refused when NODE_ENV=production)',
    ]);
    expect(() => loadConfig({ ...secrets, DATA_DIR: dataDir(), NODE_ENV: 'production', ENCRYPTION_KEY: key })).toThrow(
      'ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64',
    );
    // blanks at either end (a key read from a file with its newline) are not part of it
    const hex = loadConfig({ ...secrets, DATA_DIR: dataDir(), ENCRYPTION_KEY: `${'ab'.repeat(32)}\n` });
    expect(hex.secrets.encryptionKey.equals(Buffer.from('ab'.repeat(32), 'hex'))).toBe(true);
  });

  it('runs a NODE_ENV that is none of production, development, test as development, saying so', () => {
    const c = loadConfig({ ...secrets, DATA_DIR: dataDir(), NODE_ENV: 'staging' });
    expect(c.env).toBe('development');
    expect(c.warnings).toEqual(['NODE_ENV: staging is none of production, development, test; running as development']);
  });

  it('takes every variable set to an empty value as unset', () => {
    const names = ['NODE_ENV', 'PORT', 'HOST', 'ROLE', 'QUEUE_PREFIX', 'DASHBOARD_PAGE_SIZE', 'WEBHOOK_ALLOWED_CIDRS'];
    names.push('WEBHOOK_RETRY_SCHEDULE', 'WEBHOOK_CONCURRENCY', 'DELIVERY_RETENTION_DAYS', 'LOG_LEVEL');
    const c = loadConfig({ ...secrets, DATA_DIR: dataDir(), ...Object.fromEntries(names.map((n) => [n, ''])) });
    expect(c.env).toBe('development');
    expect(c.port).toBe(3000);
    expect(c.role).toBe('all');
    expect(c.logLevel).toBe('info');
    expect(c.webhooks.retrySchedule).toEqual(DEFAULT_RETRY_SCHEDULE);
    expect(c.dashboard.pageSize).toBe(10);
  });

  it('reads NODE_ENV, ROLE and LOG_LEVEL whatever their case and surrounding spaces', () => {
    const c = loadConfig({
      ...secrets,
      DATA_DIR: dataDir(),
      NODE_ENV: 'Production',
      ROLE: ' Worker ',
      LOG_LEVEL: 'INFO',
    });
    expect([c.env, c.role, c.logLevel]).toEqual(['production', 'worker', 'info']);
    expect(loadConfig({ ...secrets, DATA_DIR: dataDir(), ROLE: '  ' }).role).toBe('all');
    expect(() => loadConfig({ ...secrets, DATA_DIR: dataDir(), ROLE: 'apis' })).toThrow('ROLE');
    expect(() => loadConfig({ ...secrets, DATA_DIR: dataDir(), LOG_LEVEL: 'loud' })).toThrow(
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (or warning, log, verbose, off, none)',
    );
    // other loggers' names of the levels
    const levels = { Warning: 'warn', log: 'info', VERBOSE: 'trace', off: 'silent', none: 'silent' };
    for (const [given, level] of Object.entries(levels))
      expect([given, loadConfig({ ...secrets, DATA_DIR: dataDir(), LOG_LEVEL: given }).logLevel]).toEqual([
        given,
        level,
      ]);
  });

  it('reads WEBHOOK_DISABLE_AFTER as a duration with its unit, 5 days when unset', () => {
    const base = { ...secrets, DATA_DIR: dataDir() };
    expect(loadConfig(base).webhooks.disableAfterMs).toBe(5 * 24 * 3600 * 1000);
    expect(loadConfig({ ...base, WEBHOOK_DISABLE_AFTER: '' }).webhooks.disableAfterMs).toBe(5 * 24 * 3600 * 1000);
    expect(loadConfig({ ...base, WEBHOOK_DISABLE_AFTER: '5d' }).webhooks.disableAfterMs).toBe(5 * 24 * 3600 * 1000);
    expect(loadConfig({ ...base, WEBHOOK_DISABLE_AFTER: '30m' }).webhooks.disableAfterMs).toBe(30 * 60 * 1000);
    expect(loadConfig({ ...base, WEBHOOK_DISABLE_AFTER: '90s' }).webhooks.disableAfterMs).toBe(90 * 1000);
    expect(loadConfig({ ...base, WEBHOOK_DISABLE_AFTER: '12h' }).webhooks.disableAfterMs).toBe(12 * 3600 * 1000);
  });

  it('reads IDEMPOTENCY_KEY_TTL as a duration with its unit, 24 hours when unset', () => {
    const base = { ...secrets, DATA_DIR: dataDir() };
    expect(loadConfig(base).idempotency.keyTtlMs).toBe(24 * 3600 * 1000);
    expect(loadConfig({ ...base, IDEMPOTENCY_KEY_TTL: '' }).idempotency.keyTtlMs).toBe(24 * 3600 * 1000);
    expect(loadConfig({ ...base, IDEMPOTENCY_KEY_TTL: '48h' }).idempotency.keyTtlMs).toBe(48 * 3600 * 1000);
    expect(loadConfig({ ...base, IDEMPOTENCY_KEY_TTL: '2s' }).idempotency.keyTtlMs).toBe(2000);
  });

  it('reads SHUTDOWN_TIMEOUT as a duration from 1s to 1h, 60 seconds when unset', () => {
    const base = { ...secrets, DATA_DIR: dataDir() };
    expect(loadConfig(base).shutdownTimeoutMs).toBe(60_000);
    expect(loadConfig({ ...base, SHUTDOWN_TIMEOUT: '' }).shutdownTimeoutMs).toBe(60_000);
    expect(loadConfig({ ...base, SHUTDOWN_TIMEOUT: '25s' }).shutdownTimeoutMs).toBe(25_000);
    expect(loadConfig({ ...base, SHUTDOWN_TIMEOUT: '1.5m' }).shutdownTimeoutMs).toBe(90_000);
    expect(loadConfig({ ...base, SHUTDOWN_TIMEOUT: '1h' }).shutdownTimeoutMs).toBe(3600_000);
    expect(() => loadConfig({ ...base, SHUTDOWN_TIMEOUT: '61m' })).toThrow(
      'SHUTDOWN_TIMEOUT must be a duration from 1s to 1h with its unit',
    );
  });

  it('reads DATABASE_STATEMENT_TIMEOUT as a duration from 1s to 1h, 30 seconds when unset', () => {
    const base = { ...secrets, DATA_DIR: dataDir() };
    const read = (vars: Record<string, string>) => loadConfig({ ...base, ...vars }).database.statementTimeoutMs;
    expect(read({})).toBe(30_000);
    expect(read({ DATABASE_STATEMENT_TIMEOUT: '' })).toBe(30_000);
    expect(read({ DATABASE_STATEMENT_TIMEOUT: '1s' })).toBe(1_000);
    expect(read({ DATABASE_STATEMENT_TIMEOUT: '2m' })).toBe(120_000);
    expect(() => read({ DATABASE_STATEMENT_TIMEOUT: '61m' })).toThrow(
      'DATABASE_STATEMENT_TIMEOUT must be a duration from 1s to 1h with its unit',
    );
  });

  it('names a Redis Cluster by REDIS_CLUSTER_NODES or a redis-cluster:// URL, with a hash-tagged key prefix', () => {
    const a = loadConfig({
      ...secrets,
      DATA_DIR: dataDir(),
      REDIS_CLUSTER_NODES: '127.0.0.1:7000, [::1]:7001,redis://:pw@node3:7002',
      QUEUE_PREFIX: 'gw',
    });
    expect(a.redis.url).toBeUndefined();
    expect(a.redis.cluster).toEqual({
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '::1', port: 7001 },
        { host: 'node3', port: 7002 },
      ],
      password: 'pw',
      tls: false,
    });
    expect(a.redis.prefix).toBe('{gw}');
    expect(a.redis.prefixFromDatabase).toBe(false);
    const b = loadConfig({
      ...secrets,
      DATA_DIR: dataDir(),
      REDIS_URL: 'rediss-cluster://u:p%40ss@10.0.0.1:6379,10.0.0.2:6379',
    });
    expect(b.redis.cluster).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 6379 },
        { host: '10.0.0.2', port: 6379 },
      ],
      username: 'u',
      password: 'p@ss',
      tls: true,
    });
    expect(() =>
      loadConfig({ ...secrets, DATA_DIR: dataDir(), REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: 'x:1' }),
    ).toThrow(/REDIS_CLUSTER_NODES: set either/);
  });
});
