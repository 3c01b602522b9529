// Benchmark of the v1 API (issue 5): the 500,000-structure set of `npm run bench:load` (about
// 499,850 structures and 1.6 million assignments over 20 sources), loaded once by the real loader
// into the prefix `bench-api` and reused by later runs. The API runs in a child process (this file
// with --serve); autocannon drives it at a fixed concurrency with real keys and ids of the set:
// POST /api/v1/compounds by InChIKey, by sourceID, and POST /api/v1/connectivity by InChIKey. The
// ceiling, in the same run: the same Elasticsearch queries the service sends for each request,
// sent by the client from a small async loop at the same concurrency. Then each lookup again at
// half its peak rate (an open loop of evenly spaced requests, service and ceiling twice each, in the
// same order), for the latency under a moderate load, with where a request's time went: the means
// of every answer's Server-Timing (src/api/timing.ts), and the API process's event-loop delay and GC
// pauses over its runs.
//
//   npm run bench:api                 # loads bench-api-* if needed, then measures
//   npm run bench:api -- --clean      # deletes the bench-api-* indices and the cached dump
//   npm run bench:api -- --split-cores  # the engine on a core of its own (bench/cores.ts)
//
// With --split-cores, the load generator of the service's half-peak runs stands on the engine's
// core, so that the API has its core to itself as the ceiling's client has: beside the API, each
// answer it reads took the core from the API about once a request, which the ceiling's lone client
// never pays. What the load generator takes from the engine (about 0.1 ms of CPU a request) counts
// against the service. BENCH_API_CLIENT_CORE=api keeps it beside the API, as before.
//
// BENCH_API_CONNECTIONS (16), BENCH_API_SECONDS (15), BENCH_API_ONLY (run only the lookups whose
// name contains it, e.g. "sourceID"), BENCH_API_PROFILE (a folder: the API child then writes a V8
// CPU profile there), BENCH_API_NODE_FLAGS (flags for the API child's node, e.g.
// "--max-semi-space-size=32"), BENCH_API_CLIENT_NICE (the load generator's nice value at half the
// peak, e.g. 10; the API child and the engine stay at 0) and
// BENCH_API_CLIENT_POLICY (`batch` or `idle`: the load generator's scheduling policy at half the
// peak) change the run.
import type { ChildProcess } from 'node:child_process';
import { childStats, serveApi, startApiChild, stopApiChild, type ChildStats } from './api-child';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfig, type Config } from '../src/config';
import type { estypes } from '@elastic/elasticsearch';
import { Engine } from '../src/engine/client';
import { currentReleaseIndices } from '../src/engine/schema';
import { parseArguments, runCommand } from '../loaders/cli';
import { readRows, type Row } from '../loaders/read';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { niceThreads, pin, scheduleThreads, splitCores, splitCoresRequested } from './cores';
import { countFailure, describeFailures, drive, drivePaced, failuresOf, failureReason, paced, summarise, type FailedBy, type Measure } from './load-generator';
import { readStructures, sourceTable, writeDump } from './load';
import { collectOwnGarbage, ownGcPauses } from './own-gc';

const moleculesFile = process.env.BENCH_500K || '/tmp/chemwork/bench-500k.tsv';
export const prefix = 'bench-api';
const dumpFolder = join(tmpdir(), 'chemxref-bench-api');
const connections = Number(process.env.BENCH_API_CONNECTIONS || 16);
const seconds = Number(process.env.BENCH_API_SECONDS || 15);
// Ten seconds: after three, the first service run was 20-30 % below the last in each of three runs (2026-11-25), the JIT and the engine's caches still warming.
const warmUpSeconds = 10;
const sampleSize = 5_000;

const out = (text: string): boolean => process.stdout.write(`${text}\n`);
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

// ---------------------------------------------------------------------------------------------
// The data: loaded once, reused while the counts match what the dump holds

interface Expected { structures: number; assignments: number }

async function count(engine: Engine, index: string): Promise<number> {
  try {
    return (await engine.client.count({ index })).count;
  } catch {
    return -1;
  }
}

/** Loads the benchmark set into `bench-api-*` unless it is already there, whole. */
export async function ensureLoaded(engine: Engine, config: Config): Promise<Expected> {
  const expectedFile = join(dumpFolder, 'expected.json');
  let expected: Expected | undefined = existsSync(expectedFile) ? JSON.parse(readFileSync(expectedFile, 'utf8')) as Expected : undefined;
  if (expected) {
    const [structures, assignments] = [await count(engine, engine.names.compounds), await count(engine, engine.names.assignments)];
    // A dump serves all its sources from one release index; an older layout (one per source) is reloaded.
    const releases = new Set((await currentReleaseIndices(engine).catch(() => new Map())).values()).size;
    if (structures === expected.structures && assignments === expected.assignments && releases === 1) {
      out(`reusing ${prefix}-*: ${fmt(structures)} structures, ${fmt(assignments)} assignments (\`npm run bench:api -- --clean\` deletes them)`);
      return expected;
    }
    out(`${prefix}-* holds ${fmt(structures)} structures and ${fmt(assignments)} assignments in ${releases} release indices, not the ${fmt(expected.structures)} and ${fmt(expected.assignments)} of the dump in one: loading again`);
  }
  if (!existsSync(moleculesFile)) {
    process.stderr.write(`${moleculesFile} is missing: build it as \`npm run bench:load\` explains (../shared/data/make-samples.sh), or set BENCH_500K\n`);
    process.exit(2);
  }
  let started = process.hrtime.bigint();
  const set = await readStructures(moleculesFile, config.MAX_INCHI_LENGTH);
  set.documents.length = 0; // the loader builds its own
  rmSync(dumpFolder, { recursive: true, force: true });
  mkdirSync(dumpFolder, { recursive: true });
  const assignments = await writeDump(dumpFolder, set, sourceTable());
  expected = { structures: set.keys.length, assignments };
  out(`dump of ${fmt(expected.structures)} structures and ${fmt(assignments)} assignments in ${dumpFolder} (${fmt(Number(process.hrtime.bigint() - started) / 1e9, 1)} s)`);

  await deleteIndicesByPrefix(config.ES_URL, prefix);
  started = process.hrtime.bigint();
  const summary = await runCommand(parseArguments(['dump', dumpFolder, '--no-progress', '--rejects', join(dumpFolder, 'rejects.tsv')]), config);
  out(`loaded by \`npm run load -- dump\` in ${fmt(Number(process.hrtime.bigint() - started) / 1e9)} s: ${fmt(Number(summary.rowsLoaded))} rows, ${fmt(Number(summary.rowsRejected))} rejected`);
  const [structures, assignmentsHeld] = [await count(engine, engine.names.compounds), await count(engine, engine.names.assignments)];
  if (structures !== expected.structures || assignmentsHeld !== expected.assignments) {
    throw new Error(`after the load ${prefix}-* holds ${structures} structures and ${assignmentsHeld} assignments, not ${expected.structures} and ${expected.assignments}`);
  }
  writeFileSync(expectedFile, JSON.stringify(expected));
  return expected;
}

export interface Samples {
  keys: string[];
  ids: { sourceId: number; compoundId: string }[];
}

/** The `count` rows of `rows` with the lowest hash of `valueOf` (a fixed pseudo-random sample), in that order. */
async function lowestHashes<T>(rows: AsyncIterable<Row>, count: number, valueOf: (row: Row) => T | undefined, textOf: (value: T) => string): Promise<T[]> {
  let kept: { hash: number; value: T }[] = [];
  let limit = 2 ** 32;
  for await (const row of rows) {
    const value = valueOf(row);
    if (value === undefined) continue;
    // FNV-1a over the value's text, seeded: the same rows whatever the order of the file or of a load.
    let hash = 0x811c9dc5 ^ 5;
    const text = textOf(value);
    for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
    if (hash >= limit) continue;
    kept.push({ hash, value });
    if (kept.length >= 4 * count) {
      kept = kept.sort((a, b) => a.hash - b.hash).slice(0, count);
      limit = kept[count - 1].hash;
    }
  }
  return kept.sort((a, b) => a.hash - b.hash).slice(0, count).map((k) => k.value);
}

/**
 * Real keys and ids of the set, in a fixed pseudo-random order: structures drawn evenly from the
 * dump's structure table, source ids evenly from its current assignments. Drawn from the dump, by a
 * hash of each row's values, so every load of the set has the same sample (the order of a load's
 * documents in the index follows its concurrent bulk requests).
 */
export async function samples(): Promise<Samples> {
  const keys = await lowestHashes(readRows(join(dumpFolder, 'structure.tsv.gz'), 'tsv'), sampleSize,
    (row) => row.fields.standardinchikey, (key) => key);
  const ids = await lowestHashes(readRows(join(dumpFolder, 'reference.tsv.gz'), 'tsv'), sampleSize,
    (row) => (row.fields.assigment === '1' ? { sourceId: Number(row.fields.src_id), compoundId: row.fields.src_compound_id } : undefined),
    (id) => `${id.sourceId}\t${id.compoundId}`);
  return { keys, ids };
}

// ---------------------------------------------------------------------------------------------
// The service, in a child process (so that the load generator does not share its event loop)


// ---------------------------------------------------------------------------------------------
// Measuring

/** CPU seconds used so far by the engine, the API child and this process (the load generator). */
async function cpuNow(engine: Engine, child: ChildProcess): Promise<{ engine: number; api: number; client: number }> {
  const stats = await engine.client.nodes.stats({ metric: ['process'] }) as unknown as { nodes: Record<string, { process: { cpu: { total_in_millis: number } } }> };
  const engineCpu = Object.values(stats.nodes).reduce((sum, node) => sum + node.process.cpu.total_in_millis, 0) / 1000;
  let api = 0;
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    api = (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    api = NaN;
  }
  const own = process.cpuUsage();
  return { engine: engineCpu, api, client: (own.user + own.system) / 1e6 };
}

/**
 * Runs `work` and adds the CPU milliseconds per request each process spent on it, and the load
 * generator's own GC pauses. The load generator's garbage of the runs before is collected first.
 */
async function withCpu(engine: Engine, child: ChildProcess, work: () => Promise<Measure>): Promise<Measure> {
  collectOwnGarbage();
  const [before, gcBefore] = [await cpuNow(engine, child), ownGcPauses()];
  const measure = await work();
  const [after, gcAfter] = [await cpuNow(engine, child), ownGcPauses()];
  const perRequest = (a: number, b: number): number => ((a - b) * 1000) / Math.max(1, measure.requests);
  return {
    ...measure,
    cpuMs: { engine: perRequest(after.engine, before.engine), api: perRequest(after.api, before.api), client: perRequest(after.client, before.client) },
    clientGc: { ms: gcAfter.ms - gcBefore.ms, full: gcAfter.full - gcBefore.full },
  };
}

const mean = (list: Measure[], key: 'rps' | 'p50' | 'p99'): number => list.reduce((sum, m) => sum + m[key], 0) / list.length;

/** The mean of runs: of their rates, percentiles and CPU a request; their requests and failures summed. */
function meanOf(list: Measure[]): Measure {
  const cpu = (key: 'engine' | 'api' | 'client'): number => list.reduce((sum, m) => sum + (m.cpuMs?.[key] ?? NaN), 0) / list.length;
  return {
    rps: mean(list, 'rps'), p50: mean(list, 'p50'), p99: mean(list, 'p99'),
    requests: list.reduce((sum, m) => sum + m.requests, 0), failures: list.reduce((sum, m) => sum + m.failures, 0),
    failedBy: failuresOf(list),
    cpuMs: { engine: cpu('engine'), api: cpu('api'), client: cpu('client') },
  };
}

/** The ceiling at `rate` lookups/s, one sample after the other. */
export function paceEngine<T>(lookup: (sample: T) => Promise<unknown>, list: T[], duration: number, rate: number): Promise<Measure> {
  return paced(async (i) => { await lookup(list[i % list.length]); return true as const; }, duration, rate);
}

/** `connections` async workers sending `lookup` for each sample in turn, for `duration` seconds. */
export async function driveEngine<T>(lookup: (sample: T) => Promise<unknown>, list: T[], duration: number): Promise<Measure> {
  let next = 0;
  const latencies: number[] = [];
  const failedBy: FailedBy = {};
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(duration * 1e9);
  const worker = async (): Promise<void> => {
    while (process.hrtime.bigint() < deadline) {
      const sample = list[next++ % list.length];
      const begun = process.hrtime.bigint();
      try {
        await lookup(sample);
        latencies.push(Number(process.hrtime.bigint() - begun) / 1e6);
      } catch (error) {
        countFailure(failedBy, failureReason(error));
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return summarise(latencies, failedBy, Number(process.hrtime.bigint() - started) / 1e9);
}

/**
 * Sums the Server-Timing headers of a run (src/api/timing.ts): the mean of each part over every
 * answer, and over the slowest 1 % by the API's own total, so the tail explains itself too.
 */
class Breakdown {
  private readonly answers: Map<string, number>[] = [];

  add(header: string | undefined): void {
    if (header === undefined) return;
    const parts = new Map<string, number>();
    for (const part of header.split(',')) {
      const [name, duration] = part.trim().split(';dur=');
      parts.set(name, Number(duration));
    }
    this.answers.push(parts);
  }

  private static parts(answers: Map<string, number>[]): string {
    const mean = (name: string): string => fmt(answers.reduce((sum, a) => sum + (a.get(name) ?? 0), 0) / Math.max(1, answers.length), 2);
    return `${mean('total')} = validate ${mean('validate')} + batch queue ${mean('queue')} + engine ${mean('engine')} (its took ${mean('took')}) + serialise ${mean('serialise')} + domain and event loop ${mean('app')}`;
  }

  describe(stats: ChildStats, requests: number): string {
    const sorted = [...this.answers].sort((a, b) => (a.get('total') ?? 0) - (b.get('total') ?? 0));
    const p99 = sorted[Math.ceil(0.99 * sorted.length) - 1]?.get('total') ?? NaN;
    const slowest = sorted.slice(Math.floor(0.99 * sorted.length));
    return `in the API ${Breakdown.parts(sorted)}; its p99 ${fmt(p99, 1)}, the slowest 1 % ${Breakdown.parts(slowest)}; `
      + `event-loop delay p50 ${fmt(stats.eventLoop.p50, 2)} / p99 ${fmt(stats.eventLoop.p99, 2)} / max ${fmt(stats.eventLoop.max, 1)}; `
      + `GC ${fmt(stats.gc.ms / Math.max(1, requests), 3)} ms a request (${fmt(stats.gc.count)} pauses, ${fmt(stats.gc.ms)} ms, the longest ${fmt(stats.gc.longest, 1)}; `
      + `${fmt(stats.gc.major.count)} of them full collections, ${fmt(stats.gc.major.ms)} ms); `
      + `main thread on the core ${fmt(stats.core.runMs / Math.max(1, requests), 3)} ms a request, ready and waiting for it ${fmt(stats.core.waitMs / Math.max(1, requests), 3)} ms a request, `
      + `the core taken from it ${fmt(stats.core.preempted / Math.max(1, requests), 2)} times a request`;
  }
}

// ---------------------------------------------------------------------------------------------
// The ceiling: the queries src/engine sends for a lone request, through the client, nothing else.
// The searches a lookup sends at once leave as one _msearch, as the service sends them when it has
// nothing else in flight; what the ceiling does not do is the service's coalescing of the searches
// of concurrent requests into one _msearch (src/engine/msearch-batcher.ts): that saving is the service's own.

interface AssignmentHit { uci: number; sourceId: number; compoundId: string; standardInchiKey: string }

const unlimited = 1_000_000;

export function ceilingLookups(engine: Engine) {
  const { client, names } = engine;
  const assignmentSort: Record<string, 'asc'>[] = [{ uci: 'asc' }, { sourceId: 'asc' }, { compoundId: 'asc' }];
  type Search = { index: string; body: Record<string, unknown> };
  // The searches of one stage of a lookup, in one _msearch.
  const together = async <T>(searches: Search[]): Promise<estypes.SearchResponse<T>[]> => {
    const { responses } = await client.msearch<T>({ searches: searches.flatMap((search) => [{ index: search.index, ignore_unavailable: true, allow_no_indices: true }, search.body]) });
    return responses.map((response) => {
      if ('error' in response) throw new Error(JSON.stringify(response.error));
      return response;
    });
  };
  // lookups.ts assignmentsWhere: current assignments only, a first page of 100 (sent with the stage's other searches), then pages of 5,000.
  const assignmentsSearch = (clause: object, size: number, after?: unknown[], index = names.assignments): Search => ({
    index, body: { size, track_total_hits: false, query: { bool: { filter: [clause, { term: { assignment: 1 } }] } }, sort: assignmentSort, ...(after ? { search_after: after } : {}) },
  });
  const restOfAssignments = async (first: estypes.SearchResponse<AssignmentHit>, clause: object, limit: number): Promise<void> => {
    let hits = first.hits.hits;
    let count = hits.length;
    let size = Math.min(100, limit);
    while (hits.length === size && count < limit) {
      size = Math.min(5_000, limit - count);
      [{ hits: { hits } }] = await together<AssignmentHit>([assignmentsSearch(clause, size, hits[hits.length - 1].sort)]);
      count += hits.length;
    }
  };
  // compounds.ts compoundsByKey: the structures by _id (= InChIKey).
  const structures = (keys: string[]): Search => ({ index: names.compounds, body: { size: keys.length, query: { ids: { values: keys } }, _source: { excludes: ['loadId'] }, track_total_hits: false } });
  return {
    /** POST /compounds {type: inchikey}: assignments by key and the key's structure, at once. */
    compoundsByKey: async (key: string): Promise<void> => {
      const clause = { terms: { standardInchiKey: [key] } };
      const [assignments] = await together<AssignmentHit>([assignmentsSearch(clause, 100), structures([key])]);
      await restOfAssignments(assignments, clause, unlimited);
    },
    /** POST /compounds {type: sourceID}: the id in its source's alias, then every assignment of its structures and the structures at once. */
    compoundsBySourceId: async (id: { sourceId: number; compoundId: string }): Promise<void> => {
      const ownClause = { bool: { filter: [{ term: { compoundId: id.compoundId } }, { term: { sourceId: id.sourceId } }] } };
      const [own] = await together<AssignmentHit>([assignmentsSearch(ownClause, 100, undefined, names.assignmentsOf(id.sourceId))]);
      // v1.ts queryAssignments: the structures' other assignments and the structures (by the keys the id's assignments carry), at once.
      const hits = own.hits.hits.map((hit) => hit._source!);
      if (hits.length === 0) return;
      const clause = { terms: { uci: [...new Set(hits.map((x) => x.uci))] } };
      const [assignments] = await together<AssignmentHit>([assignmentsSearch(clause, 100), structures([...new Set(hits.map((x) => x.standardInchiKey))])]);
      await restOfAssignments(assignments, clause, unlimited);
    },
    /**
     * POST /connectivity {type: inchikey}: a first page of the key's current assignments (paging.ts: is it indexed?), its structure, and the
     * skeleton its first block names (the skeleton's structures and, by the block they carry, their
     * assignments), all at once (v1.ts searchConnectivity, connectivity.ts readSkeleton).
     */
    connectivityByKey: async (key: string): Promise<void> => {
      const clause = { term: { connectivityBlock: key.slice(0, 14) } };
      const [, , , assignments] = await together<AssignmentHit>([
        assignmentsSearch({ terms: { standardInchiKey: [key] } }, 100), structures([key]),
        { index: names.compounds, body: { size: 100, query: clause, sort: [{ uci: 'asc' }], _source: { excludes: ['loadId'] }, track_total_hits: false } },
        assignmentsSearch(clause, 100),
      ]);
      await restOfAssignments(assignments, clause, unlimited);
    },
  };
}

// ---------------------------------------------------------------------------------------------

async function check(url: string, path: string, body: object): Promise<void> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await response.json() as { response?: string; totalCompounds?: number };
  if (response.status !== 200 || answer.response !== 'Success' || !answer.totalCompounds) {
    throw new Error(`${path} ${JSON.stringify(body)} answered ${response.status} ${JSON.stringify(answer).slice(0, 300)}`);
  }
}

async function main(): Promise<void> {
  const config: Config = { ...readConfig(), ES_INDEX_PREFIX: prefix };
  const engine = new Engine(config);
  try {
    await engine.client.cluster.health({ wait_for_status: 'yellow', timeout: '30s' }).catch(() => {
      throw new Error(`no Elasticsearch answers on ${config.ES_URL}: start one with \`npm run es:start\``);
    });
    if (process.argv.includes('--clean')) {
      await deleteIndicesByPrefix(config.ES_URL, prefix);
      rmSync(dumpFolder, { recursive: true, force: true });
      out(`deleted the ${prefix}-* indices and ${dumpFolder}`);
      return;
    }
    out(`API benchmark (issue 5): node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Elasticsearch at ${config.ES_URL}`);
    await ensureLoaded(engine, config);
    const { keys, ids } = await samples();
    out(`${fmt(keys.length)} InChIKeys and ${fmt(ids.length)} source ids drawn from the set; ${connections} connections, ${seconds} s per run, ${warmUpSeconds} s warm-up`);

    const ceiling = ceilingLookups(engine);
    const allCases = [
      { name: 'compounds by InChIKey', path: '/api/v1/compounds', bodies: keys.map((compound) => ({ type: 'inchikey', compound })), ceiling: (duration: number) => driveEngine(ceiling.compoundsByKey, keys, duration), pacedCeiling: (duration: number, rate: number) => paceEngine(ceiling.compoundsByKey, keys, duration, rate) },
      { name: 'compounds by sourceID', path: '/api/v1/compounds', bodies: ids.map((id) => ({ type: 'sourceID', compound: id.compoundId, sourceID: id.sourceId })), ceiling: (duration: number) => driveEngine(ceiling.compoundsBySourceId, ids, duration), pacedCeiling: (duration: number, rate: number) => paceEngine(ceiling.compoundsBySourceId, ids, duration, rate) },
      { name: 'connectivity by InChIKey', path: '/api/v1/connectivity', bodies: keys.map((compound) => ({ type: 'inchikey', compound })), ceiling: (duration: number) => driveEngine(ceiling.connectivityByKey, keys, duration), pacedCeiling: (duration: number, rate: number) => paceEngine(ceiling.connectivityByKey, keys, duration, rate) },
    ];
    const cases = allCases.filter((c) => c.name.includes(process.env.BENCH_API_ONLY ?? ''));

    const cores = splitCoresRequested() ? await splitCores(engine) : undefined;
    out(cores ? `--split-cores: ${cores.describe}` : 'the engine, the API and the load generator share every core (`-- --split-cores` gives the engine a core of its own)');
    const profile = process.env.BENCH_API_PROFILE;
    const flags = (process.env.BENCH_API_NODE_FLAGS ?? '').split(' ').filter(Boolean);
    if (flags.length > 0) out(`the API child runs with ${flags.join(' ')}`);
    const { child, url } = await startApiChild(__filename, { ES_INDEX_PREFIX: prefix }, [...process.execArgv, ...flags, ...(profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : [])]).catch((error) => { cores?.restore(); throw error; });
    // The load generator's nice value and scheduling policy at half the peak (experiments; 0 and the
    // default policy as measured in BENCHMARKS.md). With --split-cores it shares its core with the
    // API: at nice 0 each answer that wakes it takes the core from the API, about once a request. At
    // nice 10 the API kept the core, but the load generator, starved while the API was busy, sent
    // its requests in bursts: a worse tail (BENCHMARKS.md, API, "The load generator behind the API").
    const clientNice = Number(process.env.BENCH_API_CLIENT_NICE ?? 0);
    if (!Number.isInteger(clientNice)) throw new Error(`BENCH_API_CLIENT_NICE is a whole number, not ${process.env.BENCH_API_CLIENT_NICE}`);
    const clientPolicy = process.env.BENCH_API_CLIENT_POLICY as 'batch' | 'idle' | undefined;
    if (clientPolicy && clientPolicy !== 'batch' && clientPolicy !== 'idle') throw new Error(`BENCH_API_CLIENT_POLICY is batch or idle, not ${clientPolicy}`);
    const clientBeside = process.env.BENCH_API_CLIENT_CORE ?? 'engine';
    if (clientBeside !== 'engine' && clientBeside !== 'api') throw new Error(`BENCH_API_CLIENT_CORE is engine or api, not ${clientBeside}`);
    // The service's half-peak runs only: at full speed autocannon would take a third of the engine's core.
    const clientCore = cores && clientBeside === 'engine' ? cores.engineCore : undefined;
    if (clientCore) out(`at half the peak the service's load generator runs on core ${clientCore}, beside the engine; the API child and the ceiling's client each have core ${cores!.rest} to themselves`);
    const rows: { name: string; service: Measure[]; engine: Measure[]; half?: Measure; halfCeiling?: Measure; breakdown?: string }[] = [];
    const cpu = (m: Measure): string => (m.cpuMs ? `; CPU ms per request: engine ${fmt(m.cpuMs.engine, 1)}, API ${fmt(m.cpuMs.api, 1)}, load generator ${fmt(m.cpuMs.client, 1)}` : '');
    const failed = (m: Measure): string => (m.failures > 0 ? `; ${fmt(m.failures)} failed: ${describeFailures(m.failedBy ?? {})}` : '');
    const clientGc = (m: Measure): string => (m.clientGc ? `; load generator's GC ${fmt(m.clientGc.ms)} ms, ${m.clientGc.full} full` : '');
    const line = (m: Measure): string => `${fmt(m.rps)} req/s (p50 ${fmt(m.p50, 1)} ms, p99 ${fmt(m.p99, 1)} ms${cpu(m)}${clientGc(m)}${failed(m)})`;
    try {
      for (const c of cases) for (const body of c.bodies.slice(0, 20)) await check(url, c.path, body);
      for (const c of cases) {
        await drive(url, c.path, c.bodies, warmUpSeconds, connections);
        await c.ceiling(warmUpSeconds);
        // Service, ceiling, ceiling, service: a load that drifts during the four runs weighs on both alike.
        const row = { name: c.name, service: [] as Measure[], engine: [] as Measure[] };
        for (const which of ['service', 'engine', 'engine', 'service'] as const) {
          const measure = which === 'service'
            ? await withCpu(engine, child, () => drive(url, c.path, c.bodies, seconds, connections))
            : await withCpu(engine, child, () => c.ceiling(seconds));
          row[which].push(measure);
          out(`${c.name}, ${which === 'service' ? 'service' : 'ceiling'}: ${line(measure)}`);
        }
        rows.push(row);
      }
      // After the fork and the full-speed runs: the API child keeps the nice value it was born with,
      // and the peak that sets the half rate is measured at nice 0.
      if (clientNice !== 0) {
        niceThreads(process.pid, clientNice);
        out(`at half the peak the load generator runs at nice ${clientNice}, the API child and the engine at 0`);
      }
      if (clientPolicy) {
        scheduleThreads(process.pid, clientPolicy);
        out(`at half the peak the load generator runs as SCHED_${clientPolicy.toUpperCase()}, the API child and the engine as SCHED_OTHER`);
      }
      for (const [i, c] of cases.entries()) {
        const rate = Math.max(1, Math.round(mean(rows[i].service, 'rps') / 2));
        // Service, ceiling, ceiling, service here too: a p99 is the slowest 1 % of 15 seconds, and
        // one disturbed run of either side alone would make the ratio.
        const timings = new Breakdown();
        const [half, halfCeiling]: Measure[][] = [[], []];
        let requests = 0;
        child.send('stats-reset');
        for (const which of ['service', 'ceiling', 'ceiling', 'service'] as const) {
          child.send(which === 'service' ? 'stats-resume' : 'stats-pause');
          if (which === 'service') {
            if (clientCore) pin(process.pid, clientCore);
            const measure = await withCpu(engine, child, () => drivePaced(url, c.path, c.bodies, seconds, rate, 'server-timing', (_status, timing) => timings.add(timing)));
            if (clientCore) pin(process.pid, cores!.rest);
            half.push(measure);
            requests += measure.requests + measure.failures;
            out(`${c.name} at ${fmt(rate)} req/s: ${line(measure)}`);
          } else {
            const measure = await withCpu(engine, child, () => c.pacedCeiling(seconds, rate));
            halfCeiling.push(measure);
            out(`${c.name}, ceiling at ${fmt(rate)} req/s: ${line(measure)}`);
          }
        }
        rows[i].half = meanOf(half);
        rows[i].halfCeiling = meanOf(halfCeiling);
        // The API's event loop and GC over its own two runs only.
        rows[i].breakdown = timings.describe(await childStats(child), requests);
        out(`  where a request's time went: ${rows[i].breakdown}`);
      }
    } finally {
      await stopApiChild(child);
      cores?.restore();
    }

    out('');
    out(`| lookup | service req/s | p50 / p99 ms | ceiling req/s | p50 / p99 ms | service/ceiling | at half the service's peak: req/s, p50 / p99 ms | ceiling at that rate: p50 / p99 ms | p99 ratio | CPU ms per request, service: engine / API / load generator | ceiling: engine / load generator |`);
    out('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const half = r.half!;
      const all = meanOf([...r.service, ...r.engine, half, r.halfCeiling!]);
      if (all.failures > 0) out(`${r.name}: ${fmt(all.failures)} failed requests (${describeFailures(all.failedBy ?? {})}; each run's line says which)`);
      // Means of the two full-speed runs of each side, as at half the peak.
      const [service, ceiling] = [meanOf(r.service), meanOf(r.engine)];
      out(`| ${r.name} | ${fmt(service.rps)} | ${fmt(service.p50, 1)} / ${fmt(service.p99, 1)} | ${fmt(ceiling.rps)} | ${fmt(ceiling.p50, 1)} / ${fmt(ceiling.p99, 1)} | ${fmt(service.rps / ceiling.rps, 2)} | ${fmt(half.rps)}, ${fmt(half.p50, 1)} / ${fmt(half.p99, 1)} | ${fmt(r.halfCeiling!.p50, 1)} / ${fmt(r.halfCeiling!.p99, 1)} | ${fmt(half.p99 / r.halfCeiling!.p99, 2)} | ${fmt(service.cpuMs!.engine, 1)} / ${fmt(service.cpuMs!.api, 1)} / ${fmt(service.cpuMs!.client, 1)} | ${fmt(ceiling.cpuMs!.engine, 1)} / ${fmt(ceiling.cpuMs!.client, 1)} |`);
    }
    out('(means of two runs each, in the order service, ceiling, ceiling, service, at full speed and at half the peak: an open loop of evenly spaced requests, latency of every response)');
    out('');
    out('Where a request\'s time went at half the peak (means of the Server-Timing of every answer, ms; event-loop delay and GC of the API process over its runs):');
    for (const r of rows) out(`- ${r.name}: ${r.breakdown}`);
    out(`goals (issue 27): connectivity ≥ 0.9 of its ceiling's req/s; at half the peak, each lookup's p99 ≤ 1.5× the ceiling's at that rate. The ${prefix}-* indices stay for the next run: \`npm run bench:api -- --clean\` deletes them.`);
  } finally {
    await engine.close();
  }
}

if (require.main === module) {
  const run = process.argv.includes('--serve') ? serveApi() : main();
  run.catch((error) => {
    process.stderr.write(`bench:api failed: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  });
}
