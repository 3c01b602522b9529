/**
 * `npm run sync -- --to <folder> [--base-url URL] [--load]`: brings UniChem's published table dumps
 * into a folder, resumably and checked, downloading only what changed since the last run; with
 * `--load`, then loads the folder as `npm run load -- dump <folder>` does (fingerprints included,
 * unless `--no-fingerprints`). Progress goes to stderr, one JSON summary line to stdout. Exit codes:
 * 0 done, 1 failed (a check, the network or the load), 2 wrong usage, 3 the load's release guard
 * refused the dump.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { extname, join, resolve } from 'node:path';
import { CliExit, formatUsage, readCommandConfig, parseCommandLine, runCli, UsageError, type CliSpec } from '../cli';
import { loadedInto, recordLoad, syncDump } from './run';

export const syncCli = {
  name: 'sync',
  usage: 'npm run sync -- --to <folder> [options]',
  options: {
    to: {
      type: 'string',
      value: '<folder>',
      help: 'the folder source.tsv.gz, structure.tsv.gz and reference.tsv.gz go into (created if missing)',
    },
    'base-url': {
      type: 'string',
      value: 'URL',
      help: "the folder of UniChem's table dumps to fetch (default SYNC_BASE_URL, EBI's public one)",
    },
    load: {
      type: 'boolean',
      help:
        'then load the folder as `npm run load -- dump <folder>` does, when every file passed its checks and ' +
        'the files changed since they were last loaded into this ES_URL and ES_INDEX_PREFIX',
    },
    'force-load': { type: 'boolean', help: 'with --load: load even if nothing changed since the last load' },
    'no-fingerprints': {
      type: 'boolean',
      help:
        "with --load: the load's --no-fingerprints (the fingerprints of the structures it adds are left to " +
        '`npm run load -- fingerprints`)',
    },
    progress: { type: 'boolean', help: 'say how a long download is going every 5 s (the default)' },
    'no-progress': { type: 'boolean', help: "no periodic download lines, and the load's --no-progress" },
  },
  notes:
    'A broken-off download is kept as <file>.part and resumed by the next run; <folder>/.sync.json keeps what ' +
    'was fetched, so the next run downloads only what changed.',
} satisfies CliSpec;

/** The usage text of `npm run sync`. */
export const usage = formatUsage(syncCli);

export interface ParsedSync {
  baseUrl: string;
  folder: string;
  load: boolean;
  forceLoad: boolean;
  /** The load computes the fingerprints of the structures it adds (false: --no-fingerprints). */
  fingerprints: boolean;
  progress: boolean;
}

function baseUrlArgument(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value.replace(/\/+$/, '');
  } catch {
    // said below
  }
  throw new UsageError(`--base-url must be an http(s) URL, got "${value}"`);
}

/** Parses the command line (without node and the script); throws `UsageError` for what cannot run. */
export function parseSyncArguments(argv: string[], defaultBaseUrl: string): ParsedSync {
  const { values, lastOf } = parseCommandLine(syncCli, argv);
  if (values.to === undefined || values.to.trim() === '')
    throw new UsageError('--to is missing: the folder the tables go into');
  if (values['force-load'] && !values.load) throw new UsageError('--force-load goes with --load');
  if (values['no-fingerprints'] && !values.load) throw new UsageError('--no-fingerprints goes with --load');
  return {
    baseUrl: values['base-url'] === undefined ? defaultBaseUrl : baseUrlArgument(values['base-url']),
    folder: values.to,
    load: values.load ?? false,
    forceLoad: values['force-load'] ?? false,
    fingerprints: !values['no-fingerprints'],
    progress: (lastOf('progress', 'no-progress') ?? 'progress') === 'progress',
  };
}

/**
 * Runs `npm run load -- dump <folder>` as a child with this process's Node options (tsx's loader
 * under `npm run sync`): the same command line, output and exit code as a curator's own load, which
 * ends by computing the fingerprints of the structures it adds unless `fingerprints` is false. Its
 * progress goes straight to stderr; resolves with its exit code and its JSON summary line.
 */
async function loadDump(
  folder: string,
  { progress, fingerprints }: { progress: boolean; fingerprints: boolean },
): Promise<{ code: number; summary?: unknown }> {
  const loader = join(__dirname, '..', '..', 'loaders', `cli${extname(__filename)}`);
  const flags = [...(progress ? [] : ['--no-progress']), ...(fingerprints ? [] : ['--no-fingerprints'])];
  const child = spawn(process.execPath, [...process.execArgv, loader, 'dump', folder, ...flags], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const [code] = (await once(child, 'close')) as [number | null];
  const last = stdout.trim().split('\n').pop() ?? '';
  let summary: unknown;
  try {
    summary = last ? JSON.parse(last) : undefined;
  } catch {
    summary = last;
  }
  return { code: code ?? 1, summary };
}

async function main(argv: string[]): Promise<void> {
  const config = readCommandConfig();
  const parsed = parseSyncArguments(argv, config.SYNC_BASE_URL);
  const started = Date.now();
  const say = (line: string): void => {
    process.stderr.write(`sync: ${line}\n`);
  };
  const folder = resolve(parsed.folder);
  const result = await syncDump({ baseUrl: parsed.baseUrl, folder, say, progress: parsed.progress });
  const summary: Record<string, unknown> = {
    command: 'sync',
    status: result.failures.length > 0 ? 'failed' : 'done',
    baseUrl: parsed.baseUrl,
    folder,
    files: result.files,
    changed: result.changed,
    checksums: result.checksums.length > 0 ? result.checksums : 'none published',
  };
  const finish = (): void => {
    summary.seconds = Math.round((Date.now() - started) / 10) / 100;
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  };
  if (result.failures.length > 0) {
    if (parsed.load) summary.load = 'not started: a file failed';
    summary.error = result.failures.join('; ');
    finish();
    const nothing = parsed.load ? '; nothing was loaded' : '';
    throw new CliExit(1, `sync failed: ${result.failures.join('; ')}${nothing}`);
  }
  say(
    result.changed > 0
      ? `${result.changed} file(s) checked and moved into place in ${folder}`
      : `every file in ${folder} is current`,
  );
  if (!parsed.load) {
    finish();
    return;
  }
  const loaded = loadedInto(result.state, config.ES_URL, config.ES_INDEX_PREFIX);
  if (loaded && !parsed.forceLoad) {
    say(`unchanged since its last load into ${config.ES_INDEX_PREFIX}: nothing to load (--force-load loads it)`);
    summary.load = 'skipped: unchanged since the last load';
    finish();
    return;
  }
  say(`loading ${folder} (npm run load -- dump ${folder}${parsed.fingerprints ? '' : ' --no-fingerprints'})`);
  const load = await loadDump(folder, parsed);
  summary.load = load.summary ?? { exitCode: load.code };
  if (load.code !== 0) {
    summary.status = 'failed';
    finish();
    throw new CliExit(load.code, `sync: the load of ${folder} failed (exit ${load.code}); the files stay in place`);
  }
  await recordLoad(folder, result.state, config.ES_URL, config.ES_INDEX_PREFIX);
  finish();
}

if (require.main === module) runCli(syncCli, main);
