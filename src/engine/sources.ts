/** The sources index: metadata of every source database, with its exact UCI count. */
import type { SourceDocument } from '../domain/types';
import type { Engine } from './client';

/** Every source, by sourceID. */
export async function allSources(engine: Engine): Promise<SourceDocument[]> {
  const result = await engine.client.search<SourceDocument>({ index: engine.names.sources, size: 10_000, sort: [{ sourceID: 'asc' }] });
  return result.hits.hits.map((hit) => hit._source!);
}

/** One source, or undefined. */
export async function sourceById(engine: Engine, sourceId: number): Promise<SourceDocument | undefined> {
  const result = await engine.client.get<SourceDocument>({ index: engine.names.sources, id: String(sourceId) }, { ignore: [404] });
  return result.found ? result._source : undefined;
}

/** Writes one source's metadata whole (there is no scripting to patch it in place). */
export async function putSource(engine: Engine, source: SourceDocument): Promise<void> {
  await engine.client.index({ index: engine.names.sources, id: String(source.sourceID), document: source, refresh: true });
}

/**
 * The exact number of distinct structures with a current assignment, per source, in `index` (one
 * release, of one source or of a whole dump). A composite aggregation pages through every
 * (source, UCI) pair, so the counts are exact, unlike `cardinality`.
 */
export async function countCurrentUcis(engine: Engine, index: string): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  let after: Record<string, unknown> | undefined;
  for (;;) {
    const result = await engine.client.search({
      index, size: 0, query: { term: { assignment: 1 } },
      aggs: {
        ucis: {
          composite: {
            size: 10_000,
            sources: [{ sourceId: { terms: { field: 'sourceId' } } }, { uci: { terms: { field: 'uci' } } }],
            ...(after ? { after } : {}),
          },
        },
      },
    });
    const agg = result.aggregations?.ucis as { buckets: { key: { sourceId: number } }[]; after_key?: Record<string, unknown> };
    for (const bucket of agg.buckets) counts.set(bucket.key.sourceId, (counts.get(bucket.key.sourceId) ?? 0) + 1);
    if (agg.buckets.length < 10_000 || !agg.after_key) return counts;
    after = agg.after_key;
  }
}
