import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { isUuidId } from '../common/http/ids';
import { AppConfig } from '../config';
import { Sql, SqlTransaction } from '../database/sql';
import { AddressGuard } from './send/address-guard';
import { SecretBox } from '../common/crypto/secret-box';
import { PortalPageQuery, portalPaging } from '../common/http/pagination';
import { portalTime } from '../common/http/time';
import { WEBHOOK_TEST_EVENT } from '../events/event-names';
import { EventsService } from '../events/events.service';
import { DeliveryQueue } from './delivery.queue';
import { DeliveryStore } from './delivery.store';
import { DeliveryMetrics } from './webhook-metrics';
import { newSigningKey, SignatureScheme, verificationKey } from './send/signing';
import {
  CreatedWebhookResponse,
  CreateWebhookDto,
  SavedWebhookResponse,
  DEFAULT_GRACE_PERIOD_SECONDS,
  RotateSecretDto,
  UpdateWebhookDto,
  WebhookHeaderInput,
  WebhookHeaderResponse,
  WebhookHeaderShowResponse,
  WebhookResponse,
  WebhookSecretResponse,
  WebhookTestDto,
  WebhookTestResponse,
  FilterTestDto,
  FilterTestResponse,
} from './dto/webhook.dto';
import { Webhook, WebhookHeader, WebhookStore, WebhookWithHeaders } from './webhook.store';
import { targetWarnings } from './target-warnings';
import { webhookDisabledMessage, webhookEnabledMessage } from './operational-events';
import { WebhookError } from './webhooks.errors';
import { ValidationFailed } from '../common/errors/api-error';
import { DestinationRegistry } from './send/destination-registry';
import { headerChars, headerLimitRefusals, HeaderUsage } from './send/header-fields';
import { withStoredCredentials } from './send/destination';
import { parseEventFilter } from './filter/event-filter';
import { matchesFilter } from './filter/filter-evaluator';
import { toJsonPath } from './filter/filter-jsonpath';
import { jsonPathRefusal } from './filter/filter-sql';

/** Webhook subscriptions, their headers and signing keys, and test sends (portal family). */
@Injectable()
export class WebhooksService {
  private readonly guard: AddressGuard;
  private readonly logger = new Logger(WebhooksService.name);

  constructor(
    private readonly sql: Sql,
    private readonly webhooks: WebhookStore,
    private readonly secrets: SecretBox,
    private readonly events: EventsService,
    private readonly store: DeliveryStore,
    private readonly queue: DeliveryQueue,
    private readonly metrics: DeliveryMetrics,
    private readonly destinations: DestinationRegistry,
    config: AppConfig,
  ) {
    this.guard = new AddressGuard(config.webhooks.allowedCidrs);
  }

  async create(dto: CreateWebhookDto): Promise<CreatedWebhookResponse> {
    const destination = this.destination(dto.Type ?? 'http', dto.URL, dto.Options ?? {});
    const filter = await this.compileFilter(dto.Filter);
    const key = newSigningKey(dto.SignatureScheme ?? 'v1');
    const now = new Date();
    const webhook = await this.sql.transaction(async (tx) => {
      const w: Webhook = {
        id: randomUUID(),
        name: dto.Name,
        ...destination,
        ...filter,
        method: destination.type === 'http' ? (dto.Method ?? 'POST') : 'POST',
        timeoutSeconds: dto.Timeout ?? 30,
        events: uniq(dto.Events),
        active: dto.Active ?? true,
        secretEncrypted: this.secrets.encrypt(key.secret),
        createdAt: now,
        updatedAt: now,
        signatureScheme: key.scheme,
        previousSecretEncrypted: null,
        previousSignatureScheme: null,
        previousSecretExpiresAt: null,
        disabledReason: dto.Active === false ? 'manual' : null,
        disabledAt: dto.Active === false ? now : null,
        failingSince: null,
        rateLimit: dto.RateLimit ?? null,
        ordered: dto.Ordered ?? false,
      };
      await this.webhooks.insert(tx, w);
      return { ...w, headers: await this.insertHeaders(tx, w.id, dto.Headers ?? [], now) };
    });
    const shown = verificationKey(key);
    return {
      ...this.toResponse(webhook),
      Secret: shown,
      PublicKey: key.scheme === 'v1a' ? shown : null,
      ...this.warnings(dto.URL),
    };
  }

  /** Whether a filter accepts a sample event, read as fan-out reads it (the same rules compile to its jsonpath). */
  async testFilter(dto: FilterTestDto): Promise<FilterTestResponse> {
    const rule = parseEventFilter(dto.Filter);
    // a filter fan-out could not evaluate is refused here as on save
    await this.compileFilter(dto.Filter);
    return { Matches: matchesFilter(rule, dto.Event) };
  }

  async list(q: PortalPageQuery): Promise<WebhookResponse[]> {
    const { skip, take } = portalPaging(q);
    const rows = await this.webhooks.list(skip, take);
    return rows.map((w) => this.toResponse(w));
  }

  async get(id: string): Promise<WebhookResponse> {
    return this.toResponse(await this.find(id));
  }

  async update(id: string, dto: UpdateWebhookDto): Promise<SavedWebhookResponse> {
    const filter = dto.Filter !== undefined ? await this.compileFilter(dto.Filter) : undefined;
    const {
      w: webhook,
      switchedOff,
      unordered,
    } = await this.sql.transaction(async (tx) => {
      const w = await this.find(id, tx);
      const wasOrdered = w.ordered;
      const now = new Date();
      if (dto.Name !== undefined) w.name = dto.Name;
      if (dto.URL !== undefined || dto.Type !== undefined || dto.Options !== undefined) {
        Object.assign(w, this.destination(...this.destinationUpdate(w, dto)));
      }
      if (filter) Object.assign(w, filter);
      if (dto.Method !== undefined && w.type === 'http') w.method = dto.Method;
      if (w.type !== 'http') w.method = 'POST';
      if (dto.Timeout !== undefined) w.timeoutSeconds = dto.Timeout;
      if (dto.Events !== undefined) w.events = uniq(dto.Events);
      if (dto.RateLimit !== undefined) w.rateLimit = dto.RateLimit;
      if (dto.Ordered !== undefined) w.ordered = dto.Ordered;
      const switched = dto.Active !== undefined && dto.Active !== w.active;
      if (switched) {
        w.active = dto.Active!;
        // on again: a fresh start, the failures that switched it off no longer count
        w.disabledReason = w.active ? null : 'manual';
        w.disabledAt = w.active ? null : now;
        w.failingSince = null;
      }
      // a new scheme needs a new key: a rotation, with the default overlap so receivers can switch over
      if (dto.SignatureScheme !== undefined && dto.SignatureScheme !== w.signatureScheme) {
        this.rotateKeys(w, dto.SignatureScheme, DEFAULT_GRACE_PERIOD_SECONDS, now);
      }
      w.updatedAt = now;
      const { headers, ...columns } = w;
      await this.webhooks.update(tx, id, columns);
      if (switched) {
        await this.events.record(
          tx,
          w.active ? 'WebhookEnabled' : 'WebhookDisabled',
          w.active ? webhookEnabledMessage(w, now) : webhookDisabledMessage(w, 'manual', now),
        );
      }
      if (dto.Headers !== undefined) {
        await this.webhooks.deleteHeaders(tx, id);
        w.headers = await this.insertHeaders(tx, id, dto.Headers, now);
      } else {
        w.headers = headers;
      }
      // its deliveries that waited for their turn go as any other now (with the webhook's row held since find)
      const unordered = wasOrdered && !w.ordered ? await this.store.unmarkWaitingInOrder(tx, id) : [];
      return { w, switchedOff: switched && !w.active, unordered };
    });
    // counted like the WebhookDisabled event it recorded: once per switch-off, once it has committed
    if (switchedOff) await this.sql.afterCommit(() => this.metrics.disabled('manual'));
    if (unordered.length > 0)
      await this.sql.afterCommit(() => this.queue.requeueCommitted(unordered, 'deliveries no longer in order'));
    return { ...this.toResponse(webhook), ...this.warnings(this.clearUrl(webhook)) };
  }

  async remove(id: string): Promise<{ status: string; message: string }> {
    if (!isUuidId(id) || !(await this.webhooks.delete(id))) throw WebhookError.notFound();
    return { status: 'ok', message: 'webhook deleted' };
  }

  async secret(id: string): Promise<WebhookSecretResponse> {
    return this.toSecretResponse(await this.find(id), new Date());
  }

  /**
   * A new key for the webhook, of its scheme. For `GracePeriodSeconds` (default 24 h) deliveries carry
   * signatures by the new and the old key; then the old key is erased. A rotation during a grace period
   * retires the key before the current one at once: only one previous key is ever kept.
   */
  async rotateSecret(id: string, dto: RotateSecretDto): Promise<WebhookSecretResponse> {
    const now = new Date();
    const w = await this.sql.transaction(async (tx) => {
      const w = await this.find(id, tx);
      this.rotateKeys(w, w.signatureScheme, dto.GracePeriodSeconds ?? DEFAULT_GRACE_PERIOD_SECONDS, now);
      w.updatedAt = now;
      await this.webhooks.update(tx, id, {
        secretEncrypted: w.secretEncrypted,
        signatureScheme: w.signatureScheme,
        previousSecretEncrypted: w.previousSecretEncrypted,
        previousSignatureScheme: w.previousSignatureScheme,
        previousSecretExpiresAt: w.previousSecretExpiresAt,
        updatedAt: w.updatedAt,
      });
      return w;
    });
    await this.sql.afterCommit(() =>
      this.logger.log(
        { webhookId: id, scheme: w.signatureScheme, previousKeyUntil: w.previousSecretExpiresAt },
        'webhook signing key rotated',
      ),
    );
    return this.toSecretResponse(w, now);
  }

  /**
   * Queues one delivery of a WebhookTest event to this webhook alone, through the outbox like any event:
   * the event is written and relayed (to this webhook only) in one transaction, so the delivery exists,
   * and shows in the log, by the time the answer names it. It is then signed, sent, logged and retried
   * like any other delivery. An inactive webhook gets no deliveries, so it cannot be tested either.
   */
  async sendTest(id: string, dto: WebhookTestDto): Promise<WebhookTestResponse> {
    const { eventId, deliveries } = await this.sql.transaction(async (tx) => {
      // locked so that the webhook cannot be deleted or switched off between the check and the relay
      const w = await this.find(id, tx);
      if (!w.active) throw WebhookError.inactive();
      const event = await this.events.recordForWebhook(tx, id, WEBHOOK_TEST_EVENT, {
        WebhookID: id,
        Note: dto.Note ?? '',
      });
      const claim = { ids: [event.id], from: event.occurredAt, to: event.occurredAt };
      const { deliveries } = await this.store.relay(claim, 1, tx);
      if (deliveries.length !== 1)
        throw new Error(`test event ${event.id} was relayed to ${deliveries.length} webhooks, not 1`);
      return { eventId: event.id, deliveries };
    });
    await this.sql.afterCommit(() => this.queue.enqueueCommitted(deliveries, 'test delivery'));
    return { DeliveryID: deliveries[0].id, EventID: eventId };
  }

  async listHeaders(id: string): Promise<WebhookHeaderShowResponse[]> {
    return (await this.find(id)).headers.map(toHeaderShow);
  }

  /**
   * Adds a header within the limits on a webhook's headers. They depend on the headers stored, so these are counted
   * with the webhook locked, in the transaction that inserts: two concurrent additions cannot both take the last place.
   */
  async addHeader(id: string, dto: WebhookHeaderInput): Promise<WebhookHeaderShowResponse> {
    if (!isUuidId(id)) throw WebhookError.notFound();
    const now = new Date();
    const h: WebhookHeader = {
      id: randomUUID(),
      webhookId: id,
      name: dto.Name,
      value: dto.Value,
      createdAt: now,
      updatedAt: now,
    };
    await this.sql.transaction(async (tx) => {
      if (!(await this.webhooks.lock(tx, id))) throw WebhookError.notFound();
      const named = await this.webhooks.headerNamed(tx, id, dto.Name);
      if (named !== null) throw WebhookError.headerExists(named);
      const stored = await this.webhooks.headerUsage(tx, id);
      refuseOverLimits({ count: stored.count + 1, chars: stored.chars + headerChars(dto) });
      if (!(await this.webhooks.addHeader(tx, h))) throw WebhookError.notFound();
    });
    return toHeaderShow(h);
  }

  async getHeader(id: string, headerId: string): Promise<WebhookHeaderShowResponse> {
    return toHeaderShow(await this.findHeader(id, headerId));
  }

  /** Replaces a header, within the limits as addHeader checks them: the header it replaces no longer counts. */
  async updateHeader(id: string, headerId: string, dto: WebhookHeaderInput): Promise<WebhookHeaderShowResponse> {
    return this.sql.transaction(async (tx) => {
      const old = await this.findHeader(id, headerId, tx);
      const named = await this.webhooks.headerNamed(tx, id, dto.Name, headerId);
      if (named !== null) throw WebhookError.headerExists(named);
      const stored = await this.webhooks.headerUsage(tx, id);
      const replaced = headerChars({ Name: old.name, Value: old.value });
      refuseOverLimits({ count: stored.count, chars: stored.chars - replaced + headerChars(dto) });
      const h = await this.webhooks.updateHeader(tx, id, headerId, { name: dto.Name, value: dto.Value }, new Date());
      if (!h) throw WebhookError.headerNotFound();
      return toHeaderShow(h);
    });
  }

  async removeHeader(id: string, headerId: string): Promise<{ status: string; message: string }> {
    await this.sql.transaction(async (tx) => {
      // the webhook first, as every change of its headers locks it: two such changes never wait on each other
      await this.findHeader(id, headerId, tx);
      if (!(await this.webhooks.deleteHeader(tx, id, headerId, new Date()))) throw WebhookError.headerNotFound();
    });
    return { status: 'ok', message: 'header deleted' };
  }

  /** The webhook with its headers (404 if none); in `tx`, locked until it ends. */
  private async find(id: string, tx?: SqlTransaction): Promise<WebhookWithHeaders> {
    if (!isUuidId(id)) throw WebhookError.notFound();
    const w = await this.webhooks.get(id, tx);
    if (!w) throw WebhookError.notFound();
    return w;
  }

  /** The header of the webhook (404 naming the one missing); in `tx`, with the webhook locked until it ends. */
  private async findHeader(id: string, headerId: string, tx?: SqlTransaction): Promise<WebhookHeader> {
    if (!isUuidId(id)) throw WebhookError.notFound();
    const exists = tx ? await this.webhooks.lock(tx, id) : (await this.webhooks.isActive(id)) !== null;
    if (!exists) throw WebhookError.notFound();
    if (!isUuidId(headerId)) throw WebhookError.headerNotFound();
    const h = await this.webhooks.getHeader(id, headerId, tx);
    if (!h) throw WebhookError.headerNotFound();
    return h;
  }

  private async insertHeaders(
    tx: SqlTransaction,
    webhookId: string,
    headers: WebhookHeaderInput[],
    now: Date,
  ): Promise<WebhookHeader[]> {
    const rows: WebhookHeader[] = headers.map((h, i) => ({
      id: randomUUID(),
      webhookId,
      name: h.Name,
      value: h.Value,
      createdAt: new Date(now.getTime() + i),
      updatedAt: now,
    }));
    await this.webhooks.insertHeaders(tx, rows);
    return rows;
  }

  /** Gives `w` a new key of `scheme`; with a grace period the current key stays in use beside it until then. */
  private rotateKeys(w: Webhook, scheme: SignatureScheme, graceSeconds: number, now: Date): void {
    const key = newSigningKey(scheme);
    if (graceSeconds > 0) {
      w.previousSecretEncrypted = w.secretEncrypted;
      w.previousSignatureScheme = w.signatureScheme;
      w.previousSecretExpiresAt = new Date(now.getTime() + graceSeconds * 1000);
    } else {
      w.previousSecretEncrypted = null;
      w.previousSignatureScheme = null;
      w.previousSecretExpiresAt = null;
    }
    w.secretEncrypted = this.secrets.encrypt(key.secret);
    w.signatureScheme = scheme;
  }

  private toSecretResponse(w: Webhook, now: Date): WebhookSecretResponse {
    const shown = verificationKey({ scheme: w.signatureScheme, secret: this.secrets.decrypt(w.secretEncrypted) });
    const expiresAt = w.previousSecretExpiresAt && w.previousSecretExpiresAt > now ? w.previousSecretExpiresAt : null;
    return {
      Secret: shown,
      SignatureScheme: w.signatureScheme,
      PublicKey: w.signatureScheme === 'v1a' ? shown : null,
      PreviousSecretExpiresAt: expiresAt ? expiresAt.toISOString() : null,
    };
  }

  /**
   * The filter columns for a filter as given: kept as given, and compiled for fan-out (a 422 if PostgreSQL
   * would not read the compiled rule); null clears it.
   */
  private async compileFilter(filter: unknown): Promise<Pick<Webhook, 'filter' | 'filterPath'>> {
    if (filter === undefined || filter === null) return { filter: null, filterPath: null };
    const filterPath = toJsonPath(parseEventFilter(filter));
    const refusal = await jsonPathRefusal(this.sql, filterPath);
    if (refusal) throw new ValidationFailed([`Filter: cannot be evaluated by the database (${refusal})`]);
    return { filter, filterPath };
  }

  /**
   * The columns of a destination of `type` at `url` with `options`, once checked (a 422 naming every problem):
   * a broker's URL, and an http URL with credentials in it, is stored sealed, and shown masked.
   */
  private destination(
    type: string,
    url: string,
    options: Record<string, string>,
  ): Pick<Webhook, 'type' | 'url' | 'destinationEncrypted' | 'destinationOptions'> {
    const errors = this.destinations.validate(type, url, options);
    if (errors.length) throw new ValidationFailed(errors);
    const masked = this.destinations.mask(type, url);
    if (type === 'http' && masked === url) return { type, url, destinationEncrypted: null, destinationOptions: {} };
    return {
      type,
      url: masked,
      destinationEncrypted: this.secrets.encrypt(url),
      destinationOptions: type === 'http' ? {} : options,
    };
  }

  /** The type, URL and options a PUT leaves: those given, else the stored ones (the masked URL: the stored one). */
  private destinationUpdate(w: Webhook, dto: UpdateWebhookDto): [string, string, Record<string, string>] {
    const type = dto.Type ?? w.type;
    const sameType = type === w.type;
    if (!sameType && dto.URL === undefined) {
      throw new ValidationFailed([`URL is required when Type changes (to ${type})`]);
    }
    // the URL as answers show it (masked) means the stored one; a row saved before http URLs were sealed holds its
    // URL in clear and is shown masked all the same
    const shown = dto.URL === w.url || dto.URL === this.destinations.mask(type, w.url);
    const options = dto.Options ?? (sameType ? w.destinationOptions : {});
    if (dto.URL === undefined || (sameType && shown)) return [type, this.clearUrl(w), options];
    // a shown URL edited elsewhere (a new path): its masked credentials stand for the stored ones
    const url = withStoredCredentials(dto.URL, () => (sameType ? this.clearUrl(w) : ''));
    if (url === null)
      throw new ValidationFailed([
        'URL: *** stands for the stored password of the same user only: send the password itself',
      ]);
    return [type, url, options];
  }

  /** The webhook's URL in clear: a broker's is stored sealed. */
  private clearUrl(w: Webhook): string {
    return w.destinationEncrypted ? this.secrets.decrypt(w.destinationEncrypted) : w.url;
  }

  /** `Warnings` appears only when there is something to say, so the usual answer keeps its exact shape. */
  private warnings(url: string): { Warnings?: string[] } {
    const warnings = targetWarnings(url, this.guard);
    return warnings.length ? { Warnings: warnings } : {};
  }

  private toResponse(w: WebhookWithHeaders): WebhookResponse {
    const headers = [...(w.headers ?? [])].sort(
      (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id),
    );
    return {
      ID: w.id,
      Name: w.name,
      // masked again for rows saved before http URLs with credentials were sealed
      URL: this.destinations.mask(w.type, w.url),
      Method: w.method,
      Timeout: w.timeoutSeconds,
      Headers: headers.map(toHeaderResponse),
      Events: w.events,
      Active: w.active,
      CreatedAt: portalTime(w.createdAt),
      UpdatedAt: portalTime(w.updatedAt),
      SignatureScheme: w.signatureScheme,
      DisabledReason: w.active ? null : (w.disabledReason ?? 'manual'),
      DisabledAt: w.active ? null : (w.disabledAt ?? w.updatedAt).toISOString(),
      RateLimit: w.rateLimit,
      Ordered: w.ordered,
      // an http webhook without a filter answers exactly as before: the new fields appear only when used
      ...(w.type !== 'http' ? { Type: w.type, Options: w.destinationOptions } : {}),
      ...(w.filter !== null ? { Filter: w.filter } : {}),
    };
  }
}

/** A 422 naming each limit on a webhook's headers that headers measuring `after` would break. */
function refuseOverLimits(after: HeaderUsage): void {
  const refusals = headerLimitRefusals(after);
  if (refusals.length) throw new ValidationFailed(refusals);
}

function toHeaderResponse(h: WebhookHeader): WebhookHeaderResponse {
  return { ID: h.id, Name: h.name, Value: h.value };
}

function toHeaderShow(h: WebhookHeader): WebhookHeaderShowResponse {
  return { ...toHeaderResponse(h), WebhookID: h.webhookId };
}

function uniq(values: string[]): string[] {
  return [...new Set(values)];
}
