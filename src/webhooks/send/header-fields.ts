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
