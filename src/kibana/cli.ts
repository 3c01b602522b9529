/**
 * `npm run kibana:setup`: waits for the Kibana of KIBANA_URL, fits the saved objects of
 * kibana/chemxref.ndjson to this installation (ES_INDEX_PREFIX, the live sources' names, links to
 * CHEMXREF_URL) and imports them, overwriting earlier copies; prints what it installed. Run it again
 * after loading new sources, so their names show. Exit codes: 0 done, 1 failed, 2 wrong usage.
 */
import { CliExit, parseCommandLine, runCli, type CliSpec } from '../cli';
import { readConfig } from '../config';
import { Engine } from '../engine/client';
import { translateEngineError } from '../engine/errors';
import { allSources } from '../engine/sources';
import type { SourceDocument } from '../engine/documents';
import { fitSavedObjects, importSavedObjects, readSavedObjects, waitForKibana } from './setup';

export const kibanaSetupCli = {
  name: 'kibana:setup',
  usage: 'npm run kibana:setup [-- options]',
  options: {},
  notes:
    'Reads KIBANA_URL, KIBANA_SPACE, KIBANA_USERNAME, KIBANA_PASSWORD, KIBANA_WAIT, ES_URL, ES_INDEX_PREFIX and ' +
    'CHEMXREF_URL from the environment.',
} satisfies CliSpec;

async function main(argv: string[]): Promise<void> {
  parseCommandLine(kibanaSetupCli, argv);
  try {
    await setup();
  } catch (error) {
    throw new CliExit(1, `kibana:setup failed: ${(error as Error).message}`);
  }
}

async function setup(): Promise<void> {
  const config = readConfig();
  const target = {
    url: config.KIBANA_URL,
    space: config.KIBANA_SPACE,
    username: config.KIBANA_USERNAME,
    password: config.KIBANA_PASSWORD,
    waitMs: config.KIBANA_WAIT,
  };
  const engine = new Engine(config);
  let sources: SourceDocument[];
  try {
    sources = await allSources(engine).catch((error) => {
      if (/index_not_found/.test(String(error))) return [];
      throw translateEngineError(error);
    });
  } finally {
    await engine.close();
  }
  if (sources.length === 0)
    process.stderr.write(
      `no source is loaded under ${config.ES_INDEX_PREFIX} yet: source ids ` +
        `show as numbers until kibana:setup runs again after a load\n`,
    );
  await waitForKibana(target, (message) => process.stderr.write(`${message}\n`));
  const objects = fitSavedObjects(readSavedObjects(), {
    prefix: config.ES_INDEX_PREFIX,
    chemxrefUrl: config.CHEMXREF_URL,
    sources,
  });
  const installed = await importSavedObjects(target, objects);
  for (const object of installed) process.stdout.write(`installed ${object.type} "${object.title}"\n`);
  process.stdout.write(
    `${installed.length} saved objects in ${config.KIBANA_URL}` +
      `${config.KIBANA_SPACE ? ` (space ${config.KIBANA_SPACE})` : ''}, for the indices ` +
      `${config.ES_INDEX_PREFIX}-*, ${sources.length} source names, links to ${config.CHEMXREF_URL}\n`,
  );
}

if (require.main === module) runCli(kibanaSetupCli, main);
