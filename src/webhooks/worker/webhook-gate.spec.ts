import { WebhookGate } from './webhook-gate';

describe('WebhookGate', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 0;
    jest.useFakeTimers();
  });
  afterEach(() => jest.useRealTimers());

  it('gives a webhook at most `limit` slots at once', async () => {
    const gate = new WebhookGate(2, 200, clock);
    const a = await gate.acquire('w');
    const b = await gate.acquire('w');
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(gate.usage('w')).toEqual({ inFlight: 2, waiting: 0 });
    expect(await gate.acquire('other')).not.toBeNull();
  });

  it('lets a job wait in line for a webhook that answers quickly, and hands it the next free slot', async () => {
    const gate = new WebhookGate(1, 200, clock);
    const first = (await gate.acquire('w'))!;
    now = 5;
    gate.release(first); // this webhook takes about 5 ms
    const held = (await gate.acquire('w'))!;
    let granted: unknown = 'pending';
    void gate.acquire('w').then((s) => (granted = s));
    expect(gate.usage('w')).toEqual({ inFlight: 1, waiting: 1 });
    now = 10;
    gate.release(held);
    await Promise.resolve();
    expect(granted).toMatchObject({ webhookId: 'w', startedAt: 10 });
    expect(gate.usage('w')).toEqual({ inFlight: 1, waiting: 0 });
  });

  it('sends jobs of a slow webhook away at once, without holding a slot', async () => {
    const gate = new WebhookGate(1, 200, clock);
    await gate.acquire('slow');
    now = 1000; // the attempt in flight has been going for a second
    expect(await gate.acquire('slow')).toBeNull();
    expect(gate.usage('slow')).toEqual({ inFlight: 1, waiting: 0 });
  });

  it('never lets a job wait longer than maxWaitMs', async () => {
    const gate = new WebhookGate(1, 200, clock);
    await gate.acquire('w');
    const waiting = gate.acquire('w');
    expect(gate.usage('w').waiting).toBe(1);
    jest.advanceTimersByTime(200);
    expect(await waiting).toBeNull();
    expect(gate.usage('w')).toEqual({ inFlight: 1, waiting: 0 });
  });

  it('gives a slot beyond the limit when the job cannot step aside', async () => {
    const gate = new WebhookGate(1, 200, clock);
    await gate.acquire('w');
    now = 1000;
    expect(await gate.acquire('w', false)).not.toBeNull();
    expect(gate.usage('w').inFlight).toBe(2);
  });

  it('keeps jobs of a slow webhook away longer than those of a quick one (1–5 s, ±50 %)', async () => {
    const gate = new WebhookGate(1, 200, clock);
    const mid = () => 0.5;
    await gate.acquire('quick');
    expect(gate.stepAsideMs('quick', mid)).toBe(1000);
    await gate.acquire('slow');
    now = 3000;
    expect(gate.stepAsideMs('quick', mid)).toBe(3000); // its attempt has been going for 3 s too
    now = 60_000;
    expect(gate.stepAsideMs('slow', mid)).toBe(5000);
    expect(gate.stepAsideMs('slow', () => 0)).toBe(2500);
    expect(gate.stepAsideMs('unknown', () => 0.999)).toBeLessThanOrEqual(1500);
  });
});
