/**
 * How far V8 lets the old generation grow past what the last full collection kept, bounded. main.ts requires this
 * file first, so that the bound holds from the first collection on.
 *
 * V8 lets the heap grow to up to 4 × what the last full collection kept before it collects again, a factor it chooses
 * from the speeds of collection and allocation. A process of this service keeps about 50 MB alive, and under load it
 * allocates fast and promotes what lives across a few young collections (a job, its statements and its request, for
 * the tens of milliseconds they take): in a throughput run of 10 000 deliveries the worker ran no full collection at
 * all, its old generation filled to about 130 MB, and its RSS peaked at 220–240 MB, of which about 80 MB was garbage.
 * At 1.5 × it collects every few thousand deliveries, for about 10–50 ms each (most of it on V8's own threads), and
 * peaks at about 180 MB with the same CPU per delivery (see BENCHMARKS.md). The bound is a factor, not a limit: a
 * heap that keeps more alive still grows with it.
 */
import { setFlagsFromString } from 'node:v8';

/** The growth allowed past the heap a full collection kept, in percent of it. */
export const HEAP_GROWING_PERCENT = 50;

/** Whether node was started with a factor of its own (`node --heap-growing-percent=N dist/main.js`), which stands. */
export function ownHeapGrowth(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg));
}

/** Sets V8's growth factor (V8 reads it at every full collection) unless node was given its own. */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (ownHeapGrowth(execArgv)) return false;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}

boundHeapGrowth();
