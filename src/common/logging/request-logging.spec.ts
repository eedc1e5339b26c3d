import Fastify, { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { PinoLogger } from 'nestjs-pino';
import { storage } from 'nestjs-pino/storage';
import { loggerOptions, registerRequestLogging } from './request-logging';

/** A Fastify instance with the request logs, its lines kept as parsed JSON. */
async function appWithLogs(level: string): Promise<{ app: FastifyInstance; lines: Record<string, any>[] }> {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  const app = Fastify();
  app.addHook('onRequest', async (request) => {
    request.headers['x-request-id'] ??= 'generated-id';
  });
  registerRequestLogging(app, level, sink);
  // what the service logs while answering, through nestjs-pino as Nest's Logger does
  const logger = new PinoLogger({ pinoHttp: [loggerOptions(level), sink] });
  app.get('/portal-api/things', async () => {
    await new Promise((r) => setImmediate(r));
    logger.warn({ hook: { Secret: 'do-not-log' } }, 'something to say');
    return { ok: true };
  });
  app.get('/boom', async (_req, reply) => reply.code(503).send({ no: true }));
  app.get('/health', async () => ({ status: 'ok', inStore: storage.getStore() !== undefined }));
  app.get('/portal-api/store', async () => ({ inStore: storage.getStore() !== undefined }));
  await app.ready();
  return { app, lines };
}

describe('request logs', () => {
  it('logs an answered request at info with its id, method, path only, status and time', async () => {
    const { app, lines } = await appWithLogs('info');
    await app.inject({ url: '/portal-api/things?access_key=abc', headers: { 'x-request-id': 'rid-7' } });
    await app.inject({ url: '/health' });
    await app.close();
    const completed = lines.filter((l) => l.msg === 'request completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({
      level: 30,
      req: { id: 'rid-7', method: 'GET', url: '/portal-api/things?[redacted]' },
      res: { statusCode: 200 },
    });
    expect(Number.isInteger(completed[0].responseTime)).toBe(true);
    // what was logged while the request ran carries the request too, redacted
    expect(lines.find((l) => l.msg === 'something to say')).toMatchObject({
      level: 40,
      req: { id: 'rid-7', url: '/portal-api/things?[redacted]' },
      hook: { Secret: '[redacted]' },
    });
  });

  it('logs a 5xx as request errored, and nothing below the level', async () => {
    const { app, lines } = await appWithLogs('info');
    await app.inject({ url: '/boom', headers: { 'x-request-id': 'rid-8' } });
    await app.close();
    expect(lines.find((l) => l.msg === 'request errored')).toMatchObject({
      req: { id: 'rid-8' },
      res: { statusCode: 503 },
      err: { message: 'failed with status code 503' },
    });

    const quiet = await appWithLogs('warn');
    await quiet.app.inject({ url: '/portal-api/things' });
    await quiet.app.close();
    expect(quiet.lines.map((l) => l.msg)).toEqual(['something to say']);
    expect(quiet.lines[0].req).toEqual({ id: 'generated-id', method: 'GET', url: '/portal-api/things' });
  });

  it('runs probes and scrapes outside the per-request store (no promise hooks for a process that only answers them)', async () => {
    const { app } = await appWithLogs('info');
    expect((await app.inject({ url: '/health' })).json()).toEqual({ status: 'ok', inStore: false });
    expect((await app.inject({ url: '/portal-api/store' })).json()).toEqual({ inStore: true });
    await app.close();
  });
});
