import { Injectable } from '@nestjs/common';
import { DayPartitions } from '../database/day-partitions';

/** The channel a transaction that wrote events NOTIFYs on commit; the payload lists the events' ids. */
export const OUTBOX_CHANNEL = 'outbox_events';

/** NOTIFY payloads are limited to 8000 bytes: past this many ids the payload is left empty ("look for yourself"). */
const MAX_IDS_PER_NOTIFY = 200;

/**
 * What the outbox statements need of the caller: its transaction (a TypeORM EntityManager inside
 * `transaction()`, or the raw-SQL helper's transaction), or the pool for reads.
 */
export interface TransactionQuery {
  query(text: string, params?: unknown[]): Promise<unknown>;
  queryRunner?: { isTransactionActive: boolean };
}

/** An event as the outbox stores it. */
export interface OutboxRow {
  id: string;
  name: string;
  payload: Record<string, unknown>;
  occurredAt: Date;
}

/**
 * A claim of committed, unrelayed outbox events and their mark as relayed, as the first CTE (named `e`) of the
 * relay statement, which goes on to create the events' deliveries in the same statement (so an event is marked
 * relayed exactly when its deliveries exist). $1: the ids a NOTIFY named, or the number of oldest events to take
 * (the safety-net scan); $3, $4: bounds of their `occurred_at`, so the statement reads only those days'
 * partitions. SKIP LOCKED, so relays of several workers never wait for each other nor take the same event.
 * `table` is outbox_events or the one partition that holds the events. `e` has id, name, occurred_at, seq,
 * trace_context, target_webhook_id, `about` (the webhook an operational event is about) and payload (what
 * webhooks' filters read).
 */
export function relayClaim(named: boolean, table = 'outbox_events'): string {
  const claim = named
    ? `SELECT id FROM ${table} WHERE id = ANY($1::uuid[]) AND relayed_at IS NULL
          AND occurred_at >= $3::timestamptz AND occurred_at <= $4::timestamptz FOR UPDATE SKIP LOCKED`
    : `SELECT id FROM ${table} WHERE relayed_at IS NULL
          AND occurred_at >= $3::timestamptz AND occurred_at <= $4::timestamptz ORDER BY occurred_at LIMIT $1::int FOR UPDATE SKIP LOCKED`;
  return `e AS (
            UPDATE ${table} SET relayed_at = now()
             WHERE id IN (${claim}) AND occurred_at >= $3::timestamptz AND occurred_at <= $4::timestamptz
            RETURNING id, name, occurred_at, seq, trace_context, target_webhook_id, payload->>'WebhookID' AS about, payload)`;
}

/** Age in seconds of the oldest unrelayed event (0 when none), from the partial `unrelayed` index. */
export const OLDEST_UNRELAYED_SQL = `SELECT coalesce(extract(epoch FROM now() - min(occurred_at)), 0)::float8 AS age
  FROM outbox_events WHERE relayed_at IS NULL`;

/**
 * The outbox's statements: the one writer of outbox rows (events are recorded in the transaction of the change
 * they report, with a NOTIFY that wakes the relay on commit) and its reads. Marking events relayed belongs to
 * the relay statement (relayClaim), which must be one statement with the fan-out.
 */
@Injectable()
export class OutboxStore {
  constructor(private readonly days: DayPartitions) {}

  /**
   * The table to insert `events` into: the day partition that holds them when they are of one day and it exists
   * (so Postgres need not route each row), else the partitioned table. An event's day is its partition for good:
   * retention drops only days long past, never the current one.
   */
  private async tableOf(events: OutboxRow[]): Promise<string> {
    const first = events[0].occurredAt.toISOString();
    const last = events[events.length - 1].occurredAt.toISOString();
    return first.slice(0, 10) === last.slice(0, 10) ? this.days.of('outbox_events', first) : 'outbox_events';
  }

  /** Inserts `events` (of one change, in order) and NOTIFYs their ids and the time of the first, in one round trip. */
  async insert(tx: TransactionQuery, events: OutboxRow[], trace: string | null): Promise<void> {
    const ids = events.map((e) => e.id);
    await tx.query(
      `WITH e AS (INSERT INTO ${await this.tableOf(events)} (id, name, payload, occurred_at, trace_context)
                  SELECT u.*, $6::jsonb FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::timestamptz[]) AS u)
       SELECT pg_notify('${OUTBOX_CHANNEL}', $5)`,
      [
        ids,
        events.map((e) => e.name),
        events.map((e) => JSON.stringify(e.payload)),
        events.map((e) => e.occurredAt),
        notification(ids, events),
        trace,
      ],
    );
  }

  /**
   * The same insert and NOTIFY as parts of one bigger statement that makes the change the events report (a
   * statement is atomic, so they are written exactly when the change is): `cte` (named `outbox`) inserts the rows
   * only `when` (a SQL condition over the statement's other parts) holds, and `notify` is the call to put in the
   * statement's final SELECT, which must return rows under the same condition. `merge[i]`, when given, is a jsonb
   * SQL expression merged into event i's payload (a value the statement itself makes, such as a generated id).
   * Parameters are numbered from `first`.
   */
  async insertParts(
    events: OutboxRow[],
    trace: string | null,
    opts: { first: number; when: string; merge?: (string | undefined)[] },
  ): Promise<{ cte: string; notify: string; params: unknown[] }> {
    const ids = events.map((e) => e.id);
    const n = opts.first;
    const params: unknown[] = [ids, events.map((e) => e.name), events.map((e) => e.occurredAt), trace];
    const payloads = events.map((e, i) => {
      params.push(JSON.stringify(e.payload));
      const merge = opts.merge?.[i];
      const p = `$${n + params.length - 1}::jsonb`;
      return merge ? `${p} || ${merge}` : p;
    });
    params.push(notification(ids, events));
    return {
      cte: `outbox AS (INSERT INTO ${await this.tableOf(events)} (id, name, payload, occurred_at, trace_context)
                   SELECT u.*, $${n + 3}::jsonb FROM unnest($${n}::uuid[], $${n + 1}::text[], ARRAY[${payloads.join(', ')}], $${n + 2}::timestamptz[]) AS u
                    WHERE ${opts.when})`,
      notify: `pg_notify('${OUTBOX_CHANNEL}', $${n + params.length - 1})`,
      params,
    };
  }

  /** Inserts an event meant for one webhook alone (a test send) and NOTIFYs it. */
  async insertForWebhook(tx: TransactionQuery, event: OutboxRow, webhookId: string, trace: string | null) {
    await tx.query(
      `WITH e AS (INSERT INTO ${await this.tableOf([event])} (id, name, payload, occurred_at, target_webhook_id, trace_context) VALUES ($1, $2, $3, $4, $5, $6::jsonb))
       SELECT pg_notify('${OUTBOX_CHANNEL}', $7)`,
      [
        event.id,
        event.name,
        JSON.stringify(event.payload),
        event.occurredAt,
        webhookId,
        trace,
        notification([event.id], [event]),
      ],
    );
  }

  /**
   * Age in seconds of the oldest event committed but not relayed yet (0 when none): the relay takes an event within
   * moments of its commit, so one waiting for minutes means no relay runs (no worker) or it cannot keep up.
   */
  async oldestUnrelayedAge(q: TransactionQuery): Promise<number> {
    const [row] = (await q.query(OLDEST_UNRELAYED_SQL)) as { age: number }[];
    return Number(row.age);
  }

  /** Events committed but not relayed yet. */
  async unrelayedCount(q: TransactionQuery): Promise<number> {
    const [row] = (await q.query(`SELECT count(*)::int AS n FROM outbox_events WHERE relayed_at IS NULL`)) as {
      n: number;
    }[];
    return row.n;
  }
}

/** A NOTIFY payload: the ids, then `@` and the events' times (earliest and latest, epoch milliseconds). */
function notification(ids: string[], events: OutboxRow[]): string {
  if (ids.length > MAX_IDS_PER_NOTIFY) return '';
  const times = events.map((e) => e.occurredAt.getTime());
  return `${ids.join(',')}@${Math.min(...times)}-${Math.max(...times)}`;
}

/** Events a NOTIFY announced: their ids, and the range of their times when it says. */
export interface OutboxNotification {
  ids: string[];
  from: Date | null;
  to: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMES = /^(\d{1,15})-(\d{1,15})$/;

/**
 * The events a NOTIFY on OUTBOX_CHANNEL announces, or null when it does not say (the listener should then look
 * for unrelayed events itself).
 */
export function parseOutboxNotification(payload: string | undefined): OutboxNotification | null {
  if (!payload) return null;
  const [list, times, ...rest] = payload.split('@');
  if (rest.length > 0) return null;
  const ids = list.split(',');
  if (!ids.every((id) => UUID.test(id))) return null;
  if (times === undefined) return { ids, from: null, to: null };
  const m = TIMES.exec(times);
  if (!m) return null;
  return { ids, from: new Date(Number(m[1])), to: new Date(Number(m[2])) };
}
