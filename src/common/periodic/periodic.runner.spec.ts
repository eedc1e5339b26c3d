import { useDataSource } from '../../../test/helpers/use-service';
import { PeriodicRunner, PeriodicTask } from './periodic.runner';

/** A pass that runs until it is let go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('PeriodicRunner', () => {
  const fixture = useDataSource();

  it('never runs two passes of a task at once in a process, nor in two processes sharing its lock', async () => {
    const [a, b] = [new PeriodicRunner(fixture.sql), new PeriodicRunner(fixture.sql)];
    const g = gate();
    let passes = 0;
    const task: PeriodicTask<string> = {
      name: 't',
      intervalMs: 60_000,
      lock: 4242_9001,
      run: async () => {
        passes++;
        await g.opened;
        return 'done';
      },
    };
    const first = a.runOnce(task);
    await new Promise((r) => setTimeout(r, 50));
    // the same process: skipped; another process (its own lock session): skipped while the lock is held
    expect(await a.runOnce(task)).toBeNull();
    expect(await b.runOnce(task)).toBeNull();
    g.open();
    expect(await first).toBe('done');
    expect(passes).toBe(1);
    // released: the other one may run it now
    expect(await b.runOnce(task)).toBe('done');
    await Promise.all([a.beforeApplicationShutdown(), b.beforeApplicationShutdown()]);
  });

  it('on shutdown starts no pass and waits for the running one', async () => {
    const runner = new PeriodicRunner(fixture.sql);
    const g = gate();
    let finished = false;
    const task: PeriodicTask<void> = {
      name: 't',
      intervalMs: 10,
      firstAfterMs: 0,
      run: async () => {
        await g.opened;
        finished = true;
      },
    };
    runner.schedule(task);
    await new Promise((r) => setTimeout(r, 50));
    let stopped = false;
    const stopping = runner.beforeApplicationShutdown().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(false); // still waiting for the pass
    g.open();
    await stopping;
    expect(finished).toBe(true);
    expect(await runner.runOnce(task)).toBeNull();
  });

  it('a failed pass does not stop the next ones', async () => {
    const runner = new PeriodicRunner(fixture.sql);
    let calls = 0;
    runner.schedule({
      name: 'flaky',
      intervalMs: 20,
      firstAfterMs: 0,
      run: async () => {
        calls++;
        if (calls === 1) throw new Error('first pass fails');
      },
    });
    const deadline = Date.now() + 5000;
    while (calls < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await runner.beforeApplicationShutdown();
    expect(calls).toBeGreaterThanOrEqual(3);
  });
});
