import { Injectable } from '@nestjs/common';
import { Queryable, ScanOptions, Sql, SqlTransaction } from '../database/sql';
import { DisabledReason, WebhookSummary } from './operational-events';
import { HeaderUsage } from './send/header-fields';
import { SignatureScheme } from './send/signing';

/** A webhook subscription as stored (the table `webhooks`). */
export interface Webhook {
  id: string;
  name: string;
  url: string;
  method: string;
  timeoutSeconds: number;
  events: string[];
  active: boolean;
  /** The current signing key, sealed by SecretBox: a whsec_ secret (v1) or a whsk_ Ed25519 private key (v1a). */
  secretEncrypted: string;
  createdAt: Date;
  updatedAt: Date;
  signatureScheme: SignatureScheme;
  /** During a rotation's grace period: the key used before it, sealed; erased once the period ends. */
  previousSecretEncrypted: string | null;
  previousSignatureScheme: SignatureScheme | null;
  /** When deliveries stop being signed with the previous key too. */
  previousSecretExpiresAt: Date | null;
  /** Why the service switched the webhook off (gone, failing, manual); null while active. */
  disabledReason: string | null;
  disabledAt: Date | null;
  /** Start of the current run of failed attempts (null after a success): the clock of automatic disabling. */
  failingSince: Date | null;
  /** Deliveries per second at most, across every worker; null: no limit. */
  rateLimit: number | null;
  /** Deliveries are sent one at a time, in event order. */
  ordered: boolean;
  /** Where deliveries go: http (the URL), rabbitmq or nats (see send/destination-registry.ts). */
  type: string;
  /** A broker's URL in clear (it holds credentials), sealed by SecretBox; `url` shows it masked. Null for http. */
  destinationEncrypted: string | null;
  /** The type's options (Exchange, RoutingKey, Subject...); none hold secrets. */
  destinationOptions: Record<string, string>;
  /** The filter on events as given; null: every event it subscribes to. */
  filter: object | null;
  /** The filter compiled to the jsonpath predicate fan-out evaluates. */
  filterPath: string | null;
}

/** A header the webhook's deliveries carry (the table `webhook_headers`). */
export interface WebhookHeader {
  id: string;
  webhookId: string;
  name: string;
  value: string;
  createdAt: Date;
  updatedAt: Date;
}

export type WebhookWithHeaders = Webhook & { headers: WebhookHeader[] };

/** Columns by property: the one mapping between the table and `Webhook`. */
const WEBHOOK_COLUMNS: Record<keyof Webhook, string> = {
  id: 'id',
  name: 'name',
  url: 'url',
  method: 'method',
  timeoutSeconds: 'timeout_seconds',
  events: 'events',
  active: 'active',
  secretEncrypted: 'secret_encrypted',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  signatureScheme: 'signature_scheme',
  previousSecretEncrypted: 'previous_secret_encrypted',
  previousSignatureScheme: 'previous_signature_scheme',
  previousSecretExpiresAt: 'previous_secret_expires_at',
  disabledReason: 'disabled_reason',
  disabledAt: 'disabled_at',
  failingSince: 'failing_since',
  rateLimit: 'rate_limit',
  ordered: 'ordered',
  type: 'type',
  destinationEncrypted: 'destination_encrypted',
  destinationOptions: 'destination_options',
  filter: 'filter',
  filterPath: 'filter_path',
};
/** jsonb columns go as JSON text: the driver would turn an array into a Postgres array. */
const JSON_PROPERTIES = new Set<keyof Webhook>(['destinationOptions', 'filter']);
const param = (w: Partial<Webhook>, p: keyof Webhook): unknown =>
  JSON_PROPERTIES.has(p) && w[p] !== null && w[p] !== undefined ? JSON.stringify(w[p]) : w[p];
const PROPERTIES = Object.keys(WEBHOOK_COLUMNS) as (keyof Webhook)[];
const SELECT_WEBHOOK = PROPERTIES.map((p) => `w.${WEBHOOK_COLUMNS[p]} AS "${p}"`).join(', ');
const SELECT_HEADERS = `(SELECT coalesce(json_agg(json_build_object('id', h.id, 'webhookId', h.webhook_id, 'name', h.name, 'value', h.value,
                                      'createdAt', h.created_at, 'updatedAt', h.updated_at) ORDER BY h.created_at, h.id), '[]'::json)
           FROM webhook_headers h WHERE h.webhook_id = w.id) AS headers`;
/**
 * A webhook not deleted. DELETE only marks it (`deleted_at`, and inactive): every read and change of webhooks asks
 * this, but the relay's statement, which asks `active` already (see `delete`), and the workers' purge
 * (WebhookPurge) deletes its deliveries and attempts in small batches, then the row.
 */
export const LIVE = (w = 'webhooks') => `${w}.deleted_at IS NULL`;
const SELECT_HEADER = `id, webhook_id AS "webhookId", name, value, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** Headers as json_agg returned them, with Dates. */
function withHeaders(row: Webhook & { headers: (Omit<WebhookHeader, 'createdAt' | 'updatedAt'> & Dates)[] }) {
  return {
    ...row,
    headers: row.headers.map((h) => ({ ...h, createdAt: new Date(h.createdAt), updatedAt: new Date(h.updatedAt) })),
  };
}
type Dates = { createdAt: string; updatedAt: string };

/**
 * The statements of webhooks and their headers, and the one writer of both: the portal routes' changes, and
 * what the dispatcher writes of a webhook (its failing clock, switching it off, erasing an expired signing key).
 */
@Injectable()
export class WebhookStore {
  constructor(private readonly sql: Sql) {}

  async insert(tx: SqlTransaction, w: Webhook): Promise<void> {
    await tx.query(
      `INSERT INTO webhooks (${PROPERTIES.map((p) => WEBHOOK_COLUMNS[p]).join(', ')})
       VALUES (${PROPERTIES.map((_, i) => `$${i + 1}`).join(', ')})`,
      PROPERTIES.map((p) => param(w, p)),
    );
  }

  /** A page of webhooks, oldest first, with their headers. */
  async list(skip: number, take: number): Promise<WebhookWithHeaders[]> {
    const rows = await this.sql.query(
      `SELECT ${SELECT_WEBHOOK}, ${SELECT_HEADERS} FROM webhooks w WHERE ${LIVE('w')} ORDER BY w.created_at, w.id LIMIT $1 OFFSET $2`,
      [take, skip],
    );
    return rows.map((r) => withHeaders(r as never));
  }

  /**
   * The webhook with its headers; with `tx`, locked for the rest of that transaction (FOR UPDATE), and read once
   * locked: a statement that waited for the lock would still read the headers of the snapshot it took before the
   * wait, missing what a racing change of them committed meanwhile.
   */
  async get(id: string, tx?: SqlTransaction): Promise<WebhookWithHeaders | null> {
    if (tx && (await tx.query(`SELECT 1 FROM webhooks WHERE id = $1 AND ${LIVE()} FOR UPDATE`, [id])).length === 0)
      return null;
    const [row] = await (tx ?? this.sql).query(
      `SELECT ${SELECT_WEBHOOK}, ${SELECT_HEADERS} FROM webhooks w WHERE w.id = $1 AND ${LIVE('w')}`,
      [id],
    );
    return row ? withHeaders(row as never) : null;
  }

  /** Whether the webhook is active; null if it does not exist. */
  async isActive(id: string): Promise<boolean | null> {
    const [w] = await this.sql.query<{ active: boolean }>(`SELECT active FROM webhooks WHERE id = $1 AND ${LIVE()}`, [
      id,
    ]);
    return w ? w.active : null;
  }

  /** Writes `changes` (and updated_at) to the webhook, unless it is deleted. */
  async update(tx: Queryable, id: string, changes: Partial<Webhook>): Promise<void> {
    const props = (Object.keys(changes) as (keyof Webhook)[]).filter((p) => p !== 'id' && changes[p] !== undefined);
    if (props.length === 0) return;
    await tx.query(
      `UPDATE webhooks SET ${props.map((p, i) => `${WEBHOOK_COLUMNS[p]} = $${i + 2}`).join(', ')} WHERE id = $1 AND ${LIVE()}`,
      [id, ...props.map((p) => param(changes, p))],
    );
  }

  /**
   * Deletes the webhook as far as anyone can see: it is marked, one row written, and from then on no read finds it
   * and no event or attempt goes to it. Its history goes later, in batches (`deleted`, `purge`). False if there was
   * none. Takes the row for update: a change of the webhook or of its headers, which locks it first, then finds it
   * deleted. It is made inactive too, so the relay's statement, which asks that already, need not ask more.
   */
  async delete(id: string): Promise<boolean> {
    return (
      (await this.sql.execute(`UPDATE webhooks SET deleted_at = now(), active = false WHERE id = $1 AND ${LIVE()}`, [
        id,
      ])) > 0
    );
  }

  /**
   * Whether the webhook is there (not deleted), holding its row in share mode for the rest of `tx`, so that it
   * cannot be deleted before `tx` commits what it says about it.
   */
  async holdLive(tx: SqlTransaction, id: string): Promise<boolean> {
    return (await tx.query(`SELECT 1 FROM webhooks WHERE id = $1 AND ${LIVE()} FOR SHARE`, [id])).length > 0;
  }

  /** Webhooks marked deleted, the longest ago first, that the purge has still to remove. */
  async deleted(limit: number): Promise<string[]> {
    const rows = await this.sql.query<{ id: string }>(
      `SELECT id FROM webhooks WHERE deleted_at IS NOT NULL ORDER BY deleted_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Removes a webhook marked deleted, once the purge has deleted its history: what is left (its headers, its kept
   * subscriptions, a delivery a relay statement begun before the mark made) goes with it, by cascade and trigger.
   */
  async purge(id: string): Promise<void> {
    await this.sql.execute(`DELETE FROM webhooks WHERE id = $1 AND deleted_at IS NOT NULL`, [id]);
  }

  async insertHeaders(tx: Queryable, headers: WebhookHeader[]): Promise<void> {
    if (headers.length === 0) return;
    await tx.query(
      `INSERT INTO webhook_headers (id, webhook_id, name, value, created_at, updated_at)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[])`,
      [
        headers.map((h) => h.id),
        headers.map((h) => h.webhookId),
        headers.map((h) => h.name),
        headers.map((h) => h.value),
        headers.map((h) => h.createdAt),
        headers.map((h) => h.updatedAt),
      ],
    );
  }

  async deleteHeaders(tx: Queryable, webhookId: string): Promise<void> {
    await tx.query(`DELETE FROM webhook_headers WHERE webhook_id = $1`, [webhookId]);
  }

  /**
   * Locks the webhook for the rest of `tx`, as every change of its headers does first; false if there is none.
   * FOR NO KEY UPDATE: enough to order changes of the webhook, and it lets deliveries (whose foreign key takes
   * FOR KEY SHARE) be inserted meanwhile.
   */
  async lock(tx: SqlTransaction, id: string): Promise<boolean> {
    return (await tx.query(`SELECT 1 FROM webhooks WHERE id = $1 AND ${LIVE()} FOR NO KEY UPDATE`, [id])).length > 0;
  }

  /** The name of the webhook's header named `name` case-insensitively, other than `exceptId`; null if none. */
  async headerNamed(tx: SqlTransaction, webhookId: string, name: string, exceptId?: string): Promise<string | null> {
    const [h] = await tx.query<{ name: string }>(
      `SELECT name FROM webhook_headers WHERE webhook_id = $1 AND lower(name) = lower($2) AND id IS DISTINCT FROM $3 LIMIT 1`,
      [webhookId, name, exceptId ?? null],
    );
    return h?.name ?? null;
  }

  /**
   * How many headers the webhook has and the characters of their names and values together. Called after `lock`, as
   * a statement of its own, it sees every header committed before the lock was granted: a statement that both
   * waits for the lock and reads the headers reads them as they were when it started.
   */
  async headerUsage(tx: SqlTransaction, webhookId: string): Promise<HeaderUsage> {
    const [u] = await tx.query<HeaderUsage>(
      `SELECT count(*)::int AS count, coalesce(sum(length(name) + length(value)), 0)::int AS chars
         FROM webhook_headers WHERE webhook_id = $1`,
      [webhookId],
    );
    return u;
  }

  async getHeader(webhookId: string, headerId: string, tx: Queryable = this.sql): Promise<WebhookHeader | null> {
    const [h] = await tx.query<WebhookHeader>(
      `SELECT ${SELECT_HEADER} FROM webhook_headers WHERE id = $1 AND webhook_id = $2`,
      [headerId, webhookId],
    );
    return h ?? null;
  }

  /** Changes a header and touches its webhook, in one statement; null if the header is gone. */
  async updateHeader(
    tx: SqlTransaction,
    webhookId: string,
    headerId: string,
    change: { name: string; value: string },
    now: Date,
  ): Promise<WebhookHeader | null> {
    const [h] = await tx.query<WebhookHeader>(
      `WITH h AS (UPDATE webhook_headers SET name = $3, value = $4, updated_at = $5 WHERE id = $1 AND webhook_id = $2
                  RETURNING ${SELECT_HEADER}),
            w AS (UPDATE webhooks SET updated_at = $5 WHERE id = $2 AND ${LIVE()} AND EXISTS (SELECT 1 FROM h))
       SELECT * FROM h`,
      [headerId, webhookId, change.name, change.value, now],
    );
    return h ?? null;
  }

  /** Deletes a header and touches its webhook, in one statement; false if the header is gone. */
  async deleteHeader(tx: SqlTransaction, webhookId: string, headerId: string, now: Date): Promise<boolean> {
    const rows = await tx.query(
      `WITH h AS (DELETE FROM webhook_headers WHERE id = $1 AND webhook_id = $2 RETURNING id),
            w AS (UPDATE webhooks SET updated_at = $3 WHERE id = $2 AND ${LIVE()} AND EXISTS (SELECT 1 FROM h))
       SELECT id FROM h`,
      [headerId, webhookId, now],
    );
    return rows.length > 0;
  }

  /** Adds a header to an existing webhook and touches it, in one statement; false if the webhook is gone. */
  async addHeader(tx: SqlTransaction, h: WebhookHeader): Promise<boolean> {
    const rows = await tx.query(
      `WITH w AS (UPDATE webhooks SET updated_at = $6 WHERE id = $2 AND ${LIVE()} RETURNING id)
       INSERT INTO webhook_headers (id, webhook_id, name, value, created_at, updated_at)
       SELECT $1, w.id, $3, $4, $5, $6 FROM w RETURNING id`,
      [h.id, h.webhookId, h.name, h.value, h.createdAt, h.updatedAt],
    );
    return rows.length > 0;
  }

  /**
   * Switches an active webhook off with its reason; `failing` only while its run of failures has lasted at
   * least `failingForMs` (a success meanwhile cancels it). The webhook when this call switched it off, else
   * null (already off, deleted, or no longer failing): so only one caller reports it.
   */
  async disable(
    tx: Queryable,
    webhookId: string,
    reason: DisabledReason,
    failingForMs = 0,
  ): Promise<(WebhookSummary & { disabledAt: Date }) | null> {
    const [w] = await tx.query<{ id: string; name: string; url: string; disabled_at: Date }>(
      `UPDATE webhooks SET active = false, disabled_reason = $2, disabled_at = now(), updated_at = now()
        WHERE id = $1 AND active AND ${LIVE()}
          AND ($2 <> 'failing' OR failing_since <= now() - make_interval(secs => $3::float8 / 1000))
        RETURNING id, name, url, disabled_at`,
      [webhookId, reason, failingForMs],
    );
    return w ? { id: w.id, name: w.name, url: w.url, disabledAt: w.disabled_at } : null;
  }

  /** Starts the webhook's failing clock at `since`, unless it is already running. */
  async markFailing(webhookId: string, since: Date): Promise<void> {
    await this.sql.query(`UPDATE webhooks SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL`, [
      webhookId,
      since,
    ]);
  }

  /** A success stops the webhook's failing clock. */
  async markHealthy(webhookId: string): Promise<void> {
    await this.sql.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL`, [
      webhookId,
    ]);
  }

  /**
   * Erases the previous signing keys whose grace period has ended; answers how many. Only webhooks in a grace
   * period have an expiry, so the partial index on it makes the frequent pass cost nothing when there is none.
   */
  async eraseExpiredSigningKeys(): Promise<number> {
    return this.sql.execute(
      `UPDATE webhooks SET previous_secret_encrypted = NULL, previous_signature_scheme = NULL, previous_secret_expires_at = NULL
        WHERE previous_secret_expires_at <= now()`,
    );
  }

  /** Webhooks marked deleted and not yet purged, and how long ago the first of them was deleted (0 when none). */
  async awaitingPurge(opts: ScanOptions): Promise<{ count: number; oldestAgeSeconds: number }> {
    const [row] = await this.sql.scan<{ count: number; oldestAgeSeconds: number }>(
      `SELECT count(*)::int AS count,
              coalesce(extract(epoch FROM now() - min(deleted_at)), 0)::float8 AS "oldestAgeSeconds"
         FROM webhooks WHERE deleted_at IS NOT NULL`,
      [],
      opts,
    );
    return row;
  }

  /** Inactive webhooks by reason. */
  async disabledCounts(opts: ScanOptions): Promise<{ reason: string; n: number }[]> {
    return this.sql.scan<{ reason: string; n: number }>(
      `SELECT coalesce(disabled_reason, 'manual') AS reason, count(*)::int AS n FROM webhooks WHERE NOT active AND ${LIVE()} GROUP BY 1`,
      [],
      opts,
    );
  }
}
