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
import { accessRequestMessage, accessRequestResponse, credentialMessage, nestedAccessRequestResponse } from './access-request.mapper';
import { APP_FOR_SHARE, CREDENTIALS_OF, GET_ONE, LOCK_ONE, SET_STATUS } from './access-request.sql';
import { AccessRequestError } from './access-requests.errors';
import { CredentialEntity } from './credential.entity';
import { CredentialDraft, CredentialIssuer } from './credential-issuer';
import { AccessRequestResponse, NestedAccessRequestResponse } from './dto/access-request-response.dto';
import { CreateAccessRequestDto } from './dto/create-access-request.dto';
import { ListAccessRequestsQuery } from './dto/list-access-requests.query';

/**
 * Access requests and their state machine. Every change and the events it emits share one transaction;
 * a status change locks the row (SELECT ... FOR UPDATE), so racing approvals make exactly one transition.
 * The single-request routes run raw SQL (one statement to read; an approval in six round trips) and build
 * their answer from what the statements returned, through the same mappers as everything else.
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

  /** Creates the request; with ProvisionImmediately it is approved in the same transaction. */
  async create(dto: CreateAccessRequestDto): Promise<AccessRequestResponse> {
    return this.sql.transaction(async (tx) => {
      const [found] = await tx.query(APP_FOR_SHARE, [dto.AppID]);
      if (!found) throw new ValidationFailed([`AppID: no application with ID ${dto.AppID}`]);
      if (dto.DCREnabled && dto.AuthType !== 'oauth2.0') throw new ValidationFailed(['DCREnabled: dynamic client registration needs AuthType oauth2.0']);
      const app = this.apps.fromJson(found.app);
      const now = new Date();
      const draft = {
        appId: app.id,
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
      // Provisioned at once: the credential is made before anything is written (with DCR, the identity
      // provider is called here; its failure leaves nothing behind).
      const credential = draft.provisionImmediately ? await this.issuer.prepare(draft, app) : null;
      const insert = this.requests.insert({ ...draft, status: credential ? 'approved' : 'pending' }, 'ar');
      const ar = this.requests.fromJson((await tx.query(insert.text, insert.params))[0].row);
      const issued = credential ? await this.insertCredential(tx, ar, credential) : null;
      const events: { name: EmittedEvent; message: Record<string, unknown> }[] = [
        { name: 'AccessRequestCreated', message: accessRequestMessage({ ...ar, status: 'pending' }, app) },
      ];
      if (issued) {
        events.push({ name: 'AccessRequestApproved', message: accessRequestMessage(ar, app) });
        events.push({ name: 'CredentialRegistered', message: credentialMessage(issued, ar, app) });
      }
      await this.events.recordAll(tx, events);
      return accessRequestResponse(ar, app, issued ? [issued] : [], this.box);
    });
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
    return rows.filter((ar) => apps.has(ar.appId)).map((ar) => accessRequestResponse(ar, apps.get(ar.appId)!, credentials.get(ar.id) ?? [], this.box));
  }

  /** One statement: the request, its app and its credentials in force. */
  async get(id: number): Promise<AccessRequestResponse> {
    const [row] = await this.sql.query(GET_ONE, [id]);
    if (!row) throw AccessRequestError.notFound();
    return accessRequestResponse(this.requests.fromJson(row.ar), this.apps.fromJson(row.app), this.credentials(row.credentials), this.box);
  }

  /**
   * PUT .../approve, PUT .../reject and PATCH {Status}: applies the state machine under a row lock, in at
   * most six round trips (BEGIN, lock and read, status, credential, events with their NOTIFY, COMMIT; a request that already has
   * the status: BEGIN, lock, its credentials, COMMIT).
   * The same status again changes nothing; a transition the state machine refuses is a 409.
   */
  async changeStatus(id: number, to: TargetStatus): Promise<AccessRequestResponse> {
    return this.sql.transaction(async (tx) => {
      // 1. lock the request, read its app
      const [row] = await tx.query(LOCK_ONE, [id]);
      if (!row) throw AccessRequestError.notFound();
      const current = { ar: this.requests.fromJson(row.ar), app: this.apps.fromJson(row.app) };
      const plan = planTransition(current.ar.status, to);
      if (plan.kind === 'noop') {
        const [{ credentials }] = await tx.query(CREDENTIALS_OF, [id]);
        return accessRequestResponse(current.ar, current.app, this.credentials(credentials), this.box);
      }
      if (plan.kind === 'conflict') throw AccessRequestError.invalidTransition(plan.message);

      // 2. an approval's credential, made before anything is written: with DCR, the identity provider is
      //    called here, and its failure throws and rolls the transaction back
      const credential = plan.issueCredentials ? await this.issuer.prepare(current.ar, current.app) : null;

      // 3. the writes: status (and revocations), the credential, the events
      const [updated] = await tx.query(SET_STATUS, [id, to, new Date(), plan.revokeCredentials]);
      const ar = this.requests.fromJson(updated.row);
      const issued = credential ? await this.insertCredential(tx, ar, credential) : null;
      const events: { name: EmittedEvent; message: Record<string, unknown> }[] = [{ name: plan.event, message: accessRequestMessage(ar, current.app) }];
      if (issued) events.push({ name: 'CredentialRegistered', message: credentialMessage(issued, ar, current.app) });
      await this.events.recordAll(tx, events);

      // A transition leaves in force only what it issued: a pending request has no credentials yet (they come
      // with approval, and a rejected request cannot be approved), and a rejection revokes them all.
      return accessRequestResponse(ar, current.app, issued ? [issued] : [], this.box);
    });
  }

  /** Deletes the request; its credentials go with it (ON DELETE CASCADE), so they no longer exist to be used. */
  async remove(id: number): Promise<PortalDeleteResponse> {
    const result = await this.db.getRepository(AccessRequestEntity).delete({ id });
    if (!result.affected) throw AccessRequestError.notFound();
    return { status: 'ok', message: 'Access request deleted' };
  }

  /** The access requests of each app in the shape nested in an application (for the apps feature). */
  async nestedByApp(apps: AppEntity[]): Promise<Map<number, NestedAccessRequestResponse[]>> {
    const out = new Map<number, NestedAccessRequestResponse[]>(apps.map((a) => [a.id, []]));
    if (apps.length === 0) return out;
    const byId = new Map(apps.map((a) => [a.id, a]));
    const rows = await this.db.getRepository(AccessRequestEntity).find({ where: { appId: In([...byId.keys()]) }, order: { id: 'ASC' } });
    const credentials = await this.credentialsOf(rows);
    for (const ar of rows) out.get(ar.appId)!.push(nestedAccessRequestResponse(ar, byId.get(ar.appId)!, credentials.get(ar.id) ?? [], this.box));
    return out;
  }

  private async insertCredential(tx: SqlTransaction, ar: AccessRequestEntity, credential: CredentialDraft): Promise<CredentialEntity> {
    const insert = this.credentialRows.insert({ ...credential, accessRequestId: ar.id }, 'c');
    return this.credentialRows.fromJson((await tx.query(insert.text, insert.params))[0].row);
  }

  private credentials(rows: Record<string, unknown>[]): CredentialEntity[] {
    return rows.map((c) => this.credentialRows.fromJson(c));
  }

  private async related(rows: AccessRequestEntity[]): Promise<{ apps: Map<number, AppEntity>; credentials: Map<number, CredentialEntity[]> }> {
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
