import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import { Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { contentSecurityPolicy, pageSecurityHeaders } from '../common/http/page-security';

export const CONSOLE_PATH = '/console';

/**
 * Where `npm run build` puts the console's bundle: dist/console-ui, beside this module's compiled
 * folder (dist/console); from the TypeScript sources (tests), the build output of the repository.
 */
export function consoleBundleDir(): string | undefined {
  const candidates = [join(__dirname, '..', 'console-ui'), join(__dirname, '..', '..', 'dist', 'console-ui')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/**
 * The operator console: a static single-page app under /console that talks to the service only through
 * the public portal routes, with the operator's portal token. It has no routes of its own beyond its files.
 */
@Module({})
export class ConsoleModule implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const root = consoleBundleDir();
    void fastify.register(async (scope) => {
      scope.addHook('onSend', pageSecurityHeaders(contentSecurityPolicy()));
      if (!root) {
        const notBuilt = async (_req: FastifyRequest, reply: FastifyReply) =>
          reply.code(503).type('text/plain; charset=utf-8').send('The console is not built: run `npm run build`.\n');
        scope.get(CONSOLE_PATH, notBuilt);
        scope.get(`${CONSOLE_PATH}/*`, notBuilt);
        return;
      }
      await scope.register(fastifyStatic, {
        root,
        prefix: CONSOLE_PATH,
        redirect: true,
        decorateReply: false,
        index: ['index.html'],
        // file names under assets/ carry a content hash; the page itself must always be fresh
        setHeaders: (res, path) => {
          res.header(
            'cache-control',
            path.includes(join('console-ui', 'assets')) ? 'public, max-age=31536000, immutable' : 'no-cache',
          );
        },
      });
    });
  }
}
