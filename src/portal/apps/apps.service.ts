import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
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

/** Developer-portal applications; an app's access requests are nested in it as the interface shows. */
@Injectable()
export class AppsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly events: EventsService,
    private readonly accessRequests: AccessRequestsService,
  ) {}

  async create(dto: CreateAppDto): Promise<AppResponse> {
    const app = await this.db.transaction(async (m) => {
      const now = new Date();
      const saved = await m.save(
        m.create(AppEntity, {
          name: dto.Name,
          description: dto.Description ?? '',
          redirectUrls: dto.RedirectURLs ?? '',
          userId: dto.UserID ?? 0,
          visibility: dto.Visibility ?? 'organisation',
          createdAt: now,
          updatedAt: now,
        }),
      );
      await this.events.record(m, 'ApplicationRegistered', applicationMessage(saved));
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
    const changes: Partial<AppEntity> = {};
    if (dto.Name !== undefined) changes.name = dto.Name;
    if (dto.Description !== undefined) changes.description = dto.Description;
    if (dto.RedirectURLs !== undefined) changes.redirectUrls = dto.RedirectURLs;
    if (dto.UserID !== undefined) changes.userId = dto.UserID;
    if (dto.Visibility !== undefined) changes.visibility = dto.Visibility;
    const result = await this.db.getRepository(AppEntity).update({ id }, { ...changes, updatedAt: new Date() });
    if (!result.affected) throw AppError.notFound();
    return this.get(id);
  }

  /** Deletes the app; its access requests and their credentials go with it (ON DELETE CASCADE). */
  async remove(id: number): Promise<PortalDeleteResponse> {
    const result = await this.db.getRepository(AppEntity).delete({ id });
    if (!result.affected) throw AppError.notFound();
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
