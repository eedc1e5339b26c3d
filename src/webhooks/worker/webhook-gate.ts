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

/**
 * Per-webhook admission of delivery attempts in one worker process: at most `limit` attempts of one webhook
 * in flight at a time, so a slow subscriber cannot take the slots of the others.
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

  constructor(
    readonly limit: number,
    readonly maxWaitMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

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
    if ((lane.inFlight.size < this.limit && lane.waiters.length === 0) || !mayStepAside)
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

  /** Gives the slot back: to the next job waiting for this webhook, if any. */
  release(slot: Slot): void {
    const lane = this.lanes.get(slot.webhookId);
    if (!lane || !lane.inFlight.delete(slot)) return;
    this.remember(slot.webhookId, this.clock() - slot.startedAt);
    const next = lane.waiters.shift();
    if (next) next.grant(this.take(lane, slot.webhookId));
    else this.forgetIfIdle(slot.webhookId, lane);
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
