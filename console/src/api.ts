// Every call of the console goes through the service's public portal routes with the portal token the
// operator signed in with. The token lives in sessionStorage: it is gone when the tab closes, and it is
// never put in a URL.

const TOKEN_KEY = 'gateway-console.portal-token';

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** An error answer of the API, carrying its own words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly messages: string[],
  ) {
    super(messages.join('; '));
  }
}

/** The reasons an error body gives: the portal family's `errors`, or another family's `message`. */
export function reasons(status: number, body: unknown): string[] {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (Array.isArray(b.errors) && b.errors.length) return b.errors.map(String);
    for (const key of ['message', 'Message']) if (typeof b[key] === 'string' && b[key]) return [b[key]];
  }
  return [`the service answered ${status}`];
}

let onUnauthorized: (error: ApiError) => void = () => undefined;

/** Called when the API refuses the stored token (it was changed on the server, say). */
export function setUnauthorizedHandler(handler: (error: ApiError) => void): void {
  onUnauthorized = handler;
}

export async function request<T>(method: string, path: string, body?: unknown, token = storedToken()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, ['The service could not be reached. Is it running?']);
  }
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!res.ok) {
    const error = new ApiError(res.status, reasons(res.status, parsed));
    if (res.status === 401) onUnauthorized(error);
    throw error;
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
  put: <T>(path: string, body?: unknown) => request<T>('PUT', path, body),
  del: <T>(path: string) => request<T>('DELETE', path),
};

/** A query string from the given parameters, leaving out empty ones. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
