import { createServer, Server } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { openRawConnection } from '../../../test/helpers/raw-connection';
import { followQuietConnections } from './quiet-connections';

describe('followQuietConnections', () => {
  let server: Server;
  let closeQuiet: () => Promise<void>;
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

  /** A connection that has sent `first`; closed after the test. */
  const open = async (first?: string) => {
    const connection = await openRawConnection((server.address() as AddressInfo).port, first);
    sockets.push(connection.socket);
    return connection;
  };
  const until = async (holds: () => boolean) => {
    for (let i = 0; i < 200 && !holds(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(holds()).toBe(true);
  };

  it('closes the connections that carry no request, and one whose request is being answered once it is answered', async () => {
    const silent = await open();
    const halfSent = await open('GET /quick HTTP/1.1\r\nHost: x\r\n');
    const idle = await open('GET /quick HTTP/1.1\r\nHost: x\r\n\r\n');
    const busy = await open('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => idle.received().includes('quick') && answer.length === 1);

    await closeQuiet();
    await Promise.all([silent.closed, halfSent.closed, idle.closed]);
    expect(busy.socket.destroyed).toBe(false);
    answer[0]();
    // answered with keep-alive (the request began before the stop), and closed after it all the same
    await busy.closed;
    expect(busy.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*keep-alive[^]*slow$/i);
  });

  it('closes a connection whose requests are pipelined once the last of them is answered', async () => {
    const pipelined = await open('GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    // Node takes both requests at once and sends the second answer after the first
    await until(() => answer.length === 2);
    await closeQuiet();
    answer[0]();
    await until(() => pipelined.received().split('slow').length === 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pipelined.socket.destroyed).toBe(false);
    answer[1]();
    await pipelined.closed;
    expect(pipelined.received().split('slow').length).toBe(3);
  });

  it('answers a request that has arrived but not been read yet when the stop begins', async () => {
    // sent, and the stop begun, in one turn of the event loop: the server has not read it yet
    const late = await open('GET /quick HTTP/1.1\r\nHost: x\r\n\r\n');
    await closeQuiet();
    await late.closed;
    expect(late.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*quick$/);
  });
});
