/** A header name: an HTTP token (visible ASCII letters, digits and `!#$%&'*+-.^_`|~`). */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * A header value as HTTP defines it and as the HTTP client sends it: visible ASCII and the Latin-1 range
 * U+0080-U+00FF (sent as one byte each, obs-text), with spaces and tabs only between them. Control characters
 * (line breaks, U+0000-U+001F, DEL) cannot be sent, nor can a character beyond U+00FF (it has no single byte);
 * leading or trailing whitespace would be stripped by the receiver, so it would not receive what was configured.
 * An empty value is a value.
 */
export const HEADER_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

export const HEADER_VALUE_MESSAGE =
  'Value must be a valid HTTP header value: visible ASCII or Latin-1 characters (up to U+00FF), with spaces or tabs only between them (no control characters, line breaks, or leading or trailing whitespace)';

/**
 * Headers a webhook may not set: those the service sets itself on every delivery, and those of the connection
 * itself, which the HTTP client refuses to send (so every delivery would fail).
 */
export const RESERVED_HEADERS = [
  'content-type',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
];

/**
 * How much a webhook's own headers may hold, so that every delivery stays a request HTTP servers accept. Each of
 * them is one byte per character on the wire (names are ASCII, values Latin-1), so characters are bytes.
 * - `total`: the names and values of all of a webhook's headers together, 8 KiB, leaving room within the 16 KiB
 *   Node's HTTP server takes for all headers by default for the request line and the headers the service adds.
 * - `valueLength`: with the longest name, one header line (`Name: Value`) stays under the 8 KiB a line may take in
 *   nginx and Apache by default, and one header of the longest name and value fits within `total`.
 */
export const HEADER_LIMITS = {
  /** Headers of one webhook. */
  count: 50,
  /** Characters of every name and value of one webhook together. */
  total: 8192,
  /** Characters of a name. */
  nameLength: 256,
  /** Characters of a value. */
  valueLength: 7680,
};

/** A webhook's headers as the limits measure them: how many, and the characters of their names and values. */
export interface HeaderUsage {
  count: number;
  chars: number;
}

/** The characters a header counts for in HEADER_LIMITS.total. */
export function headerChars(h: { Name?: unknown; Value?: unknown }): number {
  return (typeof h.Name === 'string' ? h.Name.length : 0) + (typeof h.Value === 'string' ? h.Value.length : 0);
}

export const tooManyHeaders = (count: number) =>
  `Headers must be at most ${HEADER_LIMITS.count} per webhook (it would have ${count})`;
export const headersTooLong = (chars: number) =>
  `Headers must be at most ${HEADER_LIMITS.total} characters per webhook, names and values together (they would be ${chars})`;

/** Why a webhook may not have headers measuring `usage` (none: it may). */
export function headerLimitRefusals(usage: HeaderUsage): string[] {
  const refusals: string[] = [];
  if (usage.count > HEADER_LIMITS.count) refusals.push(tooManyHeaders(usage.count));
  if (usage.chars > HEADER_LIMITS.total) refusals.push(headersTooLong(usage.chars));
  return refusals;
}
