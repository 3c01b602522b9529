// Benchmark of `npm run load` on the benchmark set (bench/dataset.ts) written as a UniChem dump, in
// a child process, against raw bulk of the same documents (the ceiling); each phase runs loader,
// ceiling, ceiling, loader into indices of their own, after two untimed warm-up loads. Prints rows/s,
// the ratio, peak RSS and CPU; deletes what it made. (Bytes on disk at size: bench:scale.)
//
//   npm run bench:load [-- --split-cores]   # BENCH_500K: the molecule file; BENCH_ROWS: read only its first rows
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../src/engine/client';
import { assignmentId } from '../src/engine/assignments';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { bulkCeiling, collectOwnGarbage, createIndex, engineCpuSeconds, fmt, mean, molecules } from './common';
import { openBench, out, runBench, runLoader, settle, sleep, splitCoresIfAsked, type LoaderRun } from './common';
import { assignments, readStructures, sourceTable, writeDump } from './dataset';

// Without warm-up loads the loader's first run of a phase paid 2-5 s more of the engine's JIT
// compilers than a ceiling run; after one, 0.4-2.4 s; after two, 0.1-0.3 s.
const warmUps = 2;

async function main(): Promise<void> {
  const tag = randomBytes(3).toString('hex');
  const [loaderPrefix, ceilingPrefix] = [`bench-load-${tag}`, `bench-ceiling-${tag}`];
  const { config, engine } = await openBench('bench:load', loaderPrefix);
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-bench-load-'));
  const runs = [1, 2].map((n) => new Engine({ ...config, ES_INDEX_PREFIX: `${ceilingPrefix}-${n}` }));
  const cores = await splitCoresIfAsked(engine);
  try {
    const set = await readStructures(config.MAX_INCHI_LENGTH, true);
    const table = sourceTable();
    const assignmentCount = await writeDump(folder, set, table);
    out(
      `${molecules().file}: ${fmt(set.rowsRead)} rows → ${fmt(set.keys.length)} distinct loadable structures, ` +
        `${fmt(assignmentCount)} assignments in ${table.sources.length} sources, written to ${folder}`,
    );
    const files = { sources: 'source.tsv', structures: 'structure.tsv.gz', references: 'reference.tsv.gz' };
    const load = (prefix: string, command: keyof typeof files): Promise<LoaderRun> =>
      runLoader(prefix, [command, join(folder, files[command]), '--rejects', join(folder, `rejects-${command}.tsv`)]);

    type Result = { phase: string; rows: number; loaders: LoaderRun[]; ceilings: number[]; engineCpu: number[][] };
    const results: Result[] = [];
    // This process's garbage (the ceiling's request bodies) is collected before each run, so that
    // it is not collected during a later run, on the loader's core.
    const timed = async <T>(work: () => Promise<T>): Promise<{ value: T; engineCpu: number }> => {
      collectOwnGarbage();
      await settle(engine);
      const cpu = await engineCpuSeconds(engine);
      const value = await work();
      return { value, engineCpu: (await engineCpuSeconds(engine)) - cpu };
    };
    // Loader, ceiling, ceiling, loader: a drift of the shared machine weighs on both alike.
    const abba = async (
      phase: string,
      rows: number,
      loader: (prefix: string) => Promise<LoaderRun>,
      ceiling: (run: Engine) => Promise<number>,
    ): Promise<void> => {
      const first = await timed(() => loader(`${loaderPrefix}-1`));
      const ceilings = [await timed(() => ceiling(runs[0])), await timed(() => ceiling(runs[1]))];
      const last = await timed(() => loader(`${loaderPrefix}-2`));
      for (const run of [first, last]) {
        const loaded = Number(run.value.summary.rowsLoaded);
        if (loaded !== rows) throw new Error(`the loader loaded ${loaded} of ${rows} ${phase} rows`);
      }
      results.push({
        phase,
        rows,
        loaders: [first.value, last.value],
        ceilings: ceilings.map((c) => c.value),
        engineCpu: [[first.engineCpu, last.engineCpu], ceilings.map((c) => c.engineCpu)],
      });
      const rates = (seconds: number[]): string => seconds.map((s) => fmt(rows / s)).join(', ');
      const loaders = [first, last].map((r) => Number(r.value.summary.seconds));
      out(`${phase}: loader ${rates(loaders)} rows/s (first, last), ceiling ${rates(ceilings.map((c) => c.value))}`);
    };

    for (const n of [1, 2]) await load(`${loaderPrefix}-${n}`, 'sources');
    // Both sides' compounds indices stand over a minute before they are written, as one in service
    // does: the engine then flushes a translog older than index.translog.flush_threshold_age (1 min)
    // once, which a fresh index never pays.
    for (const run of runs) await createIndex(engine, run.names.compounds, 'compounds');
    const standing = Date.now();
    const warms = Array.from({ length: warmUps }, (_, n) => `${loaderPrefix}-warm${n}`);
    for (const warm of warms) for (const command of ['sources', 'structures'] as const) await load(warm, command);
    await sleep(Math.max(0, standing + 65_000 - Date.now()));

    const compounds = set.keys.map((key, i): [string, string] => [key, set.documents[i]]);
    const ceiling = (run: Engine): Promise<number> => bulkCeiling(engine, run.names.compounds, compounds, 'create');
    await abba('structures', set.keys.length, (prefix) => load(prefix, 'structures'), ceiling);
    [set.documents.length, compounds.length] = [0, 0];

    // References: one release index for the whole table, as the loader writes a dump.
    const prepared: [string, string][] = [];
    for (const a of assignments(set.keys.length, table.sources)) {
      const { uci, sourceId, compoundId, assignment } = a;
      const [standardInchiKey, connectivityBlock] = [set.keys[uci - 1], set.keys[uci - 1].slice(0, 14)];
      const document = { sourceId, compoundId, uci, assignment, standardInchiKey, connectivityBlock };
      prepared.push([assignmentId(sourceId, uci, compoundId), JSON.stringify(document)]);
    }
    for (const warm of warms) {
      await load(warm, 'references');
      await deleteIndicesByPrefix(config.ES_URL, warm);
    }
    await abba(
      'references',
      assignmentCount,
      (prefix) => load(prefix, 'references'),
      async (run) => {
        const release = run.names.assignmentsRelease('dump');
        await createIndex(engine, release, 'assignments');
        return bulkCeiling(engine, release, prepared, 'index');
      },
    );
    prepared.length = 0;

    out(
      '\n| phase | rows | loader rows/s | ceiling rows/s | loader/ceiling | loader peak RSS | loader CPU s ' +
        '| engine CPU s (loader / ceiling) |',
    );
    out('|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      const seconds = mean(r.loaders.map((run) => Number(run.summary.seconds)));
      const [loaderRate, ceilingRate] = [r.rows / seconds, r.rows / mean(r.ceilings)];
      const rss = Math.max(...r.loaders.map((run) => run.peakRssMb));
      const cpu = mean(r.loaders.map((run) => run.cpuSeconds));
      out(
        `| ${r.phase} | ${fmt(r.rows)} | ${fmt(loaderRate)} | ${fmt(ceilingRate)} ` +
          `| ${fmt(loaderRate / ceilingRate, 2)} | ${fmt(rss)} MB | ${fmt(cpu, 1)} ` +
          `| ${fmt(mean(r.engineCpu[0]), 1)} / ${fmt(mean(r.engineCpu[1]), 1)} |`,
      );
    }
    out('(means of two runs each: loader, ceiling, ceiling, loader; peak RSS: the higher of the two loader runs)');
  } finally {
    cores?.restore();
    // Cleanup must not hide the error that brought the run here.
    for (const made of [loaderPrefix, ceilingPrefix]) await deleteIndicesByPrefix(config.ES_URL, made).catch(String);
    await Promise.all(runs.map((run) => run.close()));
    rmSync(folder, { recursive: true, force: true });
    out(`deleted ${loaderPrefix}-*, ${ceilingPrefix}-* and ${folder}`);
    await engine.close();
  }
}

runBench(module, 'bench:load', main);
