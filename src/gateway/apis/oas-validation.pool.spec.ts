import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OasApiError } from './oas-apis.errors';
import { OasValidationPool, ValidationLimits } from './oas-validation.pool';

/**
 * A worker that speaks the pool's protocol (it says when it has taken the body up) and then keeps its thread busy
 * for `body.ms`, as the parser does with a document whose `$ref`s expand far.
 */
const BUSY_WORKER = `
module.exports = ({ body, started }) => {
  started.postMessage(null);
  started.close();
  const until = Date.now() + body.ms;
  while (Date.now() < until);
  return [];
};
`;

const TIMED_OUT = (s: number) =>
  `invalid OpenAPI document: not validated within ${s} s (are its $refs nested too deep?)`;

describe('OasValidationPool', () => {
  let dir: string;
  const pools: OasValidationPool[] = [];
  const pool = (limits: Partial<ValidationLimits>) => {
    const p = new OasValidationPool({ filename: join(dir, 'busy-worker.js'), ...limits });
    pools.push(p);
    return p;
  };
  const takes = (ms: number) => ({ ms });
  /** How `reasons` settled, and when (ms after `since`). */
  const outcome = (p: Promise<string[]>, since: number) =>
    p.then(
      (reasons) => ({ reasons, after: Date.now() - since }),
      (error: unknown) => ({ error, after: Date.now() - since }),
    );

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'oas-pool-'));
    writeFileSync(join(dir, 'busy-worker.js'), BUSY_WORKER);
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.onApplicationShutdown()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts only a document’s own time against the limit, not its wait for a thread', async () => {
    const p = pool({ threads: 1, runMs: 1500, waitMs: 10_000 });
    // one after the other on one thread, each well within the limit, together far beyond it
    const all = await Promise.all([600, 600, 600, 600].map((ms) => p.reasons(takes(ms))));
    expect(all).toEqual([[], [], [], []]);
  });

  it('stops a document that runs past the limit, blaming the document, and serves the next one', async () => {
    const p = pool({ threads: 1, runMs: 300 });
    const start = Date.now();
    expect(await p.reasons(takes(5000))).toEqual([TIMED_OUT(0.3)]);
    expect(Date.now() - start).toBeLessThan(3000);
    expect(await p.reasons(takes(10))).toEqual([]);
  });

  it('answers 503 with Retry-After when no thread frees within the wait', async () => {
    const p = pool({ threads: 1, runMs: 4000, waitMs: 200 });
    const start = Date.now();
    const slow = outcome(p.reasons(takes(1500)), start);
    const refused = await outcome(p.reasons(takes(10)), start);
    expect(refused.after).toBeLessThan(1000);
    expect(refused).toMatchObject({ error: expect.any(OasApiError) });
    const error = (refused as { error: OasApiError }).error;
    expect(error.getStatus()).toBe(503);
    expect(error.messages).toEqual([
      'the service is busy validating other OpenAPI documents: send this one again in 4 s',
    ]);
    expect(error.headers).toEqual({ 'retry-after': '4' });
    expect(await slow).toMatchObject({ reasons: [] });
  });

  it('answers 503 at once when as many documents as it allows already wait, and still serves those', async () => {
    const p = pool({ threads: 1, runMs: 4000, waitMs: 10_000, maxWaiting: 2 });
    const start = Date.now();
    const running = outcome(p.reasons(takes(800)), start);
    const waiting = [outcome(p.reasons(takes(10)), start), outcome(p.reasons(takes(10)), start)];
    const refused = await outcome(p.reasons(takes(10)), start);
    expect(refused.after).toBeLessThan(500);
    expect((refused as { error: OasApiError }).error.getStatus()).toBe(503);
    for (const settled of [await running, ...(await Promise.all(waiting))])
      expect(settled).toMatchObject({ reasons: [] });
    // the queue has room again
    expect(await p.reasons(takes(10))).toEqual([]);
  });
});
