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

/**
 * Whether `value` is an http webhook URL, judged as it will be sent: read by the WHATWG URL parser (as the HTTP
 * client reads it), then checked in that normal form, so every spelling of one address is judged alike
 * (`http://2130706433/`, `http://127.1/` and `http://0x7f000001/` are all `http://127.0.0.1/`; the address guard
 * then decides on that address). It must be written with its `//`: the parser would complete `http:host`.
 */
export function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return isURL(url.href, HTTP_URL_RULES);
}

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
