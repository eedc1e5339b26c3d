import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Follows `server`'s connections, to close at its stop the ones with no request in progress; returns that close.
 *
 * Node's `server.close()` ends the idle keep-alive connections, but it counts a connection that was opened and has
 * sent nothing yet, or only part of a request's headers, as busy (its headers' 60 s are running), and it stops the
 * check that would end it at those 60 s. So one such connection held a stop until SHUTDOWN_TIMEOUT: a browser's
 * spare connection, opened ahead of a request it never made, or a client that connects and waits. Such a connection
 * carries no request the service has taken; it is closed as the idle ones are. A connection whose request is being
 * received or answered is left to finish it (it is answered with Connection: close).
 *
 * It costs nothing per request: what is in progress is read from the connection at the stop.
 */
export function followQuietConnections(server: Server): () => void {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return () => {
    for (const socket of open) if (!answering(socket)) socket.destroy();
  };
}

/**
 * Whether a request is being answered on `socket`. Node attaches the response in progress to its connection from
 * the moment the request's headers are in until the response is sent (and the next pipelined one after it): the
 * field its own `closeIdleConnections` reads. An answer already sent whole but not yet flushed counts as in progress.
 */
function answering(socket: Socket): boolean {
  const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  return !!res && !res.writableFinished;
}
