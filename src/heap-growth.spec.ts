import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ownHeapGrowth } from './heap-growth';

/** The build's copy, which `node dist/main.js` loads (`npm test` builds before it runs). */
const BUILT = join(__dirname, '..', 'dist', 'heap-growth.js');

/**
 * A process that keeps 400 000 objects and passes batches through its old generation (each lives across a few young
 * collections, then dies): how many full collections it ran, and its heap's peak, with or without the bound.
 */
function underLoad(bounded: boolean): { full: number; peakMB: number } {
  const program = `
    const { PerformanceObserver, constants } = require('node:perf_hooks');
    let full = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full++;
    }).observe({ entryTypes: ['gc'] });
    if (${bounded}) require(${JSON.stringify(BUILT)}).boundHeapGrowth();
    const kept = [];
    for (let i = 0; i < 4e5; i++) kept.push({ i, s: 'kept ' + i });
    const ring = new Array(64).fill(null);
    let peak = 0;
    for (let r = 0; r < 3000; r++) {
      const batch = [];
      for (let j = 0; j < 2000; j++) batch.push({ j, r, t: 'x' + j });
      ring[r % 64] = batch;
      if (r % 50 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    setTimeout(() => console.log(JSON.stringify({ full, peakMB: peak / 1e6 })), 50);
  `;
  return JSON.parse(execFileSync(process.execPath, ['-e', program], { encoding: 'utf8' })) as {
    full: number;
    peakMB: number;
  };
}

describe('heap growth', () => {
  it('keeps a factor node was started with, in either spelling, and sets its own otherwise', () => {
    expect(ownHeapGrowth(['--heap-growing-percent=80'])).toBe(true);
    expect(ownHeapGrowth(['--enable-source-maps', '--heap_growing_percent=80'])).toBe(true);
    expect(ownHeapGrowth(['--heap-growing-percent', '80'])).toBe(true);
    expect(ownHeapGrowth([])).toBe(false);
    expect(ownHeapGrowth(['--max-old-space-size=512', '--heap-growing-percentage=1'])).toBe(false);
  });

  // V8 has no getter for the factor; what shows is its effect on the same work: more full collections, a lower peak
  it('has a process that sets it collected sooner, and its heap stays smaller', () => {
    const free = underLoad(false);
    const bounded = underLoad(true);
    expect(bounded.full).toBeGreaterThan(free.full);
    expect(bounded.peakMB).toBeLessThan(free.peakMB);
  });
});
