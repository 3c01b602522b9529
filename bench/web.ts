// Benchmark of the web pages (issue 24): how long the result page of a search takes, on the demo
// data (examples/demo: 28,359 real structures in seven sources), one request at a time, as a
// chemist uses it. The API runs in a child process; requests go through node's fetch. Prints p50
// and p99 per page against the 50 ms p50 goal.
//
// The demo dump is loaded with the real loader under BENCH_WEB_PREFIX (default bench-web) when it
// is not there yet, and deleted at the end unless BENCH_KEEP=1. BENCH_REQUESTS per page (400).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseArguments, runCommand } from '../loaders/cli';
import { readConfig } from '../src/config';
import { Engine } from '../src/engine/client';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { serveApi, startApiChild, stopApiChild } from './api-child';
import { percentile } from './load-generator';

const prefix = process.env.BENCH_WEB_PREFIX || 'bench-web';
const requests = Number(process.env.BENCH_REQUESTS || 400);
const demo = join(__dirname, '..', 'test', 'fixtures', 'demo');
const goalMs = 50;

function demoRows(table: string): Record<string, string>[] {
  const [header, ...lines] = gunzipSync(readFileSync(join(demo, `${table}.tsv.gz`))).toString('utf8').split('\n').filter(Boolean);
  const columns = header.split('\t');
  return lines.map((line) => Object.fromEntries(line.split('\t').map((value, i) => [columns[i], value])));
}

/** Every `step`th item of `items`, `count` of them. */
function spread<T>(items: T[], count: number): T[] {
  const step = Math.max(1, Math.floor(items.length / count));
  return items.filter((_item, i) => i % step === 0).slice(0, count);
}

async function time(url: string, paths: string[]): Promise<{ p50: number; p99: number; failures: number; bytes: number }> {
  const latencies: number[] = [];
  let failures = 0;
  let bytes = 0;
  for (const path of paths) {
    const began = process.hrtime.bigint();
    const response = await fetch(`${url}${path}`);
    const text = await response.text();
    latencies.push(Number(process.hrtime.bigint() - began) / 1e6);
    bytes += text.length;
    if (response.status !== 200) failures += 1;
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), failures, bytes: Math.round(bytes / paths.length) };
}

async function main(): Promise<void> {
  if (process.argv.includes('--serve')) return serveApi();
  const config = readConfig({ ...process.env, ES_INDEX_PREFIX: prefix });
  const engine = new Engine(config);
  const loaded = await engine.client.count({ index: engine.names.compounds }).then((r) => r.count, () => 0);
  await engine.close();
  if (loaded === 0) {
    process.stdout.write(`loading the demo dump under ${prefix}\n`);
    await runCommand(parseArguments(['dump', demo, '--no-progress', '--rejects', '/dev/null']), config);
  }
  const structures = demoRows('structure');
  const references = demoRows('reference');
  const keys = spread(structures, requests).map((row) => row.STANDARDINCHIKEY);
  const ucis = spread(structures, requests).map((row) => row.UCI);
  const ids = spread(references.filter((row) => row.ASSIGMENT !== '0'), requests).map((row) => `${row.SRC_ID}%3A${encodeURIComponent(row.SRC_COMPOUND_ID)}`);
  const { child, url } = await startApiChild(__filename, { ES_INDEX_PREFIX: prefix });
  try {
    const pages: [string, string[]][] = [
      ['/search?q={InChIKey}', keys.map((key) => `/search?q=${key}`)],
      ['/search?q={sourceId}:{id}', ids.map((id) => `/search?q=${id}`)],
      ['/compound/{uci}', ucis.map((uci) => `/compound/${uci}`)],
      ['/sources', Array(Math.min(requests, 100)).fill('/sources')],
    ];
    await time(url, pages.flatMap(([, paths]) => paths.slice(0, 20))); // warm up
    process.stdout.write(`\nweb pages on the demo data (${structures.length.toLocaleString('en')} structures), one request at a time, ${requests} per page\n\n`);
    process.stdout.write('| page | p50 ms | p99 ms | p50 / 50 ms goal | mean bytes | failures |\n|---|---|---|---|---|---|\n');
    for (const [name, paths] of pages) {
      const measured = await time(url, paths);
      process.stdout.write(`| ${name} | ${measured.p50.toFixed(1)} | ${measured.p99.toFixed(1)} | ${(measured.p50 / goalMs).toFixed(2)} | ${measured.bytes.toLocaleString('en')} | ${measured.failures} |\n`);
    }
  } finally {
    await stopApiChild(child);
    if (!process.env.BENCH_KEEP) await deleteIndicesByPrefix(config.ES_URL, prefix);
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
