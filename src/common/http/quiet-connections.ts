import type { IncomingMessage, Server, ServerResponse } from 'node:http';
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
 */
export function followQuietConnections(server: Server): () => void {
  const open = new Set<Socket>();
  /** Requests in progress on a connection (more than one when pipelined). */
  const inProgress = new WeakMap<Socket, number>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      inProgress.set(socket, (inProgress.get(socket) ?? 1) - 1);
    };
    res.once('finish', end);
    res.once('close', end);
  });
  return () => {
    for (const socket of open) if (!inProgress.get(socket)) socket.destroy();
  };
}
