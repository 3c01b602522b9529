/**
 * What every benchmark shares: its entry point (`runBench`), the engine under a bench prefix, the
 * printed figures, the API and the loader in child processes, the sample hash, and `--split-cores`.
 */
import { execFileSync, fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../src/cli';
import { readConfig, type Config } from '../src/config';
import { Engine } from '../src/engine/client';
import { startServer } from '../src/server';
import packageJson from '../package.json';

export const repository = join(__dirname, '..');
export const out = (text = ''): void => void process.stdout.write(`${text}\n`);
export const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '-';
export const since = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;
export const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** POSTs `body` to `url`: JSON, or a string as it is with its `type`; gives up after `timeoutMs`. */
export function post(url: string, body: unknown, type = 'application/json', timeoutMs = 600_000): Promise<Response> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const signal = AbortSignal.timeout(timeoutMs);
  return fetch(url, { method: 'POST', headers: { 'content-type': type }, body: text, signal });
}

/** A mistake in how a bench was started (the CLIs' own UsageError): printed without a stack, exit code 2. */
export { UsageError };

/** Runs `main` when `module` is the script node started; prints what failed and exits 1 (2 for a UsageError). */
export function runBench(module: NodeModule, name: string, main: () => Promise<void>): void {
  if (require.main !== module) return;
  main().catch((error: Error) => {
    process.stderr.write(`${name}: ${error instanceof UsageError ? error.message : (error.stack ?? error)}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  });
}

/** The engine under `prefix`, once it answers; prints the bench's title, node and machine. */
export async function openBench(title: string, prefix: string): Promise<{ config: Config; engine: Engine }> {
  const config: Config = { ...readConfig(), ES_INDEX_PREFIX: prefix };
  const engine = new Engine(config);
  await engine.client.cluster.health({ wait_for_status: 'yellow', timeout: '30s' }).catch(() => {
    throw new UsageError(`no Elasticsearch answers on ${config.ES_URL}: start one with \`npm run es:start\``);
  });
  out(
    `${title}: node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), ` +
      `Elasticsearch at ${config.ES_URL}, prefix ${prefix}, ${new Date().toISOString()}`,
  );
  return { config, engine };
}

/**
 * The benchmarks' real molecules (`id<TAB>InChI<TAB>InChIKey`): the 500,000 of
 * scripts/make-bench-data.sh, or the file BENCH_500K names. BENCH_ROWS reads only its first rows.
 */
export function molecules(): { file: string; rows: number } {
  const file = process.env.BENCH_500K || '/tmp/chemwork/bench-500k.tsv';
  if (!existsSync(file)) {
    throw new UsageError(
      `${file} is missing: build it with \`bash scripts/make-bench-data.sh\` (as root, it ` +
        'installs openbabel; 3-4 minutes on 2 cores), or set BENCH_500K',
    );
  }
  return { file, rows: Number(process.env.BENCH_ROWS || Infinity) };
}

/** FNV-1a (32 bits) of `text`: the one hash the benches draw samples and spread data with. */
export function sampleHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/** A hash of `text` as a fraction in [0, 1). */
export const draw = (text: string): number => sampleHash(text) / 2 ** 32;

/**
 * The `size` values of lowest hash among those added: a fixed pseudo-random sample, the same
 * whatever the order they come in (a file's, or a load's).
 */
export class Sample<T> {
  private kept: { hash: number; value: T }[] = [];
  private limit = 2 ** 32;
  constructor(private readonly size: number) {}

  add(value: T, text: string): void {
    const hash = sampleHash(text);
    if (hash >= this.limit) return;
    this.kept.push({ hash, value });
    if (this.kept.length >= 4 * this.size) this.trim();
  }

  get values(): T[] {
    this.trim();
    return this.kept.map((k) => k.value);
  }

  private trim(): void {
    this.kept = this.kept.sort((a, b) => a.hash - b.hash).slice(0, this.size);
    if (this.kept.length === this.size) this.limit = this.kept[this.size - 1].hash;
  }
}

/** The API in a child process (this file with --serve), on a free port, request logs off. */
export type Api = { child: ChildProcess; url: string; stop: () => Promise<void> };

export async function startApi(env: NodeJS.ProcessEnv): Promise<Api> {
  const child = fork(__filename, ['--serve'], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the API child exited with code ${code} before listening`)));
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send('stop');
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(force);
  };
  return { child, url, stop };
}

if (require.main === module && process.argv.includes('--serve')) {
  void startServer(readConfig(), {}, 0).then(({ url, stop }) => {
    process.send!({ url });
    process.on('message', (message) => {
      if (message === 'stop') void stop().then(() => process.exit(0));
    });
  });
}

/** A file of /proc/<pid>, or '' once the process is gone. */
export function readProc(pid: number, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc; NaN once it is gone. */
export function processCpuSeconds(pid: number): number {
  const stat = readProc(pid, 'stat');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export type LoaderRun = { summary: Record<string, unknown>; peakRssMb: number; cpuSeconds: number };

/**
 * `npm run load -- <args>` under `prefix`, as that script runs it (node with the V8 flags of the load
 * script in package.json and tsx as a require hook, one process), its peak RSS (VmHWM) and CPU
 * polled from /proc.
 */
export async function runLoader(prefix: string, args: string[]): Promise<LoaderRun> {
  const heapFlags = (packageJson.scripts.load.match(/--[\w-]+(=\S+)?/g) ?? []) as string[];
  const loader = [...heapFlags, '--require', 'tsx/cjs', join(repository, 'loaders', 'cli.ts')];
  const child = spawn(process.execPath, [...loader, ...args, '--no-progress'], {
    cwd: repository,
    env: { ...process.env, ES_INDEX_PREFIX: prefix },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [peakKb, cpuSeconds, stdout, stderr] = [0, 0, '', ''];
  const timer = setInterval(() => {
    peakKb = Math.max(peakKb, Number(/VmHWM:\s+([0-9]+) kB/.exec(readProc(child.pid!, 'status'))?.[1] ?? 0));
    cpuSeconds = Math.max(cpuSeconds, processCpuSeconds(child.pid!) || 0);
  }, 100);
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(timer);
  const last = stdout.trim().split('\n').pop() ?? '';
  const why = last || stderr.trim().split('\n').slice(-3).join(' | ');
  if (code !== 0) throw new Error(`load ${args.join(' ')} exited with ${code}: ${why}`);
  return { summary: JSON.parse(last) as Record<string, unknown>, peakRssMb: peakKb / 1024, cpuSeconds };
}

/** CPU seconds every node of the engine has used so far. */
export async function engineCpuSeconds(engine: Engine): Promise<number> {
  const stats = (await engine.client.nodes.stats({ metric: ['process'] })) as unknown as {
    nodes: Record<string, { process: { cpu: { total_in_millis: number } } }>;
  };
  return Object.values(stats.nodes).reduce((sum, node) => sum + node.process.cpu.total_in_millis, 0) / 1000;
}

/** Waits until no node has a merge running (2 minutes at most), so one run's merges do not slow the next. */
export async function settle(engine: Engine): Promise<void> {
  for (let i = 0; i < 240; i += 1) {
    const stats = (await engine.client.nodes.stats({ metric: ['indices'], index_metric: ['merge'] })) as unknown as {
      nodes: Record<string, { indices: { merges: { current: number } } }>;
    };
    if (Object.values(stats.nodes).every((node) => node.indices.merges.current === 0)) return;
    await sleep(500);
  }
}

/** The pid of the engine's single node when it runs on this machine; throws otherwise. */
export async function localEnginePid(engine: Engine): Promise<number> {
  const info = (await engine.client.nodes.info({ metric: ['process'] })) as unknown as {
    nodes: Record<string, { process: { id: number } }>;
  };
  const ids = Object.values(info.nodes).map((node) => node.process.id);
  if (ids.length !== 1) throw new UsageError(`needs a single local engine node (found ${ids.length})`);
  // The pid is the engine's own: on another host it would name an unrelated local process.
  if (!readProc(ids[0], 'cmdline').includes('org.elasticsearch')) {
    throw new UsageError(`needs the engine on this machine: pid ${ids[0]} is not a local Elasticsearch`);
  }
  return ids[0];
}

/** Pins every thread of `pid` to `cores` (taskset's list syntax: "0", "1-3"). */
export function pin(pid: number, cores: string): void {
  execFileSync('taskset', ['-a', '-pc', cores, String(pid)], { stdio: ['ignore', 'ignore', 'inherit'] });
}

export type SplitCores = { engineCore: string; rest: string; restore: () => void };

/**
 * With `--split-cores`: the engine's threads on core 0, this process and the children it starts
 * (the loader, the API) on the others, as where the engine has a host of its own. Needs a local
 * engine, taskset and the right to change the engine's affinity. Prints the layout either way.
 */
export async function splitCoresIfAsked(engine: Engine): Promise<SplitCores | undefined> {
  if (!process.argv.includes('--split-cores')) {
    out('the engine, the bench and its children share every core (`-- --split-cores` gives the engine one of its own)');
    return undefined;
  }
  const count = cpus().length;
  if (count < 2) throw new UsageError('--split-cores needs at least two cores');
  const enginePid = await localEnginePid(engine);
  const rest = count === 2 ? '1' : `1-${count - 1}`;
  pin(enginePid, '0');
  pin(process.pid, rest);
  out(`--split-cores: the engine (pid ${enginePid}) on core 0, this bench and its children on ${rest}`);
  return {
    engineCore: '0',
    rest,
    // Best effort (spawnSync throws nothing): cleanup must not hide the error of a run.
    restore: () => {
      for (const pid of [enginePid, process.pid]) spawnSync('taskset', ['-a', '-pc', `0-${count - 1}`, String(pid)]);
    },
  };
}

/** Collects this process's garbage before a measured run (with node's --expose-gc, which the bench scripts pass). */
export const collectOwnGarbage = (): void => (globalThis as { gc?: () => void }).gc?.();
