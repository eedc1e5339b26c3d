import { Batcher } from './batcher';

describe('Batcher', () => {
  it('sends calls made together as one batch, answering each in order', async () => {
    const batches: number[][] = [];
    const b = new Batcher<number, number>(
      async (xs) => {
        batches.push(xs);
        return xs.map((x) => x * 10);
      },
      { maxBatch: 10, maxConcurrent: 1 },
    );
    const out = await Promise.all([1, 2, 3].map((x) => b.call(x)));
    expect(out).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('collects calls that arrive while a batch runs into the next one, within maxBatch', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const b = new Batcher<number, number>(
      async (xs) => {
        batches.push(xs);
        if (batches.length === 1) await gate;
        return xs;
      },
      { maxBatch: 2, maxConcurrent: 1 },
    );
    const first = b.call(0);
    await new Promise((r) => setImmediate(r));
    const rest = [1, 2, 3].map((x) => b.call(x));
    release();
    expect(await Promise.all([first, ...rest])).toEqual([0, 1, 2, 3]);
    expect(batches).toEqual([[0], [1, 2], [3]]);
  });

  it('rejects every call of a failed batch and keeps serving later ones', async () => {
    let fail = true;
    const b = new Batcher<number, number>(
      async (xs) => {
        if (fail) throw new Error('boom');
        return xs;
      },
      { maxBatch: 10, maxConcurrent: 1 },
    );
    await expect(Promise.all([b.call(1), b.call(2)])).rejects.toThrow('boom');
    fail = false;
    await expect(b.call(3)).resolves.toBe(3);
  });
});
