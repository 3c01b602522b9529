/**
 * `npm run bench:similarity [-- --queries 200 --fresh --split-cores]`: similarity and substructure
 * search on the 500k set (bench:api's copy, `bench-api-*`), side by side with their ceilings in one
 * run: RDKit in Python (the same derivation, SubstructLibrary) and FPSim2 in memory, through
 * bench/similarity_reference.py in the venv of CHEMXREF_PY (default /root/.cache/chemxref-py), made with
 * `python3 -m venv $CHEMXREF_PY && $CHEMXREF_PY/bin/pip install 'rdkit==2026.9.1' 'FPSim2==0.7.4'`.
 * Prints the fingerprints' agreement and rate, the exactness of every answer (against FPSim2 over the
 * stored fingerprints, and HasSubstructMatch over the stored molecules), and p50 per threshold.
 * `--fresh` computes the fingerprints again (else those held are reused and the backfill is not timed).
 * `--drawn [--limit N]` measures instead, without the engine, whether stored molecules are the molecules
 * as drawn (bench/drawn.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { apiPrefix, apiDumpFolder, ensureLoaded } from './dataset';
import { drawnAgreement } from './drawn';
import { UsageError, fmt, molecules, openBench, out, post, runBench, runLoader, sampleHash, since } from './common';
import { splitCoresIfAsked, startApi } from './common';
import type { Engine } from '../src/engine/client';
import { similarStructures, storedMorganOf, substructureCandidates, thresholdOf } from '../src/engine/fingerprints';
import { sortedSources } from '../src/engine/paging';
import { percentile } from './load-generator';

const python = join(process.env.CHEMXREF_PY ?? '/root/.cache/chemxref-py', 'bin', 'python');
const reference = join(__dirname, 'similarity_reference.py');
const thresholds = [0.5, 0.7, 0.9];
/** Common scaffolds and rare fragments, as SMARTS (SMILES read as SMARTS, as SubstructLibrary reads them). */
const fragments = [
  'c1ccccc1 c1ccncc1 C(=O)N c1ccc2ccccc2c1 [#6]S(=O)(=O)N C1CCNCC1 c1ccc(cc1)-c1ccccc1 O=C1CCCN1',
  'FC(F)(F)c1ccccc1 c1cnc2ncnc2c1 c1ccc2[nH]ccc2c1 C1CCOC1 c1ccsc1 c1cocn1 N1CCNCC1 C1CC1C',
  'O=C(O)c1ccccc1 c1ccc2ncccc2c1 c1ncncn1 [N+](=O)[O-] N#Cc1ccccc1 OCC(O)CO c1cc2ccccc2o1',
  'C1CCC2CCCCC2C1 O=c1cc[nH]c(=O)[nH]1 c1ccc2c(c1)sc1ccccc12 S(=O)(=O)(O) C(F)(F)F c1cnccn1 c1cn[nH]c1',
  'C1=CC=CC=CC1 O=C1NC(=O)CS1 c1ccc2nc3ccccc3cc2c1 P(=O)(O)O C1CC2CCC1C2 Brc1ccccc1 Ic1ccccc1 C=CC(=O)N',
  'N=C(N)N c1ccc2c(c1)oc1ccccc12 B(O)O C1CCCCCCC1 O=C1c2ccccc2C(=O)N1 c1csc(n1)N [Si](C)(C)C',
  'C1OC(CO)C(O)C1O n1ccnc1C c1ccc2c(c1)ccc1ccccc12 O=S1(=O)CCCC1 N#Cc1ccccc1O',
]
  .join(' ')
  .split(' ');

/** Morgan on-bits as the reference script writes them: 256 bytes in hex, bit 8i+j = (byte i >> j) & 1. */
export function hexOf(morgan?: number[]): string {
  if (!morgan) return '';
  const bits = Buffer.alloc(256);
  for (const bit of morgan) bits[bit >> 3] |= 1 << (bit & 7);
  return bits.toString('hex');
}

/** What the reference script prints, a JSON line at a time. */
type ReferenceLine = { query: string; hits?: [string, number][]; keys?: string[] } & Record<Figure, number>;
type Figure = 'threshold' | 'ms' | 'structures' | 'failed' | 'seconds' | 'perSecond' | 'buildSeconds';
type Answer = { totalResults?: number; complete?: boolean; results?: { standardInchiKey: string; tanimoto: number }[] };

const ask = async (url: string, body: object): Promise<Answer> => (await (await post(url, body)).json()) as Answer;

/** Runs the reference script (pinned to `core` when given); resolves with its JSON lines. */
async function python3(args: string[], core?: string): Promise<ReferenceLine[]> {
  const [command, argv] = core ? ['taskset', ['-c', core, python, reference, ...args]] : [python, [reference, ...args]];
  const { stdout } = await promisify(execFile)(command, argv, { maxBuffer: 2 ** 30 });
  return stdout.split('\n').flatMap((line) => (line ? [JSON.parse(line) as ReferenceLine] : []));
}

/**
 * Each query at each threshold against FPSim2 on the same fingerprints (`fps`): the answer
 * with limit 1,000 against FPSim2's hits, then p50 with limit 100 against FPSim2's, as a table: the
 * API's (key, search, cross-references, HTTP), and the engine's search alone (`similarStructures`).
 */
export async function compareSimilarity(
  url: string,
  engine: Engine,
  queries: string[],
  reference: { fps: string; folder: string; core?: string },
): Promise<void> {
  const keysFile = join(reference.folder, 'similarity-queries.txt');
  writeFileSync(keysFile, `${queries.join('\n')}\n`);
  const lines = await python3(
    ['similarity', '--fps', reference.fps, '--queries', keysFile, '--thresholds', thresholds.join(',')],
    reference.core,
  );
  const fpsim2 = new Map(lines.filter((l) => l.hits).map((l) => [`${l.query} ${l.threshold}`, l]));
  out('| threshold | exact (limit 1,000) | API p50 ms | p90 ms | search p50 ms | FPSim2 p50 ms | ratios | hits p50 |');
  out('|---|---|---|---|---|---|---|---|');
  const morgans = await Promise.all(queries.map((key) => storedMorganOf(engine, { standardInchiKey: key })));
  // No answer from the shard request cache: the API and the search alone send the same searches.
  const cache = (enable: boolean): Promise<unknown> =>
    engine.client.indices.putSettings({
      index: engine.names.fingerprints,
      settings: { 'requests.cache.enable': enable },
    });
  await cache(false);
  for (const threshold of thresholds) {
    let exact = 0;
    const [ours, search, theirs, counts]: number[][] = [[], [], [], []];
    for (const [i, key] of queries.entries()) {
      const body = { type: 'inchikey', compound: key, threshold };
      const answer = await ask(`${url}/api/v1/similarity`, { ...body, limit: 1000 });
      const ref = fpsim2.get(`${key} ${threshold}`)!;
      const expected = new Map<string, number>(ref.hits!);
      const got = answer.results ?? [];
      const same =
        answer.totalResults === expected.size &&
        got.every((hit) => Math.abs((expected.get(hit.standardInchiKey) ?? -1) - hit.tanimoto) <= 1e-4);
      if (same) exact += 1;
      else if (exact < 3)
        out(`  not exact: ${key} at ${threshold}: ${answer.totalResults} hits against ${expected.size}`);
      const start = process.hrtime.bigint();
      await ask(`${url}/api/v1/similarity`, { ...body, limit: 100 });
      ours.push(since(start) * 1000);
      const searched = process.hrtime.bigint();
      await similarStructures(engine, morgans[i] ?? [], thresholdOf(threshold), 100);
      search.push(since(searched) * 1000);
      theirs.push(ref.ms);
      counts.push(expected.size);
    }
    [ours, search, theirs, counts].forEach((values) => values.sort((x, y) => x - y));
    const [p50, engine50, ref50] = [ours, search, theirs].map((values) => percentile(values, 50));
    out(
      `| ${threshold} | ${exact} of ${queries.length} | ${fmt(p50, 1)} | ${fmt(percentile(ours, 90), 1)} | ${fmt(engine50, 1)} | ${fmt(ref50, 1)} | ${fmt(p50 / ref50, 2)} / ${fmt(engine50 / ref50, 2)} | ${fmt(percentile(counts, 50))} |`,
    );
  }
  await cache(true);
}

async function main(): Promise<void> {
  const argv = process.argv;
  if (argv.includes('--drawn')) {
    const limit = argv.includes('--limit') ? Number(argv[argv.indexOf('--limit') + 1]) : Infinity;
    if (!(limit > 0)) throw new UsageError('--limit takes a number of molecules, as in --limit 1000');
    const machine = `${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores)`;
    out(`bench:similarity --drawn: node ${process.version}, ${machine}, ${new Date().toISOString()}`);
    const file = argv.includes('--file') ? (argv[argv.indexOf('--file') + 1] ?? '') : undefined;
    return drawnAgreement(limit, file);
  }
  const queryCount = Number(argv[argv.indexOf('--queries') + 1] || 200) || 200;
  const { config, engine } = await openBench('bench:similarity', apiPrefix);
  await ensureLoaded(engine, config);
  const cores = await splitCoresIfAsked(engine);
  // The reference reads the rows the set was loaded from (BENCH_ROWS of them, when set).
  const { file: whole, rows } = molecules();
  const file = Number.isFinite(rows) ? join(apiDumpFolder, 'molecules.tsv') : whole;
  if (file !== whole) {
    const lines = readFileSync(whole, 'utf8').split('\n').slice(0, rows);
    writeFileSync(file, `${lines.join('\n')}\n`);
  }
  const refFps = join(apiDumpFolder, 'reference.fps');
  const held = (await engine.client.count({ index: engine.names.fingerprints }).catch(() => ({ count: 0 }))).count;

  out('\n## Fingerprints: the backfill against RDKit in Python (2 processes), the same molecules');
  if (held === 0 || argv.includes('--fresh')) {
    await engine.client.indices.delete({ index: engine.names.fingerprints }, { ignore: [404] });
    const ours = await runLoader(apiPrefix, ['fingerprints']);
    const [ref] = await python3(['fingerprints', '--in', file, '--out', refFps, '--workers', '2']);
    const [rows, failed, seconds] = ['rowsRead', 'rowsRejected', 'seconds'].map((k) => Number(ours.summary[k]));
    out(`| | structures | failed | seconds | per second | peak RSS MB |\n|---|---|---|---|---|---|
| load -- fingerprints | ${fmt(rows)} | ${fmt(failed)} | ${fmt(seconds, 1)} | ${fmt(rows / seconds)} | ${fmt(ours.peakRssMb)} |
| RDKit, Python: MolFromInchi, Morgan, pattern, binary | ${fmt(ref.structures)} | ${fmt(ref.failed)} | ${fmt(ref.seconds, 1)} | ${fmt(ref.perSecond)} | |
ratio to the reference's rate: ${fmt(rows / seconds / ref.perSecond, 2)}`);
  } else out(`reusing the ${fmt(held)} fingerprints held (\`-- --fresh\` computes and times them again)`);
  const store = await engine.client.indices.stats({ index: engine.names.fingerprints, metric: ['store', 'docs'] });
  const bytes = store._all.primaries!.store!.size_in_bytes;
  const count = (await engine.client.count({ index: engine.names.fingerprints })).count;
  out(`fingerprints index: ${fmt(bytes / 1e6, 1)} MB, ${fmt(bytes / count)} bytes a structure`);

  // Agreement, key by key, with the reference's fingerprints.
  const every = <T>(index: string, fields: string[]): Promise<T[]> =>
    sortedSources<T>(engine, { index, sort: [{ uci: 'asc' }], _source: fields }, Infinity);
  type Structure = { uci: number; standardInchiKey: string };
  const structures = await every<Structure>(engine.names.compounds, ['uci', 'standardInchiKey']);
  const keyOf = new Map(structures.map((s) => [s.uci, s.standardInchiKey]));
  const refLines = readFileSync(refFps, 'utf8').trim().split('\n');
  const refHex = new Map(refLines.map((line) => line.split('\t') as [string, string]));
  const agreement = { equal: 0, differ: [] as string[], oursOnly: 0, referenceOnly: 0, neither: 0 };
  const fingerprinted = new Map<string, string>(); // key -> its stored Morgan fingerprint, in hex
  for (const doc of await every<{ uci: number; morgan: number[] }>(engine.names.fingerprints, ['uci', 'morgan'])) {
    const key = keyOf.get(doc.uci)!;
    fingerprinted.set(key, hexOf(doc.morgan));
    const theirs = refHex.get(key);
    if (!theirs) agreement.oursOnly += 1;
    else if (theirs === fingerprinted.get(key)) agreement.equal += 1;
    else agreement.differ.push(key);
  }
  for (const [key, hex] of refHex) if (!fingerprinted.has(key)) agreement[hex ? 'referenceOnly' : 'neither'] += 1;
  out(
    `agreement with RDKit's MolFromInchi + Morgan: ${fmt(agreement.equal)} equal, ${agreement.differ.length} differ, ` +
      `${agreement.referenceOnly} only the reference has, ${agreement.oursOnly} only chemxref has, ${agreement.neither} neither`,
  );
  if (agreement.differ.length) out(`differ (first 10): ${agreement.differ.slice(0, 10).join(' ')}`);

  // The queries: a fixed sample of structures both sides fingerprinted.
  const keys = [...refHex].filter(([key, hex]) => hex && fingerprinted.has(key)).map(([key]) => key);
  const queries = keys.sort((a, b) => sampleHash(a) - sampleHash(b)).slice(0, queryCount);
  // The reference searches what chemxref stores: its fingerprints, and its molecules in UCI order.
  const [storedFps, storedMolecules] = ['stored.fps', 'stored.tsv'].map((name) => join(apiDumpFolder, name));
  const hexOfKey = ({ standardInchiKey: key }: Structure): string => `${key}\t${fingerprinted.get(key) ?? ''}\n`;
  writeFileSync(storedFps, structures.map(hexOfKey).join(''));
  const stored: string[] = [];
  for await (const page of substructureCandidates(engine, [], 5_000))
    for (const { standardInchiKey, molecule } of page) stored.push(`${standardInchiKey}\t${molecule}\n`);
  writeFileSync(storedMolecules, stored.join(''));
  const api = await startApi({ ES_INDEX_PREFIX: apiPrefix, RATE_LIMIT: '0' });
  try {
    out(`\n## Similarity: ${queries.length} queries of the set, one at a time`);
    await compareSimilarity(api.url, engine, queries, { fps: storedFps, folder: apiDumpFolder, core: cores?.rest });

    out(`\n## Substructure: ${fragments.length} fragments, limit 100, one at a time`);
    const fragmentsFile = join(apiDumpFolder, 'substructure-queries.txt');
    writeFileSync(fragmentsFile, `${fragments.join('\n')}\n`);
    const subLines = await python3(
      ['substructure', '--in', storedMolecules, '--queries', fragmentsFile, '--limit', '100'],
      cores?.rest,
    );
    out(`SubstructLibrary built in ${subLines[0].buildSeconds} s`);
    const [ours, theirs]: number[][] = [[], []];
    let exact = 0;
    for (const line of subLines.filter((l) => l.keys)) {
      const query = { type: 'smarts', compound: line.query, limit: 100 };
      const start = process.hrtime.bigint();
      const answer = await ask(`${api.url}/api/v1/substructure`, query);
      ours.push(since(start) * 1000);
      theirs.push(line.ms);
      const expected = [...new Set(line.keys)].filter((key) => fingerprinted.has(key));
      const got = (answer.results ?? []).map((r) => r.standardInchiKey);
      const compared = Math.min(got.length, expected.length);
      const complete = got.length === 100 || got.length === expected.length;
      if (answer.complete && complete && got.slice(0, compared).every((key, i) => key === expected[i])) exact += 1;
      else out(`  not exact: ${line.query}: ${got.length} against ${expected.length}, complete ${answer.complete}`);
    }
    [ours, theirs].forEach((values) => values.sort((x, y) => x - y));
    const [p50, ref50] = [percentile(ours, 50), percentile(theirs, 50)];
    out(
      `exact: ${exact} of ${ours.length}; p50 ${fmt(p50, 1)} ms (p90 ${fmt(percentile(ours, 90), 1)}), ` +
        `SubstructLibrary p50 ${fmt(ref50, 1)} ms: ratio ${fmt(p50 / ref50, 2)}`,
    );
  } finally {
    await api.stop();
    cores?.restore();
    await engine.close();
  }
}

runBench(module, 'bench:similarity', main);
