/** Reads of the compounds index: structures by InChIKey, by UCI, by connectivity block. */
import type { CompoundDocument } from './documents';
import type { Engine } from './client';
import { deleteWhere } from './loads';
import { maxResultWindow } from './limits';
import { sortedSources } from './paging';

/** `values` without repeats, in slices of at most `maxResultWindow`: one search each. */
function uniqueSlices<T>(values: T[]): T[][] {
  const unique = [...new Set(values)];
  const slices: T[][] = [];
  for (let start = 0; start < unique.length; start += maxResultWindow)
    slices.push(unique.slice(start, start + maxResultWindow));
  return slices;
}

/**
 * The structures among `keys` that are indexed, by key (`_id` = InChIKey). A search rather than an
 * mget, so that it shares its round trip with the lookup's other searches (batch.ts); API reads
 * see published data, which is refreshed.
 */
export async function compoundsByKey(engine: Engine, keys: string[]): Promise<Map<string, CompoundDocument>> {
  const found = new Map<string, CompoundDocument>();
  for (const slice of uniqueSlices(keys)) {
    const result = await engine.search<CompoundDocument>({
      index: engine.names.compounds,
      size: slice.length,
      query: { ids: { values: slice } },
      _source: { excludes: ['loadId'] },
      track_total_hits: false,
    });
    for (const hit of result.hits.hits) found.set(hit._id!, hit._source!);
  }
  return found;
}

/** The UCI of each of `keys` that is indexed (one realtime mget that reads back only the UCI). */
export async function ucisByKey(engine: Engine, keys: string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  if (keys.length === 0) return found;
  const result = await engine.client.mget<{ uci: number }>({
    index: engine.names.compounds,
    ids: keys,
    _source_includes: ['uci'],
    filter_path: ['docs._id', 'docs.found', 'docs._source'],
  });
  for (const doc of result.docs) {
    if ('found' in doc && doc.found && doc._source) found.set(doc._id, doc._source.uci);
  }
  return found;
}

/** The structures with the given UCIs, by UCI; `fields` limits what is read back. */
export async function compoundsByUci(
  engine: Engine,
  ucis: number[],
  fields?: string[],
): Promise<Map<number, CompoundDocument>> {
  const found = new Map<number, CompoundDocument>();
  for (const slice of uniqueSlices(ucis)) {
    const result = await engine.search<CompoundDocument>({
      index: engine.names.compounds,
      size: slice.length,
      query: { terms: { uci: slice } },
      track_total_hits: false,
      _source: fields ?? { excludes: ['loadId'] },
    });
    for (const hit of result.hits.hits) found.set(hit._source!.uci, hit._source!);
  }
  return found;
}

/** Structures matching `query` in UCI order, up to `limit`. */
function compoundsWhere(engine: Engine, query: object, limit: number): Promise<CompoundDocument[]> {
  return sortedSources<CompoundDocument>(
    engine,
    {
      index: engine.names.compounds,
      query: query as never,
      sort: [{ uci: 'asc' }],
      _source: { excludes: ['loadId'] },
    },
    limit,
  );
}

/** Every structure whose whole-structure connectivity block is `block`, up to `limit`. */
export function compoundsByConnectivityBlock(
  engine: Engine,
  block: string,
  limit: number,
): Promise<CompoundDocument[]> {
  return compoundsWhere(engine, { term: { connectivityBlock: block } }, limit);
}

/** Multi-component structures that have a component with connectivity block `block`, up to `limit`. */
export function compoundsWithComponent(engine: Engine, block: string, limit: number): Promise<CompoundDocument[]> {
  return compoundsWhere(engine, { term: { 'components.connectivityBlock': block } }, limit);
}

/** How many multi-component structures contain a component with connectivity block `block`. */
export async function countStructuresWithComponent(engine: Engine, block: string): Promise<number> {
  const result = await engine.search({
    index: engine.names.compounds,
    size: 0,
    query: { term: { 'components.connectivityBlock': block } },
    track_total_hits: true,
  });
  return (result.hits.total as { value: number }).value;
}

/**
 * Creates new structures (op_type create on `_id` = InChIKey) and returns the UCI each key ends up
 * with: its own, or, when a concurrent load created the key first, the winner's (the loser's UCI
 * is simply never used: UCIs may have gaps, never duplicates).
 */
export async function createCompounds(engine: Engine, documents: CompoundDocument[]): Promise<Map<string, number>> {
  const ucis = new Map<string, number>();
  if (documents.length === 0) return ucis;
  const operations = documents.flatMap((doc) => [
    { create: { _index: engine.names.compounds, _id: doc.standardInchiKey } },
    doc,
  ]);
  const result = await engine.client.bulk({ operations });
  const lost: string[] = [];
  result.items.forEach((item, i) => {
    const outcome = item.create!;
    const key = documents[i].standardInchiKey;
    if (outcome.status === 201 || outcome.status === 200) ucis.set(key, documents[i].uci);
    else if (outcome.status === 409) lost.push(key);
    else throw new Error(`the engine refused structure ${key}: ${outcome.error?.reason ?? outcome.status}`);
  });
  for (const [key, winner] of await ucisByKey(engine, lost)) ucis.set(key, winner);
  return ucis;
}

export type StructureRef = { standardInchiKey: string; connectivityBlock: string };

/**
 * The key and connectivity block (the key's first block) of the structures with the given UCIs,
 * read from doc values. Not `compoundsByUci`: that reads `_source`, and every document fetched
 * costs a stored-fields block decompression (about 0.6 ms each when the index used
 * best_compression, an hour of engine time for UniChem's 170 million assignments); doc values of
 * these fields cost ~1/15th of that.
 */
export async function structureRefsByUci(engine: Engine, ucis: number[]): Promise<Map<number, StructureRef>> {
  const found = new Map<number, StructureRef>();
  for (const slice of uniqueSlices(ucis)) {
    const result = await engine.client.search({
      index: engine.names.compounds,
      size: slice.length,
      query: { terms: { uci: slice } },
      _source: false,
      stored_fields: ['_none_'],
      docvalue_fields: ['uci', 'standardInchiKey'],
      track_total_hits: false,
      filter_path: ['hits.hits.fields'],
    });
    if (!result.hits) continue; // filter_path leaves no `hits` when nothing matched
    for (const hit of result.hits.hits) {
      const fields = hit.fields as { uci: number[]; standardInchiKey: string[] };
      const standardInchiKey = fields.standardInchiKey[0];
      found.set(fields.uci[0], { standardInchiKey, connectivityBlock: standardInchiKey.slice(0, 14) });
    }
  }
  return found;
}

/**
 * Deletes the structures that load `loadId` created and that no assignment of any release index
 * refers to (a failed or refused load's new structures, invisible to lookups but counted by
 * `/rest/release`). Returns how many were deleted.
 */
export async function removeOrphanStructuresOf(engine: Engine, loadId: string): Promise<number> {
  let removed = 0;
  let after: Record<string, unknown> | undefined;
  for (;;) {
    const result = await engine.client.search(
      {
        index: engine.names.compounds,
        size: 0,
        query: { term: { loadId } },
        aggs: {
          ucis: {
            composite: { size: 5_000, sources: [{ uci: { terms: { field: 'uci' } } }], ...(after ? { after } : {}) },
          },
        },
      },
      { ignore: [404] },
    );
    const agg = result.aggregations?.ucis as
      { buckets: { key: { uci: number } }[]; after_key?: Record<string, unknown> } | undefined;
    const ucis = (agg?.buckets ?? []).map((bucket) => bucket.key.uci);
    if (ucis.length === 0) return removed;
    const used = await engine.client.search({
      index: `${engine.names.assignments}-*`,
      size: 0,
      ignore_unavailable: true,
      allow_no_indices: true,
      query: { terms: { uci: ucis } },
      aggs: { ucis: { terms: { field: 'uci', size: ucis.length } } },
    });
    const referenced = new Set(
      ((used.aggregations?.ucis as { buckets: { key: number }[] } | undefined)?.buckets ?? []).map(
        (bucket) => bucket.key,
      ),
    );
    const orphans = ucis.filter((uci) => !referenced.has(uci));
    if (orphans.length > 0)
      removed += await deleteWhere(engine, engine.names.compounds, {
        bool: { filter: [{ term: { loadId } }, { terms: { uci: orphans } }] },
      });
    after = agg?.after_key;
    if (!after) return removed;
  }
}
