/**
 * Backups of every index and alias of ES_INDEX_PREFIX as the engine's own snapshots (incremental:
 * a snapshot stores only the segment files no earlier snapshot of the repository holds), and their
 * restore. A restore over live indices first writes a marker, `{prefix}-restoring`, that every API
 * reads each second (RestoreWatch) and answers 503 for, until the restored indices serve again.
 */
import { errors } from '@elastic/elasticsearch';
import type { Engine } from './client';
import { runningLoads } from './loads';
import { markerDocument, restoreMarker, type RestoreMarker } from './restore-watch';
import { targetReplicas } from './schema';

/** The repository `npm run backup` registers when it is missing: a filesystem one, under the nodes' `path.repo`. */
export const defaultRepository = 'chemxref-backups';
/** Its folder, relative to the first `path.repo` of the nodes. */
export const defaultLocation = 'chemxref';

/** A backup that cannot be made, listed or restored as asked; the message says why and what to do. */
export class BackupError extends Error {}

/** One backup of the repository, as `npm run backup -- --list` shows it. */
export interface BackupInfo {
  name: string;
  /** SUCCESS, IN_PROGRESS, PARTIAL, FAILED or INCOMPATIBLE. */
  state: string;
  prefix?: string;
  started: string;
  ended?: string;
  /** Of every file the backup refers to (shared with other backups). */
  sizeBytes?: number;
  indices: string[];
}

/** What `createBackup` made (or found made). */
export interface BackupReport extends BackupInfo {
  /** Bytes this backup added to the repository (the rest were already there). */
  addedBytes: number;
  seconds: number;
  /** True when it was an earlier run's backup, still running or finished, rather than a new one. */
  resumed: boolean;
}

export interface RestoreReport {
  name: string;
  indices: string[];
  /** Indices of the prefix deleted first (`--replace`, or what an interrupted restore left). */
  replaced: string[];
  replicas: number;
  status: string;
  seconds: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The engine's error type and reason of a refused request, for messages. */
function reasonOf(error: unknown): string {
  if (error instanceof errors.ResponseError) {
    const body = error.body as { error?: { type?: string; reason?: string } } | undefined;
    return `${body?.error?.type ?? error.statusCode}: ${body?.error?.reason ?? error.message}`;
  }
  return (error as Error).message;
}

/**
 * The indices of this prefix, sorted: every `{prefix}-*` index but the restore marker and the
 * indices of a longer prefix nested in it (one with a meta index of its own, `{prefix}-x-meta`).
 */
export async function indicesOfPrefix(engine: Engine): Promise<string[]> {
  const { names } = engine;
  const rows = (await engine.client.cat.indices({
    index: `${names.prefix}-*`,
    expand_wildcards: 'all',
    format: 'json',
    h: 'index',
  })) as unknown as { index: string }[];
  const all = rows.map((row) => row.index);
  const nested = all
    .filter((index) => index.endsWith('-meta') && index !== names.meta)
    .map((meta) => meta.slice(0, -'meta'.length));
  return all.filter((index) => index !== names.restoring && !nested.some((stem) => index.startsWith(stem))).sort();
}

/**
 * Registers `repository` when it is missing and is the default one (a filesystem repository in the
 * nodes' `path.repo`); any other must have been registered by the operator. Returns whether it registered it.
 */
export async function ensureRepository(engine: Engine, repository: string): Promise<boolean> {
  const found = await engine.client.snapshot.getRepository({ name: repository }, { ignore: [404] });
  if ((found as Record<string, unknown>)[repository]) return false;
  if (repository !== defaultRepository)
    throw new BackupError(
      `the engine has no snapshot repository "${repository}": register it first ` +
        `(PUT _snapshot/${repository}, docs/operations.md#backup), or use the default, ${defaultRepository}`,
    );
  try {
    await engine.client.snapshot.createRepository({
      name: repository,
      repository: { type: 'fs', settings: { location: defaultLocation } },
    });
  } catch (error) {
    const reason = reasonOf(error);
    if (/path\.repo/.test(reason))
      throw new BackupError(
        `the engine cannot hold the backup repository ${repository}: its nodes have no path.repo (${reason}). ` +
          'A local engine started before backups existed gets it on restart (npm run es:stop, then npm run ' +
          'es:start); elsewhere set path.repo on every node, or register a repository yourself and name it ' +
          'in BACKUP_REPOSITORY (docs/operations.md#backup)',
      );
    throw new BackupError(`could not register the backup repository ${repository}: ${reason}`);
  }
  return true;
}

interface SnapshotShape {
  snapshot: string;
  state?: string;
  start_time?: string;
  end_time?: string;
  indices?: string[];
  metadata?: { chemxref?: { prefix?: string } };
  index_details?: Record<string, { size_in_bytes?: number }>;
  failures?: { index?: string; reason?: string }[];
}

function infoOf(snapshot: SnapshotShape): BackupInfo {
  const details = Object.values(snapshot.index_details ?? {});
  return {
    name: snapshot.snapshot,
    state: snapshot.state ?? 'UNKNOWN',
    prefix: snapshot.metadata?.chemxref?.prefix,
    started: snapshot.start_time ?? '',
    ...(snapshot.end_time ? { ended: snapshot.end_time } : {}),
    ...(details.length > 0 ? { sizeBytes: details.reduce((sum, detail) => sum + (detail.size_in_bytes ?? 0), 0) } : {}),
    indices: [...(snapshot.indices ?? [])].sort(),
  };
}

async function snapshotsNamed(engine: Engine, repository: string, snapshot: string): Promise<SnapshotShape[]> {
  const result = await engine.client.snapshot.get(
    { repository, snapshot, index_details: true, ignore_unavailable: true },
    { ignore: [404] },
  );
  return ((result as { snapshots?: SnapshotShape[] }).snapshots ?? []) as SnapshotShape[];
}

/** One backup of the repository, or undefined. */
export async function backupNamed(engine: Engine, repository: string, name: string): Promise<BackupInfo | undefined> {
  const [found] = await snapshotsNamed(engine, repository, name);
  return found ? infoOf(found) : undefined;
}

/** The backups of this prefix in the repository, oldest first. */
export async function listBackups(engine: Engine, repository: string): Promise<BackupInfo[]> {
  await ensureRepository(engine, repository);
  return (await snapshotsNamed(engine, repository, '*'))
    .map(infoOf)
    .filter((info) => info.prefix === engine.names.prefix)
    .sort((a, b) => a.started.localeCompare(b.started) || a.name.localeCompare(b.name));
}

/** A new backup's name: the prefix and the time, in UTC, to the second (`chemxref-20261129-064012`). */
function backupName(prefix: string, at = new Date()): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${prefix}-${stamp}`;
}

/** Waits until the snapshot `name` is no longer running; returns it as it ended. */
async function snapshotEnded(engine: Engine, repository: string, name: string): Promise<SnapshotShape> {
  for (;;) {
    const [found] = await snapshotsNamed(engine, repository, name);
    if (!found) throw new BackupError(`the backup ${name} disappeared from ${repository} while it was being made`);
    if (found.state !== 'IN_PROGRESS') return found;
    await sleep(500);
  }
}

/**
 * Backs up every index and alias of the prefix into `repository` (registered first when it is the
 * default and missing) as the snapshot `name` (the prefix and the time unless given). Safe to run
 * again: a backup of the prefix still running (its command was killed) is waited for and reported
 * instead of a new one, and a `name` already backed up is reported as it is.
 */
export async function createBackup(
  engine: Engine,
  options: { repository: string; name?: string; onWait?: (message: string) => void },
): Promise<BackupReport> {
  const began = Date.now();
  const { repository } = options;
  const prefix = engine.names.prefix;
  await ensureRepository(engine, repository);
  const restoring = await restoreMarker(engine);
  if (restoring)
    throw new BackupError(
      `the backup ${restoring.snapshot} is being restored (since ${restoring.started}): back up once the restore ends`,
    );
  const running = (await snapshotsNamed(engine, repository, '_current')).find(
    (snapshot) => snapshot.metadata?.chemxref?.prefix === prefix,
  );
  let name = options.name ?? running?.snapshot ?? backupName(prefix);
  let resumed = running !== undefined && running.snapshot === name;
  if (running && !resumed)
    throw new BackupError(`the backup ${running.snapshot} of ${prefix} is still being made: run again once it ends`);
  if (!resumed) {
    const [existing] = await snapshotsNamed(engine, repository, name);
    if (existing && existing.metadata?.chemxref?.prefix !== prefix)
      throw new BackupError(`${repository} already holds a snapshot named ${name} that is not a backup of ${prefix}`);
    if (existing?.state === 'SUCCESS' || existing?.state === 'IN_PROGRESS') resumed = true;
    else if (existing) {
      // A failed or partial backup of that name: replaced by a whole one.
      await engine.client.snapshot.delete({ repository, snapshot: name });
    }
  }
  if (resumed) options.onWait?.(`${name} was already started: waiting for it to end`);
  else {
    const indices = await indicesOfPrefix(engine);
    if (indices.length === 0)
      throw new BackupError(`the engine holds no index of prefix ${prefix}: nothing to back up`);
    try {
      await engine.client.snapshot.create({
        repository,
        snapshot: name,
        indices,
        include_global_state: false,
        partial: false,
        metadata: { chemxref: { prefix } },
        wait_for_completion: false,
      });
    } catch (error) {
      // Two runs started in the same second: the second takes the next second's name.
      if (options.name === undefined && /invalid_snapshot_name|already exists/.test(reasonOf(error))) {
        name = backupName(prefix, new Date(Date.now() + 1_000));
        await sleep(1_000);
        return createBackup(engine, { ...options, name });
      }
      throw new BackupError(`the engine refused the backup ${name}: ${reasonOf(error)}`);
    }
  }
  const ended = await snapshotEnded(engine, repository, name);
  if (ended.state !== 'SUCCESS') {
    const failures = (ended.failures ?? []).map((failure) => `${failure.index}: ${failure.reason}`).join('; ');
    throw new BackupError(`the backup ${name} ended ${ended.state}${failures ? ` (${failures})` : ''}`);
  }
  const status = await engine.client.snapshot.status({ repository, snapshot: name });
  const stats = status.snapshots[0]?.stats;
  return {
    ...infoOf(ended),
    sizeBytes: stats?.total.size_in_bytes ?? infoOf(ended).sizeBytes,
    addedBytes: stats?.incremental.size_in_bytes ?? 0,
    seconds: (Date.now() - began) / 1000,
    resumed,
  };
}

/** Deletes `indices` by name (twenty a request: every name goes in the request line, which the engine caps at 4 kB). */
async function deleteIndices(engine: Engine, indices: string[]): Promise<void> {
  for (let start = 0; start < indices.length; start += 20)
    await engine.client.indices.delete({ index: indices.slice(start, start + 20).join(',') }, { ignore: [404] });
}

/**
 * Restores the backup `name` of this prefix. Into an engine that holds none of the prefix's indices
 * unless `replace`, which deletes them first. The API answers 503 from the moment the marker is
 * written (after `graceMs`, every API has seen it and finished the engine requests it had sent)
 * until every restored primary shard serves. Safe to run again: an interrupted restore (its marker
 * left) is done again from the start, `replace` or not.
 */
export async function restoreBackup(
  engine: Engine,
  options: {
    repository: string;
    name: string;
    replace: boolean;
    graceMs: number;
    onStep?: (message: string) => void;
  },
): Promise<RestoreReport> {
  const began = Date.now();
  const { repository, name } = options;
  const prefix = engine.names.prefix;
  const step = options.onStep ?? (() => undefined);
  await ensureRepository(engine, repository);
  const backup = await backupNamed(engine, repository, name);
  if (!backup)
    throw new BackupError(`${repository} holds no backup named ${name} (npm run backup -- --list shows them)`);
  if (backup.state !== 'SUCCESS') throw new BackupError(`the backup ${name} is ${backup.state}, not a whole backup`);
  const foreign = backup.indices.filter((index) => !index.startsWith(`${prefix}-`));
  if (backup.prefix !== prefix || foreign.length > 0)
    throw new BackupError(
      `the backup ${name} holds the indices of prefix ${backup.prefix ?? '(unknown)'}, not ${prefix}: ` +
        `restore it with ES_INDEX_PREFIX=${backup.prefix}`,
    );
  const earlier = await restoreMarker(engine);
  const existing = await indicesOfPrefix(engine);
  if (existing.length > 0 && !options.replace && !earlier)
    throw new BackupError(
      `the engine already holds ${existing.length} indices of prefix ${prefix} (${existing.slice(0, 3).join(', ')}` +
        `${existing.length > 3 ? ', ...' : ''}): pass --replace to replace them with the backup`,
    );
  if (earlier) step(`an earlier restore of ${earlier.snapshot} (${earlier.started}) did not end: restoring anew`);
  const marker: RestoreMarker = {
    snapshot: name,
    repository,
    started: new Date().toISOString(),
    replace: options.replace,
  };
  await engine.client.indices.create(
    { index: engine.names.restoring, settings: { index: { number_of_shards: 1, auto_expand_replicas: '0-all' } } },
    { ignore: [400] },
  );
  await engine.client.index({ ...markerDocument(engine.names), document: marker, refresh: true });
  // Checked once the marker is written, so a load either sees the marker or is seen here.
  const { alive } = await runningLoads(engine).catch(() => ({ alive: [] }));
  if (alive.length > 0) {
    if (earlier) await engine.client.index({ ...markerDocument(engine.names), document: earlier });
    else await engine.client.indices.delete({ index: engine.names.restoring }, { ignore: [404] });
    throw new BackupError(
      `load ${alive[0].loadId} (${alive[0].command}) is running: restore once it has ended, nothing was changed`,
    );
  }
  // Even into an empty engine: an API already running would otherwise read shards still being restored.
  if (!earlier) {
    step(`the API answers 503 from now on; waiting ${options.graceMs / 1000} s for every API to know it`);
    await sleep(options.graceMs);
  }
  if (existing.length > 0) {
    step(`deleting the ${existing.length} indices of prefix ${prefix}`);
    await deleteIndices(engine, existing);
  }
  const replicas = await targetReplicas(engine);
  step(`restoring ${backup.indices.length} indices of ${name} with ${replicas} replica${replicas === 1 ? '' : 's'}`);
  let restored: { shards?: { total: number; failed: number } } | undefined;
  try {
    const answer = await engine.client.snapshot.restore(
      {
        repository,
        snapshot: name,
        indices: backup.indices,
        include_aliases: true,
        include_global_state: false,
        index_settings: { 'index.number_of_replicas': replicas },
        wait_for_completion: true,
      },
      // Until every primary is restored: as long as the data takes. Not retried: the indices would then exist.
      { requestTimeout: 24 * 3600_000, maxRetries: 0 },
    );
    restored = answer.snapshot;
  } catch (error) {
    throw new BackupError(
      `the engine refused to restore ${name}: ${reasonOf(error)}. The API answers 503 until a restore ends: ` +
        'run the restore again',
    );
  }
  if (!restored || restored.shards?.failed) {
    throw new BackupError(
      `${restored?.shards?.failed ?? 'some'} of ${restored?.shards?.total ?? '?'} shards of ${name} could not be ` +
        'restored (see the engine log); the API answers 503 until a restore ends: run the restore again',
    );
  }
  // Every primary serves: the answers are the backup's. (By pattern: the names of many indices pass the 4 kB a request
  // line may have.)
  const every = `${prefix}-*`;
  await engine.client.cluster.health({ index: every, wait_for_status: 'yellow', timeout: '60s' });
  await engine.client.indices.delete({ index: engine.names.restoring }, { ignore: [404] });
  const { number_of_data_nodes: dataNodes } = await engine.client.cluster.health();
  let health = await engine.client.cluster.health({ index: every });
  if (replicas < dataNodes) {
    step('restored: the API answers again; waiting for the replicas');
    health = await engine.client.cluster.health(
      { index: every, wait_for_status: 'green', timeout: `${Math.ceil(engine.config.ES_GREEN_TIMEOUT / 1000)}s` },
      { requestTimeout: engine.config.ES_GREEN_TIMEOUT + 10_000 },
    );
  } else
    step(
      `restored: the API answers again; the ${replicas} replica${replicas === 1 ? '' : 's'} asked (ES_REPLICAS) ` +
        `need more than the ${dataNodes} data node${dataNodes === 1 ? '' : 's'} there are: they are made when nodes join`,
    );
  return {
    name,
    indices: backup.indices,
    replaced: existing,
    replicas,
    status: health.status.toLowerCase(),
    seconds: (Date.now() - began) / 1000,
  };
}
