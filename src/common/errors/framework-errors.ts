import { STATUS_CODES } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './api-error';
import { Family, familyOf, renderErrorBody } from './families';
import { privateAnswerHeaders } from '../http/page-security';
import { sendFamilyError } from './family-exception.filter';

/** The longest path segment the router takes; a longer one cannot name anything this service stores. */
export const MAX_PARAM_LENGTH = 1024;

/**
 * How long a request may take to arrive, headers and body (a 408 in the family's body; its headers alone have Node's
 * 60 s). Fastify turns Node's own limit off, so a client that announced a body and never sent it held its connection
 * for ever. 120 s leaves a 32 MiB analytics batch over 2.5 Mbit/s.
 */
export const REQUEST_TIMEOUT_MS = 120_000;

// A path no route serves: a request the router refused is routed again under it, so that it passes the hooks every
// request passes (its id, its log line, its metrics, under the route label of unmatched paths) before it is answered.
const REFUSED_PATH = '/.refused-by-router';

/** What the router refused, by request: the answer to give and the URL the caller sent. */
const refused = new WeakMap<IncomingMessage, { error: ApiError; url: string }>();

/**
 * Errors the router raises before any route (and so before Nest's filter) runs: a malformed
 * percent-escape or an over-long path segment. They get the family's error body like any other 4xx.
 * Fastify calls this before any hook has run, so the request goes round once more (see REFUSED_PATH) and
 * `answerRefusedByRouter` answers it.
 */
export function onFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  let mapped: ApiError;
  if (error.code === 'FST_ERR_BAD_URL') mapped = new ApiError(400, 'the URL holds a malformed percent-escape');
  else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    mapped = new ApiError(414, `a path segment is longer than ${MAX_PARAM_LENGTH} characters`);
  else mapped = new ApiError(400, 'bad request');
  const raw = request.raw;
  if (refused.has(raw)) {
    // refused again (cannot happen under REFUSED_PATH): answered here rather than looping
    sendFamilyError(request, reply, mapped);
    return;
  }
  refused.set(raw, { error: mapped, url: raw.url ?? '/' });
  raw.url = REFUSED_PATH;
  request.server.routing(raw, reply.raw);
}

/**
 * An onRequest hook, registered after the ones that settle the request id and start the request's log: answers a
 * request the router refused with the family's error body, under the URL the caller sent.
 */
export function answerRefusedByRouter(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const entry = refused.get(request.raw);
  if (!entry) return done();
  request.raw.url = entry.url;
  privateAnswerHeaders(reply);
  sendFamilyError(request, reply, entry.error);
}

/** privateAnswerHeaders for an answer written to the socket by hand: every answer of the four families has them. */
function privateHeaderLines(family: Family): string {
  return family === 'other' ? '' : 'Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n';
}

/**
 * The target of the request each connection is receiving, once its headers are in: a request refused for taking too
 * long to arrive (its body still coming) has no packet left to read it from, yet is answered in its family's body.
 */
const receiving = new WeakMap<Socket, string>();

/** An onRequest hook: notes the target of the request its connection is receiving (see onClientError). */
export function noteRequestTarget(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  receiving.set(request.raw.socket, request.raw.url ?? '/');
  done();
}

/** The path of the request line at the head of what the client sent, if any (for the family only). */
function requestPath(raw: unknown, socket: Socket): string {
  if (!Buffer.isBuffer(raw)) return receiving.get(socket) ?? '/';
  const line = raw.subarray(0, 2048).toString('latin1');
  // whatever the method (the parser refuses a lower-case one) and in origin or absolute form
  const m = /^[!-~]+ ([!-~]+)/.exec(line);
  return m ? m[1] : '/';
}

/**
 * Requests the HTTP parser itself refuses (headers or request line too large, malformed framing, a
 * client too slow to send its headers). There is no request object yet, so the family comes from the
 * request line when it was received.
 */
export function onClientError(err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let message = 'the request could not be parsed as HTTP';
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    message = 'the request line and headers are too large';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    message = 'the request took too long to arrive';
  }
  const family = familyOf(requestPath(err.rawPacket, socket));
  const body = JSON.stringify(renderErrorBody(family, status, [message]));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\n${privateHeaderLines(family)}Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * CONNECT asks for a tunnel, which no route opens: it is answered as any other method without a route, the
 * family's 404 (Node would close the connection without a word).
 */
export function onConnect(req: IncomingMessage, socket: Duplex): void {
  const url = req.url ?? '';
  const family = familyOf(url);
  const body = JSON.stringify(renderErrorBody(family, 404, [`Cannot CONNECT ${url}`]));
  socket.end(
    `HTTP/1.1 404 ${STATUS_CODES[404]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\n${privateHeaderLines(family)}Connection: close\r\n\r\n${body}`,
  );
}
