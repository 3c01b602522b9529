// Benchmark of `npm run export` (issue 7): all whole-source mapping files of the 500,000-structure
// benchmark set (the real molecules of ../shared/data/make-samples.sh, spread over the first 20
// sources of UniChem's source table), and a table dump of it. Each export runs as `npm run export`
// does, in a child process, which reports its own peak RSS. Prints rows/s and peak RSS.
//
// The data set is written as a UniChem dump and loaded with the real loader under the index prefix
// BENCH_EXPORT_PREFIX (default bench-export); it is reused by later runs when complete, and deleted
// at the end unless BENCH_KEEP=1. BENCH_500K names the molecule file (id, InChI, InChIKey).
import { execFile } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { readConfig } from '../src/config';
import { Engine } from '../src/engine/client';
import { loadHistory } from '../src/engine/loads';
import { TextWriter } from '../src/export/files';
import { parseArguments, runCommand } from '../loaders/cli';
import { Reject } from '../loaders/run';
import { checkStructure } from '../loaders/structure-rules';

const run = promisify(execFile);
const moleculesFile = process.env.BENCH_500K || '/tmp/chemwork/bench-500k.tsv';
const prefix = process.env.BENCH_EXPORT_PREFIX || 'bench-export';
const repository = join(__dirname, '..');
const rounds = Number(process.env.BENCH_ROUNDS || 2);

/**
 * The share of all structures each of the 20 sources holds (the same spread as bench:load): about
 * 1.57 million current assignments for 500,000 structures. In each source 5 % of the structures
 * have a second id, and 3 % an obsolete one.
 */
const coverage = [0.97, 0.55, 0.35, 0.30, 0.22, 0.18, 0.12, 0.10, 0.08, 0.06, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02, 0.01, 0.01, 0.01, 0.005];
const secondIdShare = 0.05;
const obsoleteShare = 0.03;
// Ids are a bijection of the UCI modulo this prime, so they are unique and not in UCI order.
const idModulus = 9_999_991;

/** A small deterministic PRNG (mulberry32), so every run builds the same data set. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Writes the benchmark dump (source.tsv.gz, structure.tsv.gz, reference.tsv.gz) into `folder`. */
async function writeDump(folder: string): Promise<{ structures: number; references: number }> {
  const table = parseCsv(readFileSync(join(repository, '..', 'shared', 'data', 'source-table.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
  const sources = table.slice(0, coverage.length);
  const columns = Object.keys(sources[0]);
  const clean = (value: string | undefined): string => (value ?? '').replace(/[\t\r\n]+/g, ' ');
  writeFileSync(join(folder, 'source.tsv.gz'), gzipSync(`${columns.map((c) => c.toUpperCase()).join('\t')}\n${sources.map((row) => columns.map((c) => clean(row[c])).join('\t')).join('\n')}\n`));

  const structures = new TextWriter(join(folder, 'structure.tsv.gz'), { gzip: true });
  const references = new TextWriter(join(folder, 'reference.tsv.gz'), { gzip: true });
  structures.write('UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n');
  references.write('UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\n');
  const next = random(7);
  const seen = new Set<string>();
  let uci = 0;
  let referenceCount = 0;
  const maxInchiLength = readConfig().MAX_INCHI_LENGTH;
  for await (const line of createInterface({ input: createReadStream(moleculesFile), crlfDelay: Infinity })) {
    const [, inchi, key] = line.split('\t');
    if (!inchi?.startsWith('InChI=1S/')) continue;
    let standardInchiKey: string;
    try {
      standardInchiKey = checkStructure(inchi, key, maxInchiLength).standardInchiKey;
      if (seen.has(standardInchiKey)) continue;
      seen.add(standardInchiKey);
    } catch (error) {
      if (error instanceof Reject) continue;
      throw error;
    }
    uci += 1;
    let text = '';
    sources.forEach((source, i) => {
      if (next() >= coverage[i]) return;
      const name = source.name.toUpperCase().replace(/[^A-Z]/g, '');
      const id = (uci * (7_919 + 2 * i) + 104_729 * i) % idModulus;
      text += `${uci}\t${source.src_id}\t${name}${id}\t1\n`;
      if (next() < secondIdShare) text += `${uci}\t${source.src_id}\t${name}${id + idModulus}\t1\n`;
      if (next() < obsoleteShare) text += `${uci}\t${source.src_id}\t${name}${id + 2 * idModulus}\t0\n`;
    });
    referenceCount += text.split('\n').length - 1;
    await Promise.all([structures.write(`${uci}\t${inchi}\t${standardInchiKey}\n`), references.write(text)]);
  }
  await structures.end();
  await references.end();
  return { structures: uci, references: referenceCount };
}

async function deletePrefix(engine: Engine): Promise<void> {
  const indices = Object.keys(await engine.client.indices.get({ index: `${prefix}-*`, expand_wildcards: 'all' }, { ignore: [404] }) ?? {})
    .filter((name) => name.startsWith(`${prefix}-`));
  if (indices.length > 0) await engine.client.indices.delete({ index: indices.join(',') });
}

/** Loads the data set under the prefix, unless a complete load of it is already there. */
async function ensureDataSet(engine: Engine, config: ReturnType<typeof readConfig>): Promise<void> {
  const loads = await loadHistory(engine, 100).catch(() => []);
  if (loads.some((load) => load.command === 'references' && load.status === 'done')) {
    process.stderr.write(`reusing the data set already loaded under ${prefix}\n`);
    return;
  }
  await deletePrefix(engine);
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-bench-export-dump-'));
  try {
    const started = Date.now();
    const written = await writeDump(folder);
    process.stderr.write(`wrote the benchmark dump: ${written.structures} structures, ${written.references} assignments (${((Date.now() - started) / 1000).toFixed(0)} s); loading it under ${prefix}\n`);
    const summary = await runCommand(parseArguments(['dump', folder, '--rejects', join(folder, 'rejects.tsv')]), config);
    process.stderr.write(`loaded: ${summary.rowsLoaded} rows, ${summary.rowsRejected} rejected, ${summary.seconds} s\n`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Runs `npm run export -- <command> <folder>` as a child process (no tsx wrapper, so its own RSS is the export's). */
async function exportInChild(command: string, folder: string): Promise<Record<string, number>> {
  const { stdout } = await run(process.execPath, ['--require', 'tsx/cjs', join(repository, 'src', 'export', 'cli.ts'), command, folder, '--no-progress'], {
    cwd: repository, env: { ...process.env, ES_INDEX_PREFIX: prefix }, maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

async function main(): Promise<void> {
  const config = readConfig({ ...process.env, ES_INDEX_PREFIX: prefix });
  const engine = new Engine(config);
  const output = mkdtempSync(join(tmpdir(), 'chemxref-bench-export-'));
  try {
    await ensureDataSet(engine, config);
    const results: string[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      const summary = await exportInChild('mappings', join(output, `mappings-${round}`));
      const writeSeconds = summary.seconds - summary.readSeconds;
      results.push(`mappings round ${round}: ${summary.files} files, ${summary.rows} rows in ${summary.seconds} s = ${summary.rowsPerSecond} rows/s ` +
        `(read ${summary.assignmentsRead} current assignments from the engine: ${summary.readSeconds} s, ${Math.round(summary.assignmentsRead / summary.readSeconds)} rows/s; ` +
        `pair, sort and write: ${writeSeconds.toFixed(2)} s, ${Math.round(summary.rows / writeSeconds)} rows/s), peak RSS ${summary.peakRssMB} MB`);
      process.stderr.write(`${results[results.length - 1]}\n`);
      rmSync(join(output, `mappings-${round}`), { recursive: true, force: true });
    }
    const dump = await exportInChild('dump', join(output, 'dump'));
    results.push(`dump: ${dump.rows} rows (${dump.structures} structures, ${dump.references} references) in ${dump.seconds} s = ${dump.rowsPerSecond} rows/s ` +
      `(read ${dump.assignmentsRead} assignments: ${dump.readSeconds} s), peak RSS ${dump.peakRssMB} MB`);
    process.stdout.write(`export benchmark, ${cpus().length} cores, Node ${process.version}, index prefix ${prefix}\n${results.join('\n')}\n`);
  } finally {
    rmSync(output, { recursive: true, force: true });
    if (!process.env.BENCH_KEEP) await deletePrefix(engine).catch(() => undefined);
    await engine.close();
  }
}

void main().catch((error) => {
  process.stderr.write(`bench:export failed: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
