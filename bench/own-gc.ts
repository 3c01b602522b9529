/**
 * The benchmark process's own garbage collection. A bench that drives the ceiling itself leaves the
 * garbage of its requests for V8 to collect later, in a later measured run, on a core that the
 * loader (bench:load) or the engine (bench:api's half-peak service runs) needs. Collecting it
 * before each run keeps it out of every run alike; `ownGcPauses` tells what GC is left in a run.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A full collection of this process's heap, now. */
export function collectOwnGarbage(): void {
  gc();
}

const pauses = { ms: 0, full: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    pauses.ms += entry.duration;
    if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) pauses.full += 1;
  }
}).observe({ entryTypes: ['gc'] });

/** This process's GC pauses so far: their milliseconds, and how many were full collections. */
export function ownGcPauses(): { ms: number; full: number } {
  return { ...pauses };
}
