// Faults under load: checking clients look up source 1's ids while (1) the source is reloaded again
// and again, and (2) the engine is frozen (SIGSTOP), then thawed. Each answer is right, wrong (a 200
// without the record), 503, or other. Data: the fixture molecules' ids as source 1 beside
// test/fixtures/dump's six other sources, two releases (all ids; all but every hundredth).
//
//   npm run bench:chaos
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { fmt, localEnginePid, openBench, out, post, repository, runBench, runLoader, sleep, startApi } from './common';
import { percentile } from './load-generator';

const fixtures = join(repository, 'test', 'fixtures');
const [clients, reloads, outageSeconds] = [10, 9, 10];
/** The engine's pid while it is frozen: thawed on any exit. */
const frozen = { pid: 0 };

interface Lookup { body: object; compoundId: string; standardInchiKey: string }
interface ReleaseRow { compoundId: string; inchi: string; standardInchiKey: string }

/** The fixture molecules' 20,389 ChEMBL ids, as source 1's records. */
function readRecords(): ReleaseRow[] {
  const text = gunzipSync(readFileSync(join(fixtures, 'chemistry', 'molecules.tsv.gz'))).toString('utf8');
  // source, id, smiles, std_inchi, std_inchikey
  return text.split('\n').map((line) => line.split('\t')).filter((row) => row[0] === 'chembl')
    .map(([, compoundId, , inchi, standardInchiKey]) => ({ compoundId, inchi, standardInchiKey }));
}

/**
 * The fixture dump without its source 1 rows: the other six sources are served from the dump's
 * index, so the all-sources alias that key lookups search spans that index and source 1's release,
 * as in a real deployment (a search across two indices can lose one of them and still answer).
 */
function writeDumpWithoutSource1(folder: string): string {
  const dump = join(fixtures, 'dump');
  mkdirSync(folder);
  for (const table of ['source.tsv.gz', 'structure.tsv.gz']) copyFileSync(join(dump, table), join(folder, table));
  const rows = gunzipSync(readFileSync(join(dump, 'reference.tsv.gz'))).toString('utf8').split('\n').filter(Boolean);
  const kept = rows.filter((row, i) => i === 0 || row.split('\t')[1] !== '1');
  writeFileSync(join(folder, 'reference.tsv.gz'), gzipSync(`${kept.join('\n')}\n`));
  return folder;
}

function writeRelease(file: string, records: ReleaseRow[]): string {
  const rows = records.map((r) => `${r.compoundId}\t${r.inchi}\t${r.standardInchiKey}\n`);
  writeFileSync(file, `compound_id\tstandard_inchi\tstandard_inchikey\n${rows.join('')}`);
  return file;
}

type Verdict = 'right' | 'wrong' | 'unavailable' | 'error';
interface Answer { started: number; ended: number; verdict: Verdict; retryAfter: boolean; detail?: string }
type Compounds = { compounds?: { standardInchiKey?: string; sources?: { id?: number; compoundId?: string }[] }[] };

/** The verdict on one answer: right when it holds the lookup's structure with its record in source 1. */
function judge(lookup: Lookup, status: number, text: string): { verdict: Verdict; detail?: string } {
  if (status === 503) return { verdict: 'unavailable' };
  if (status !== 200) return { verdict: 'error', detail: `${status} ${text.slice(0, 200)}` };
  const compounds = (JSON.parse(text) as Compounds).compounds ?? [];
  const right = compounds.some((c) => c.standardInchiKey === lookup.standardInchiKey
    && (c.sources ?? []).some((s) => s.id === 1 && s.compoundId === lookup.compoundId));
  return right ? { verdict: 'right' }
    : { verdict: 'wrong', detail: `${JSON.stringify(lookup.body)}: ${text.slice(0, 300)}` };
}

/** `clients` loops sending the next lookup (round robin) until `stop()`, every answer judged and kept. */
function checkingClients(url: string, lookups: Lookup[]): { answers: Answer[]; stop: () => Promise<void> } {
  const answers: Answer[] = [];
  let [running, next] = [true, 0];
  const loop = async (): Promise<void> => {
    while (running) {
      const lookup = lookups[next++ % lookups.length];
      const started = performance.now();
      const answer = await post(`${url}/api/v1/compounds`, lookup.body, 'application/json', 30_000).then(
        async (r) => ({ retryAfter: r.headers.has('retry-after'), ...judge(lookup, r.status, await r.text()) }),
        (error: Error) => ({ verdict: 'error' as const, retryAfter: false, detail: error.message }));
      answers.push({ started, ended: performance.now(), ...answer });
      if (answer.verdict === 'unavailable' || answer.verdict === 'error') await sleep(100);
    }
  };
  const loops = Array.from({ length: clients }, loop);
  return { answers, stop: async () => { running = false; await Promise.all(loops); } };
}

function report(label: string, answers: Answer[]): void {
  const count = (verdict: Verdict): string => fmt(answers.filter((a) => a.verdict === verdict).length);
  const ms = answers.map((a) => a.ended - a.started).sort((a, b) => a - b);
  const noRetryAfter = answers.filter((a) => a.verdict === 'unavailable' && !a.retryAfter).length;
  out(`  ${label}: ${fmt(answers.length)} requests, ${count('right')} right, ${count('wrong')} wrong, `
    + `${count('unavailable')} 503 (${fmt(noRetryAfter)} without Retry-After), ${count('error')} other; `
    + `p50 ${fmt(percentile(ms, 50), 1)} ms, p99 ${fmt(percentile(ms, 99), 1)} ms, max ${fmt(ms.at(-1) ?? NaN, 1)} ms`);
  const shown = answers.filter((a) => a.verdict === 'wrong' || a.verdict === 'error').slice(0, 5);
  for (const answer of shown) out(`    ${answer.verdict}: ${(answer.detail ?? '').slice(0, 300)}`);
}

async function reloadUnderLoad(url: string, lookups: Lookup[], prefix: string, releases: string[]): Promise<void> {
  out(`\n(1) reload under load: ${clients} checking clients, ${reloads} reloads of source 1`);
  const checking = checkingClients(url, lookups);
  const windows: { from: number; to: number }[] = [];
  try {
    await sleep(2_000);
    for (let i = 0; i < reloads; i += 1) {
      const from = performance.now();
      await runLoader(prefix, ['source', '1', releases[i % 2], '--rejects', '/dev/null']);
      windows.push({ from, to: performance.now() });
    }
    await sleep(2_000);
  } finally {
    await checking.stop();
  }
  out(`  reloads took ${windows.map((w) => fmt((w.to - w.from) / 1000, 1)).join(', ')} s`);
  const inReloads = checking.answers.filter((a) => windows.some((w) => a.started <= w.to && a.ended >= w.from));
  report('during reloads', inReloads);
  report('between reloads', checking.answers.filter((a) => !inReloads.includes(a)));
}

async function engineOutage(url: string, lookups: Lookup[], enginePid: number): Promise<void> {
  out(`\n(2) engine outage: ${clients} checking clients, the engine frozen (SIGSTOP) for ${outageSeconds} s`);
  const checking = checkingClients(url, lookups);
  let [frozenAt, thawedAt] = [0, 0];
  try {
    await sleep(3_000);
    frozenAt = performance.now();
    frozen.pid = enginePid;
    process.kill(enginePid, 'SIGSTOP');
    await sleep(outageSeconds * 1000);
  } finally {
    process.kill(enginePid, 'SIGCONT');
    frozen.pid = 0;
    thawedAt = performance.now();
    await sleep(10_000);
    await checking.stop();
  }
  const answers = checking.answers;
  const inFlight = answers.filter((a) => a.started <= thawedAt && a.ended >= frozenAt);
  report(`in flight while frozen (${outageSeconds} s)`, inFlight);
  report('sent after the thaw', answers.filter((a) => a.started > thawedAt));
  // Answers are kept in the order they ended.
  const firstUnavailable = answers.find((a) => a.verdict === 'unavailable' && a.ended >= frozenAt);
  const firstRight = answers.find((a) => a.verdict === 'right' && a.ended > thawedAt);
  const lastBad = answers.filter((a) => a.ended > thawedAt && a.verdict !== 'right').pop();
  const after = (a: Answer | undefined): string => (a ? `${fmt((a.ended - thawedAt) / 1000, 2)} s` : 'none');
  const unavailable = firstUnavailable ? `${fmt(firstUnavailable.ended - frozenAt)} ms after the freeze` : '-';
  out(`  first 503 ${unavailable}; first 200 after SIGCONT ${after(firstRight)}; every answer right from `
    + `${lastBad ? after(lastBad) : '0 s'} on (watched for 10 s)`);
}

async function main(): Promise<void> {
  const prefix = `bench-chaos-${randomBytes(3).toString('hex')}`;
  const { config, engine } = await openBench('bench:chaos', prefix);
  const enginePid = await localEnginePid(engine);
  await engine.close();
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-bench-chaos-'));
  const thaw = (): void => void (frozen.pid && process.kill(frozen.pid, 'SIGCONT'));
  let api: Awaited<ReturnType<typeof startApi>> | undefined;
  const cleanUp = async (): Promise<void> => {
    thaw();
    await api?.stop().catch(() => undefined);
    rmSync(folder, { recursive: true, force: true });
    await deleteIndicesByPrefix(config.ES_URL, prefix).catch(() => []);
    out(`\ndeleted ${prefix}-* and ${folder}`);
  };
  // Also on SIGINT: the engine thawed, the indices deleted.
  const interrupted = (): void => void cleanUp().finally(() => process.exit(130));
  process.on('SIGINT', interrupted).on('SIGTERM', interrupted).on('exit', thaw);
  try {
    const records = readRecords();
    const both = records.filter((_r, i) => i % 100 !== 0);
    const releases = [writeRelease(join(folder, 'b.tsv'), both), writeRelease(join(folder, 'a.tsv'), records)];
    const lookups = both.flatMap((r) => [
      { body: { type: 'inchikey', compound: r.standardInchiKey }, ...r },
      { body: { type: 'sourceID', compound: r.compoundId, sourceID: 1 }, ...r },
    ]);
    await runLoader(prefix, ['dump', writeDumpWithoutSource1(join(folder, 'dump')), '--rejects', '/dev/null']);
    await runLoader(prefix, ['source', '1', releases[1], '--rejects', '/dev/null']);
    out(`${fmt(records.length)} ids in source 1 (${fmt(both.length)} in both releases) beside the fixture dump's six `
      + `other sources; the API's ENGINE_TIMEOUT_MS ${config.ENGINE_TIMEOUT_MS}`);
    api = await startApi({ ES_INDEX_PREFIX: prefix });
    await reloadUnderLoad(api.url, lookups, prefix, releases);
    await engineOutage(api.url, lookups, enginePid);
  } finally {
    await cleanUp();
    process.removeListener('SIGINT', interrupted).removeListener('SIGTERM', interrupted);
  }
}

runBench(module, 'bench:chaos', main);
