import { useDataSource } from '../../test/helpers/use-service';
import { MAX_PREPARED_PER_CONNECTION, PreparingClient } from './data-source';

describe('PreparingClient', () => {
  const fixture = useDataSource();
  let client: PreparingClient;

  beforeAll(async () => {
    client = new PreparingClient({ connectionString: fixture.env.databaseUrl });
    await client.connect();
    fixture.adopt({ close: () => client.end() });
  });

  const prepared = async (): Promise<string[]> =>
    (await client.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map(
      (r: { name: string }) => r.name,
    );

  it('keeps no more prepared statements than its limit, counting those named by their caller', async () => {
    // named by the caller, as Sql.scan does: prepared while there is room
    const scan = { name: PreparingClient.statementName('SELECT 1 AS one'), text: 'SELECT 1 AS one', values: [] };
    expect((await client.query(scan)).rows).toEqual([{ one: 1 }]);
    expect(await prepared()).toEqual([scan.name]);

    for (let i = 0; (await prepared()).length < MAX_PREPARED_PER_CONNECTION; i++) {
      await client.query(`SELECT $1::int + ${i} AS n`, [1]);
    }
    const full = await prepared();
    expect(full).toHaveLength(MAX_PREPARED_PER_CONNECTION);

    // over the limit: a new statement of either kind still runs, unnamed
    const other = { name: PreparingClient.statementName('SELECT 2 AS two'), text: 'SELECT 2 AS two', values: [] };
    expect((await client.query(other)).rows).toEqual([{ two: 2 }]);
    expect((await client.query('SELECT $1::int AS n', [7])).rows).toEqual([{ n: 7 }]);
    // and one it already holds is still run by its name
    expect((await client.query(scan)).rows).toEqual([{ one: 1 }]);
    expect(await prepared()).toEqual(full);
  });
});
