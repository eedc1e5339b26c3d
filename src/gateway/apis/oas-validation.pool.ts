import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Piscina } from 'piscina';

/** Threads that validate OpenAPI documents, per API process. */
const THREADS = 2;
/** The longest one document may take to validate; past it, the thread is stopped and the document refused. */
const OAS_VALIDATION_TIMEOUT_MS = 10_000;
/** An idle thread is ended after this long (a process that writes no definition keeps none). */
const IDLE_MS = 60_000;

const VALIDATION_TIMED_OUT = `invalid OpenAPI document: not validated within ${OAS_VALIDATION_TIMEOUT_MS / 1000} s (are its $refs nested too deep?)`;

/** The compiled worker: beside this file in the build; specs run the TypeScript sources, so the build's copy then. */
function workerFile(): string {
  const beside = join(__dirname, 'oas-validation.worker.js');
  if (existsSync(beside)) return beside;
  return join(__dirname, '..', '..', '..', 'dist', 'gateway', 'apis', 'oas-validation.worker.js');
}

/**
 * Validates OpenAPI documents on worker threads. Validation is synchronous CPU work that a document can make
 * arbitrarily long (nested `$ref`s expand exponentially as the validator dereferences them), and about 50 ms for
 * an ordinary one: on the request's thread it would stall every other request of the process meanwhile. Here it
 * holds one of a few threads, for at most OAS_VALIDATION_TIMEOUT_MS. The threads start on first use.
 */
@Injectable()
export class OasValidationPool implements OnApplicationShutdown {
  private pool?: Piscina<unknown, string[]>;

  /** The reasons `body` is not an OpenAPI 3 document ([] when it is one). */
  async reasons(body: unknown): Promise<string[]> {
    this.pool ??= new Piscina({ filename: workerFile(), minThreads: 0, maxThreads: THREADS, idleTimeout: IDLE_MS });
    try {
      return await this.pool.run(body, { signal: AbortSignal.timeout(OAS_VALIDATION_TIMEOUT_MS) });
    } catch (err) {
      if (err instanceof Error && err.name === 'AbortError') return [VALIDATION_TIMED_OUT];
      throw err;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool?.destroy();
  }
}
