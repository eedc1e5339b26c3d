import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Sql } from '../database/sql';
import { DueDelivery } from './delivery.queue';
import { TraceCarrier } from './trace-context';
import { SignatureScheme } from './send/signing';
import { OPERATIONAL_EVENTS } from '../events/event-names';
import { DisabledReason, WebhookSummary } from './operational-events';
import { FILTER_ACCEPTS, FILTERED_ENVELOPE } from './filter/filter-sql';

/** A claimed delivery with everything needed to send it, read in one round trip. */
export interface ClaimedDelivery {
  id: string;
  attemptCount: number;
  trigger: 'scheduled' | 'manual';
  webhookId: string;
  /** The destination type (http, rabbitmq, nats). */
  type: string;
  /** The URL as shown: a broker's with its credentials masked (for logs and traces). */
  url: string;
  /** A broker's URL in clear, sealed; null for http, whose `url` is the one to send to. */
  destinationEncrypted: string | null;
  destinationOptions: Record<string, string>;
  method: string;
  timeoutSeconds: number;
  active: boolean;
  secretEncrypted: string;
  signatureScheme: SignatureScheme;
  /** The key before the last rotation, while its grace period lasts; null otherwise. */
  previousSecretEncrypted: string | null;
  previousSignatureScheme: SignatureScheme | null;
  headers: { name: string; value: string }[];
  eventName: string;
  /**
   * The event's Message and time; null if retention removed the event (a delivery redelivered long after it finished).
   */
  payload: Record<string, unknown> | null;
  occurredAt: Date | null;
  eventId: string;
  webhookName: string;
  /** Start of the webhook's current run of failed attempts; null if its last attempt succeeded. */
  failingSince: Date | null;
  rateLimit: number | null;
  ordered: boolean;
  /**
   * The claim's lease (its `locked_until`, as Postgres text: exact to the microsecond). Recording the attempt
   * requires the delivery to still hold this lease, so a worker whose claim lapsed (frozen, partitioned
   * away) and was taken over cannot record a second answer for the same attempt.
   */
  lease: string;
}

export interface AttemptRecord {
  deliveryId: string;
  webhookId: string;
  number: number;
  startedAt: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string;
  trigger: 'scheduled' | 'manual';
  status: 'pending' | 'delivered' | 'failed';
  nextAttemptAt: Date | null;
  /** The lease of the claim the attempt was made under (ClaimedDelivery.lease). */
  lease: string;
}

/**
 * What became of an attempt to record: `recorded`, or `superseded` when the delivery no longer holds the
 * claim it was made under (the lease lapsed and another worker took the delivery over, or it was finished
 * meanwhile): the late answer is dropped, never recorded twice.
 */
export type RecordOutcome = 'recorded' | 'superseded';

/**
 * A pending delivery has `finished_at = 'infinity'`: it lives in the open partition, which every statement
 * about pending work names so that Postgres looks only there (see the partitioned-delivery-log migration).
 */
const PENDING = `'infinity'::timestamptz`;

const SERIALIZATION_FAILURE = '40001';

/**
 * The reconciler's scan: pending, past due by $1 seconds, unclaimed; at most $2; of an ordered webhook only
 * the oldest pending one (the others wait for it, not for a job). Reads the open partition only.
 */
export const OVERDUE_SQL = `SELECT d.id, d.webhook_id, d.attempt_count FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.finished_at = ${PENDING} AND d.status = 'pending' AND d.next_attempt_at < now() - make_interval(secs => $1)
          AND (d.locked_until IS NULL OR d.locked_until < now())
          AND (NOT w.ordered OR NOT EXISTS (
                SELECT 1 FROM webhook_deliveries p
                 WHERE p.finished_at = ${PENDING} AND p.webhook_id = d.webhook_id AND p.status = 'pending' AND p.event_seq < d.event_seq))
        ORDER BY d.next_attempt_at LIMIT $2`;

/**
 * A CTE (after one named d, of deliveries made pending again) that brings their attempts back to the open partition.
 */
const ATTEMPTS_BACK_TO_OPEN = `a AS (
         UPDATE webhook_delivery_attempts SET delivery_finished_at = ${PENDING}
          WHERE delivery_id IN (SELECT id FROM d) AND delivery_finished_at <> ${PENDING})`;

/**
 * Records attempts given as rows of v (delivery_id, number, started_at, status_code, duration_ms, error,
 * response_body, trigger, status, next_attempt_at, lease, webhook_id): only for deliveries still pending
 * under that very lease and at that attempt number. A delivery that finishes gets its finished_at (moving
 * it to that day's partition), and so do the attempts it made while pending, and the new one.
 */
const RECORD_FROM_V = `d AS (
         UPDATE webhook_deliveries d
            SET attempt_count = v.number, status = v.status, next_attempt_at = v.next_attempt_at, next_trigger = 'scheduled',
                locked_until = NULL, updated_at = now(),
                finished_at = CASE WHEN v.status = 'pending' THEN ${PENDING} ELSE now() END
           FROM v
          WHERE d.id = v.delivery_id AND d.finished_at = ${PENDING} AND d.status = 'pending'
            AND d.locked_until = v.lease AND d.attempt_count = v.number - 1
         RETURNING d.id, d.finished_at),
       moved AS (
         UPDATE webhook_delivery_attempts a SET delivery_finished_at = d.finished_at
           FROM d
          WHERE d.finished_at <> ${PENDING} AND a.delivery_id = d.id AND a.delivery_finished_at = ${PENDING}),
       inserted AS (
         INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, status_code, duration_ms, error, response_body, trigger, webhook_id, delivery_finished_at)
         SELECT v.delivery_id, v.number, v.started_at, v.status_code, v.duration_ms, v.error, v.response_body, v.trigger, v.webhook_id, d.finished_at
           FROM v JOIN d ON d.id = v.delivery_id)
       SELECT d.id AS delivery_id FROM d`;

/** Extra seconds a claim outlives the webhook's timeout before another worker may take the delivery over. */
export const CLAIM_SLACK_SECONDS = 5;

/** A delivery as the delivery log shows it. */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_name: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** When it became delivered or failed ('infinity' while pending): the partition key, as Postgres text (exact). */
  finished_at: string;
}

export const DELIVERY_COLUMNS = `id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, created_at, updated_at, finished_at::text AS finished_at`;

/**
 * What one relay statement did: how many outbox events it claimed, the deliveries it created for them, and how
 * many (event, webhook) pairs a webhook's filter refused (no delivery).
 */
export interface Relayed {
  events: number;
  refused: number;
  deliveries: RelayedDelivery[];
}

/** A new delivery, with the event it delivers and that event's trace context (null when it was not traced). */
export interface RelayedDelivery extends DueDelivery {
  eventId: string;
  eventName: string;
  eventTrace: TraceCarrier | null;
}

// Committed, unrelayed events: those named (the ids a NOTIFY carried), or the oldest (the safety-net scan).
// SKIP LOCKED, so relays of several workers never wait for each other nor take the same event.
const CLAIM_NAMED = `SELECT id FROM outbox_events WHERE id = ANY($1::uuid[]) AND relayed_at IS NULL FOR UPDATE SKIP LOCKED`;
const CLAIM_OLDEST = `SELECT id FROM outbox_events WHERE relayed_at IS NULL ORDER BY occurred_at LIMIT $1::int FOR UPDATE SKIP LOCKED`;

// An event with a target_webhook_id (a test send) goes to that webhook alone, active or not (an inactive
// one fails it without an attempt), filter or not, and never to the webhooks subscribed to its name.
// A subscribed webhook with a filter gets the event only if its compiled filter (a jsonpath predicate)
// accepts the envelope as delivered; the pairs refused are counted, for the metric.
function relayStatement(claim: string): string {
  return `WITH e AS (
            UPDATE outbox_events SET relayed_at = now() WHERE id IN (${claim})
            RETURNING id, name, occurred_at, seq, trace_context, target_webhook_id, payload->>'WebhookID' AS about,
                      ${FILTERED_ENVELOPE} AS envelope),
          s AS (
            SELECT w.id AS webhook_id, e.id AS event_id, e.name AS event_name, e.occurred_at, e.seq,
                   ${FILTER_ACCEPTS('w', 'e.envelope')} AS accepted
              FROM e JOIN webhooks w ON e.target_webhook_id IS NULL AND w.active AND w.events @> ARRAY[e.name] AND w.created_at <= e.occurred_at
                                    -- an operational event is never delivered to the webhook it is about
                                    AND (e.name <> ALL($2::text[]) OR e.about IS DISTINCT FROM w.id::text)),
          d AS (
            INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, next_attempt_at, event_seq)
            SELECT gen_random_uuid(), x.webhook_id, x.event_id, x.event_name, now(), x.seq
              FROM (SELECT s.webhook_id, s.event_id, s.event_name, s.occurred_at, s.seq FROM s WHERE s.accepted
                    UNION ALL
                    SELECT w.id, e.id, e.name, e.occurred_at, e.seq FROM e JOIN webhooks w ON w.id = e.target_webhook_id) x
             ORDER BY x.seq, x.occurred_at, x.event_id
            -- a new delivery is pending (the open partition): the unique key carries the partition key
            ON CONFLICT (event_id, webhook_id, finished_at) DO NOTHING
            RETURNING id, webhook_id, event_id)
     SELECT (SELECT count(*) FROM e)::int AS events,
            (SELECT count(*) FROM s WHERE NOT s.accepted)::int AS refused,
            coalesce((SELECT json_agg(json_build_array(d.id, d.webhook_id, e.id, e.name, e.trace_context)) FROM d JOIN e ON e.id = d.event_id), '[]'::json)
              AS deliveries`;
}
const RELAY_NAMED = relayStatement(CLAIM_NAMED);
const RELAY_OLDEST = relayStatement(CLAIM_OLDEST);

/**
 * The one writer of deliveries, their attempts and the outbox's relay column: Postgres is the record of
 * every delivery and attempt, and every change to them goes through here.
 */
@Injectable()
export class DeliveryStore {
  constructor(
    private readonly sql: Sql,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /**
   * Claims committed outbox events and creates one delivery per webhook subscribed to each (active,
   * created no later than the event), in one statement: an event is marked relayed exactly when its
   * deliveries exist. `eventIds` names the events to claim; null takes the `limit` oldest unrelayed ones.
   * Deliveries are unique per (event, webhook), so relaying an event again creates nothing.
   * `tx` lets the transaction that wrote an event relay it before it commits (a test send answers its delivery's id).
   */
  async relay(eventIds: string[] | null, limit: number, tx?: Pick<EntityManager, 'query'>): Promise<Relayed> {
    const text = eventIds === null ? RELAY_OLDEST : RELAY_NAMED;
    const params = [eventIds ?? limit, OPERATIONAL_EVENTS];
    const [row]: {
      events: number;
      refused: number;
      deliveries: [string, string, string, string, TraceCarrier | null][];
    }[] = tx ? await tx.query(text, params) : await this.sql.query(text, params);
    return {
      events: row.events,
      refused: row.refused,
      deliveries: row.deliveries.map(([id, webhookId, eventId, eventName, eventTrace]) => ({
        id,
        webhookId,
        attemptCount: 0,
        eventId,
        eventName,
        eventTrace,
      })),
    };
  }

  /** Makes a delivered or failed delivery of the webhook pending for one manual attempt now; null if it is pending. */
  async redeliver(webhookId: string, deliveryId: string): Promise<DeliveryRow | null> {
    const rows = await this.sql.query<DeliveryRow>(
      `WITH d AS (
         UPDATE webhook_deliveries SET status = 'pending', finished_at = ${PENDING}, next_attempt_at = now(), next_trigger = 'manual',
                locked_until = NULL, updated_at = now()
          WHERE id = $1 AND webhook_id = $2 AND status <> 'pending' RETURNING ${DELIVERY_COLUMNS}),
       ${ATTEMPTS_BACK_TO_OPEN}
       SELECT * FROM d`,
      [deliveryId, webhookId],
    );
    return rows[0] ?? null;
  }

  /** Makes every failed delivery of the webhook created since `since` pending for one manual attempt now. */
  async recover(webhookId: string, since: Date): Promise<DueDelivery[]> {
    const rows = await this.sql.query<{ id: string; attempt_count: number }>(
      `WITH d AS (
         UPDATE webhook_deliveries SET status = 'pending', finished_at = ${PENDING}, next_attempt_at = now(), next_trigger = 'manual',
                locked_until = NULL, updated_at = now()
          WHERE webhook_id = $1 AND status = 'failed' AND created_at >= $2 RETURNING id, attempt_count),
       ${ATTEMPTS_BACK_TO_OPEN}
       SELECT * FROM d`,
      [webhookId, since],
    );
    return rows.map((r) => ({ id: r.id, webhookId, attemptCount: r.attempt_count }));
  }

  /**
   * Takes due, pending, unclaimed deliveries for one attempt each (a lease of timeout + slack), in one
   * statement; one answer per id, in order: what the attempt needs, or null if that delivery is not due,
   * already taken, no longer pending, or (ordered webhook) not the oldest pending one of its webhook.
   */
  async claimMany(deliveryIds: string[]): Promise<(ClaimedDelivery | null)[]> {
    try {
      return await this.claimOnce(deliveryIds);
    } catch (err) {
      // a delivery that another transaction moved out of the open partition (finished) while this statement
      // waited for its row: Postgres refuses rather than follow it; asked again, the claim just skips it
      if ((err as { code?: string }).code !== SERIALIZATION_FAILURE) throw err;
      return this.claimOnce(deliveryIds);
    }
  }

  private async claimOnce(deliveryIds: string[]): Promise<(ClaimedDelivery | null)[]> {
    const rows = await this.sql.query<Record<string, any>>(
      `UPDATE webhook_deliveries d
          SET locked_until = now() + make_interval(secs => w.timeout_seconds + ${CLAIM_SLACK_SECONDS}), held = NULL
         FROM webhooks w
        WHERE d.id = ANY($1::uuid[]) AND w.id = d.webhook_id
          AND d.finished_at = ${PENDING} AND d.status = 'pending'
          AND (d.locked_until IS NULL OR d.locked_until < now())
          AND d.next_attempt_at <= now() + interval '1 second'
          -- an ordered webhook's deliveries go one at a time, in event order: only its oldest pending one is
          -- taken, and while it is out (claimed) or waiting for a retry the others stay where they are
          AND (NOT w.ordered OR NOT EXISTS (
                SELECT 1 FROM webhook_deliveries p
                 WHERE p.finished_at = ${PENDING} AND p.webhook_id = d.webhook_id AND p.status = 'pending' AND p.event_seq < d.event_seq))
      RETURNING d.id, d.attempt_count, d.next_trigger, d.locked_until::text AS lease, w.id AS webhook_id, w.url, w.method, w.timeout_seconds, w.active,
                w.type, w.destination_encrypted, w.destination_options,
                w.secret_encrypted, w.signature_scheme,
                -- keys are read as the attempt is sent: a rotation applies to retries queued before it
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END AS previous_secret_encrypted,
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_signature_scheme END AS previous_signature_scheme,
                d.event_name, d.event_id, w.name AS webhook_name,
                -- the event may be gone with retention (a finished delivery redelivered long after)
                (SELECT json_build_array(e.payload, e.occurred_at) FROM outbox_events e WHERE e.id = d.event_id) AS event,
                w.failing_since, w.rate_limit, w.ordered,
                (SELECT coalesce(json_agg(json_build_object('name', h.name, 'value', h.value) ORDER BY h.created_at, h.id), '[]'::json)
                   FROM webhook_headers h WHERE h.webhook_id = w.id) AS headers`,
      [deliveryIds],
    );
    const byId = new Map<string, ClaimedDelivery>();
    for (const r of rows) {
      byId.set(r.id, {
        id: r.id,
        attemptCount: r.attempt_count,
        trigger: r.next_trigger,
        webhookId: r.webhook_id,
        type: r.type,
        url: r.url,
        destinationEncrypted: r.destination_encrypted,
        destinationOptions: r.destination_options,
        method: r.method,
        timeoutSeconds: r.timeout_seconds,
        active: r.active,
        secretEncrypted: r.secret_encrypted,
        signatureScheme: r.signature_scheme,
        previousSecretEncrypted: r.previous_secret_encrypted,
        previousSignatureScheme: r.previous_signature_scheme,
        headers: r.headers,
        eventName: r.event_name,
        payload: r.event ? r.event[0] : null,
        occurredAt: r.event ? new Date(r.event[1]) : null,
        eventId: r.event_id,
        webhookName: r.webhook_name,
        failingSince: r.failing_since,
        rateLimit: r.rate_limit,
        ordered: r.ordered,
        lease: r.lease,
      });
    }
    // one claim per delivery: should two jobs of one delivery share a batch, only the first gets it
    return deliveryIds.map((id) => {
      const claimed = byId.get(id) ?? null;
      byId.delete(id);
      return claimed;
    });
  }

  /**
   * Records the attempt and the delivery's new state in one statement (in `tx` when given), if the delivery
   * still holds the attempt's claim (see RecordOutcome). A finished delivery leaves the open partition for
   * its day's, and takes the attempts made while it was pending along.
   */
  async recordAttempt(a: AttemptRecord, tx?: Pick<EntityManager, 'query'>): Promise<RecordOutcome> {
    const rows = (await (tx ?? this.sql).query(
      `WITH v AS (
         SELECT $1::uuid AS delivery_id, $2::int AS number, $3::timestamptz AS started_at, $4::int AS status_code, $5::int AS duration_ms,
                $6::text AS error, $7::text AS response_body, $8::text AS trigger, $9::text AS status, $10::timestamptz AS next_attempt_at,
                $11::timestamptz AS lease, $12::uuid AS webhook_id),
       ${RECORD_FROM_V}`,
      [
        a.deliveryId,
        a.number,
        a.startedAt,
        a.statusCode,
        a.durationMs,
        a.error,
        a.responseBody,
        a.trigger,
        a.status,
        a.nextAttemptAt,
        a.lease,
        a.webhookId,
      ],
    )) as { delivery_id: string }[];
    return rows.length > 0 ? 'recorded' : 'superseded';
  }

  /**
   * recordAttempt for several attempts (of different deliveries) in one statement. If the statement fails
   * (e.g. one delivery was deleted meanwhile), each attempt is recorded on its own, so one bad row cannot
   * cost the others their record; the answer per attempt is then that attempt's own outcome.
   */
  async recordAttempts(attempts: AttemptRecord[]): Promise<(RecordOutcome | Error)[]> {
    if (attempts.length === 1) {
      return [await this.recordAttempt(attempts[0]).catch((err: Error) => err)];
    }
    try {
      const rows = await this.sql.query<{ delivery_id: string }>(
        `WITH v AS (
           SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[],
                                $10::timestamptz[], $11::timestamptz[], $12::uuid[])
             AS v(delivery_id, number, started_at, status_code, duration_ms, error, response_body, trigger, status, next_attempt_at, lease, webhook_id)),
         ${RECORD_FROM_V}`,
        [
          attempts.map((a) => a.deliveryId),
          attempts.map((a) => a.number),
          attempts.map((a) => a.startedAt),
          attempts.map((a) => a.statusCode),
          attempts.map((a) => a.durationMs),
          attempts.map((a) => a.error),
          attempts.map((a) => a.responseBody),
          attempts.map((a) => a.trigger),
          attempts.map((a) => a.status),
          attempts.map((a) => a.nextAttemptAt),
          attempts.map((a) => a.lease),
          attempts.map((a) => a.webhookId),
        ],
      );
      const recorded = new Set(rows.map((r) => r.delivery_id));
      return attempts.map((a) => (recorded.has(a.deliveryId) ? 'recorded' : 'superseded'));
    } catch {
      return Promise.all(attempts.map((a) => this.recordAttempt(a).catch((err: Error) => err)));
    }
  }

  /**
   * A delivery whose webhook was switched off (or whose event is gone) fails without an attempt, if the claim is still
   * its own; it can be recovered later.
   */
  async failWithoutAttempt(deliveryId: string, lease: string): Promise<void> {
    await this.sql.query(
      `WITH d AS (
         UPDATE webhook_deliveries SET status = 'failed', finished_at = now(), next_attempt_at = NULL, locked_until = NULL, updated_at = now()
          WHERE id = $1 AND finished_at = ${PENDING} AND status = 'pending' AND locked_until = $2::timestamptz
          RETURNING id, finished_at)
       UPDATE webhook_delivery_attempts a SET delivery_finished_at = d.finished_at FROM d
        WHERE a.delivery_id = d.id AND a.delivery_finished_at = ${PENDING}`,
      [deliveryId, lease],
    );
  }

  /**
   * Switches an active webhook off with its reason; `failing` only while its run of failures has lasted at
   * least `failingForMs` (a success meanwhile cancels it). The webhook when this call switched it off, else
   * null (already off, or no longer failing): so only one caller reports it.
   */
  async disableWebhook(
    tx: EntityManager,
    webhookId: string,
    reason: DisabledReason,
    failingForMs = 0,
  ): Promise<(WebhookSummary & { disabledAt: Date }) | null> {
    const [rows] = await tx.query<[{ id: string; name: string; url: string; disabled_at: Date }[], number]>(
      `UPDATE webhooks SET active = false, disabled_reason = $2, disabled_at = now(), updated_at = now()
        WHERE id = $1 AND active
          AND ($2 <> 'failing' OR failing_since <= now() - make_interval(secs => $3::float8 / 1000))
        RETURNING id, name, url, disabled_at`,
      [webhookId, reason, failingForMs],
    );
    const w = rows[0];
    return w ? { id: w.id, name: w.name, url: w.url, disabledAt: w.disabled_at } : null;
  }

  /** Erases the previous signing keys whose grace period has ended; answers how many. */
  async eraseExpiredSigningKeys(): Promise<number> {
    const [, count] = await this.db.query<[unknown, number]>(
      `UPDATE webhooks SET previous_secret_encrypted = NULL, previous_signature_scheme = NULL, previous_secret_expires_at = NULL
        WHERE previous_secret_expires_at <= now()`,
    );
    return count;
  }

  /** Starts the webhook's failing clock at `since`, unless it is already running. */
  async markFailing(webhookId: string, since: Date): Promise<void> {
    await this.db.query(`UPDATE webhooks SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL`, [
      webhookId,
      since,
    ]);
  }

  /** A success stops the webhook's failing clock. */
  async markHealthy(webhookId: string): Promise<void> {
    await this.db.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [
      webhookId,
    ]);
  }

  /**
   * Gives a claimed delivery back without an attempt, to be tried at `until` (its webhook's rate limit is
   * used up): neither an attempt nor a failure.
   */
  async hold(deliveryId: string, until: Date): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET locked_until = NULL, next_attempt_at = $2, held = 'rate_limit' WHERE id = $1 AND finished_at = ${PENDING} AND status = 'pending'`,
      [deliveryId, until],
    );
  }

  /** The oldest pending delivery of an ordered webhook (the one to send next), if any. */
  async nextInOrder(webhookId: string): Promise<(DueDelivery & { nextAttemptAt: Date | null }) | null> {
    const [r]: { id: string; attempt_count: number; next_attempt_at: Date | null }[] = await this.db.query(
      `SELECT id, attempt_count, next_attempt_at FROM webhook_deliveries
        WHERE webhook_id = $1 AND finished_at = ${PENDING} AND status = 'pending' ORDER BY event_seq NULLS FIRST LIMIT 1`,
      [webhookId],
    );
    return r ? { id: r.id, webhookId, attemptCount: r.attempt_count, nextAttemptAt: r.next_attempt_at } : null;
  }

  /**
   * Pending deliveries due for more than `graceSeconds` and not claimed by a live worker; of an ordered
   * webhook only the oldest pending one (the others wait for it, not for a job).
   */
  async overdueDeliveries(graceSeconds: number, limit: number): Promise<DueDelivery[]> {
    const rows: { id: string; webhook_id: string; attempt_count: number }[] = await this.sql.query(OVERDUE_SQL, [
      graceSeconds,
      limit,
    ]);
    return rows.map((r) => ({ id: r.id, webhookId: r.webhook_id, attemptCount: r.attempt_count }));
  }
}
