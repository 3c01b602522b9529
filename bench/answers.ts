// The API's answers to bench:api's sample, recorded, then compared with a recording made earlier:
// a change made for speed must not change one byte of an answer. Per key: compounds, connectivity,
// connectivity with searchComponents; per id: compounds. One NDJSON line a request, in sample order.
//
//   npm run bench:answers -- record /tmp/answers-before.ndjson
//   npm run bench:answers -- compare /tmp/answers-before.ndjson   # exit 1 and the first differences
import { readFileSync, writeFileSync } from 'node:fs';
import { fmt, openBench, out, post, runBench, since, startApi, UsageError } from './common';
import { apiPrefix, apiSamples, ensureLoaded } from './dataset';

const concurrency = 16;

interface Request {
  path: string;
  body: object;
}

function requestsOf(keys: string[], ids: { sourceId: number; compoundId: string }[]): Request[] {
  const [compounds, connectivity] = ['/api/v1/compounds', '/api/v1/connectivity'];
  return [
    ...keys.map((compound) => ({ path: compounds, body: { type: 'inchikey', compound } })),
    ...ids.map((i) => ({ path: compounds, body: { type: 'sourceID', compound: i.compoundId, sourceID: i.sourceId } })),
    ...keys.map((compound) => ({ path: connectivity, body: { type: 'inchikey', compound } })),
    ...keys.map((compound) => ({ path: connectivity, body: { type: 'inchikey', compound, searchComponents: true } })),
  ];
}

/** Every request's answer as one line, in the requests' order, `concurrency` at a time. */
async function answer(url: string, requests: Request[]): Promise<string[]> {
  const lines = new Array<string>(requests.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < requests.length) {
      const i = next++;
      const response = await post(`${url}${requests[i].path}`, requests[i].body);
      lines[i] = JSON.stringify({ request: requests[i], status: response.status, body: await response.json() });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return lines;
}

async function main(): Promise<void> {
  const [command, file] = process.argv.slice(2);
  if (!['record', 'compare'].includes(command) || !file) {
    throw new UsageError('usage: npm run bench:answers -- record|compare <file>');
  }
  const { config, engine } = await openBench('bench:answers', apiPrefix);
  let lines: string[];
  try {
    await ensureLoaded(engine, config);
    const { keys, ids } = await apiSamples();
    const api = await startApi({ ES_INDEX_PREFIX: apiPrefix });
    try {
      const started = process.hrtime.bigint();
      lines = await answer(api.url, requestsOf(keys, ids));
      out(`${lines.length} answers (${keys.length} keys × 3, ${ids.length} source ids), ${fmt(since(started), 1)} s`);
    } finally {
      await api.stop();
    }
  } finally {
    await engine.close();
  }
  if (command === 'record') {
    writeFileSync(file, `${lines.join('\n')}\n`);
    return out(`recorded in ${file}`);
  }
  const recorded = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const differing = lines.map((line, i) => i).filter((i) => lines[i] !== recorded[i]);
  if (recorded.length !== lines.length) out(`${file} holds ${recorded.length} answers, this run ${lines.length}`);
  for (const i of differing.slice(0, 5)) {
    out(`answer ${i + 1} differs:\n  recorded: ${(recorded[i] ?? '(none)').slice(0, 400)}`);
    out(`  now:      ${lines[i].slice(0, 400)}`);
  }
  const same = differing.length === 0 && recorded.length === lines.length;
  out(same ? `all ${lines.length} answers identical to ${file}` : `${differing.length} of ${lines.length} differ`);
  if (!same) process.exitCode = 1;
}

runBench(module, 'bench:answers', main);
