// Growth curve (`npm run bench:scale -- [--steps 0.5,2,5,10] [--seconds 15]`): one deployment grown
// in steps from the real molecules to tens of millions, measured after each step. Structures beyond
// the real set are 13C isotopologues of real single-component molecules, keyed by our code and
// checked to keep their parent's skeleton; five sources a step hold about 3 assignments a structure.
// Each step: the real loader (rows/s, time, peak RSS), then disk, heap, segments and the v1 lookups
// at 16 connections and at half their peak. The --consolidate and --similarity runs recorded in
// BENCHMARKS.md are in git history at d149638.
import { randomBytes } from 'node:crypto';
import type { estypes } from '@elastic/elasticsearch';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseStandardInchi, inchiKeyOf } from '../src/chemistry';
import type { Engine } from '../src/engine/client';
import { currentReleaseIndices } from '../src/engine/schema';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { draw, fmt, molecules, openBench, out, runBench, runLoader, Sample, settle, since, startApi } from './common';
import { readStructures } from './dataset';
import { describeFailures, drive, drivePaced, type Measure } from './load-generator';

const { values: options } = parseArgs({
  options: {
    steps: { type: 'string', default: '0.5,2,5,10' },
    seconds: { type: 'string', default: '15' },
  },
});
const steps = options.steps!.split(',').map((n) => Math.round(Number(n) * 1e6));
const seconds = Number(options.seconds);
const [connections, warmUpSeconds, sampleSize] = [16, 3, 5_000];

interface Structure {
  inchi: string;
  key: string;
}
type Parent = Structure & { carbons: number; uci: number };

/** The real set; single components without an isotopic layer, carbons first in the formula, are parents. */
async function readRealSet(maxInchiLength: number): Promise<{ real: Structure[]; parents: Parent[] }> {
  const set = await readStructures(maxInchiLength);
  const real = set.keys.map((key, i) => ({ inchi: set.inchis[i], key }));
  const parents = real.flatMap(({ inchi, key }, i) => {
    const formula = inchi.split('/')[1];
    const carbons = /^C([0-9]*)(?![a-z])/.exec(formula);
    if (formula.includes('.') || /^[0-9]/.test(formula) || inchi.includes('/i') || !carbons) return [];
    return [{ inchi, key, carbons: carbons[1] ? Number(carbons[1]) : 1, uci: i + 1 }];
  });
  return { real, parents };
}

/**
 * The structures of the set in UCI order: the real ones, then round after round of isotopologues
 * (round n: the carbons named by the set bits of n become 13C, `/i1+1,3+1`, for every parent with
 * that many carbons).
 */
function* structures(real: Structure[], parents: Parent[]): Generator<Structure> {
  yield* real;
  const realKeys = new Set(real.map((r) => r.key));
  for (let variant = 1; variant < 2 ** 24; variant += 1) {
    const atoms = [...Array(24).keys()]
      .filter((bit) => variant & (1 << bit))
      .map((bit) => `${bit + 1}+1`)
      .join(',');
    const round = parents.filter((parent) => variant < 2 ** Math.min(parent.carbons, 24));
    if (round.length === 0) return;
    for (const parent of round) {
      const inchi = `${parent.inchi}/i${atoms}`;
      const parsed = parseStandardInchi(inchi);
      const key = inchiKeyOf(parsed);
      if (parsed.connectivityBlock !== parent.key.slice(0, 14) || key.slice(0, 14) !== parent.key.slice(0, 14)) {
        throw new Error(`isotopologue ${inchi} left its parent's skeleton (${key} against ${parent.key})`);
      }
      if (!realKeys.has(key)) yield { inchi, key };
    }
  }
}

type Source = { id: number; label: string; coverage: number };

/** Five sources a step, holding 100, 80, 60, 40 and 20 % of the step's new structures: 3 ids a structure. */
function sourcesOf(step: number): Source[] {
  const shares = [1, 0.8, 0.6, 0.4, 0.2];
  return shares.map((coverage, i) => ({ id: 200 + step * 10 + i, label: `SCALE${step}S${i}X`, coverage }));
}

function sourceTsv(all: Source[]): string {
  const header = 'SRC_ID NAME NAME_LONG NAME_LABEL DESCRIPTION SRC_URL BASE_ID_URL BASE_ID_URL_AVAILABLE PRIVATE';
  const row = ({ id, label }: Source): string =>
    `${id}\tscale_${id}\tScale source ${id}\t${label}\tbench:scale\thttps://example.org/\t\t0\t0\n`;
  return `${header.replaceAll(' ', '\t')}\n${all.map(row).join('')}`;
}

/** A table written a megabyte at a time: `write(text)`, then `write()` to flush what is left. */
function tableWriter(file: string, header: string): (text?: string) => void {
  writeFileSync(file, header);
  let buffer = '';
  return (text) => {
    buffer += text ?? '';
    if (text !== undefined && buffer.length < 1 << 20) return;
    appendFileSync(file, buffer);
    buffer = '';
  };
}

interface StepFiles {
  structureFile: string;
  referenceFile: string;
  structures: number;
  assignments: number;
}

/** The lookups' keys and current ids: a sample of the whole set so far, drawn as its rows are written. */
type Samples = { keys: Sample<string>; ids: Sample<{ sourceId: number; compoundId: string }> };

/** Writes the step's `count` new structures (UCI from `firstUci`) and their assignments as dump tables. */
async function writeStep(
  folder: string,
  step: number,
  firstUci: number,
  count: number,
  source: Iterator<Structure>,
  samples: Samples,
): Promise<StepFiles> {
  const files: StepFiles = {
    structureFile: join(folder, `structure-${step}.tsv`),
    referenceFile: join(folder, `reference-${step}.tsv`),
    structures: 0,
    assignments: 0,
  };
  const writeStructure = tableWriter(files.structureFile, 'UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n');
  const writeReference = tableWriter(files.referenceFile, 'UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\n');
  const sources = sourcesOf(step);
  for (let uci = firstUci; files.structures < count; uci += 1) {
    const next = source.next();
    if (next.done) break;
    const { inchi, key } = next.value;
    writeStructure(`${uci}\t${inchi}\t${key}\n`);
    samples.keys.add(key, key);
    files.structures += 1;
    for (const [s, { id: sourceId, label, coverage }] of sources.entries()) {
      if (s > 0 && draw(`${uci}/${s}`) >= coverage) continue;
      // Ids as registries have them, unrelated to the UCI.
      const compoundId = `${label}${1000 + (uci * 7 + s * 13)}`;
      writeReference(`${uci}\t${sourceId}\t${compoundId}\t1\n`);
      samples.ids.add({ sourceId, compoundId }, `${sourceId}\t${compoundId}`);
      files.assignments += 1;
    }
  }
  writeStructure();
  writeReference();
  return files;
}

/** The table's size and storage cells: documents, bytes per document, heap used, segments (release indices). */
async function storage(engine: Engine, prefix: string): Promise<{ size: string; cells: string }> {
  await engine.client.indices.refresh({ index: `${prefix}-*` });
  // The release indices serving a source now (not the previous releases kept for RELEASE_GRACE).
  const served = [...new Set((await currentReleaseIndices(engine)).values())];
  const { compounds } = engine.names;
  const index = [compounds, ...served];
  const stats = await engine.client.indices.stats({ index, metric: ['docs', 'store', 'segments'] });
  const total = (names: string[], pick: (p: estypes.IndicesStatsIndexStats) => number | undefined): number =>
    names.reduce((sum, name) => sum + (pick(stats.indices![name].primaries!) ?? 0), 0);
  const [docs, bytes, segments] = [
    (names: string[]): number => total(names, (p) => p.docs?.count),
    (names: string[]): number => total(names, (p) => p.store?.size_in_bytes) / docs(names),
    (names: string[]): number => total(names, (p) => p.segments?.count),
  ];
  const nodes = (await engine.client.nodes.stats({ metric: ['jvm'] })) as unknown as {
    nodes: Record<string, { jvm: { mem: { heap_used_in_bytes: number } } }>;
  };
  const heap = Object.values(nodes.nodes).reduce((sum, n) => sum + n.jvm.mem.heap_used_in_bytes, 0) / 2 ** 20;
  return {
    size: `${fmt(docs([compounds]))} / ${fmt(docs(served))}`,
    cells:
      `${fmt(bytes([compounds]))} / ${fmt(bytes(served))} | ${fmt(heap)} ` +
      `| ${segments([compounds])} / ${segments(served)} (${served.length})`,
  };
}

/** Keys of real mixtures, which get no isotopologues: their connectivity answers do not grow with the set. */
function mixtureKeys(real: Structure[]): string[] {
  const sample = new Sample<string>(sampleSize);
  for (const r of real) if (r.inchi.split('/')[1].includes('.')) sample.add(r.key, r.key);
  return sample.values;
}

const byKey = (keys: string[]): object[] => keys.map((compound) => ({ type: 'inchikey', compound }));
const failed = (m: Measure): string => (m.failures ? ` (failed: ${describeFailures(m)})` : '');
const ms = (m: Measure): string => `${fmt(m.p50, 1)} / ${fmt(m.p99, 1)}${failed(m)}`;

/** Each lookup at 16 connections, then at half its peak (an open loop); a table cell each. */
async function measureLookups(prefix: string, samples: Samples, mixtures: string[]): Promise<string> {
  const { url, stop } = await startApi({ ES_INDEX_PREFIX: prefix });
  try {
    const byId = samples.ids.values.map(({ sourceId: sourceID, compoundId: compound }) => ({ compound, sourceID }));
    const lookups: [string, string, object[]][] = [
      ['by InChIKey', '/api/v1/compounds', byKey(samples.keys.values)],
      ['by sourceID', '/api/v1/compounds', byId.map((id) => ({ type: 'sourceID', ...id }))],
      ['connectivity', '/api/v1/connectivity', byKey(samples.keys.values)],
      ['connectivity of mixtures', '/api/v1/connectivity', byKey(mixtures)],
    ];
    const cells: string[] = [];
    for (const [name, path, bodies] of lookups) {
      // Each run goes on where the last stopped: a search sent again is the engine's request cache's.
      let sent = 0;
      const next = (m: Measure): number => (sent = (sent + m.requests + m.failures) % bodies.length);
      const unsent = (): object[] => [...bodies.slice(sent), ...bodies.slice(0, sent)];
      next(await drive(url, path, unsent(), warmUpSeconds, connections));
      const peak = await drive(url, path, unsent(), seconds, connections);
      const rate = Math.max(10, Math.round(peak.rps / 2));
      next(peak);
      const half = await drivePaced(url, path, unsent(), seconds, rate);
      cells.push(`${fmt(peak.rps)}, ${ms(peak)}; at ${rate}/s ${ms(half)}`);
      out(
        `  ${name}: ${fmt(peak.rps)} req/s at ${connections} connections, p50 / p99 ${ms(peak)} ms; ` +
          `at ${rate}/s ${ms(half)} ms`,
      );
    }
    return cells.join(' | ');
  } finally {
    await stop();
  }
}

async function main(): Promise<void> {
  const prefix = `bench-scale-${randomBytes(3).toString('hex')}`;
  const { config, engine } = await openBench('bench:scale', prefix);
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-bench-scale-'));
  const { file } = molecules();
  out(
    `${fmt(totalmem() / 2 ** 30)} GiB, ES_SHARDS ${config.ES_SHARDS}, ES_REPLICAS ${config.ES_REPLICAS}; ` +
      `steps ${steps.map((n) => fmt(n)).join(', ')} structures; lookups ${seconds} s each; files in ${folder}`,
  );
  const started = process.hrtime.bigint();
  const { real, parents } = await readRealSet(config.MAX_INCHI_LENGTH);
  out(
    `${file}: ${fmt(real.length)} distinct loadable structures, ${fmt(parents.length)} of them parents of ` +
      `isotopologues (${fmt(since(started), 1)} s)`,
  );
  const generator = structures(real, parents);
  const mixtures = mixtureKeys(real);
  const samples: Samples = { keys: new Sample(sampleSize), ids: new Sample(sampleSize) };
  writeFileSync(join(folder, 'source.tsv'), sourceTsv(steps.flatMap((_, i) => sourcesOf(i + 1))));
  const load = (command: string, path: string, step: number | string): ReturnType<typeof runLoader> =>
    runLoader(prefix, [command, path, '--rejects', join(folder, `rejects-${command}-${step}.tsv`)]);
  const rows: string[] = [];
  try {
    await load('sources', join(folder, 'source.tsv'), 0);
    let loaded = 0;
    for (const [i, target] of steps.entries()) {
      const step = i + 1;
      if (target <= loaded) continue;
      out(`\nstep ${step}: ${fmt(loaded)} → ${fmt(target)} structures`);
      const files = await writeStep(folder, step, loaded + 1, target - loaded, generator, samples);
      if (files.structures === 0) break;
      // Each table by the loader: its rows/s, peak RSS and time.
      const phase = async (command: 'structures' | 'references', file: string, rows: number): Promise<string> => {
        await settle(engine);
        const run = await load(command, file, step);
        if (Number(run.summary.rowsLoaded) !== rows) throw new Error(`step ${step}: ${JSON.stringify(run.summary)}`);
        const [rate, time] = [rows / Number(run.summary.seconds), fmt(Number(run.summary.seconds) / 60, 1)];
        out(`  ${command}: ${fmt(rows)} rows at ${fmt(rate)} rows/s in ${time} min, ${fmt(run.peakRssMb)} MB`);
        return `${fmt(rate)}, ${time} min, ${fmt(run.peakRssMb)} MB`;
      };
      const loadCells =
        `${await phase('structures', files.structureFile, files.structures)} ` +
        `| ${await phase('references', files.referenceFile, files.assignments)}`;
      for (const table of [files.structureFile, files.referenceFile]) rmSync(table, { force: true });
      await settle(engine);
      loaded += files.structures;
      const disk = await storage(engine, prefix);
      const asLoaded = await measureLookups(prefix, samples, mixtures);
      rows.push(`| ${disk.size} | ${loadCells} | ${disk.cells} | ${asLoaded} |`);
    }
  } finally {
    if (rows.length > 0) {
      out(
        '\n| structures / assignments | structures: rows/s, time, loader RSS | references ' +
          '| bytes per structure / assignment | heap used MB ' +
          '| segments compounds / assignments (release indices) ' +
          '| by InChIKey: req/s, p50 / p99 ms; p50 / p99 ms at half its peak | by sourceID | connectivity ' +
          '| connectivity of mixtures |',
      );
      out('|---|---|---|---|---|---|---|---|---|---|');
      for (const row of rows) out(row);
    }
    rmSync(folder, { recursive: true, force: true });
    await deleteIndicesByPrefix(config.ES_URL, prefix).catch(() => []);
    out(`deleted ${prefix}-* and ${folder}`);
    await engine.close();
  }
}

runBench(module, 'bench:scale', main);
