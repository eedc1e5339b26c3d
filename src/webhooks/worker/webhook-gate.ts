import { performance } from 'node:perf_hooks';

/** One of a webhook's delivery slots in this process, held for one attempt. */
export interface Slot {
  readonly webhookId: string;
  readonly startedAt: number;
}

interface Waiter {
  grant(slot: Slot): void;
  timer: NodeJS.Timeout;
}

interface Lane {
  inFlight: Set<Slot>;
  waiters: Waiter[];
}

/** How many webhooks' typical attempt durations are remembered. */
const REMEMBERED = 10_000;
/** Bounds of how long a job that stepped aside stays away (before ±50 % jitter). */
export const STEP_ASIDE_MIN_MS = 1000;
export const STEP_ASIDE_MAX_MS = 5000;
/** A webhook whose attempts take this long (typically, or the oldest one in flight so far) is slow. */
export const SLOW_MS = 1000;

/**
 * Per-webhook admission of delivery attempts in one worker process: at most `limit` attempts of one webhook
 * in flight at a time, so a slow subscriber cannot take the slots of the others. Nor can several: slow webhooks
 * (SLOW_MS) together start attempts only while they hold less than half of the process's `capacity`, and a
 * webhook not heard from yet (none of its attempts ended in this process) has one attempt in flight until the
 * first ends, so a wave of new dead subscribers holds one slot each, not `limit`.
 *
 * A job whose webhook has all its slots busy either waits in line for one of them or steps aside (the caller
 * puts it back in the queue for a moment). It waits only when its turn is expected within `maxWaitMs`
 * (judged from how long this webhook's attempts take, and how long the oldest one in flight has been going),
 * and never longer than that: a subscriber that answers quickly gets its deliveries one after another
 * without a round trip through the queue, while jobs for a slow one step aside at once and leave the
 * worker's slots to the others.
 */
export class WebhookGate {
  private readonly lanes = new Map<string, Lane>();
  /** Moving average of how long an attempt holds a slot, per webhook (ms). */
  private readonly typicalMs = new Map<string, number>();

  /** The process's slots (its worker's concurrency). */
  readonly capacity: number;
  private readonly clock: () => number;

  constructor(
    readonly limit: number,
    readonly maxWaitMs: number,
    opts: { capacity?: number; clock?: () => number } = {},
  ) {
    this.capacity = opts.capacity ?? Infinity;
    this.clock = opts.clock ?? (() => performance.now());
  }

  /** Slots of `webhookId` in use and jobs waiting for one (for tests and metrics). */
  usage(webhookId: string): { inFlight: number; waiting: number } {
    const lane = this.lanes.get(webhookId);
    return { inFlight: lane?.inFlight.size ?? 0, waiting: lane?.waiters.length ?? 0 };
  }

  /**
   * A slot now, or after a short wait in line; null when the job should step aside instead.
   * With `mayStepAside` false the job gets a slot at once even beyond the limit (it cannot be put back).
   */
  acquire(webhookId: string, mayStepAside = true): Promise<Slot | null> {
    const lane = this.lane(webhookId);
    if (!mayStepAside || (lane.waiters.length === 0 && this.mayTake(lane, webhookId)))
      return Promise.resolve(this.take(lane, webhookId));
    if (this.expectedWaitMs(lane, webhookId) > this.maxWaitMs) {
      this.forgetIfIdle(webhookId, lane);
      return Promise.resolve(null);
    }
    return new Promise<Slot | null>((resolve) => {
      const waiter: Waiter = {
        grant: (slot) => {
          clearTimeout(waiter.timer);
          resolve(slot);
        },
        timer: setTimeout(() => {
          const i = lane.waiters.indexOf(waiter);
          if (i >= 0) lane.waiters.splice(i, 1);
          this.forgetIfIdle(webhookId, lane);
          resolve(null);
        }, this.maxWaitMs),
      };
      lane.waiters.push(waiter);
    });
  }

  /**
   * How long a job that stepped aside should stay away: about as long as a slot of its webhook is expected
   * to take to free up, between 1 and 5 s, ±50 % so the jobs do not come back together. Jobs of a slow
   * subscriber thus come back a few times per attempt it completes rather than every second.
   */
  stepAsideMs(webhookId: string, random: () => number = Math.random): number {
    const lane = this.lanes.get(webhookId);
    const expected = lane ? this.expectedWaitMs(lane, webhookId) : 0;
    const base = Math.min(STEP_ASIDE_MAX_MS, Math.max(STEP_ASIDE_MIN_MS, expected));
    return Math.round(base * (0.5 + random()));
  }

  /** Gives the slot back: to the jobs waiting for this webhook, as many as may start now. */
  release(slot: Slot): void {
    const lane = this.lanes.get(slot.webhookId);
    if (!lane || !lane.inFlight.delete(slot)) return;
    this.remember(slot.webhookId, this.clock() - slot.startedAt);
    while (lane.waiters.length > 0 && this.mayTake(lane, slot.webhookId))
      lane.waiters.shift()!.grant(this.take(lane, slot.webhookId));
    this.forgetIfIdle(slot.webhookId, lane);
  }

  /** Whether the webhook may start one more attempt now (see the class comment). */
  private mayTake(lane: Lane, webhookId: string): boolean {
    const n = lane.inFlight.size;
    if (n >= this.limit) return false;
    if (!this.typicalMs.has(webhookId)) return n === 0;
    const now = this.clock();
    if (!this.isSlow(lane, webhookId, now)) return true;
    let slowInFlight = 0;
    for (const [id, other] of this.lanes) if (this.isSlow(other, id, now)) slowInFlight += other.inFlight.size;
    return slowInFlight < this.capacity / 2;
  }

  private isSlow(lane: Lane, webhookId: string, now: number): boolean {
    if ((this.typicalMs.get(webhookId) ?? 0) >= SLOW_MS) return true;
    for (const s of lane.inFlight) if (now - s.startedAt >= SLOW_MS) return true;
    return false;
  }

  private expectedWaitMs(lane: Lane, webhookId: string): number {
    const now = this.clock();
    let oldest = now;
    for (const s of lane.inFlight) if (s.startedAt < oldest) oldest = s.startedAt;
    const typical = Math.max(this.typicalMs.get(webhookId) ?? 0, now - oldest);
    return (Math.floor(lane.waiters.length / this.limit) + 1) * typical;
  }

  private take(lane: Lane, webhookId: string): Slot {
    const slot: Slot = { webhookId, startedAt: this.clock() };
    lane.inFlight.add(slot);
    return slot;
  }

  private lane(webhookId: string): Lane {
    let lane = this.lanes.get(webhookId);
    if (!lane) {
      lane = { inFlight: new Set(), waiters: [] };
      this.lanes.set(webhookId, lane);
    }
    return lane;
  }

  private forgetIfIdle(webhookId: string, lane: Lane): void {
    if (lane.inFlight.size === 0 && lane.waiters.length === 0) this.lanes.delete(webhookId);
  }

  private remember(webhookId: string, ms: number): void {
    const prev = this.typicalMs.get(webhookId);
    if (prev === undefined && this.typicalMs.size >= REMEMBERED) {
      const first = this.typicalMs.keys().next().value;
      if (first !== undefined) this.typicalMs.delete(first);
    }
    this.typicalMs.set(webhookId, prev === undefined ? ms : prev * 0.8 + ms * 0.2);
  }
}
