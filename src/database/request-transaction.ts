import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';

/** Work to run once a transaction has committed, or once it has rolled back. */
export type TransactionHook = () => unknown;

const storage = new AsyncLocalStorage<RequestTransaction>();
const logger = new Logger('RequestTransaction');

/**
 * One transaction for every write of one request, committed by whoever opened it (a request with an
 * Idempotency-Key, which stores its answer in it: see IdempotentRequests). While one is open, `Sql.transaction`,
 * `Sql.write` and their TypeORM counterparts join it instead of committing on their own. It is begun at the first
 * statement, so an outside call made before any write (an identity provider) holds no pooled connection.
 */
export class RequestTransaction {
  private starting?: Promise<QueryRunner>;
  private readonly onCommit: TransactionHook[] = [];
  private readonly onRollback: TransactionHook[] = [];
  private state: 'waiting' | 'open' | 'committed' | 'rolled back';
  /** A piece of work joined to it threw: what it wrote cannot be told apart, so the whole may only roll back. */
  failed = false;

  /** With `opened` false, it is not the current one of what runs in it (nothing joins it) until open() is called. */
  constructor(
    private readonly db: DataSource,
    { opened = true }: { opened?: boolean } = {},
  ) {
    this.state = opened ? 'open' : 'waiting';
  }

  /** Makes a transaction made with `opened` false the current one of what runs in it from now on. */
  open(): void {
    if (this.state === 'waiting') this.state = 'open';
  }

  /** The transaction of the request being served, if one is open. */
  static current(): RequestTransaction | undefined {
    const tx = storage.getStore();
    return tx?.state === 'open' ? tx : undefined;
  }

  /** Runs `fn` with this transaction as the current one of everything it calls. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return storage.run(this, fn);
  }

  /** Whether a statement has run in it (and so a connection is held). */
  get begun(): boolean {
    return this.starting !== undefined;
  }

  /** The transaction's connection, beginning it on first use. */
  private begin(): Promise<QueryRunner> {
    if (this.state !== 'open') return Promise.reject(new Error(`the request transaction is already ${this.state}`));
    this.starting ??= (async () => {
      const runner = this.db.createQueryRunner('master');
      try {
        await runner.connect();
        await runner.startTransaction();
      } catch (err) {
        await runner.release().catch(() => undefined);
        throw err;
      }
      return runner;
    })();
    return this.starting;
  }

  /** One statement inside the transaction, on its pg connection (rows as pg returns them). */
  async query<R = Record<string, any>>(text: string, params: unknown[] = []): Promise<R[]> {
    const runner = await this.begin();
    const client = (runner as unknown as { databaseConnection: PoolClient }).databaseConnection;
    return (await client.query(text, params)).rows as R[];
  }

  /** One write statement inside the transaction: how many rows it changed. */
  async execute(text: string, params: unknown[] = []): Promise<number> {
    const runner = await this.begin();
    const client = (runner as unknown as { databaseConnection: PoolClient }).databaseConnection;
    return (await client.query(text, params)).rowCount ?? 0;
  }

  /** The TypeORM manager bound to the transaction. */
  async manager(): Promise<EntityManager> {
    return (await this.begin()).manager;
  }

  /** Runs a piece of work joined to this transaction; if it throws, the transaction is marked failed. */
  async join<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      this.failed = true;
      throw err;
    }
  }

  afterCommit(fn: TransactionHook): void {
    this.onCommit.push(fn);
  }

  afterRollback(fn: TransactionHook): void {
    this.onRollback.push(fn);
  }

  /**
   * Runs `last` as the transaction's final statement and commits if it returns true. When `last` returns false,
   * nothing is committed and the caller should roll back. A transaction that was never begun has nothing to
   * commit: `last` gets null and runs its statement on its own. The commit hooks wait for runAfterCommit.
   */
  async commitWith(last: (tx: RequestTransaction | null) => Promise<boolean>): Promise<boolean> {
    if (!this.begun) {
      if (!(await last(null))) return false;
      this.state = 'committed';
      return true;
    }
    if (!(await last(this))) return false;
    const runner = await this.begin();
    await runner.commitTransaction();
    this.state = 'committed';
    await runner.release();
    return true;
  }

  /** Rolls back whatever was written (if anything was) and runs the rollback hooks; never throws. */
  async rollback(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'rolled back';
    const runner = await this.starting?.catch(() => undefined);
    if (runner) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      if (!runner.isReleased) await runner.release().catch(() => undefined);
    }
    await runHooks(this.onRollback, 'after a rollback');
  }

  /** Runs the commit hooks, once commitWith has committed; a hook that fails is logged, never thrown. */
  async runAfterCommit(): Promise<void> {
    await runHooks(this.onCommit, 'after a commit');
  }
}

async function runHooks(hooks: TransactionHook[], when: string): Promise<void> {
  for (const hook of hooks.splice(0)) {
    try {
      await hook();
    } catch (err) {
      logger.warn({ err }, `work to do ${when} failed`);
    }
  }
}
