import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

export interface SinkReply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
  /** Never answer (until the sink closes). */
  hang?: boolean;
  /** Send the status line and headers (and `body`, if any), then never end the body (until the sink closes). */
  hangBody?: boolean;
}

/** A webhook receiver on loopback that records every request and answers as told. */
export class Sink {
  readonly received: ReceivedRequest[] = [];
  responder: (req: ReceivedRequest, index: number) => SinkReply = () => ({ status: 200, body: 'ok' });
  private server?: Server;
  private waiters: (() => void)[] = [];
  private readonly open = new Set<ServerResponse>();
  port = 0;

  static async start(host = '127.0.0.1', port = 0): Promise<Sink> {
    const sink = new Sink(host);
    await sink.listen(port);
    return sink;
  }

  private constructor(readonly host: string) {}

  url(path = '/hook'): string {
    const h = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `http://${h}:${this.port}${path}`;
  }

  async listen(port = this.port): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const r: ReceivedRequest = {
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        const index = this.received.length;
        this.received.push(r);
        this.waiters.splice(0).forEach((w) => w());
        const reply = this.responder(r, index);
        if (reply.hang) {
          this.open.add(res);
          return;
        }
        if (reply.hangBody) {
          this.open.add(res);
          res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
          res.write(reply.body ?? 'the start of a body that never ends');
          return;
        }
        const send = () => {
          res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
          res.end(reply.body ?? '');
        };
        if (reply.delayMs) setTimeout(send, reply.delayMs);
        else send();
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, this.host, () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every connection (the subscriber is "down"); listen() again on the same port. */
  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.open.clear();
    if (!this.server) return;
    const server = this.server;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Waits until `predicate` holds for the requests received, polling on every arrival, up to `timeoutMs`. */
  async waitFor(
    predicate: (received: ReceivedRequest[]) => boolean,
    timeoutMs = 15_000,
    what = 'requests',
  ): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`sink: timed out after ${timeoutMs} ms waiting for ${what}; got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.received;
  }

  waitForCount(n: number, timeoutMs?: number): Promise<ReceivedRequest[]> {
    return this.waitFor((r) => r.length >= n, timeoutMs, `${n} requests`);
  }
}
