import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { Sql } from '../../database/sql';

/** A piece of periodic work. */
export interface PeriodicTask<T> {
  /** For logs. */
  name: string;
  intervalMs: number;
  /** Delay of the first pass after start (default: one interval). */
  firstAfterMs?: number;
  /**
   * An advisory lock key: one process at a time runs the task (the others skip their pass). The lock is held
   * by a connection of its own that stays idle meanwhile: the pass's statements run in their own short
   * transactions, and none is open while the pass talks to Redis.
   */
  lock?: number;
  /** One pass. */
  run(): Promise<T>;
}

/**
 * The one runner of periodic work (in workers: the relay's safety-net scan, the reconciler, the signing-key
 * eraser, retention; in API processes: the expiry of idempotency keys): interval, one process at a time where
 * the task says so, never two passes of a task at once in a process, and on shutdown no new pass and the running
 * ones awaited (while the database and Redis are still there). A failed pass is logged and the next one tries
 * again.
 */
@Injectable()
export class PeriodicRunner implements BeforeApplicationShutdown {
  private readonly logger = new Logger(PeriodicRunner.name);
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Map<PeriodicTask<unknown>, Promise<unknown>>();
  private stopped = false;

  constructor(private readonly sql: Sql) {}

  /** Runs `task` every intervalMs from now on, until shutdown. */
  schedule<T>(task: PeriodicTask<T>): void {
    if (this.stopped) return;
    const tick = () => {
      this.runOnce(task).catch((err) => this.logger.warn({ err, task: task.name }, 'periodic pass failed; will retry'));
    };
    const first = setTimeout(() => {
      this.timers.delete(first);
      if (this.stopped) return;
      tick();
      const every = setInterval(tick, task.intervalMs);
      every.unref();
      this.timers.add(every);
    }, task.firstAfterMs ?? task.intervalMs);
    first.unref();
    this.timers.add(first);
  }

  /**
   * One pass of `task` now; null without running it when a pass of it is already running in this process,
   * another process holds its lock, or the runner has stopped.
   */
  async runOnce<T>(task: PeriodicTask<T>): Promise<T | null> {
    if (this.stopped || this.running.has(task)) return null;
    const pass = task.lock === undefined ? task.run() : this.sql.withLock(task.lock, () => task.run());
    this.running.set(task, pass);
    try {
      return await pass;
    } finally {
      this.running.delete(task);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.running.values()]);
  }
}
