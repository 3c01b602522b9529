/**
 * `npm run map -- <file> --type <type> [--source N] [--to M] ...`: maps a local list of compounds
 * (or NDJSON queries) through the engine, as the batch endpoint would, and writes TSV or NDJSON.
 * The summary goes to stderr as one JSON line; progress too, on a terminal. Exit codes: 0 done,
 * 1 failed, 2 wrong usage.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import {
  commandFailed,
  formatUsage,
  readCommandConfig,
  oneOf,
  parseCommandLine,
  runCli,
  UsageError,
  wholeNumber,
  type CliSpec,
} from '../cli';
import { nameType, queryTypes, type LookupContext } from '../domain/lookup';
import { SourceCatalog } from '../domain/sources';
import { Engine } from '../engine/client';
import { StructureConverter } from '../toolkits/structures';
import { MoleculeToolkit } from '../toolkits/molecules';
import { runMap, type MapOptions } from './run';

export const mapCli = {
  name: 'map',
  usage: 'npm run map -- <file> [options]',
  commandsTitle: 'arguments',
  commands: [
    [
      '<file>',
      'one compound a line (or - for stdin); a .ndjson or .jsonl file holds queries as POST /api/v1/batch ' +
        'takes them, and needs no --type',
    ],
  ],
  positionals: true,
  options: {
    type: {
      type: 'string',
      value: 'T',
      help: 'what each line is: uci, inchi, inchikey, sourceID, smiles, name (smarts with --substructure)',
    },
    source: { type: 'string', value: 'N', help: 'with --type sourceID: the source the ids belong to' },
    to: { type: 'string', value: 'M', help: 'write only the records in source M' },
    connectivity: { type: 'boolean', help: 'a connectivity search for each line instead of a compounds lookup' },
    'search-components': { type: 'boolean', help: 'with --connectivity: salts and mixtures through their components' },
    similarity: { type: 'boolean', help: 'the stored structures like each line (Tanimoto), instead of a lookup' },
    threshold: { type: 'string', value: 'T', help: 'with --similarity: the lowest Tanimoto, 0.3 to 1 (default 0.7)' },
    substructure: { type: 'boolean', help: 'the stored structures that contain each line (a SMILES or SMARTS)' },
    limit: { type: 'string', value: 'N', help: 'with --similarity or --substructure: most hits a line (default 100)' },
    out: { type: 'string', value: 'F', help: 'write to F (default: stdout); F ending .ndjson or .jsonl writes NDJSON' },
    format: {
      type: 'string',
      value: 'tsv|ndjson',
      help: "TSV (a row per record found, default) or NDJSON (a line per query, as the API's)",
    },
    concurrency: { type: 'string', value: 'N', help: 'queries answered at a time (default BATCH_CONCURRENCY)' },
    progress: { type: 'boolean', help: 'a progress bar on stderr (the default on a terminal)' },
    'no-progress': { type: 'boolean', help: 'no progress bar on stderr' },
  },
} satisfies CliSpec;

/** The usage text of `npm run map`. */
export const usage = formatUsage(mapCli);

export { UsageError };

export interface ParsedMap {
  options: MapOptions;
  out?: string;
}

/** What a line of a list can be: every query type but a molfile, which spans lines, and a name. */
const lineTypes: string[] = [...queryTypes.filter((type) => type !== 'molfile'), nameType];
const ndjsonFile = (file: string): boolean => /\.(ndjson|jsonl)$/i.test(file);

/** Parses the command line (without node and the script); throws `UsageError` for what cannot run. */
export function parseMapArguments(argv: string[], defaultConcurrency: number): ParsedMap {
  const { values, positionals, lastOf } = parseCommandLine(mapCli, argv);
  const { type, out } = values;
  const sourceId = values.source === undefined ? undefined : wholeNumber(values.source, '--source');
  const to = values.to === undefined ? undefined : wholeNumber(values.to, '--to');
  const concurrency =
    values.concurrency === undefined ? defaultConcurrency : wholeNumber(values.concurrency, '--concurrency');
  const connectivity = values.connectivity ?? false;
  const ops = (['connectivity', 'similarity', 'substructure'] as const).filter((op) => values[op]);
  if (ops.length > 1) throw new UsageError(`--${ops[0]} and --${ops[1]} cannot go together: one search a line`);
  if (values.threshold !== undefined && !values.similarity) throw new UsageError('--threshold goes with --similarity');
  if (values.limit !== undefined && !values.similarity && !values.substructure)
    throw new UsageError('--limit goes with --similarity or --substructure');
  const threshold = values.threshold === undefined ? undefined : Number(values.threshold);
  if (threshold !== undefined && !(threshold >= 0.3 && threshold <= 1))
    throw new UsageError(`--threshold "${values.threshold}" must be a number from 0.3 to 1`);
  const limit = values.limit === undefined ? undefined : wholeNumber(values.limit, '--limit', 1, 1000);
  const searchComponents = values['search-components'] ?? false;
  const progress = (lastOf('progress', 'no-progress') ?? (process.stderr.isTTY ? 'progress' : '')) === 'progress';
  const [file, ...rest] = positionals;
  if (!file) throw new UsageError('the input file is missing');
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (file !== '-' && !existsSync(file)) throw new UsageError(`no file ${file}`);
  if (ndjsonFile(file) && type) {
    throw new UsageError(`${file} holds NDJSON queries, which name their own type: leave --type out`);
  }
  if (!ndjsonFile(file) && !type) {
    throw new UsageError(`--type is missing: what each line of ${file} is (${lineTypes.join(', ')})`);
  }
  if (type) oneOf(type, '--type', values.substructure ? ['smiles', 'smarts'] : lineTypes);
  if (type === nameType && ops.length > 0) {
    throw new UsageError(`--type name goes with a compounds lookup: a name cannot be given to --${ops[0]}`);
  }
  if (type === 'sourceID' && sourceId === undefined) {
    throw new UsageError('--type sourceID needs --source N: the source the ids belong to');
  }
  if (type !== 'sourceID' && sourceId !== undefined) throw new UsageError('--source goes with --type sourceID');
  if (searchComponents && !connectivity) throw new UsageError('--search-components goes with --connectivity');
  if (!type && ops.length > 0) {
    throw new UsageError(`--${ops[0]} applies to a list of compounds: NDJSON queries say it with "op"`);
  }
  const format = oneOf(values.format ?? (out && ndjsonFile(out) ? 'ndjson' : 'tsv'), '--format', ['tsv', 'ndjson']);
  return {
    out,
    options: {
      file,
      type,
      sourceId,
      to,
      op: ops[0] ?? 'compounds',
      searchComponents,
      ...(threshold !== undefined ? { threshold } : {}),
      ...(limit !== undefined ? { limit } : {}),
      format,
      concurrency,
      progress,
    },
  };
}

async function main(argv: string[]): Promise<void> {
  const config = readCommandConfig();
  const parsed = parseMapArguments(argv, config.BATCH_CONCURRENCY);
  const engine = new Engine(config, { serving: true });
  const structures = new StructureConverter(config.STRUCTURE_TIMEOUT_MS);
  const molecules = new MoleculeToolkit(1, config.SUBSTRUCTURE_TIMEOUT_MS + 5_000, config.SUBSTRUCTURE_KEPT_MOLECULES);
  const context: LookupContext = { engine, config, sources: new SourceCatalog(engine), structures, molecules };
  const output: Writable = parsed.out ? createWriteStream(parsed.out) : process.stdout;
  try {
    const summary = await runMap(context, parsed.options, output);
    if (parsed.out) {
      output.end();
      await once(output, 'finish');
    }
    const done = { status: 'done', file: parsed.options.file, out: parsed.out ?? 'stdout', ...summary };
    process.stderr.write(`${JSON.stringify(done)}\n`);
  } catch (error) {
    throw commandFailed('map', error);
  } finally {
    await structures.close();
    await molecules.close();
    await engine.close();
  }
}

if (require.main === module) runCli(mapCli, main);
