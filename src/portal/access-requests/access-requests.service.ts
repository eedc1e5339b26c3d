import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, IsNull } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { ValidationFailed } from '../../common/errors';
import { portalPaging } from '../../common/http/pagination';
import { EntityRows, Sql, SqlTransaction } from '../../database/sql';
import { EmittedEvent } from '../../events/event-names';
import { EventsService } from '../../events/events.service';
import { AppEntity } from '../apps/app.entity';
import { PortalDeleteResponse } from '../delete-response.dto';
import { planTransition, TargetStatus } from './access-request-state';
import { AccessRequestEntity } from './access-request.entity';
import {
  accessRequestMessage,
  accessRequestResponse,
  credentialMessage,
  nestedAccessRequestResponse,
} from './access-request.mapper';
import {
  APP_FOR_SHARE,
  APP_ONE,
  DELETE_RETURNING_REGISTERED,
  GET_ONE,
  LOCK_FOR_DELETE,
  LOCK_REQUESTS_OF_APP,
  ONE_WITH_APP,
  REGISTERED_OF_APP,
  OF_APPS,
  REVOKE_CREDENTIALS,
  STATUS_CHANGE,
  STATUS_CHANGED,
} from './access-request.sql';
import { AccessRequestError } from './access-requests.errors';
import { CredentialEntity } from './credential.entity';
import { CredentialDraft, CredentialIssuer } from './credential-issuer';
import { AccessRequestResponse, NestedAccessRequestResponse } from './dto/access-request-response.dto';
import { CreateAccessRequestDto } from './dto/create-access-request.dto';
import { ListAccessRequestsQuery } from './dto/list-access-requests-query.dto';

/**
 * Access requests and their state machine. Every change and the events it emits share one transaction;
 * a status change writes only if the request still has the status it was read with (the UPDATE takes the
 * row lock and re-checks), so racing approvals make exactly one transition. An identity provider is never
 * called inside a transaction: a slow one would hold a row lock and a pooled connection for its whole wait.
 * The single-request routes run raw SQL (one statement to read; an approval in two round trips: the read, then
 * one statement that makes the change) and build their answer from what the statements returned, through the
 * same mappers as everything else.
 */
@Injectable()
export class AccessRequestsService {
  private readonly requests: EntityRows<AccessRequestEntity>;
  private readonly apps: EntityRows<AppEntity>;
  private readonly credentialRows: EntityRows<CredentialEntity>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sql: Sql,
    private readonly box: SecretBox,
    private readonly events: EventsService,
    private readonly issuer: CredentialIssuer,
  ) {
    this.requests = sql.rows(AccessRequestEntity);
    this.apps = sql.rows(AppEntity);
    this.credentialRows = sql.rows(CredentialEntity);
  }

  /**
   * Creates the request; with ProvisionImmediately it is approved in the same transaction. With DCR as well,
   * the client is registered at the identity provider first (after an unlocked read of the app), outside
   * the transaction, and withdrawn again if the transaction does not commit.
   */
  async create(dto: CreateAccessRequestDto): Promise<AccessRequestResponse> {
    const now = new Date();
    const draft = {
      appId: dto.AppID,
      catalogue: dto.Catalogue,
      plan: dto.Plan,
      products: dto.Products,
      productIds: dto.ProductIDs ?? [],
      planId: dto.PlanID ?? 0,
      authType: dto.AuthType,
      dcrEnabled: dto.DCREnabled ?? false,
      provisionImmediately: dto.ProvisionImmediately ?? false,
      user: dto.User,
      createdAt: now,
      updatedAt: now,
    };
    let registered: CredentialDraft | null = null;
    if (draft.provisionImmediately && draft.dcrEnabled) {
      const [found] = await this.sql.query<{ app: Record<string, unknown> }>(APP_ONE, [dto.AppID]);
      registered = await this.issuer.prepare(draft, this.checkedApp(found, dto));
    }
    const withdraw = this.withdrawal(registered, 'the access request could not be created');
    return this.commitOrWithdraw(withdraw, async (tx) => {
      const [found] = await tx.query<{ app: Record<string, unknown> }>(APP_FOR_SHARE, [dto.AppID]);
      const app = this.checkedApp(found, dto);
      // Provisioned at once: the credential is made before anything is written
      const credential = registered ?? (draft.provisionImmediately ? await this.issuer.prepare(draft, app) : null);
      const insert = this.requests.insert({ ...draft, status: credential ? 'approved' : 'pending' }, 'ar');
      const ar = this.requests.fromJson((await tx.query(insert.text, insert.params))[0].row);
      const issued = credential ? await this.insertCredential(tx, ar, credential) : null;
      // Created carries the status the request was created with: one provisioned at once is never pending
      const events: { name: EmittedEvent; message: Record<string, unknown> }[] = [
        { name: 'AccessRequestCreated', message: accessRequestMessage(ar, app) },
      ];
      if (issued) {
        events.push({ name: 'AccessRequestApproved', message: accessRequestMessage(ar, app) });
        events.push({ name: 'CredentialRegistered', message: credentialMessage(issued, ar, app) });
      }
      await this.events.recordAll(tx, events);
      return accessRequestResponse(
        ar,
        app,
        issued ? [issued] : [],
        credential ? this.issuer.unsealer(credential) : this.box,
      );
    });
  }

  /** The app a new request names, or the 422 saying why it cannot have one. */
  private checkedApp(found: { app: Record<string, unknown> } | undefined, dto: CreateAccessRequestDto): AppEntity {
    if (!found) throw new ValidationFailed([`AppID: no application with ID ${dto.AppID}`]);
    if (dto.DCREnabled && dto.AuthType !== 'oauth2.0')
      throw new ValidationFailed(['DCREnabled: dynamic client registration needs AuthType oauth2.0']);
    return this.apps.fromJson(found.app);
  }

  async list(query: ListAccessRequestsQuery): Promise<AccessRequestResponse[]> {
    const { skip, take } = portalPaging(query);
    const rows = await this.db.getRepository(AccessRequestEntity).find({
      where: query.status ? { status: query.status } : {},
      order: { id: 'ASC' },
      skip,
      take,
    });
    const { apps, credentials } = await this.related(rows);
    // a request whose app was deleted since the first query is gone too
    return rows
      .filter((ar) => apps.has(ar.appId))
      .map((ar) => accessRequestResponse(ar, apps.get(ar.appId)!, credentials.get(ar.id) ?? [], this.box));
  }

  /** One statement: the request, its app and its credentials in force. */
  async get(id: number): Promise<AccessRequestResponse> {
    const [row] = await this.sql.query(GET_ONE, [id]);
    if (!row) throw AccessRequestError.notFound();
    return accessRequestResponse(
      this.requests.fromJson(row.ar),
      this.apps.fromJson(row.app),
      this.credentials(row.credentials),
      this.box,
    );
  }

  /**
   * PUT .../approve, PUT .../reject and PATCH {Status}: applies the state machine. The request is read
   * without a lock; an approval's credential is made next (with DCR, the identity provider is called here,
   * while no row lock and no pooled connection is held); then one statement (a transaction by itself, or a part
   * of the request transaction) sets the status only if it is still the one that was read, and writes the
   * credential and the events with their NOTIFY. If a racing change committed in between (an approval, a
   * rejection, a deletion), nothing is written, a fresh registration is withdrawn, and the request is read and
   * planned again. Round trips: the read and the change; a request that already has the status: the read, and a
   * read with its credentials in force to answer with. The same status again changes nothing; a transition the
   * state machine refuses is a 409.
   */
  async changeStatus(id: number, to: TargetStatus): Promise<AccessRequestResponse> {
    // Ends: each pass that does not answer follows a committed transition (at most two in a request's life:
    // pending, approved, rejected; rejected is final), or is the one pass that reads the credentials as well.
    let withCredentials = false;
    for (;;) {
      const [row] = await this.sql.query(withCredentials ? GET_ONE : ONE_WITH_APP, [id]);
      if (!row) throw AccessRequestError.notFound();
      const current = { ar: this.requests.fromJson(row.ar), app: this.apps.fromJson(row.app) };
      const plan = planTransition(current.ar.status, to);
      if (plan.kind === 'noop') {
        if (withCredentials)
          return accessRequestResponse(current.ar, current.app, this.credentials(row.credentials), this.box);
        withCredentials = true;
        continue;
      }
      if (plan.kind === 'conflict') throw AccessRequestError.invalidTransition(plan.message);

      const credential = plan.issueCredentials ? await this.issuer.prepare(current.ar, current.app) : null;
      const withdraw = this.withdrawal(credential, `the access request could not become ${to}`);
      const now = new Date();
      // what the statement writes, known before it runs: the request with its new status, the credential (whose
      // generated id the statement returns, and puts into the CredentialRegistered message itself)
      const ar: AccessRequestEntity = { ...current.ar, status: to, updatedAt: now };
      const draft: CredentialEntity | null = credential ? { ...credential, id: 0, accessRequestId: id } : null;
      const params: unknown[] = [id, to, now, current.ar.status];
      const parts = plan.revokeCredentials ? [STATUS_CHANGE, REVOKE_CREDENTIALS] : [STATUS_CHANGE];
      if (draft) {
        const insert = this.credentialRows.insertSelect(draft, {
          alias: 'c',
          from: 'changed',
          computed: { access_request_id: 'changed.id' },
          first: params.length + 1,
          returning: 'c.id',
        });
        parts.push(`issued AS (${insert.text})`);
        params.push(...insert.params);
      }
      const events: { name: EmittedEvent; message: Record<string, unknown> }[] = [
        { name: plan.event, message: accessRequestMessage(ar, current.app) },
      ];
      if (draft) events.push({ name: 'CredentialRegistered', message: credentialMessage(draft, ar, current.app) });
      const outbox = await this.events.recordInStatement(events, {
        first: params.length + 1,
        when: STATUS_CHANGED,
        merge: [undefined, draft ? `jsonb_build_object('ID', (SELECT id FROM issued))` : undefined],
      });
      parts.push(outbox.cte);
      params.push(...outbox.params);
      const text = `WITH ${parts.join(',\n')}
        SELECT ${draft ? '(SELECT id FROM issued)' : 'NULL::integer'} AS credential_id, ${outbox.notify} FROM changed`;

      let changed: { credential_id: number | null }[];
      try {
        changed = await this.sql.write(text, params, withdraw ? { afterRollback: () => withdraw() } : {});
      } catch (err) {
        if (withdraw) await withdraw();
        throw err;
      }
      if (changed.length > 0) {
        // A transition leaves in force only what it issued: a pending request has no credentials yet (they
        // come with approval, and a rejected request cannot be approved), and a rejection revokes them all.
        const issued = draft ? [{ ...draft, id: changed[0].credential_id! }] : [];
        return accessRequestResponse(ar, current.app, issued, credential ? this.issuer.unsealer(credential) : this.box);
      }
      // changed since it was read: nothing was written
      if (withdraw) await withdraw('the access request changed while its client was being registered');
      withCredentials = false;
    }
  }

  /** Withdraws `credential`'s registration at the identity provider, once at most; null without a credential. */
  private withdrawal(credential: CredentialDraft | null, why: string): ((reason?: string) => Promise<void>) | null {
    if (!credential) return null;
    let done: Promise<void> | undefined;
    return (reason = why) => (done ??= this.issuer.withdraw(credential, reason));
  }

  /**
   * Runs `work` in a transaction that writes a credential made before it; when the transaction fails or does not
   * commit, the credential's registration at the identity provider is withdrawn before the error goes back to the
   * caller. (Joined to an idempotent request's transaction, it commits only when the request does: the
   * withdrawal then waits for that.)
   */
  private async commitOrWithdraw<T>(
    withdraw: ((reason?: string) => Promise<void>) | null,
    work: (tx: SqlTransaction) => Promise<T>,
  ): Promise<T> {
    try {
      return await this.sql.transaction(async (tx) => {
        if (withdraw) tx.afterRollback(() => withdraw());
        return work(tx);
      });
    } catch (err) {
      if (withdraw) await withdraw();
      throw err;
    }
  }

  /**
   * Deletes the request; its credentials go with it (ON DELETE CASCADE), so they no longer exist to be used. Clients
   * registered for it at the identity provider (DCR) are withdrawn there once the delete has committed, as an
   * approval that does not commit withdraws its own: deleted with their registration access token (RFC 7592),
   * best effort. The delete stands whatever the provider answers; a client it keeps is logged by client id.
   */
  async remove(id: number): Promise<PortalDeleteResponse> {
    const found = await this.sql.transaction(async (tx) => {
      if ((await tx.query(LOCK_FOR_DELETE, [id])).length === 0) return false;
      const rows = await tx.query<{ row: Record<string, unknown> }>(DELETE_RETURNING_REGISTERED, [id]);
      const registered = rows.map((r) => this.credentialRows.fromJson(r.row));
      // never before the delete is committed: a keyed request commits when its answer is stored
      tx.afterCommit(async () => {
        await Promise.all(registered.map((c) => this.issuer.withdraw(c, 'its access request was deleted')));
      });
      return true;
    });
    if (!found) throw AccessRequestError.notFound();
    return { status: 'ok', message: 'Access request deleted' };
  }

  /**
   * For the apps feature, inside the transaction that deletes app `appId` (which must hold the app's row lock):
   * once that delete has committed, the clients registered by DCR for its requests are withdrawn at the identity
   * provider, as when a request is deleted on its own.
   */
  async withdrawRegisteredOfApp(tx: SqlTransaction, appId: number): Promise<void> {
    await tx.query(LOCK_REQUESTS_OF_APP, [appId]);
    const rows = await tx.query<{ row: Record<string, unknown> }>(REGISTERED_OF_APP, [appId]);
    const registered = rows.map((r) => this.credentialRows.fromJson(r.row));
    if (registered.length === 0) return;
    tx.afterCommit(async () => {
      await Promise.all(registered.map((c) => this.issuer.withdraw(c, 'its application was deleted')));
    });
  }

  /** The access requests of each app in the shape nested in an application (for the apps feature). */
  async nestedByApp(apps: AppEntity[]): Promise<Map<number, NestedAccessRequestResponse[]>> {
    const out = new Map<number, NestedAccessRequestResponse[]>(apps.map((a) => [a.id, []]));
    if (apps.length === 0) return out;
    const byId = new Map(apps.map((a) => [a.id, a]));
    const rows = await this.sql.query(OF_APPS, [[...byId.keys()]]);
    for (const row of rows) {
      const ar = this.requests.fromJson(row.ar);
      out
        .get(ar.appId)!
        .push(nestedAccessRequestResponse(ar, byId.get(ar.appId)!, this.credentials(row.credentials), this.box));
    }
    return out;
  }

  private async insertCredential(
    tx: SqlTransaction,
    ar: AccessRequestEntity,
    credential: CredentialDraft,
  ): Promise<CredentialEntity> {
    const insert = this.credentialRows.insert({ ...credential, accessRequestId: ar.id }, 'c');
    return this.credentialRows.fromJson((await tx.query(insert.text, insert.params))[0].row);
  }

  private credentials(rows: Record<string, unknown>[]): CredentialEntity[] {
    return rows.map((c) => this.credentialRows.fromJson(c));
  }

  private async related(
    rows: AccessRequestEntity[],
  ): Promise<{ apps: Map<number, AppEntity>; credentials: Map<number, CredentialEntity[]> }> {
    const appIds = [...new Set(rows.map((r) => r.appId))];
    const apps = appIds.length ? await this.db.getRepository(AppEntity).findBy({ id: In(appIds) }) : [];
    return { apps: new Map(apps.map((a) => [a.id, a])), credentials: await this.credentialsOf(rows) };
  }

  /** Credentials in force (not revoked) of each request. */
  private async credentialsOf(rows: AccessRequestEntity[]): Promise<Map<number, CredentialEntity[]>> {
    const out = new Map<number, CredentialEntity[]>();
    if (rows.length === 0) return out;
    const creds = await this.db.getRepository(CredentialEntity).find({
      where: { accessRequestId: In(rows.map((r) => r.id)), revokedAt: IsNull() },
      order: { id: 'ASC' },
    });
    for (const c of creds) out.set(c.accessRequestId, [...(out.get(c.accessRequestId) ?? []), c]);
    return out;
  }
}
