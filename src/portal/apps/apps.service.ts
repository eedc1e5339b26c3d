import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EntityRows, Sql } from '../../database/sql';
import { portalPaging, PortalPageQuery } from '../../common/http/pagination';
import { portalTime, rfc3339 } from '../../common/http/time';
import { ApplicationRegisteredMessage, MessageOf } from '../../events/event-messages';
import { EventsService } from '../../events/events.service';
import { nestAccessRequests } from '../access-requests/access-request.mapper';
import { AccessRequestsService } from '../access-requests/access-requests.service';
import { NestedAccessRequestResponse } from '../access-requests/dto/access-request-response.dto';
import { PortalDeleteResponse } from '../delete-response.dto';
import { AppEntity } from './app.entity';
import { AppError } from './apps.errors';
import { AppResponse } from './dto/app-response.dto';
import { CreateAppDto } from './dto/create-app.dto';
import { UpdateAppDto } from './dto/update-app.dto';

/** The `Message` of ApplicationRegistered: the app's own fields, its creation time in RFC 3339. */
export function applicationMessage(app: AppEntity): MessageOf<ApplicationRegisteredMessage> {
  return {
    ID: app.id,
    Name: app.name,
    UserID: app.userId,
    CreatedAt: rfc3339(app.createdAt),
    Description: app.description,
    RedirectURLs: app.redirectUrls,
    Visibility: app.visibility,
  };
}

/** An app's fields, each replaced only when given ($2-$6 NULL: kept); the app as it is afterwards. */
const UPDATE_APP = `
  UPDATE portal_apps app SET name = coalesce($2, name), description = coalesce($3, description),
         redirect_urls = coalesce($4, redirect_urls), user_id = coalesce($5, user_id),
         visibility = coalesce($6, visibility), updated_at = $7
   WHERE app.id = $1 RETURNING to_jsonb(app) AS row`;

/**
 * Developer-portal applications; an app's access requests are nested in it as the interface shows. Writes go
 * through Sql, so an idempotent request commits them with its stored answer.
 */
@Injectable()
export class AppsService {
  private readonly apps: EntityRows<AppEntity>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sql: Sql,
    private readonly events: EventsService,
    private readonly accessRequests: AccessRequestsService,
  ) {
    this.apps = sql.rows(AppEntity);
  }

  async create(dto: CreateAppDto): Promise<AppResponse> {
    const app = await this.sql.transaction(async (tx) => {
      const now = new Date();
      const insert = this.apps.insert(
        {
          name: dto.Name,
          description: dto.Description ?? '',
          redirectUrls: dto.RedirectURLs ?? '',
          userId: dto.UserID ?? 0,
          visibility: dto.Visibility ?? 'organisation',
          createdAt: now,
          updatedAt: now,
        },
        'app',
      );
      const saved = this.apps.fromJson((await tx.query(insert.text, insert.params))[0].row);
      await this.events.record(tx, 'ApplicationRegistered', applicationMessage(saved));
      return saved;
    });
    return this.toResponse(app, []);
  }

  async list(query: PortalPageQuery): Promise<AppResponse[]> {
    const { skip, take } = portalPaging(query);
    const apps = await this.db.getRepository(AppEntity).find({ order: { id: 'ASC' }, skip, take });
    const nested = await this.accessRequests.nestedByApp(apps);
    return apps.map((a) => this.toResponse(a, nested.get(a.id) ?? []));
  }

  async get(id: number): Promise<AppResponse> {
    const app = await this.find(id);
    const nested = await this.accessRequests.nestedByApp([app]);
    return this.toResponse(app, nested.get(app.id) ?? []);
  }

  /** The fields given replace the stored ones; fields left out keep their value. */
  async update(id: number, dto: UpdateAppDto): Promise<AppResponse> {
    const [updated] = await this.sql.write(UPDATE_APP, [
      id,
      dto.Name ?? null,
      dto.Description ?? null,
      dto.RedirectURLs ?? null,
      dto.UserID ?? null,
      dto.Visibility ?? null,
      new Date(),
    ]);
    if (!updated) throw AppError.notFound();
    const app = this.apps.fromJson(updated.row);
    const nested = await this.accessRequests.nestedByApp([app]);
    return this.toResponse(app, nested.get(app.id) ?? []);
  }

  /** Deletes the app; its access requests and their credentials go with it (ON DELETE CASCADE). */
  async remove(id: number): Promise<PortalDeleteResponse> {
    const deleted = await this.sql.write(`DELETE FROM portal_apps WHERE id = $1 RETURNING id`, [id]);
    if (deleted.length === 0) throw AppError.notFound();
    return { status: 'ok', message: 'Application deleted' };
  }

  private async find(id: number): Promise<AppEntity> {
    const app = await this.db.getRepository(AppEntity).findOneBy({ id });
    if (!app) throw AppError.notFound();
    return app;
  }

  private toResponse(app: AppEntity, accessRequests: NestedAccessRequestResponse[]): AppResponse {
    return {
      ID: app.id,
      Name: app.name,
      Description: app.description,
      RedirectURLs: app.redirectUrls,
      UserID: app.userId,
      Visibility: app.visibility,
      CreatedAt: portalTime(app.createdAt),
      AccessRequests: nestAccessRequests(accessRequests),
    };
  }
}
