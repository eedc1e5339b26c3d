import { connect, Socket } from 'node:net';

export interface RawConnection {
  socket: Socket;
  /** Settles when the connection closes, whoever closes it (a reset included). */
  closed: Promise<void>;
  /** What it has received so far. */
  received(): string;
}

/**
 * A plain TCP connection to 127.0.0.1:`port` that has sent `first` (raw HTTP, whole or in part) once connected;
 * rejects when the connection is refused.
 */
export async function openRawConnection(port: number, first?: string): Promise<RawConnection> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve()).once('error', reject);
  });
  socket.on('error', () => undefined); // a reset by the server: closed all the same
  let received = '';
  socket.on('data', (d) => (received += String(d)));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  if (first) socket.write(first);
  return { socket, closed, received: () => received };
}
