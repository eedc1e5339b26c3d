import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isUuidId } from '../common/http/ids';
import { DataSource, EntityManager } from 'typeorm';
import { SecretBox } from '../common/crypto/secret-box';
import { PortalPageQuery, portalPaging } from '../common/http/pagination';
import { portalTime } from '../common/http/time';
import { newSigningSecret } from '../delivery/signing';
import { CreatedWebhookResponse, CreateWebhookDto, UpdateWebhookDto, WebhookHeaderInput, WebhookHeaderResponse, WebhookResponse, WebhookSecretResponse } from './dto/webhook.dto';
import { WebhookHeaderEntity } from './webhook-header.entity';
import { WebhookEntity } from './webhook.entity';
import { WebhookError } from './webhooks.errors';

/** Webhook subscriptions and their headers (portal family). */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly secrets: SecretBox,
  ) {}

  async create(dto: CreateWebhookDto): Promise<CreatedWebhookResponse> {
    const secret = newSigningSecret();
    const now = new Date();
    const webhook = await this.db.transaction(async (tx) => {
      const w = tx.create(WebhookEntity, {
        id: randomUUID(),
        name: dto.Name,
        url: dto.URL,
        method: dto.Method ?? 'POST',
        timeoutSeconds: dto.Timeout ?? 30,
        events: uniq(dto.Events),
        active: dto.Active ?? true,
        secretEncrypted: this.secrets.encrypt(secret),
        createdAt: now,
        updatedAt: now,
      });
      await tx.insert(WebhookEntity, w);
      w.headers = await this.insertHeaders(tx, w.id, dto.Headers ?? [], now);
      return w;
    });
    return { ...this.toResponse(webhook), Secret: secret };
  }

  async list(q: PortalPageQuery): Promise<WebhookResponse[]> {
    const { skip, take } = portalPaging(q);
    const rows = await this.db.getRepository(WebhookEntity).find({ order: { createdAt: 'ASC', id: 'ASC' }, skip, take, relations: { headers: true } });
    return rows.map((w) => this.toResponse(w));
  }

  async get(id: string): Promise<WebhookResponse> {
    return this.toResponse(await this.find(this.db.manager, id));
  }

  async update(id: string, dto: UpdateWebhookDto): Promise<WebhookResponse> {
    const webhook = await this.db.transaction(async (tx) => {
      const w = await this.find(tx, id, true);
      const now = new Date();
      if (dto.Name !== undefined) w.name = dto.Name;
      if (dto.URL !== undefined) w.url = dto.URL;
      if (dto.Method !== undefined) w.method = dto.Method;
      if (dto.Timeout !== undefined) w.timeoutSeconds = dto.Timeout;
      if (dto.Events !== undefined) w.events = uniq(dto.Events);
      if (dto.Active !== undefined) w.active = dto.Active;
      w.updatedAt = now;
      const { headers, ...columns } = w;
      await tx.update(WebhookEntity, { id }, columns);
      if (dto.Headers !== undefined) {
        await tx.delete(WebhookHeaderEntity, { webhookId: id });
        w.headers = await this.insertHeaders(tx, id, dto.Headers, now);
      } else {
        w.headers = headers;
      }
      return w;
    });
    return this.toResponse(webhook);
  }

  async remove(id: string): Promise<{ status: string; message: string }> {
    await this.find(this.db.manager, id);
    await this.db.getRepository(WebhookEntity).delete({ id });
    return { status: 'ok', message: 'webhook deleted' };
  }

  async secret(id: string): Promise<WebhookSecretResponse> {
    const w = await this.find(this.db.manager, id);
    return { Secret: this.secrets.decrypt(w.secretEncrypted) };
  }

  async listHeaders(id: string): Promise<WebhookHeaderResponse[]> {
    return (await this.find(this.db.manager, id)).headers!.map(toHeaderResponse);
  }

  async addHeader(id: string, dto: WebhookHeaderInput): Promise<WebhookHeaderResponse> {
    await this.find(this.db.manager, id);
    const [h] = await this.insertHeaders(this.db.manager, id, [dto], new Date());
    await this.touch(id);
    return toHeaderResponse(h);
  }

  async getHeader(id: string, headerId: string): Promise<WebhookHeaderResponse> {
    return toHeaderResponse(await this.findHeader(id, headerId));
  }

  async updateHeader(id: string, headerId: string, dto: WebhookHeaderInput): Promise<WebhookHeaderResponse> {
    const h = await this.findHeader(id, headerId);
    h.name = dto.Name;
    h.value = dto.Value;
    h.updatedAt = new Date();
    await this.db.getRepository(WebhookHeaderEntity).update({ id: h.id }, { name: h.name, value: h.value, updatedAt: h.updatedAt });
    await this.touch(id);
    return toHeaderResponse(h);
  }

  async removeHeader(id: string, headerId: string): Promise<{ status: string; message: string }> {
    const h = await this.findHeader(id, headerId);
    await this.db.getRepository(WebhookHeaderEntity).delete({ id: h.id });
    await this.touch(id);
    return { status: 'ok', message: 'header deleted' };
  }

  private async find(manager: EntityManager, id: string, lock = false): Promise<WebhookEntity> {
    if (!isUuidId(id)) throw WebhookError.notFound();
    const w = lock
      ? await manager.getRepository(WebhookEntity).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } })
      : await manager.getRepository(WebhookEntity).findOne({ where: { id }, relations: { headers: true } });
    if (!w) throw WebhookError.notFound();
    if (lock) w.headers = await manager.getRepository(WebhookHeaderEntity).find({ where: { webhookId: id } });
    return w;
  }

  private async findHeader(id: string, headerId: string): Promise<WebhookHeaderEntity> {
    await this.find(this.db.manager, id);
    if (!isUuidId(headerId)) throw WebhookError.headerNotFound();
    const h = await this.db.getRepository(WebhookHeaderEntity).findOne({ where: { id: headerId, webhookId: id } });
    if (!h) throw WebhookError.headerNotFound();
    return h;
  }

  private async insertHeaders(manager: EntityManager, webhookId: string, headers: WebhookHeaderInput[], now: Date): Promise<WebhookHeaderEntity[]> {
    const rows = headers.map((h, i) =>
      manager.create(WebhookHeaderEntity, { id: randomUUID(), webhookId, name: h.Name, value: h.Value, createdAt: new Date(now.getTime() + i), updatedAt: now }),
    );
    if (rows.length) await manager.insert(WebhookHeaderEntity, rows);
    return rows;
  }

  private async touch(id: string): Promise<void> {
    await this.db.getRepository(WebhookEntity).update({ id }, { updatedAt: new Date() });
  }

  private toResponse(w: WebhookEntity): WebhookResponse {
    const headers = [...(w.headers ?? [])].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
    return {
      ID: w.id,
      Name: w.name,
      URL: w.url,
      Method: w.method,
      Timeout: w.timeoutSeconds,
      Headers: headers.map(toHeaderResponse),
      Events: w.events,
      Active: w.active,
      CreatedAt: portalTime(w.createdAt),
      UpdatedAt: portalTime(w.updatedAt),
    };
  }
}

function toHeaderResponse(h: WebhookHeaderEntity): WebhookHeaderResponse {
  return { ID: h.id, Name: h.name, Value: h.value };
}

function uniq(values: string[]): string[] {
  return [...new Set(values)];
}
