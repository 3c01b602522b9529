/** Sorted searches read a page at a time. */
import type { SearchRequest } from '@elastic/elasticsearch/lib/api/types';
import type { Engine } from './client';

/** The most hits one search returns (the engine's index.max_result_window). */
export const maxResultWindow = 10_000;

/**
 * The `_source` of every hit of a sorted search, up to `limit`, paged with search_after. The first
 * page holds 100: most lookups find a handful, and the sort buffers the engine allocates for a query
 * follow its page size. Later pages hold 5,000.
 */
export async function sortedSources<T>(engine: Engine, request: SearchRequest & { sort: object[] }, limit: number): Promise<T[]> {
  const found: T[] = [];
  let after: (string | number)[] | undefined;
  while (found.length < limit) {
    const size = Math.min(after ? 5_000 : 100, limit - found.length);
    const result = await engine.search<T>({ ...request, size, track_total_hits: false, ...(after ? { search_after: after } : {}) });
    const hits = result.hits.hits;
    for (const hit of hits) found.push(hit._source!);
    if (hits.length < size) break;
    after = hits[hits.length - 1].sort as (string | number)[];
  }
  return found;
}
