/**
 * `npm run export -- <command> <folder>`: whole-source mapping files and table dumps, written from
 * the live indices. Prints one JSON summary line on stdout; progress goes to stderr on a terminal.
 * Exit codes: 0 done, 1 failed, 2 wrong usage.
 */
import { ConfigError, readConfig } from '../config';
import { Engine } from '../engine/client';
import { EngineUnavailable, translateEngineError } from '../engine/errors';
import { exportChanges, type ChangesExportOptions } from './changes';
import { ExportRequestError, runExport, type ExportCommand, type ExportOptions } from './run';

export const usage = `usage: npm run export -- <command> <folder> [--no-progress]
  mappings <folder> [--from N] [--to M]   wholeSourceMapping/src_id{N}/src{N}src{M}.txt.gz for every ordered
                                          pair of sources (or those from N and/or to M), current assignments
  dump <folder>                           source.tsv.gz, structure.tsv.gz, reference.tsv.gz (UniChem's dump
                                          formats, obsolete assignments included), loadable by \`npm run load -- dump\`
  changes <sourceId> [folder] --since <loadId>
                                          changes-src{N}-since-{loadId}.ndjson (in the folder, default the current
                                          one): the net change of the source's current assignments since that load,
                                          one JSON line a change, as GET /api/v1/sources/{N}/changes with NDJSON
Every mappings or dump export writes README.txt: date, the source releases it reflects, row counts.`;

export class UsageError extends Error {}

export type ParsedExport =
  | { command: ExportCommand; options: ExportOptions }
  | { command: 'changes'; options: ChangesExportOptions };

function sourceId(value: string | undefined, option: string): number {
  if (!value || !/^[0-9]+$/.test(value) || Number(value) < 1) throw new UsageError(`${option} needs a source id (a positive integer), got "${value ?? ''}"`);
  return Number(value);
}

/** Parses the command line (without node and the script). */
export function parseExportArguments(argv: string[]): ParsedExport {
  const args: string[] = [];
  const options: Partial<ExportOptions> = {};
  let since: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--since') {
      since = argv[++i];
      if (!since?.trim()) throw new UsageError('--since needs a load id (see GET /api/v1/sources/{sourceID}/loads or `npm run load -- history`)');
    } else if (arg === '--from') options.from = sourceId(argv[++i], arg);
    else if (arg === '--to') options.to = sourceId(argv[++i], arg);
    else if (arg === '--no-progress') options.progress = false;
    else if (arg === '--progress') options.progress = true;
    else if (arg === '--help' || arg === '-h') throw new UsageError('');
    else if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    else args.push(arg);
  }
  if (args[0] === 'changes') {
    const [, source, folder = '.', ...extra] = args;
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (since === undefined) throw new UsageError('changes needs --since <loadId>: the load to tell the changes since');
    if (options.from !== undefined || options.to !== undefined) throw new UsageError('--from and --to apply to mappings only');
    return { command: 'changes', options: { sourceId: sourceId(source, 'changes'), since: since.trim(), folder } };
  }
  if (since !== undefined) throw new UsageError('--since applies to changes only');
  const [command, folder, ...rest] = args;
  if (!command) throw new UsageError('no command given');
  if (command !== 'mappings' && command !== 'dump') throw new UsageError(`unknown command "${command}"`);
  if (!folder) throw new UsageError('the output folder is missing');
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (command === 'dump' && (options.from !== undefined || options.to !== undefined)) throw new UsageError('--from and --to apply to mappings only');
  return { command, options: { ...options, folder } };
}

async function main(): Promise<void> {
  let parsed: ParsedExport;
  try {
    parsed = parseExportArguments(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message ? `${(error as Error).message}\n` : ''}${usage}\n`);
    process.exit(2);
  }
  let engine: Engine | undefined;
  try {
    engine = new Engine(readConfig());
    const summary = parsed.command === 'changes' ? await exportChanges(engine, parsed.options) : await runExport(engine, parsed.command, parsed.options);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (error) {
    const translated = translateEngineError(error) as Error;
    const message = translated.message;
    process.stdout.write(`${JSON.stringify({ command: parsed.command, folder: parsed.options.folder, status: 'failed', error: message })}\n`);
    if (translated instanceof ExportRequestError) {
      process.stderr.write(`export failed: ${message}\n`);
      process.exit(2);
    }
    const known = translated instanceof ConfigError || translated instanceof EngineUnavailable;
    process.stderr.write(`export failed: ${known ? message : translated.stack ?? message}\n`);
    process.exit(1);
  } finally {
    await engine?.close();
  }
}

if (require.main === module) void main();
