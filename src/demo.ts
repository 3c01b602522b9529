/**
 * `npm run demo`: what a newcomer runs on a fresh clone. Starts the local engine if none answers,
 * loads the bundled real sample (28,657 molecules, seven sources) if the indices are empty, serves
 * the API and prints the docs address and three example requests.
 */
import { join } from 'node:path';
import { readConfig } from './config';
import { Engine } from './engine/client';
import { hasAssignments } from './engine/lookups';
import { startServer } from './server';
import { log } from './log';
import { parseArguments, runCommand } from '../loaders/cli';
import { startEngine } from '../scripts/engine';

const sample = join(__dirname, '..', 'test', 'fixtures', 'demo');

async function main(): Promise<void> {
  const config = readConfig();
  await startEngine(config.ES_URL, config.ES_HEAP);
  const engine = new Engine(config);
  try {
    if (await hasAssignments(engine)) {
      log.info('the indices already hold data; not loading the sample', { indexPrefix: config.ES_INDEX_PREFIX });
    } else {
      log.info('loading the bundled sample (28,657 real molecules in seven sources)', { folder: sample });
      const summary = await runCommand(parseArguments(['dump', sample]), config);
      log.info('sample loaded', { rowsLoaded: summary.rowsLoaded, rowsRejected: summary.rowsRejected, seconds: summary.seconds });
    }
  } finally {
    await engine.close();
  }
  const { url, stop } = await startServer(config);
  const post = (body: object): string => `curl -s -X POST ${url}/api/v1/compounds -H 'Content-Type: application/json' -d '${JSON.stringify(body)}'`;
  process.stderr.write([
    '',
    `chemxref is running on ${url}`,
    `Interactive API documentation: ${url}/api/docs`,
    '',
    'Try:',
    `  ${post({ type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' })}`,
    `  ${post({ type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 })}`,
    `  curl -s -X POST ${url}/api/v1/connectivity -H 'Content-Type: application/json' -d '${JSON.stringify({ type: 'sourceID', compound: 'CHEMBL1511957', sourceID: 1, searchComponents: true })}'`,
    `  curl -s ${url}/legacy/rest/src_compound_id/CHEMBL112/1`,
    '',
    'Stop with Ctrl-C (the engine keeps running: npm run es:stop).',
    '',
  ].join('\n'));
  const shutdown = (): void => { stop().then(() => process.exit(0), () => process.exit(1)); };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((error: Error) => {
  log.error('the demo could not start', { error: error.message });
  process.exit(1);
});
