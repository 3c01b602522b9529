// Benchmark of `npm run load` (issue 4): the distinct loadable structures of the 500,000 real
// molecules of ../shared/data/make-samples.sh, assigned to 20 sources (about 1.6 million
// assignments), written as a UniChem dump and loaded by the real loader in a child process, whose
// peak RSS is polled from /proc. The same documents are then pushed by a minimal bulk script (the
// client's bulk helper, same mappings, documents serialised beforehand): the ceiling. Each phase runs
// loader, ceiling, ceiling, loader into indices of their own. Prints rows/s of each phase (means),
// the ratio loader/ceiling, peak RSS, and on-disk bytes per compound and per
// assignment after a force merge, projected to UniChem's scale. Every bench index is deleted at the
// end. Run with `npm run bench:load` (BENCH_500K names the molecule file, BENCH_LOAD_WARMUPS the
// untimed loads before each phase, 2; `-- --split-cores` gives the
// engine a core of its own, bench/cores.ts; with it, `--neighbour` also runs the structures ceiling
// beside a process that streams memory, or only spins, on the loader's core).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { descendants, engineThreadCpu, readProc } from './proc';
import { collectOwnGarbage, ownGcPauses } from './own-gc';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { readConfig, type Config } from '../src/config';
import { compoundDocument } from '../src/domain/compound';
import { Engine, mappingOf, type MappingName } from '../src/engine/client';
import { assignmentId } from '../src/engine/assignments';
import { Reject } from '../loaders/run';
import { checkStructure } from '../loaders/structure-rules';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { localEnginePid, splitCores, splitCoresRequested } from './cores';

const moleculesFile = process.env.BENCH_500K || '/tmp/chemwork/bench-500k.tsv';
const sharedData = join(__dirname, '..', '..', 'shared', 'data');
const repository = join(__dirname, '..');

/**
 * The fraction of all structures each of the 20 sources holds (the first 20 rows of UniChem's source
 * table, in its order). They sum to 3.15: about 1.57 million current assignments for 499,850
 * structures, plus an obsolete id (ASSIGMENT 0) for about 3 % of them.
 */
const coverage = [0.97, 0.55, 0.35, 0.30, 0.22, 0.18, 0.12, 0.10, 0.08, 0.06, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02, 0.01, 0.01, 0.01, 0.005];
const obsoleteShare = 0.03;

// ---------------------------------------------------------------------------------------------
// The data set

interface Structures {
  inchis: string[];
  keys: string[];
  connectivityBlocks: string[];
  /** The compound documents as the loader builds them, serialised, for the ceiling. */
  documents: string[];
  rowsRead: number;
  rowsWithoutInchi: number;
  duplicates: number;
  rejectedByReason: Record<string, number>;
}

/** Every distinct structure of the molecule file that passes the loading rules, UCI = position + 1. */
export async function readStructures(file: string, maxInchiLength: number): Promise<Structures> {
  const set: Structures = { inchis: [], keys: [], connectivityBlocks: [], documents: [], rowsRead: 0, rowsWithoutInchi: 0, duplicates: 0, rejectedByReason: {} };
  const seen = new Set<string>();
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    set.rowsRead += 1;
    const [, inchi, key] = line.split('\t');
    if (!inchi || !inchi.startsWith('InChI=')) {
      set.rowsWithoutInchi += 1;
      continue;
    }
    try {
      const checked = checkStructure(inchi, key, maxInchiLength);
      if (seen.has(checked.standardInchiKey)) {
        set.duplicates += 1;
        continue;
      }
      seen.add(checked.standardInchiKey);
      const uci = set.keys.length + 1;
      set.inchis.push(inchi);
      set.keys.push(checked.standardInchiKey);
      set.connectivityBlocks.push(checked.standardInchiKey.slice(0, 14));
      set.documents.push(JSON.stringify(compoundDocument(uci, checked.standardInchiKey, checked.parsed!, 'bench-ceiling')));
    } catch (error) {
      if (!(error instanceof Reject)) throw error;
      set.rejectedByReason[error.code] = (set.rejectedByReason[error.code] ?? 0) + 1;
    }
  }
  return set;
}

interface Source { id: number; name: string; label: string }

/** The first 20 rows of UniChem's real source table, as a §5 source.tsv. */
export function sourceTable(): { sources: Source[]; tsv: string } {
  const rows = parseCsv(readFileSync(join(sharedData, 'source-table.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
  const chosen = rows.slice(0, coverage.length);
  const columns = Object.keys(rows[0]);
  const clean = (value: string | undefined): string => (value ?? '').replace(/[\t\r\n]+/g, ' ');
  const tsv = `${columns.map((c) => c.toUpperCase()).join('\t')}\n${chosen.map((row) => columns.map((c) => clean(row[c])).join('\t')).join('\n')}\n`;
  const sources = chosen.map((row) => ({ id: Number(row.src_id), name: row.name, label: row.name.toUpperCase().replace(/[^A-Z0-9]/g, '') }));
  return { sources, tsv };
}

/** A fixed 32-bit hash of two integers, so the assignment of structures to sources is deterministic. */
function hash(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

interface Assignment { uci: number; sourceId: number; compoundId: string; assignment: 0 | 1 }

/** Every assignment of the benchmark, in UCI order (as UniChem's dump); each structure has at least one. */
function* assignments(structureCount: number, sources: Source[]): Generator<Assignment> {
  const counters = sources.map(() => 0);
  const compoundId = (s: number): string => {
    counters[s] += 1;
    // Ids of growing length, as real registries have: CHEMBL1000, CHEMBL1037, ...
    return `${sources[s].label}${1000 + counters[s] * 37}`;
  };
  for (let uci = 1; uci <= structureCount; uci += 1) {
    let any = false;
    for (let s = 0; s < sources.length; s += 1) {
      const draw = hash(uci, s) / 2 ** 32;
      if (draw >= coverage[s]) continue;
      any = true;
      yield { uci, sourceId: sources[s].id, compoundId: compoundId(s), assignment: 1 };
      if (hash(uci, s + 1000) / 2 ** 32 < obsoleteShare) yield { uci, sourceId: sources[s].id, compoundId: compoundId(s), assignment: 0 };
    }
    if (!any) yield { uci, sourceId: sources[0].id, compoundId: compoundId(0), assignment: 1 };
  }
}

async function writeGzip(file: string, lines: Iterable<string>): Promise<void> {
  async function* chunks(): AsyncGenerator<string> {
    let buffer = '';
    for (const line of lines) {
      buffer += line;
      if (buffer.length > 1 << 16) {
        yield buffer;
        buffer = '';
      }
    }
    if (buffer) yield buffer;
  }
  await pipeline(Readable.from(chunks()), createGzip(), createWriteStream(file));
}

/** Writes source.tsv, structure.tsv.gz and reference.tsv.gz; returns the assignment count. */
export async function writeDump(folder: string, set: Structures, table: { tsv: string; sources: Source[] }): Promise<number> {
  writeFileSync(join(folder, 'source.tsv'), table.tsv);
  await writeGzip(join(folder, 'structure.tsv.gz'), (function* () {
    yield 'UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n';
    for (let i = 0; i < set.keys.length; i += 1) yield `${i + 1}\t${set.inchis[i]}\t${set.keys[i]}\n`;
  })());
  let count = 0;
  await writeGzip(join(folder, 'reference.tsv.gz'), (function* () {
    yield 'UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\n';
    for (const a of assignments(set.keys.length, table.sources)) {
      count += 1;
      yield `${a.uci}\t${a.sourceId}\t${a.compoundId}\t${a.assignment}\n`;
    }
  })());
  return count;
}

// ---------------------------------------------------------------------------------------------
// Measuring the loader

interface ChildRun { summary: Record<string, unknown>; wallSeconds: number; peakRssMb: number; peakCommand: string; treePeakRssMb: number; cpuSeconds: number }


/**
 * Runs `npm run load -- <args>` with the bench prefix; polls the peak RSS (VmHWM) and CPU time of
 * every process of the tree (npm, the tsx launcher, the loader itself).
 */
async function runLoader(prefix: string, args: string[]): Promise<ChildRun> {
  const started = process.hrtime.bigint();
  const child = spawn('npm', ['run', '--silent', 'load', '--', ...args, '--no-progress'], {
    cwd: repository, env: { ...process.env, ES_INDEX_PREFIX: prefix }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const peaks = new Map<number, { hwm: number; command: string; cpu: number }>();
  const clockTicks = 100;
  const poll = (): void => {
    if (child.pid === undefined) return;
    for (const pid of [child.pid, ...descendants(child.pid)]) {
      const status = readProc(pid, 'status');
      const stat = readProc(pid, 'stat');
      if (!status || !stat) continue;
      const hwm = Number(/VmHWM:\s+([0-9]+) kB/.exec(status)?.[1] ?? 0);
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(fields[11]) + Number(fields[12])) / clockTicks;
      const known = peaks.get(pid);
      const command = known?.command ?? (readProc(pid, 'cmdline') ?? '').replace(/\0/g, ' ').trim();
      peaks.set(pid, { hwm: Math.max(known?.hwm ?? 0, hwm), command, cpu: Math.max(known?.cpu ?? 0, cpu) });
    }
  };
  const timer = setInterval(poll, 100);
  let stdout = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(timer);
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const last = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0) throw new Error(`npm run load -- ${args.join(' ')} failed (exit ${code}): ${last}`);
  const summary = JSON.parse(last) as Record<string, unknown>;
  const processes = [...peaks.values()];
  const loader = processes.reduce((a, b) => (b.hwm > a.hwm ? b : a), { hwm: 0, command: '', cpu: 0 });
  return {
    summary, wallSeconds,
    peakRssMb: loader.hwm / 1024, peakCommand: loader.command,
    treePeakRssMb: processes.reduce((sum, p) => sum + p.hwm, 0) / 1024,
    cpuSeconds: processes.reduce((sum, p) => sum + p.cpu, 0),
  };
}

// ---------------------------------------------------------------------------------------------
// The ceiling: the client's bulk helper, nothing else

async function createIndex(engine: Engine, index: string, name: MappingName): Promise<void> {
  const { settings, mappings } = mappingOf(name);
  const indexSettings = (settings.index ?? {}) as Record<string, unknown>;
  await engine.client.indices.create({ index, mappings, settings: { index: { ...indexSettings, refresh_interval: '-1' } } });
}

/** Bulk-writes pre-serialised documents; resolves with the seconds taken, refresh included. */
async function ceilingBulk(engine: Engine, items: [index: string, id: string, op: 'create' | 'index', document: string][], indices: string[], expected: number): Promise<number> {
  const started = process.hrtime.bigint();
  const stats = await engine.client.helpers.bulk<[string, string, 'create' | 'index', string]>({
    datasource: items,
    // The helper sends a string document as it is: the document's own serialisation is not timed.
    onDocument: ([index, id, op, document]) => [{ [op]: { _index: index, _id: id } }, document] as never,
    concurrency: 3,
    flushBytes: 4_000_000,
    refreshOnCompletion: false,
  });
  await engine.client.indices.refresh({ index: indices.join(',') });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (stats.successful !== expected) throw new Error(`the ceiling wrote ${stats.successful} of ${expected} documents (${stats.failed} failed)`);
  return seconds;
}

// ---------------------------------------------------------------------------------------------
// The engine between phases, storage, cleanup

/** Waits until the node has no merge running (at the moment it asks), so one run's merges do not slow the next. */
async function settle(engine: Engine): Promise<void> {
  for (let i = 0; i < 240; i += 1) {
    const stats = await engine.client.nodes.stats({ metric: ['indices'], index_metric: ['merge'] }) as unknown as { nodes: Record<string, { indices: { merges: { current: number } } }> };
    const merging = Object.values(stats.nodes).reduce((sum, node) => sum + node.indices.merges.current, 0);
    if (merging === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** CPU seconds every node of the engine has used so far. */
export async function engineCpuSeconds(engine: Engine): Promise<number> {
  const stats = await engine.client.nodes.stats({ metric: ['process'] }) as unknown as { nodes: Record<string, { process: { cpu: { total_in_millis: number } } }> };
  return Object.values(stats.nodes).reduce((sum, node) => sum + node.process.cpu.total_in_millis, 0) / 1000;
}

/** Milliseconds every node of the engine has spent so far on each kind of work on its indices. */
async function engineActivity(engine: Engine): Promise<Record<string, number>> {
  type Stats = { indexing: { index_time_in_millis: number }; merges: { total_time_in_millis: number }; refresh: { total_time_in_millis: number }; flush: { total_time_in_millis: number }; get: { time_in_millis: number }; search: { query_time_in_millis: number; fetch_time_in_millis: number } };
  const stats = await engine.client.nodes.stats({ metric: ['indices'], index_metric: ['indexing', 'merge', 'refresh', 'flush', 'get', 'search'] }) as unknown as { nodes: Record<string, { indices: Stats }> };
  const total: Record<string, number> = { indexing: 0, merges: 0, refresh: 0, flush: 0, get: 0, search: 0 };
  for (const { indices } of Object.values(stats.nodes)) {
    total.indexing += indices.indexing.index_time_in_millis;
    total.merges += indices.merges.total_time_in_millis;
    total.refresh += indices.refresh.total_time_in_millis;
    total.flush += indices.flush.total_time_in_millis;
    total.get += indices.get.time_in_millis;
    total.search += indices.search.query_time_in_millis + indices.search.fetch_time_in_millis;
  }
  return total;
}

async function indicesOf(engine: Engine, prefix: string): Promise<{ index: string; docs: number; bytes: number }[]> {
  const rows = await engine.client.cat.indices({ index: `${prefix}-*`, bytes: 'b', format: 'json', expand_wildcards: 'all' }) as unknown as Record<string, string>[];
  return rows.map((row) => ({ index: row.index, docs: Number(row['docs.count']), bytes: Number(row['pri.store.size']) }));
}

// ---------------------------------------------------------------------------------------------

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function missingFile(): never {
  process.stderr.write(`${moleculesFile} is missing: the benchmark needs the 500,000 real molecules of ../shared/data/make-samples.sh.
Build them once (as root: it apt-installs openbabel; about 3-4 minutes on 2 cores):

  apt-get update && W=/tmp/chemwork bash ${join(sharedData, 'make-samples.sh')}

then run \`npm run bench:load\` again (or set BENCH_500K to the path of its bench-500k.tsv).
`);
  process.exit(2);
}

async function main(): Promise<void> {
  if (!existsSync(moleculesFile)) missingFile();
  const config: Config = readConfig();
  const tag = randomBytes(3).toString('hex');
  const loaderPrefix = `bench-load-${tag}`;
  const ceilingPrefix = `bench-ceiling-${tag}`;
  const engine = new Engine({ ...config, ES_INDEX_PREFIX: ceilingPrefix });
  const out = (text: string): boolean => process.stdout.write(`${text}\n`);
  await engine.client.cluster.health({ wait_for_status: 'yellow', timeout: '30s' }).catch(() => {
    throw new Error(`no Elasticsearch answers on ${config.ES_URL}: start one with \`npm run es:start\``);
  });

  out(`Loader benchmark (issue 4): node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Elasticsearch at ${config.ES_URL}`);
  let started = process.hrtime.bigint();
  const set = await readStructures(moleculesFile, config.MAX_INCHI_LENGTH);
  const rejected = Object.entries(set.rejectedByReason).map(([code, n]) => `${n} ${code}`).join(', ') || 'none';
  out(`${moleculesFile}: ${fmt(set.rowsRead)} molecules, ${fmt(set.rowsWithoutInchi)} without InChI, ${fmt(set.duplicates)} repeated structures, rejected by the loading rules: ${rejected}`);
  out(`→ ${fmt(set.keys.length)} distinct loadable structures (read, parsed and serialised in ${fmt(Number(process.hrtime.bigint() - started) / 1e9, 1)} s)`);

  const folder = mkdtempSync(join(tmpdir(), 'chemxref-bench-load-'));
  const table = sourceTable();
  started = process.hrtime.bigint();
  const assignmentCount = await writeDump(folder, set, table);
  out(`dump in ${folder}: ${table.sources.length} sources, ${fmt(set.keys.length)} structures, ${fmt(assignmentCount)} assignments (written in ${fmt(Number(process.hrtime.bigint() - started) / 1e9, 1)} s)`);
  // One table of the dump loaded by the real loader into `prefix`, its rejects in a file of their own.
  const tables = { sources: 'source.tsv', structures: 'structure.tsv.gz', references: 'reference.tsv.gz' };
  const load = (prefix: string, command: keyof typeof tables, rejectsName: string = command): Promise<ChildRun> =>
    runLoader(prefix, [command, join(folder, tables[command]), '--rejects', join(folder, `rejects-${rejectsName}.tsv`)]);

  // Each phase runs loader, ceiling, ceiling, loader (means reported), so that a drift of the shared
  // machine, or the engine warming up, weighs on both alike. Each run writes into indices of its own.
  const loaderPrefixes = [`${loaderPrefix}-1`, `${loaderPrefix}-2`];
  const ceilingEngines = [1, 2].map((n) => new Engine({ ...config, ES_INDEX_PREFIX: `${ceilingPrefix}-${n}` }));
  const results: Record<string, { loaders: ChildRun[]; ceilingSeconds: number[]; rows: number; engineCpuLoader: number[]; engineCpuCeiling: number[]; activity: string; threads: string }> = {};
  // A local engine's CPU by thread pool (jcmd), which also sees what node stats do not time.
  const enginePid = await localEnginePid(engine).catch(() => undefined);
  const threadsNow = (): Record<string, number> => (enginePid ? engineThreadCpu(enginePid) : {});
  const since = (before: Record<string, number>, after: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.entries(after).map(([kind, ms]) => [kind, ms - (before[kind] ?? 0)]));
  // This process's garbage of the runs before (the ceiling's request bodies) is collected before each
  // run, and its GC pauses during a run are reported: they take the loader's core.
  const timed = async <T>(work: () => Promise<T>): Promise<{ value: T; engineCpu: number; activity: Record<string, number>; threads: Record<string, number>; benchGcMs: number }> => {
    collectOwnGarbage();
    await settle(engine);
    const [cpu, activity, threads, gc] = [await engineCpuSeconds(engine), await engineActivity(engine), threadsNow(), ownGcPauses()];
    const value = await work();
    const [activityAfter, threadsAfter] = [await engineActivity(engine), threadsNow()];
    return { value, engineCpu: (await engineCpuSeconds(engine)) - cpu, activity: since(activity, activityAfter), threads: since(threads, threadsAfter), benchGcMs: ownGcPauses().ms - gc.ms };
  };
  const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  // The engine's own account of its work, loader runs against ceiling runs: where its extra CPU goes
  // (kinds that round to 0.0 s on both sides left out).
  const activityOf = (loaders: Record<string, number>[], ceilings: Record<string, number>[]): string => {
    const kinds = [...new Set([...loaders, ...ceilings].flatMap(Object.keys))];
    const meanOf = (runs: Record<string, number>[], kind: string): number => mean(runs.map((run) => run[kind] ?? 0)) / 1000;
    return kinds.filter((kind) => meanOf(loaders, kind) >= 0.05 || meanOf(ceilings, kind) >= 0.05)
      .sort((a, b) => meanOf(loaders, b) - meanOf(loaders, a))
      .map((kind) => `${kind} ${fmt(meanOf(loaders, kind), 1)} / ${fmt(meanOf(ceilings, kind), 1)}`).join(', ');
  };
  const abba = async (phase: string, rows: number, loader: (prefix: string) => Promise<ChildRun>, ceiling: (run: Engine) => Promise<number>): Promise<void> => {
    const first = await timed(() => loader(loaderPrefixes[0]));
    const ceilings = [await timed(() => ceiling(ceilingEngines[0])), await timed(() => ceiling(ceilingEngines[1]))];
    const last = await timed(() => loader(loaderPrefixes[1]));
    results[phase] = {
      loaders: [first.value, last.value], ceilingSeconds: ceilings.map((c) => c.value), rows,
      engineCpuLoader: [first.engineCpu, last.engineCpu], engineCpuCeiling: ceilings.map((c) => c.engineCpu),
      activity: activityOf([first.activity, last.activity], ceilings.map((c) => c.activity)),
      threads: enginePid ? activityOf([first.threads, last.threads], ceilings.map((c) => c.threads)) : '',
    };
    const each = (seconds: number[]): string => seconds.map((s) => fmt(rows / s)).join(', ');
    out(`${phase}: loader ${each([first.value, last.value].map((r) => Number(r.summary.seconds)))} rows/s (first and last run), ceiling ${each(ceilings.map((c) => c.value))} rows/s; this process's GC in each run, in their order: ${[first, ...ceilings, last].map((r) => fmt(r.benchGcMs)).join(', ')} ms`);
  };
  const cores = splitCoresRequested() ? await splitCores(engine) : undefined;
  out(cores ? `--split-cores: ${cores.describe}` : 'the engine, the loader and the ceiling share every core (`-- --split-cores` gives the engine a core of its own)');
  try {
    for (const prefix of loaderPrefixes) await load(prefix, 'sources');
    // The compounds indices of both sides stand over a minute before they are written, as one in
    // service does: Elasticsearch then flushes a translog older than index.translog.flush_threshold_age
    // (1 min) once, at the load's start. Written fresh, the ceiling's never paid that flush, and
    // the loader's second run did. The untimed warm-up below takes part of that minute.
    for (const run of ceilingEngines) await createIndex(engine, run.names.compounds, 'compounds');
    const standing = Date.now();
    // Before each phase the engine warms up on it: untimed loads into indices of their own
    // (BENCH_LOAD_WARMUPS, 2). The engine JIT-compiles its indexing code for what it is sent, and
    // recompiles it when the kind of document changes; without a warm-up the first run of a phase,
    // always the loader's, paid 2–5 s more compiler CPU than a ceiling run (jcmd), after a fresh
    // start and after the previous phase alike. After one warm-up load the loader's runs still paid
    // 0.4–2.4 s (structures) and 0.4–1.8 s (references) against 0.0–0.5 s; after two, 0.1–0.3 s.
    const warmUps = Number(process.env.BENCH_LOAD_WARMUPS ?? 2);
    if (!Number.isInteger(warmUps) || warmUps < 0) throw new Error(`BENCH_LOAD_WARMUPS is a whole number, not ${process.env.BENCH_LOAD_WARMUPS}`);
    const warms = Array.from({ length: warmUps }, (_, n) => `${loaderPrefix}-warm${n}`);
    for (const warm of warms) {
      await load(warm, 'sources', 'warm-sources');
      await load(warm, 'structures', 'warm-structures');
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, standing + 65_000 - Date.now())));

    // Structures: the ceiling writes the compound documents the loader would write, op_type create on the key.
    const structuresCeiling = (compounds: string): Promise<number> =>
      ceilingBulk(engine, set.keys.map((key, i) => [compounds, key, 'create', set.documents[i]]), [compounds], set.keys.length);
    await abba('structures', set.keys.length, (prefix) => load(prefix, 'structures'), (run) => structuresCeiling(run.names.compounds));
    if (cores && process.argv.includes('--neighbour')) {
      // The structures ceiling again: alone, beside a process that streams 256 MB of memory on the
      // loader's core, and beside one that only spins there (memory, none, spin, spin, none,
      // memory). How much a neighbour's memory traffic alone slows the engine on its own core,
      // against the loader's extra engine CPU; the spinning one tells memory from CPU.
      const neighbours = { none: '', spin: 'for (;;);', memory: 'const b = Buffer.alloc(256 << 20); for (;;) for (let i = 0; i < b.length; i += 64) b[i] += 1;' };
      const runs: { neighbour: keyof typeof neighbours; seconds: number; engineCpu: number; write: number }[] = [];
      for (const [n, neighbour] of (['memory', 'none', 'spin', 'spin', 'none', 'memory'] as const).entries()) {
        const run = new Engine({ ...config, ES_INDEX_PREFIX: `${ceilingPrefix}-${n + 3}` });
        await createIndex(engine, run.names.compounds, 'compounds');
        const busy = neighbours[neighbour] ? spawn(process.execPath, ['-e', neighbours[neighbour]], { stdio: 'ignore' }) : undefined;
        const measured = await timed(() => structuresCeiling(run.names.compounds)).finally(() => busy?.kill());
        await run.close();
        runs.push({ neighbour, seconds: measured.value, engineCpu: measured.engineCpu, write: (measured.threads.write ?? 0) / 1000 });
      }
      const of = (neighbour: keyof typeof neighbours, pick: (r: typeof runs[number]) => number): number => mean(runs.filter((r) => r.neighbour === neighbour).map(pick));
      for (const neighbour of ['none', 'spin', 'memory'] as const) {
        out(`structures ceiling, neighbour on the loader's core: ${neighbour}: ${fmt(set.keys.length / of(neighbour, (r) => r.seconds))} rows/s (${fmt(of('none', (r) => r.seconds) / of(neighbour, (r) => r.seconds), 2)} of alone), engine CPU ${fmt(of(neighbour, (r) => r.engineCpu), 1)} s, its write threads ${fmt(of(neighbour, (r) => r.write), 1)} s`);
      }
    }
    set.documents.length = 0; // not needed any more

    // References: one fresh release index for every source of the table, as the loader writes a dump,
    // assignments _id'd as the loader does.
    const prepared: [string, string, 'index', string][] = [];
    for (const a of assignments(set.keys.length, table.sources)) {
      const document = { sourceId: a.sourceId, compoundId: a.compoundId, uci: a.uci, assignment: a.assignment, standardInchiKey: set.keys[a.uci - 1], connectivityBlock: set.connectivityBlocks[a.uci - 1] };
      prepared.push(['', assignmentId(a.sourceId, a.uci, a.compoundId), 'index', JSON.stringify(document)]);
    }
    for (const warm of warms) {
      await load(warm, 'references', 'warm-references');
      await deleteIndicesByPrefix(config.ES_URL, warm);
    }
    await abba('references', assignmentCount,
      (prefix) => load(prefix, 'references'),
      async (run) => {
        const release = run.names.assignmentsRelease('dump');
        await createIndex(engine, release, 'assignments');
        return ceilingBulk(engine, prepared.map(([, id, op, document]) => [release, id, op, document]), [release], assignmentCount);
      });
    prepared.length = 0;

    out('');
    out('| phase | rows | loader rows/s | ceiling rows/s | loader/ceiling | loader peak RSS | loader CPU s | engine CPU s (loader / ceiling) |');
    out('|---|---|---|---|---|---|---|---|');
    for (const [phase, r] of Object.entries(results)) {
      for (const run of r.loaders) {
        const loaded = Number(run.summary.rowsLoaded);
        if (loaded !== r.rows || Number(run.summary.rowsRejected) !== 0) throw new Error(`the loader loaded ${loaded} of ${r.rows} ${phase} rows (${run.summary.rowsRejected} rejected)`);
      }
      const seconds = mean(r.loaders.map((run) => Number(run.summary.seconds)));
      const wall = mean(r.loaders.map((run) => run.wallSeconds));
      const ceilingSeconds = mean(r.ceilingSeconds);
      const loaderRate = r.rows / seconds;
      const ceilingRate = r.rows / ceilingSeconds;
      const peakRss = Math.max(...r.loaders.map((run) => run.peakRssMb));
      out(`| ${phase} | ${fmt(r.rows)} | ${fmt(loaderRate)} (${fmt(seconds, 1)} s; ${fmt(r.rows / wall)} with process start-up) | ${fmt(ceilingRate)} (${fmt(ceilingSeconds, 1)} s) | ${fmt(loaderRate / ceilingRate, 2)} | ${fmt(peakRss)} MB | ${fmt(mean(r.loaders.map((run) => run.cpuSeconds)), 1)} | ${fmt(mean(r.engineCpuLoader), 1)} / ${fmt(mean(r.engineCpuCeiling), 1)} |`);
    }
    out('(means of two runs each, in the order loader, ceiling, ceiling, loader; peak RSS: the higher of the two loader runs)');
    for (const [phase, r] of Object.entries(results)) {
      out(`the engine's time by activity (node stats, s), ${phase}, loader / ceiling: ${r.activity}`);
      if (r.threads) out(`the engine's CPU by thread pool (jcmd Thread.print, s), ${phase}, loader / ceiling: ${r.threads}`);
    }
    out(`peak RSS is the VmHWM of the loader's node process (${results.structures.loaders[0].peakCommand.slice(0, 80)}...); the whole npm → tsx → node tree peaked at ${fmt(Math.max(...Object.values(results).flatMap((r) => r.loaders.map((run) => run.treePeakRssMb))))} MB`);

    // On-disk size of what the loader wrote, merged into one segment per index.
    started = process.hrtime.bigint();
    const measured = loaderPrefixes[0];
    const written = (await indicesOf(engine, measured)).filter((row) => row.index === `${measured}-compounds` || row.index.startsWith(`${measured}-assignments-`));
    const names = written.map((row) => row.index);
    await engine.client.indices.forcemerge({ index: names.join(','), max_num_segments: 1 }, { requestTimeout: 3_600_000 });
    await engine.client.indices.refresh({ index: names.join(',') });
    const merged = (await indicesOf(engine, measured)).filter((row) => names.includes(row.index));
    const compoundsRow = merged.find((row) => row.index === `${measured}-compounds`)!;
    const assignmentRows = merged.filter((row) => row.index !== compoundsRow.index);
    const assignmentBytes = assignmentRows.reduce((sum, row) => sum + row.bytes, 0);
    const assignmentDocs = assignmentRows.reduce((sum, row) => sum + row.docs, 0);
    const perCompound = compoundsRow.bytes / compoundsRow.docs;
    const perAssignment = assignmentBytes / assignmentDocs;
    const gb = (bytes: number): string => `${fmt(bytes / 1e9, 1)} GB`;
    out('');
    out(`on disk after _forcemerge?max_num_segments=1 (${fmt(Number(process.hrtime.bigint() - started) / 1e9)} s): compounds ${fmt(compoundsRow.bytes)} bytes / ${fmt(compoundsRow.docs)} = ${fmt(perCompound)} bytes per compound; assignments ${fmt(assignmentBytes)} bytes / ${fmt(assignmentDocs)} in ${assignmentRows.length} indices = ${fmt(perAssignment)} bytes per assignment`);
    out(`projected to UniChem's scale: 160 million structures × ${fmt(perCompound)} B = ${gb(160e6 * perCompound)}; 170 million assignments × ${fmt(perAssignment)} B = ${gb(170e6 * perAssignment)}; together ${gb(160e6 * perCompound + 170e6 * perAssignment)} (one copy, no replica)`);
  } finally {
    cores?.restore();
    // Cleanup must not hide the error that brought the run here.
    const deleteBench = (prefix: string): Promise<string[]> => deleteIndicesByPrefix(config.ES_URL, prefix).catch(() => []);
    const deleted = [...(await deleteBench(loaderPrefix)), ...(await deleteBench(ceilingPrefix))];
    await Promise.all(ceilingEngines.map((e) => e.close()));
    out(`deleted ${deleted.length} bench indices (${loaderPrefix}-*, ${ceilingPrefix}-*) and ${folder}`);
    rmSync(folder, { recursive: true, force: true });
    await engine.close();
  }
}

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`bench:load failed: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  });
}
