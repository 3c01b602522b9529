// Faults under load (issue 21): checking clients against the API while (1) one source is reloaded
// again and again, and (2) the engine is frozen (SIGSTOP) for a while, then thawed. Every answer is
// checked: right (200 with the expected record), wrong (200 without it), 503, or other (another
// status, no answer, or the client's own timeout). Prints numbers; asserts nothing.
//
//   npm run bench:chaos                                  # both experiments, the defaults below
//   npm run bench:chaos -- --clients 10 --reloads 9 --outage-seconds 10 --ids 20389
//   npm run bench:chaos -- --only reload                 # or --only outage
//   npm run bench:chaos -- --engine-timeout 1000ms       # ENGINE_TIMEOUT_MS of the API child
//
// The data: the ids of the shared data's molecules (../shared/data/molecules.tsv.gz: 20,389 ChEMBL
// ids first, then other sources' ids, prefixed with their source, up to 28,657), loaded as source 1
// under a fresh index prefix `bench-chaos-<random>`, next to the other six sources of the fixture
// dump (test/fixtures/dump without its source 1 rows). Two releases: all --ids, and all but every
// hundredth (those become obsolete, then current again); the clients look up the ids both hold, by
// InChIKey and by sourceID, round robin. The API runs in a child process, each reload is
// `npm run load -- source 1 <file>` in a child process. Everything created (indices, files) is
// deleted at the end, also on SIGINT; the engine is always thawed.
import { spawn, type ChildProcess } from 'node:child_process';
import { serveApi, startApiChild, stopApiChild } from './api-child';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { readConfig } from '../src/config';
import {
  answersDuring, CheckingClients, compoundLookups, EngineFreezer, enginePid, tally, type Answer, type CheckedLookup,
} from '../test/support/checking-clients';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { percentile } from './load-generator';

const repository = join(__dirname, '..');
const sharedMolecules = join(repository, '..', 'shared', 'data', 'molecules.tsv.gz');
const fixtureMolecules = join(repository, 'test', 'fixtures', 'molecules-fixture.tsv');
const fixtureDump = join(repository, 'test', 'fixtures', 'dump');

const out = (text: string): boolean => process.stdout.write(`${text}\n`);
const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-');

interface Options {
  clients: number;
  reloads: number;
  outageSeconds: number;
  ids: number;
  only?: 'reload' | 'outage';
  engineTimeout?: string;
  clientTimeoutMs: number;
  data: string;
}

function parseOptions(argv: string[]): Options {
  const options: Options = { clients: 10, reloads: 9, outageSeconds: 10, ids: 20_389, clientTimeoutMs: 30_000, data: existsSync(sharedMolecules) ? sharedMolecules : fixtureMolecules };
  const positive = (flag: string, raw: string | undefined): number => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} needs a positive integer, got "${raw ?? ''}"`);
    return value;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = (): string | undefined => argv[++i];
    if (flag === '--clients') options.clients = positive(flag, value());
    else if (flag === '--reloads') options.reloads = positive(flag, value());
    else if (flag === '--outage-seconds') options.outageSeconds = positive(flag, value());
    else if (flag === '--ids') options.ids = positive(flag, value());
    else if (flag === '--client-timeout-ms') options.clientTimeoutMs = positive(flag, value());
    else if (flag === '--engine-timeout') options.engineTimeout = value();
    else if (flag === '--data') options.data = value() ?? '';
    else if (flag === '--only') {
      const only = value();
      if (only !== 'reload' && only !== 'outage') throw new Error(`--only takes reload or outage, got "${only ?? ''}"`);
      options.only = only;
    } else throw new Error(`unknown option ${flag} (see the head of bench/chaos.ts)`);
  }
  return options;
}

// ---------------------------------------------------------------------------------------------
// The data

interface ReleaseRow { compoundId: string; inchi: string; standardInchiKey: string }

/** The first `count` molecules of the data file as ids of one source: ChEMBL ids as they are, others prefixed with their source. */
function readRecords(file: string, count: number): ReleaseRow[] {
  const bytes = readFileSync(file);
  const text = file.endsWith('.gz') ? gunzipSync(bytes).toString('utf8') : bytes.toString('utf8');
  const [header, ...lines] = text.split('\n').filter(Boolean);
  const columns = header.split('\t');
  const at = (name: string): number => {
    const i = columns.indexOf(name);
    if (i < 0) throw new Error(`${file} has no ${name} column`);
    return i;
  };
  const [source, id, inchi, key] = [at('source'), at('id'), at('std_inchi'), at('std_inchikey')];
  const rows = lines.map((line) => line.split('\t'));
  // ChEMBL first, so that a small --ids is all ChEMBL.
  rows.sort((a, b) => Number(b[source] === 'chembl') - Number(a[source] === 'chembl'));
  return rows.slice(0, count).map((row) => ({
    compoundId: row[source] === 'chembl' ? row[id] : `${row[source]}:${row[id]}`, inchi: row[inchi], standardInchiKey: row[key],
  }));
}

/**
 * The fixture dump without its source 1 rows: the other six sources are served from the dump's
 * index, so the all-sources alias that key lookups search spans that index and source 1's release,
 * as in a real deployment (a search across two indices can lose one of them and still answer).
 */
function writeDumpWithoutSource1(folder: string): string {
  mkdirSync(folder);
  for (const table of ['source.tsv.gz', 'structure.tsv.gz']) copyFileSync(join(fixtureDump, table), join(folder, table));
  const [header, ...rows] = gunzipSync(readFileSync(join(fixtureDump, 'reference.tsv.gz'))).toString('utf8').split('\n').filter(Boolean);
  writeFileSync(join(folder, 'reference.tsv.gz'), gzipSync(`${[header, ...rows.filter((row) => row.split('\t')[1] !== '1')].join('\n')}\n`));
  return folder;
}

function writeRelease(file: string, records: ReleaseRow[]): string {
  writeFileSync(file, `compound_id\tstandard_inchi\tstandard_inchikey\n${records.map((r) => `${r.compoundId}\t${r.inchi}\t${r.standardInchiKey}`).join('\n')}\n`);
  return file;
}

// ---------------------------------------------------------------------------------------------
// Child processes: the API, and each load


/** `npm run load -- <argv>` under `prefix` in a child process (tsx as a require hook: one process); resolves with its summary line. */
async function loadInChild(prefix: string, argv: string[], rejects: string): Promise<Record<string, unknown>> {
  const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), join(repository, 'loaders', 'cli.ts'), ...argv, '--no-progress', '--rejects', rejects], {
    env: { ...process.env, ES_INDEX_PREFIX: prefix }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  children.delete(child);
  const last = stdout.trim().split('\n').pop() ?? '';
  let summary: Record<string, unknown> = {};
  try {
    summary = JSON.parse(last) as Record<string, unknown>;
  } catch { /* no summary: the load failed before it */ }
  if (code !== 0) throw new Error(`load ${argv.join(' ')} exited with ${code}: ${String(summary.error ?? stderr.trim().split('\n').slice(-3).join(' | '))}`);
  return summary;
}

// ---------------------------------------------------------------------------------------------
// What is printed

/** The largest of `values` (which may be too many to spread into Math.max), or `none` when there are none. */
function largest(values: number[], none: number): number {
  return values.reduce((max, value) => (Number.isNaN(max) || value > max ? value : max), none);
}

function latencies(answers: Answer[]): { p50: number; p99: number; max: number } {
  const ms = answers.map((a) => a.ended - a.started).sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms[ms.length - 1] ?? NaN };
}

function report(label: string, answers: Answer[]): void {
  const t = tally(answers);
  const l = latencies(answers);
  out(`  ${label}: ${fmt(t.requests)} requests, ${fmt(t.right)} right, ${fmt(t.wrong)} wrong, ${fmt(t.unavailable)} 503 (${fmt(t.unavailableWithoutRetryAfter)} without Retry-After), ${fmt(t.errors)} other; latency p50 ${fmt(l.p50, 1)} ms, p99 ${fmt(l.p99, 1)} ms, max ${fmt(l.max, 1)} ms`);
}

function examples(answers: Answer[], verdict: 'wrong' | 'error', limit = 3): void {
  const found = answers.filter((a) => a.verdict === verdict);
  for (const answer of found.slice(0, limit)) out(`    ${verdict}: ${(answer.detail ?? '').slice(0, 300)}`);
  if (found.length > limit) out(`    ... and ${fmt(found.length - limit)} more`);
}

// ---------------------------------------------------------------------------------------------
// The experiments

async function reloadUnderLoad(url: string, lookups: CheckedLookup[], options: Options, prefix: string, releases: string[], rejects: string): Promise<void> {
  out(`\n(1) reload under load: ${options.clients} checking clients, ${options.reloads} reloads of source 1 alternating two releases`);
  const clients = new CheckingClients(url, lookups, { clients: options.clients, timeoutMs: options.clientTimeoutMs });
  const windows: { from: number; to: number; seconds: number; summary?: Record<string, unknown>; error?: string }[] = [];
  const begun = performance.now();
  clients.start();
  try {
    await sleep(2_000);
    for (let i = 0; i < options.reloads; i += 1) {
      const from = performance.now();
      const window: (typeof windows)[number] = { from, to: from, seconds: 0 };
      try {
        window.summary = await loadInChild(prefix, ['source', '1', releases[i % 2]], rejects);
      } catch (error) {
        window.error = (error as Error).message;
      }
      window.to = performance.now();
      window.seconds = (window.to - from) / 1000;
      windows.push(window);
    }
    await sleep(2_000);
  } finally {
    await clients.stop();
  }
  const answers = clients.answers;
  out(`  ${fmt((performance.now() - begun) / 1000, 1)} s in all; reloads took ${windows.map((w) => `${fmt(w.seconds, 1)}${w.error ? ' (failed)' : ''}`).join(', ')} s`);
  for (const [i, w] of windows.entries()) {
    const during = answersDuring(answers, w.from, w.to);
    const t = tally(during);
    out(`  reload ${i + 1} (${i % 2 === 0 ? 'all but every hundredth id' : 'all ids'}): ${fmt(t.requests)} requests in flight, ${fmt(t.wrong)} wrong, ${fmt(t.unavailable)} 503, ${fmt(t.errors)} other${w.error ? `; the load failed: ${w.error}` : ''}`);
  }
  const inReloads = answers.filter((a) => windows.some((w) => a.started <= w.to && a.ended >= w.from));
  const outside = answers.filter((a) => !windows.some((w) => a.started <= w.to && a.ended >= w.from));
  report('during reloads', inReloads);
  report('between reloads', outside);
  report('all', answers);
  examples(answers, 'wrong');
  examples(answers, 'error');
}

async function engineOutage(url: string, lookups: CheckedLookup[], options: Options, esUrl: string): Promise<void> {
  out(`\n(2) engine outage: ${options.clients} checking clients, the engine frozen (SIGSTOP) for ${options.outageSeconds} s, then thawed (SIGCONT)`);
  const engine = new EngineFreezer(await enginePid(esUrl));
  freezers.add(engine);
  const clients = new CheckingClients(url, lookups, { clients: options.clients, timeoutMs: options.clientTimeoutMs });
  clients.start();
  let frozenAt = 0;
  let thawedAt = 0;
  let observedUntil = 0;
  try {
    await sleep(3_000);
    frozenAt = performance.now();
    engine.freeze();
    try {
      await sleep(options.outageSeconds * 1000);
    } finally {
      engine.thaw();
      thawedAt = performance.now();
    }
    // Watch until answers have been right for 5 s in a row, 60 s at most.
    const latest = performance.now() + 60_000;
    for (;;) {
      await sleep(500);
      const now = performance.now();
      const lastBad = largest(clients.answers.filter((a) => a.ended > thawedAt && a.verdict !== 'right').map((a) => a.ended), thawedAt);
      if (now - lastBad >= 5_000 || now > latest) break;
    }
    observedUntil = performance.now();
  } finally {
    engine.thaw();
    freezers.delete(engine);
    await clients.stop();
  }
  const answers = clients.answers;
  const before = answers.filter((a) => a.ended < frozenAt);
  const inOutage = answersDuring(answers, frozenAt, thawedAt);
  const after = answers.filter((a) => a.started > thawedAt);
  report('before the freeze', before);
  report(`in flight while frozen (${options.outageSeconds} s)`, inOutage);
  report('sent after the thaw', after);
  const unavailable = answers.filter((a) => a.verdict === 'unavailable');
  const slowest503 = largest(unavailable.map((a) => a.ended - a.started), NaN);
  const firstUnavailable = unavailable.filter((a) => a.ended >= frozenAt).sort((a, b) => a.ended - b.ended)[0];
  out(`  503s: ${fmt(unavailable.length)}; slowest 503 ${fmt(slowest503, 0)} ms; first 503 ${firstUnavailable ? `${fmt(firstUnavailable.ended - frozenAt, 0)} ms after the freeze` : '-'}`);
  const firstRightAfterThaw = answers.filter((a) => a.verdict === 'right' && a.ended > thawedAt).sort((a, b) => a.ended - b.ended)[0];
  const firstRightSentAfterThaw = after.filter((a) => a.verdict === 'right').sort((a, b) => a.ended - b.ended)[0];
  const lastBad = answers.filter((a) => a.ended > thawedAt && a.verdict !== 'right').sort((a, b) => b.ended - a.ended)[0];
  const watched = `watched ${fmt((observedUntil - thawedAt) / 1000, 1)} s after the thaw`;
  // Steady: every answer right for the last 5 s watched, from the last answer that was not.
  const steady = !lastBad ? `every answer right from 0 s on (${watched})`
    : observedUntil - lastBad.ended >= 5_000 ? `every answer right from ${fmt((lastBad.ended - thawedAt) / 1000, 2)} s on (${watched})`
      : `not steady: answers still not right ${fmt((lastBad.ended - thawedAt) / 1000, 1)} s after the thaw (${watched})`;
  const seconds = (a: Answer | undefined): string => (a ? `${fmt((a.ended - thawedAt) / 1000, 2)} s` : 'none');
  out(`  recovery after SIGCONT: first 200 ${seconds(firstRightAfterThaw)}; first 200 to a request sent after SIGCONT ${seconds(firstRightSentAfterThaw)}; ${steady}`);
  report('all', answers);
  examples(answers, 'wrong');
  examples(answers, 'error');
}

// ---------------------------------------------------------------------------------------------

const children = new Set<ChildProcess>();
const freezers = new Set<EngineFreezer>();

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const config = readConfig();
  const prefix = `bench-chaos-${randomBytes(3).toString('hex')}`;
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-bench-chaos-'));
  let api: { child: ChildProcess; url: string } | undefined;
  let cleaned: Promise<void> | undefined;
  const cleanUp = (): Promise<void> => {
    cleaned ??= (async () => {
      for (const freezer of freezers) freezer.thaw();
      for (const child of children) child.kill('SIGKILL');
      if (api) await stopApiChild(api.child).catch(() => undefined);
      rmSync(folder, { recursive: true, force: true });
      const deleted = await deleteIndicesByPrefix(config.ES_URL, prefix).catch((error: Error) => {
        process.stderr.write(`could not delete the ${prefix}-* indices: ${error.message}\n`);
        return [];
      });
      out(`\ncleaned up: ${deleted.length} ${prefix}-* indices and ${folder} deleted`);
    })();
    return cleaned;
  };
  const interrupted = (signal: NodeJS.Signals): void => {
    process.stderr.write(`${signal}: thawing the engine and cleaning up\n`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.on('SIGINT', interrupted);
  process.on('SIGTERM', interrupted);
  try {
    const records = readRecords(options.data, options.ids);
    const releaseB = records.filter((_r, i) => i % 100 !== 0);
    const releases = [writeRelease(join(folder, 'release-b.tsv'), releaseB), writeRelease(join(folder, 'release-a.tsv'), records)];
    const lookups = compoundLookups(1, releaseB);
    out(`bench:chaos ${new Date().toISOString()}: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}, engine ${config.ES_URL}`);
    out(`data: ${fmt(records.length)} ids of ${options.data} as source 1 (${fmt(releaseB.length)} in both releases, ${fmt(lookups.length)} lookups by InChIKey and by sourceID), prefix ${prefix}`);
    out(`API child: ENGINE_TIMEOUT_MS ${options.engineTimeout ?? `${config.ENGINE_TIMEOUT_MS} ms (the default)`}; clients give up after ${fmt(options.clientTimeoutMs)} ms`);

    const rejects = join(folder, 'rejects.tsv');
    let started = performance.now();
    await loadInChild(prefix, ['dump', writeDumpWithoutSource1(join(folder, 'dump'))], rejects);
    const first = await loadInChild(prefix, ['source', '1', releases[1]], rejects);
    out(`loaded: the fixture dump's other six sources, then source 1 with ${fmt(Number(first.rowsLoaded))} ids (${fmt(Number(first.rowsRejected))} rejected), ${fmt((performance.now() - started) / 1000, 1)} s`);

    api = await startApiChild(__filename, { ES_INDEX_PREFIX: prefix, ...(options.engineTimeout ? { ENGINE_TIMEOUT_MS: options.engineTimeout } : {}) });
    started = performance.now();
    if (options.only !== 'outage') await reloadUnderLoad(api.url, lookups, options, prefix, releases, rejects);
    if (options.only !== 'reload') await engineOutage(api.url, lookups, options, config.ES_URL);
    out(`\n${fmt((performance.now() - started) / 1000, 1)} s of experiments`);
  } finally {
    await cleanUp();
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
  }
}

if (require.main === module) {
  const run = process.argv.includes('--serve') ? serveApi() : main();
  run.catch((error) => {
    process.stderr.write(`bench:chaos failed: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  });
}
