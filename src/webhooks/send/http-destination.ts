import { Injectable } from '@nestjs/common';
import { isURL } from 'class-validator';
import { Destination, DestinationTarget, OutgoingMessage, SendResult } from './destination';
import { HttpSender } from './http-sender';

export const HTTP_URL_RULES = {
  require_protocol: true,
  protocols: ['http', 'https'],
  require_tld: false,
  require_valid_protocol: true,
};
export const HTTP_URL_MESSAGE = 'URL must be an absolute http(s) URL';

/** Webhooks proper: an HTTP request to the URL with the webhook's method; delivered on a 2xx. */
@Injectable()
export class HttpDestination implements Destination {
  readonly type = 'http';
  readonly schemes = ['http', 'https'];
  readonly urlMessage = HTTP_URL_MESSAGE;
  readonly options = {};
  readonly description = 'an HTTP request to URL (http or https) with the webhook Method; a 2xx answer delivers';

  constructor(private readonly sender: HttpSender) {}

  validate(url: URL): string[] {
    return isURL(url.href, HTTP_URL_RULES) ? [] : [HTTP_URL_MESSAGE];
  }

  /** HTTP webhooks show their URL as given, as they always have. */
  mask(url: string): string {
    return url;
  }

  send(target: DestinationTarget, message: OutgoingMessage): Promise<SendResult> {
    return this.sender.send({
      url: target.url,
      method: message.method,
      headers: message.headers,
      body: message.body,
      timeoutMs: message.timeoutMs,
    });
  }

  /** The sender closes its own connection pool. */
  async close(): Promise<void> {}
}
