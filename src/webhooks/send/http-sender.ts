import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { Agent, buildConnector, request } from 'undici';
import { AppConfig } from '../../config';
import { AddressGuard, BlockedAddressError } from './address-guard';
import { describeError, SendResult } from './destination';

export const RESPONSE_CAPTURE_BYTES = 4096;
/** Past this much response body we stop reading and drop the connection. */
const MAX_DRAIN_BYTES = 1024 * 1024;
/**
 * The response headers a subscriber may send. undici's default (Node's 16 KiB) made a 2xx with a large
 * Set-Cookie or policy header a connection error, retried until the delivery failed although it had arrived.
 */
const MAX_RESPONSE_HEADER_BYTES = 1024 * 1024;

export interface OutgoingRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** null for GET/DELETE deliveries, which carry no body. */
  body: string | null;
  timeoutMs: number;
}

/**
 * Sends webhook requests with undici: keep-alive pools per origin, no redirects followed, a hard
 * timeout per request, and the address guard consulted on every new connection (after DNS).
 */
@Injectable()
export class HttpSender implements OnApplicationShutdown {
  private readonly agent: Agent;

  constructor(config: AppConfig) {
    const guard = new AddressGuard(config.webhooks.allowedCidrs);
    // Hostnames are checked by the guard's lookup after DNS; IP literals never reach a lookup, so check them here.
    const connector = buildConnector({ lookup: guard.lookup, timeout: 10_000 });
    const connect: buildConnector.connector = (opts, callback) => {
      const host = opts.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && !guard.isAllowed(host)) return callback(new BlockedAddressError(host), null);
      return connector(opts, callback);
    };
    this.agent = new Agent({
      connect,
      connections: Math.max(8, config.webhooks.concurrency),
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      maxHeaderSize: MAX_RESPONSE_HEADER_BYTES,
      pipelining: 1,
    });
  }

  /**
   * Closed once the delivery worker has stopped (it stops before application shutdown): closed earlier, as the first
   * of the shutdown hooks, it refused every attempt the worker still started meanwhile, and each was recorded as a
   * connection error that was never sent.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }

  async send(req: OutgoingRequest): Promise<SendResult> {
    const started = performance.now();
    // the hard timeout of the whole attempt; its timer goes as soon as the attempt is over, so thousands of
    // finished attempts do not keep theirs until they would have fired (as AbortSignal.timeout's do). The
    // signal is a plain EventEmitter, which undici accepts as one: much cheaper per attempt than an
    // AbortController, whose EventTarget machinery would be built for every request and almost never fire.
    const signal = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      signal.emit('abort');
    }, req.timeoutMs);
    timer.unref();
    let status: number | null = null;
    try {
      const res = await request(req.url, {
        dispatcher: this.agent,
        method: req.method as never,
        headers: req.headers,
        body: req.body ?? undefined,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
        signal,
      });
      const code = (status = res.statusCode);
      const responseBody = await readCapped(res.body);
      const ok = code >= 200 && code < 300;
      const retryAfter = res.headers['retry-after'];
      return {
        statusCode: code,
        error: ok ? null : 'http_status',
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
        durationMs: Math.round(performance.now() - started),
        responseBody,
      };
    } catch (caught) {
      const err = caught instanceof BodyCutShort ? caught.cause : caught;
      const error = classify(err, timedOut);
      return {
        // the status, when one came before the body failed (a 200 whose body never ended is still a timeout)
        statusCode: status,
        error,
        durationMs: Math.round(performance.now() - started),
        // a refused request says why (undici names the header, never its value); a body cut short keeps what came
        responseBody:
          error === 'rejected'
            ? `not sent, the HTTP client refused the request: ${describeError(err)}`
            : caught instanceof BodyCutShort
              ? caught.captured
              : '',
      };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A response body that failed (timed out, or its connection was cut) after `captured` had come. */
class BodyCutShort extends Error {
  constructor(
    override readonly cause: unknown,
    readonly captured: string,
  ) {
    super('the response body was cut short');
  }
}

/**
 * The first RESPONSE_CAPTURE_BYTES of the response body, reading (and dropping) the rest up to MAX_DRAIN_BYTES so
 * the connection can be reused; past that the connection is dropped. Rejects with a BodyCutShort holding the
 * stream's error (a body timeout, a connection cut short) and what had been captured until then.
 */
function readCapped(body: Readable): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let seen = 0;
    const done = () => resolve(capturedText(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    body.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (kept < RESPONSE_CAPTURE_BYTES) {
        const part =
          chunk.length <= RESPONSE_CAPTURE_BYTES - kept ? chunk : chunk.subarray(0, RESPONSE_CAPTURE_BYTES - kept);
        chunks.push(part);
        kept += part.length;
      }
      if (seen > MAX_DRAIN_BYTES) {
        body.removeAllListeners('data');
        body.removeAllListeners('end');
        body.on('error', () => undefined);
        body.destroy();
        done();
      }
    });
    body.once('end', done);
    body.on('error', (err) => reject(new BodyCutShort(err, capturedText(Buffer.concat(chunks), true))));
  });
}

/**
 * The captured bytes as text: UTF-8, with a character that the cut at RESPONSE_CAPTURE_BYTES (or a body cut short,
 * `cut`) split in two left out rather than turned into U+FFFD, so the text stays within the captured bytes.
 */
function capturedText(bytes: Buffer, cut = bytes.length >= RESPONSE_CAPTURE_BYTES): string {
  if (!cut) return bytes.toString('utf8');
  // streaming, the decoder keeps an incomplete last character back instead of emitting U+FFFD for it
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes, { stream: true });
}

function classify(err: unknown, timedOut: boolean): SendResult['error'] {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof BlockedAddressError || (e as { code?: string }).code === 'E_BLOCKED_ADDRESS')
      return 'blocked_address';
  }
  const code = (err as { code?: string })?.code;
  const name = (err as { name?: string })?.name;
  // refused before any connection, for what the request itself holds: a header that HTTP cannot carry (a webhook
  // saved before header values were checked). Nothing was sent, so it is not a connection failure.
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') return 'rejected';
  if (
    timedOut ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    name === 'TimeoutError'
  ) {
    return 'timeout';
  }
  return 'connection';
}
