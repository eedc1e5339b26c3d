/**
 * How far V8 lets a worker's old generation grow past what the last full collection kept, bounded.
 *
 * V8 lets the heap grow to up to 4 × what the last full collection kept before it collects again, a factor it chooses
 * from the speeds of collection and allocation. A worker keeps about 50 MB alive, and under load it allocates fast
 * and promotes what lives across a few young collections (a job, its statements and its request, for the tens of
 * milliseconds they take): in a throughput run of 10 000 deliveries it ran no full collection at all, its old
 * generation filled to about 130 MB, and its RSS peaked at 220–240 MB, of which about 80 MB was garbage. At 1.5 × it
 * collects every few thousand deliveries and peaks at about 180 MB. The bound is a factor, not a limit: a heap that
 * keeps more alive still grows with it.
 *
 * Only a worker's: an API process answering GETs as fast as it can collected so much more often that it answered
 * 8–10 % fewer of them (see BENCHMARKS.md), and its memory has no such growth to tame.
 */
import { setFlagsFromString } from 'node:v8';

/** The growth allowed past the heap a full collection kept, in percent of it. */
export const HEAP_GROWING_PERCENT = 50;

/** Whether node was started with a factor of its own (`node --heap-growing-percent=N dist/main.js`), which stands. */
export function ownHeapGrowth(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
}

/**
 * Sets V8's growth factor unless node was given its own. V8 reads it at every full collection, so it holds from the
 * next one on: main.ts calls this before it loads the application's modules.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (ownHeapGrowth(execArgv)) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
