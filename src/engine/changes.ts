/**
 * The changes index: what each load changed in its sources' current assignments, one document per
 * (load, source, compound id, change). A load writes its changes before it publishes its release;
 * they count only once its record says `done` (readers filter on the load ids of completed loads),
 * and a load that fails or is refused deletes them.
 */
import { createHash } from 'node:crypto';
import type { Engine } from './client';
import { deleteWhere } from './loads';

/** One change of one compound id of a source in one load. */
export type ChangeDocument = {
  loadId: string;
  /** When the load started: loads of one source take turns, so this orders them. */
  loadStarted: string;
  sourceId: number;
  compoundId: string;
} & (
  | { change: 'added'; uci: number }
  | { change: 'dropped'; uci: number }
  | { change: 'moved'; fromUci: number; toUci: number }
);

/** The `_id` of a change: a change found twice in one load (a repeated row, a split page) is one document. */
function changeId(change: ChangeDocument): string {
  const ucis = change.change === 'moved' ? `${change.fromUci}>${change.toUci}` : String(change.uci);
  const digest = createHash('sha256')
    .update(`${change.sourceId}\t${change.compoundId}\t${change.change}\t${ucis}`)
    .digest('base64url')
    .slice(0, 27);
  return `${change.loadId}:${digest}`;
}

/**
 * A change to write, or one written earlier in the same load to take back (a row's `added` that turned out a move's
 * end).
 */
export type ChangeWrite = { write: ChangeDocument } | { retract: ChangeDocument };

/**
 * Writes and takes back changes, in order (not yet searchable: `refreshChanges` makes them so); throws with the
 * engine's reason if it refuses one.
 */
export async function writeChanges(engine: Engine, changes: ChangeWrite[]): Promise<void> {
  if (changes.length === 0) return;
  const result = await engine.client.bulk({
    operations: changes.flatMap((change): object[] =>
      'write' in change
        ? [{ index: { _index: engine.names.changes, _id: changeId(change.write) } }, change.write]
        : [{ delete: { _index: engine.names.changes, _id: changeId(change.retract) } }],
    ) as never,
    filter_path: 'errors,items.*.error',
  });
  if (!result.errors) return;
  const refused = result.items.map((item) => item.index?.error ?? item.delete?.error).find(Boolean);
  if (refused) throw new Error(`the engine refused a change: ${refused.reason ?? refused.type ?? 'unknown reason'}`);
}

/** Makes the changes written so far searchable. */
export async function refreshChanges(engine: Engine): Promise<void> {
  await engine.client.indices.refresh({ index: engine.names.changes }, { ignore: [404] });
}

/** How many changes of each kind one load recorded. */
export async function countChangesOf(
  engine: Engine,
  loadId: string,
): Promise<{ added: number; dropped: number; moved: number }> {
  const result = await engine.client.search({
    index: engine.names.changes,
    size: 0,
    track_total_hits: false,
    query: { term: { loadId } },
    aggs: { kinds: { terms: { field: 'change', size: 3 } } },
  });
  const counts = { added: 0, dropped: 0, moved: 0 };
  for (const bucket of (result.aggregations?.kinds as { buckets: { key: keyof typeof counts; doc_count: number }[] })
    .buckets)
    counts[bucket.key] = bucket.doc_count;
  return counts;
}

/** Deletes the changes of one load (a load that failed, was refused or was killed). Returns how many went. */
export async function deleteChangesOf(engine: Engine, loadId: string): Promise<number> {
  return deleteWhere(engine, engine.names.changes, { term: { loadId } });
}

/**
 * Every change of `sourceId` made by the loads `loadIds`, sorted by compound id then load, a page
 * at a time, read from one point in time with search_after (memory bounded whatever their number).
 */
export async function* scanChanges(
  engine: Engine,
  sourceId: number,
  loadIds: string[],
  pageSize = 5_000,
): AsyncGenerator<ChangeDocument[]> {
  if (loadIds.length === 0) return;
  const opened = await engine.client.openPointInTime(
    { index: engine.names.changes, keep_alive: '2m', ignore_unavailable: true },
    { ignore: [404] },
  );
  let id = opened.id;
  if (!id) return;
  try {
    let after: (string | number)[] | undefined;
    for (;;) {
      const result = await engine.client.search<ChangeDocument>({
        pit: { id, keep_alive: '2m' },
        size: pageSize,
        track_total_hits: false,
        allow_partial_search_results: false,
        query: { bool: { filter: [{ term: { sourceId } }, { terms: { loadId: loadIds } }] } },
        // The point in time adds _shard_doc as the last tiebreaker.
        sort: [{ compoundId: 'asc' }, { loadStarted: 'asc' }],
        ...(after ? { search_after: after } : {}),
      });
      if (result._shards.failed > 0)
        throw new Error(`the engine read only part of the changes (${result._shards.failed} shards failed)`);
      id = result.pit_id ?? id;
      const hits = result.hits.hits;
      if (hits.length > 0) yield hits.map((hit) => hit._source!);
      if (hits.length < pageSize) return;
      after = hits[hits.length - 1].sort as (string | number)[];
    }
  } finally {
    await engine.client.closePointInTime({ id }).catch(() => undefined);
  }
}
