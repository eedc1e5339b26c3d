import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Follows `server`'s connections, to close them at its stop as soon as they carry no request; returns that close,
 * which settles once the connections quiet at the stop are closed.
 *
 * Node's `server.close()` ends the idle keep-alive connections, but it counts a connection that was opened and has
 * sent nothing yet, or only part of a request's headers, as busy (its headers' 60 s are running), and it stops the
 * check that would end it at those 60 s. So one such connection held a stop until SHUTDOWN_TIMEOUT: a browser's
 * spare connection, opened ahead of a request it never made, or a client that connects and waits. Such a connection
 * carries no request the service has taken; it is closed as the idle ones are. A connection whose request is being
 * received or answered keeps it until the answer is sent, then is closed: Fastify tells only the requests that begin
 * after the stop to close their connection, and the others' keep-alive (72 s) outlasted SHUTDOWN_TIMEOUT.
 *
 * The close waits two turns of the event loop first, so that a request that has already arrived, but has not been
 * read yet, is read and answered rather than cut off. It costs nothing per request: what is in progress is read from
 * the connection at the stop.
 */
export function followQuietConnections(server: Server): () => Promise<void> {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return () =>
    new Promise((resolve) => {
      // the first turn's poll reads what has arrived; the second's check phase comes after it
      setImmediate(() =>
        setImmediate(() => {
          for (const socket of open) closeWhenAnswered(socket);
          resolve();
        }),
      );
    });
}

/**
 * Closes `socket` once no request is being answered on it. Node attaches the response in progress to its connection
 * from the moment the request's headers are in until the response is sent, and then the next pipelined one (the
 * field its own `closeIdleConnections` reads; its own 'finish' listener moves to the next one before this one's).
 */
function closeWhenAnswered(socket: Socket): void {
  const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (res && !res.writableFinished) res.once('finish', () => closeWhenAnswered(socket));
  else socket.destroySoon();
}
