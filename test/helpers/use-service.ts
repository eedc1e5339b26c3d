import { Type } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { Sql } from '../../src/database/sql';
import { DcrClient } from '../../src/portal/access-requests/dcr.client';
import { FakeIdp } from './fake-idp';
import { HttpClient } from './http-client';
import { AppInput, createApp, CreatedWebhook, createWebhook, portalClient } from './portal';
import { ServiceProcess } from './service-process';
import { Sink } from './sink';
import { startTestApp, TestApp } from './test-app';
import { createTestEnv, TestEnv } from './test-env';
import { Closable, Closer, useFixture } from './use-fixture';

export interface ServiceOptions {
  /** Variables of the spec's whole environment: the in-process app's and its `processes`'. */
  envVars?: Record<string, string>;
  /** Variables of the in-process app only (ROLE, ...), over `envVars`. */
  vars?: Record<string, string>;
  /** Nest modules added to the app (a probe controller). */
  extraModules?: Type[];
  /** A portal application made once the app is up, as `portalApp`, for access requests to hang on. */
  portalApp?: AppInput;
  /** A webhook receiver on loopback, as `sink`: true for 127.0.0.1, or the address to listen on ('::1'). */
  receiver?: boolean | string;
  /**
   * A fake dynamic client registration provider, as `idp`, that the service registers clients at (sending
   * `initialAccessToken` if given, and waiting at most `timeoutMs` on it); reset before each test.
   */
  idp?: boolean | { initialAccessToken?: string; timeoutMs?: number };
  /** More service processes (`node dist/main.js`) on the same database and queue prefix, each with these variables. */
  processes?: Record<string, string>[];
}

/** The service a spec runs against: the in-process app (a TestApp) and whatever the options asked for beside it. */
export interface Service extends TestApp {
  /** A client of the in-process app holding the portal API token. */
  portal: HttpClient;
  /** The portal application of `portalApp`. */
  portalApp: any;
  /** The webhook receiver of `receiver`. */
  sink: Sink;
  /**
   * Registers a webhook at a path of its own on the sink (`path`, also its Name), subscribed to
   * AccessRequestApproved unless `input` says otherwise.
   */
  webhook(input?: Record<string, unknown>): Promise<CreatedWebhook & { path: string }>;
  /** The fake provider of `idp`, and the service's client of it (whose time limit a spec may change). */
  idp: FakeIdp;
  dcr: DcrClient;
  /** The service processes of `processes`, in their order. */
  processes: ServiceProcess[];
  /**
   * Stops the processes, the receiver and the provider, then what the app adopted and the app; drops the database
   * and queue keys.
   */
  close(): Promise<void>;
}

/**
 * The set-up of a spec in one line: registers a beforeAll that starts the service (on the spec file's own database
 * and queue prefix) with what `opts` asks for, and an afterAll that stops it all; returns the service, to be read in
 * the describe's hooks and tests.
 */
export function useService(opts: ServiceOptions = {}): Service {
  const service = useFixture(() => startService(opts));
  // each test meets a provider that registers, whatever the one before it made it do
  if (opts.idp) beforeEach(() => service.idp.reset());
  return service;
}

/** What useService starts, for a test that starts a service of its own (and closes it). */
export async function startService(opts: ServiceOptions = {}): Promise<Service> {
  let env: TestEnv | undefined;
  let sink: Sink | undefined;
  let idp: FakeIdp | undefined;
  const started: (TestApp | ServiceProcess | undefined)[] = [];
  // the receiver and provider before the app: a request hanging on one would hold the app's close up
  const close = async () => {
    const [app, ...processes] = started.splice(0) as [TestApp?, ...(ServiceProcess | undefined)[]];
    // a process that failed to stop in time is reported once the rest is closed too
    let failed: unknown;
    for (const p of processes) await p?.close().catch((err: unknown) => (failed ??= err));
    await sink?.close();
    await idp?.close();
    await app?.close();
    await env?.drop();
    if (failed) throw failed;
  };
  try {
    env = await createTestEnv(opts.envVars);
    if (opts.receiver) sink = await Sink.start(opts.receiver === true ? undefined : opts.receiver);
    if (opts.idp) idp = await FakeIdp.start();
    const vars = { ...opts.vars, ...(idp && idpVars(opts, idp)) };
    const results = await Promise.allSettled([
      startTestApp({ env, vars, extraModules: opts.extraModules }),
      ...(opts.processes ?? []).map((more) => ServiceProcess.start({ ...env!.vars, ...more })),
    ]);
    started.push(...results.map((r) => (r.status === 'fulfilled' ? r.value : undefined)));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const app = started[0] as TestApp;
    const portal = portalClient(app);
    let webhooks = 0;
    return {
      ...app,
      portal,
      portalApp: opts.portalApp ? await createApp(portal, opts.portalApp) : missing('portalApp', 'portalApp'),
      sink: sink ?? missing('sink', 'receiver: true'),
      webhook: async (input = {}) => {
        if (!sink) throw new Error('useService: no receiver for webhook(); pass receiver: true');
        const path = `/w${++webhooks}`;
        return { ...(await createWebhook(portal, { Name: path, URL: sink.url(path), ...input })), path };
      },
      idp: idp ?? missing('idp', 'idp: true'),
      dcr: idp ? dcrClient(app, opts) : missing('dcr', 'idp: true'),
      processes: started.slice(1) as ServiceProcess[],
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface EnvFixture extends TestEnv {
  /** Has the fixture close `thing` (a process, a receiver) before it drops the database. */
  adopt<T extends Closable>(thing: T): T;
  /** A client of the spec's database, ended before the database is dropped. */
  client(): Promise<Client>;
}

/**
 * An environment of its own (database and queue prefix, `extra` in its variables) for a spec that runs the service
 * as processes, or not at all: created in a beforeAll, dropped in an afterAll once what it adopted is closed.
 */
export function useTestEnv(extra: Record<string, string> = {}): EnvFixture {
  return useFixture(async () => {
    const env = await createTestEnv(extra);
    const adopted = new Closer();
    return {
      ...env,
      adopt: <T extends Closable>(thing: T) => adopted.adopt(thing),
      client: async () => {
        const db = new Client({ connectionString: env.databaseUrl });
        await db.connect();
        adopted.adopt({ close: () => db.end() });
        return db;
      },
      close: async () => {
        await adopted.close();
        await env.drop();
      },
    };
  });
}

export interface DataSourceFixture {
  env: TestEnv;
  /** The spec's database, migrated (from the test template), through TypeORM as the app opens it. */
  db: DataSource;
  /** The raw-pg helper the stores use, on `db`. */
  sql: Sql;
  /** Has the fixture close `thing` (a query runner) before it closes `db`. */
  adopt<T extends Closable>(thing: T): T;
}

/**
 * A database of its own for a spec that calls stores, migrations or runners directly (no app): created in a
 * beforeAll, closed and dropped in an afterAll.
 */
export function useDataSource(): DataSourceFixture {
  return useFixture(async () => {
    const env = await createTestEnv();
    const db = new DataSource(dataSourceOptions(env.databaseUrl));
    try {
      await db.initialize();
    } catch (err) {
      await env.drop();
      throw err;
    }
    const adopted = new Closer();
    const sql = new Sql(db);
    return {
      env,
      db,
      sql,
      adopt: <T extends Closable>(thing: T) => adopted.adopt(thing),
      close: async () => {
        await adopted.close();
        await sql.onApplicationShutdown();
        await db.destroy();
        await env.drop();
      },
    };
  });
}

function idpVars(opts: ServiceOptions, idp: FakeIdp): Record<string, string> {
  const token = typeof opts.idp === 'object' ? opts.idp.initialAccessToken : undefined;
  return { DCR_REGISTRATION_ENDPOINT: idp.url, ...(token ? { DCR_INITIAL_ACCESS_TOKEN: token } : {}) };
}

function dcrClient(app: TestApp, opts: ServiceOptions): DcrClient {
  const dcr = app.app.get(DcrClient);
  const timeoutMs = typeof opts.idp === 'object' ? opts.idp.timeoutMs : undefined;
  if (timeoutMs !== undefined) dcr.timeoutMs = timeoutMs;
  return dcr;
}

/** A part the options did not ask for: any use of it says which option makes it. */
function missing(what: string, option: string): any {
  const refuse = () => {
    throw new Error(`useService: no ${what}; pass ${option}`);
  };
  return new Proxy(refuse, { get: refuse, apply: refuse, set: refuse });
}
