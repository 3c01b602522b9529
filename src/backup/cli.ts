/**
 * `npm run backup` and `npm run restore`: every index and alias of ES_INDEX_PREFIX as a snapshot of
 * the engine in BACKUP_REPOSITORY, and back (docs/operations.md#backup, #restore). Each prints one
 * JSON line on stdout (`--list`: a table) and its steps on stderr. Exit codes: 0 done, 1 failed,
 * 2 wrong usage.
 */
import {
  commandFailed,
  parseCommandLine,
  readCommandConfig,
  runCli,
  textTable,
  UsageError,
  type CliSpec,
} from '../cli';
import type { Config } from '../config';
import { BackupError, createBackup, listBackups, restoreBackup, type BackupInfo } from '../engine/backups';
import { Engine } from '../engine/client';
import { restoreWatchEveryMs } from '../engine/restore-watch';

export const backupCli = {
  name: 'backup',
  usage: 'npm run backup [-- --name <name> | --list [--json]]',
  options: {
    name: { type: 'string', value: '<name>', help: "the backup's name (default: the prefix and the time, in UTC)" },
    list: { type: 'boolean', help: 'list the backups of ES_INDEX_PREFIX instead: name, date, size, indices' },
    json: { type: 'boolean', help: 'with --list: one JSON line a backup' },
  },
  notes:
    'A backup holds every index and alias of ES_INDEX_PREFIX, in BACKUP_REPOSITORY. It is incremental: it ' +
    'stores only what no earlier backup of the repository holds.',
} satisfies CliSpec;

export const restoreCli = {
  name: 'restore',
  usage: 'npm run restore -- <name> [--replace]',
  positionals: true,
  options: {
    replace: {
      type: 'boolean',
      help: 'replace the indices of ES_INDEX_PREFIX the engine holds (the API answers 503 meanwhile)',
    },
  },
  notes: 'Without --replace the engine must hold no index of ES_INDEX_PREFIX.',
} satisfies CliSpec;

const say = (message: string): void => {
  process.stderr.write(`${message}\n`);
};

/** Bytes for a person: 12.3 MB. */
export function humanSize(bytes: number | undefined): string {
  if (bytes === undefined) return '?';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

function table(backups: BackupInfo[]): string {
  const rows = [
    ['name', 'date', 'size', 'indices', 'state'],
    ...backups.map((b) => [
      b.name,
      b.started.replace(/\.\d+Z$/, 'Z'),
      humanSize(b.sizeBytes),
      String(b.indices.length),
      b.state,
    ]),
  ];
  return textTable(rows);
}

/** Runs `work` against the engine of `config`, turning what fails into exit 1 with its message. */
async function withEngine<T>(config: Config, what: string, work: (engine: Engine) => Promise<T>): Promise<T> {
  const engine = new Engine(config);
  try {
    return await work(engine);
  } catch (error) {
    throw commandFailed(what, error, [BackupError]);
  } finally {
    await engine.close();
  }
}

export async function backupMain(argv: string[]): Promise<void> {
  const { values } = parseCommandLine(backupCli, argv);
  if (values.list && values.name !== undefined) throw new UsageError('--list and --name do not go together');
  if (values.json && !values.list) throw new UsageError('--json goes with --list');
  if (values.name !== undefined && !/^[a-z0-9][a-z0-9._-]{0,200}$/.test(values.name))
    throw new UsageError(`--name must be lower case (a-z, 0-9, ., _, -), got "${values.name}"`);
  const config = readCommandConfig();
  const repository = config.BACKUP_REPOSITORY;
  await withEngine(config, 'backup', async (engine) => {
    if (values.list) {
      const backups = await listBackups(engine, repository);
      if (values.json) for (const backup of backups) process.stdout.write(`${JSON.stringify(backup)}\n`);
      else if (backups.length === 0) say(`no backup of ${config.ES_INDEX_PREFIX} in ${repository}`);
      else process.stdout.write(`${table(backups)}\n`);
      return;
    }
    const report = await createBackup(engine, { repository, name: values.name, onWait: say });
    say(
      `backup ${report.name}: ${humanSize(report.sizeBytes)} (${humanSize(report.addedBytes)} new), ` +
        `${report.indices.length} indices, ${report.seconds.toFixed(1)} s`,
    );
    process.stdout.write(
      `${JSON.stringify({
        backup: report.name,
        repository,
        status: 'done',
        sizeBytes: report.sizeBytes,
        addedBytes: report.addedBytes,
        indices: report.indices.length,
        started: report.started,
        seconds: report.seconds,
        ...(report.resumed ? { resumed: true } : {}),
      })}\n`,
    );
  });
}

export async function restoreMain(argv: string[]): Promise<void> {
  const {
    values,
    positionals: [name, ...rest],
  } = parseCommandLine(restoreCli, argv);
  if (!name) throw new UsageError('the name of the backup to restore is missing (npm run backup -- --list)');
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
  const config = readCommandConfig();
  const repository = config.BACKUP_REPOSITORY;
  await withEngine(config, 'restore', async (engine) => {
    const report = await restoreBackup(engine, {
      repository,
      name,
      replace: values.replace ?? false,
      // An API reads the marker each second (a read waits at most as long), then its requests already sent end
      // within ENGINE_TIMEOUT_MS.
      graceMs: 2 * restoreWatchEveryMs + config.ENGINE_TIMEOUT_MS,
      onStep: say,
    });
    say(
      `restored ${report.name}: ${report.indices.length} indices, ${report.replicas} replica` +
        `${report.replicas === 1 ? '' : 's'}, ${report.status}, ${report.seconds.toFixed(1)} s`,
    );
    process.stdout.write(
      `${JSON.stringify({
        restored: report.name,
        repository,
        status: 'done',
        indices: report.indices.length,
        replaced: report.replaced.length,
        replicas: report.replicas,
        health: report.status,
        seconds: report.seconds,
      })}\n`,
    );
  });
}

// `tsx src/backup/cli.ts backup ...` or `... restore ...`, as package.json runs it.
if (require.main === module) {
  const [command, ...argv] = process.argv.slice(2);
  if (command === 'restore') runCli(restoreCli, () => restoreMain(argv));
  else if (command === 'backup') runCli(backupCli, () => backupMain(argv));
  else throw new Error('run it as npm run backup or npm run restore');
}
