/**
 * `npm run export -- <command> <folder>`: whole-source mapping files and table dumps, written from
 * the live indices. Prints one JSON summary line on stdout; progress goes to stderr on a terminal.
 * Exit codes: 0 done, 1 failed, 2 wrong usage.
 */
import { CliExit, commandFailed, formatUsage, parseCommandLine, runCli, UsageError, type CliSpec } from '../cli';
import { readConfig } from '../config';
import { Engine } from '../engine/client';
import { translateEngineError } from '../engine/errors';
import { exportChanges, type ChangesExportOptions } from './changes';
import { ExportRequestError, runExport, type ExportCommand, type ExportOptions } from './run';

export const exportCli = {
  name: 'export',
  usage: 'npm run export -- <command> <folder> [options]',
  commands: [
    [
      'mappings <folder>',
      'wholeSourceMapping/src_id{N}/src{N}src{M}.txt.gz for every ordered pair of sources ' +
        '(or those from N and/or to M), current assignments',
    ],
    [
      'dump <folder>',
      "source.tsv.gz, structure.tsv.gz, reference.tsv.gz (UniChem's dump formats, obsolete " +
        'assignments included), loadable by `npm run load -- dump`',
    ],
    [
      'changes <sourceId> [folder]',
      'changes-src{N}-since-{loadId}.ndjson (in the folder, default the current ' +
        "one): the net change of the source's current assignments since the load --since names, one JSON line a " +
        'change, as GET /api/v1/sources/{N}/changes with NDJSON',
    ],
  ],
  positionals: true,
  options: {
    from: { type: 'string', value: 'N', help: 'with mappings: only the files from source N' },
    to: { type: 'string', value: 'M', help: 'with mappings: only the files to source M' },
    since: { type: 'string', value: '<loadId>', help: 'with changes (needed): the load to tell the changes since' },
    progress: { type: 'boolean', help: 'a progress line on stderr (the default on a terminal)' },
    'no-progress': { type: 'boolean', help: 'no progress line on stderr' },
  },
  notes: 'Every mappings or dump export writes README.txt: date, the source releases it reflects, row counts.',
} satisfies CliSpec;

/** The usage text of `npm run export`. */
export const usage = formatUsage(exportCli);

export { UsageError };

export type ParsedExport =
  { command: ExportCommand; options: ExportOptions } | { command: 'changes'; options: ChangesExportOptions };

function sourceId(value: string | undefined, option: string): number {
  if (!value || !/^[0-9]+$/.test(value) || Number(value) < 1) {
    throw new UsageError(`${option} needs a source id (a positive integer), got "${value ?? ''}"`);
  }
  return Number(value);
}

/** Parses the command line (without node and the script); throws `UsageError` for what cannot run. */
export function parseExportArguments(argv: string[]): ParsedExport {
  const { values, positionals: args, lastOf } = parseCommandLine(exportCli, argv);
  const options: Partial<ExportOptions> = {};
  if (values.from !== undefined) options.from = sourceId(values.from, '--from');
  if (values.to !== undefined) options.to = sourceId(values.to, '--to');
  const progress = lastOf('progress', 'no-progress');
  if (progress) options.progress = progress === 'progress';
  const since = values.since;
  if (since !== undefined && !since.trim()) {
    throw new UsageError(
      '--since needs a load id ' + '(see GET /api/v1/sources/{sourceID}/loads or `npm run load -- history`)',
    );
  }
  if (args[0] === 'changes') {
    const [, source, folder = '.', ...extra] = args;
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (since === undefined) throw new UsageError('changes needs --since <loadId>: the load to tell the changes since');
    if (options.from !== undefined || options.to !== undefined) {
      throw new UsageError('--from and --to apply to mappings only');
    }
    return { command: 'changes', options: { sourceId: sourceId(source, 'changes'), since: since.trim(), folder } };
  }
  if (since !== undefined) throw new UsageError('--since applies to changes only');
  const [command, folder, ...rest] = args;
  if (!command) throw new UsageError('no command given');
  if (command !== 'mappings' && command !== 'dump') throw new UsageError(`unknown command "${command}"`);
  if (!folder) throw new UsageError('the output folder is missing');
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (command === 'dump' && (options.from !== undefined || options.to !== undefined)) {
    throw new UsageError('--from and --to apply to mappings only');
  }
  return { command, options: { ...options, folder } };
}

async function main(argv: string[]): Promise<void> {
  const parsed = parseExportArguments(argv);
  let engine: Engine | undefined;
  try {
    engine = new Engine(readConfig());
    const summary =
      parsed.command === 'changes'
        ? await exportChanges(engine, parsed.options)
        : await runExport(engine, parsed.command, parsed.options);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (error) {
    const translated = translateEngineError(error) as Error;
    const message = translated.message;
    const summary = { command: parsed.command, folder: parsed.options.folder, status: 'failed', error: message };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    // A source or load the request names that is not known is the user's to fix, as a wrong usage is.
    if (translated instanceof ExportRequestError) throw new CliExit(2, `export failed: ${message}`);
    throw commandFailed('export', translated);
  } finally {
    await engine?.close();
  }
}

if (require.main === module) runCli(exportCli, main);
