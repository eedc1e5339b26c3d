import { performance } from 'node:perf_hooks';
import { isIP } from 'node:net';
import { Injectable, Logger } from '@nestjs/common';
import { ChannelModel, ConfirmChannel, connect } from 'amqplib';
import { DeadlineExceeded, withDeadline } from '../../common/deadline';
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

/** A confirm channel for one exchange, and the ids of its messages the broker returned as unroutable. */
interface Publisher {
  channel: ConfirmChannel;
  returned: Set<string>;
  /** Why the broker closed the channel, if it did (e.g. no such exchange). */
  closedBy?: Error;
}

/** One connection per broker URL, and on it one confirm channel per exchange. */
interface Link {
  model: Promise<ChannelModel>;
  publishers: Map<string, Promise<Publisher>>;
}

/** At most this long to open a connection, whatever the webhook's timeout. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * RabbitMQ (AMQP 0-9-1): publishes the delivery to an exchange with a routing key, as a persistent message
 * with the delivery id as message id and the webhook headers as AMQP headers. Publisher confirms and the
 * mandatory flag make the broker's answer the attempt's: delivered only once the broker confirms it took the
 * message; a message no queue is bound to receive (returned), or a missing exchange, is `unroutable`; a
 * negative acknowledgement is `rejected`. A broken connection or channel is dropped from the pool and opened
 * anew by the next attempt.
 */
@Injectable()
export class RabbitMqDestination implements Destination {
  readonly type = 'rabbitmq';
  readonly schemes = ['amqp', 'amqps'];
  readonly urlMessage = 'URL must be an absolute amqp(s) URL for Type rabbitmq (amqp://user:password@host:5672/vhost)';
  readonly options = {
    Exchange: {
      required: false,
      description: "the exchange to publish to; absent or '': the default exchange (RoutingKey names a queue)",
      pattern: /^[A-Za-z0-9_.:-]{0,255}$/,
      patternMessage: 'letters, digits, _ . : - (at most 255)',
    },
    RoutingKey: {
      required: false,
      description: "the routing key; absent: the event's name (AccessRequestApproved...)",
      pattern: /^[^\r\n\0]{1,255}$/,
      patternMessage: '1 to 255 characters, no line breaks',
    },
  };
  readonly description =
    'RabbitMQ (AMQP 0-9-1): URL amqp(s)://user:password@host:port/vhost; a message published to Options.Exchange with Options.RoutingKey, delivered once the broker confirms it (publisher confirms, mandatory: unroutable is a failure)';

  private readonly logger = new Logger(RabbitMqDestination.name);
  private readonly guard: AddressGuard;
  private readonly links = new Map<string, Link>();
  private closed = false;

  constructor(config: AppConfig) {
    this.guard = new AddressGuard(config.webhooks.allowedCidrs);
  }

  validate(url: URL): string[] {
    return url.hostname ? [] : ['URL must name the broker host (amqp://user:password@host:5672/vhost)'];
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
    const exchange = target.options.Exchange ?? '';
    const routingKey = target.options.RoutingKey ?? message.eventName;
    let publisher: Publisher;
    try {
      publisher = await this.publisher(target.url, exchange, Math.min(CONNECT_TIMEOUT_MS, message.timeoutMs));
    } catch (err) {
      if (err instanceof BlockedAddressError || (err as { code?: string }).code === 'E_BLOCKED_ADDRESS')
        return result('blocked_address', describeError(err));
      if (err instanceof DeadlineExceeded)
        return result('timeout', `no connection to the broker within ${err.message}`);
      return result('connection', `cannot reach the broker: ${describeError(err)}`);
    }
    try {
      await this.publish(publisher, exchange, routingKey, message);
      if (publisher.returned.delete(message.id)) {
        return result(
          'unroutable',
          `the broker returned the message: no queue is bound to exchange '${exchange}' for routing key '${routingKey}'`,
        );
      }
      return result(null, `confirmed by the broker (exchange '${exchange}', routing key '${routingKey}')`);
    } catch (err) {
      publisher.returned.delete(message.id);
      if (err instanceof DeadlineExceeded) return result('timeout', `the broker did not confirm within ${err.message}`);
      const reason = publisher.closedBy ?? err;
      const text = describeError(reason);
      if (/NOT_FOUND|NOT-FOUND|404/.test(text)) return result('unroutable', `the broker refused the message: ${text}`);
      if (/nack/i.test(text) || /ACCESS_REFUSED|403/.test(text))
        return result('rejected', `the broker refused the message: ${text}`);
      return result('connection', `the connection to the broker failed: ${text}`);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const links = [...this.links.values()];
    this.links.clear();
    await Promise.all(
      links.map(async (link) => {
        const model = await link.model.catch(() => null);
        await model?.close().catch(() => undefined);
      }),
    );
  }

  private publish(p: Publisher, exchange: string, routingKey: string, m: OutgoingMessage): Promise<void> {
    const { 'content-type': contentType, ...headers } = m.headers;
    return withDeadline(
      new Promise<void>((resolve, reject) => {
        p.channel.publish(
          exchange,
          routingKey,
          Buffer.from(m.body ?? '', 'utf8'),
          {
            mandatory: true,
            persistent: true,
            messageId: m.id,
            contentType: contentType ?? 'application/json',
            type: m.eventName,
            timestamp: Math.floor(Date.now() / 1000),
            headers,
          },
          (err) => (err ? reject(err instanceof Error ? err : new Error(`nack: ${String(err)}`)) : resolve()),
        );
      }),
      m.timeoutMs,
    );
  }

  /** The pooled confirm channel for this URL and exchange, opening the connection or channel if need be. */
  private publisher(url: string, exchange: string, connectTimeoutMs: number): Promise<Publisher> {
    if (this.closed) return Promise.reject(new Error('the service is shutting down'));
    let link = this.links.get(url);
    if (!link) {
      const opened: Link = { model: this.open(url, connectTimeoutMs), publishers: new Map() };
      link = opened;
      this.links.set(url, opened);
      opened.model.then(
        (model) => {
          model.on('error', (err: Error) =>
            this.logger.warn({ broker: maskCredentials(url), err: describeError(err) }, 'RabbitMQ connection error'),
          );
          model.on('close', () => this.forget(url, opened));
          if (this.closed) model.close().catch(() => undefined);
        },
        () => this.forget(url, opened),
      );
    }
    const current = link;
    let publisher = current.publishers.get(exchange);
    if (!publisher) {
      publisher = withDeadline(current.model, connectTimeoutMs).then(async (model) => {
        const channel = await model.createConfirmChannel();
        const p: Publisher = { channel, returned: new Set() };
        channel.on('return', (msg: { properties: { messageId?: string } }) => {
          if (msg.properties.messageId) p.returned.add(msg.properties.messageId);
        });
        channel.on('error', (err: Error) => {
          p.closedBy = err;
        });
        channel.on('close', () => {
          if (current.publishers.get(exchange) === made) current.publishers.delete(exchange);
        });
        return p;
      });
      const made = publisher;
      current.publishers.set(exchange, made);
      made.catch(() => {
        if (current.publishers.get(exchange) === made) current.publishers.delete(exchange);
      });
    }
    return publisher;
  }

  private async open(url: string, timeoutMs: number): Promise<ChannelModel> {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    // hostnames are checked by the guard's lookup after DNS; an IP literal never reaches a lookup
    if (isIP(host) && !this.guard.isAllowed(host)) throw new BlockedAddressError(host);
    const connecting = connect(url, {
      timeout: timeoutMs,
      lookup: this.guard.lookup,
      clientProperties: { connection_name: 'gateway-management webhooks' },
    });
    try {
      return await withDeadline(connecting, timeoutMs);
    } catch (err) {
      // a connection that opens after we gave up on it must not linger
      connecting.then((late) => late.close().catch(() => undefined)).catch(() => undefined);
      throw err;
    }
  }

  private forget(url: string, link: Link): void {
    if (this.links.get(url) === link) this.links.delete(url);
  }
}
