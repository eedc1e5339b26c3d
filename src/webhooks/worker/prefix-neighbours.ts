import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config';
import { withDeadline } from '../../common/deadline';
import { PeriodicRunner } from '../../common/periodic/periodic.runner';
import { RedisConnection } from '../../queue/queue.module';

/** How often a worker says, under its queue prefix, that its deployment is there, and looks for others. */
export const NEIGHBOURS_INTERVAL_MS = 10_000;
/** A deployment not heard of for this long has stopped. */
const GONE_AFTER_MS = 3 * NEIGHBOURS_INTERVAL_MS;
/** How long a pass waits for Redis. */
const PASS_WAIT_MS = 2000;
/** The warning is repeated this often while the prefix stays shared. */
const WARN_EVERY_MS = 10 * 60_000;

/**
 * Tells, in the log, that another deployment's workers (on another database) take jobs under the same QUEUE_PREFIX.
 * They and this one then take each other's jobs: a worker drops a job for a delivery its database does not hold,
 * and it goes out only once its own deployment's reconciler queues it again, seconds late. Nothing is lost, so
 * nothing else would show it. Each worker keeps its deployment's identity (settleQueuePrefix) in a sorted set under
 * the prefix, scored by when it was last there; the workers of one deployment count as one.
 */
@Injectable()
export class PrefixNeighbours implements OnApplicationBootstrap {
  private readonly logger = new Logger(PrefixNeighbours.name);
  private warnedAt = -Infinity;

  constructor(
    private readonly config: AppConfig,
    private readonly redis: RedisConnection,
    private readonly runner: PeriodicRunner,
  ) {}

  onApplicationBootstrap(): void {
    const me = this.config.redis.deployment;
    // (an app made without the start's settling, as the specs' in-process ones are, has no identity to give)
    if (!me) return;
    this.runner.schedule({
      name: 'queue prefix neighbours',
      intervalMs: NEIGHBOURS_INTERVAL_MS,
      firstAfterMs: 1000,
      run: () => this.pass(me),
    });
  }

  /** Says this deployment is there; answers the other deployments there now. */
  async pass(me: string): Promise<string[]> {
    const key = `${this.config.redis.prefix}:deployments`;
    const now = Date.now();
    // bounded: while Redis is unreachable the client holds the commands until it is back, and a pass waiting for
    // them would hold up a stop
    const replies = await withDeadline(
      this.redis.client
        .multi()
        .zadd(key, now, me)
        .zremrangebyscore(key, '-inf', now - GONE_AFTER_MS)
        .zrange(key, 0, -1)
        .pexpire(key, GONE_AFTER_MS)
        .exec(),
      PASS_WAIT_MS,
    );
    const [error, members] = replies?.[2] ?? [new Error('no reply')];
    if (error) throw error;
    const others = (members as string[]).filter((m) => m !== me);
    if (others.length > 0 && now - this.warnedAt >= WARN_EVERY_MS) {
      this.warnedAt = now;
      this.logger.warn(
        { prefix: this.config.redis.prefix, deployment: me, others },
        `QUEUE_PREFIX ${this.config.redis.prefix} is shared with ${others.length} other deployment(s) on other ` +
          "databases: their workers and this one take each other's jobs, and a delivery taken by the wrong one goes " +
          'out only once its own reconciler queues it again, seconds late. Give each deployment its own QUEUE_PREFIX, ' +
          'or leave it unset (each database then has its own).',
      );
    }
    return others;
  }
}
