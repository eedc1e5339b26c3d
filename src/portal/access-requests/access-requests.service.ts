import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { ValidationFailed } from '../../common/errors';
import { portalPaging } from '../../common/http/pagination';
import { EventsService } from '../../events/events.service';
import { AppEntity } from '../apps/app.entity';
import { PortalDeleteResponse } from '../delete-response.dto';
import { planTransition, TargetStatus } from './access-request-state';
import { AccessRequestEntity } from './access-request.entity';
import { accessRequestMessage, accessRequestResponse, nestedAccessRequestResponse } from './access-request.mapper';
import { AccessRequestError } from './access-requests.errors';
import { CredentialEntity } from './credential.entity';
import { CredentialIssuer } from './credential-issuer';
import { AccessRequestResponse, NestedAccessRequestResponse } from './dto/access-request-response.dto';
import { CreateAccessRequestDto } from './dto/create-access-request.dto';
import { ListAccessRequestsQuery } from './dto/list-access-requests.query';

/**
 * Access requests and their state machine. Every change and the event it emits share one transaction;
 * a status change locks the row (SELECT ... FOR UPDATE), so racing approvals make exactly one transition.
 */
@Injectable()
export class AccessRequestsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly box: SecretBox,
    private readonly events: EventsService,
    private readonly issuer: CredentialIssuer,
  ) {}

  async create(dto: CreateAccessRequestDto): Promise<AccessRequestResponse> {
    const id = await this.db.transaction(async (m) => {
      // FOR SHARE: the app cannot be deleted until this request is committed.
      const app = await m.findOne(AppEntity, { where: { id: dto.AppID }, lock: { mode: 'pessimistic_read' } });
      if (!app) throw new ValidationFailed([`AppID: no application with ID ${dto.AppID}`]);
      if (dto.DCREnabled && dto.AuthType !== 'oauth2.0') throw new ValidationFailed(['DCREnabled: dynamic client registration needs AuthType oauth2.0']);
      const now = new Date();
      const ar = await m.save(
        m.create(AccessRequestEntity, {
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
          status: 'pending',
          createdAt: now,
          updatedAt: now,
        }),
      );
      await this.events.record(m, 'AccessRequestCreated', accessRequestMessage(ar, app));
      if (ar.provisionImmediately) await this.transition(m, ar, app, 'approved');
      return ar.id;
    });
    return this.get(id);
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

  async get(id: number): Promise<AccessRequestResponse> {
    const ar = await this.db.getRepository(AccessRequestEntity).findOneBy({ id });
    if (!ar) throw AccessRequestError.notFound();
    const { apps, credentials } = await this.related([ar]);
    const app = apps.get(ar.appId);
    if (!app) throw AccessRequestError.notFound();
    return accessRequestResponse(ar, app, credentials.get(ar.id) ?? [], this.box);
  }

  /** PUT .../approve, PUT .../reject and PATCH {Status}: applies the state machine under a row lock. */
  async changeStatus(id: number, to: TargetStatus): Promise<AccessRequestResponse> {
    await this.db.transaction(async (m) => {
      const ar = await m.findOne(AccessRequestEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
      if (!ar) throw AccessRequestError.notFound();
      const app = await m.findOneByOrFail(AppEntity, { id: ar.appId });
      await this.transition(m, ar, app, to);
    });
    return this.get(id);
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

  /**
   * Moves `ar` to `to` inside transaction `m`, which holds its row lock. The same status again does nothing;
   * a transition the state machine refuses is a 409. Approval issues credentials (possibly registering a
   * client at the identity provider: its failure throws and the whole transaction rolls back).
   */
  private async transition(m: EntityManager, ar: AccessRequestEntity, app: AppEntity, to: TargetStatus): Promise<void> {
    const plan = planTransition(ar.status, to);
    if (plan.kind === 'noop') return;
    if (plan.kind === 'conflict') throw AccessRequestError.invalidTransition(plan.message);
    const now = new Date();
    ar.status = to;
    ar.updatedAt = now;
    await m.update(AccessRequestEntity, { id: ar.id }, { status: to, updatedAt: now });
    if (plan.revokeCredentials) await m.update(CredentialEntity, { accessRequestId: ar.id, revokedAt: IsNull() }, { revokedAt: now });
    await this.events.record(m, plan.event, accessRequestMessage(ar, app));
    if (plan.issueCredentials) await this.issuer.issue(m, ar, app);
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
