import { HttpException, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config';
import { RequestTransaction } from '../../database/request-transaction';
import { FamilyAuthenticator } from '../auth/auth.guard';
import { sha256Hex } from '../crypto/secret-box';
import { ValidationFailed } from '../errors/api-error';
import { Family, familyOf, renderErrorBody } from '../errors/families';
import { describeError, sendFamilyError } from '../errors/family-exception.filter';
import { fingerprintKey, idempotencyKeyOf, REPLAYED_HEADER, requestFingerprint } from './idempotency-key';
import { IdempotencyError } from './idempotency.errors';
import { Claim, IdempotencyStore, KeyId, StoredAnswer } from './idempotency.store';
import { attachKeyedRequest, KeyedRequest } from './keyed-request';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const FAMILIES = new Set<Family>(['portal', 'dashboard', 'admin']);
const JSON_TYPE = 'application/json; charset=utf-8';

/** Whether an operation takes an Idempotency-Key: every write of the portal, dashboard and admin families. */
export function takesIdempotencyKey(method: string, path: string): boolean {
  return WRITE_METHODS.has(method.toUpperCase()) && FAMILIES.has(familyOf(path));
}

type Claimed = Extract<Claim, { kind: 'claimed' }>;

/** Thrown by the claim of a key already answered: the route does not run, its stored answer is sent instead. */
const REPLAYING = Symbol('replaying a stored answer');

/**
 * Idempotent retries. A write of the portal, dashboard or admin family that carries an Idempotency-Key claims
 * the key (scoped to the caller's credential, the method and the route) before it runs. Its changes then go
 * into one request transaction, and its answer is stored in that same transaction just before COMMIT: the
 * change and the answer are kept together or not at all. A repeat of the request gets the stored answer again,
 * byte for byte, with `Idempotent-Replayed: true`; a repeat while the first still runs gets 409; the key with a
 * different request gets 422. What is not stored (the key stays free): a validation failure (nothing ran) and a
 * 5xx (nothing was committed).
 *
 * Without the header, nothing here happens at all: the routes that take a key are wrapped as Fastify registers
 * them, and a request without the header goes straight to Nest's handler. One with it runs that handler inside
 * its request transaction (not yet open); the route's guard claims the key once the caller has passed it
 * (claimIdempotencyKey), which opens the transaction; the operation's answer or refusal is kept back (the reply's
 * send, the exception filter) until the answer is committed with the change, and then sent.
 */
@Injectable()
export class IdempotentRequests {
  private readonly portalScope: string;
  private readonly adminScope: string;
  readonly fingerprintKey: Buffer;

  constructor(
    readonly store: IdempotencyStore,
    private readonly authenticator: FamilyAuthenticator,
    @InjectDataSource() readonly db: DataSource,
    config: AppConfig,
  ) {
    // the portal and admin credentials are one secret each: a digest of it names the caller
    this.portalScope = `portal:${sha256Hex(config.secrets.portal)}`;
    this.adminScope = `admin:${sha256Hex(config.secrets.admin)}`;
    this.fingerprintKey = fingerprintKey(config.secrets.encryptionKey);
  }

  /** Wraps the handler of every route that takes a key, as it is registered (before the routes are). */
  register(fastify: FastifyInstance): void {
    fastify.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!methods.some((method) => takesIdempotencyKey(method, route.url))) return;
      const handler = route.handler;
      // eslint-disable-next-line @typescript-eslint/no-this-alias
      const requests = this;
      route.handler = function (request, reply) {
        // the usual case costs a look at one header, nothing more
        if (request.headers['idempotency-key'] === undefined || !takesIdempotencyKey(request.method, request.url))
          return handler.call(this, request, reply);
        return requests.keyed(request, reply, () => handler.call(this, request, reply));
      };
    });
  }

  /** A request with the header: runs the route in its request transaction, then answers. */
  private async keyed(request: FastifyRequest, reply: FastifyReply, handle: () => unknown): Promise<void> {
    const keyed = new Keyed(this, request, reply);
    attachKeyedRequest(request, keyed);
    // Nest's handler settles only once the answer is out (it awaits the reply, a thenable): so what is waited for
    // is the route's answer (or refusal) with the key claimed, or Nest's handler having answered without it
    const handled = keyed.tx.run(async () => {
      await handle();
    });
    await Promise.race([handled, keyed.answered]);
    await keyed.answer();
  }

  /** Whose key it is: the credential the request was authenticated with (already checked by the route's guard). */
  async scopeOf(family: Family, request: FastifyRequest): Promise<string> {
    if (family === 'portal') return this.portalScope;
    if (family === 'admin') return this.adminScope;
    const user = await this.authenticator.dashboardUser(request.headers, request.raw);
    return `dashboard:${user.id}`;
  }
}

/** One request with an Idempotency-Key, from its guard's claim to its answer. */
class Keyed implements KeyedRequest {
  /** The request transaction, opened once the key is claimed. */
  readonly tx: RequestTransaction;
  private claimed?: Claimed;
  private fingerprint = '';
  /** The stored answer to send instead of running the route. */
  private replay?: StoredAnswer;
  /** What the route answered (the value Nest sends) or threw, kept back until it is committed. */
  private outcome?: { value?: unknown; error?: { thrown: unknown } };
  private settled!: () => void;
  /** Settles once the route has answered or thrown with its key claimed, or its stored answer is to be replayed. */
  readonly answered = new Promise<void>((resolve) => (this.settled = resolve));

  constructor(
    private readonly requests: IdempotentRequests,
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {
    this.tx = new RequestTransaction(requests.db, { opened: false });
  }

  /** Claims the key (once the guards passed), or answers as a repeat; throws what the key itself is refused for. */
  async claim(): Promise<void> {
    const { request, requests } = this;
    const key = idempotencyKeyOf(request.raw.rawHeaders);
    if (key === undefined) return;
    const family = familyOf(request.url);
    const id: KeyId = {
      scope: await requests.scopeOf(family, request),
      method: request.method,
      route: request.routeOptions.url ?? request.url.split('?')[0],
      key,
    };
    this.fingerprint = requestFingerprint(request, requests.fingerprintKey);
    const claim = await requests.store.claim(id, this.fingerprint);
    if (claim.kind !== 'claimed') {
      this.replay = this.answerRepeat(claim);
      throw REPLAYING;
    }
    this.claimed = claim;
    this.tx.open();
    // what the route answers is sent once it is committed
    (this.reply as { send: (payload: unknown) => FastifyReply }).send = (payload: unknown) => {
      this.outcome ??= { value: payload };
      this.settled();
      return this.reply;
    };
  }

  /** Whether `error` (given to the exception filter) is this request's own to answer. */
  caught(error: unknown): boolean {
    if (error === REPLAYING) {
      this.settled();
      return true;
    }
    if (!this.claimed) return false;
    this.outcome ??= { error: { thrown: error } };
    this.settled();
    return true;
  }

  /** Once the route has run: sends the stored answer, or the route's own once committed with its change. */
  async answer(): Promise<void> {
    delete (this.reply as { send?: unknown }).send;
    try {
      let answer: StoredAnswer | undefined = this.replay;
      if (!answer && this.claimed) answer = await this.run(this.claimed);
      if (answer) this.send(answer);
    } catch (err) {
      sendFamilyError(this.request, this.reply, err);
    }
  }

  /** The answer to a request whose key another request holds or has answered. */
  private answerRepeat(claim: Exclude<Claim, Claimed>): StoredAnswer {
    if (claim.fingerprint !== null && claim.fingerprint !== this.fingerprint) throw IdempotencyError.reused();
    if (claim.kind === 'running') throw IdempotencyError.inProgress();
    void this.reply.header(REPLAYED_HEADER, 'true');
    return claim.answer;
  }

  /** Commits the answer of the route (run in the request transaction) with its change. */
  private async run(claim: Claimed): Promise<StoredAnswer> {
    const { tx, reply, requests } = this;
    const family = familyOf(this.request.url);
    let answer: StoredAnswer;
    let succeeded: boolean;
    let failed = this.outcome?.error;
    // a write that failed inside a request that still succeeded cannot be told apart from the rest
    if (!failed && tx.failed)
      failed = { thrown: new Error('a transaction of the request failed, yet the request answered success') };
    if (!failed) {
      answer = { status: reply.statusCode, body: JSON.stringify(this.outcome?.value) ?? '' };
      succeeded = true;
    } else {
      await tx.rollback();
      const err = failed.thrown;
      const refusal = err instanceof HttpException && !(err instanceof ValidationFailed);
      const described = refusal ? describeError(err, family) : undefined;
      if (!described || described.status >= 500) {
        await this.release(claim);
        throw err;
      }
      // the operation refused: nothing was written, and the refusal is the key's answer
      answer = {
        status: described.status,
        body: JSON.stringify(renderErrorBody(family, described.status, described.messages)),
      };
      succeeded = false;
    }

    let kept: boolean;
    try {
      kept = succeeded
        ? await tx.commitWith((inTx) => requests.store.complete(inTx, claim, answer))
        : await requests.store.complete(null, claim, answer);
    } catch (err) {
      await tx.rollback();
      await this.release(claim);
      throw err;
    }
    if (!kept) {
      // the claim lapsed and a repeat took the key over: this request commits nothing and answers as a repeat
      await tx.rollback();
      const now = await requests.store.find(claim.id);
      if (now) return this.answerRepeat(now);
      throw IdempotencyError.inProgress();
    }
    await tx.runAfterCommit();
    return answer;
  }

  private send(answer: StoredAnswer): void {
    void this.reply.status(answer.status).header('content-type', JSON_TYPE).send(answer.body);
  }

  private async release(claim: Claimed): Promise<void> {
    await this.requests.store.free(claim);
  }
}
