// Benchmark of the web pages on the demo data (examples/demo), one request at a time, as a chemist
// uses them, against a 50 ms p50. Loads the demo under BENCH_WEB_PREFIX (bench-web) when missing and
// deletes it after unless BENCH_KEEP=1; BENCH_REQUESTS (400) a page.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseArguments, runCommand } from '../loaders/cli';
import { deleteIndicesByPrefix } from '../scripts/engine';
import { fmt, openBench, out, repository, runBench, Sample, startApi } from './common';
import { percentile } from './load-generator';

const prefix = process.env.BENCH_WEB_PREFIX || 'bench-web';
const requests = Number(process.env.BENCH_REQUESTS || 400);
const demo = join(repository, 'examples', 'demo');
const goalMs = 50;

function demoRows(table: string): Row[] {
  const text = gunzipSync(readFileSync(join(demo, `${table}.tsv.gz`))).toString('utf8');
  const [header, ...lines] = text.split('\n').filter(Boolean);
  const columns = header.split('\t');
  return lines.map((line) => Object.fromEntries(line.split('\t').map((value, i) => [columns[i], value])));
}

/** `requests` rows drawn by the sample hash of `text(row)`. */
type Row = Record<string, string>;

function drawn(rows: Row[], text: (row: Row) => string): Row[] {
  const sample = new Sample<Row>(requests);
  for (const row of rows) sample.add(row, text(row));
  return sample.values;
}

interface Timed { p50: number; p99: number; failures: number; bytes: number }

async function time(url: string, paths: string[]): Promise<Timed> {
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
  const [p50, p99] = [percentile(latencies, 50), percentile(latencies, 99)];
  return { p50, p99, failures, bytes: Math.round(bytes / paths.length) };
}

async function main(): Promise<void> {
  const { config, engine } = await openBench('bench:web', prefix);
  const loaded = await engine.client.count({ index: engine.names.compounds }).then((r) => r.count, () => 0);
  await engine.close();
  if (loaded === 0) {
    out(`loading the demo dump under ${prefix}`);
    await runCommand(parseArguments(['dump', demo, '--no-progress', '--rejects', '/dev/null']), config);
  }
  const structures = demoRows('structure');
  const references = demoRows('reference');
  const chosen = drawn(structures, (row) => row.STANDARDINCHIKEY);
  const ids = drawn(references.filter((row) => row.ASSIGMENT !== '0'), (row) => `${row.SRC_ID}\t${row.SRC_COMPOUND_ID}`)
    .map((row) => `${row.SRC_ID}%3A${encodeURIComponent(row.SRC_COMPOUND_ID)}`);
  const api = await startApi({ ES_INDEX_PREFIX: prefix });
  try {
    const pages: [string, string[]][] = [
      ['/search?q={InChIKey}', chosen.map((row) => `/search?q=${row.STANDARDINCHIKEY}`)],
      ['/search?q={sourceId}:{id}', ids.map((id) => `/search?q=${id}`)],
      ['/compound/{uci}', chosen.map((row) => `/compound/${row.UCI}`)],
      ['/sources', Array(Math.min(requests, 100)).fill('/sources')],
    ];
    await time(api.url, pages.flatMap(([, paths]) => paths.slice(0, 20))); // warm up
    out(`\nweb pages on the demo data (${fmt(structures.length)} structures), one request at a time, `
      + `${requests} per page\n`);
    out('| page | p50 ms | p99 ms | p50 / 50 ms | mean bytes | failures |\n|---|---|---|---|---|---|');
    for (const [name, paths] of pages) {
      const m = await time(api.url, paths);
      out(`| ${name} | ${fmt(m.p50, 1)} | ${fmt(m.p99, 1)} | ${fmt(m.p50 / goalMs, 2)} | ${fmt(m.bytes)} `
        + `| ${m.failures} |`);
    }
  } finally {
    await api.stop();
    if (!process.env.BENCH_KEEP) await deleteIndicesByPrefix(config.ES_URL, prefix);
  }
}

runBench(module, 'bench:web', main);
