// Benchmark of the v1 API on bench:api's copy of the benchmark set (bench/dataset.ts), the API in a
// child process: POST /api/v1/compounds by InChIKey and by sourceID, POST /api/v1/connectivity, at
// 16 connections and then at half the service's peak (an open loop), against the ceiling: the same
// engine searches sent by a client. Each runs service, ceiling, ceiling, service. At half the peak it
// also sums where a request's time went (Server-Timing, src/api/timing.ts).
//
//   npm run bench:api [-- --split-cores]   # loads bench-api-* if needed; `-- --clean` deletes it
//   BENCH_API_SECONDS=10 npm run bench:api   # runs of 10 s instead of 15
//
// With --split-cores the service's load generator stands on the engine's core in the half-peak runs,
// so that the API has its core to itself as the ceiling's client has.
import { rmSync } from 'node:fs';
import type { estypes } from '@elastic/elasticsearch';
import type { Engine } from '../src/engine/client';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { collectOwnGarbage, engineCpuSeconds, fmt, openBench, out, pin, processCpuSeconds, runBench } from './common';
import { splitCoresIfAsked, startApi } from './common';
import { apiDumpFolder, apiPrefix, apiSamples, ensureLoaded } from './dataset';
import { closedLoop, describeFailures, drive, drivePaced, paced, type Measure } from './load-generator';

const seconds = Number(process.env.BENCH_API_SECONDS || 15);
// After 3 s of warm-up the first service run was 20-30 % below the last: the JIT and the engine's caches still warming.
const [connections, warmUpSeconds] = [16, 10];

/** The ceiling: `connections` async loops sending lookup `n` (n counting up), for `duration` seconds. */
function driveEngine(lookup: (n: number) => Promise<void>, duration: number): Promise<Measure> {
  return closedLoop(connections, duration, (n) => lookup(n).then(() => ({ answered: 1, failed: 0 })));
}

/** Runs `work`, adding the CPU ms per request of the engine, the API child and this process (the load generator). */
async function withCpu(engine: Engine, apiPid: number, work: () => Promise<Measure>): Promise<Measure> {
  collectOwnGarbage();
  const now = async (): Promise<number[]> => {
    const own = process.cpuUsage();
    return [await engineCpuSeconds(engine), processCpuSeconds(apiPid), (own.user + own.system) / 1e6];
  };
  const before = await now();
  const measure = await work();
  const perRequest = (after: number, i: number): number => ((after - before[i]) * 1000) / Math.max(1, measure.requests);
  const [engineCpu, api, client] = (await now()).map(perRequest);
  return { ...measure, cpuMs: { engine: engineCpu, api, client } };
}

/** The mean of runs: of their rates, percentiles and CPU a request. */
function meanOf(list: Measure[]): Measure {
  const avg = (pick: (m: Measure) => number): number => list.reduce((sum, m) => sum + pick(m), 0) / list.length;
  const [rps, p50, p99, requests, failures] = [avg((m) => m.rps), avg((m) => m.p50), avg((m) => m.p99), 0, 0];
  const cpu = (key: 'engine' | 'api' | 'client'): number => avg((m) => m.cpuMs![key]);
  const cpuMs = { engine: cpu('engine'), api: cpu('api'), client: cpu('client') };
  return { rps, p50, p99, requests, failures, cpuMs };
}

/** Where answers' time went (Server-Timing): each part's mean over all, and over the slowest 1 % by the API's total. */
function breakdown(headers: string[]): string {
  const parts = (header: string): [string, number][] =>
    header
      .split(',')
      .map((part) => part.trim().split(';dur='))
      .map(([name, ms]) => [name, Number(ms)]);
  const answers = headers
    .map((header) => new Map(parts(header)))
    .sort((a, b) => (a.get('total') ?? 0) - (b.get('total') ?? 0));
  const means = (list: Map<string, number>[]): string => {
    const avg = (name: string): string => fmt(list.reduce((sum, a) => sum + (a.get(name) ?? 0), 0) / list.length, 2);
    return (
      `${avg('total')} = validate ${avg('validate')} + batch queue ${avg('queue')} + engine ${avg('engine')} ` +
      `(its took ${avg('took')}) + serialise ${avg('serialise')} + domain and event loop ${avg('app')}`
    );
  };
  const p99 = answers[Math.ceil(0.99 * answers.length) - 1]?.get('total') ?? NaN;
  const slowest = answers.slice(Math.floor(0.99 * answers.length));
  return `all ${means(answers)}; the API's own p99 ${fmt(p99, 1)}; its slowest 1 % ${means(slowest)}`;
}

type AssignmentHit = { uci: number; sourceId: number; compoundId: string; standardInchiKey: string };

/**
 * The ceiling: the engine's searches for each lookup of the service (src/engine), sent by a client,
 * each stage's in one _msearch as the service sends them when nothing else is in flight. The
 * service's merging of concurrent requests' searches (src/engine/msearch-batcher.ts) is its own.
 */
export function ceilingLookups(engine: Engine) {
  const { client, names } = engine;
  type Search = { index: string; body: Record<string, unknown> };
  const together = async <T>(searches: Search[]): Promise<estypes.SearchResponse<T>[]> => {
    const header = (index: string): object => ({ index, ignore_unavailable: true, allow_no_indices: true });
    const { responses } = await client.msearch<T>({ searches: searches.flatMap((s) => [header(s.index), s.body]) });
    return responses.map((response) => {
      if ('error' in response) throw new Error(JSON.stringify(response.error));
      return response;
    });
  };
  // Current assignments only: a first page of 100 (sent with the stage's other searches), then pages of 5,000.
  const assignmentsSearch = (clause: object, size: number, after?: unknown[], index = names.assignments): Search => ({
    index,
    body: {
      size,
      track_total_hits: false,
      query: { bool: { filter: [clause, { term: { assignment: 1 } }] } },
      sort: [{ uci: 'asc' }, { sourceId: 'asc' }, { compoundId: 'asc' }],
      ...(after ? { search_after: after } : {}),
    },
  });
  const restOfAssignments = async (first: estypes.SearchResponse<AssignmentHit>, clause: object): Promise<void> => {
    let hits = first.hits.hits;
    let size = 100;
    while (hits.length === size) {
      size = 5_000;
      const after = hits[hits.length - 1].sort;
      const [next] = await together<AssignmentHit>([assignmentsSearch(clause, size, after)]);
      hits = next.hits.hits;
    }
  };
  const compounds = (size: number, query: object, sort?: object): Search => ({
    index: names.compounds,
    body: { size, query, ...(sort ? { sort } : {}), _source: { excludes: ['loadId'] }, track_total_hits: false },
  });
  const structures = (keys: string[]): Search => compounds(keys.length, { ids: { values: keys } });
  return {
    /** POST /compounds by InChIKey: the key's assignments and its structure, at once. */
    compoundsByKey: async (key: string): Promise<void> => {
      const clause = { terms: { standardInchiKey: [key] } };
      const [found] = await together<AssignmentHit>([assignmentsSearch(clause, 100), structures([key])]);
      await restOfAssignments(found, clause);
    },
    /** POST /compounds by sourceID: the id in its source's alias, then its structures and their assignments. */
    compoundsBySourceId: async (id: { sourceId: number; compoundId: string }): Promise<void> => {
      const own = { bool: { filter: [{ term: { compoundId: id.compoundId } }, { term: { sourceId: id.sourceId } }] } };
      const [found] = await together<AssignmentHit>([
        assignmentsSearch(own, 100, undefined, names.assignmentsOf(id.sourceId)),
      ]);
      const hits = found.hits.hits.map((hit) => hit._source!);
      if (hits.length === 0) return;
      const clause = { terms: { uci: [...new Set(hits.map((x) => x.uci))] } };
      const keys = [...new Set(hits.map((x) => x.standardInchiKey))];
      const [rest] = await together<AssignmentHit>([assignmentsSearch(clause, 100), structures(keys)]);
      await restOfAssignments(rest, clause);
    },
    /** POST /connectivity by key: the key's assignments and structure, the skeleton's structures and assignments. */
    connectivityByKey: async (key: string): Promise<void> => {
      const clause = { term: { connectivityBlock: key.slice(0, 14) } };
      const [, , , found] = await together<AssignmentHit>([
        assignmentsSearch({ terms: { standardInchiKey: [key] } }, 100),
        structures([key]),
        compounds(100, clause, [{ uci: 'asc' }]),
        assignmentsSearch(clause, 100),
      ]);
      await restOfAssignments(found, clause);
    },
  };
}

type Lookup = { name: string; path: string; bodies: object[]; lookup: (n: number) => Promise<void> };
type Row = Record<'service' | 'ceiling' | 'half' | 'halfCeiling', Measure[]> & { name: string; breakdown: string };

async function main(): Promise<void> {
  const { config, engine } = await openBench('bench:api', apiPrefix);
  try {
    if (process.argv.includes('--clean')) {
      await deleteIndicesByPrefix(config.ES_URL, apiPrefix);
      rmSync(apiDumpFolder, { recursive: true, force: true });
      return out(`deleted the ${apiPrefix}-* indices and ${apiDumpFolder}`);
    }
    await ensureLoaded(engine, config);
    const { keys, ids } = await apiSamples();
    out(`${fmt(keys.length)} keys and ${fmt(ids.length)} source ids; ${connections} connections, ${seconds} s a run`);
    const ceiling = ceilingLookups(engine);
    const byKey = keys.map((compound) => ({ type: 'inchikey', compound }));
    const byId = ids.map((id) => ({ type: 'sourceID', compound: id.compoundId, sourceID: id.sourceId }));
    const [compounds, skeleton] = ['/api/v1/compounds', '/api/v1/connectivity'];
    // The ceiling's lookup n: the engine's searches for the nth sample.
    const nth =
      <T>(samples: T[], lookup: (sample: T) => Promise<void>) =>
      (n: number): Promise<void> =>
        lookup(samples[n % samples.length]);
    const cases: Lookup[] = [
      { name: 'compounds by InChIKey', path: compounds, bodies: byKey, lookup: nth(keys, ceiling.compoundsByKey) },
      { name: 'compounds by sourceID', path: compounds, bodies: byId, lookup: nth(ids, ceiling.compoundsBySourceId) },
      { name: 'connectivity by InChIKey', path: skeleton, bodies: byKey, lookup: nth(keys, ceiling.connectivityByKey) },
    ];
    const cores = await splitCoresIfAsked(engine);
    const api = await startApi({ ES_INDEX_PREFIX: apiPrefix }).catch((error) => {
      cores?.restore();
      throw error;
    });
    type Side = 'service' | 'ceiling' | 'half' | 'halfCeiling';
    const measure = async (row: Row, which: Side, label: string, work: () => Promise<Measure>): Promise<void> => {
      const m = await withCpu(engine, api.child.pid!, work);
      row[which].push(m);
      const failed = m.failures > 0 ? `; ${fmt(m.failures)} failed: ${describeFailures(m)}` : '';
      const { engine: e, api: a, client } = m.cpuMs!;
      out(
        `${row.name}, ${label}: ${fmt(m.rps)} req/s, p50 ${fmt(m.p50, 1)} ms, p99 ${fmt(m.p99, 1)} ms; CPU ms a ` +
          `request: engine ${fmt(e, 2)}, API ${fmt(a, 2)}, load generator ${fmt(client, 2)}${failed}`,
      );
    };
    const rows: Row[] = [];
    try {
      for (const c of cases) {
        await drive(api.url, c.path, c.bodies, warmUpSeconds, connections);
        await driveEngine(c.lookup, warmUpSeconds);
        const row: Row = { name: c.name, service: [], ceiling: [], half: [], halfCeiling: [], breakdown: '' };
        rows.push(row);
        // Service, ceiling, ceiling, service: a load that drifts during the four runs weighs on both alike.
        for (const which of ['service', 'ceiling', 'ceiling', 'service'] as const) {
          await measure(row, which, which, () =>
            which === 'service'
              ? drive(api.url, c.path, c.bodies, seconds, connections)
              : driveEngine(c.lookup, seconds),
          );
        }
      }
      for (const [i, c] of cases.entries()) {
        const rate = Math.max(1, Math.round(meanOf(rows[i].service).rps / 2));
        const timings: string[] = [];
        for (const which of ['service', 'ceiling', 'ceiling', 'service'] as const) {
          if (cores) pin(process.pid, which === 'service' ? cores.engineCore : cores.rest);
          await measure(rows[i], which === 'service' ? 'half' : 'halfCeiling', `${which} at ${fmt(rate)} req/s`, () =>
            which === 'service'
              ? drivePaced(api.url, c.path, c.bodies, seconds, rate, 'server-timing', (_, t) => t && timings.push(t))
              : paced((n) => c.lookup(n).then(() => true as const), seconds, rate),
          );
        }
        if (cores) pin(process.pid, cores.rest);
        rows[i].breakdown = breakdown(timings);
      }
    } finally {
      await api.stop();
      cores?.restore();
    }
    out(
      '\n| lookup | service req/s | p50 / p99 ms | ceiling req/s | p50 / p99 ms | service/ceiling ' +
        "| at half the service's peak: req/s, p50 / p99 ms | ceiling at that rate: p50 / p99 ms | p99 ratio " +
        '| CPU ms a request, service: engine / API / load generator | ceiling: engine / client |',
    );
    out('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      const [service, top, half, halfCeiling] = [r.service, r.ceiling, r.half, r.halfCeiling].map(meanOf);
      const ms = (m: Measure): string => `${fmt(m.p50, 1)} / ${fmt(m.p99, 1)}`;
      const cpu = (m: Measure, ...of: ('engine' | 'api' | 'client')[]): string =>
        of.map((k) => fmt(m.cpuMs![k], 2)).join(' / ');
      out(
        `| ${r.name} | ${fmt(service.rps)} | ${ms(service)} | ${fmt(top.rps)} | ${ms(top)} ` +
          `| ${fmt(service.rps / top.rps, 2)} | ${fmt(half.rps)}, ${ms(half)} | ${ms(halfCeiling)} ` +
          `| ${fmt(half.p99 / halfCeiling.p99, 2)} ` +
          `| ${cpu(service, 'engine', 'api', 'client')} | ${cpu(top, 'engine', 'client')} |`,
      );
    }
    out('(means of two runs each: service, ceiling, ceiling, service; at half the peak an open loop)');
    for (const r of rows) out(`- ${r.name}, where a request's time went at half the peak (ms): ${r.breakdown}`);
  } finally {
    await engine.close();
  }
}

runBench(module, 'bench:api', main);
