import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config';
import { DeliveryJobs } from '../delivery/delivery-jobs';
import { OUTBOX_CHANNEL } from './events.service';

const BATCH = 500;
const POLL_MS = 2000;

/**
 * Moves committed outbox rows to the events queue with jobId = event id (so running twice adds nothing twice).
 * Woken by LISTEN/NOTIFY the moment a change commits, by a poll as a safety net, and once at start-up.
 * Rows are claimed with FOR UPDATE SKIP LOCKED, so any number of worker processes can run it.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private listener?: Client;
  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private stopped = false;
  private idle?: Promise<void>;

  constructor(
    private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly jobs: DeliveryJobs,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.idle;
    await this.listener?.end().catch(() => undefined);
  }

  /** Starts a drain, or asks the running one to go round again. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.idle = this.drainLoop().finally(() => {
      this.running = false;
    });
  }

  private async drainLoop(): Promise<void> {
    do {
      this.again = false;
      try {
        while (!this.stopped && (await this.relayBatch()) === BATCH) {
          /* keep going while batches are full */
        }
      } catch (err) {
        this.logger.warn({ err }, 'outbox relay failed; will retry');
        return;
      }
    } while (this.again && !this.stopped);
  }

  /**
   * Relays one batch; returns how many events it moved. One statement claims and marks the batch
   * (FOR UPDATE SKIP LOCKED, so workers never take the same rows), then the batch goes to the queue.
   * If the queue refuses it, the marks are taken back so the next pass retries at once; should even that
   * fail, the reconciler re-queues relayed events that were never fanned out.
   */
  async relayBatch(): Promise<number> {
    const rows: { id: string; occurred_at: Date }[] = await this.db.query(
      `UPDATE outbox_events SET relayed_at = now()
        WHERE id IN (SELECT id FROM outbox_events WHERE relayed_at IS NULL ORDER BY occurred_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING id, occurred_at`,
      [BATCH],
    ).then((r: [typeof rows, number]) => r[0]);
    if (rows.length === 0) return 0;
    rows.sort((a, b) => a.occurred_at.getTime() - b.occurred_at.getTime());
    const ids = rows.map((r) => r.id);
    try {
      await this.jobs.enqueueFanouts(ids);
    } catch (err) {
      await this.db.query(`UPDATE outbox_events SET relayed_at = NULL WHERE id = ANY($1::uuid[])`, [ids]).catch(() => undefined);
      throw err;
    }
    return rows.length;
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.config.database.url });
    client.on('notification', () => this.wake());
    client.on('error', (err) => {
      this.logger.warn({ err }, 'outbox listener lost its connection; reconnecting');
      this.listener = undefined;
      client.end().catch(() => undefined);
      setTimeout(() => void this.listen().catch(() => undefined), 1000).unref();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      this.listener = client;
      this.wake();
    } catch (err) {
      this.logger.warn({ err }, 'could not LISTEN for outbox events; polling only until it can');
      await client.end().catch(() => undefined);
      setTimeout(() => void this.listen().catch(() => undefined), 2000).unref();
    }
  }
}
