/** The assignments indices: one document per assignment, one physical index per release. */
import { createHash } from 'node:crypto';
import type { AssignmentDocument } from './documents';
import { bulkLinesAfter } from './bulk';
import type { Engine } from './client';

/**
 * The `_id` of an assignment: one document per (source, structure, compound id) in a release, so a
 * row repeated in a file is written once, two sources with the same id for one structure (PubChem
 * and NCI both number their compounds) stay two documents in a dump's shared index, and an old
 * release's assignment can be looked up by id.
 */
export function assignmentId(sourceId: number, uci: number, compoundId: string): string {
  const id = `${sourceId}:${uci}:${compoundId}`;
  // _id is limited to 512 bytes; compound ids may be anything, of any length.
  return Buffer.byteLength(id) <= 500
    ? id
    : `${sourceId}:${uci}:sha256:${createHash('sha256').update(compoundId).digest('hex')}`;
}

/**
 * An assignment's two lines of a bulk body (`start`: `actionStart('index', release)`, made once per
 * batch). The document text is `JSON.stringify(document)`'s, field for field, written in one
 * template instead of by the serialiser's general walk of the object (a reference load writes 1.6
 * million per 500,000 structures). Keys and blocks come from the compounds index, checked when
 * loaded; compound ids may hold any character and are escaped.
 */
export function assignmentBulkLines(start: string, id: string, document: AssignmentDocument): string {
  const auxSrc = document.auxSrc === undefined ? '' : `,"auxSrc":${JSON.stringify(document.auxSrc)}`;
  return bulkLinesAfter(
    start,
    id,
    `{"sourceId":${document.sourceId},"compoundId":${JSON.stringify(document.compoundId)},"uci":${document.uci},"assignment":${document.assignment},"standardInchiKey":"${document.standardInchiKey}","connectivityBlock":"${document.connectivityBlock}"${auxSrc}}`,
  );
}

/**
 * Walks every assignment of one source in a release index in (uci, compoundId) order, a page at a
 * time, with search_after (a dump's index holds other sources too).
 */
export async function* scanSourceAssignments(
  engine: Engine,
  index: string,
  sourceId: number,
  pageSize = 5_000,
): AsyncGenerator<AssignmentDocument[]> {
  let after: (string | number)[] | undefined;
  for (;;) {
    const result = await engine.client.search<AssignmentDocument>({
      index,
      size: pageSize,
      query: { term: { sourceId } },
      sort: [{ uci: 'asc' }, { compoundId: 'asc' }],
      ...(after ? { search_after: after } : {}),
    });
    const hits = result.hits.hits;
    if (hits.length === 0) return;
    yield hits.map((hit) => hit._source!);
    after = hits[hits.length - 1].sort as (string | number)[];
    if (hits.length < pageSize) return;
  }
}

/** Which of `ids` exist in `index` (one mget, sources not read). */
export async function existingIds(engine: Engine, index: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const result = await engine.client.mget({ index, ids, _source: false });
  return new Set(result.docs.filter((doc) => 'found' in doc && doc.found).map((doc) => doc._id));
}

/** Which of the assignments `ids` (their `_id`s) are current in `index` (one search by id, no document read). */
export async function currentIds(engine: Engine, index: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const result = await engine.client.search({
    index,
    size: ids.length,
    track_total_hits: false,
    _source: false,
    query: { bool: { filter: [{ ids: { values: ids } }, { term: { assignment: 1 } }] } },
  });
  return new Set(result.hits.hits.map((hit) => hit._id!));
}

/** Number of assignments in an index, current or all. */
export async function countAssignments(engine: Engine, index: string, currentOnly: boolean): Promise<number> {
  const result = await engine.client.count({
    index,
    query: currentOnly ? { term: { assignment: 1 } } : { match_all: {} },
  });
  return result.count;
}

/** Current assignments of one source in an index or alias (0 when it does not exist). */
export async function countCurrentOfSource(engine: Engine, index: string, sourceId: number): Promise<number> {
  const result = await engine.client.count({
    index,
    ignore_unavailable: true,
    allow_no_indices: true,
    query: { bool: { filter: [{ term: { sourceId } }, { term: { assignment: 1 } }] } },
  });
  return result.count;
}

/** Which of `compoundIds` are current ids of the source in `index`. */
export async function currentCompoundIds(
  engine: Engine,
  index: string,
  sourceId: number,
  compoundIds: string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  const unique = [...new Set(compoundIds)];
  for (let start = 0; start < unique.length; start += 5_000) {
    const chunk = unique.slice(start, start + 5_000);
    const result = await engine.client.search<{ compoundId: string }>({
      index,
      size: 0,
      track_total_hits: false,
      query: {
        bool: { filter: [{ term: { sourceId } }, { term: { assignment: 1 } }, { terms: { compoundId: chunk } }] },
      },
      aggs: { ids: { terms: { field: 'compoundId', size: chunk.length } } },
    });
    for (const bucket of (result.aggregations?.ids as { buckets: { key: string }[] }).buckets) found.add(bucket.key);
  }
  return found;
}

/**
 * The UCIs each of `compoundIds` is currently assigned to in the source's release `index` (ids with
 * none are left out). Asked 1,000 ids at a time; a group whose ids hold more assignments than one
 * answer carries is asked again in halves.
 */
export async function currentUcisOf(
  engine: Engine,
  index: string,
  sourceId: number,
  compoundIds: Iterable<string>,
): Promise<Map<string, Set<number>>> {
  const found = new Map<string, Set<number>>();
  const maxHits = 10_000;
  const ask = async (chunk: string[]): Promise<void> => {
    // From doc values: no stored document is read.
    const result = await engine.client.search({
      index,
      size: maxHits,
      track_total_hits: false,
      _source: false,
      docvalue_fields: ['compoundId', 'uci'],
      query: {
        bool: { filter: [{ term: { sourceId } }, { term: { assignment: 1 } }, { terms: { compoundId: chunk } }] },
      },
    });
    const hits = result.hits.hits;
    if (hits.length >= maxHits && chunk.length > 1) {
      await ask(chunk.slice(0, chunk.length >> 1));
      await ask(chunk.slice(chunk.length >> 1));
      return;
    }
    for (const hit of hits) {
      const compoundId = String(hit.fields!.compoundId[0]);
      const uci = Number(hit.fields!.uci[0]);
      if (!found.has(compoundId)) found.set(compoundId, new Set());
      found.get(compoundId)!.add(uci);
    }
  };
  const unique = [...new Set(compoundIds)];
  for (let start = 0; start < unique.length; start += 1_000) await ask(unique.slice(start, start + 1_000));
  return found;
}

/** Current and obsolete assignments of each source in an index or alias (its filters applied). */
export async function assignmentsPerSource(
  engine: Engine,
  index: string,
): Promise<Map<number, { current: number; obsolete: number }>> {
  const result = await engine.client.search({
    index,
    size: 0,
    track_total_hits: false,
    ignore_unavailable: true,
    allow_no_indices: true,
    aggs: {
      sources: {
        terms: { field: 'sourceId', size: 10_000 },
        aggs: { assignment: { terms: { field: 'assignment', size: 2 } } },
      },
    },
  });
  const figures = new Map<number, { current: number; obsolete: number }>();
  type Bucket = { key: number; assignment: { buckets: { key: number; doc_count: number }[] } };
  for (const bucket of (result.aggregations?.sources as { buckets: Bucket[] } | undefined)?.buckets ?? []) {
    const count = (assignment: number): number =>
      bucket.assignment.buckets.find((b) => b.key === assignment)?.doc_count ?? 0;
    figures.set(bucket.key, { current: count(1), obsolete: count(0) });
  }
  return figures;
}

/**
 * `search` again while the engine answers that it is too busy (429: its search queue is full, as
 * when a scan shares it with a service at its peak), waiting a little longer each time, up to a minute.
 */
async function busyRetried<T>(search: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await search();
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 429 || attempt >= 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

/** A slice of a sliced scan: one of `max` parts of the point in time `pit` (see `openScan`). */
export interface ScanSlice {
  id: number;
  max: number;
  pit: string;
}

/**
 * Opens the point in time that the slices of one sliced scan of `from` share, for `scanAssignments`;
 * close it with `closeScan`. The engine splits a point in time by its shard copies' own document
 * numbers: slices of different points in time may read different copies of a shard (a primary and
 * its replica, whose documents are numbered apart) and so overlap and miss documents.
 */
export async function openScan(engine: Engine, from: string): Promise<string> {
  return (await engine.client.openPointInTime({ index: from, keep_alive: '5m' })).id;
}

export async function closeScan(engine: Engine, pit: string): Promise<void> {
  await engine.client.closePointInTime({ id: pit }).catch(() => undefined);
}

/**
 * Every assignment that `from` (an index or alias, its filters applied) shows, with its `_id`, a
 * page at a time, all read from one point in time (a release published meanwhile changes nothing).
 * `query` narrows it; `slice` reads one of `max` disjoint parts of a point in time opened by
 * `openScan`, so that several readers can share a copy.
 */
export async function* scanAssignments(
  engine: Engine,
  from: string,
  { pageSize = 5_000, query, slice }: { pageSize?: number; query?: object; slice?: ScanSlice } = {},
): AsyncGenerator<{ id: string; assignment: AssignmentDocument }[]> {
  const owned = !slice;
  let id = slice?.pit ?? (await openScan(engine, from));
  try {
    let after: (string | number)[] | undefined;
    for (;;) {
      const result = await busyRetried(() =>
        engine.client.search<AssignmentDocument>({
          pit: { id, keep_alive: '5m' },
          size: pageSize,
          sort: [{ _shard_doc: 'asc' }],
          track_total_hits: false,
          allow_partial_search_results: false,
          ...(query ? { query: query as never } : {}),
          ...(slice && slice.max > 1 ? { slice: { id: slice.id, max: slice.max } } : {}),
          ...(after ? { search_after: after } : {}),
        }),
      );
      if (result._shards.failed > 0)
        throw new Error(`the engine read only part of ${from} (${result._shards.failed} shards failed)`);
      id = result.pit_id ?? id;
      const hits = result.hits.hits;
      if (hits.length > 0) yield hits.map((hit) => ({ id: hit._id!, assignment: hit._source! }));
      if (hits.length < pageSize) return;
      after = hits[hits.length - 1].sort as (string | number)[];
    }
  } finally {
    if (owned) await closeScan(engine, id);
  }
}
