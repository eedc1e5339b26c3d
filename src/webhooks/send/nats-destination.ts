import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { jetstream, JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders, NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { AppConfig } from '../../config';
import { AddressGuard, BlockedAddressError } from './address-guard';
import {
  describeError,
  Destination,
  DestinationTarget,
  maskCredentials,
  OutgoingMessage,
  SendResult,
} from './destination';

interface Link {
  connection: Promise<{ nc: NatsConnection; js: JetStreamClient }>;
}

/** At most this long to open a connection, whatever the webhook's timeout. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * NATS JetStream: publishes the delivery to a subject, with the webhook headers as NATS headers and the
 * delivery id as the message id (`Nats-Msg-Id`), so a stream drops a retry of a message it already holds
 * (within its duplicate window). Delivered only on the stream's acknowledgement; a subject no stream captures
 * (no responders) is `unroutable`, an error answer from the stream `rejected`.
 * Credentials come from the URL: nats://user:password@host:4222 or nats://token@host:4222; tls:// for TLS.
 */
@Injectable()
export class NatsDestination implements Destination {
  readonly type = 'nats';
  readonly schemes = ['nats', 'tls'];
  readonly urlMessage = 'URL must be an absolute nats:// or tls:// URL for Type nats (nats://user:password@host:4222)';
  readonly options = {
    Subject: {
      required: true,
      description: 'the subject to publish to; a JetStream stream must capture it',
      pattern: /^[^\s*>.]+(\.[^\s*>.]+)*$/,
      patternMessage: 'dot-separated tokens without spaces or wildcards (* >), e.g. portal.access.approved',
    },
  };
  readonly description =
    'NATS JetStream: URL nats://user:password@host:4222 (or tls://); a message published to Options.Subject, delivered once the stream acknowledges it; the delivery id is the message id, so the stream drops duplicates';

  private readonly logger = new Logger(NatsDestination.name);
  private readonly guard: AddressGuard;
  private readonly links = new Map<string, Link>();
  private closed = false;

  constructor(config: AppConfig) {
    this.guard = new AddressGuard(config.webhooks.allowedCidrs);
  }

  validate(url: URL): string[] {
    const errors: string[] = [];
    if (!url.hostname) errors.push('URL must name the NATS server (nats://user:password@host:4222)');
    if (url.pathname && url.pathname !== '/')
      errors.push('URL must not have a path: the subject goes in Options.Subject');
    return errors;
  }

  mask(url: string): string {
    return maskCredentials(url);
  }

  async send(target: DestinationTarget, message: OutgoingMessage): Promise<SendResult> {
    const started = performance.now();
    const result = (error: SendResult['error'], detail: string): SendResult => ({
      statusCode: null,
      error,
      durationMs: Math.round(performance.now() - started),
      responseBody: detail,
    });
    const subject = target.options.Subject;
    let js: JetStreamClient;
    try {
      ({ js } = await this.client(target.url, Math.min(CONNECT_TIMEOUT_MS, message.timeoutMs)));
    } catch (err) {
      if (err instanceof BlockedAddressError) return result('blocked_address', describeError(err));
      const text = describeError(err);
      if (/timeout/i.test(text)) return result('timeout', `no connection to the NATS server in time: ${text}`);
      return result('connection', `cannot reach the NATS server: ${text}`);
    }
    const h = natsHeaders();
    for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
    try {
      const ack = await js.publish(subject, message.body ?? '', {
        msgID: message.id,
        headers: h,
        timeout: message.timeoutMs,
      });
      const duplicate = ack.duplicate ? ' (a duplicate: the stream already held this message)' : '';
      return result(null, `acknowledged by stream ${ack.stream}, sequence ${ack.seq}${duplicate}`);
    } catch (err) {
      const text = describeError(err);
      const name = (err as Error)?.name ?? '';
      // the client reports a publish nobody answers (no stream captures the subject) as JetStream being off
      if (name === 'JetStreamNotEnabled' || /no responders|503/i.test(text)) {
        return result('unroutable', `no JetStream stream captures subject '${subject}' (no responders)`);
      }
      if (/timeout/i.test(name) || /timeout/i.test(text))
        return result('timeout', `the stream did not acknowledge within ${message.timeoutMs} ms`);
      if (/JetStream/.test(name) || /JetStream/.test(text)) return result('rejected', `the stream refused: ${text}`);
      return result('connection', `the connection to the NATS server failed: ${text}`);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const links = [...this.links.values()];
    this.links.clear();
    await Promise.all(
      links.map(async (link) => {
        const c = await link.connection.catch(() => null);
        await c?.nc.drain().catch(() => c.nc.close().catch(() => undefined));
      }),
    );
  }

  private client(url: string, timeoutMs: number): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    if (this.closed) return Promise.reject(new Error('the service is shutting down'));
    const existing = this.links.get(url);
    if (existing) return existing.connection;
    const link: Link = { connection: this.open(url, timeoutMs) };
    this.links.set(url, link);
    link.connection.then(
      ({ nc }) => {
        if (this.closed) nc.close().catch(() => undefined);
        // a connection that gave up reconnecting (or was closed) leaves the pool; the next attempt opens one
        nc.closed().then(
          (err: Error | void) => {
            if (err)
              this.logger.warn({ server: maskCredentials(url), err: describeError(err) }, 'NATS connection lost');
            this.forget(url, link);
          },
          () => this.forget(url, link),
        );
      },
      () => this.forget(url, link),
    );
    return link.connection;
  }

  private async open(url: string, timeoutMs: number): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    // the client resolves names itself: check every address the name has now (a rebinding DNS could still
    // answer otherwise later; the HTTP and AMQP destinations check on each connection)
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
    const blocked = addresses.find((a) => !this.guard.isAllowed(a));
    if (blocked) throw new BlockedAddressError(blocked);
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    const nc = await connect({
      servers: `${u.hostname}:${u.port || 4222}`,
      ...(user && pass ? { user, pass } : user ? { token: user } : {}),
      ...(u.protocol === 'tls:' ? { tls: {} } : {}),
      timeout: timeoutMs,
      name: 'gateway-management webhooks',
      maxReconnectAttempts: 5,
      reconnectTimeWait: 1000,
    });
    return { nc, js: jetstream(nc) };
  }

  private forget(url: string, link: Link): void {
    if (this.links.get(url) === link) this.links.delete(url);
  }
}
