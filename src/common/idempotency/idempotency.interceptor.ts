import { CallHandler, ExecutionContext, HttpException, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config';
import { RequestTransaction } from '../../database/request-transaction';
import { FamilyAuthenticator } from '../auth/auth.guard';
import { sha256Hex } from '../crypto/secret-box';
import { ValidationFailed } from '../errors/api-error';
import { Family, familyOf, renderErrorBody } from '../errors/families';
import { describeError } from '../errors/family-exception.filter';
import { fingerprintKey, idempotencyKeyOf, REPLAYED_HEADER, requestFingerprint } from './idempotency-key';
import { IdempotencyError } from './idempotency.errors';
import { Claim, IdempotencyStore, KeyId, StoredAnswer } from './idempotency.store';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const FAMILIES = new Set<Family>(['portal', 'dashboard', 'admin']);
const JSON_TYPE = 'application/json; charset=utf-8';

/** Whether an operation takes an Idempotency-Key: every write of the portal, dashboard and admin families. */
export function takesIdempotencyKey(method: string, path: string): boolean {
  return WRITE_METHODS.has(method.toUpperCase()) && FAMILIES.has(familyOf(path));
}

type Claimed = Extract<Claim, { kind: 'claimed' }>;

/**
 * Idempotent retries. A write of the portal, dashboard or admin family that carries an Idempotency-Key claims
 * the key (scoped to the caller's credential, the method and the route) before it runs. Its changes then go
 * into one request transaction, and its answer is stored in that same transaction just before COMMIT: the
 * change and the answer are kept together or not at all. A repeat of the request gets the stored answer again,
 * byte for byte, with `Idempotent-Replayed: true`; a repeat while the first still runs gets 409; the key with a
 * different request gets 422. What is not stored (the key stays free): a validation failure (nothing ran) and a
 * 5xx (nothing was committed). Without the header, nothing here happens at all.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger(IdempotencyInterceptor.name);
  private readonly portalScope: string;
  private readonly adminScope: string;
  private readonly fingerprintKey: Buffer;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly authenticator: FamilyAuthenticator,
    @InjectDataSource() private readonly db: DataSource,
    config: AppConfig,
  ) {
    // the portal and admin credentials are one secret each: a digest of it names the caller
    this.portalScope = `portal:${sha256Hex(config.secrets.portal)}`;
    this.adminScope = `admin:${sha256Hex(config.secrets.admin)}`;
    this.fingerprintKey = fingerprintKey(config.secrets.encryptionKey);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // the usual case costs a look at the method, the path and the header lines, nothing more
    if (!takesIdempotencyKey(request.method, request.url)) return next.handle();
    const key = idempotencyKeyOf(request.raw.rawHeaders);
    if (key === undefined) return next.handle();
    return from(this.keyed(request, context.switchToHttp().getResponse<FastifyReply>(), key, next));
  }

  /** A request with a key: claims it, then runs the request, or answers as a repeat. */
  private async keyed(request: FastifyRequest, reply: FastifyReply, key: string, next: CallHandler): Promise<string> {
    const family = familyOf(request.url);
    const id: KeyId = {
      scope: await this.scopeOf(family, request),
      method: request.method,
      route: request.routeOptions.url ?? request.url.split('?')[0],
      key,
    };
    const fingerprint = requestFingerprint(request, this.fingerprintKey);
    const claim = await this.store.claim(id, fingerprint);
    if (claim.kind === 'claimed') return this.run(claim, fingerprint, next, reply, family);
    return this.answerRepeat(claim, fingerprint, reply);
  }

  /** The answer to a request whose key another request holds or has answered. */
  private answerRepeat(claim: Exclude<Claim, Claimed>, fingerprint: string, reply: FastifyReply): string {
    if (claim.fingerprint !== null && claim.fingerprint !== fingerprint) throw IdempotencyError.reused();
    if (claim.kind === 'running') throw IdempotencyError.inProgress();
    void reply.header(REPLAYED_HEADER, 'true');
    return this.send(reply, claim.answer);
  }

  /** Runs the request in its own transaction and commits its answer with its change. */
  private async run(
    claim: Claimed,
    fingerprint: string,
    next: CallHandler,
    reply: FastifyReply,
    family: Family,
  ): Promise<string> {
    const tx = new RequestTransaction(this.db);
    let answer: StoredAnswer;
    let succeeded: boolean;
    try {
      const value = await tx.run(() => lastValueFrom(next.handle(), { defaultValue: undefined }));
      // a write that failed inside a request that still succeeded cannot be told apart from the rest
      if (tx.failed) throw new Error('a transaction of the request failed, yet the request answered success');
      answer = { status: reply.statusCode, body: JSON.stringify(value) ?? '' };
      succeeded = true;
    } catch (err) {
      await tx.rollback();
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
        ? await tx.commitWith((inTx) => this.store.complete(inTx, claim, answer))
        : await this.store.complete(null, claim, answer);
    } catch (err) {
      await tx.rollback();
      await this.release(claim);
      throw err;
    }
    if (!kept) {
      // the claim lapsed and a repeat took the key over: this request commits nothing and answers as a repeat
      await tx.rollback();
      const now = await this.store.find(claim.id);
      if (now) return this.answerRepeat(now, fingerprint, reply);
      throw IdempotencyError.inProgress();
    }
    await tx.runAfterCommit();
    return this.send(reply, answer);
  }

  private send(reply: FastifyReply, answer: StoredAnswer): string {
    void reply.status(answer.status).header('content-type', JSON_TYPE);
    return answer.body;
  }

  private async release(claim: Claimed): Promise<void> {
    // should this fail too, the claim lapses by itself
    await this.store.release(claim).catch((err) => this.logger.warn({ err }, 'could not free an idempotency key'));
  }

  /** Whose key it is: the credential the request was authenticated with (already checked by the route's guard). */
  private async scopeOf(family: Family, request: FastifyRequest): Promise<string> {
    if (family === 'portal') return this.portalScope;
    if (family === 'admin') return this.adminScope;
    const user = await this.authenticator.dashboardUser(request.headers, request.raw);
    return `dashboard:${user.id}`;
  }
}
