/**
 * The benchmark process's own garbage collection. A bench that drives one side of a comparison and
 * then waits (or drives lightly) through the other leaves garbage that V8 collects later, often once
 * the process goes quiet (its memory reducer): a full collection of a heap of hundreds of MB then
 * lands in the next measured run, on a core the engine or the measured process shares. Collecting
 * it before each run keeps it out of every run alike.
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

const pauses = { count: 0, ms: 0, full: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    pauses.count += 1;
    pauses.ms += entry.duration;
    if ((entry as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) pauses.full += 1;
  }
}).observe({ entryTypes: ['gc'] });

/** This process's GC pauses so far: how many, their milliseconds, how many were full collections. */
export function ownGcPauses(): { count: number; ms: number; full: number } {
  return { ...pauses };
}
