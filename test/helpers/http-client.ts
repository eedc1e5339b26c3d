import { request } from 'undici';

export interface HttpResponse<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

/** A small HTTP client for e2e specs: JSON in, JSON (or text) out, never throws on status. */
export class HttpClient {
  constructor(
    readonly baseUrl: string,
    private readonly defaultHeaders: Record<string, string> = {},
  ) {}

  with(headers: Record<string, string>): HttpClient {
    return new HttpClient(this.baseUrl, { ...this.defaultHeaders, ...headers });
  }

  async send<T = any>(
    method: string,
    path: string,
    opts: { body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {},
  ): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...this.defaultHeaders, ...opts.headers };
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
    const res = await request(this.baseUrl + path, { method: method as never, headers, body });
    const text = await res.body.text();
    let parsed: unknown = text;
    if ((res.headers['content-type'] ?? '').toString().includes('json') && text.length > 0) parsed = JSON.parse(text);
    return { status: res.statusCode, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.send<T>('GET', path, { headers });
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.send<T>('POST', path, { body, headers });
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.send<T>('PUT', path, { body, headers });
  }
  patch<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.send<T>('PATCH', path, { body, headers });
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.send<T>('DELETE', path, { headers });
  }
}
