// Benchmark of `npm run export`: all whole-source mapping files and a table dump of the benchmark
// set's structures over its 20 sources, with 5 % second ids and 3 % obsolete ones, loaded under
// BENCH_EXPORT_PREFIX (bench-export; kept with BENCH_KEEP=1). Each export runs in a child process,
// which reports its own peak RSS; BENCH_ROUNDS (2) rounds of mapping files.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../src/config';
import type { Engine } from '../src/engine/client';
import { loadHistory } from '../src/engine/loads';
import { parseArguments, runCommand } from '../loaders/cli';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { draw, fmt, openBench, out, repository, runBench } from './common';
import { coverage, readStructures, sourceTable, writeDump, type Assignment, type Source } from './dataset';

const prefix = process.env.BENCH_EXPORT_PREFIX || 'bench-export';
const rounds = Number(process.env.BENCH_ROUNDS || 2);
// Ids are a bijection of the UCI modulo this prime: unique, and not in UCI order.
const idModulus = 9_999_991;

/** The export's assignments: each source's share of the structures, some with a second id, some an obsolete one. */
function* references(structureCount: number, sources: Source[]): Generator<Assignment> {
  for (let uci = 1; uci <= structureCount; uci += 1) {
    for (const [i, source] of sources.entries()) {
      if (draw(`${uci}/${i}`) >= coverage[i]) continue;
      const id = (uci * (7_919 + 2 * i) + 104_729 * i) % idModulus;
      const compoundId = (n: number): string => `${source.label}${id + n * idModulus}`;
      const sourceId = source.id;
      yield { uci, sourceId, compoundId: compoundId(0), assignment: 1 };
      if (draw(`${uci}/${i}/second`) < 0.05) yield { uci, sourceId, compoundId: compoundId(1), assignment: 1 };
      if (draw(`${uci}/${i}/obsolete`) < 0.03) yield { uci, sourceId, compoundId: compoundId(2), assignment: 0 };
    }
  }
}

/** Loads the set under the prefix, unless a complete load of it is already there. */
async function ensureDataSet(engine: Engine, config: Config): Promise<void> {
  const loads = await loadHistory(engine, 100).catch(() => []);
  if (loads.some((load) => load.command === 'references' && load.status === 'done')) {
    out(`reusing the set loaded under ${prefix}`);
    return;
  }
  await deleteIndicesByPrefix(config.ES_URL, prefix);
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-bench-export-dump-'));
  try {
    const set = await readStructures(config.MAX_INCHI_LENGTH);
    const table = sourceTable();
    const assignments = await writeDump(folder, set, table, references(set.keys.length, table.sources));
    out(`the set: ${fmt(set.keys.length)} structures, ${fmt(assignments)} assignments; loading it under ${prefix}`);
    const args = ['dump', folder, '--no-progress', '--rejects', join(folder, 'rejects.tsv')];
    await runCommand(parseArguments(args), config);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** `npm run export -- <command> <folder>` in a child process (no tsx wrapper, so its own RSS is the export's). */
async function exportInChild(command: string, folder: string): Promise<Record<string, number>> {
  const args = ['--require', 'tsx/cjs', join(repository, 'src', 'export', 'cli.ts'), command, folder, '--no-progress'];
  const { stdout } = await promisify(execFile)(process.execPath, args, {
    cwd: repository,
    env: { ...process.env, ES_INDEX_PREFIX: prefix },
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number>;
}

async function main(): Promise<void> {
  const { config, engine } = await openBench('bench:export', prefix);
  const output = mkdtempSync(join(tmpdir(), 'chemxref-bench-export-'));
  try {
    await ensureDataSet(engine, config);
    for (let round = 1; round <= rounds; round += 1) {
      const s = await exportInChild('mappings', join(output, `mappings-${round}`));
      const write = s.seconds - s.readSeconds;
      out(
        `mappings round ${round}: ${s.files} files, ${fmt(s.rows)} rows in ${s.seconds} s = ${fmt(s.rowsPerSecond)} ` +
          `rows/s (reading ${s.readSeconds} s, pairing and writing ${fmt(write, 2)} s), peak RSS ${s.peakRssMB} MB`,
      );
      rmSync(join(output, `mappings-${round}`), { recursive: true, force: true });
    }
    const d = await exportInChild('dump', join(output, 'dump'));
    out(
      `dump: ${fmt(d.rows)} rows in ${d.seconds} s = ${fmt(d.rowsPerSecond)} rows/s (reading the assignments ` +
        `${d.readSeconds} s), peak RSS ${d.peakRssMB} MB`,
    );
  } finally {
    rmSync(output, { recursive: true, force: true });
    if (!process.env.BENCH_KEEP) await deleteIndicesByPrefix(config.ES_URL, prefix).catch(() => undefined);
    await engine.close();
  }
}

runBench(module, 'bench:export', main);
