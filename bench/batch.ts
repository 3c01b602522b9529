// Benchmark of bulk mapping (issue 28) on the 500,000-structure set of bench:api (prefix bench-api,
// loaded once and reused): 10,000 compounds queries (5,000 InChIKeys and 5,000 source ids of the
// set, interleaved), answered
//   - by POST /api/v1/batch, 1,000 queries a batch, one batch at a time (BATCH_CONCURRENCY queries
//     in flight inside the service), and the same over 4 connections;
//   - one per request (POST /api/v1/compounds) at BATCH_CONCURRENCY connections: as many in flight;
//   - raw: the same engine searches sent straight from a client loop, one _msearch per lookup
//     stage, BATCH_CONCURRENCY lookups in flight (bench:api's ceiling).
// Then a job of BENCH_JOB_QUERIES (1,000,000) queries: its rate and the API's peak RSS, and the
// latency of lone lookups (an open loop at BENCH_JOB_LOOKUP_RATE, 100/s) with and without the job.
//
//   npm run bench:batch                   # loads bench-api-* if needed, then measures
//   npm run bench:batch -- --split-cores  # the engine on a core of its own (bench/cores.ts)
//   BENCH_JOB_QUERIES=0 npm run bench:batch  # no job
import { cpus } from 'node:os';
import { readConfig, type Config } from '../src/config';
import { Engine } from '../src/engine/client';
import { deleteJobs } from '../src/engine/jobs';
import { serveApi, startApiChild, stopApiChild } from './api-child';
import { ceilingLookups, ensureLoaded, prefix, samples } from './api';
import { splitCores, splitCoresRequested } from './cores';
import { countFailure, drive, drivePaced, summarise, type FailedBy, type Measure } from './load-generator';
import { readProc } from './proc';

const out = (text: string): boolean => process.stdout.write(`${text}\n`);
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const seconds = Number(process.env.BENCH_BATCH_SECONDS || 15);
const jobQueries = Number(process.env.BENCH_JOB_QUERIES ?? 1_000_000);
const lookupRate = Number(process.env.BENCH_JOB_LOOKUP_RATE || 100);
const batchSize = 1_000;

type Query = { type: 'inchikey'; compound: string } | { type: 'sourceID'; compound: string; sourceID: number };

/**
 * `workers` loops running `work(i)` (i counting up across them) for `duration` s; `work` resolves
 * with how many queries it answered and how many failed. Queries answered a second, and each call's
 * latency.
 */
async function loop(workers: number, duration: number, work: (i: number) => Promise<{ answered: number; failed: number }>): Promise<Measure> {
  let next = 0;
  let answered = 0;
  const failedBy: FailedBy = {};
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(duration * 1e9);
  const worker = async (): Promise<void> => {
    while (process.hrtime.bigint() < deadline) {
      const begun = process.hrtime.bigint();
      const counts = await work(next++).catch(() => ({ answered: 0, failed: 1 }));
      answered += counts.answered;
      if (counts.failed > 0) countFailure(failedBy, 'queries not answered', counts.failed);
      latencies.push(Number(process.hrtime.bigint() - begun) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return { ...summarise(latencies, failedBy, elapsed), rps: answered / elapsed, requests: answered };
}

/** Batches of `queries` sent back to back over `connections` for `duration` s. */
function driveBatches(url: string, queries: Query[], duration: number, connections: number): Promise<Measure> {
  const bodies: string[] = [];
  for (let start = 0; start < queries.length; start += batchSize) bodies.push(JSON.stringify({ queries: queries.slice(start, start + batchSize) }));
  return loop(connections, duration, async (i) => {
    const response = await fetch(`${url}/api/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[i % bodies.length] });
    const lines = (await response.text()).split('\n').filter(Boolean);
    const answered = lines.filter((line) => line.includes('"status":200,')).length;
    return { answered, failed: lines.length - answered };
  });
}

/** The engine's own searches for each query, `concurrency` lookups in flight, for `duration` s. */
function driveRaw(engine: Engine, queries: Query[], duration: number, concurrency: number): Promise<Measure> {
  const ceiling = ceilingLookups(engine);
  return loop(concurrency, duration, async (i) => {
    const query = queries[i % queries.length];
    if (query.type === 'inchikey') await ceiling.compoundsByKey(query.compound);
    else await ceiling.compoundsBySourceId({ sourceId: query.sourceID, compoundId: query.compound });
    return { answered: 1, failed: 0 };
  });
}

/** The API child's resident set now and at its peak, MB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readProc(pid, 'status') ?? '';
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function runJob(url: string, pid: number, queries: Query[], count: number, lookups: object[]): Promise<void> {
  const lines: string[] = [];
  for (let i = 0; i < count; i += 1) lines.push(JSON.stringify({ id: i, ...queries[i % queries.length] }));
  const body = `${lines.join('\n')}\n`;
  lines.length = 0;
  const before = memoryOf(pid);
  const submitted = process.hrtime.bigint();
  const response = await fetch(`${url}/api/v1/jobs`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
  const accepted = await response.json() as { jobId: string; total: number };
  if (response.status !== 202) throw new Error(`POST /jobs answered ${response.status} ${JSON.stringify(accepted)}`);
  out(`job of ${fmt(accepted.total)} queries (${fmt(Buffer.byteLength(body) / 1e6, 1)} MB of NDJSON) accepted in ${fmt(Number(process.hrtime.bigint() - submitted) / 1e9, 1)} s`);
  let job: { status: string; done: number; total: number; errors: number; ratePerSecond: number | null; started: string; finished: string | null } | undefined;
  let peak = before.peak;
  let during: Measure | undefined;
  for (;;) {
    job = await (await fetch(`${url}/api/v1/jobs/${accepted.jobId}`)).json() as typeof job;
    peak = Math.max(peak, memoryOf(pid).peak);
    if (!during && job!.status === 'running' && job!.done > 0) {
      during = await drivePaced(url, '/api/v1/compounds', lookups, 10, lookupRate);
      out(`lone lookups at ${lookupRate}/s while the job runs: p50 ${fmt(during.p50, 1)} ms, p99 ${fmt(during.p99, 1)} ms, ${during.failures} failed`);
    }
    if (job!.status === 'done' || job!.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const runSeconds = (Date.parse(job!.finished!) - Date.parse(job!.started)) / 1000;
  out(`job ${job!.status}: ${fmt(job!.done)} lines, ${fmt(job!.errors)} errors, in ${fmt(runSeconds, 1)} s = ${fmt(job!.done / runSeconds)} queries/s; API peak RSS ${fmt(peak)} MB (before the job ${fmt(before.rss)} MB)`);
  const started = process.hrtime.bigint();
  const results = await fetch(`${url}/api/v1/jobs/${accepted.jobId}/results`);
  let bytes = 0;
  for await (const chunk of results.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  out(`results downloaded: ${fmt(bytes / 1e6, 1)} MB in ${fmt(Number(process.hrtime.bigint() - started) / 1e9, 1)} s; API peak RSS ${fmt(Math.max(peak, memoryOf(pid).peak))} MB`);
}

async function main(): Promise<void> {
  const config: Config = { ...readConfig(), ES_INDEX_PREFIX: prefix };
  const engine = new Engine(config);
  const concurrency = config.BATCH_CONCURRENCY;
  try {
    out(`bulk mapping benchmark (issue 28): node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores), Elasticsearch at ${config.ES_URL}`);
    await ensureLoaded(engine, config);
    const { keys, ids } = await samples();
    const queries: Query[] = [];
    for (let i = 0; i < Math.min(keys.length, ids.length); i += 1) {
      queries.push({ type: 'inchikey', compound: keys[i] }, { type: 'sourceID', compound: ids[i].compoundId, sourceID: ids[i].sourceId });
    }
    out(`${fmt(queries.length)} queries (InChIKeys and source ids of the set, interleaved); ${seconds} s per run; BATCH_CONCURRENCY ${concurrency}`);
    const cores = splitCoresRequested() ? await splitCores(engine) : undefined;
    out(cores ? `--split-cores: ${cores.describe}` : 'the engine, the API and the load generator share every core');
    const { child, url } = await startApiChild(__filename, { ES_INDEX_PREFIX: prefix, JOB_MAX_BYTES: '20gb', JOBS_MAX_BYTES: '40gb' });
    try {
      const line = (m: Measure): string => `${fmt(m.rps)} queries/s (${m.failures} not 200)`;
      await driveBatches(url, queries, 3, 1);
      await drive(url, '/api/v1/compounds', queries, 3, concurrency);
      await driveRaw(engine, queries, 3, concurrency);
      const runs: Record<'batch' | 'batch4' | 'single' | 'raw', Measure[]> = { batch: [], batch4: [], single: [], raw: [] };
      // Each twice, in mirrored order: a load that drifts weighs on all alike.
      for (const which of ['batch', 'batch4', 'single', 'raw', 'raw', 'single', 'batch4', 'batch'] as const) {
        const measure = which === 'batch' ? await driveBatches(url, queries, seconds, 1)
          : which === 'batch4' ? await driveBatches(url, queries, seconds, 4)
            : which === 'single' ? await drive(url, '/api/v1/compounds', queries, seconds, concurrency)
              : await driveRaw(engine, queries, seconds, concurrency);
        runs[which].push(measure);
        out(`${which}: ${line(measure)}`);
      }
      const mean = (list: Measure[]): number => list.reduce((sum, m) => sum + m.rps, 0) / list.length;
      const [batch, batch4, single, raw] = [mean(runs.batch), mean(runs.batch4), mean(runs.single), mean(runs.raw)];
      out('');
      out('| answered by | queries/s | batch (1 connection) / this |');
      out('|---|---|---|');
      out(`| POST /batch, 1,000 a batch, 1 connection (${concurrency} in flight) | ${fmt(batch)} | 1.00 |`);
      out(`| POST /batch, 1,000 a batch, 4 connections | ${fmt(batch4)} | ${fmt(batch / batch4, 2)} |`);
      out(`| POST /compounds, one a request, ${concurrency} connections | ${fmt(single)} | ${fmt(batch / single, 2)} |`);
      out(`| raw _msearch, one a lookup stage, ${concurrency} in flight | ${fmt(raw)} | ${fmt(batch / raw, 2)} |`);
      out(`goals: batch ≥ 5× one a request (${fmt(batch / single, 2)}), ≥ 0.7× raw _msearch (${fmt(batch / raw, 2)})`);
      if (jobQueries > 0) {
        out('');
        const lookups = queries.slice(0, 2_000);
        const quiet = await drivePaced(url, '/api/v1/compounds', lookups, 10, lookupRate);
        out(`lone lookups at ${lookupRate}/s, no job: p50 ${fmt(quiet.p50, 1)} ms, p99 ${fmt(quiet.p99, 1)} ms`);
        await runJob(url, child.pid!, queries, jobQueries, lookups);
      }
    } finally {
      await stopApiChild(child);
      cores?.restore();
      await deleteJobs(engine, undefined, new Date(Date.now() + 365 * 86_400_000)).catch(() => undefined);
    }
  } finally {
    await engine.close();
  }
}

if (require.main === module) {
  const run = process.argv.includes('--serve') ? serveApi() : main();
  run.catch((error) => {
    process.stderr.write(`bench:batch failed: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  });
}
