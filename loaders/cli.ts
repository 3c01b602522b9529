/**
 * `npm run load -- <command> ...`: loads UniChem dumps and source releases into Elasticsearch.
 * Prints one JSON summary line on stdout at the end; progress goes to stderr on a terminal.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, readConfig, type Config } from '../src/config';
import { deleteChangesOf } from '../src/engine/changes';
import { Engine } from '../src/engine/client';
import { EngineUnavailable, translateEngineError } from '../src/engine/errors';
import { LoadBusy, loadHistory, releaseLoadLock, takeLoadLock } from '../src/engine/loads';
import { ensureBaseIndices, pauseRefresh, resumeRefresh } from '../src/engine/schema';
import { ReleaseRefused } from './guard';
import { FileFormatError } from './read';
import { consolidateReleases } from './consolidate';
import { loadReferences } from './references';
import { removeSource } from './retire';
import { LoadRun, type LoadOptions } from './run';
import { loadSourceRelease } from './source-release';
import { loadSources } from './sources';
import { loadStructures } from './structures';
import { sweepInterruptedLoads, sweepOwnLeftovers } from './sweep';
import { UciBitset } from './uci-bitset';

export const usage = `usage: npm run load -- <command> [--dry-run] [--allow-shrink] [--wait] [--rejects <file>] [--no-progress]
  sources <file>                     source metadata: source.tsv(.gz), UniChem's source CSV, or a JSON array
  structures <structure.tsv(.gz)>    UCI, STANDARDINCHI, STANDARDINCHIKEY
  references <reference.tsv(.gz)>    UCI, SRC_ID, SRC_COMPOUND_ID, ASSIGMENT (replaces every source in the file)
  dump <folder>                      source, structure and reference tables of one UniChem dump, in that order
  source <sourceId> <file> [--id-property NAME] [--release N] [--release-date YYYY-MM-DD]
                                     one source's own release: TSV, CSV, JSON, JSON Lines (InChI and/or key,
                                     or SMILES), or SDF (id from the title line or the data item NAME);
                                     --release names the release published (default: the last one + 1),
                                     --release-date dates it (default: the day of the load)
  remove-source <sourceId>           retire a source: its ids become obsolete, its metadata stays
  consolidate                        serve every source from one release index again (after many reloads:
                                     each reload adds an index that every lookup searches)
  history [--limit N]                past loads, most recent first
  doctor                             find loads that were killed and sweep what they left (release indices,
                                     locks, structures only they created, paused refresh, expired previous releases)
options:
  --dry-run                          validate and count, write nothing; says whether the release would be refused
  --allow-shrink                     publish a release even if it loads 0 rows, drops more than MAX_RELEASE_DROP of
                                     a source's current ids or rejects more than MAX_REJECT_RATIO of its rows
  --wait                             wait for another load of the same source to end instead of failing at once`;

export class UsageError extends Error {}

interface Parsed { command: string; args: string[]; options: LoadOptions; idProperty?: string; limit: number; wait?: boolean }

export function parseArguments(argv: string[]): Parsed {
  const args: string[] = [];
  const options: LoadOptions = { dryRun: false };
  let idProperty: string | undefined;
  let limit = 20;
  let wait = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    if (arg === '--dry-run') options.dryRun = true;
    else if (arg === '--no-progress') options.progress = false;
    else if (arg === '--allow-shrink') options.allowShrink = true;
    else if (arg === '--wait') wait = true;
    else if (arg === '--progress') options.progress = true;
    else if (arg === '--rejects') options.rejectsFile = value();
    else if (arg === '--id-property') idProperty = value();
    else if (arg === '--release') options.release = { ...options.release, number: releaseNumberArgument(value()) };
    else if (arg === '--release-date') options.release = { ...options.release, date: releaseDateArgument(value()) };
    else if (arg === '--limit') limit = Number(value());
    else if (arg === '--help' || arg === '-h') throw new UsageError('');
    else if (arg.startsWith('--')) throw new UsageError(`unknown option ${arg}`);
    else args.push(arg);
  }
  const [command, ...rest] = args;
  if (!command) throw new UsageError('no command given');
  if (options.release && command !== 'source') throw new UsageError('--release and --release-date name the release of one source: they go with `source <sourceId> <file>` (a dump\'s source table gives each source\'s release)');
  return { command, args: rest, options, idProperty, limit, wait };
}

function releaseNumberArgument(value: string): string {
  const number = value.trim();
  if (number === '' || number.length > 64 || /[\u0000-\u001f\u007f]/.test(number)) throw new UsageError(`--release "${value}" is not a release name (1 to 64 printable characters, e.g. 35 or 2025_01)`);
  return number;
}

function releaseDateArgument(value: string): string {
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim());
  const parsed = date ? new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]))) : undefined;
  if (!date || !parsed || parsed.getUTCMonth() !== Number(date[2]) - 1 || parsed.getUTCDate() !== Number(date[3])) {
    throw new UsageError(`--release-date "${value}" is not a date written YYYY-MM-DD (e.g. 2025-01-10)`);
  }
  return parsed.toISOString();
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

/**
 * Runs one load step with its own record, holding the load lock `lockKey` (`source-<id>`, `all`)
 * when it replaces sources; returns its summary. A step that fails or is refused sweeps what it
 * wrote (its release index, structures only it created) before it reports.
 */
async function step(
  engine: Engine, config: Config, command: string, file: string | null, options: LoadOptions & { lockKey?: string; wait?: boolean },
  work: (run: LoadRun) => Promise<void>, extra: object = {},
): Promise<Record<string, unknown>> {
  const run = new LoadRun(engine, config, command, file, options);
  const locked = options.lockKey && !options.dryRun ? options.lockKey : undefined;
  // The record first: another load judges a lock by its holder's record and heartbeat.
  await run.begin(extra);
  try {
    if (locked) await takeLoadLock(engine, locked, run, options.wait, (message) => process.stderr.write(`${message}\n`));
    await work(run);
    return await run.finish('done');
  } catch (error) {
    const translated = translateEngineError(error);
    const message = (translated as Error).message;
    if (!options.dryRun && !(translated instanceof EngineUnavailable) && !(translated instanceof LoadBusy)) {
      run.details.structuresRemoved = await sweepOwnLeftovers(engine, run.loadId).catch(() => undefined);
      // Its changes were never published: none may look like a completed load's.
      await deleteChangesOf(engine, run.loadId).catch(() => undefined);
    }
    const status = translated instanceof ReleaseRefused ? 'refused' : 'failed';
    const summary = await run.finish(status, message).catch(() => ({ command, status, error: message }));
    throw Object.assign(translated as Error, { summary });
  } finally {
    if (locked) await releaseLoadLock(engine, locked, run.loadId).catch(() => undefined);
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
    if (command === 'doctor') {
      await ensureBaseIndices(engine);
      return { command, status: 'done', ...await sweepInterruptedLoads(engine, config) };
    }
    if (writes) {
      await ensureBaseIndices(engine);
      const swept = await sweepInterruptedLoads(engine, config);
      for (const load of swept.interruptedLoads) process.stderr.write(`load ${load.loadId} (${load.command}) was interrupted (${load.why}): marked failed and swept\n`);
      if (swept.releaseIndicesRemoved.length > 0) process.stderr.write(`removed ${swept.releaseIndicesRemoved.length} release index(es) left by an interrupted load: ${swept.releaseIndicesRemoved.join(', ')}\n`);
      if (swept.structuresRemoved > 0) process.stderr.write(`removed ${swept.structuresRemoved} structure(s) that only interrupted loads had created\n`);
      if (swept.note) process.stderr.write(`${swept.note}\n`);
    }
    const locking = (lockKey: string): LoadOptions & { lockKey: string; wait?: boolean } => ({ ...options, lockKey, wait: parsed.wait });
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
        return await step(engine, config, command, file, locking('all'), (run) => loadReferences(run, file));
      }
      case 'dump': {
        const files = dumpFiles(fileArgument(args[0], 'dump folder'));
        const dryRun = options.dryRun ? { ucis: new UciBitset(), sourceIds: new Set<number>() } : undefined;
        const parts = [
          await step(engine, config, 'sources', files.sources, options, (run) => loadSources(run, files.sources, dryRun)),
          await withPausedRefresh(() => step(engine, config, 'structures', files.structures, options, (run) => loadStructures(run, files.structures, dryRun))),
        ];
        try {
          parts.push(await step(engine, config, 'references', files.references, locking('all'), (run) => loadReferences(run, files.references, dryRun)));
        } catch (error) {
          // A refused or failed reference table leaves no new structure of the dump behind either.
          if (writes) await sweepOwnLeftovers(engine, String(parts[1].loadId)).catch(() => undefined);
          throw error;
        }
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
        return await withPausedRefresh(() => step(engine, config, command, file, locking(`source-${sourceId}`),
          (run) => loadSourceRelease(run, sourceId, file, { idProperty: parsed.idProperty }), { sourceId, sourceIds: [sourceId] }));
      }
      case 'remove-source': {
        const sourceId = sourceIdArgument(args[0]);
        return await step(engine, config, command, null, locking(`source-${sourceId}`), (run) => removeSource(run, sourceId), { sourceId, sourceIds: [sourceId] });
      }
      case 'consolidate':
        return await step(engine, config, command, null, locking('all'), consolidateReleases);
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
    if (translated instanceof ReleaseRefused) {
      process.stderr.write(`load refused: ${translated.message}\n`);
      process.exit(3);
    }
    const known = translated instanceof FileFormatError || translated instanceof ConfigError || translated instanceof EngineUnavailable || translated instanceof LoadBusy;
    process.stderr.write(`load failed: ${known ? translated.message : translated.stack ?? translated.message}\n`);
    process.exit(1);
  }
}

if (require.main === module) void main();
