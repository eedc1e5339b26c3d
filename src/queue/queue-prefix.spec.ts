import { Client } from 'pg';
import { AppConfig, loadConfig } from '../config';
import { DeploymentIdentity1763802400000 } from '../database/migrations/1763802400000-deployment-identity';
import { TEST_SECRETS } from '../../test/helpers/test-env';
import { useDataSource } from '../../test/helpers/use-service';
import { settleQueuePrefix } from './queue-prefix';

/** The queue prefix a deployment without QUEUE_PREFIX takes from its database (DeploymentIdentity migration). */
describe('settleQueuePrefix', () => {
  const fixture = useDataSource();
  const migration = new DeploymentIdentity1763802400000();
  let client: Client;
  beforeAll(async () => {
    const c = (client = new Client({ connectionString: fixture.env.databaseUrl }));
    await c.connect();
    fixture.adopt({ close: () => c.end() });
  });
  /** As the start settles it, on a connection of its own. */
  const settle = (config: AppConfig) => settleQueuePrefix(config, client);
  const config = (vars: Record<string, string> = {}): AppConfig =>
    loadConfig({ ...TEST_SECRETS, DATABASE_URL: fixture.env.databaseUrl, ...vars });
  /** Runs the migration down and up again, as on a database that holds what `before` leaves. */
  const remigrate = async (before: () => Promise<unknown> = async () => undefined) => {
    const runner = fixture.db.createQueryRunner();
    try {
      await migration.down(runner);
      await before();
      await migration.up(runner);
    } finally {
      await runner.release();
    }
  };

  it("gives a database its own prefix, the same on every start, and leaves QUEUE_PREFIX's alone", async () => {
    const first = config();
    const prefix = await settle(first);
    expect(prefix).toMatch(/^\{gwm-[0-9a-f]{8}\}$/);
    expect(first.redis.prefix).toBe(prefix);
    expect(await settle(config())).toBe(prefix);
    const chosen = config({ QUEUE_PREFIX: 'mine' });
    expect(await settle(chosen)).toBeUndefined();
    expect(chosen.redis.prefix).toBe('{mine}');
    // the database's identity is settled either way (PrefixNeighbours tells deployments apart by it)
    expect(chosen.redis.deployment).toBe(prefix!.slice('{gwm-'.length, -1));
    // the identity is made anew by the migration: another id, another prefix
    await remigrate();
    const again = await settle(config());
    expect(again).toMatch(/^\{gwm-[0-9a-f]{8}\}$/);
    expect(again).not.toBe(prefix);
  });

  it('makes a new identity when the deployment table was emptied by hand', async () => {
    const before = await settle(config());
    await fixture.db.query('DELETE FROM deployment');
    // two starts at once, on one connection: both find it empty, one makes the row
    const [a, b] = await Promise.all([settle(config()), settle(config())]);
    expect(a).toMatch(/^\{gwm-[0-9a-f]{8}\}$/);
    expect(a).not.toBe(before);
    expect(b).toBe(a);
    expect(await fixture.db.query('SELECT count(*)::int AS n FROM deployment')).toEqual([{ n: 1 }]);
  });

  it('keeps {gwm} for a database that held webhooks before it had its own, and the migration goes down and up', async () => {
    await remigrate(() =>
      fixture.db.query(
        `INSERT INTO webhooks (id, name, url, events, secret_encrypted)
         VALUES (gen_random_uuid(), 'w', 'http://127.0.0.1:9/', '{AccessRequestApproved}', 'x')`,
      ),
    );
    expect(await settle(config())).toBe('{gwm}');
    await fixture.db.query('DELETE FROM webhooks');
    await remigrate();
    expect(await settle(config())).toMatch(/^\{gwm-[0-9a-f]{8}\}$/);
    expect(await fixture.db.query('SELECT count(*)::int AS n FROM deployment')).toEqual([{ n: 1 }]);
  });
});
