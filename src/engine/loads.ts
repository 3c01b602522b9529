/**
 * Load records, load locks and the sweep of interrupted loads, in the meta index: what
 * `npm run load -- history` lists and `npm run load -- doctor` repairs.
 */
import { hostname } from 'node:os';
import type { LoadRecord } from './documents';
import type { Engine } from './client';
import { EngineDiskFull, isFloodStageBlock } from './errors';
import { restoreMarker } from './restore-watch';

/** How often a running load writes its heartbeat, and after how long without one it counts as killed. */
export const heartbeatEveryMs = 5_000;
export const staleAfterMs = 30_000;
const sameHostStaleAfterMs = 10 * 60_000;

/** Writes (or rewrites) the record of one load. */
export async function saveLoadRecord(engine: Engine, record: LoadRecord): Promise<void> {
  await engine.client.index({ index: engine.names.meta, id: `load-${record.loadId}`, document: record, refresh: true });
}

/**
 * Past loads, most recent first; with `sourceId`, only the loads of that source (its own, and the
 * reference tables and dumps that replaced it).
 */
export async function loadHistory(engine: Engine, limit = 100, sourceId?: number): Promise<LoadRecord[]> {
  const ofSource =
    sourceId === undefined
      ? {}
      : { should: [{ term: { sourceId } }, { term: { sourceIds: sourceId } }], minimum_should_match: 1 };
  const result = await engine.client.search<LoadRecord>(
    {
      index: engine.names.meta,
      size: limit,
      query: { bool: { filter: [{ term: { kind: 'load' } }], ...ofSource } },
      sort: [{ started: 'desc' }],
    },
    { ignore: [404] },
  );
  return (result.hits?.hits ?? []).map((hit) => hit._source!);
}

/** Whether a completed load (not a dry run) of `sourceId` started before `before`: a load a `since` can name. */
export async function hasCompletedLoadBefore(engine: Engine, sourceId: number, before: string): Promise<boolean> {
  const result = await engine.client.count(
    {
      index: engine.names.meta,
      query: {
        bool: {
          filter: [{ term: { kind: 'load' } }, { term: { status: 'done' } }, { range: { started: { lt: before } } }],
          // A record without the flag (an older version's) is a load too, as changeSpan reads it.
          must_not: [{ term: { dryRun: true } }],
          should: [{ term: { sourceId } }, { term: { sourceIds: sourceId } }],
          minimum_should_match: 1,
        },
      },
    },
    { ignore: [404] },
  );
  return (result.count ?? 0) > 0;
}

/** The record of one load, or undefined. */
export async function loadRecord(engine: Engine, loadId: string): Promise<LoadRecord | undefined> {
  const result = await engine.client.get<LoadRecord>(
    { index: engine.names.meta, id: `load-${loadId}` },
    { ignore: [404] },
  );
  return result.found ? result._source : undefined;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Why a load marked running is not running any more (undefined while it is): its process is gone
 * (known at once on the machine that ran it) or its heartbeat is older than `staleAfterMs`.
 */
export function interruption(record: LoadRecord, now = Date.now()): string | undefined {
  if (record.status !== 'running') return `it ended (${record.status})`;
  const last = Date.parse(record.heartbeat ?? record.started);
  const silent = now - last;
  if (record.host === hostname() && record.pid) {
    if (record.pid !== process.pid && !processAlive(record.pid))
      return `its process ${record.pid} on ${record.host} is gone`;
    // Its process lives: a heartbeat held up by a busy engine does not make it killed (unless the pid was reused long
    // after).
    return silent > sameHostStaleAfterMs ? `no heartbeat since ${new Date(last).toISOString()}` : undefined;
  }
  return silent > staleAfterMs ? `no heartbeat since ${new Date(last).toISOString()}` : undefined;
}

/** Loads marked running, split into those still alive and those that were interrupted (with why). */
export async function runningLoads(
  engine: Engine,
): Promise<{ alive: LoadRecord[]; interrupted: { record: LoadRecord; why: string }[] }> {
  const result = await engine.client.search<LoadRecord>(
    {
      index: engine.names.meta,
      size: 1000,
      query: { bool: { filter: [{ term: { kind: 'load' } }, { term: { status: 'running' } }] } },
    },
    { ignore: [404] },
  );
  const alive: LoadRecord[] = [];
  const interrupted: { record: LoadRecord; why: string }[] = [];
  for (const hit of result.hits?.hits ?? []) {
    const why = interruption(hit._source!);
    if (why) interrupted.push({ record: hit._source!, why });
    else alive.push(hit._source!);
  }
  return { alive, interrupted };
}

/** Release indices that live loads are writing (a sweep spares them). */
export function indicesOf(records: LoadRecord[]): Set<string> {
  return new Set(records.flatMap((record) => (record.index ? record.index.split(',') : [])));
}

/** A load lock held by another load that is alive. */
export class LoadBusy extends Error {}

const lockIdOf = (key: string): string => `lock-load-${key}`;

interface LockDocument {
  kind: 'load-lock';
  key: string;
  loadId: string;
  command: string;
  started: string;
}

/** What a lock key means to a curator: `source 1`, or every source (a reference table or a dump). */
function describeKey(key: string): string {
  return key === 'all' ? 'every source' : key.replace('-', ' ');
}

/**
 * Takes the load lock `key` (`source-<id>`, or `all` for a reference table that may replace any
 * source) for `loadId`. A lock whose load is no longer alive is taken over. When another live load
 * holds it, or holds a lock that overlaps (`all` against any `source-*`), throws LoadBusy naming
 * that load, or with `wait` waits until it is free.
 */
export async function takeLoadLock(
  engine: Engine,
  key: string,
  owner: { loadId: string; command: string },
  wait = false,
  onWait?: (message: string) => void,
): Promise<void> {
  const index = engine.names.meta;
  let told = false;
  for (;;) {
    const document: LockDocument = {
      kind: 'load-lock',
      key,
      loadId: owner.loadId,
      command: owner.command,
      started: new Date().toISOString(),
    };
    const taken = await engine.client.create({ index, id: lockIdOf(key), document, refresh: true }, { ignore: [409] });
    if ((taken as { result?: string }).result === 'created') {
      // Checked once the lock is held, so a restore either sees this load or is seen here (src/engine/backups.ts).
      const restore = await restoreMarker(engine);
      if (restore) {
        await releaseLoadLock(engine, key, owner.loadId);
        throw new LoadBusy(
          `the data is being restored from the backup ${restore.snapshot} since ${restore.started}: load once it ends`,
        );
      }
      const other = await overlappingLock(engine, key, owner.loadId);
      if (!other) return;
      await releaseLoadLock(engine, key, owner.loadId);
      if (!wait) throw new LoadBusy(busyMessage(other));
      if (!told) onWait?.(`waiting: ${busyMessage(other)}`);
      told = true;
    } else {
      const held = await engine.client.get<LockDocument>({ index, id: lockIdOf(key) }, { ignore: [404] });
      if (held.found) {
        const record = await loadRecord(engine, held._source!.loadId);
        if (!record || interruption(record)) {
          await engine.client.delete(
            { index, id: lockIdOf(key), if_seq_no: held._seq_no, if_primary_term: held._primary_term, refresh: true },
            { ignore: [404, 409] },
          );
          continue;
        }
        if (!wait) throw new LoadBusy(busyMessage(held._source!));
        if (!told) onWait?.(`waiting: ${busyMessage(held._source!)}`);
        told = true;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function busyMessage(lock: LockDocument): string {
  return `${describeKey(lock.key)} is being loaded by load ${lock.loadId} (${lock.command}) since ${lock.started}`;
}

/** A live load's lock that overlaps `key`: `all` overlaps every `source-*`, and each of them overlaps `all`. */
async function overlappingLock(engine: Engine, key: string, loadId: string): Promise<LockDocument | undefined> {
  const result = await engine.client.search<LockDocument>({
    index: engine.names.meta,
    size: 1000,
    query: { term: { kind: 'load-lock' } },
  });
  for (const hit of result.hits.hits) {
    const lock = hit._source!;
    if (lock.loadId === loadId || lock.key === key) continue;
    if (key !== 'all' && lock.key !== 'all') continue;
    const record = await loadRecord(engine, lock.loadId);
    if (record && !interruption(record)) return lock;
  }
  return undefined;
}

/** Releases the lock `key` if `loadId` holds it. */
export async function releaseLoadLock(engine: Engine, key: string, loadId: string): Promise<void> {
  const held = await engine.client.get<LockDocument>(
    { index: engine.names.meta, id: lockIdOf(key) },
    { ignore: [404] },
  );
  if (!held.found || held._source!.loadId !== loadId) return;
  await engine.client.delete(
    {
      index: engine.names.meta,
      id: lockIdOf(key),
      if_seq_no: held._seq_no,
      if_primary_term: held._primary_term,
      refresh: true,
    },
    { ignore: [404, 409] },
  );
}

/** Deletes every lock of `loadId` (an interrupted load's). */
export async function releaseLocksOf(engine: Engine, loadId: string): Promise<void> {
  await deleteWhere(engine, engine.names.meta, {
    bool: { filter: [{ term: { kind: 'load-lock' } }, { term: { loadId } }] },
  });
}

/**
 * Deletes the documents of `index` that match `query`, a page of ids at a time (the engine
 * distribution chemxref runs has no delete-by-query, which lives in its reindex module). Returns how
 * many were deleted.
 */
export async function deleteWhere(engine: Engine, index: string, query: object): Promise<number> {
  let deleted = 0;
  for (;;) {
    await engine.client.indices.refresh({ index }, { ignore: [404] });
    const result = await engine.client.search(
      { index, size: 5_000, query: query as never, _source: false },
      { ignore: [404] },
    );
    const ids = (result.hits?.hits ?? []).map((hit) => hit._id!);
    if (ids.length === 0) return deleted;
    const deletes = await engine.client.bulk({
      refresh: true,
      operations: ids.map((id) => ({ delete: { _index: index, _id: id } })),
      filter_path: 'errors,items.*.status,items.*.error',
    });
    // Deletes the engine refuses (a full disk's read-only block) would be searched and sent again forever.
    const refused = deletes.errors ? deletes.items.map((item) => item.delete?.error).find(Boolean) : undefined;
    if (refused) {
      throw isFloodStageBlock(refused)
        ? new EngineDiskFull()
        : new Error(`deleting from ${index} failed: ${refused.reason ?? refused.type}`);
    }
    deleted += ids.length;
  }
}

/**
 * The last ended load (done, failed or refused; dry runs aside) of each source among the `within`
 * most recent loads: a `source` or `remove-source` load names its source, a reference table the
 * sources it replaced.
 */
export async function lastLoadOfEachSource(engine: Engine, within = 1_000): Promise<Map<number, LoadRecord>> {
  const result = await engine.client.search<LoadRecord>(
    {
      index: engine.names.meta,
      size: within,
      query: {
        bool: {
          filter: [
            { term: { kind: 'load' } },
            { terms: { status: ['done', 'failed', 'refused'] } },
            { term: { dryRun: false } },
          ],
        },
      },
      sort: [{ started: 'desc' }],
    },
    { ignore: [404] },
  );
  const last = new Map<number, LoadRecord>();
  for (const hit of result.hits?.hits ?? []) {
    const record = hit._source!;
    for (const sourceId of record.sourceIds ?? (record.sourceId ? [record.sourceId] : [])) {
      if (!last.has(sourceId)) last.set(sourceId, record);
    }
  }
  return last;
}
