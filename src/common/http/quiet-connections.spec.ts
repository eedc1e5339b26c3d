import { createServer, Server } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { followQuietConnections } from './quiet-connections';

describe('followQuietConnections', () => {
  let server: Server;
  let closeQuiet: () => void;
  let answer: (() => void)[];
  const sockets: Socket[] = [];

  beforeEach(async () => {
    answer = [];
    // /slow is answered when the test says so
    server = createServer((req, res) => {
      if (req.url === '/slow') answer.push(() => res.end('slow'));
      else res.end('quick');
    });
    closeQuiet = followQuietConnections(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A connection that has sent `first`, and what it has received so far. */
  const open = async (first?: string) => {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (d) => (received += String(d)));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise((resolve) => socket.once('connect', resolve));
    if (first) socket.write(first);
    return { socket, closed, received: () => received };
  };
  const until = async (holds: () => boolean) => {
    for (let i = 0; i < 200 && !holds(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(holds()).toBe(true);
  };

  it('closes the connections that carry no request, and leaves one whose request is being answered', async () => {
    const silent = await open();
    const halfSent = await open('GET /quick HTTP/1.1\r\nHost: x\r\n');
    const idle = await open('GET /quick HTTP/1.1\r\nHost: x\r\n\r\n');
    const busy = await open('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => idle.received().includes('quick') && answer.length === 1);

    closeQuiet();
    await Promise.all([silent.closed, halfSent.closed, idle.closed]);
    expect(busy.socket.destroyed).toBe(false);
    answer[0]();
    await until(() => busy.received().includes('slow'));
  });

  it('counts a connection as quiet again once all its requests are answered, pipelined ones too', async () => {
    const pipelined = await open('GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    // Node takes both requests at once and sends the second answer after the first
    await until(() => answer.length === 2);
    closeQuiet();
    answer[0]();
    await until(() => pipelined.received().split('slow').length === 2);
    closeQuiet();
    expect(pipelined.socket.destroyed).toBe(false);
    answer[1]();
    await until(() => pipelined.received().split('slow').length === 3);
    closeQuiet();
    await pipelined.closed;
  });
});
