/**
 * The benchmark set of bench:api and bench:similarity: the
 * distinct loadable structures of the real molecules (scripts/make-bench-data.sh), assigned to the
 * first 20 sources of UniChem's source table, written as a UniChem dump. bench:api's copy is loaded
 * once into `bench-api-*` and reused while its counts match.
 */
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Config } from '../src/config';
import type { Engine } from '../src/engine/client';
import { currentReleaseIndices } from '../src/engine/schema';
import { TextWriter } from '../src/export/files';
import { parseArguments, runCommand } from '../loaders/cli';
import { readRows } from '../loaders/read';
import { Reject } from '../loaders/run';
import { checkStructure } from '../loaders/structure-rules';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { draw, fmt, molecules, out, repository, Sample, since } from './common';

/**
 * The share of all structures each of the 20 sources holds, in the source table's order. They sum
 * to 3.15 (about 1.6 million current assignments for 500,000 structures); about 3 % of a source's
 * structures also have an obsolete id (ASSIGMENT 0).
 */
export const coverage = [
  0.97, 0.55, 0.35, 0.3, 0.22, 0.18, 0.12, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02, 0.01, 0.01, 0.01, 0.005,
];
const obsoleteShare = 0.03;

/** The structures, UCI = position + 1. */
export interface Structures {
  inchis: string[];
  keys: string[];
  rowsRead: number;
}

/** Every distinct structure of the molecule file that passes the loading rules, UCI = position + 1. */
export async function readStructures(maxInchiLength: number): Promise<Structures> {
  const { file, rows } = molecules();
  const set: Structures = { inchis: [], keys: [], rowsRead: 0 };
  const seen = new Set<string>();
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line === '' || set.rowsRead >= rows) continue;
    set.rowsRead += 1;
    const [, inchi, key] = line.split('\t');
    try {
      if (!inchi?.startsWith('InChI=')) throw new Reject('no-inchi', 'no InChI');
      const checked = checkStructure(inchi, key, maxInchiLength);
      if (seen.has(checked.standardInchiKey)) throw new Reject('duplicate', 'repeated structure');
      seen.add(checked.standardInchiKey);
      set.inchis.push(inchi);
      set.keys.push(checked.standardInchiKey);
    } catch (error) {
      if (!(error instanceof Reject)) throw error;
    }
  }
  return set;
}

export type Source = { id: number; name: string; label: string };

/** The first 20 rows of UniChem's source table (test/fixtures/chemistry), as a dump's source.tsv. */
export function sourceTable(): { sources: Source[]; tsv: string } {
  const csv = readFileSync(join(repository, 'test', 'fixtures', 'chemistry', 'source-table.csv'), 'utf8');
  const rows = parseCsv(csv, { columns: true }) as Record<string, string>[];
  const chosen = rows.slice(0, coverage.length);
  const columns = Object.keys(rows[0]);
  const clean = (value: string | undefined): string => (value ?? '').replace(/[\t\r\n]+/g, ' ');
  const lines = [columns.map((c) => c.toUpperCase()), ...chosen.map((row) => columns.map((c) => clean(row[c])))];
  const label = (name: string): string => name.toUpperCase().replace(/[^A-Z0-9]/g, '');
  const sources = chosen.map((row) => ({ id: Number(row.src_id), name: row.name, label: label(row.name) }));
  return { sources, tsv: lines.map((line) => `${line.join('\t')}\n`).join('') };
}

type Assignment = { uci: number; sourceId: number; compoundId: string; assignment: 0 | 1 };

/** Every assignment of the set, in UCI order (as UniChem's dump); each structure has at least one. */
export function* assignments(structureCount: number, sources: Source[]): Generator<Assignment> {
  const counters = sources.map(() => 0);
  // Ids of growing length, as real registries have: CHEMBL1037, CHEMBL1074, ...
  const compoundId = (s: number): string => `${sources[s].label}${1000 + ++counters[s] * 37}`;
  for (let uci = 1; uci <= structureCount; uci += 1) {
    let any = false;
    for (let s = 0; s < sources.length; s += 1) {
      if (draw(`${uci}/${s}`) >= coverage[s]) continue;
      any = true;
      yield { uci, sourceId: sources[s].id, compoundId: compoundId(s), assignment: 1 };
      if (draw(`${uci}/${s}/obsolete`) >= obsoleteShare) continue;
      yield { uci, sourceId: sources[s].id, compoundId: compoundId(s), assignment: 0 };
    }
    if (!any) yield { uci, sourceId: sources[0].id, compoundId: compoundId(0), assignment: 1 };
  }
}

/** Writes source.tsv, structure.tsv.gz and reference.tsv.gz (the set's assignments). */
export async function writeDump(folder: string, set: Structures, table = sourceTable()): Promise<number> {
  writeFileSync(join(folder, 'source.tsv'), table.tsv);
  const structures = new TextWriter(join(folder, 'structure.tsv.gz'), { gzip: true });
  await structures.write('UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n');
  for (let i = 0; i < set.keys.length; i += 1) await structures.write(`${i + 1}\t${set.inchis[i]}\t${set.keys[i]}\n`);
  const rows = new TextWriter(join(folder, 'reference.tsv.gz'), { gzip: true });
  await rows.write('UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\n');
  let count = 0;
  for (const a of assignments(set.keys.length, table.sources)) {
    count += 1;
    await rows.write(`${a.uci}\t${a.sourceId}\t${a.compoundId}\t${a.assignment}\n`);
  }
  await Promise.all([structures.end(), rows.end()]);
  return count;
}

export const apiPrefix = 'bench-api';
export const apiDumpFolder = join(tmpdir(), 'chemxref-bench-api');

/** Loads the set into `bench-api-*` (`npm run load -- dump`) unless it is there, whole, in one release index. */
export async function ensureLoaded(engine: Engine, config: Config): Promise<void> {
  const expectedFile = join(apiDumpFolder, 'expected.json');
  const held = async (): Promise<string> => {
    const count = (index: string): Promise<number> =>
      engine.client.count({ index }).then(
        (r) => r.count,
        () => -1,
      );
    const releases = new Set((await currentReleaseIndices(engine).catch(() => new Map())).values()).size;
    const [structures, assignments] = [await count(engine.names.compounds), await count(engine.names.assignments)];
    return JSON.stringify({ structures, assignments, releases });
  };
  if (existsSync(expectedFile) && readFileSync(expectedFile, 'utf8') === (await held())) {
    return out(`reusing ${apiPrefix}-*: ${await held()} (\`npm run bench:api -- --clean\` deletes it)`);
  }
  const started = process.hrtime.bigint();
  const set = await readStructures(config.MAX_INCHI_LENGTH);
  rmSync(apiDumpFolder, { recursive: true, force: true });
  mkdirSync(apiDumpFolder, { recursive: true });
  const assignments = await writeDump(apiDumpFolder, set);
  const expected = JSON.stringify({ structures: set.keys.length, assignments, releases: 1 });
  await deleteIndicesByPrefix(config.ES_URL, apiPrefix);
  const args = ['dump', apiDumpFolder, '--no-progress', '--rejects', join(apiDumpFolder, 'rejects.tsv')];
  await runCommand(parseArguments(args), config);
  if ((await held()) !== expected) throw new Error(`${apiPrefix}-* holds ${await held()}, not ${expected}`);
  writeFileSync(expectedFile, expected);
  out(`wrote and loaded ${apiPrefix}-*: ${expected} in ${fmt(since(started))} s`);
}

export type SourceIdSample = { sourceId: number; compoundId: string };

/**
 * 5,000 real keys and 5,000 current source ids of bench:api's copy: those of lowest hash in the
 * dump's tables, so every load of the set has the same sample.
 */
export async function apiSamples(): Promise<{ keys: string[]; ids: SourceIdSample[] }> {
  const [keys, ids] = [new Sample<string>(5_000), new Sample<SourceIdSample>(5_000)];
  for await (const { fields } of readRows(join(apiDumpFolder, 'structure.tsv.gz'), 'tsv')) {
    keys.add(fields.standardinchikey, fields.standardinchikey);
  }
  for await (const { fields } of readRows(join(apiDumpFolder, 'reference.tsv.gz'), 'tsv')) {
    const id = { sourceId: Number(fields.src_id), compoundId: fields.src_compound_id };
    if (fields.assigment === '1') ids.add(id, `${id.sourceId}\t${id.compoundId}`);
  }
  return { keys: keys.values, ids: ids.values };
}
