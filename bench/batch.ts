// Benchmark of bulk mapping on bench:api's set: 10,000 compounds queries (its sample's keys and ids,
// interleaved) answered by POST /api/v1/batch (1,000 a batch, 1 and 4 connections), one a request
// (POST /api/v1/compounds) and raw (bench:api's ceiling), at BATCH_CONCURRENCY in flight. Then a job
// of BENCH_JOB_QUERIES (1,000,000; 0: none): its rate, the API's peak RSS, and lone lookups at
// BENCH_JOB_LOOKUP_RATE (100/s) with and without it.
//
//   npm run bench:batch [-- --split-cores]
import type { Engine } from '../src/engine/client';
import { deleteJobs } from '../src/engine/jobs';
import { ceilingLookups } from './api';
import { fmt, mean, openBench, out, post, readProc, runBench, since, sleep, splitCoresIfAsked } from './common';
import { startApi } from './common';
import { apiPrefix, apiSamples, ensureLoaded } from './dataset';
import { closedLoop, drive, drivePaced, type Measure } from './load-generator';

const seconds = Number(process.env.BENCH_BATCH_SECONDS || 15);
const jobQueries = Number(process.env.BENCH_JOB_QUERIES ?? 1_000_000);
const lookupRate = Number(process.env.BENCH_JOB_LOOKUP_RATE || 100);
const batchSize = 1_000;

type Query = { type: 'inchikey'; compound: string } | { type: 'sourceID'; compound: string; sourceID: number };

/** Batches of `queries` sent back to back over `connections` for `duration` s. */
function driveBatches(url: string, queries: Query[], duration: number, connections: number): Promise<Measure> {
  const bodies: string[] = [];
  for (let start = 0; start < queries.length; start += batchSize) {
    bodies.push(JSON.stringify({ queries: queries.slice(start, start + batchSize) }));
  }
  return closedLoop(connections, duration, async (i) => {
    const response = await post(`${url}/api/v1/batch`, bodies[i % bodies.length]);
    const lines = (await response.text()).split('\n').filter(Boolean);
    const answered = lines.filter((line) => line.includes('"status":200,')).length;
    return { answered, failed: lines.length - answered };
  });
}

/** The engine's own searches for each query, `concurrency` lookups in flight, for `duration` s. */
function driveRaw(engine: Engine, queries: Query[], duration: number, concurrency: number): Promise<Measure> {
  const ceiling = ceilingLookups(engine);
  return closedLoop(concurrency, duration, async (i) => {
    const query = queries[i % queries.length];
    if (query.type === 'inchikey') await ceiling.compoundsByKey(query.compound);
    else await ceiling.compoundsBySourceId({ sourceId: query.sourceID, compoundId: query.compound });
    return { answered: 1, failed: 0 };
  });
}

/** The API child's resident set now and at its peak, MB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readProc(pid, 'status');
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
  const response = await post(`${url}/api/v1/jobs`, body, 'application/x-ndjson');
  const accepted = (await response.json()) as { jobId: string; total: number };
  if (response.status !== 202) throw new Error(`POST /jobs answered ${response.status} ${JSON.stringify(accepted)}`);
  out(
    `job of ${fmt(accepted.total)} queries (${fmt(Buffer.byteLength(body) / 1e6, 1)} MB of NDJSON) accepted in ` +
      `${fmt(since(submitted), 1)} s`,
  );
  let job: { status: string; done: number; errors: number; started: string; finished: string | null } | undefined;
  let peak = before.peak;
  let during: Measure | undefined;
  for (;;) {
    job = (await (await fetch(`${url}/api/v1/jobs/${accepted.jobId}`)).json()) as typeof job;
    peak = Math.max(peak, memoryOf(pid).peak);
    if (!during && job!.status === 'running' && job!.done > 0) {
      during = await drivePaced(url, '/api/v1/compounds', lookups, 10, lookupRate);
      out(
        `lone lookups at ${lookupRate}/s while the job runs: p50 ${fmt(during.p50, 1)} ms, ` +
          `p99 ${fmt(during.p99, 1)} ms, ${during.failures} failed`,
      );
    }
    if (job!.status === 'done' || job!.status === 'failed') break;
    await sleep(1_000);
  }
  const runSeconds = (Date.parse(job!.finished!) - Date.parse(job!.started)) / 1000;
  out(
    `job ${job!.status}: ${fmt(job!.done)} lines, ${fmt(job!.errors)} errors, in ${fmt(runSeconds, 1)} s = ` +
      `${fmt(job!.done / runSeconds)} queries/s; API peak RSS ${fmt(peak)} MB (before the job ${fmt(before.rss)} MB)`,
  );
  const started = process.hrtime.bigint();
  const results = await fetch(`${url}/api/v1/jobs/${accepted.jobId}/results`);
  let bytes = 0;
  for await (const chunk of results.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  out(
    `results downloaded: ${fmt(bytes / 1e6, 1)} MB in ${fmt(since(started), 1)} s; ` +
      `API peak RSS ${fmt(Math.max(peak, memoryOf(pid).peak))} MB`,
  );
}

async function main(): Promise<void> {
  const { config, engine } = await openBench('bench:batch', apiPrefix);
  const concurrency = config.BATCH_CONCURRENCY;
  try {
    await ensureLoaded(engine, config);
    const { keys, ids } = await apiSamples();
    const queries: Query[] = ids.flatMap((id, i) => [
      { type: 'inchikey', compound: keys[i] },
      { type: 'sourceID', compound: id.compoundId, sourceID: id.sourceId },
    ]);
    out(`${fmt(queries.length)} queries; ${seconds} s per run; BATCH_CONCURRENCY ${concurrency}`);
    const cores = await splitCoresIfAsked(engine);
    const env = { ES_INDEX_PREFIX: apiPrefix, JOB_MAX_BYTES: '20gb', JOBS_MAX_BYTES: '40gb' };
    const { child, url, stop } = await startApi(env);
    try {
      await driveBatches(url, queries, 3, 1);
      await drive(url, '/api/v1/compounds', queries, 3, concurrency);
      await driveRaw(engine, queries, 3, concurrency);
      const ways: Record<string, () => Promise<Measure>> = {
        batch: () => driveBatches(url, queries, seconds, 1),
        batch4: () => driveBatches(url, queries, seconds, 4),
        single: () => drive(url, '/api/v1/compounds', queries, seconds, concurrency),
        raw: () => driveRaw(engine, queries, seconds, concurrency),
      };
      const rates: Record<string, number[]> = { batch: [], batch4: [], single: [], raw: [] };
      // Each twice, in mirrored order: a load that drifts weighs on all alike.
      for (const way of ['batch', 'batch4', 'single', 'raw', 'raw', 'single', 'batch4', 'batch']) {
        const measure = await ways[way]();
        rates[way].push(measure.rps);
        out(`${way}: ${fmt(measure.rps)} queries/s (${measure.failures} not 200)`);
      }
      const [batch, batch4, single, raw] = ['batch', 'batch4', 'single', 'raw'].map((way) => mean(rates[way]));
      out('\n| answered by | queries/s | batch (1 connection) / this |\n|---|---|---|');
      out(`| POST /batch, 1,000 a batch, 1 connection (${concurrency} in flight) | ${fmt(batch)} | 1.00 |`);
      out(`| POST /batch, 1,000 a batch, 4 connections | ${fmt(batch4)} | ${fmt(batch / batch4, 2)} |`);
      out(`| POST /compounds, one a request, ${concurrency} in flight | ${fmt(single)} | ${fmt(batch / single, 2)} |`);
      out(`| raw _msearch, one a lookup stage, ${concurrency} in flight | ${fmt(raw)} | ${fmt(batch / raw, 2)} |`);
      if (jobQueries > 0) {
        const lookups = queries.slice(0, 2_000);
        const quiet = await drivePaced(url, '/api/v1/compounds', lookups, 10, lookupRate);
        out(`\nlone lookups at ${lookupRate}/s, no job: p50 ${fmt(quiet.p50, 1)} ms, p99 ${fmt(quiet.p99, 1)} ms`);
        await runJob(url, child.pid!, queries, jobQueries, lookups);
      }
    } finally {
      await stop();
      cores?.restore();
      await deleteJobs(engine, undefined, new Date(Date.now() + 365 * 86_400_000)).catch(() => undefined);
    }
  } finally {
    await engine.close();
  }
}

runBench(module, 'bench:batch', main);
