// Growth curve (issue 22, part 5): how load rate, disk, engine memory and lookup latency change as
// the data grows from the 500,000 real molecules of ../shared/data/make-samples.sh to 10 million
// structures and 30 million assignments. Structures beyond the real set are isotopologues of real
// molecules: a real single-component Standard InChI with an isotopic layer (/i) marking one or more
// of its carbons as 13C. Each one is parsed by our parseStandardInchi, its key computed by our
// inchiKeyOf, and it must keep its parent's connectivity block, so the skeletons' connectivity
// groups grow as the set grows (about 20 structures a skeleton at 10 million).
//
// Each step adds structures (UCIs continuing the previous step's) and the assignments of the step's
// own five sources (about 3 a structure), written as UniChem dump tables (structure and reference
// TSV, the source table once) and loaded by the real loader (`npm run load -- structures` and
// `references`) in child processes, into `bench-scale-<tag>-*`. After each step it prints the load
// rate against a raw bulk ceiling measured in the same step (the client's bulk helper writing a
// sample of the step's own documents into fresh indices), bytes on disk per structure and per
// assignment, the engine's heap, segment counts, and lookup p50/p99 and throughput of the v1 API
// (in a child process) by InChIKey, by sourceID and connectivity (of any structure, whose answers
// grow with its isotopologues, and of real mixtures, whose answers do not), at a fixed concurrency
// and at fixed rates (half the first step's peak, and half the step's own peak). Every bench-scale
// index and generated file is deleted
// at the end (unless --keep).
//
//   npm run bench:scale                                    # steps 0.5,2,5,10 (millions of structures)
//   npm run bench:scale -- --steps 0.5,2 --seconds 10      # a short run
//   npm run bench:scale -- --results /tmp/scale.jsonl      # one JSON line per step appended there
//   npm run bench:scale -- --consolidate                   # then the last step again, consolidated
//
// Flags: --steps (millions, cumulative), --seconds (per lookup run, 15), --connections (16),
// --ceiling-sample (structures per step written by the ceiling, 100,000; assignments: 3×),
// --work <folder> (generated tables; default a fresh folder under the OS temp dir), --keep (leave
// the indices and files), --results <file>, --consolidate (after the last step, its lookups again
// once `npm run load -- consolidate` has put the release indices into one merged index, and once
// more with the compounds index merged into one segment too). BENCH_500K names the real molecule file.
import { spawn } from 'node:child_process';
import { serveApi, startApiChild, stopApiChild } from './api-child';
import { randomBytes } from 'node:crypto';
import { appendFileSync, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync, type WriteStream } from 'node:fs';
import { descendants, readProc } from './proc';
import { drive, drivePaced, type Measure } from './load-generator';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { readConfig, type Config } from '../src/config';
import { parseStandardInchi, inchiKeyOf } from '../src/chemistry';
import { compoundDocument } from '../src/domain/compound';
import { Engine, mappingOf, type MappingName } from '../src/engine/client';
import { currentReleaseIndices, mergeIntoOneSegment } from '../src/engine/schema';
import { assignmentId } from '../src/engine/assignments';
import { Reject } from '../loaders/run';
import { checkStructure } from '../loaders/structure-rules';
import { deleteIndicesByPrefix } from '../scripts/engine';

const moleculesFile = process.env.BENCH_500K || '/tmp/chemwork/bench-500k.tsv';
const repository = join(__dirname, '..');

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1] : fallback;
}
const steps = flag('steps', '0.5,2,5,10').split(',').map((s) => Math.round(Number(s) * 1e6));
const seconds = Number(flag('seconds', '15'));
const connections = Number(flag('connections', '16'));
const ceilingSample = Number(flag('ceiling-sample', '100000'));
const keep = process.argv.includes('--keep');
const consolidate = process.argv.includes('--consolidate');
const resultsFile = flag('results', '');
const warmUpSeconds = 3;
const sampleSize = 5_000;

const out = (text: string): boolean => process.stdout.write(`${text}\n`);
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const since = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;

// ---------------------------------------------------------------------------------------------
// The data

interface Parent { inchi: string; key: string; carbons: number }

/** Every distinct loadable structure of the real set; those that can carry a 13C layer are parents. */
async function readRealSet(file: string, maxInchiLength: number): Promise<{ real: { inchi: string; key: string }[]; parents: Parent[] }> {
  const real: { inchi: string; key: string }[] = [];
  const parents: Parent[] = [];
  const seen = new Set<string>();
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    const [, inchi, key] = line.split('\t');
    if (!inchi?.startsWith('InChI=')) continue;
    try {
      const checked = checkStructure(inchi, key, maxInchiLength);
      if (seen.has(checked.standardInchiKey)) continue;
      seen.add(checked.standardInchiKey);
      real.push({ inchi, key: checked.standardInchiKey });
      // One component, no isotopic layer of its own, carbons first in the Hill formula (atoms 1..n).
      const formula = inchi.split('/')[1];
      const carbons = /^C([0-9]*)(?![a-z])/.exec(formula);
      if (formula.includes('.') || /^[0-9]/.test(formula) || inchi.includes('/i') || !carbons) continue;
      parents.push({ inchi, key: checked.standardInchiKey, carbons: carbons[1] ? Number(carbons[1]) : 1 });
    } catch (error) {
      if (!(error instanceof Reject)) throw error;
    }
  }
  return { real, parents };
}

/**
 * Isotopologue `variant` (1, 2, ...) of a parent: the carbons named by the set bits of `variant`
 * become 13C (`/i1+1,3+1`). Variants of one parent differ, so their keys do; a variant beyond the
 * parent's 2^carbons - 1 does not exist (undefined).
 */
function isotopologue(parent: Parent, variant: number): string | undefined {
  if (variant >= 2 ** Math.min(parent.carbons, 24)) return undefined;
  const atoms: string[] = [];
  for (let bit = 0; bit < 24; bit += 1) if (variant & (1 << bit)) atoms.push(`${bit + 1}+1`);
  return `${parent.inchi}/i${atoms.join(',')}`;
}

/** The structures of the set in UCI order: the real ones, then round after round of isotopologues. */
function* structures(real: { inchi: string; key: string }[], parents: Parent[], realKeys: Set<string>): Generator<{ inchi: string; key: string; parsed?: ReturnType<typeof parseStandardInchi> }> {
  for (const r of real) yield r;
  for (let variant = 1; variant < 2 ** 24; variant += 1) {
    let any = false;
    for (const parent of parents) {
      const inchi = isotopologue(parent, variant);
      if (inchi === undefined) continue;
      any = true;
      const parsed = parseStandardInchi(inchi);
      const key = inchiKeyOf(parsed);
      if (parsed.connectivityBlock !== parent.key.slice(0, 14) || key.slice(0, 14) !== parent.key.slice(0, 14)) {
        throw new Error(`isotopologue ${inchi} left its parent's skeleton (${key} against ${parent.key})`);
      }
      if (realKeys.has(key)) continue; // a real labelled molecule of the set
      yield { inchi, key, parsed };
    }
    if (!any) return;
  }
}

interface Source { id: number; label: string; coverage: number }

/** Five sources a step, covering 100, 80, 60, 40 and 20 % of the step's new structures: 3 ids a structure. */
function sourcesOf(step: number): Source[] {
  return [1, 0.8, 0.6, 0.4, 0.2].map((coverage, i) => ({ id: 200 + step * 10 + i, label: `SCALE${step}S${i}X`, coverage }));
}

/** A fixed 32-bit hash of two integers, so which source holds which structure is deterministic. */
function hash(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}

function sourceTsv(all: Source[]): string {
  const header = 'SRC_ID\tNAME\tNAME_LONG\tNAME_LABEL\tDESCRIPTION\tSRC_URL\tBASE_ID_URL\tBASE_ID_URL_AVAILABLE\tPRIVATE';
  return `${header}\n${all.map((s) => `${s.id}\tscale_${s.id}\tScale bench source ${s.id}\t${s.label}\tsynthetic source of bench:scale\thttps://example.org/\t\t0\t0`).join('\n')}\n`;
}

/** Buffered writes with back-pressure. */
class Writer {
  private buffer = '';
  constructor(private stream: WriteStream) {}
  async write(text: string): Promise<void> {
    this.buffer += text;
    if (this.buffer.length < 1 << 20) return;
    const ok = this.stream.write(this.buffer);
    this.buffer = '';
    if (!ok) await new Promise<void>((resolve) => this.stream.once('drain', () => resolve()));
  }
  async end(): Promise<void> {
    this.stream.end(this.buffer);
    await new Promise<void>((resolve) => this.stream.once('finish', () => resolve()));
  }
}

interface StepFiles {
  structureFile: string; referenceFile: string; structures: number; assignments: number;
  /** Serialised documents of the first structures and assignments of the step, for the ceiling. */
  ceilingStructures: [string, string][]; ceilingAssignments: [string, string][];
  secondsToWrite: number;
}

/** Writes the step's new structures (UCI from `firstUci`) and their assignments as dump tables. */
async function writeStep(folder: string, step: number, firstUci: number, count: number, source: Iterator<{ inchi: string; key: string; parsed?: ReturnType<typeof parseStandardInchi> }>): Promise<StepFiles> {
  const started = process.hrtime.bigint();
  const structureFile = join(folder, `structure-${step}.tsv`);
  const referenceFile = join(folder, `reference-${step}.tsv`);
  const structuresOut = new Writer(createWriteStream(structureFile));
  const referencesOut = new Writer(createWriteStream(referenceFile));
  await structuresOut.write('UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n');
  await referencesOut.write('UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\n');
  const sources = sourcesOf(step);
  const files: StepFiles = { structureFile, referenceFile, structures: 0, assignments: 0, ceilingStructures: [], ceilingAssignments: [], secondsToWrite: 0 };
  for (let uci = firstUci; files.structures < count; uci += 1) {
    const next = source.next();
    if (next.done) break;
    const { inchi, key } = next.value;
    await structuresOut.write(`${uci}\t${inchi}\t${key}\n`);
    files.structures += 1;
    const sampled = files.structures <= ceilingSample;
    if (sampled) {
      const parsed = next.value.parsed ?? parseStandardInchi(inchi);
      files.ceilingStructures.push([key, JSON.stringify(compoundDocument(uci, key, parsed, 'bench-ceiling'))]);
    }
    for (let s = 0; s < sources.length; s += 1) {
      if (s > 0 && hash(uci, s) / 2 ** 32 >= sources[s].coverage) continue;
      // Ids as registries have them, unrelated to the UCI: a per-source counter, spread out.
      const compoundId = `${sources[s].label}${1000 + (uci * 7 + s * 13)}`;
      await referencesOut.write(`${uci}\t${sources[s].id}\t${compoundId}\t1\n`);
      files.assignments += 1;
      if (sampled) {
        const document = { sourceId: sources[s].id, compoundId, uci, assignment: 1, standardInchiKey: key, connectivityBlock: key.slice(0, 14) };
        files.ceilingAssignments.push([assignmentId(sources[s].id, uci, compoundId), JSON.stringify(document)]);
      }
    }
  }
  await structuresOut.end();
  await referencesOut.end();
  files.secondsToWrite = since(started);
  return files;
}

// ---------------------------------------------------------------------------------------------
// The loader, in a child process; its peak RSS polled from /proc


async function runLoader(prefix: string, args: string[]): Promise<{ summary: Record<string, unknown>; peakRssMb: number }> {
  const child = spawn('npm', ['run', '--silent', 'load', '--', ...args, '--no-progress'], {
    cwd: repository, env: { ...process.env, ES_INDEX_PREFIX: prefix }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  let peak = 0;
  const timer = setInterval(() => {
    if (child.pid === undefined) return;
    for (const pid of [child.pid, ...descendants(child.pid)]) {
      const hwm = Number(/VmHWM:\s+([0-9]+) kB/.exec(readProc(pid, 'status') ?? '')?.[1] ?? 0);
      peak = Math.max(peak, hwm);
    }
  }, 500);
  let stdout = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(timer);
  const last = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0) throw new Error(`npm run load -- ${args.join(' ')} failed (exit ${code}): ${last}`);
  return { summary: JSON.parse(last) as Record<string, unknown>, peakRssMb: peak / 1024 };
}

// ---------------------------------------------------------------------------------------------
// The ceiling: the client's bulk helper writing serialised documents into a fresh index

async function ceiling(engine: Engine, index: string, name: MappingName, items: [string, string][], op: 'create' | 'index'): Promise<number> {
  const { settings, mappings } = mappingOf(name);
  const indexSettings = (settings.index ?? {}) as Record<string, unknown>;
  await engine.client.indices.create({ index, mappings, settings: { index: { ...indexSettings, refresh_interval: '-1' } } });
  const started = process.hrtime.bigint();
  const stats = await engine.client.helpers.bulk<[string, string]>({
    datasource: items,
    onDocument: ([id, document]) => [{ [op]: { _index: index, _id: id } }, document] as never,
    concurrency: 3, flushBytes: 4_000_000, refreshOnCompletion: false,
  });
  await engine.client.indices.refresh({ index });
  const elapsed = since(started);
  await engine.client.indices.delete({ index });
  if (stats.successful !== items.length) throw new Error(`the ceiling wrote ${stats.successful} of ${items.length} documents`);
  return items.length / elapsed;
}

/** Waits until the node has no merge running (at most 2 minutes). */
async function settle(engine: Engine): Promise<void> {
  for (let i = 0; i < 240; i += 1) {
    const stats = await engine.client.nodes.stats({ metric: ['indices'], index_metric: ['merge'] }) as unknown as { nodes: Record<string, { indices: { merges: { current: number } } }> };
    if (Object.values(stats.nodes).every((node) => node.indices.merges.current === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

// ---------------------------------------------------------------------------------------------
// Storage and memory

interface Storage {
  structureBytes: number; structureDocs: number; structureSegments: number;
  assignmentBytes: number; assignmentDocs: number; assignmentSegments: number; assignmentIndices: number;
  heapUsedMb: number; heapMaxMb: number; segmentMemoryMb: number; nodes: number;
}

async function storage(engine: Engine, prefix: string): Promise<Storage> {
  await engine.client.indices.refresh({ index: `${prefix}-*` });
  const rows = await engine.client.cat.indices({ index: `${prefix}-*`, bytes: 'b', format: 'json' }) as unknown as Record<string, string>[];
  const compounds = rows.find((row) => row.index === engine.names.compounds)!;
  // The release indices serving a source now (not the previous releases kept for RELEASE_GRACE).
  const served = new Set((await currentReleaseIndices(engine)).values());
  const assignments = rows.filter((row) => served.has(row.index));
  const segments = await engine.client.indices.stats({ index: [compounds.index, ...assignments.map((x) => x.index)], metric: ['segments'] }) as unknown as { indices: Record<string, { primaries: { segments: { count: number } } }> };
  const segmentCount = (index: string): number => segments.indices[index]?.primaries.segments.count ?? 0;
  const nodes = await engine.client.nodes.stats({ metric: ['jvm', 'indices'], index_metric: ['segments'] }) as unknown as { nodes: Record<string, { jvm: { mem: { heap_used_in_bytes: number; heap_max_in_bytes: number } }; indices: { segments: { memory_in_bytes: number } } }> };
  const list = Object.values(nodes.nodes);
  return {
    structureBytes: Number(compounds['pri.store.size']), structureDocs: Number(compounds['docs.count']), structureSegments: segmentCount(compounds.index),
    assignmentBytes: assignments.reduce((sum, x) => sum + Number(x['pri.store.size']), 0), assignmentDocs: assignments.reduce((sum, x) => sum + Number(x['docs.count']), 0),
    assignmentSegments: assignments.reduce((sum, x) => sum + segmentCount(x.index), 0), assignmentIndices: assignments.length,
    heapUsedMb: list.reduce((sum, n) => sum + n.jvm.mem.heap_used_in_bytes, 0) / 2 ** 20,
    heapMaxMb: list.reduce((sum, n) => sum + n.jvm.mem.heap_max_in_bytes, 0) / 2 ** 20,
    segmentMemoryMb: list.reduce((sum, n) => sum + n.indices.segments.memory_in_bytes, 0) / 2 ** 20,
    nodes: list.length,
  };
}

// ---------------------------------------------------------------------------------------------
// Lookups through the API, in a child process


/** Real keys and current ids of the whole set, drawn evenly (random_score), as bench/api.ts does. */
async function samples(engine: Engine): Promise<{ keys: string[]; ids: { sourceId: number; compoundId: string }[] }> {
  const draw = async <T>(index: string, filter: object, fields: string[]): Promise<T[]> => {
    const result = await engine.client.search<T>({
      index, size: sampleSize, _source: fields,
      query: { function_score: { query: { bool: { filter: [filter] } }, functions: [{ random_score: { seed: 5, field: '_seq_no' } }], boost_mode: 'replace' } },
    }, { requestTimeout: 300_000 });
    return result.hits.hits.map((hit) => hit._source!);
  };
  const keys = (await draw<{ standardInchiKey: string }>(engine.names.compounds, { match_all: {} }, ['standardInchiKey'])).map((d) => d.standardInchiKey);
  const ids = await draw<{ sourceId: number; compoundId: string }>(engine.names.assignments, { term: { assignment: 1 } }, ['sourceId', 'compoundId']);
  return { keys, ids };
}

/**
 * Keys of real mixtures (more than one component), which get no isotopologues: their connectivity
 * answers hold the same structures at every step, so their latency shows what the index's size
 * costs apart from what the answers hold. Drawn evenly (a fixed stride) from the real set.
 */
function mixtureKeys(real: { inchi: string; key: string }[]): string[] {
  const mixtures = real.filter((r) => r.inchi.split('/')[1].includes('.')).map((r) => r.key);
  const stride = Math.max(1, Math.floor(mixtures.length / sampleSize));
  return mixtures.filter((_, i) => i % stride === 0).slice(0, sampleSize);
}

/** Mean structures and entries (assignments) a connectivity answer holds, over the first 200 sample keys. */
async function answerSize(url: string, keys: string[]): Promise<{ compounds: number; sources: number }> {
  let compounds = 0;
  let sources = 0;
  const some = keys.slice(0, 200);
  for (const compound of some) {
    const response = await fetch(`${url}/api/v1/connectivity`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'inchikey', compound }) });
    const answer = await response.json() as { totalCompounds?: number; sources?: unknown[] };
    if (response.status !== 200) throw new Error(`connectivity ${compound} answered ${response.status} ${JSON.stringify(answer).slice(0, 300)}`);
    compounds += answer.totalCompounds ?? 0;
    sources += answer.sources?.length ?? 0;
  }
  return { compounds: compounds / some.length, sources: sources / some.length };
}

interface Lookup { name: string; path: string; bodies: object[] }
interface LookupResult { name: string; peak: Measure; atRate: Measure; rate: number; atOwnHalf: Measure; ownRate: number }

async function measureLookups(prefix: string, engine: Engine, rates: Map<string, number>, mixtures: string[]): Promise<{ results: LookupResult[]; answer: { compounds: number; sources: number }; mixtureAnswer: { compounds: number; sources: number } }> {
  const { keys, ids } = await samples(engine);
  const { child, url } = await startApiChild(__filename, { ES_INDEX_PREFIX: prefix });
  try {
    const lookups: Lookup[] = [
      { name: 'by InChIKey', path: '/api/v1/compounds', bodies: keys.map((compound) => ({ type: 'inchikey', compound })) },
      { name: 'by sourceID', path: '/api/v1/compounds', bodies: ids.map((id) => ({ type: 'sourceID', compound: id.compoundId, sourceID: id.sourceId })) },
      { name: 'connectivity', path: '/api/v1/connectivity', bodies: keys.map((compound) => ({ type: 'inchikey', compound })) },
      { name: 'connectivity of mixtures', path: '/api/v1/connectivity', bodies: mixtures.map((compound) => ({ type: 'inchikey', compound })) },
    ];
    const answer = await answerSize(url, keys);
    const mixtureAnswer = await answerSize(url, mixtures);
    const results: LookupResult[] = [];
    for (const lookup of lookups) {
      await drive(url, lookup.path, lookup.bodies, warmUpSeconds, connections);
      const peak = await drive(url, lookup.path, lookup.bodies, seconds, connections);
      // The same rate at every step: half the first step's peak.
      if (!rates.has(lookup.name)) rates.set(lookup.name, Math.max(10, Math.round(peak.rps / 2)));
      const rate = rates.get(lookup.name)!;
      const atRate = await drivePaced(url, lookup.path, lookup.bodies, seconds, rate);
      // And at half of this step's own peak: the latency of a deployment run at half its capacity.
      const ownRate = Math.max(10, Math.round(peak.rps / 2));
      const atOwnHalf = ownRate === rate ? atRate : await drivePaced(url, lookup.path, lookup.bodies, seconds, ownRate);
      results.push({ name: lookup.name, peak, atRate, rate, atOwnHalf, ownRate });
      out(`  ${lookup.name}: ${fmt(peak.rps)} req/s at ${connections} connections (p50 ${fmt(peak.p50, 1)}, p99 ${fmt(peak.p99, 1)} ms, ${peak.failures} failed); at ${rate}/s p50 ${fmt(atRate.p50, 1)}, p99 ${fmt(atRate.p99, 1)} ms (${atRate.failures} failed); at ${ownRate}/s (half its own peak) p50 ${fmt(atOwnHalf.p50, 1)}, p99 ${fmt(atOwnHalf.p99, 1)} ms (${atOwnHalf.failures} failed)`);
    }
    return { results, answer, mixtureAnswer };
  } finally {
    await stopApiChild(child);
  }
}

/** One line of the growth table. */
function tableRow(size: string, loadCells: string, disk: Storage, lookups: Awaited<ReturnType<typeof measureLookups>>): string {
  const lookupCells = lookups.results.map((l) => `${fmt(l.peak.rps)}, ${fmt(l.peak.p50, 1)} / ${fmt(l.peak.p99, 1)}; at ${l.rate}/s ${fmt(l.atRate.p50, 1)} / ${fmt(l.atRate.p99, 1)}; at ${l.ownRate}/s ${fmt(l.atOwnHalf.p50, 1)} / ${fmt(l.atOwnHalf.p99, 1)}`);
  return `| ${size} | ${loadCells} | ${fmt(disk.structureBytes / disk.structureDocs)} / ${fmt(disk.assignmentBytes / disk.assignmentDocs)} | ${fmt(disk.heapUsedMb)} | ${disk.structureSegments} / ${disk.assignmentSegments} (${disk.assignmentIndices}) | ${lookupCells.join(' | ')} | ${fmt(lookups.answer.compounds, 1)}; ${fmt(lookups.mixtureAnswer.compounds, 1)} |`;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (process.argv.includes('--serve')) return serveApi();
  if (!existsSync(moleculesFile)) {
    process.stderr.write(`${moleculesFile} is missing: build it with \`apt-get update && W=/tmp/chemwork bash ../shared/data/make-samples.sh\` (as root, ~3 min), or set BENCH_500K\n`);
    process.exit(2);
  }
  const config: Config = readConfig();
  const prefix = `bench-scale-${randomBytes(3).toString('hex')}`;
  const engine = new Engine({ ...config, ES_INDEX_PREFIX: prefix });
  const folder = flag('work', '') || mkdtempSync(join(tmpdir(), 'chemxref-bench-scale-'));
  mkdirSync(folder, { recursive: true });
  await engine.client.cluster.health({ wait_for_status: 'yellow', timeout: '30s' }).catch(() => {
    throw new Error(`no Elasticsearch answers on ${config.ES_URL}: start one with \`npm run es:start\``);
  });
  out(`Scale benchmark (issue 22): node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores, ${fmt(totalmem() / 2 ** 30)} GiB), Elasticsearch at ${config.ES_URL}, prefix ${prefix}, ES_SHARDS ${config.ES_SHARDS}, ES_REPLICAS ${config.ES_REPLICAS}`);
  out(`steps ${steps.map((s) => fmt(s)).join(', ')} structures; lookups ${seconds} s each at ${connections} connections, then at half the first step's peak; files in ${folder}`);

  let started = process.hrtime.bigint();
  const { real, parents } = await readRealSet(moleculesFile, config.MAX_INCHI_LENGTH);
  const realKeys = new Set(real.map((r) => r.key));
  out(`${moleculesFile}: ${fmt(real.length)} distinct loadable structures, ${fmt(parents.length)} of them parents of isotopologues (${fmt(since(started), 1)} s)`);
  const generator = structures(real, parents, realKeys);
  const mixtures = mixtureKeys(real);

  const allSources = steps.flatMap((_, i) => sourcesOf(i + 1));
  writeFileSync(join(folder, 'source.tsv'), sourceTsv(allSources));
  const rates = new Map<string, number>();
  const rows: string[] = [];
  try {
    await runLoader(prefix, ['sources', join(folder, 'source.tsv'), '--rejects', join(folder, 'rejects-sources.tsv')]);
    let loaded = 0;
    for (let i = 0; i < steps.length; i += 1) {
      const step = i + 1;
      const target = steps[i];
      if (target <= loaded) continue;
      out(`\nstep ${step}: ${fmt(loaded)} → ${fmt(target)} structures`);
      const files = await writeStep(folder, step, loaded + 1, target - loaded, generator);
      out(`  wrote ${fmt(files.structures)} structures and ${fmt(files.assignments)} assignments in ${fmt(files.secondsToWrite, 1)} s (${fmt(statSync(files.structureFile).size / 1e6)} + ${fmt(statSync(files.referenceFile).size / 1e6)} MB)`);
      if (files.structures === 0) break;

      await settle(engine);
      const structureLoad = await runLoader(prefix, ['structures', files.structureFile, '--rejects', join(folder, `rejects-structures-${step}.tsv`)]);
      await settle(engine);
      const referenceLoad = await runLoader(prefix, ['references', files.referenceFile, '--rejects', join(folder, `rejects-references-${step}.tsv`)]);
      for (const [what, load, expected] of [['structures', structureLoad, files.structures], ['references', referenceLoad, files.assignments]] as const) {
        if (Number(load.summary.rowsLoaded) !== expected) throw new Error(`the ${what} load of step ${step} loaded ${load.summary.rowsLoaded} of ${expected} rows: ${JSON.stringify(load.summary).slice(0, 500)}`);
      }
      const structureRate = files.structures / Number(structureLoad.summary.seconds);
      const referenceRate = files.assignments / Number(referenceLoad.summary.seconds);
      out(`  loader: structures ${fmt(structureRate)} rows/s (${fmt(Number(structureLoad.summary.seconds), 1)} s, peak RSS ${fmt(structureLoad.peakRssMb)} MB), references ${fmt(referenceRate)} rows/s (${fmt(Number(referenceLoad.summary.seconds), 1)} s, peak RSS ${fmt(referenceLoad.peakRssMb)} MB)`);

      await settle(engine);
      const ceilingStructures = await ceiling(engine, `${prefix}-ceiling-compounds`, 'compounds', files.ceilingStructures, 'create');
      await settle(engine);
      const ceilingReferences = await ceiling(engine, `${prefix}-ceiling-assignments`, 'assignments', files.ceilingAssignments, 'index');
      files.ceilingStructures.length = 0;
      files.ceilingAssignments.length = 0;
      out(`  ceiling (fresh index, ${fmt(ceilingSample)} structures / their assignments of this step): structures ${fmt(ceilingStructures)} rows/s, references ${fmt(ceilingReferences)} rows/s → loader/ceiling ${fmt(structureRate / ceilingStructures, 2)} and ${fmt(referenceRate / ceilingReferences, 2)}`);
      if (!keep) {
        rmSync(files.structureFile, { force: true });
        rmSync(files.referenceFile, { force: true });
      }

      await settle(engine);
      const disk = await storage(engine, prefix);
      out(`  disk: ${fmt(disk.structureBytes / disk.structureDocs)} B per structure (${fmt(disk.structureDocs)} docs, ${disk.structureSegments} segments), ${fmt(disk.assignmentBytes / disk.assignmentDocs)} B per assignment (${fmt(disk.assignmentDocs)} docs in ${disk.assignmentIndices} indices, ${disk.assignmentSegments} segments); heap used ${fmt(disk.heapUsedMb)} of ${fmt(disk.heapMaxMb)} MB (the node's, every user), segment memory ${fmt(disk.segmentMemoryMb, 1)} MB`);

      const lookups = await measureLookups(prefix, engine, rates, mixtures);
      out(`  connectivity answers (200 sample keys): ${fmt(lookups.answer.compounds, 1)} structures, ${fmt(lookups.answer.sources, 1)} entries (assignments) on average; of mixtures ${fmt(lookups.mixtureAnswer.compounds, 1)} and ${fmt(lookups.mixtureAnswer.sources, 1)}`);
      loaded += files.structures;
      const record = {
        step, structures: disk.structureDocs, assignments: disk.assignmentDocs, date: new Date().toISOString(),
        load: { structures: { rows: files.structures, seconds: structureLoad.summary.seconds, rate: structureRate, ceiling: ceilingStructures, peakRssMb: structureLoad.peakRssMb }, references: { rows: files.assignments, seconds: referenceLoad.summary.seconds, rate: referenceRate, ceiling: ceilingReferences, peakRssMb: referenceLoad.peakRssMb } },
        disk, lookups: lookups.results, connectivityAnswer: lookups.answer, mixtureConnectivityAnswer: lookups.mixtureAnswer,
      };
      if (resultsFile) appendFileSync(resultsFile, `${JSON.stringify(record)}\n`);
      rows.push(tableRow(`${fmt(disk.structureDocs)} / ${fmt(disk.assignmentDocs)}`, `${fmt(structureRate)} (${fmt(structureRate / ceilingStructures, 2)}) | ${fmt(referenceRate)} (${fmt(referenceRate / ceilingReferences, 2)})`, disk, lookups));
    }
    if (consolidate && rows.length > 0) {
      // What the release indices' number and segments cost, apart from the data's size: the same
      // data served from one merged release index, then with the compounds index merged too.
      out('\nconsolidated: npm run load -- consolidate');
      await settle(engine);
      const consolidation = await runLoader(prefix, ['consolidate']);
      out(`  ${fmt(Number(consolidation.summary.rowsLoaded))} assignments from ${consolidation.summary.releaseIndicesBefore} release indices into 1 in ${fmt(Number(consolidation.summary.seconds), 1)} s (${fmt(Number(consolidation.summary.rowsLoaded) / Number(consolidation.summary.seconds))} rows/s, merge and seal included; peak RSS ${fmt(consolidation.peakRssMb)} MB)`);
      await settle(engine);
      let disk = await storage(engine, prefix);
      let lookups = await measureLookups(prefix, engine, rates, mixtures);
      rows.push(tableRow(`${fmt(disk.structureDocs)} / ${fmt(disk.assignmentDocs)}, consolidated`, `– | ${fmt(Number(consolidation.summary.rowsLoaded) / Number(consolidation.summary.seconds))} (consolidate)`, disk, lookups));
      out('\ncompounds index merged into one segment');
      const merging = process.hrtime.bigint();
      await mergeIntoOneSegment(engine, engine.names.compounds);
      out(`  in ${fmt(since(merging), 1)} s`);
      disk = await storage(engine, prefix);
      lookups = await measureLookups(prefix, engine, rates, mixtures);
      rows.push(tableRow(`${fmt(disk.structureDocs)} / ${fmt(disk.assignmentDocs)}, consolidated, compounds merged`, '– | –', disk, lookups));
    }
  } finally {
    if (rows.length > 0) {
      out('\n| structures / assignments | structures rows/s (loader/ceiling) | references rows/s (loader/ceiling) | bytes per structure / assignment | heap used MB | segments compounds / assignments (release indices) | by InChIKey: req/s, p50 / p99 ms; p50 / p99 at the fixed rate; at half its own peak | by sourceID | connectivity | connectivity of mixtures | structures per connectivity answer; of mixtures |');
      out('|---|---|---|---|---|---|---|---|---|---|---|');
      for (const row of rows) out(row);
    }
    if (!keep) {
      const deleted = await deleteIndicesByPrefix(config.ES_URL, prefix).catch(() => []);
      rmSync(folder, { recursive: true, force: true });
      out(`deleted ${deleted.length} indices (${prefix}-*) and ${folder}`);
    } else {
      out(`kept ${prefix}-* and ${folder}`);
    }
    await engine.close();
  }
}

main().catch((error) => {
  process.stderr.write(`bench:scale failed: ${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
