/**
 * The API in a child process, as the benchmarks run it: the benchmark script forks itself with
 * `--serve`, the child serves on a free port and says where, and stops when told.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver, type ELDHistogram, type PerformanceEntry } from 'node:perf_hooks';
import { readConfig } from '../src/config';
import { startServer } from '../src/server';

/** What the API child says of its own event loop and garbage collector since it was last asked to start counting. */
export interface ChildStats {
  /** Event-loop delay, ms (monitorEventLoopDelay at 1 ms resolution; over several stretches, their percentiles' mean weighted by samples). */
  eventLoop: { p50: number; p99: number; max: number };
  /** Garbage-collection pauses: how many, their total ms and the longest; of them, the full (mark-compact) collections. */
  gc: { count: number; ms: number; longest: number; major: { count: number; ms: number } };
  /**
   * The main thread and the core (Linux schedstat): ms it ran, ms it was ready but waited for the
   * core (run-queue delay), and how often the scheduler took the core from it (involuntary context
   * switches, of the whole process).
   */
  core: CoreTimes;
}

interface CoreTimes { runMs: number; waitMs: number; preempted: number }

const noCoreTime = (): CoreTimes => ({ runMs: 0, waitMs: 0, preempted: 0 });

/** The main thread's core times so far (zeros where /proc does not tell them). */
function coreTimesNow(): CoreTimes {
  try {
    const [run, wait] = readFileSync('/proc/self/schedstat', 'utf8').split(' ').map(Number);
    const preempted = Number(/nonvoluntary_ctxt_switches:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
    return { runMs: run / 1e6, waitMs: wait / 1e6, preempted };
  } catch {
    return noCoreTime();
  }
}

/**
 * The child's side: serves the API for the environment's configuration until told to stop; on
 * `stats-reset` starts counting its event-loop delay and GC pauses again, on `stats-pause` and
 * `stats-resume` stops and resumes counting (while the benchmark measures something else), on
 * `stats` sends them.
 */
export async function serveApi(): Promise<void> {
  const { url, stop } = await startServer(readConfig(), {}, 0);
  // One delay monitor per counting stretch: a monitor disabled and enabled again would take the
  // whole pause for one delay.
  let stretches: ELDHistogram[] = [];
  let current: ELDHistogram | undefined;
  // Core times: summed over the counting stretches, each from where it started (or was last added).
  let core = noCoreTime();
  let coreAtStart = noCoreTime();
  const addStretchCore = (): void => {
    const now = coreTimesNow();
    core = { runMs: core.runMs + now.runMs - coreAtStart.runMs, waitMs: core.waitMs + now.waitMs - coreAtStart.waitMs, preempted: core.preempted + now.preempted - coreAtStart.preempted };
    coreAtStart = now;
  };
  const startStretch = (): void => {
    current = monitorEventLoopDelay({ resolution: 1 });
    current.enable();
    stretches.push(current);
    coreAtStart = coreTimesNow();
  };
  startStretch();
  const noGc = (): ChildStats['gc'] => ({ count: 0, ms: 0, longest: 0, major: { count: 0, ms: 0 } });
  let gc = noGc();
  new PerformanceObserver((list) => {
    if (!current) return;
    for (const entry of list.getEntries()) {
      gc.count += 1;
      gc.ms += entry.duration;
      gc.longest = Math.max(gc.longest, entry.duration);
      if ((entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.major.count += 1;
        gc.major.ms += entry.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  process.send!({ url });
  process.on('message', (message) => {
    if (message === 'stop') void stop().then(() => process.exit(0));
    if (message === 'stats-reset') {
      current?.disable();
      stretches = [];
      startStretch();
      gc = noGc();
      core = noCoreTime();
    }
    if (message === 'stats-pause' && current) {
      current.disable();
      current = undefined;
      addStretchCore();
    }
    if (message === 'stats-resume' && !current) startStretch();
    if (message === 'stats') {
      // Percentiles of several stretches: their means, weighted by samples; the max, of all.
      const samples = stretches.reduce((sum, h) => sum + h.count, 0) || 1;
      const weighted = (p: number): number => stretches.reduce((sum, h) => sum + (h.count ? h.percentile(p) * h.count : 0), 0) / samples / 1e6;
      const max = Math.max(0, ...stretches.map((h) => (h.count ? h.max : 0))) / 1e6;
      if (current) addStretchCore();
      const stats: ChildStats = { eventLoop: { p50: weighted(50), p99: weighted(99), max }, gc, core };
      process.send!({ stats });
    }
  });
}

/** The child's stats since `stats-reset` (see serveApi). */
export function childStats(child: ChildProcess): Promise<ChildStats> {
  return new Promise((resolve) => {
    const listener = (message: unknown): void => {
      const stats = (message as { stats?: ChildStats } | null)?.stats;
      if (!stats) return;
      child.off('message', listener);
      resolve(stats);
    };
    child.on('message', listener);
    child.send('stats');
  });
}

/** Forks `script` with `--serve` and `env` (request logs off); resolves once the API listens. */
export async function startApiChild(script: string, env: NodeJS.ProcessEnv, execArgv = process.execArgv): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(script, ['--serve'], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, execArgv });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the API child exited with code ${code} before listening`)));
  });
  return { child, url };
}

/** Stops the API child (its graceful stop; killed after 15 s) and waits until it is gone. */
export async function stopApiChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send('stop');
  const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(force);
}
