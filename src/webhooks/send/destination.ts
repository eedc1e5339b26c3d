import { AttemptResult } from './retry-policy';

/** What a delivery attempt hands a destination: the same body and headers, whatever the transport. */
export interface OutgoingMessage {
  /** The delivery's id: the webhook-id header, and the message id where the transport has one. */
  id: string;
  /** The event's name (`AccessRequestApproved`): the default routing key or subject where one is optional. */
  eventName: string;
  method: string;
  /** Standard Webhooks signature headers, the webhook's own headers and content-type, lower-case names. */
  headers: Record<string, string>;
  /** null for HTTP GET/DELETE deliveries, which carry no body. */
  body: string | null;
  timeoutMs: number;
}

/** Where a webhook's deliveries go: its URL in clear (credentials included) and its type's options. */
export interface DestinationTarget {
  url: string;
  options: Record<string, string>;
}

/**
 * An attempt's result, with the error vocabulary of the delivery log: `http_status` (HTTP: no 2xx),
 * `unroutable` (a broker had nowhere to put the message), `rejected` (a broker refused it, or the HTTP client
 * refused to send the request), `timeout`,
 * `connection`, `blocked_address`. `responseBody` carries the subscriber's answer, or the broker's reason.
 */
export interface SendResult extends AttemptResult {
  durationMs: number;
  responseBody: string;
}

/** How a destination type describes one of its options (beside URL). */
export interface DestinationOption {
  required: boolean;
  description: string;
  /** What a value must look like (checked on write), and how to say it. */
  pattern: RegExp;
  patternMessage: string;
}

/**
 * One type of destination (http, rabbitmq, nats): what its configuration looks like, how to show it without
 * credentials, and how to send one message. Instances are shared by every delivery of the process, keep
 * their connections pooled per target, and close them on shutdown. Adding a type is one new file with a
 * class implementing this, listed in destination-registry.ts.
 */
export interface Destination {
  readonly type: string;
  /** URL schemes it takes, without the colon. */
  readonly schemes: readonly string[];
  /** The message when URL is not one of this type's (names the schemes and shows an example). */
  readonly urlMessage: string;
  readonly options: Readonly<Record<string, DestinationOption>>;
  /** A line for the API documentation. */
  readonly description: string;
  /**
   * Reasons a URL (and options) cannot be used, each naming its field; empty when fine. Checks beyond the
   * scheme and the options' patterns, which the registry checks for every type.
   */
  validate(url: URL, options: Record<string, string>): string[];
  /** The URL as answers show it: credentials masked (`amqp://user:***@host/vhost`). */
  mask(url: string): string;
  /** One attempt. Never throws: a failure is a result with its error kind. */
  send(target: DestinationTarget, message: OutgoingMessage): Promise<SendResult>;
  close(): Promise<void>;
}

/** `url` read by the WHATWG URL parser, or null when it cannot be (Node 20 has no URL.parse). */
export function parseUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** The URL with its password replaced by `***` (a user alone, e.g. a token, is masked too). */
export function maskCredentials(url: string): string {
  const u = parseUrl(url);
  if (!u || (!u.username && !u.password)) return url;
  const user = u.password ? u.username : '***';
  const pass = u.password ? ':***' : '';
  return `${u.protocol}//${user}${pass}@${u.host}${u.pathname}${u.search}${u.hash}`;
}

/**
 * `given` (a URL sent back on an update) with the credentials of the stored URL where `given` shows them masked
 * as maskCredentials does (`user:***@`, or `***@` for a user alone): what a client that edited a shown URL means.
 * `given` itself when it shows no masked credentials (the stored URL is then not read); null when they cannot be
 * restored (another user, or the stored URL has none), which the caller refuses.
 */
export function withStoredCredentials(given: string, stored: () => string): string | null {
  const g = parseUrl(given);
  if (!g) return given; // the destination's own check says what is wrong with it
  const masked = g.password ? g.password === '***' : g.username === '***';
  if (!masked) return given;
  const s = parseUrl(stored());
  if (!s || (!s.username && !s.password)) return null;
  if (g.password ? g.username !== s.username : s.password) return null;
  g.username = s.username;
  g.password = s.password;
  return g.href;
}

/** The text of an error and its causes, for the delivery log: what a reader needs to see why it failed. */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const message = (e as { message?: string }).message ?? String(e);
    const code = (e as { code?: unknown }).code;
    const text = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
    if (text && !parts.includes(text)) parts.push(text);
  }
  return parts.join(' <- ').slice(0, 1024) || 'unknown error';
}
