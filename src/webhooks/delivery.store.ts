import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DayPartitions } from '../database/day-partitions';
import { pgCode, PG_ERRORS, Queryable, ScanOptions, Sql } from '../database/sql';
import { relayClaim } from '../events/outbox.store';
import { OPERATIONAL_EVENTS } from '../events/event-names';
import { DueDelivery } from './delivery.queue';
import { TraceCarrier } from './trace-context';
import { SignatureScheme } from './send/signing';
import { FILTER_ACCEPTS } from './filter/filter-sql';
import { LIVE } from './webhook.store';

/**
 * A delivery's address: its id and its partition key (the time of its event, as Postgres text: exact to the
 * microsecond). Statements that name both read one partition only. `at` is null for a job queued before the
 * key existed; such a delivery is looked up by id alone.
 */
export interface DeliveryKey {
  id: string;
  at: string | null;
}

/** A claimed delivery with everything needed to send it, read in one round trip. */
export interface ClaimedDelivery {
  id: string;
  /** The delivery's partition key (DeliveryKey.at). */
  at: string;
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
  /** The event's Message and time; null if the event is gone (trimmed from a default partition before it). */
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
  /** The token of the claim statement that took it (claimSql): what gives it back unsent (releaseClaims). */
  claim: string;
}

/** An attempt cut off with its worker, recorded by the claim that found its lease lapsed (cutOffSql). */
export interface CutOffAttempt {
  id: string;
  at: string;
  webhookId: string;
  number: number;
  /** The delivery failed with it (the schedule's last attempt, or a manual one); otherwise it is due again. */
  final: boolean;
}

export interface AttemptRecord {
  deliveryId: string;
  /** The delivery's partition key (ClaimedDelivery.at). */
  at: string;
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
 * claim it was made under (the lease lapsed and another worker took the delivery over, or it was finished,
 * redelivered or deleted meanwhile): the late answer is dropped, never recorded twice.
 */
export type RecordOutcome = 'recorded' | 'superseded';

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
  /** The partition key (the event's time), as Postgres text (exact). */
  at: string;
}

/** An attempt as the delivery log shows it. */
export interface AttemptRow {
  number: number;
  started_at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string;
  trigger: string;
}

/** Health counts of one webhook over a window (see WebhookStatsService). */
export interface DeliveryStats {
  counts: { delivered: number; failed: number; pending: number; retrying: number };
  latency: { attempts: number; p50: number | null; p95: number | null };
  lastSuccess: { started_at: Date } | null;
  lastFailure: { started_at: Date; status_code: number | null; error: string; response_body: string } | null;
}

/** Extra seconds a claim outlives the webhook's timeout before another worker may take the delivery over. */
export const CLAIM_SLACK_SECONDS = 5;

/**
 * A partition key as text: UTC, to the microsecond (exact), so its day (the partition) is its first ten
 * characters, whatever the session's time zone.
 */
export const keyText = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * "Pending", for statements that address rows by their key: said so that no partial index of pending rows can
 * serve it (the status can only be one of three, by its check), so Postgres looks each row up by its key even
 * when its statistics, taken while few deliveries were pending, would make a scan of every pending row look
 * cheaper (a plan that a backlog would make slow, and that a prepared statement would keep).
 */
const BY_KEY_PENDING = (alias?: string) => {
  const status = alias ? `${alias}.status` : 'status';
  return `${status} <> 'delivered' AND ${status} <> 'failed'`;
};

const COLUMNS = `id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, created_at, updated_at, ${keyText('event_occurred_at')} AS at`;

/** A webhook with at most this many pending deliveries has a page of them read from them alone. */
export const PENDING_READ_WHOLE = 5000;
const OF_PENDING = `webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'`;
/**
 * A page of a webhook's pending deliveries, newest first. Postgres has no statistics of one webhook's pending count,
 * and a walk of either newest-first index takes the rows as they come: through the webhook's whole history (the stats
 * index) or through every webhook's pending deliveries (the pending one), 0.2 s for a dozen pending deliveries behind
 * another webhook's backlog of 100 000. So the statement counts them first (at most PENDING_READ_WHOLE + 1 entries of
 * the webhook's own pending index, asked in its order so that Postgres reads that index), and up to
 * PENDING_READ_WHOLE reads them all from it and sorts them; past it, they are many, and the walk finds them among
 * the newest. One statement: the count and the page see one snapshot, and the branch not taken is never run (a
 * one-time filter).
 */
const PENDING_PAGE = `
  WITH counted AS (SELECT count(*) AS n FROM (SELECT 1 FROM ${OF_PENDING} ORDER BY event_seq LIMIT ${PENDING_READ_WHOLE + 1}) p)
  SELECT * FROM (
    (SELECT ${COLUMNS} FROM (SELECT * FROM ${OF_PENDING} ORDER BY event_seq LIMIT ${PENDING_READ_WHOLE + 1}) d
      WHERE (SELECT n FROM counted) <= ${PENDING_READ_WHOLE} ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3)
    UNION ALL
    -- the walk planned as it is alone (the condition stays outside its LIMIT)
    (SELECT * FROM (SELECT ${COLUMNS} FROM ${OF_PENDING} ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) w
      WHERE (SELECT n FROM counted) > ${PENDING_READ_WHOLE})
  ) page ORDER BY created_at DESC, id DESC`;

/**
 * The log routes' statements (the scale spec checks their plans at millions of rows): each is served by an
 * index of every partition, and the attempts of a delivery are read from its one partition. The status filters
 * are separate texts, so that even a prepared statement's generic plan uses the partial index of its status.
 */
export const DELIVERY_LOG_SQL = {
  list: `SELECT ${COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
  byStatus: {
    // the common status: the newest-first walk of the stats index finds them at once
    delivered: `SELECT ${COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered' ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    failed: `SELECT ${COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'failed' ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    pending: PENDING_PAGE,
  } as Record<string, string>,
  one: `SELECT ${COLUMNS} FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2`,
  attempts: `SELECT number, started_at, status_code, duration_ms, error, response_body, trigger
               FROM webhook_delivery_attempts WHERE delivery_id = $1 AND event_occurred_at = $2::timestamptz ORDER BY number`,
};

/**
 * The reconciler's scan: pending, past due by $1 seconds, unclaimed; at most $2; of an ordered webhook only
 * the oldest pending one (the others wait for it, not for a job). See overdue() for the indexes it reads.
 */
export const OVERDUE_SQL = `SELECT o.id, ${keyText('o.event_occurred_at')} AS at, o.webhook_id, o.attempt_count, o.event_id
        FROM (${overdue('now() - make_interval(secs => $1)', '$2')}) o ORDER BY o.next_attempt_at LIMIT $2`;

/** How many seconds the most overdue delivery is past due (0 when none): the reconciler's overdue ones, no grace. */
export const OLDEST_OVERDUE_SQL = `SELECT coalesce(extract(epoch FROM now() - min(o.next_attempt_at)), 0)::float8 AS age
        FROM (${overdue('now()', '1')}) o`;

/**
 * The overdue deliveries (at most `limit` of unordered webhooks, and the head of each ordered one): pending, due
 * before `dueBefore`, unclaimed, of a webhook not deleted; of an ordered webhook only the oldest pending one. The
 * unordered ones come from the `due` index in due order, so the scan stops at `limit`; an ordered webhook's head
 * from its `pending_order` index, one probe per ordered webhook. (Asking of every due row whether an older one of
 * its webhook is pending made a blocked ordered webhook's backlog cost its square: 200 000 rows behind one head ran
 * for minutes.) Deleted webhooks' deliveries are dropped after the limit: asked in the join, the liveness of a
 * webhook, which Postgres cannot estimate before it has statistics of the column, made it drive the join from the
 * webhooks and read the whole due index once for each. The purge takes those deliveries within seconds.
 */
function overdue(dueBefore: string, limit: string): string {
  const columns = ['id', 'event_occurred_at', 'webhook_id', 'attempt_count', 'event_id', 'next_attempt_at'];
  const of = (d: string) => columns.map((c) => `${d}.${c}`).join(', ');
  const unclaimed = (d: string) => `(${d}.locked_until IS NULL OR ${d}.locked_until < now())`;
  return `(SELECT ${of('o')} FROM
           (SELECT ${of('d')}, ${LIVE('w')} AS live FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
             WHERE d.status = 'pending' AND d.held IS DISTINCT FROM 'order' AND d.next_attempt_at < ${dueBefore}
               AND ${unclaimed('d')} AND NOT w.ordered
             ORDER BY d.next_attempt_at LIMIT ${limit}) o
          WHERE o.live)
        UNION ALL
        (SELECT ${of('h')} FROM webhooks w
           CROSS JOIN LATERAL (SELECT ${columns.join(', ')}, locked_until FROM webhook_deliveries
                                WHERE webhook_id = w.id AND status = 'pending' ORDER BY event_seq LIMIT 1) h
          WHERE w.ordered AND ${LIVE('w')} AND h.next_attempt_at < ${dueBefore} AND ${unclaimed('h')})`;
}

/**
 * The oldest pending delivery of ordered webhook $1, the one to send next, from its `pending_order` index (one probe
 * a partition). In event order, as the claims' order check (releaseNotHeadSql) and the reconciler take it; a delivery
 * of an event from before event sequences existed (NULL) is outside the order, sent without waiting, and comes last
 * here. (`NULLS FIRST`, which that index cannot answer, sorted every pending delivery of the webhook each time one
 * finished: a backlog of N cost N² to drain.)
 */
export const NEXT_IN_ORDER_SQL = `SELECT id, ${keyText('event_occurred_at')} AS at, webhook_id, attempt_count, next_attempt_at
        FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' ORDER BY event_seq LIMIT 1`;

/** Age in seconds of the oldest pending delivery (0 when none), from the `pending_created` index. */
export const OLDEST_PENDING_SQL = `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age
        FROM webhook_deliveries WHERE status = 'pending'`;

/** Pending deliveries waiting for their turn under their webhook's rate limit, from the `held` index. */
export const RATE_LIMITED_SQL = `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND held = 'rate_limit'`;

/**
 * The trace contexts of the events $1 (at their times $2, so only their days' partitions are read), of those
 * recorded while traced: one statement for a whole reconciler pass.
 */
export const EVENT_TRACES_SQL = `SELECT id, trace_context FROM outbox_events
  WHERE id = ANY($1::uuid[]) AND occurred_at = ANY($2::timestamptz[]) AND trace_context IS NOT NULL`;

/**
 * Claims due, pending, unclaimed deliveries ($1 ids, $2 their partition keys) for one attempt each: a lease of
 * the webhook's timeout + slack, written to `locked_until`, with the claim's token $3 (a HOT update: no index
 * holds either; the token lets a claim whose answer was lost be given back, releaseClaimsSql). Returns what
 * the attempt needs, webhook, headers and the event's payload included. Every table it reads is named with the
 * partition keys, so Postgres plans it for those partitions alone; the order of an ordered webhook, which needs
 * all of its pending deliveries, is checked apart (RELEASE_NOT_HEAD_SQL), for the few claims that need it. A claim
 * that lapsed is settled first (cutOffSql) and its delivery claimed afresh. A delivery of a deleted webhook is not
 * claimed: it waits, unsent, for the purge.
 */
export const claimSql = (deliveries: string, events: string) => `UPDATE ${deliveries} d
          SET locked_until = now() + make_interval(secs => w.timeout_seconds + ${CLAIM_SLACK_SECONDS}), held = NULL, claim_token = $3::uuid
         FROM webhooks w
        WHERE d.id = ANY($1::uuid[]) AND d.event_occurred_at = ANY($2::timestamptz[]) AND w.id = d.webhook_id
          AND ${LIVE('w')} AND ${BY_KEY_PENDING('d')}
          AND d.locked_until IS NULL
          AND d.next_attempt_at <= now() + interval '1 second'
      RETURNING d.id, ${keyText('d.event_occurred_at')} AS at, d.attempt_count, d.next_trigger, d.locked_until::text AS lease, d.event_seq,
                w.id AS webhook_id, w.type, w.url, w.destination_encrypted, w.destination_options, w.method, w.timeout_seconds,
                w.active, w.secret_encrypted, w.signature_scheme,
                -- keys are read as the attempt is sent: a rotation applies to retries queued before it
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_encrypted END AS previous_secret_encrypted,
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_signature_scheme END AS previous_signature_scheme,
                d.event_name, d.event_id, w.name AS webhook_name,
                (SELECT json_build_array(e.payload, e.occurred_at) FROM ${events} e
                  WHERE e.id = d.event_id AND e.occurred_at = d.event_occurred_at AND e.occurred_at = ANY($2::timestamptz[])) AS event,
                w.failing_since, w.rate_limit, w.ordered,
                (SELECT coalesce(json_agg(json_build_object('name', h.name, 'value', h.value) ORDER BY h.created_at, h.id), '[]'::json)
                   FROM webhook_headers h WHERE h.webhook_id = w.id) AS headers`;

/**
 * Gives back, unsent, each delivery $1 that still holds the claim made with its token $2 (the pairs in order; the
 * deliveries at $3, when `keyed`, of any day otherwise): the claim is undone as if it had not been made (no attempt,
 * no change of the schedule), so the delivery is due again at once. For a claim whose answer was lost (it may or
 * may not have committed) and for claimed deliveries whose attempt never started; a delivery its claim no longer
 * holds (recorded, cut off, taken by another claim since) is left alone, and so is one held by another token
 * than its own pair's (a claim of the same batch whose attempt goes on). Returns the ids given back.
 */
export const releaseClaimsSql = (deliveries: string, keyed: boolean) => `UPDATE ${deliveries} d
          SET locked_until = NULL
         FROM unnest($1::uuid[], $2::uuid[]) AS g(id, token)
        WHERE d.id = g.id AND d.claim_token = g.token${keyed ? ' AND d.event_occurred_at = ANY($3::timestamptz[])' : ''}
          AND d.locked_until IS NOT NULL AND ${BY_KEY_PENDING('d')}
      RETURNING d.id`;

/**
 * Attempts cut off: of the deliveries $1 (at $2), those still pending under a claim that lapsed with nothing recorded
 * (the worker that took it was killed, or froze past its lease, mid-attempt) get that attempt recorded: it may have
 * been sent, and no answer came back within its lease, so it is a `timeout` without a status code, started when
 * it was claimed and lasting the whole lease. It counts as an attempt like any other: the delivery fails if it was
 * the last one the schedule allows ($3 attempts) or a manual one, and is otherwise due again at once (its worker
 * failed, not the subscriber). The lapsed claim is released either way. Returns each such attempt.
 */
export const cutOffSql = (deliveries: string, attempts: string) => `WITH lapsed AS (
         SELECT d.id, d.event_occurred_at, d.attempt_count + 1 AS number, d.locked_until, d.next_trigger, d.webhook_id,
                (d.next_trigger = 'manual' OR d.attempt_count + 1 >= $3) AS final
           FROM ${deliveries} d
          WHERE d.id = ANY($1::uuid[]) AND d.event_occurred_at = ANY($2::timestamptz[]) AND ${BY_KEY_PENDING('d')}
            AND d.locked_until < now()
            FOR NO KEY UPDATE SKIP LOCKED),
       cut AS (
         UPDATE ${deliveries} d
            SET attempt_count = l.number, locked_until = NULL, next_trigger = 'scheduled', updated_at = now(),
                status = CASE WHEN l.final THEN 'failed' ELSE 'pending' END,
                next_attempt_at = CASE WHEN l.final THEN NULL ELSE d.next_attempt_at END
           FROM lapsed l
          WHERE d.id = l.id AND d.event_occurred_at = l.event_occurred_at AND d.event_occurred_at = ANY($2::timestamptz[])
         RETURNING d.id, d.event_occurred_at, d.webhook_id, l.number, l.final, l.locked_until, l.next_trigger),
       inserted AS (
         INSERT INTO ${attempts} (delivery_id, number, started_at, status_code, duration_ms, error, response_body, trigger, webhook_id, event_occurred_at)
         SELECT c.id, c.number, c.locked_until - make_interval(secs => w.timeout_seconds + ${CLAIM_SLACK_SECONDS}), NULL,
                (w.timeout_seconds + ${CLAIM_SLACK_SECONDS}) * 1000, 'timeout', '', c.next_trigger, c.webhook_id, c.event_occurred_at
           FROM cut c JOIN webhooks w ON w.id = c.webhook_id)
       SELECT id, ${keyText('event_occurred_at')} AS at, webhook_id, number, final FROM cut`;

/**
 * An ordered webhook's deliveries go one at a time, in event order: of the claims just made ($1 ids, $2 keys,
 * $3 leases) for ordered webhooks, those with an older pending delivery of the same webhook are given back at
 * once (unsent), whether that one is out (claimed) or waiting for a retry. Returns the ids given back. Each waits,
 * marked `held = 'order'` and so out of the `due` index, until the one before it is done (nextInOrder) and it is
 * claimed again. The webhook must still be ordered, under a share lock: a change of the webhook (which takes
 * its row for update, and clears the mark when it makes the webhook unordered) then either comes after this
 * statement and sees its marks, or before, and this one releases nothing.
 */
export const releaseNotHeadSql = (deliveries: string) => `UPDATE ${deliveries} d SET locked_until = NULL, held = 'order'
         FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS c(id, at, lease)
        WHERE d.id = c.id AND d.event_occurred_at = c.at AND d.event_occurred_at = ANY($2::timestamptz[]) AND d.locked_until = c.lease
          AND EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.webhook_id = d.webhook_id AND p.status = 'pending' AND p.event_seq < d.event_seq)
          AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.ordered FOR SHARE)
      RETURNING d.id`;

/**
 * Records attempts ($1..$13 arrays: delivery id, partition key, number, started_at, status_code, duration_ms,
 * error, response_body, trigger, status, next_attempt_at, lease, webhook id): each only for a delivery still
 * pending under that very lease and at that attempt number, which gets its new state, and its attempt is
 * appended, in one statement. The partition keys are named on their own too, so the statement reads only
 * their partitions.
 */
export const recordSql = (deliveries: string, attempts: string) => `WITH v AS (
         SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::int[], $4::timestamptz[], $5::int[], $6::int[], $7::text[], $8::text[],
                              $9::text[], $10::text[], $11::timestamptz[], $12::timestamptz[], $13::uuid[])
           AS v(delivery_id, at, number, started_at, status_code, duration_ms, error, response_body, trigger, status, next_attempt_at, lease, webhook_id)),
       d AS (
         UPDATE ${deliveries} d
            SET attempt_count = v.number, status = v.status, next_attempt_at = v.next_attempt_at, next_trigger = 'scheduled',
                locked_until = NULL, updated_at = now()
           FROM v
          WHERE d.id = v.delivery_id AND d.event_occurred_at = v.at AND d.event_occurred_at = ANY($2::timestamptz[])
            AND ${BY_KEY_PENDING('d')} AND d.locked_until = v.lease AND d.attempt_count = v.number - 1
         RETURNING d.id),
       inserted AS (
         INSERT INTO ${attempts} (delivery_id, number, started_at, status_code, duration_ms, error, response_body, trigger, webhook_id, event_occurred_at)
         SELECT v.delivery_id, v.number, v.started_at, v.status_code, v.duration_ms, v.error, v.response_body, v.trigger, v.webhook_id, v.at
           FROM v JOIN d ON d.id = v.delivery_id)
       SELECT d.id AS delivery_id FROM d`;

/**
 * Event `e` may go to webhook `w`: not a test send, and the webhook was created no later than it, but for the one
 * it is about.
 */
const MAY_RECEIVE = `e.target_webhook_id IS NULL AND w.created_at <= e.occurred_at
                    -- an operational event is never delivered to the webhook it is about
                    AND (e.name <> ALL($2::text[]) OR e.about IS DISTINCT FROM w.id::text)`;

/**
 * The webhooks subscribed to event `e` by their own columns (active, its name among their events): those whose
 * subscription has not changed since the event happened. A deleted webhook is inactive too (WebhookStore.delete):
 * the relay's hot statement asks nothing more of it.
 */
const SUBSCRIBED = `${MAY_RECEIVE} AND w.active AND w.events @> ARRAY[e.name]
                    AND (w.subscription_changed_at IS NULL OR w.subscription_changed_at <= e.occurred_at)`;

/**
 * The webhooks whose subscription has changed since event `e` happened, with the subscription each had then (`h`:
 * the first kept one that ended after it; see the migration WebhookSubscriptionHistory), so a relay that lags
 * delivers to the webhooks subscribed when the event happened, as a prompt one does, and to no other (and to none
 * deleted since).
 */
const SUBSCRIBED_THEN = `h AS MATERIALIZED (
            SELECT DISTINCT ON (e.id, s.webhook_id) e.id AS event_id, s.webhook_id, s.active, s.events, s.filter_path
              FROM e JOIN webhook_subscriptions_ended s ON s.valid_until > e.occurred_at
             ORDER BY e.id, s.webhook_id, s.valid_until, s.id)`;
/** The (event, webhook) pairs of `SUBSCRIBED_THEN` whose subscription then took the event (active, and its name). */
const SUBSCRIBED_THEN_PAIRS = `e JOIN h ON h.event_id = e.id AND h.active AND h.events @> ARRAY[e.name]
              JOIN webhooks w ON w.id = h.webhook_id AND ${MAY_RECEIVE} AND ${LIVE('w')}`;

/**
 * The relay statement: claims committed outbox events (the outbox's claim, `e`) and creates one delivery per
 * webhook subscribed to each, in one statement, so an event is marked relayed exactly when its deliveries exist.
 * A delivery carries its event's time as its partition key.
 * A webhook with a filter gets the event only if its compiled filter accepts it: those pairs are judged apart
 * (`f`, which the partial index of filtered webhooks keeps empty and cheap when no webhook has a filter), so
 * that the pairs without a filter cost what they did, and the refused ones are counted, for the metric.
 * An event with a target_webhook_id (a test send) goes to that webhook alone (unless deleted), active or not (an
 * inactive one fails it without an attempt), filter or not, and never to the webhooks subscribed to its name.
 * A delivery's first attempt is due after the schedule's first delay ($5, in seconds); a test send's at once.
 */
function relayStatement(named: boolean, events: string, deliveries: string): string {
  return `WITH ${relayClaim(named, events)},
          ${SUBSCRIBED_THEN},
          f AS MATERIALIZED (
            SELECT w.id AS webhook_id, e.id AS event_id, e.name AS event_name, e.occurred_at, e.seq, ${FILTER_ACCEPTS('w', 'e')} AS accepted
              FROM e JOIN webhooks w ON ${SUBSCRIBED} AND w.filter_path IS NOT NULL
            UNION ALL
            SELECT w.id, e.id, e.name, e.occurred_at, e.seq, ${FILTER_ACCEPTS('h', 'e')}
              FROM ${SUBSCRIBED_THEN_PAIRS} WHERE h.filter_path IS NOT NULL),
          d AS (
            INSERT INTO ${deliveries} (id, webhook_id, event_id, event_name, next_attempt_at, event_seq, event_occurred_at)
            SELECT gen_random_uuid(), x.webhook_id, x.event_id, x.event_name, now() + make_interval(secs => x.delay), x.seq, x.occurred_at
              FROM (SELECT w.id AS webhook_id, e.id AS event_id, e.name AS event_name, e.occurred_at, e.seq, $5::float8 AS delay
                      FROM e JOIN webhooks w ON ${SUBSCRIBED} AND w.filter_path IS NULL
                    UNION ALL
                    SELECT w.id, e.id, e.name, e.occurred_at, e.seq, $5::float8 FROM ${SUBSCRIBED_THEN_PAIRS} WHERE h.filter_path IS NULL
                    UNION ALL
                    SELECT f.webhook_id, f.event_id, f.event_name, f.occurred_at, f.seq, $5::float8 FROM f WHERE f.accepted
                    UNION ALL
                    SELECT w.id, e.id, e.name, e.occurred_at, e.seq, 0::float8 FROM e JOIN webhooks w ON w.id = e.target_webhook_id AND ${LIVE('w')}) x
             ORDER BY x.seq, x.occurred_at, x.event_id
            ON CONFLICT (event_id, webhook_id, event_occurred_at) DO NOTHING
            RETURNING id, ${keyText('event_occurred_at')} AS at, webhook_id, event_id)
     SELECT (SELECT count(*) FROM e)::int AS events,
            (SELECT count(*) FROM f WHERE NOT f.accepted)::int AS refused,
            coalesce((SELECT json_agg(json_build_array(d.id, d.at, d.webhook_id, e.id, e.name, e.trace_context, e.target_webhook_id IS NULL)) FROM d JOIN e ON e.id = d.event_id), '[]'::json)
              AS deliveries`;
}
const RELAY_OLDEST = relayStatement(false, 'outbox_events', 'webhook_deliveries');

/** Which outbox events a relay statement claims: those a NOTIFY named (within their time range), or the oldest. */
export type RelayClaim = { ids: string[]; from: Date | null; to: Date | null } | null;

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

const pending = (r: { id: string; at: string; webhook_id: string; attempt_count: number }): DueDelivery => ({
  id: r.id,
  at: r.at,
  webhookId: r.webhook_id,
  attemptCount: r.attempt_count,
});

/**
 * The statements of deliveries and their attempts, and the one writer of both: Postgres is the record of every
 * delivery and attempt, and every change to them goes through here. Its relay statement is also the one that
 * marks outbox events relayed (with the outbox's own claim), as that must be one statement with the fan-out.
 */
@Injectable()
export class DeliveryStore {
  constructor(
    private readonly sql: Sql,
    private readonly days: DayPartitions,
  ) {}

  /**
   * Claims committed outbox events and creates their deliveries (see relayStatement). `claim` names the events;
   * null takes the `limit` oldest unrelayed ones. Deliveries are unique per (event, webhook), so relaying an
   * event again creates nothing. `tx` lets the transaction that wrote an event relay it before it commits (a
   * test send answers its delivery's id). `firstDelayMs`: when the first attempts are due (a test send's: at once).
   */
  async relay(claim: RelayClaim, limit: number, tx?: Queryable, firstDelayMs = 0): Promise<Relayed> {
    const params = [
      claim?.ids ?? limit,
      OPERATIONAL_EVENTS,
      claim?.from ?? '-infinity',
      claim?.to ?? 'infinity',
      firstDelayMs / 1000,
    ];
    let everyDay = true;
    const [row] = await this.days.run(
      async (names) => {
        everyDay = true;
        if (claim === null) return RELAY_OLDEST;
        // events of one day (as nearly always): that day's partitions, named
        const day = claim.from && claim.to && sameDay(claim.from, claim.to) ? claim.from : null;
        const events = day ? await names.of('outbox_events', day) : 'outbox_events';
        const deliveries = day ? await names.of('webhook_deliveries', day) : 'webhook_deliveries';
        everyDay = deliveries === 'webhook_deliveries';
        return relayStatement(true, events, deliveries);
      },
      async (text) => {
        // over the partitioned tables (the safety-net scan, events of several days): a generic plan
        const run = () =>
          tx
            ? tx.query<RelayRow>(text, params)
            : everyDay
              ? this.sql.scan<RelayRow>(text, params)
              : this.sql.query<RelayRow>(text, params);
        try {
          return await run();
        } catch (err) {
          // a webhook deleted while the statement ran: asked again, the relay no longer sees it
          if (tx || pgCode(err) !== PG_ERRORS.foreignKeyViolation) throw err;
          return run();
        }
      },
      tx !== undefined,
    );
    return {
      events: row.events,
      refused: row.refused,
      deliveries: row.deliveries.map(([id, at, webhookId, eventId, eventName, eventTrace, scheduled]) => ({
        id,
        at,
        webhookId,
        attemptCount: 0,
        delayMs: scheduled && firstDelayMs > 0 ? firstDelayMs : undefined,
        eventId,
        eventName,
        eventTrace,
      })),
    };
  }

  /** Makes a delivered or failed delivery of the webhook pending for one manual attempt now; null if it is pending. */
  async redeliver(webhookId: string, deliveryId: string): Promise<DeliveryRow | null> {
    const rows = await this.sql.write<DeliveryRow>(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), next_trigger = 'manual', locked_until = NULL, updated_at = now()
        WHERE id = $1 AND webhook_id = $2 AND status <> 'pending' RETURNING ${COLUMNS}`,
      [deliveryId, webhookId],
    );
    return rows[0] ?? null;
  }

  /**
   * The deliveries of webhook $1, made unordered in `tx` (which holds the webhook's row), that were waiting for their
   * turn (`held = 'order'`): unmarked, so that they are due again as any other. None has a job (the one before it
   * would have queued it when done): the caller queues them once `tx` has committed.
   */
  async unmarkWaitingInOrder(tx: Queryable, webhookId: string): Promise<DueDelivery[]> {
    const rows = await tx.query<{ id: string; at: string; webhook_id: string; attempt_count: number }>(
      `UPDATE webhook_deliveries SET held = NULL WHERE webhook_id = $1 AND status = 'pending' AND held = 'order'
       RETURNING id, ${keyText('event_occurred_at')} AS at, webhook_id, attempt_count`,
      [webhookId],
    );
    return rows.map(pending);
  }

  /** Makes every failed delivery of the webhook created since `since` pending for one manual attempt now. */
  async recover(webhookId: string, since: Date): Promise<DueDelivery[]> {
    const rows = await this.sql.write<{ id: string; at: string; webhook_id: string; attempt_count: number }>(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), next_trigger = 'manual', locked_until = NULL, updated_at = now()
        WHERE webhook_id = $1 AND status = 'failed' AND created_at >= $2
        RETURNING id, ${keyText('event_occurred_at')} AS at, webhook_id, attempt_count`,
      [webhookId, since],
    );
    return rows.map(pending);
  }

  /**
   * Takes due, pending, unclaimed deliveries for one attempt each (a lease of timeout + slack), in one
   * statement (and one more when some belong to ordered webhooks); one answer per key, in order: what the
   * attempt needs, or null if that delivery is not due, already taken, no longer pending, or (ordered webhook)
   * not the oldest pending one of its webhook.
   */
  async claimMany(keys: DeliveryKey[], token: string = randomUUID()): Promise<(ClaimedDelivery | null)[]> {
    const at = new Map<string, string>();
    for (const k of keys) if (k.at !== null) at.set(k.id, k.at);
    const unknown = keys.filter((k) => k.at === null).map((k) => k.id);
    if (unknown.length > 0) {
      // jobs queued before deliveries carried their key: found by id in every partition
      const found = await this.sql.query<{ id: string; at: string }>(
        `SELECT id, ${keyText('event_occurred_at')} AS at FROM webhook_deliveries WHERE id = ANY($1::uuid[])`,
        [unknown],
      );
      for (const f of found) at.set(f.id, f.at);
    }
    const rows = (
      await Promise.all(
        groupByDay([...at].map(([id, key]) => ({ id, at: key }))).map((group) =>
          this.days.run(
            async (names) =>
              claimSql(await names.of('webhook_deliveries', group[0].at), await names.of('outbox_events', group[0].at)),
            (text) => this.sql.keyed(text, [group.map((k) => k.id), [...new Set(group.map((k) => k.at))], token]),
          ),
        ),
      )
    ).flat();
    const ordered = rows.filter((r) => r.ordered && r.event_seq !== null);
    const released = new Set<string>();
    if (ordered.length > 0) {
      const back = await this.sql.query<{ id: string }>(releaseNotHeadSql('webhook_deliveries'), [
        ordered.map((r) => r.id),
        ordered.map((r) => r.at),
        ordered.map((r) => r.lease),
      ]);
      for (const b of back) released.add(b.id);
    }
    const byId = new Map<string, ClaimedDelivery>();
    for (const r of rows) {
      if (released.has(r.id)) continue;
      byId.set(r.id, {
        id: r.id,
        at: r.at,
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
        claim: token,
      });
    }
    // one claim per delivery: should two jobs of one delivery share a batch, only the first gets it
    return keys.map((k) => {
      const claimed = byId.get(k.id) ?? null;
      byId.delete(k.id);
      return claimed;
    });
  }

  /**
   * Gives back, unsent, each of these deliveries that still holds the claim made with its token (releaseClaimsSql);
   * answers how many were given back. A key without its partition key is looked for in every partition.
   */
  async releaseClaims(claims: { key: DeliveryKey; token: string }[]): Promise<number> {
    const known = claims.filter((c) => c.key.at !== null).map((c) => ({ id: c.key.id, at: c.key.at!, token: c.token }));
    const unknown = claims.filter((c) => c.key.at === null);
    const released = await Promise.all([
      ...groupByDay(known).map((group) =>
        this.days.run(
          async (names) => releaseClaimsSql(await names.of('webhook_deliveries', group[0].at), true),
          (text) =>
            this.sql.query(text, [
              group.map((c) => c.id),
              group.map((c) => c.token),
              [...new Set(group.map((c) => c.at))],
            ]),
        ),
      ),
      ...(unknown.length > 0
        ? [
            this.sql.query(releaseClaimsSql('webhook_deliveries', false), [
              unknown.map((c) => c.key.id),
              unknown.map((c) => c.token),
            ]),
          ]
        : []),
    ]);
    return released.flat().length;
  }

  /**
   * Records the attempts of these deliveries that were cut off (cutOffSql): those whose claim lapsed with nothing
   * recorded. `attemptsAllowed` is the length of the retry schedule. A delivery still due after it can be claimed
   * again at once.
   */
  async recordCutOff(keys: { id: string; at: string }[], attemptsAllowed: number): Promise<CutOffAttempt[]> {
    const rows = await Promise.all(
      groupByDay(keys).map((group) =>
        this.days.run(
          async (names) =>
            cutOffSql(
              await names.of('webhook_deliveries', group[0].at),
              await names.of('webhook_delivery_attempts', group[0].at),
            ),
          (text) =>
            this.sql.query<{ id: string; at: string; webhook_id: string; number: number; final: boolean }>(text, [
              group.map((k) => k.id),
              [...new Set(group.map((k) => k.at))],
              attemptsAllowed,
            ]),
        ),
      ),
    );
    return rows.flat().map((r) => ({ id: r.id, at: r.at, webhookId: r.webhook_id, number: r.number, final: r.final }));
  }

  /**
   * Records the attempt and the delivery's new state in one statement (in `tx` when given), if the delivery
   * still holds the attempt's claim (see RecordOutcome).
   */
  async recordAttempt(a: AttemptRecord, tx?: Queryable): Promise<RecordOutcome> {
    const rows = await this.record([a], tx);
    return rows.length > 0 ? 'recorded' : 'superseded';
  }

  /** Whether the delivery is still there (not deleted with its webhook). */
  async exists(id: string): Promise<boolean> {
    const [row] = await this.sql.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = $1) AS found`,
      [id],
    );
    return row.found;
  }

  /**
   * recordAttempt for several attempts (of different deliveries) in one statement per day. If a statement fails
   * (e.g. one delivery was deleted meanwhile), each attempt is recorded on its own, so one bad row cannot
   * cost the others their record; the answer per attempt is then that attempt's own outcome.
   */
  async recordAttempts(attempts: AttemptRecord[]): Promise<(RecordOutcome | Error)[]> {
    if (attempts.length === 1) {
      return [await this.recordAttempt(attempts[0]).catch((err: Error) => err)];
    }
    try {
      const recorded = new Set(
        (await Promise.all(groupByDay(attempts).map((group) => this.record(group)))).flat().map((r) => r.delivery_id),
      );
      return attempts.map((a) => (recorded.has(a.deliveryId) ? 'recorded' : 'superseded'));
    } catch {
      return Promise.all(attempts.map((a) => this.recordAttempt(a).catch((err: Error) => err)));
    }
  }

  /** The record statement for attempts of one day. */
  private record(attempts: AttemptRecord[], tx?: Queryable): Promise<{ delivery_id: string }[]> {
    const at = attempts[0].at;
    return this.days.run(
      async (names) =>
        recordSql(await names.of('webhook_deliveries', at), await names.of('webhook_delivery_attempts', at)),
      (text) =>
        tx
          ? tx.query<{ delivery_id: string }>(text, recordParams(attempts))
          : this.sql.keyed<{ delivery_id: string }>(text, recordParams(attempts)),
      tx !== undefined,
    );
  }

  /**
   * A delivery whose webhook was switched off (or whose event is gone) fails without an attempt, if the claim is still
   * its own; it can be recovered later.
   */
  async failWithoutAttempt(d: { id: string; at: string }, lease: string): Promise<void> {
    await this.days.run(
      async (names) =>
        `UPDATE ${await names.of('webhook_deliveries', d.at)} SET status = 'failed', next_attempt_at = NULL, locked_until = NULL, updated_at = now()
          WHERE id = $1 AND event_occurred_at = $2::timestamptz AND ${BY_KEY_PENDING()} AND locked_until = $3::timestamptz`,
      (text) => this.sql.query(text, [d.id, d.at, lease]),
    );
  }

  /**
   * Gives a claimed delivery back without an attempt, to be tried at `until` (its webhook's rate limit is
   * used up): neither an attempt nor a failure. Only while the claim is still its own.
   */
  async hold(d: { id: string; at: string }, lease: string, until: Date): Promise<void> {
    await this.days.run(
      async (names) =>
        `UPDATE ${await names.of('webhook_deliveries', d.at)} SET locked_until = NULL, next_attempt_at = $3, held = 'rate_limit'
          WHERE id = $1 AND event_occurred_at = $2::timestamptz AND ${BY_KEY_PENDING()} AND locked_until = $4::timestamptz`,
      (text) => this.sql.query(text, [d.id, d.at, until, lease]),
    );
  }

  /** The oldest pending delivery of an ordered webhook (the one to send next), if any (NEXT_IN_ORDER_SQL). */
  async nextInOrder(webhookId: string): Promise<(DueDelivery & { nextAttemptAt: Date | null }) | null> {
    const [r] = await this.sql.query<{
      id: string;
      at: string;
      webhook_id: string;
      attempt_count: number;
      next_attempt_at: Date | null;
    }>(NEXT_IN_ORDER_SQL, [webhookId]);
    return r ? { ...pending(r), nextAttemptAt: r.next_attempt_at } : null;
  }

  /**
   * Pending deliveries due for more than `graceSeconds` and not claimed by a live worker; of an ordered
   * webhook only the oldest pending one (the others wait for it, not for a job). Each with the trace context
   * of its event, so a job queued again continues the event's trace instead of starting one.
   */
  async overdueDeliveries(graceSeconds: number, limit: number): Promise<DueDelivery[]> {
    const rows = await this.sql.scan<{
      id: string;
      at: string;
      webhook_id: string;
      attempt_count: number;
      event_id: string;
    }>(OVERDUE_SQL, [graceSeconds, limit]);
    if (rows.length === 0) return [];
    // the job carries on the trace of the request that recorded the event
    const traces = await this.sql.scan<{ id: string; trace_context: TraceCarrier }>(EVENT_TRACES_SQL, [
      rows.map((r) => r.event_id),
      rows.map((r) => r.at),
    ]);
    const traceOf = new Map(traces.map((e) => [e.id, e.trace_context]));
    return rows.map((r) => {
      const trace = traceOf.get(r.event_id);
      return trace ? { ...pending(r), trace } : pending(r);
    });
  }

  /** A page of the webhook's delivery log, newest first, optionally of one status. */
  async list(webhookId: string, take: number, skip: number, status?: string): Promise<DeliveryRow[]> {
    const text = status ? DELIVERY_LOG_SQL.byStatus[status] : DELIVERY_LOG_SQL.list;
    if (!text) return [];
    return this.sql.query<DeliveryRow>(text, [webhookId, take, skip]);
  }

  /** One delivery of the webhook, or null. */
  async get(webhookId: string, deliveryId: string): Promise<DeliveryRow | null> {
    const [d] = await this.sql.query<DeliveryRow>(DELIVERY_LOG_SQL.one, [deliveryId, webhookId]);
    return d ?? null;
  }

  /** The attempts of a delivery, in order (from its one partition). */
  async attempts(d: { id: string; at: string }): Promise<AttemptRow[]> {
    return this.sql.query<AttemptRow>(DELIVERY_LOG_SQL.attempts, [d.id, d.at]);
  }

  /**
   * Health of one webhook since `from`, read from indexes alone where it counts: deliveries by status from
   * (webhook_id, created_at) INCLUDE (status, attempt_count); attempt latency from the two partial attempt
   * indexes (successes, failures) INCLUDE (duration_ms); the last success and the last failure from the top
   * of each. The cost grows with the deliveries in the window, never with the webhook's whole history.
   */
  async stats(webhookId: string, from: Date): Promise<DeliveryStats> {
    const [[counts], [latency], [success], [failure]] = await Promise.all([
      this.sql.query<DeliveryStats['counts']>(
        `SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
                count(*) FILTER (WHERE status = 'failed')::int AS failed,
                count(*) FILTER (WHERE status = 'pending' AND attempt_count = 0)::int AS pending,
                count(*) FILTER (WHERE status = 'pending' AND attempt_count > 0)::int AS retrying
           FROM webhook_deliveries WHERE webhook_id = $1 AND created_at >= $2`,
        [webhookId, from],
      ),
      this.sql.query<DeliveryStats['latency']>(
        `SELECT count(*)::int AS attempts,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
                percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95
           FROM (SELECT duration_ms FROM webhook_delivery_attempts WHERE webhook_id = $1 AND started_at >= $2 AND error IS NULL
                 UNION ALL
                 SELECT duration_ms FROM webhook_delivery_attempts WHERE webhook_id = $1 AND started_at >= $2 AND error IS NOT NULL) a`,
        [webhookId, from],
      ),
      this.sql.query<{ started_at: Date }>(
        `SELECT started_at FROM webhook_delivery_attempts WHERE webhook_id = $1 AND error IS NULL ORDER BY started_at DESC LIMIT 1`,
        [webhookId],
      ),
      this.sql.query<NonNullable<DeliveryStats['lastFailure']>>(
        `SELECT started_at, status_code, error, response_body FROM webhook_delivery_attempts
          WHERE webhook_id = $1 AND error IS NOT NULL ORDER BY started_at DESC LIMIT 1`,
        [webhookId],
      ),
    ]);
    return { counts, latency, lastSuccess: success ?? null, lastFailure: failure ?? null };
  }

  /** Age in seconds of the oldest pending delivery (0 when none). */
  async oldestPendingAge(opts: ScanOptions): Promise<number> {
    const [row] = await this.sql.scan<{ age: number }>(OLDEST_PENDING_SQL, [], opts);
    return Number(row.age);
  }

  /**
   * How many seconds the most overdue delivery is past due (0 when none; OLDEST_OVERDUE_SQL). Workers take a
   * delivery within moments of its due time, and the reconciler queues one they missed within seconds; one overdue
   * for minutes means nothing is taking them, the workers are behind a backlog, or a slow receiver holds its own
   * webhook's deliveries back (they wait for its share of a worker's concurrency).
   */
  async oldestOverdueAge(opts: ScanOptions): Promise<number> {
    const [row] = await this.sql.scan<{ age: number }>(OLDEST_OVERDUE_SQL, [], opts);
    return Number(row.age);
  }

  /** Pending deliveries waiting for their turn under their webhook's rate limit. */
  async rateLimitedCount(opts: ScanOptions): Promise<number> {
    const [row] = await this.sql.scan<{ n: number }>(RATE_LIMITED_SQL, [], opts);
    return row.n;
  }

  /** Ordered webhooks whose oldest pending delivery has failed at least once while later ones wait behind it. */
  async orderedBlockedCount(opts: ScanOptions): Promise<number> {
    const [row] = await this.sql.scan<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhooks w
         CROSS JOIN LATERAL (SELECT attempt_count, event_seq FROM webhook_deliveries
                              WHERE webhook_id = w.id AND status = 'pending' ORDER BY event_seq LIMIT 1) head
        WHERE w.ordered AND w.active AND ${LIVE('w')} AND head.attempt_count > 0
          AND EXISTS (SELECT 1 FROM webhook_deliveries b WHERE b.webhook_id = w.id AND b.status = 'pending' AND b.event_seq > head.event_seq)`,
      [],
      opts,
    );
    return row.n;
  }
}

function recordParams(attempts: AttemptRecord[]): unknown[] {
  return [
    attempts.map((a) => a.deliveryId),
    attempts.map((a) => a.at),
    attempts.map((a) => a.number),
    attempts.map((a) => a.startedAt),
    attempts.map((a) => a.statusCode),
    attempts.map((a) => a.durationMs),
    attempts.map((a) => a.error),
    // a text column refuses NUL, which a subscriber's answer or a broker's reason may hold
    attempts.map((a) => a.responseBody.replace(/\0/g, '\uFFFD')),
    attempts.map((a) => a.trigger),
    attempts.map((a) => a.status),
    attempts.map((a) => a.nextAttemptAt),
    attempts.map((a) => a.lease),
    attempts.map((a) => a.webhookId),
  ];
}

type RelayRow = {
  events: number;
  refused: number;
  /** id, partition key, webhook, event, event name, trace, whether the schedule's first delay applies (no test) */
  deliveries: [string, string, string, string, string, TraceCarrier | null, boolean][];
};

function sameDay(a: Date, b: Date): boolean {
  return a.toISOString().slice(0, 10) === b.toISOString().slice(0, 10);
}

/** Items by the day of their partition key, in first-seen order. */
function groupByDay<T extends { at: string }>(items: T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const day = item.at.slice(0, 10);
    const group = groups.get(day);
    if (group) group.push(item);
    else groups.set(day, [item]);
  }
  return [...groups.values()];
}
