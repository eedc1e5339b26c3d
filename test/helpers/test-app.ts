import { Type } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/bootstrap';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { createTestEnv, TestEnv } from './test-env';
import { HttpClient } from './http-client';
import { Closable, Closer } from './use-fixture';

export interface StartOptions {
  env?: TestEnv;
  vars?: Record<string, string>;
  extraModules?: Type[];
}

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  env: TestEnv;
  baseUrl: string;
  http: HttpClient;
  db: DataSource;
  /** Closes what it adopted, then the app (and, if it created it, drops the test's database and queue keys). */
  close(): Promise<void>;
  /** Has close() stop `thing` too, before the app: the spec's afterAll then needs only `t.close()`. */
  adopt<T extends Closable>(thing: T): T;
}

/**
 * Starts the real application in-process on 127.0.0.1 with a random port, exactly as `npm start`
 * builds it, against the spec file's own database and queue prefix.
 */
export async function startTestApp(opts: StartOptions = {}): Promise<TestApp> {
  const ownEnv = !opts.env;
  const env = opts.env ?? (await createTestEnv());
  const config = loadConfig({ ...env.vars, ...opts.vars });
  const app = await createApp(config, opts.extraModules);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const baseUrl = `http://127.0.0.1:${port}`;
  const adopted = new Closer();
  return {
    app,
    config,
    env,
    baseUrl,
    http: new HttpClient(baseUrl),
    db: app.get(DataSource),
    close: async () => {
      // receivers and providers first: a request hanging on one would hold the app's close up
      await adopted.close();
      await app.close();
      if (ownEnv) await env.drop();
    },
    adopt: (thing) => adopted.adopt(thing),
  };
}
