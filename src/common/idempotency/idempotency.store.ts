import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config';
import { SecretBox } from '../crypto/secret-box';
import { databaseAway } from '../../database/database-away';
import { RequestTransaction } from '../../database/request-transaction';
import { Sql } from '../../database/sql';

/**
 * How long a claim holds a key while its request runs. A request that dies mid-way (its process killed) frees
 * the key when this lapses; one still running past it loses the key to a repeat and commits nothing.
 */
export const CLAIM_LEASE_MS = 60_000;
/** How soon, and at most how far apart, freeing a key is tried again while the database is away (free). */
const FREE_RETRY_FIRST_MS = 250;
const FREE_RETRY_MAX_MS = 2000;

/** One key of one caller on one operation. */
export interface KeyId {
  scope: string;
  method: string;
  route: string;
  key: string;
}

/** The answer stored for a key: replayed byte for byte (sealed at rest: answers carry credentials and secrets). */
export interface StoredAnswer {
  status: number;
  body: string;
}

/** What claiming a key found. */
export type Claim =
  | { kind: 'claimed'; id: KeyId; owner: string }
  | { kind: 'answered'; fingerprint: string; answer: StoredAnswer }
  | { kind: 'running'; fingerprint: string | null };

const ID = `scope = $1 AND method = $2 AND route = $3 AND key = $4`;

/**
 * Claims the key for a request: a new key, an expired answer or a lapsed claim is taken (one statement); a live
 * one is returned as it stands. When a racing request's claim commits between the statement's snapshot and its
 * insert, neither the new row nor a result is seen: the claim then reads the key again (see claim()).
 */
const CLAIM = `
  WITH claimed AS (
    INSERT INTO idempotency_keys AS k (scope, method, route, key, fingerprint, owner, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, now() + $7 * interval '1 millisecond')
    ON CONFLICT (scope, method, route, key) DO UPDATE
       SET fingerprint = EXCLUDED.fingerprint, owner = EXCLUDED.owner, status = NULL, body_sealed = NULL,
           created_at = now(), expires_at = EXCLUDED.expires_at
     WHERE k.expires_at <= now()
    RETURNING true AS claimed, NULL::text AS fingerprint, NULL::smallint AS status, NULL::text AS body_sealed)
  SELECT * FROM claimed
  UNION ALL
  SELECT false, fingerprint, status, body_sealed FROM idempotency_keys
   WHERE ${ID} AND expires_at > now() AND NOT EXISTS (SELECT FROM claimed)`;

/** Stores the answer of the claim's request, if the claim is still its own; kept for the key's time to live. */
const COMPLETE = `
  UPDATE idempotency_keys SET status = $6, body_sealed = $7, owner = NULL, expires_at = now() + $8 * interval '1 millisecond'
   WHERE ${ID} AND owner = $5 AND status IS NULL
  RETURNING true AS kept`;

const FIND = `SELECT fingerprint, status, body_sealed FROM idempotency_keys WHERE ${ID} AND expires_at > now()`;

const RELEASE = `DELETE FROM idempotency_keys WHERE ${ID} AND owner = $5 AND status IS NULL`;

const EXPIRED_BATCH = `
  DELETE FROM idempotency_keys WHERE ctid IN (
    SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED)
  RETURNING 1`;

/** The one writer of idempotency_keys. */
@Injectable()
export class IdempotencyStore {
  private readonly logger = new Logger(IdempotencyStore.name);

  constructor(
    private readonly sql: Sql,
    private readonly config: AppConfig,
    private readonly box: SecretBox,
  ) {}

  /** Claims `id` for a request with `fingerprint` (its own statement, committed at once), or says who has it. */
  async claim(id: KeyId, fingerprint: string): Promise<Claim> {
    const owner = randomUUID();
    let rows: { claimed: boolean; fingerprint: string | null; status: number | null; body_sealed: string | null }[];
    try {
      rows = await this.sql.query(CLAIM, [id.scope, id.method, id.route, id.key, fingerprint, owner, CLAIM_LEASE_MS]);
    } catch (err) {
      // its connection failed under it: the claim may have committed, its answer lost. Freed (if it is there) beside
      // the 503, not before it, so that the client's retry does not find its own request in progress for the lease
      if (databaseAway(err)) void this.free({ kind: 'claimed', id, owner });
      throw err;
    }
    const [row] = rows;
    // a racing claim committed while the statement waited on it: read it now, so that another request with the key
    // is told 422 (and a repeat of an answered one gets the replay), as when the claim was there before
    if (!row) return (await this.find(id)) ?? { kind: 'running', fingerprint: null };
    if (row.claimed) return { kind: 'claimed', id, owner };
    if (row.status === null) return { kind: 'running', fingerprint: row.fingerprint };
    return { kind: 'answered', fingerprint: row.fingerprint!, answer: this.unseal(row.status, row.body_sealed!) };
  }

  /** The key as it stands (answered or running), or null when it is free. */
  async find(id: KeyId): Promise<Exclude<Claim, { kind: 'claimed' }> | null> {
    const [row] = await this.sql.query<{ fingerprint: string; status: number | null; body_sealed: string | null }>(
      FIND,
      [id.scope, id.method, id.route, id.key],
    );
    if (!row) return null;
    if (row.status === null) return { kind: 'running', fingerprint: row.fingerprint };
    return { kind: 'answered', fingerprint: row.fingerprint, answer: this.unseal(row.status, row.body_sealed!) };
  }

  /**
   * Stores the answer of a claimed key, inside `tx` (the transaction of the request's change) or on its own;
   * false when the claim lapsed and a repeat took the key over, so nothing of this request may commit.
   */
  async complete(
    tx: RequestTransaction | null,
    claim: Extract<Claim, { kind: 'claimed' }>,
    answer: StoredAnswer,
  ): Promise<boolean> {
    const { id, owner } = claim;
    const sealed = this.box.encrypt(answer.body);
    const params = [id.scope, id.method, id.route, id.key, owner, answer.status, sealed, this.ttlMs];
    const rows = tx ? await tx.query(COMPLETE, params) : await this.sql.query(COMPLETE, params);
    return rows.length === 1;
  }

  /** Frees a claimed key whose request failed (nothing was committed): the client may send it again. */
  async release(claim: Extract<Claim, { kind: 'claimed' }>): Promise<void> {
    const { id, owner } = claim;
    await this.sql.query(RELEASE, [id.scope, id.method, id.route, id.key, owner]);
  }

  /**
   * Frees a claimed key whose request failed (release); resolves after the first try, and never rejects. Should the
   * database be away for it too (the pool may hand out a connection cut or silenced with the one that failed the
   * request, before it knows), it is tried again in the background, FREE_RETRY_FIRST_MS to FREE_RETRY_MAX_MS apart,
   * while the claim's lease lasts, after which the claim lapses by itself. Kept, the key answered the client's retry
   * (the one Retry-After asks for) 409 "still in progress" for the whole lease.
   */
  async free(claim: Extract<Claim, { kind: 'claimed' }>): Promise<void> {
    const until = Date.now() + CLAIM_LEASE_MS;
    let waitMs = FREE_RETRY_FIRST_MS;
    const tryOnce = async (): Promise<boolean> => {
      try {
        await this.release(claim);
        return true;
      } catch (err) {
        if (databaseAway(err) && Date.now() + waitMs < until) return false;
        this.logger.warn({ err }, 'could not free an idempotency key: it is free once its claim lapses');
        return true;
      }
    };
    if (await tryOnce()) return;
    void (async () => {
      do {
        await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
        waitMs = Math.min(waitMs * 2, FREE_RETRY_MAX_MS);
      } while (!(await tryOnce()));
    })();
  }

  /** Deletes up to `limit` expired keys (answers past their time to live, lapsed claims); returns how many. */
  async deleteExpired(limit: number): Promise<number> {
    return (await this.sql.query(EXPIRED_BATCH, [limit])).length;
  }

  private unseal(status: number, sealed: string): StoredAnswer {
    return { status, body: this.box.decrypt(sealed) };
  }

  private get ttlMs(): number {
    return this.config.idempotency.keyTtlMs;
  }
}
