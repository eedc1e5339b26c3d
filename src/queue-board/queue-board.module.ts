import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import { BullModule, InjectQueue } from '@nestjs/bullmq';
import { Logger, Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { contentSecurityPolicy, cspHash, pageSecurityHeaders } from '../common/http/page-security';
import { AppConfig } from '../config';
import { QueueModule, RedisConnection } from '../queue/queue.module';
import { closeQueueAtStop, DELIVERY_QUEUE } from '../webhooks/delivery.queue';
import { requireAdminSecret } from './basic-auth';
import { answerUnavailableAfter } from './board-deadline';
import { refuseCrossSiteWrites } from './same-origin';
import { BOARD_FONTS_DIR, BOARD_FONTS_STYLESHEET, boardFonts } from './board-fonts';

export const QUEUE_BOARD_PATH = '/queues';

/** The installed Bull Board UI: the board serves its page from here, and the policy hashes its styles. */
export function bullBoardUiPath(): string {
  return dirname(require.resolve('@bull-board/ui/package.json'));
}

/**
 * Hashes of the inline styles of Bull Board's page (its loading screen, and the <style> of an icon the UI
 * renders), so the page's policy allows exactly those and no other inline style. Read from the installed
 * UI package, so an upgrade stays correct; the browser spec notices any style they miss.
 */
export function bullBoardStyleHashes(uiBasePath = bullBoardUiPath()): string[] {
  const ui = join(uiBasePath, 'dist');
  const template = readFileSync(join(ui, 'index.ejs'), 'utf8');
  const styles = new Set<string>();
  for (const m of template.matchAll(/\sstyle="([^"]*)"/g)) styles.add(m[1]);
  for (const m of template.matchAll(/<style>([\s\S]*?)<\/style>/g)) styles.add(m[1]);
  const scripts = join(ui, 'static', 'js');
  for (const file of readdirSync(scripts).filter((f) => f.endsWith('.js'))) {
    for (const m of readFileSync(join(scripts, file), 'utf8').matchAll(/"style",\{children:`([^`$\\]*)`\}/g))
      styles.add(m[1]);
  }
  return [...styles].map(cspHash);
}

/**
 * Bull Board for queue operators at /queues, behind HTTP Basic with the admin secret as the password. Its page asks
 * Google Fonts for its typefaces; it gets them from this process instead (see board-fonts.ts), so the page makes no
 * request that leaves the machine and its policy stays `'self'` only.
 */
@Module({
  imports: [QueueModule, BullModule.registerQueue({ name: DELIVERY_QUEUE })],
})
export class QueueBoardModule implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(QueueBoardModule.name);

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: AppConfig,
    @InjectQueue(DELIVERY_QUEUE) private readonly deliveries: Queue,
    private readonly redis: RedisConnection,
  ) {}

  /** The board's own connection to the queue, closed before BullModule would (see closeQueueAtStop). */
  async onApplicationShutdown(): Promise<void> {
    await closeQueueAtStop(this.deliveries, this.redis, this.logger);
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const uiBasePath = bullBoardUiPath();
    const board = new BullBoardFastifyAdapter();
    board.setBasePath(QUEUE_BOARD_PATH);
    createBullBoard({
      queues: [new BullMQAdapter(this.deliveries)],
      serverAdapter: board,
      options: { uiBasePath, uiConfig: { boardTitle: 'Gateway queues', hideDocsLink: true } },
    });
    const csp = contentSecurityPolicy({ styleHashes: bullBoardStyleHashes(uiBasePath), baseUri: "'self'" });
    const fonts = boardFonts(readFileSync(join(uiBasePath, 'dist', 'index.ejs'), 'utf8'));
    if (fonts.missing.length)
      this.logger.warn(
        { families: fonts.missing },
        'no local copy of fonts the queue board asks for; it uses its fallback',
      );
    void fastify.register(async (scope) => {
      scope.addHook('onRequest', requireAdminSecret(this.config.secrets.admin));
      scope.addHook('onRequest', refuseCrossSiteWrites());
      // a call of the board's API that Redis does not answer (away) is a 503 in time, not a wait as long as the outage
      scope.addHook('onRequest', answerUnavailableAfter(`${QUEUE_BOARD_PATH}/api/`));
      scope.addHook('onSend', pageSecurityHeaders(csp));
      // the board's page and its API answer what the admin secret reads: no cache keeps them (its files and fonts
      // say how long they keep)
      scope.addHook('onSend', async (_req, reply, payload) => {
        if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
        return payload;
      });
      scope.addHook('onSend', async (_req, reply, payload) => {
        const html = typeof payload === 'string' && /^text\/html/.test(String(reply.getHeader('content-type')));
        return html ? fonts.rewrite(payload) : payload;
      });
      const fontsPath = `${QUEUE_BOARD_PATH}/${BOARD_FONTS_DIR}`;
      scope.get(`${fontsPath}/${BOARD_FONTS_STYLESHEET}`, async (_req, reply) =>
        reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=86400').send(fonts.stylesheet),
      );
      scope.get<{ Params: { file: string } }>(`${fontsPath}/:file`, async (req, reply) => {
        const file = fonts.files.get(req.params.file);
        if (!file) return reply.code(404).type('text/plain; charset=utf-8').send('Not Found');
        return reply
          .type(file.endsWith('.woff2') ? 'font/woff2' : 'font/woff')
          .header('cache-control', 'public, max-age=86400')
          .send(createReadStream(file));
      });
      await scope.register(board.registerPlugin(), { prefix: QUEUE_BOARD_PATH });
    });
  }
}
