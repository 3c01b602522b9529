/**
 * `npm run load -- <command> ...`: loads UniChem dumps and source releases into Elasticsearch.
 * Prints one JSON summary line on stdout at the end; progress goes to stderr on a terminal.
 * Exit codes: 0 done, 1 failed (or a rollback refused: no previous release), 2 wrong usage, 3 a release the guard
 * refused (guard.ts).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CliExit, formatUsage, parseCommandLine, runCli, UsageError, wholeNumber, type CliSpec } from '../src/cli';
import { ConfigError, readConfig, type Config } from '../src/config';
import { deleteChangesOf } from '../src/engine/changes';
import { Engine } from '../src/engine/client';
import { ensureDiskRoom, explainDiskFull } from '../src/engine/disk';
import { EngineDiskFull, EngineUnavailable, translateEngineError } from '../src/engine/errors';
import { currentLayout, LayoutMismatch, recordLayout, requireCurrentLayout } from '../src/engine/layout';
import { LoadBusy, loadHistory, releaseLoadLock, takeLoadLock } from '../src/engine/loads';
import { ensureBaseIndices, pauseRefresh, resumeRefresh } from '../src/engine/schema';
import { ReleaseRefused } from './guard';
import { FileFormatError } from './read';
import { consolidateReleases } from './consolidate';
import { loadFingerprints } from './fingerprints';
import { loadReferences } from './references';
import { removeSource } from './retire';
import { releasesToSwap, rollbackSource, RollbackRefused } from './rollback';
import { LoadRun, type LoadOptions } from './run';
import { loadSourceRelease } from './source-release';
import { loadSources } from './sources';
import { loadStructures } from './structures';
import { sweepInterruptedLoads, sweepOwnLeftovers } from './sweep';
import { UciBitset } from './uci-bitset';

export const loadCli = {
  name: 'load',
  usage: 'npm run load -- <command> [options]',
  commands: [
    ['sources <file>', "source metadata: source.tsv(.gz), UniChem's source CSV, or a JSON array"],
    ['structures <structure.tsv(.gz)>', 'UCI, STANDARDINCHI, STANDARDINCHIKEY'],
    ['references <reference.tsv(.gz)>', 'UCI, SRC_ID, SRC_COMPOUND_ID, ASSIGMENT (replaces every source in the file)'],
    ['dump <folder>', 'source, structure and reference tables of one UniChem dump, in that order'],
    [
      'source <sourceId> <file>',
      "one source's own release: TSV, CSV, JSON, JSON Lines (InChI and/or key, or SMILES), " +
        'or SDF (id from the title line or the data item --id-property names)',
    ],
    ['remove-source <sourceId>', 'retire a source: its ids become obsolete, its metadata stays'],
    [
      'rollback <sourceId>',
      "serve the source's previous release again, with its release number, date and UCI count (the release " +
        'undone becomes the previous one: rollback again to undo the rollback)',
    ],
    [
      'consolidate',
      'serve every source from one release index again (after many reloads: each reload adds an index ' +
        'that every lookup searches)',
    ],
    [
      'fingerprints',
      'compute the fingerprints of the structures that have none yet (for similarity and substructure ' +
        'searches), on every core; run again, it goes on where it stopped. A dump, structures or source ' +
        'load that adds structures ends with this, unless --no-fingerprints',
    ],
    ['history', 'past loads, most recent first'],
    [
      'doctor',
      'find loads that were killed and sweep what they left (release indices, locks, structures only they ' +
        'created, paused refresh, expired previous releases)',
    ],
  ],
  positionals: true,
  options: {
    'dry-run': {
      type: 'boolean',
      help: 'validate and count, write nothing; says whether the release would be refused (rollback: what would change)',
    },
    'allow-shrink': {
      type: 'boolean',
      help:
        "publish a release even if it loads 0 rows, drops more than MAX_RELEASE_DROP of a source's current ids " +
        'or rejects more than MAX_REJECT_RATIO of its rows',
    },
    wait: { type: 'boolean', help: 'wait for another load of the same source to end instead of failing at once' },
    rejects: {
      type: 'string',
      value: '<file>',
      help:
        'write the rejected rows there (default: rejects/<loadId>-<command>.tsv); those of the fingerprints ' +
        'a load ends with go beside it (r.tsv: r-fingerprints.tsv)',
    },
    'id-property': { type: 'string', value: 'NAME', help: 'with source: the SDF data item that holds the compound id' },
    release: {
      type: 'string',
      value: 'N',
      help: 'with source: the name of the release published (default: the last one + 1)',
    },
    'release-date': {
      type: 'string',
      value: 'YYYY-MM-DD',
      help: "with source: the release's date (default: the day of the load)",
    },
    'no-fingerprints': {
      type: 'boolean',
      help:
        'with dump, structures and source: leave the fingerprints of the structures the load adds to ' +
        '`load -- fingerprints` (similarity and substructure searches do not find them until then)',
    },
    limit: { type: 'string', value: 'N', help: 'with history: how many loads (default 20)' },
    progress: { type: 'boolean', help: 'a progress bar on stderr (the default on a terminal)' },
    'no-progress': { type: 'boolean', help: 'no progress on stderr, neither a bar nor JSON progress lines' },
  },
} satisfies CliSpec;

/** The usage text of `npm run load`. */
export const usage = formatUsage(loadCli);

export { UsageError };

/** The arguments each command takes after its name: a source id, or the file (or folder) named. */
const commandArguments: Record<string, string[]> = {
  sources: ['source table file'],
  structures: ['structure table file'],
  references: ['reference table file'],
  dump: ['dump folder'],
  source: ['sourceId', 'release file'],
  'remove-source': ['sourceId'],
  rollback: ['sourceId'],
  consolidate: [],
  fingerprints: [],
  history: [],
  doctor: [],
};

/** The commands whose loads add structures, and so end by computing their fingerprints. */
const addingStructures = new Set(['dump', 'structures', 'source']);

interface Parsed {
  command: string;
  args: string[];
  options: LoadOptions;
  idProperty?: string;
  limit: number;
  wait?: boolean;
  /** A load that adds structures computes their fingerprints (false: --no-fingerprints). */
  fingerprints: boolean;
}

/** Parses the command line (without node and the script); throws `UsageError` for what cannot run. */
export function parseArguments(argv: string[]): Parsed {
  const { values, positionals, lastOf } = parseCommandLine(loadCli, argv);
  const options: LoadOptions = { dryRun: values['dry-run'] ?? false };
  const progress = lastOf('progress', 'no-progress');
  if (progress) options.progress = progress === 'progress';
  if (values['allow-shrink']) options.allowShrink = true;
  if (values.rejects !== undefined) options.rejectsFile = values.rejects;
  if (values.release !== undefined) options.release = { number: releaseNumberArgument(values.release) };
  if (values['release-date'] !== undefined) {
    options.release = { ...options.release, date: releaseDateArgument(values['release-date']) };
  }
  const limit = values.limit === undefined ? 20 : wholeNumber(values.limit, '--limit', 0, 10_000);
  const [command, ...args] = positionals;
  if (!command) throw new UsageError('no command given');
  if (!Object.hasOwn(commandArguments, command)) throw new UsageError(`unknown command "${command}"`);
  const expected = commandArguments[command];
  expected.forEach((what, i) => (what === 'sourceId' ? sourceIdArgument(args[i]) : fileArgument(args[i], what)));
  if (args.length > expected.length) throw new UsageError(`unexpected argument "${args[expected.length]}"`);
  if (options.release && command !== 'source') {
    throw new UsageError(
      '--release and --release-date name the release of one source: they go with ' +
        "`source <sourceId> <file>` (a dump's source table gives each source's release)",
    );
  }
  const fingerprints = !values['no-fingerprints'];
  if (!fingerprints && !addingStructures.has(command)) {
    throw new UsageError(
      '--no-fingerprints goes with the loads that add structures: `dump`, `structures` and `source`',
    );
  }
  return { command, args, options, idProperty: values['id-property'], limit, wait: values.wait ?? false, fingerprints };
}

function releaseNumberArgument(value: string): string {
  const number = value.trim();
  if (number === '' || number.length > 64 || [...number].some((c) => c < ' ' || c === '\u007f')) {
    throw new UsageError(
      `--release "${value}" is not a release name (1 to 64 printable characters, ` + 'e.g. 35 or 2025_01)',
    );
  }
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
  if (!value || !/^[0-9]+$/.test(value) || Number(value) < 1)
    throw new UsageError(`"${value ?? ''}" is not a source id (a positive integer)`);
  return Number(value);
}

function fileArgument(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`the ${what} is missing`);
  return value;
}

/** The three tables of a dump folder, by UniChem's names (gzip or plain). */
export function dumpFiles(folder: string): { sources: string; structures: string; references: string } {
  if (!existsSync(folder)) throw new FileFormatError(`${folder}: no such folder`);
  const names = readdirSync(folder);
  const find = (table: string): string => {
    const name = [`${table}.tsv.gz`, `${table}.tsv`, `${table}.csv`, `${table}.json`].find((candidate) =>
      names.includes(candidate),
    );
    if (!name)
      throw new FileFormatError(
        `${folder} has no ${table}.tsv(.gz): a UniChem dump holds source, structure and reference tables`,
      );
    return join(folder, name);
  };
  return { sources: find('source'), structures: find('structure'), references: find('reference') };
}

/** What a load stopped by a full disk leaves: what its message says after the disk's figures. */
const wroteNothing = "This load wrote nothing: the served releases and the API's answers are unchanged.";
const publishedNothing =
  "This load published nothing: the served releases and the API's answers are unchanged, and the " +
  'release index it was writing is deleted.';

/**
 * Runs one load step with its own record, holding the load lock `lockKey` (`source-<id>`, `all`)
 * when it replaces sources; returns its summary. A step that fails or is refused sweeps what it
 * wrote (its release index, structures only it created) before it reports.
 */
async function step(
  engine: Engine,
  config: Config,
  command: string,
  file: string | null,
  options: LoadOptions & { lockKey?: string; wait?: boolean },
  work: (run: LoadRun) => Promise<void>,
  extra: object = {},
): Promise<Record<string, unknown>> {
  const run = new LoadRun(engine, config, command, file, options);
  const locked = options.lockKey && !options.dryRun ? options.lockKey : undefined;
  // The record first: another load judges a lock by its holder's record and heartbeat.
  await run.begin(extra);
  try {
    if (locked)
      await takeLoadLock(engine, locked, run, options.wait, (message) => process.stderr.write(`${message}\n`));
    await work(run);
    return await run.finish('done');
  } catch (error) {
    const translated = translateEngineError(error);
    if (run.served) {
      // Its release is served: the sweep finishes it (a rollback's metadata), its changes stay.
      run.abandon();
      const message =
        `${(translated as Error).message} (after its release was published: \`npm run load -- doctor\` ` +
        'finishes the load once this process has ended)';
      throw Object.assign(new Error(message), {
        summary: { command, status: 'running', loadId: run.loadId, error: message },
      });
    }
    if (translated instanceof EngineDiskFull) await explainDiskFull(engine, translated, publishedNothing);
    const message = (translated as Error).message;
    // A full disk still lets the load delete its release index (its other deletes are refused and left to the
    // next load's sweep).
    const sweeps = !(translated instanceof EngineUnavailable) || translated instanceof EngineDiskFull;
    if (!options.dryRun && sweeps && !(translated instanceof LoadBusy)) {
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

/** A load whose structures are published, but whose fingerprints could not all be computed. */
export class FingerprintsFailed extends Error {}

/** Where a load's fingerprints run writes its rejected rows when --rejects names the load's file. */
function fingerprintRejects(file: string | undefined): string | undefined {
  return file?.replace(/(\.[^./]*)?$/, '-fingerprints$1');
}

/**
 * Ends a load that created structures (`summary` is its summary line) with the work of
 * `load -- fingerprints`: every structure without a fingerprint from the last one computed, the
 * load's own and those an earlier --no-fingerprints load left after it. Its summary becomes the
 * load's `fingerprints`. With --no-fingerprints the load says how many structures it left without
 * (`structuresWithoutFingerprints`); a dry run computes nothing.
 */
async function computeFingerprints(
  engine: Engine,
  config: Config,
  parsed: Parsed,
  summary: Record<string, unknown>,
  created: number,
): Promise<Record<string, unknown>> {
  if (parsed.options.dryRun || created === 0) return summary;
  if (!parsed.fingerprints) return { ...summary, structuresWithoutFingerprints: created };
  const options = { ...parsed.options, rejectsFile: fingerprintRejects(parsed.options.rejectsFile) };
  try {
    const fingerprints = await step(engine, config, 'fingerprints', null, options, (run) => loadFingerprints(run));
    return { ...summary, fingerprints };
  } catch (error) {
    const { message, summary: fingerprints } = error as Error & { summary?: object };
    throw Object.assign(
      new FingerprintsFailed(
        `the load is done, but computing the fingerprints of its structures failed: ${message}. ` +
          'Similarity and substructure searches do not find them until `npm run load -- fingerprints` ' +
          'computes them',
      ),
      { summary: { ...summary, fingerprints, structuresWithoutFingerprints: created } },
    );
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
    // What the command reads is checked before anything is written to the engine: its file, or the
    // dump folder and its three tables.
    const dump = command === 'dump' ? dumpFiles(args[0]) : undefined;
    commandArguments[command].forEach((what, i) => {
      if (what.endsWith('file') && !existsSync(args[i])) throw new FileFormatError(`${args[i]}: no such file`);
    });
    const writes = !options.dryRun;
    if (command === 'doctor') {
      await requireCurrentLayout(engine);
      await ensureBaseIndices(engine);
      return { command, status: 'done', ...(await sweepInterruptedLoads(engine, config)) };
    }
    if (writes) {
      const layout = await requireCurrentLayout(engine);
      // A full disk stops the load here with its own message, before a release index that could not be placed.
      await ensureDiskRoom(engine, wroteNothing, { onWait: (message) => process.stderr.write(`${message}\n`) });
      await ensureBaseIndices(engine);
      if (layout.record) await recordLayout(engine, currentLayout);
      const swept = await sweepInterruptedLoads(engine, config);
      for (const load of swept.interruptedLoads)
        process.stderr.write(
          `load ${load.loadId} (${load.command}) was interrupted (${load.why}): ` +
            `${load.finished ? 'its release was already served, and it is now finished' : 'marked failed and swept'}\n`,
        );
      if (swept.releaseIndicesRemoved.length > 0)
        process.stderr.write(
          `removed ${swept.releaseIndicesRemoved.length} release index(es) left ` +
            `by an interrupted load: ${swept.releaseIndicesRemoved.join(', ')}\n`,
        );
      if (swept.structuresRemoved > 0)
        process.stderr.write(
          `removed ${swept.structuresRemoved} structure(s) that only interrupted loads had created\n`,
        );
      if (swept.note) process.stderr.write(`${swept.note}\n`);
      // A rollback run again after a kill that landed after its alias swap: the sweep finished that one.
      const finished = swept.interruptedLoads.find(
        (load) => command === 'rollback' && load.finished && load.sourceId === Number(args[0]),
      );
      if (finished)
        return {
          command,
          status: 'done',
          sourceId: Number(args[0]),
          loadId: finished.loadId,
          note: `rollback ${finished.loadId} was interrupted after its alias swap and is now finished: nothing more to do`,
        };
    }
    // A rollback with nothing to go back to is refused before anything is recorded.
    if (command === 'rollback') await releasesToSwap(engine, Number(args[0]));
    const locking = (lockKey: string): LoadOptions & { lockKey: string; wait?: boolean } => ({
      ...options,
      lockKey,
      wait: parsed.wait,
    });
    const compounds = engine.names.compounds;
    const withPausedRefresh = async <T>(work: () => Promise<T>): Promise<T> => {
      if (!writes) return work();
      await pauseRefresh(engine, compounds);
      let result: T;
      try {
        result = await work();
      } catch (error) {
        // The load's own error is the one to report (a read-only index refuses this too; the next
        // load's sweep restores the refresh then).
        await resumeRefresh(engine, compounds, 'compounds').catch(() => undefined);
        throw error;
      }
      await resumeRefresh(engine, compounds, 'compounds');
      return result;
    };
    switch (command) {
      case 'sources': {
        const file = fileArgument(args[0], 'source table file');
        return await step(engine, config, command, file, options, (run) => loadSources(run, file));
      }
      case 'structures': {
        const file = fileArgument(args[0], 'structure table file');
        const summary = await withPausedRefresh(() =>
          step(engine, config, command, file, options, (run) => loadStructures(run, file)),
        );
        return await computeFingerprints(engine, config, parsed, summary, Number(summary.structuresCreated ?? 0));
      }
      case 'references': {
        const file = fileArgument(args[0], 'reference table file');
        return await step(engine, config, command, file, locking('all'), (run) => loadReferences(run, file));
      }
      case 'dump': {
        const files = dump!;
        const dryRun = options.dryRun ? { ucis: new UciBitset(), sourceIds: new Set<number>() } : undefined;
        const parts = [
          await step(engine, config, 'sources', files.sources, options, (run) =>
            loadSources(run, files.sources, dryRun),
          ),
          await withPausedRefresh(() =>
            step(engine, config, 'structures', files.structures, options, (run) =>
              loadStructures(run, files.structures, dryRun),
            ),
          ),
        ];
        try {
          parts.push(
            await step(engine, config, 'references', files.references, locking('all'), (run) =>
              loadReferences(run, files.references, dryRun),
            ),
          );
        } catch (error) {
          // A refused or failed reference table leaves no new structure of the dump behind either.
          if (writes) await sweepOwnLeftovers(engine, String(parts[1].loadId)).catch(() => undefined);
          throw error;
        }
        const total = (key: string): number => parts.reduce((sum, part) => sum + Number(part[key] ?? 0), 0);
        const rejectedByReason: Record<string, number> = {};
        for (const part of parts)
          for (const [reason, n] of Object.entries(part.rejectedByReason as Record<string, number>))
            rejectedByReason[reason] = (rejectedByReason[reason] ?? 0) + n;
        const summary = {
          command,
          folder: args[0],
          status: 'done',
          dryRun: options.dryRun,
          rowsRead: total('rowsRead'),
          rowsLoaded: total('rowsLoaded'),
          rowsRejected: total('rowsRejected'),
          rejectedByReason,
          seconds: Math.round(total('seconds') * 100) / 100,
          steps: parts,
        };
        return await computeFingerprints(engine, config, parsed, summary, Number(parts[1].structuresCreated ?? 0));
      }
      case 'source': {
        const sourceId = sourceIdArgument(args[0]);
        const file = fileArgument(args[1], 'release file');
        const summary = await withPausedRefresh(() =>
          step(
            engine,
            config,
            command,
            file,
            locking(`source-${sourceId}`),
            (run) => loadSourceRelease(run, sourceId, file, { idProperty: parsed.idProperty }),
            { sourceId, sourceIds: [sourceId] },
          ),
        );
        return await computeFingerprints(engine, config, parsed, summary, Number(summary.structuresCreated ?? 0));
      }
      case 'remove-source':
      case 'rollback': {
        const sourceId = sourceIdArgument(args[0]);
        const work = command === 'rollback' ? rollbackSource : removeSource;
        return await step(engine, config, command, null, locking(`source-${sourceId}`), (run) => work(run, sourceId), {
          sourceId,
          sourceIds: [sourceId],
        });
      }
      case 'fingerprints':
        return await step(engine, config, command, null, options, (run) => loadFingerprints(run));
      case 'consolidate':
        return await step(engine, config, command, null, locking('all'), consolidateReleases);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    // A full disk met outside a step (the base indices, the sweep, the refresh of compounds) is explained too.
    const translated = translateEngineError(error);
    if (!(translated instanceof EngineDiskFull)) throw error;
    await explainDiskFull(engine, translated, publishedNothing);
    throw Object.assign(translated, { summary: (error as { summary?: object }).summary });
  } finally {
    await engine.close();
  }
}

async function main(argv: string[]): Promise<void> {
  const parsed = parseArguments(argv);
  try {
    const summary = await runCommand(parsed, readConfig());
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } catch (error) {
    const translated = translateEngineError(error) as Error & { summary?: object };
    if (translated instanceof UsageError) throw translated;
    if (translated.summary) process.stdout.write(`${JSON.stringify(translated.summary)}\n`);
    if (translated instanceof ReleaseRefused) throw new CliExit(3, `load refused: ${translated.message}`);
    if (translated instanceof RollbackRefused) throw new CliExit(1, `rollback refused: ${translated.message}`);
    if (translated instanceof FingerprintsFailed) throw new CliExit(1, translated.message);
    const known =
      translated instanceof FileFormatError ||
      translated instanceof ConfigError ||
      translated instanceof EngineUnavailable ||
      translated instanceof LayoutMismatch ||
      translated instanceof LoadBusy;
    throw new CliExit(1, `load failed: ${known ? translated.message : (translated.stack ?? translated.message)}`);
  }
}

if (require.main === module) runCli(loadCli, main);
