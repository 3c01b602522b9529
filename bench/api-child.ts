/**
 * The API in a child process, as the benchmarks run it: the benchmark script forks itself with
 * `--serve`, the child serves on a free port and says where, and stops when told.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { readConfig } from '../src/config';
import { startServer } from '../src/server';

/** What the API child says of its own event loop and garbage collector since it was last asked to start counting. */
export interface ChildStats {
  /** Event-loop delay, ms (monitorEventLoopDelay at 1 ms resolution). */
  eventLoop: { p50: number; p99: number; max: number };
  /** Garbage-collection pauses: how many, and their total ms. */
  gc: { count: number; ms: number };
}

/**
 * The child's side: serves the API for the environment's configuration until told to stop; on
 * `stats-reset` starts counting its event-loop delay and GC pauses again, on `stats-pause` and
 * `stats-resume` stops and resumes counting (while the benchmark measures something else), on
 * `stats` sends them.
 */
export async function serveApi(): Promise<void> {
  const { url, stop } = await startServer(readConfig(), {}, 0);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const gc = { count: 0, ms: 0 };
  let counting = true;
  new PerformanceObserver((list) => {
    if (!counting) return;
    for (const entry of list.getEntries()) {
      gc.count += 1;
      gc.ms += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  process.send!({ url });
  process.on('message', (message) => {
    if (message === 'stop') void stop().then(() => process.exit(0));
    if (message === 'stats-reset') {
      delay.reset();
      gc.count = 0;
      gc.ms = 0;
    }
    if (message === 'stats-pause' && counting) {
      delay.disable();
      counting = false;
    }
    if (message === 'stats-resume' && !counting) {
      delay.enable();
      counting = true;
    }
    if (message === 'stats') {
      const stats: ChildStats = { eventLoop: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 }, gc: { ...gc } };
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
