/**
 * `npm run load -- <command> ...`: loads UniChem dumps and source releases into Elasticsearch.
 * Prints one JSON summary line on stdout at the end; progress goes to stderr on a terminal.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, readConfig, type Config } from '../src/config';
import { Engine } from '../src/engine/client';
import { EngineUnavailable, translateEngineError } from '../src/engine/errors';
import { indicesOfRunningLoads, loadHistory } from '../src/engine/loads';
import { ensureBaseIndices, pauseRefresh, removeAllLeftoverReleases, resumeRefresh } from '../src/engine/schema';
import { FileFormatError } from './read';
import { loadReferences } from './references';
import { removeSource } from './retire';
import { LoadRun, type LoadOptions } from './run';
import { loadSourceRelease } from './source-release';
import { loadSources } from './sources';
import { loadStructures } from './structures';
import { UciBitset } from './uci-bitset';

export const usage = `usage: npm run load -- <command> [--dry-run] [--rejects <file>] [--no-progress]
  sources <file>                     source metadata: source.tsv(.gz), UniChem's source CSV, or a JSON array
  structures <structure.tsv(.gz)>    UCI, STANDARDINCHI, STANDARDINCHIKEY
  references <reference.tsv(.gz)>    UCI, SRC_ID, SRC_COMPOUND_ID, ASSIGMENT (replaces every source in the file)
  dump <folder>                      source, structure and reference tables of one UniChem dump, in that order
  source <sourceId> <file> [--id-property NAME]
                                     one source's own release: TSV, CSV, JSON, JSON Lines (InChI and/or key,
                                     or SMILES), or SDF (id from the title line or the data item NAME)
  remove-source <sourceId>           retire a source: its ids become obsolete, its metadata stays
  history [--limit N]                past loads, most recent first`;

export class UsageError extends Error {}

interface Parsed { command: string; args: string[]; options: LoadOptions; idProperty?: string; limit: number }

export function parseArguments(argv: string[]): Parsed {
  const args: string[] = [];
  const options: LoadOptions = { dryRun: false };
  let idProperty: string | undefined;
  let limit = 20;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    if (arg === '--dry-run') options.dryRun = true;
    else if (arg === '--no-progress') options.progress = false;
    else if (arg === '--progress') options.progress = true;
    else if (arg === '--rejects') options.rejectsFile = value();
    else if (arg === '--id-property') idProperty = value();
    else if (arg === '--limit') limit = Number(value());
    else if (arg === '--help' || arg === '-h') throw new UsageError('');
    else if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    else args.push(arg);
  }
  const [command, ...rest] = args;
  if (!command) throw new UsageError('no command given');
  return { command, args: rest, options, idProperty, limit };
}

function sourceIdArgument(value: string | undefined): number {
  if (!value || !/^[0-9]+$/.test(value) || Number(value) < 1) throw new UsageError(`"${value ?? ''}" is not a source id (a positive integer)`);
  return Number(value);
}

function fileArgument(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`the ${what} file is missing`);
  return value;
}

/** The three tables of a dump folder, by UniChem's names (gzip or plain). */
export function dumpFiles(folder: string): { sources: string; structures: string; references: string } {
  if (!existsSync(folder)) throw new FileFormatError(`${folder}: no such folder`);
  const names = readdirSync(folder);
  const find = (table: string): string => {
    const name = [`${table}.tsv.gz`, `${table}.tsv`, `${table}.csv`, `${table}.json`].find((candidate) => names.includes(candidate));
    if (!name) throw new FileFormatError(`${folder} has no ${table}.tsv(.gz): a UniChem dump holds source, structure and reference tables`);
    return join(folder, name);
  };
  return { sources: find('source'), structures: find('structure'), references: find('reference') };
}

/** Runs one load step with its own record; returns its summary. */
async function step(engine: Engine, config: Config, command: string, file: string | null, options: LoadOptions, work: (run: LoadRun) => Promise<void>, extra: object = {}): Promise<Record<string, unknown>> {
  const run = new LoadRun(engine, config, command, file, options);
  await run.begin(extra);
  try {
    await work(run);
    return await run.finish('done');
  } catch (error) {
    const translated = translateEngineError(error);
    const message = (translated as Error).message;
    const summary = await run.finish('failed', message).catch(() => ({ command, status: 'failed', error: message }));
    throw Object.assign(translated as Error, { summary });
  }
}

/** Runs a parsed command; resolves with the summary object. */
export async function runCommand(parsed: Parsed, config: Config): Promise<Record<string, unknown>> {
  const engine = new Engine(config);
  const { command, args, options } = parsed;
  try {
    if (command === 'history') {
      const loads = await loadHistory(engine, parsed.limit);
      return { command, loads };
    }
    const writes = !options.dryRun;
    if (writes) {
      await ensureBaseIndices(engine);
      const removed = await removeAllLeftoverReleases(engine, await indicesOfRunningLoads(engine));
      if (removed.length > 0) process.stderr.write(`removed ${removed.length} release index(es) left by an interrupted load: ${removed.join(', ')}\n`);
    }
    const compounds = engine.names.compounds;
    const withPausedRefresh = async <T>(work: () => Promise<T>): Promise<T> => {
      if (!writes) return work();
      await pauseRefresh(engine, compounds);
      try {
        return await work();
      } finally {
        await resumeRefresh(engine, compounds, 'compounds');
      }
    };
    switch (command) {
      case 'sources': {
        const file = fileArgument(args[0], 'source table');
        return await step(engine, config, command, file, options, (run) => loadSources(run, file));
      }
      case 'structures': {
        const file = fileArgument(args[0], 'structure table');
        return await withPausedRefresh(() => step(engine, config, command, file, options, (run) => loadStructures(run, file)));
      }
      case 'references': {
        const file = fileArgument(args[0], 'reference table');
        return await step(engine, config, command, file, options, (run) => loadReferences(run, file));
      }
      case 'dump': {
        const files = dumpFiles(fileArgument(args[0], 'dump folder'));
        const dryRun = options.dryRun ? { ucis: new UciBitset(), sourceIds: new Set<number>() } : undefined;
        const parts = [
          await step(engine, config, 'sources', files.sources, options, (run) => loadSources(run, files.sources, dryRun)),
          await withPausedRefresh(() => step(engine, config, 'structures', files.structures, options, (run) => loadStructures(run, files.structures, dryRun))),
          await step(engine, config, 'references', files.references, options, (run) => loadReferences(run, files.references, dryRun)),
        ];
        const total = (key: string): number => parts.reduce((sum, part) => sum + Number(part[key] ?? 0), 0);
        const rejectedByReason: Record<string, number> = {};
        for (const part of parts) for (const [reason, n] of Object.entries(part.rejectedByReason as Record<string, number>)) rejectedByReason[reason] = (rejectedByReason[reason] ?? 0) + n;
        return {
          command, folder: args[0], status: 'done', dryRun: options.dryRun,
          rowsRead: total('rowsRead'), rowsLoaded: total('rowsLoaded'), rowsRejected: total('rowsRejected'), rejectedByReason,
          seconds: Math.round(total('seconds') * 100) / 100, steps: parts,
        };
      }
      case 'source': {
        const sourceId = sourceIdArgument(args[0]);
        const file = fileArgument(args[1], 'release');
        return await withPausedRefresh(() => step(engine, config, command, file, options,
          (run) => loadSourceRelease(run, sourceId, file, { idProperty: parsed.idProperty }), { sourceId }));
      }
      case 'remove-source': {
        const sourceId = sourceIdArgument(args[0]);
        return await step(engine, config, command, null, options, (run) => removeSource(run, sourceId), { sourceId });
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await engine.close();
  }
}

async function main(): Promise<void> {
  let parsed: Parsed;
  try {
    parsed = parseArguments(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message ? `${(error as Error).message}\n` : ''}${usage}\n`);
    process.exit(2);
  }
  try {
    const summary = await runCommand(parsed, readConfig());
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (error) {
    const translated = translateEngineError(error) as Error & { summary?: object };
    if (translated instanceof UsageError) {
      process.stderr.write(`${translated.message}\n${usage}\n`);
      process.exit(2);
    }
    if (translated.summary) process.stdout.write(`${JSON.stringify(translated.summary)}\n`);
    const known = translated instanceof FileFormatError || translated instanceof ConfigError || translated instanceof EngineUnavailable;
    process.stderr.write(`load failed: ${known ? translated.message : translated.stack ?? translated.message}\n`);
    process.exit(1);
  }
}

if (require.main === module) void main();
