import fc from 'fast-check';
import { Client } from 'pg';
import { EventFilter, parseEventFilter } from '../../src/webhooks/filter/event-filter';
import { matchesFilter } from '../../src/webhooks/filter/filter-evaluator';
import { toJsonPath } from '../../src/webhooks/filter/filter-jsonpath';
import { useTestEnv } from '../helpers/use-service';

const event = {
  Event: 'AccessRequestApproved',
  Timestamp: '2026-11-22T10:15:00.123Z',
  Message: {
    ID: 42,
    Status: 'approved',
    Score: 7.5,
    Plan: { Name: 'Gold plan', Tier: 3 },
    ProductIDs: ['p-1', 'p-2'],
    Nested: [['deep']],
    Deeper: [[['deepest']]],
    Items: [{ Sku: 'a-1', Qty: 2 }, { Sku: 'b-7' }],
    ItemsInArray: [[{ Sku: 'hidden' }]],
    Note: 'line one\nline two',
    Client: null,
    Active: true,
    Emoji: '😀',
    Private: '\uffff',
    Empty: [],
    'Odd key "x"': 'yes',
    Accented: 'Élan',
  },
};

/** [filter, expected] — the JavaScript evaluator and PostgreSQL must both give `expected`. */
const CASES: [EventFilter, boolean][] = [
  [{ path: 'Event', eq: 'AccessRequestApproved' }, true],
  [{ path: 'Event', eq: 'AccessRequestRejected' }, false],
  [{ path: 'Message.ID', eq: 42 }, true],
  [{ path: 'Message.ID', eq: 42.0 }, true],
  [{ path: 'Message.ID', eq: '42' }, false],
  [{ path: 'Message.Client', eq: null }, true],
  [{ path: 'Message.ID', eq: null }, false],
  [{ path: 'Message.Active', eq: true }, true],
  [{ path: 'Message.Active', eq: 'true' }, false],
  [{ path: 'Message.Plan', eq: 'Gold plan' }, false],
  [{ path: 'Message.Plan.Name', in: ['Silver plan', 'Gold plan'] }, true],
  [{ path: 'Message.Plan.Name', in: ['Silver plan', 3] }, false],
  [{ path: 'Message.ProductIDs', eq: 'p-2' }, true],
  [{ path: 'Message.ProductIDs', eq: 'p-3' }, false],
  [{ path: 'Message.Nested', eq: 'deep' }, true],
  [{ path: 'Message.Deeper', eq: 'deepest' }, false],
  [{ path: 'Message.Items.Sku', eq: 'b-7' }, true],
  [{ path: 'Message.ItemsInArray.Sku', eq: 'hidden' }, false],
  [{ path: 'Message.Items.Qty', gte: 2 }, true],
  [{ path: 'Message.Items.Qty', gt: 2 }, false],
  [{ path: 'Message.ID', gt: 41 }, true],
  [{ path: 'Message.ID', gt: 42 }, false],
  [{ path: 'Message.ID', gte: 42 }, true],
  [{ path: 'Message.ID', lt: 42.5 }, true],
  [{ path: 'Message.Score', lte: 7.5 }, true],
  [{ path: 'Message.Score', lt: -1 }, false],
  [{ path: 'Message.ID', gt: 'a' }, false],
  [{ path: 'Message.Status', gt: 'a' }, true],
  [{ path: 'Message.Status', lt: 'B' }, false],
  [{ path: 'Timestamp', gte: '2026-11-22T00:00:00Z' }, true],
  [{ path: 'Timestamp', lt: '2026-11-22T10:15:00.123Z' }, false],
  [{ path: 'Message.Private', lt: '😀' }, true],
  [{ path: 'Message.Emoji', gt: '\uffff' }, true],
  [{ path: 'Message.Client', exists: true }, true],
  [{ path: 'Message.Missing', exists: true }, false],
  [{ path: 'Message.Missing', exists: false }, true],
  [{ path: 'Message.Empty', exists: true }, true],
  [{ path: 'Message.Status.Deeper', exists: true }, false],
  [{ path: 'Message.Items.Qty', exists: true }, true],
  [{ path: 'Message.Status', prefix: 'appr' }, true],
  [{ path: 'Message.Status', prefix: 'Appr' }, false],
  [{ path: 'Message.ID', prefix: '4' }, false],
  [{ path: 'Message.ProductIDs', prefix: 'p-' }, true],
  [{ path: 'Message.Status', regex: '^app.*d$' }, true],
  [{ path: 'Message.Status', regex: 'APPROVED' }, false],
  [{ path: 'Message.Status', regex: 'APPROVED', ignoreCase: true }, true],
  [{ path: 'Message.Accented', regex: '^élan$', ignoreCase: true }, true],
  [{ path: 'Message.Note', regex: 'one.line' }, true],
  [{ path: 'Message.Note', regex: 'one[^x]line' }, true],
  [{ path: 'Message.Note', regex: 'one$' }, false],
  [{ path: 'Message.Note', regex: '^line two' }, false],
  [{ path: 'Message.Note', regex: 'one\\sline' }, true],
  [{ path: 'Message.Note', regex: '^\\w+ \\w+\\s\\w+ \\w+$' }, true],
  [{ path: 'Message.Accented', regex: '^\\w' }, false],
  [{ path: 'Message.Emoji', regex: '^.$' }, true],
  [{ path: 'Message.ProductIDs', regex: '^p-\\d$' }, true],
  [{ path: 'Message.ProductIDs', regex: '^p-[3-9]$' }, false],
  [{ path: 'Message.Plan.Name', regex: '(?:Gold|Silver) plan' }, true],
  [{ path: 'Message.Plan.Name', regex: 'G.{2,3}d' }, true],
  [{ path: 'Message.Plan.Name', regex: 'a\\.b|\\(x\\)|[\\]\\-]' }, false],
  [{ path: 'Message.ID', regex: '42' }, false],
  [{ path: 'Message.Odd key "x"', eq: 'yes' }, true],
  [
    {
      all: [
        { path: 'Message.ID', eq: 42 },
        { path: 'Message.Status', eq: 'approved' },
      ],
    },
    true,
  ],
  [
    {
      all: [
        { path: 'Message.ID', eq: 42 },
        { path: 'Message.Status', eq: 'rejected' },
      ],
    },
    false,
  ],
  [
    {
      any: [
        { path: 'Message.ID', eq: 1 },
        { path: 'Message.Status', eq: 'approved' },
      ],
    },
    true,
  ],
  [
    {
      any: [
        { path: 'Message.ID', eq: 1 },
        { path: 'Message.Status', eq: 'rejected' },
      ],
    },
    false,
  ],
  [{ not: { path: 'Message.ID', eq: '42' } }, true],
  [{ not: { path: 'Message.Missing', gt: 1 } }, true],
  [{ not: { any: [{ path: 'Message.ID', eq: 1 }, { not: { path: 'Event', prefix: 'Access' } }] } }, true],
];

describe('filters read alike in JavaScript and in PostgreSQL (the test route and fan-out)', () => {
  const env = useTestEnv();
  let db: Client;

  beforeAll(async () => {
    db = await env.client();
  });

  /** Evaluates many (filter, event) pairs in one statement, as fan-out does. */
  async function inPostgres(pairs: { path: string; event: unknown }[]): Promise<boolean[]> {
    const { rows } = await db.query<{ m: boolean }>(
      `SELECT jsonb_path_match(e, p::jsonpath) AS m FROM unnest($1::jsonb[], $2::text[]) WITH ORDINALITY AS x(e, p, n) ORDER BY n`,
      [pairs.map((p) => JSON.stringify(p.event)), pairs.map((p) => p.path)],
    );
    return rows.map((r) => r.m);
  }

  it('gives the expected answer for every case of the table, in both evaluators', async () => {
    const parsed = CASES.map(([f]) => parseEventFilter(f));
    const sql = await inPostgres(parsed.map((p) => ({ path: toJsonPath(p), event })));
    const table = CASES.map(([f, expected], i) => ({
      filter: JSON.stringify(f),
      expected,
      js: matchesFilter(parsed[i], event),
      sql: sql[i],
    }));
    expect(table).toEqual(
      CASES.map(([f, expected]) => ({ filter: JSON.stringify(f), expected, js: expected, sql: expected })),
    );
  });

  it('agrees on generated filters over generated events', async () => {
    const key = fc.constantFrom('a', 'b', 'c');
    const scalar = fc.oneof(
      fc.constantFrom('x', 'xy', 'Y', 'é', '😀', '', '10', 'a\nb'),
      fc.integer({ min: -3, max: 3 }),
      fc.constantFrom(0.5, 10),
      fc.boolean(),
      fc.constant(null),
    );
    const { value: json } = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', maxDepth: 4 },
        scalar,
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(key, tie('value'), { maxKeys: 3 }),
      ),
    }));
    const path = fc.array(key, { minLength: 1, maxLength: 3 }).map((ks) => ['Message', ...ks].join('.'));
    const str = fc.constantFrom('x', 'xy', 'Y', 'é', '😀', '1', 'a\nb');
    const leaf = fc.oneof(
      fc.record({ path, eq: scalar }),
      fc.record({ path, in: fc.array(scalar, { minLength: 1, maxLength: 3 }) }),
      fc.record({ path, gt: fc.oneof(fc.integer({ min: -3, max: 3 }), str) }),
      fc.record({ path, lte: fc.oneof(fc.integer({ min: -3, max: 3 }), str) }),
      fc.record({ path, exists: fc.boolean() }),
      fc.record({ path, prefix: str }),
      fc.record({
        path,
        regex: fc.constantFrom('^x', 'y$', 'a.b', '[^x]', '\\d', '^\\w+$', 'É'),
        ignoreCase: fc.boolean(),
      }),
    );
    const { rule } = fc.letrec<{ rule: EventFilter }>((tie) => ({
      rule: fc.oneof(
        { depthSize: 'small', maxDepth: 3 },
        leaf as fc.Arbitrary<EventFilter>,
        fc.record({ all: fc.array(tie('rule'), { minLength: 1, maxLength: 3 }) }),
        fc.record({ any: fc.array(tie('rule'), { minLength: 1, maxLength: 3 }) }),
        fc.record({ not: tie('rule') }),
      ),
    }));
    const samples = fc.sample(fc.tuple(rule, fc.dictionary(key, json, { maxKeys: 3 })), { numRuns: 2000, seed: 21 });
    const parsed = samples.map(([f]) => parseEventFilter(f));
    const events = samples.map(([, message]) => ({ Event: 'AccessRequestApproved', Message: message, Timestamp: 't' }));
    const sql = await inPostgres(parsed.map((p, i) => ({ path: toJsonPath(p), event: events[i] })));
    const disagreements = samples
      .map(([f], i) => ({ filter: f, event: events[i], js: matchesFilter(parsed[i], events[i]), sql: sql[i] }))
      .filter((d) => d.js !== d.sql);
    expect(disagreements.slice(0, 5)).toEqual([]);
    // the generated cases are not all one answer
    const matched = sql.filter(Boolean).length;
    expect(matched).toBeGreaterThan(100);
    expect(matched).toBeLessThan(samples.length - 100);
  });
});
