/** Sorted searches read a page at a time. */
import type { estypes } from '@elastic/elasticsearch';
import type { Engine } from './client';
import { EngineUnavailable } from './errors';

const firstPage = 100;
export const laterPages = 5_000;

/**
 * The `_source` of every hit of a sorted search, up to `limit`. The first page holds `firstHits`
 * (100 unless the caller expects more): most lookups find a handful, and the sort buffers the engine
 * allocates for a query follow its page size. An answer longer than that is read again from its start
 * under one point in time, in pages of 5,000 with search_after, so that a release published between
 * two pages cannot give one answer pages of two releases (an id twice, or missing).
 */
export async function sortedSources<T>(
  engine: Engine,
  request: estypes.SearchRequest & { sort: object[] },
  limit: number,
  firstHits = firstPage,
): Promise<T[]> {
  // A full first page even under a smaller limit (cut here): merged with other requests' searches
  // of its shape (merge.ts), a page of 1 ("is there any?") comes back full and most of the searches
  // in it go again alone, a second round trip for most connectivity searches.
  const hits = (await engine.search<T>({ ...request, size: firstHits, track_total_hits: false })).hits.hits;
  if (hits.length < firstHits || limit <= firstHits) return hits.slice(0, limit).map((hit) => hit._source!);
  return sortedSourcesAtOnePoint(engine, request, limit);
}

/** Every page of a sorted search from one point in time of its indices. */
async function sortedSourcesAtOnePoint<T>(
  engine: Engine,
  request: estypes.SearchRequest & { sort: object[] },
  limit: number,
): Promise<T[]> {
  // The body without the parameters of a search by index, which a search in a point in time refuses.
  const { index, ignore_unavailable, allow_no_indices: _unused, ...body } = request;
  const { id } = await engine.client.openPointInTime({ index: index!, keep_alive: '1m', ignore_unavailable });
  try {
    const found: T[] = [];
    let after: (string | number)[] | undefined;
    while (found.length < limit) {
      const size = Math.min(laterPages, limit - found.length);
      const result = await engine.client.search<T>({
        ...body,
        pit: { id, keep_alive: '1m' },
        size,
        track_total_hits: false,
        allow_partial_search_results: false,
        ...(after ? { search_after: after } : {}),
      });
      if (result.timed_out || result._shards.failed > 0)
        throw new EngineUnavailable('the search engine answered only part of a search; try again shortly');
      const hits = result.hits.hits;
      for (const hit of hits) found.push(hit._source!);
      if (hits.length < size) break;
      after = hits[hits.length - 1].sort as (string | number)[];
    }
    return found;
  } finally {
    await engine.client.closePointInTime({ id }).catch(() => undefined);
  }
}
