/**
 * Natural batching: calls made while earlier batches are still running are collected and sent together
 * as one batch, so under load many jobs share one round trip to Postgres, and under light load a call
 * goes out on its own at once (no timer, no added latency). At most `maxConcurrent` batches run at a time,
 * each of at most `maxBatch` items; `run` must answer one output per input, in order.
 */
export class Batcher<I, O> {
  private queue: { input: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly opts: { maxBatch: number; maxConcurrent: number },
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.opts.maxConcurrent || this.queue.length === 0) return;
    this.scheduled = true;
    // let the calls of this turn of the event loop join the batch
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.running < this.opts.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.running++;
      let outputs: Promise<O[]>;
      try {
        outputs = this.run(batch.map((b) => b.input));
      } catch (err) {
        outputs = Promise.reject(err);
      }
      outputs
        .then(
          (out) => batch.forEach((b, i) => b.resolve(out[i])),
          (err) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.running--;
          this.schedule();
        });
    }
  }
}
