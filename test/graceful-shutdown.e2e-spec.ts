import { Agent, request } from 'undici';
import { seedUser } from './helpers/dashboard';
import { eventually } from './helpers/eventually';
import { openRawConnection } from './helpers/raw-connection';
import { TEST_SECRETS } from './helpers/test-env';
import { useService } from './helpers/use-service';

/**
 * SIGTERM while clients keep their connections busy: every request the service takes gets its route's answer
 * (the connection is closed after it), never a 5xx, and the process still exits promptly. Connections that carry no
 * request do not hold it up.
 */
describe('graceful shutdown', () => {
  // one process for each test, which stops it
  const t = useService({ processes: [{ ROLE: 'api' }, { ROLE: 'api', SHUTDOWN_TIMEOUT: '30s' }] });

  it('answers the requests still arriving on open connections while it stops, then exits', async () => {
    const key = (await seedUser(t, { org: 'acme' })).key;
    const service = t.processes[0];
    const agent = new Agent({ connections: 20, pipelining: 1, keepAliveTimeout: 30_000 });
    const statuses: Record<string, number> = {};
    const fivexx: string[] = [];
    let exited = false;
    const ask = async () => {
      try {
        const res = await request(`http://127.0.0.1:${service.port}/api/apis`, {
          headers: { authorization: `Bearer ${key}` },
          dispatcher: agent,
        });
        const body = await res.body.text();
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode >= 500) fivexx.push(body);
      } catch {
        // refused or reset once the server is gone: nothing was taken
        statuses.error = (statuses.error ?? 0) + 1;
      }
    };
    // warm every connection, then keep them busy while SIGTERM arrives
    await Promise.all(Array.from({ length: 20 }, ask));
    const started = Date.now();
    const busy = Promise.all(
      Array.from({ length: 20 }, async () => {
        while (!exited && Date.now() - started < 15_000) await ask();
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopping = Date.now();
    await service.close();
    exited = true;
    const stopMs = Date.now() - stopping;
    await busy;
    await agent.close();
    expect(fivexx).toEqual([]);
    expect(statuses['200']).toBeGreaterThan(20);
    expect(stopMs).toBeLessThan(10_000);
  }, 60_000);

  it('closes the connections that carry no request, and one whose request was under way once it is answered', async () => {
    const service = t.processes[1];
    const open = (first?: string) => openRawConnection(service.port, first);
    const silent = await open();
    const halfSent = await open('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const idle = await open('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // a request under way at the stop: its headers and half its body now, the rest once the stop has begun
    const underWay = await open(
      'POST /gateway/apis/oas HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `X-Gateway-Authorization: ${TEST_SECRETS.GATEWAY_SECRET}\r\nContent-Length: 2\r\n\r\n{`,
    );
    await eventually(async () => /^HTTP\/1\.1 200 /.test(idle.received()), 10_000, 'the idle one answered');

    const stopping = Date.now();
    const exited = service.signalAndWait('SIGTERM');
    // the stop has begun once the service takes no new connection
    await eventually(
      async () =>
        !(await open()
          .then(({ socket }) => (socket.destroy(), true))
          .catch(() => false)),
      10_000,
      'no new connection taken',
    );
    underWay.socket.write('}');
    // before, the first two held the stop until SHUTDOWN_TIMEOUT (30 s here), which then exited with 1; so did the
    // one under way, answered with keep-alive (72 s)
    const code = await exited;
    const stopMs = Date.now() - stopping;
    expect(service.output).not.toContain('did not stop');
    expect(code).toBeNull(); // it died of the signal, as without a handler: a clean stop
    expect(stopMs).toBeLessThan(10_000);
    await Promise.all([silent.closed, halfSent.closed, idle.closed, underWay.closed]);
    // answered by its route (an empty document is not an API definition)
    expect(underWay.received()).toMatch(/^HTTP\/1\.1 400 [^]*"status":"error"/);
  }, 60_000);
});
