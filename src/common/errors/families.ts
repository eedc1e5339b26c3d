/**
 * The four route families (gateway, dashboard, admin, portal), each with its own credential and error body.
 * Routes outside them (health, docs, metrics) use a plain `{statusCode, message}` body.
 */
export type Family = 'gateway' | 'dashboard' | 'admin' | 'portal' | 'other';

export function familyOf(url: string): Family {
  const path = routedPath(url);
  if (path === '/gateway' || path.startsWith('/gateway/')) return 'gateway';
  if (path === '/api' || path.startsWith('/api/')) return 'dashboard';
  if (path === '/admin' || path.startsWith('/admin/')) return 'admin';
  if (path === '/portal-api' || path.startsWith('/portal-api/')) return 'portal';
  return 'other';
}

/** The scheme and authority of an absolute-form request target, exactly as the router strips them. */
const ABSOLUTE_FORM = /^https?:\/\/.*?\//;

/**
 * The request target as a path and query: one in absolute form (`GET http://host/api/apis`) is routed as the path
 * after its authority, which is found as the router finds it (the scheme and authority up to the first slash).
 */
export function originForm(url: string): string {
  return url.charCodeAt(0) === 47 ? url : url.replace(ABSOLUTE_FORM, '/');
}

/**
 * The path as the router matches it: percent-escapes in it are decoded (`/portal%2Dapi/apps` is the
 * portal's `/portal-api/apps`), so the family never differs from the route that answers; leading slashes
 * count as one.
 */
function routedPath(url: string): string {
  // (no route starts with `//`: such a path is still its family's, to be told so in that family's body)
  const path = originForm(url)
    .split('?')[0]
    .replace(/^\/{2,}/, '/');
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    // a malformed escape somewhere later in the path: decode what can be, escape by escape
    return path.replace(/%[0-9a-fA-F]{2}/g, (e) => String.fromCharCode(parseInt(e.slice(1), 16)));
  }
}

/** Validation failures (and malformed JSON) are 422 on the portal, 400 elsewhere. */
export function validationStatus(family: Family): number {
  return family === 'portal' ? 422 : 400;
}

export function renderErrorBody(family: Family, status: number, messages: string[]): unknown {
  const message = messages.join('; ');
  switch (family) {
    case 'gateway':
      return { status: 'error', message };
    case 'dashboard':
    case 'admin':
      return { Status: 'Error', Message: message, Meta: null };
    case 'portal':
      return { status: 'error', errors: messages };
    default:
      return { statusCode: status, message };
  }
}
