// The answers of the API to the `bench:api` sample (5,000 real InChIKeys and 5,000 real source ids
// of the 500k set in `bench-api-*`), recorded to a file and compared with a recording made earlier:
// a change made for speed must not change one byte of an answer. For each key: POST /compounds by
// InChIKey, POST /connectivity by InChIKey, with and without searchComponents; for each id: POST
// /compounds by sourceID. One NDJSON line per request ({request, status, body}), in sample order.
//
//   npm run bench:answers -- record /tmp/answers-before.ndjson
//   npm run bench:answers -- compare /tmp/answers-before.ndjson   # exit 1 and the first differences when any
//
// Loads bench-api-* first when it is missing (as `npm run bench:api` does).
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { readConfig, type Config } from '../src/config';
import { Engine } from '../src/engine/client';
import { startApiChild, serveApi, stopApiChild } from './api-child';
import { ensureLoaded, prefix, samples } from './api';

const concurrency = 16;
const out = (text: string): boolean => process.stdout.write(`${text}\n`);

interface Request { path: string; body: object }

function requestsOf(keys: string[], ids: { sourceId: number; compoundId: string }[]): Request[] {
  return [
    ...keys.map((compound) => ({ path: '/api/v1/compounds', body: { type: 'inchikey', compound } })),
    ...ids.map((id) => ({ path: '/api/v1/compounds', body: { type: 'sourceID', compound: id.compoundId, sourceID: id.sourceId } })),
    ...keys.map((compound) => ({ path: '/api/v1/connectivity', body: { type: 'inchikey', compound } })),
    ...keys.map((compound) => ({ path: '/api/v1/connectivity', body: { type: 'inchikey', compound, searchComponents: true } })),
  ];
}

/** Every request's answer as one line, in the requests' order, `concurrency` at a time. */
async function answer(url: string, requests: Request[]): Promise<string[]> {
  const lines = new Array<string>(requests.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < requests.length) {
      const i = next++;
      const response = await fetch(`${url}${requests[i].path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(requests[i].body) });
      lines[i] = JSON.stringify({ request: requests[i], status: response.status, body: await response.json() });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return lines;
}

async function readLines(file: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) if (line) lines.push(line);
  return lines;
}

async function main(): Promise<void> {
  const [command, file] = process.argv.slice(2);
  if (!['record', 'compare'].includes(command) || !file) {
    process.stderr.write('usage: npm run bench:answers -- record|compare <file>\n');
    process.exit(2);
  }
  const config: Config = { ...readConfig(), ES_INDEX_PREFIX: prefix };
  const engine = new Engine(config);
  let lines: string[];
  try {
    await ensureLoaded(engine, config);
    const { keys, ids } = await samples();
    const requests = requestsOf(keys, ids);
    const { child, url } = await startApiChild(__filename, { ES_INDEX_PREFIX: prefix }, process.execArgv);
    try {
      const started = Date.now();
      lines = await answer(url, requests);
      out(`${lines.length} answers (${keys.length} keys × 3, ${ids.length} source ids) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } finally {
      await stopApiChild(child);
    }
  } finally {
    await engine.close();
  }
  if (command === 'record') {
    const stream = createWriteStream(file);
    for (const line of lines) stream.write(`${line}\n`);
    await new Promise((resolve) => stream.end(resolve));
    out(`recorded in ${file}`);
    return;
  }
  const recorded = await readLines(file);
  const differing = lines.map((line, i) => i).filter((i) => lines[i] !== recorded[i]);
  if (recorded.length !== lines.length) out(`${file} holds ${recorded.length} answers, this run ${lines.length}`);
  for (const i of differing.slice(0, 5)) out(`answer ${i + 1} differs:\n  recorded: ${(recorded[i] ?? '(none)').slice(0, 400)}\n  now:      ${lines[i].slice(0, 400)}`);
  out(differing.length === 0 && recorded.length === lines.length ? `all ${lines.length} answers identical to ${file}` : `${differing.length} of ${lines.length} answers differ from ${file}`);
  if (differing.length > 0 || recorded.length !== lines.length) process.exitCode = 1;
}

if (require.main === module) {
  const run = process.argv.includes('--serve') ? serveApi() : main();
  run.catch((error) => {
    process.stderr.write(`bench:answers failed: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  });
}
