/** Processes as /proc shows them: what the benchmarks read a child's memory and CPU from. */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A file of /proc/<pid>, or undefined once the process is gone. */
export function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** Every descendant of `root` (from the parent pid in /proc/<pid>/stat). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const stat = readProc(Number(entry), 'stat');
    if (!stat) continue;
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const walk = (pid: number): void => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

/**
 * CPU milliseconds each thread pool of a local Elasticsearch has used so far (`write`,
 * `transport_worker`, `GC`, `JIT`, ...), from `jcmd <pid> Thread.print` run as the engine's own user. Node stats
 * time indexing, merges and searches, not what the engine spends receiving and parsing requests, in
 * garbage collection or in its compilers: this does. Threads that ended are missing from a later
 * reading (a scaling pool retires idle threads after minutes, longer than a benchmark's phase).
 */
export function engineThreadCpu(pid: number): Record<string, number> {
  const exe = realpathSync(`/proc/${pid}/exe`);
  const uid = /^Uid:\s+([0-9]+)/m.exec(readProc(pid, 'status') ?? '')?.[1];
  if (!uid) throw new Error(`pid ${pid} is gone`);
  const user = execFileSync('id', ['-nu', uid], { encoding: 'utf8' }).trim();
  const dump = execFileSync('runuser', ['-u', user, '--', join(dirname(exe), 'jcmd'), String(pid), 'Thread.print'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const pools: Record<string, number> = {};
  for (const match of dump.matchAll(/^"([^"]+)".* cpu=([0-9.]+)ms/gm)) {
    const pool = poolOf(match[1]);
    pools[pool] = (pools[pool] ?? 0) + Number(match[2]);
  }
  return pools;
}

/** `elasticsearch[node][write][T#2]` → `write`; the JVM's collector threads → `GC`; its compilers → `JIT`. */
function poolOf(thread: string): string {
  const pool = /^elasticsearch\[[^\]]*\]\[([^\]]+)\]/.exec(thread)?.[1];
  if (pool) return pool;
  if (/^(GC Thread|G1 |VM Thread)/.test(thread)) return 'GC';
  if (/CompilerThread/.test(thread)) return 'JIT';
  return 'other';
}
