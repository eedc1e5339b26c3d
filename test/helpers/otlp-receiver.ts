import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** A finished span as an OTLP exporter reported it, with its resource's service name and flat attributes. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

/**
 * An in-memory trace collector on loopback: it takes OTLP/HTTP JSON exports (`POST /v1/traces`, what the SDK
 * sends with OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and keeps every span, for specs to read traces from.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server?: Server;
  port = 0;

  static async start(): Promise<OtlpReceiver> {
    const r = new OtlpReceiver();
    r.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        try {
          if (req.method !== 'POST' || req.url !== '/v1/traces') throw new Error(`unexpected ${req.method} ${req.url}`);
          let body = Buffer.concat(chunks);
          if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
          r.take(JSON.parse(body.toString('utf8')));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch (err) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      r.server!.once('error', reject);
      r.server!.listen(0, '127.0.0.1', () => resolve());
    });
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private take(request: { resourceSpans?: OtlpResourceSpans[] }): void {
    for (const rs of request.resourceSpans ?? []) {
      const service = String(flatten(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            attributes: flatten(s.attributes),
            status: s.status?.code ?? 0,
          });
        }
      }
    }
  }
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpResourceSpans {
  resource?: { attributes?: OtlpAttribute[] };
  scopeSpans?: {
    spans?: {
      traceId: string;
      spanId: string;
      parentSpanId?: string;
      name: string;
      kind: number;
      attributes?: OtlpAttribute[];
      status?: { code?: number };
    }[];
  }[];
}

function flatten(attributes: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
  }
  return out;
}
