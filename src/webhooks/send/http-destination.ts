import { Injectable } from '@nestjs/common';
import { isURL } from 'class-validator';
import { Destination, DestinationTarget, maskCredentials, OutgoingMessage, parseUrl, SendResult } from './destination';
import { HttpSender } from './http-sender';

export const HTTP_URL_RULES = {
  require_protocol: true,
  protocols: ['http', 'https'],
  require_tld: false,
  require_valid_protocol: true,
  // a fully qualified name may end in the root's dot (https://hooks.example.com./), as DNS and the HTTP client allow
  allow_trailing_dot: true,
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
  const url = parseUrl(value);
  return url !== null && isURL(url.href, HTTP_URL_RULES);
}

/**
 * The URL without its credentials, and the Authorization they stand for: like Go's HTTP client (the portal
 * product's), `http://user:password@host/` sends HTTP Basic authentication. The HTTP client itself would drop them.
 */
export function splitCredentials(url: string): { url: string; authorization: string | null } {
  // (every attempt comes here: a URL without an "@" has no credentials, and is not parsed again)
  const u = url.includes('@') ? parseUrl(url) : null; // unparsable: the HTTP client says what is wrong with it
  if (!u || (!u.username && !u.password)) return { url, authorization: null };
  const user = decodeOrKeep(u.username);
  const password = decodeOrKeep(u.password);
  u.username = '';
  u.password = '';
  return { url: u.href, authorization: `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}` };
}

function decodeOrKeep(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
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

  /** HTTP webhooks show their URL as given, as they always have, but for a password in it (`user:***@`). */
  mask(url: string): string {
    return maskCredentials(url);
  }

  send(target: DestinationTarget, message: OutgoingMessage): Promise<SendResult> {
    const { url, authorization } = splitCredentials(target.url);
    // an Authorization header of the webhook's own wins over the URL's credentials, as in Go's client
    const headers =
      authorization && message.headers.authorization === undefined
        ? { ...message.headers, authorization }
        : message.headers;
    return this.sender.send({ url, method: message.method, headers, body: message.body, timeoutMs: message.timeoutMs });
  }

  /** The sender closes its own connection pool. */
  async close(): Promise<void> {}
}
