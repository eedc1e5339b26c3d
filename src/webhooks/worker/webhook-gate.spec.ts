import { WebhookGate } from './webhook-gate';

describe('WebhookGate', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 0;
    jest.useFakeTimers();
  });
  afterEach(() => jest.useRealTimers());

  /** One attempt of `webhookId` that took `ms`: the gate has heard from it. */
  const heardFrom = async (gate: WebhookGate, webhookId: string, ms = 5) => {
    const slot = (await gate.acquire(webhookId))!;
    now += ms;
    gate.release(slot);
  };

  it('gives a webhook at most `limit` slots at once', async () => {
    const gate = new WebhookGate(2, 200, { clock });
    await heardFrom(gate, 'w');
    const a = await gate.acquire('w');
    const b = await gate.acquire('w');
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    expect(gate.usage('w')).toEqual({ inFlight: 2, waiting: 0 });
    expect(await gate.acquire('other')).not.toBeNull();
  });

  it('lets a job wait in line for a webhook that answers quickly, and hands it the next free slot', async () => {
    const gate = new WebhookGate(1, 200, { clock });
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
    const gate = new WebhookGate(1, 200, { clock });
    await gate.acquire('slow');
    now = 1000; // the attempt in flight has been going for a second
    expect(await gate.acquire('slow')).toBeNull();
    expect(gate.usage('slow')).toEqual({ inFlight: 1, waiting: 0 });
  });

  it('never lets a job wait longer than maxWaitMs', async () => {
    const gate = new WebhookGate(1, 200, { clock });
    await gate.acquire('w');
    const waiting = gate.acquire('w');
    expect(gate.usage('w').waiting).toBe(1);
    jest.advanceTimersByTime(200);
    expect(await waiting).toBeNull();
    expect(gate.usage('w')).toEqual({ inFlight: 1, waiting: 0 });
  });

  it('gives a slot beyond the limit when the job cannot step aside', async () => {
    const gate = new WebhookGate(1, 200, { clock });
    await gate.acquire('w');
    now = 1000;
    expect(await gate.acquire('w', false)).not.toBeNull();
    expect(gate.usage('w').inFlight).toBe(2);
  });

  it('keeps jobs of a slow webhook away longer than those of a quick one (1–5 s, ±50 %)', async () => {
    const gate = new WebhookGate(1, 200, { clock });
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

  it('gives a webhook not heard from one slot until its first attempt ends, then lets its waiting jobs start', async () => {
    const gate = new WebhookGate(4, 200, { clock, capacity: 16 });
    const first = (await gate.acquire('new'))!;
    const granted: unknown[] = [];
    for (let i = 0; i < 3; i++) void gate.acquire('new').then((s) => granted.push(s));
    expect(gate.usage('new')).toEqual({ inFlight: 1, waiting: 3 });
    now = 5;
    gate.release(first);
    await Promise.resolve();
    expect(granted).toHaveLength(3);
    expect(gate.usage('new')).toEqual({ inFlight: 3, waiting: 0 });
  });

  it('keeps half of the slots for webhooks that are not slow, however many slow ones there are', async () => {
    const gate = new WebhookGate(4, 200, { clock, capacity: 8 });
    for (const w of ['dead1', 'dead2', 'dead3']) await heardFrom(gate, w, 30_000);
    await heardFrom(gate, 'quick');
    const held: unknown[] = [];
    for (const w of ['dead1', 'dead2', 'dead3']) for (let i = 0; i < 4; i++) held.push(await gate.acquire(w));
    // the slow ones together got half of the 8 slots; the rest of their jobs step aside
    expect(held.filter((s) => s !== null)).toHaveLength(4);
    for (let i = 0; i < 4; i++) expect(await gate.acquire('quick')).not.toBeNull();
  });

  it('counts a webhook as slow once an attempt of it has been in flight for a second', async () => {
    const gate = new WebhookGate(4, 200, { clock, capacity: 4 });
    await heardFrom(gate, 'a');
    await heardFrom(gate, 'b');
    await gate.acquire('a');
    await gate.acquire('a');
    now += 1000; // a's attempts hang: a is slow now, and holds half of the slots
    expect(await gate.acquire('a')).toBeNull();
    expect(await gate.acquire('b')).not.toBeNull();
  });
});
