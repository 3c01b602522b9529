// `--split-cores` for the benchmarks: the engine's threads on the first core, this process (and the
// children it starts: the loader, the API) on the others, as in a deployment where Elasticsearch
// has a host of its own. Without it, everything shares every core. Needs a local engine, taskset
// (util-linux) and the right to change the engine's affinity (root, or the engine's own user).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, setPriority } from 'node:os';
import type { Engine } from '../src/engine/client';

export const splitCoresRequested = (): boolean => process.argv.includes('--split-cores');

/** Pins the engine to core 0 and this process to the rest; returns what undoes it. */
export async function splitCores(engine: Engine): Promise<{ describe: string; engineCore: string; rest: string; restore: () => void }> {
  const count = cpus().length;
  if (count < 2) throw new Error('--split-cores needs at least two cores');
  const enginePid = await localEnginePid(engine).catch((error: Error) => { throw new Error(`--split-cores ${error.message}`); });
  const all = `0-${count - 1}`;
  const rest = count === 2 ? '1' : `1-${count - 1}`;
  pin(enginePid, '0');
  pin(process.pid, rest);
  return {
    engineCore: '0',
    rest,
    describe: `engine (pid ${enginePid}) on core 0, this benchmark and its children on core${count === 2 ? '' : 's'} ${rest}`,
    // Best effort: an engine restarted meanwhile has a new pid, and cleanup must not hide a run's error.
    restore: () => {
      for (const pid of [enginePid, process.pid]) {
        try { pin(pid, all); } catch { process.stderr.write(`could not restore the affinity of pid ${pid}\n`); }
      }
    },
  };
}

/** Pins every thread of `pid` (the engine's, this process's helper threads: taskset -a) to `cores` (taskset's list syntax: "0", "1-3"). */
export function pin(pid: number, cores: string): void {
  execFileSync('taskset', ['-a', '-pc', cores, String(pid)], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The pid of the engine's single node when it runs on this machine (for taskset and jcmd); throws otherwise. */
export async function localEnginePid(engine: Engine): Promise<number> {
  const info = await engine.client.nodes.info({ metric: ['process'] }) as unknown as { nodes: Record<string, { process: { id: number } }> };
  const ids = Object.values(info.nodes).map((node) => node.process.id);
  if (ids.length !== 1) throw new Error(`needs a single local engine node (found ${ids.length})`);
  const [enginePid] = ids;
  // The pid is the engine's own: on another host it would name an unrelated local process.
  const command = (() => { try { return readFileSync(`/proc/${enginePid}/cmdline`, 'utf8'); } catch { return ''; } })();
  if (!command.includes('org.elasticsearch')) throw new Error(`needs the engine on this machine: pid ${enginePid} is not a local Elasticsearch`);
  return enginePid;
}

/**
 * Gives every thread of `pid` the nice value `nice` (Linux sets it per thread: setpriority on a pid
 * reaches only its main thread). A negative value needs root.
 */
export function niceThreads(pid: number, nice: number): void {
  for (const thread of readdirSync(`/proc/${pid}/task`)) setPriority(Number(thread), nice);
}

/**
 * Gives every thread of `pid` the scheduling policy `policy` (chrt, util-linux). A `batch` thread
 * does not take the core from a running one when it wakes, and runs when that one waits; an `idle`
 * one runs only when nothing else would.
 */
export function scheduleThreads(pid: number, policy: 'batch' | 'idle'): void {
  execFileSync('chrt', [`--${policy}`, '--all-tasks', '--pid', '0', String(pid)], { stdio: ['ignore', 'ignore', 'inherit'] });
}
