import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * Splits a RedirectURLs value ("one address, or several separated by commas") into its addresses. Lenient, for
 * values stored before they were checked as below: spaces around an address are dropped, and so are empty items.
 */
export function splitRedirectUrls(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

// Whitespace, control and invisible format characters: a browser or an identity provider would drop or
// mangle them (the URL parser removes tabs and line breaks inside an address), so what is matched is not
// what was registered.
const HIDDEN = /[\s\p{Cc}\p{Cf}]/u;
// An app's own URI scheme (native apps, RFC 8252): reverse domain name, so it holds a period. It rules out
// javascript:, data:, vbscript:, file:, mailto: and the like, which are no place to send an authorization code.
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/i;

/**
 * Why a RedirectURLs value cannot be used as the app's redirect addresses, or null when it can. "" means none.
 * Otherwise one address or several separated by commas (spaces after or before a comma are fine, "a, b"); each
 * an absolute http(s) address with a host, or one of an app's own scheme with a period in it
 * (`com.example.app:/cb`); no #fragment (RFC 6749 §3.1.2), no empty item, nothing hidden inside an address.
 */
export function redirectUrlsRefusal(value: unknown): string | null {
  if (typeof value !== 'string') return 'must be a string';
  if (value === '') return null;
  if (value !== value.trim()) return 'must not start or end with whitespace';
  const items = value.split(/ *, */);
  if (items.some((u) => u === '')) return 'must not have an empty item (before, between or after commas)';
  for (const u of items) {
    const reason = addressRefusal(u);
    if (reason) return `${JSON.stringify(u.slice(0, 100))} ${reason}`;
  }
  return null;
}

function addressRefusal(u: string): string | null {
  if (HIDDEN.test(u)) return 'must not contain spaces, control characters or invisible characters';
  if (u.includes('#')) return 'must not have a #fragment';
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    return 'is not an absolute address';
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    // the parser reads "https:host" and "https:/host" as "https://host/": only the full form is an absolute address
    return /^https?:\/\/[^/?]/i.test(u) ? null : 'must be an absolute address with a host (https://host/path)';
  }
  if (!PRIVATE_USE_SCHEME.test(url.protocol) || u.length === url.protocol.length)
    return "must be an http(s) address or one of an app's own scheme with a period in it (com.example.app:/callback)";
  return null;
}

export const REDIRECT_URLS_DESCRIPTION =
  'A redirect address, or several separated by commas (spaces around a comma are fine): each an absolute http(s) address, or one of an app\'s own scheme with a period in it (com.example.app:/callback); no #fragment, no empty item, no spaces or control characters inside an address. "": none';

export const isRedirectUrlList = (value: unknown): boolean => redirectUrlsRefusal(value) === null;

export function IsRedirectUrlList(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRedirectUrlList',
      validator: {
        validate: isRedirectUrlList,
        defaultMessage: (args) => `${args?.property ?? 'RedirectURLs'} ${redirectUrlsRefusal(args?.value)}`,
      },
    },
    options,
  );
}
