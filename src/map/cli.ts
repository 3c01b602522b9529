/**
 * `npm run map -- <file> --type <type> [--source N] [--to M] ...`: maps a local list of compounds
 * (or NDJSON queries) through the engine, as the batch endpoint would, and writes TSV or NDJSON.
 * The summary goes to stderr as one JSON line; progress too, on a terminal. Exit codes: 0 done,
 * 1 failed, 2 wrong usage.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { ConfigError, readConfig } from '../config';
import { queryTypes, type LookupContext } from '../domain/lookup';
import { SourceCatalog } from '../domain/sources';
import { Engine } from '../engine/client';
import { EngineUnavailable, translateEngineError } from '../engine/errors';
import { StructureConverter } from '../toolkits/structures';
import { runMap, type MapOptions } from './run';

export const usage = `usage: npm run map -- <file> [options]
  <file>                   one compound a line (or - for stdin); a .ndjson or .jsonl file holds queries
                           as POST /api/v1/batch takes them, and needs no --type
  --type T                 what each line is: uci, inchi, inchikey, sourceID, smiles
  --source N               with --type sourceID: the source the ids belong to
  --to M                   write only the records in source M
  --connectivity           a connectivity search for each line instead of a compounds lookup
  --search-components      with --connectivity: salts and mixtures through their components
  --out F                  write to F (default: stdout); F ending .ndjson or .jsonl writes NDJSON
  --format tsv|ndjson      TSV (a row per record found, default) or NDJSON (a line per query, as the API's)
  --concurrency N          queries answered at a time (default BATCH_CONCURRENCY)
  --no-progress            no progress bar on stderr`;

export class UsageError extends Error {}

export interface ParsedMap { options: MapOptions; out?: string }

function whole(value: string | undefined, option: string): number {
  if (!value || !/^[0-9]+$/.test(value) || Number(value) < 1) throw new UsageError(`${option} needs a positive whole number, got "${value ?? ''}"`);
  return Number(value);
}

/** What a line of a list can be: every query type but a molfile, which spans lines. */
const lineTypes: string[] = queryTypes.filter((type) => type !== 'molfile');
const ndjsonFile = (file: string): boolean => /\.(ndjson|jsonl)$/i.test(file);

/** Parses the command line (without node and the script). */
export function parseMapArguments(argv: string[], defaultConcurrency: number): ParsedMap {
  const files: string[] = [];
  let type: string | undefined;
  let sourceId: number | undefined;
  let to: number | undefined;
  let out: string | undefined;
  let format: string | undefined;
  let connectivity = false;
  let searchComponents = false;
  let concurrency = defaultConcurrency;
  let progress = process.stderr.isTTY === true;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--type') type = argv[++i];
    else if (arg === '--source') sourceId = whole(argv[++i], arg);
    else if (arg === '--to') to = whole(argv[++i], arg);
    else if (arg === '--out') out = argv[++i];
    else if (arg === '--format') format = argv[++i];
    else if (arg === '--connectivity') connectivity = true;
    else if (arg === '--search-components') searchComponents = true;
    else if (arg === '--concurrency') concurrency = whole(argv[++i], arg);
    else if (arg === '--no-progress') progress = false;
    else if (arg === '--progress') progress = true;
    else if (arg === '--help' || arg === '-h') throw new UsageError('');
    else if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    else files.push(arg);
  }
  const [file, ...rest] = files;
  if (!file) throw new UsageError('the input file is missing');
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (file !== '-' && !existsSync(file)) throw new UsageError(`no file ${file}`);
  if (ndjsonFile(file) && type) throw new UsageError(`${file} holds NDJSON queries, which name their own type: leave --type out`);
  if (!ndjsonFile(file) && !type) throw new UsageError(`--type is missing: what each line of ${file} is (${lineTypes.join(', ')})`);
  if (type && !lineTypes.includes(type)) throw new UsageError(`--type must be one of ${lineTypes.join(', ')}, got "${type}"`);
  if (type === 'sourceID' && sourceId === undefined) throw new UsageError('--type sourceID needs --source N: the source the ids belong to');
  if (type !== 'sourceID' && sourceId !== undefined) throw new UsageError('--source goes with --type sourceID');
  if (searchComponents && !connectivity) throw new UsageError('--search-components goes with --connectivity');
  if (!type && (connectivity || searchComponents)) throw new UsageError('--connectivity applies to a list of compounds: NDJSON queries say it with "op"');
  const chosen = format ?? (out && ndjsonFile(out) ? 'ndjson' : 'tsv');
  if (chosen !== 'tsv' && chosen !== 'ndjson') throw new UsageError(`--format must be tsv or ndjson, got "${chosen}"`);
  return {
    out,
    options: { file, type, sourceId, to, op: connectivity ? 'connectivity' : 'compounds', searchComponents, format: chosen, concurrency, progress },
  };
}

async function main(): Promise<void> {
  let parsed: ParsedMap;
  let config: ReturnType<typeof readConfig>;
  try {
    config = readConfig();
    parsed = parseMapArguments(process.argv.slice(2), config.BATCH_CONCURRENCY);
  } catch (error) {
    const usageError = error instanceof UsageError;
    process.stderr.write(`${(error as Error).message ? `${(error as Error).message}\n` : ''}${usageError ? `${usage}\n` : ''}`);
    process.exit(2);
  }
  const engine = new Engine(config, { serving: true });
  const structures = new StructureConverter(config.STRUCTURE_TIMEOUT_MS);
  const context: LookupContext = { engine, config, sources: new SourceCatalog(engine), structures };
  const output: Writable = parsed.out ? createWriteStream(parsed.out) : process.stdout;
  try {
    const summary = await runMap(context, parsed.options, output);
    if (parsed.out) {
      output.end();
      await once(output, 'finish');
    }
    process.stderr.write(`${JSON.stringify({ status: 'done', file: parsed.options.file, out: parsed.out ?? 'stdout', ...summary })}\n`);
  } catch (error) {
    const translated = translateEngineError(error) as Error;
    const known = translated instanceof ConfigError || translated instanceof EngineUnavailable;
    process.stderr.write(`map failed: ${known ? translated.message : translated.stack ?? translated.message}\n`);
    process.exitCode = 1;
  } finally {
    await structures.close();
    await engine.close();
  }
}

if (require.main === module) void main();
