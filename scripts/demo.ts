/**
 * `npm run demo`: what a newcomer runs on a fresh clone. Starts the local engine if none answers on
 * ES_URL (in a session of its own: Ctrl-C stops the demo, not the engine), loads the bundled real
 * sample if chemxref's indices are empty, serves the API on PORT and prints the docs address and
 * example requests. An engine that already answers and holds indices of others is not written to
 * unless `--force` says so. Exit codes: 1 could not start, 2 wrong usage or an engine of others.
 */
import { join } from 'node:path';
import { CliExit, parseCommandLine, runCli, type CliSpec } from '../src/cli';
import { readConfig, type Config } from '../src/config';
import { Engine } from '../src/engine/client';
import { indicesOfOthers } from '../src/engine/health';
import { hasAssignments } from '../src/engine/lookups';
import { fingerprintlessLine, holdingsLine, holdingsOf, type Holdings } from '../src/domain/holdings';
import { startServer } from '../src/server';
import { log } from '../src/log';
import { parseArguments, runCommand } from '../loaders/cli';
import { startEngine } from './engine';

const sample = join(__dirname, '..', 'examples', 'demo');

export const demoCli = {
  name: 'demo',
  usage: 'npm run demo [-- options]',
  options: {
    force: { type: 'boolean', help: 'load the sample into an engine that holds indices of others, beside them' },
  },
  notes: 'Reads PORT, ES_URL, ES_HEAP and ES_INDEX_PREFIX from the environment.',
} satisfies CliSpec;

const shellSafe = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * The command that stops the engine the demo starts on ES_URL: the demo starts one node, so a
 * command run with another ES_URL or ES_NODES in the environment must say which, or it would stop
 * another engine (or none).
 */
export function esStopCommand(config: Pick<Config, 'ES_URL' | 'ES_NODES'>): string {
  const esUrl = shellSafe.test(config.ES_URL) ? config.ES_URL : `'${config.ES_URL.replace(/'/g, `'\\''`)}'`;
  const env = [
    ...(config.ES_URL === readConfig({}).ES_URL ? [] : [`ES_URL=${esUrl}`]),
    ...(config.ES_NODES === 1 ? [] : ['ES_NODES=1']),
  ];
  return [...env, 'npm run es:stop'].join(' ');
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseCommandLine(demoCli, argv);
  try {
    await demo(values.force ?? false);
  } catch (error) {
    if (error instanceof CliExit) throw error;
    log.error('the demo could not start', { error: (error as Error).message });
    throw new CliExit(1);
  }
}

async function demo(force: boolean): Promise<void> {
  const config = readConfig();
  const { reused } = await startEngine(config.ES_URL, config.ES_HEAP);
  const engine = new Engine(config);
  let holdings: Holdings;
  try {
    const others = reused ? await indicesOfOthers(engine) : [];
    if (others.length > 0 && !force) {
      const named = `${others.slice(0, 5).join(', ')}${others.length > 5 ? `, and ${others.length - 5} more` : ''}`;
      log.error(
        `the Elasticsearch on ${config.ES_URL} holds indices that are not chemxref's (${named}): the demo ` +
          'writes nothing there. Give it an engine of its own (ES_URL=http://127.0.0.1:9250 npm run demo starts ' +
          `one on that port), or run \`npm run demo -- --force\` to add its ${config.ES_INDEX_PREFIX}-* indices ` +
          'beside them',
      );
      throw new CliExit(2);
    }
    if (await hasAssignments(engine)) {
      log.info('the indices already hold data; not loading the sample', { indexPrefix: config.ES_INDEX_PREFIX });
    } else {
      // 28,657 molecules and 139 approved drugs: 28,437 distinct structures (molecules with one
      // Standard InChI are one structure) and 29,092 distinct assignments in eight sources, in
      // 57,538 rows (one reference row repeats another).
      // The load ends by computing the fingerprints of its structures, for similarity and substructure searches.
      log.info(
        'loading the bundled sample: 28,657 real molecules and 139 approved drugs (28,437 distinct ' +
          'structures, 29,092 assignments in eight sources), and the fingerprints of its structures ' +
          '(which takes longer than the load)',
        { folder: sample },
      );
      const summary = await runCommand(parseArguments(['dump', sample]), config);
      const fingerprints = summary.fingerprints as Record<string, unknown> | undefined;
      log.info('sample loaded', {
        rowsRead: summary.rowsRead,
        rowsLoaded: summary.rowsLoaded,
        rowsRejected: summary.rowsRejected,
        seconds: summary.seconds,
        fingerprints: fingerprints?.rowsLoaded,
        fingerprintSeconds: fingerprints?.seconds,
      });
    }
    holdings = await holdingsOf(engine);
  } finally {
    await engine.close();
  }
  const { url, stop } = await startServer(config);
  const post = (body: object): string =>
    `curl -s -X POST ${url}/api/v1/compounds -H 'Content-Type: application/json' -d '${JSON.stringify(body)}'`;
  process.stderr.write(
    [
      '',
      `chemxref is running on ${url}, on the Elasticsearch of ${config.ES_URL} (indices ${config.ES_INDEX_PREFIX}-*).`,
      holdingsLine(holdings),
      ...[fingerprintlessLine(holdings)].filter((line) => line !== undefined),
      `Search page: ${url}/ (aspirin: ${url}/search?q=aspirin)`,
      `Interactive API documentation: ${url}/api/docs`,
      '',
      'Try:',
      `  ${post({ type: 'name', compound: 'aspirin' })}`,
      `  ${post({ type: 'inchikey', compound: 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N' })}`,
      `  ${post({ type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 })}`,
      `  curl -s -X POST ${url}/api/v1/connectivity -H 'Content-Type: ` +
        `application/json' -d '${JSON.stringify({ type: 'sourceID', compound: 'CHEMBL1511957', sourceID: 1, searchComponents: true })}'`,
      `  curl -s ${url}/legacy/rest/src_compound_id/CHEMBL112/1`,
      '',
      `Stop with Ctrl-C (the engine keeps running: ${esStopCommand(config)}).`,
      '',
    ].join('\n'),
  );
  const shutdown = (): void => {
    const hint = `the engine on ${config.ES_URL} keeps running (${esStopCommand(config)} stops it)`;
    process.stderr.write(`\nthe demo stops; ${hint}\n`);
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

if (require.main === module) runCli(demoCli, main);
