import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Inject, Injectable, OnApplicationShutdown, Optional } from '@nestjs/common';
import { Piscina } from 'piscina';
import { OasApiError } from './oas-apis.errors';
import type { ValidationTask } from './oas-validation.worker';

/** How many documents are validated at once, for how long each, and how many may wait for a thread meanwhile. */
export interface ValidationLimits {
  /** Threads per API process. */
  threads: number;
  /** The longest one document may take on its thread; past it, the thread is stopped and the document refused. */
  runMs: number;
  /** The longest a document waits for a thread; past it, the request is answered 503 (the service is busy). */
  waitMs: number;
  /** Documents that may wait for a thread at once; one more is answered 503 straight away. */
  maxWaiting: number;
  /** The compiled worker (oas-validation.worker). */
  filename: string;
}

/** Injection token for other limits than the service's own (specs). */
export const OAS_VALIDATION_LIMITS = Symbol('OAS_VALIDATION_LIMITS');

/** The service's limits. */
export const VALIDATION_LIMITS: Omit<ValidationLimits, 'filename'> = {
  threads: 2,
  runMs: 10_000,
  // an ordinary document takes a few ms (the first on a thread about 50 ms more, to compile the OpenAPI schema): a
  // burst of dozens of writes (a deployment pipeline, a client racing its own writes) is served within seconds, even
  // on threads that start with it; the wait is what bounds a flood
  waitMs: 10_000,
  maxWaiting: 64,
};

/** An idle thread is ended after this long (a process that writes no definition keeps none). */
const IDLE_MS = 60_000;

/** The compiled worker: beside this file in the build; specs run the TypeScript sources, so the build's copy then. */
function workerFile(): string {
  const beside = join(__dirname, 'oas-validation.worker.js');
  if (existsSync(beside)) return beside;
  return join(__dirname, '..', '..', '..', 'dist', 'gateway', 'apis', 'oas-validation.worker.js');
}

/**
 * Validates OpenAPI documents on worker threads. Validation is synchronous CPU work that a document can make
 * arbitrarily long (nested `$ref`s expand exponentially as the validator dereferences them), and a few ms for an
 * ordinary one: on the request's thread it would stall every other request of the process meanwhile. Here it
 * holds one of a few threads, for at most `runMs` of its own time, counted from when the thread takes it up.
 * A document waits for a free thread at most `waitMs`, behind at most `maxWaiting` others; past either, the
 * request is answered 503 with Retry-After: the service is busy, the document is not at fault. The threads start
 * on first use.
 */
@Injectable()
export class OasValidationPool implements OnApplicationShutdown {
  private readonly limits: ValidationLimits;
  private pool?: Piscina<ValidationTask, string[]>;
  /** Threads given to a document (at most `threads`: the pool itself never queues). */
  private taken = 0;
  /** Documents waiting for a thread, first come first served. */
  private readonly waiting: (() => void)[] = [];

  constructor(@Optional() @Inject(OAS_VALIDATION_LIMITS) limits: Partial<ValidationLimits> = {}) {
    this.limits = { ...VALIDATION_LIMITS, filename: limits.filename ?? workerFile(), ...limits };
  }

  /** The reasons `body` is not an OpenAPI 3 document ([] when it is one); an OasApiError 503 when busy. */
  async reasons(body: unknown): Promise<string[]> {
    await this.takeThread();
    try {
      return await this.validate(body);
    } finally {
      this.giveThreadBack();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool?.destroy();
  }

  private takeThread(): Promise<void> {
    if (this.taken < this.limits.threads) {
      this.taken++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.maxWaiting) return Promise.reject(this.busy());
    return new Promise((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(turn), 1);
        reject(this.busy());
      }, this.limits.waitMs);
      this.waiting.push(turn);
    });
  }

  /** Hands the thread to the document that has waited longest, or frees it. */
  private giveThreadBack(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.taken--;
  }

  private async validate(body: unknown): Promise<string[]> {
    const { threads, runMs, filename } = this.limits;
    this.pool ??= new Piscina({ filename, minThreads: 0, maxThreads: threads, idleTimeout: IDLE_MS });
    // the clock starts when the thread says it has taken the document up: starting a thread is not the document's
    const { port1: started, port2 } = new MessageChannel();
    const abort = new AbortController();
    let settled = false;
    let limit: NodeJS.Timeout | undefined;
    started.once('message', () => {
      if (!settled) limit = setTimeout(() => abort.abort(), runMs);
    });
    try {
      return await this.pool.run({ body, started: port2 }, { signal: abort.signal, transferList: [port2] });
    } catch (err) {
      if (abort.signal.aborted) {
        return [`invalid OpenAPI document: not validated within ${runMs / 1000} s (are its $refs nested too deep?)`];
      }
      throw err;
    } finally {
      settled = true;
      clearTimeout(limit);
      started.close();
    }
  }

  /** A thread frees within `runMs` at the latest: the time to come back after. */
  private busy(): OasApiError {
    return OasApiError.validationBusy(Math.ceil(this.limits.runMs / 1000));
  }
}
