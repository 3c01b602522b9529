/** Reads only the legacy API needs: a whole source's assignments (mapping, mappingaux) and the release record. */
import type { XrefDocument } from '../domain/types';
import type { Engine } from './client';

export type SourceAssignment = Pick<XrefDocument, 'compoundId' | 'uci' | 'auxSrc'>;

function currentOf(withAuxSrc: boolean): object {
  return { bool: { filter: [{ term: { assignment: 1 } }, ...(withAuxSrc ? [{ exists: { field: 'auxSrc' } }] : [])] } };
}

/** How many current assignments one source has (`withAuxSrc`: only those carrying auxiliary data). */
export async function countCurrentAssignments(engine: Engine, sourceId: number, withAuxSrc = false): Promise<number> {
  const result = await engine.client.count({ index: engine.names.xrefsOf(sourceId), ignore_unavailable: true, allow_no_indices: true, query: currentOf(withAuxSrc) });
  return result.count;
}

/**
 * Every current assignment of one source (`withAuxSrc`: only those carrying auxiliary data), in
 * (compoundId, uci) order, paged with search_after over the source's alias. Only the three fields a
 * mapping needs are read back.
 */
export async function currentAssignmentsOfSource(engine: Engine, sourceId: number, withAuxSrc = false): Promise<SourceAssignment[]> {
  const found: SourceAssignment[] = [];
  let after: (string | number)[] | undefined;
  for (;;) {
    const size = 10_000;
    const result = await engine.client.search<SourceAssignment>({
      index: engine.names.xrefsOf(sourceId), size, ignore_unavailable: true, allow_no_indices: true,
      query: currentOf(withAuxSrc) as never,
      sort: [{ compoundId: 'asc' }, { uci: 'asc' }],
      _source: ['compoundId', 'uci', 'auxSrc'],
      track_total_hits: false,
      ...(after ? { search_after: after } : {}),
    });
    const hits = result.hits.hits;
    for (const hit of hits) found.push(hit._source!);
    if (hits.length < size) return found;
    after = hits[hits.length - 1].sort as (string | number)[];
  }
}

/** The release of the whole index: how many loads have completed, and when the last one ended. */
export async function releaseOfIndex(engine: Engine): Promise<{ release: number; date: string | null }> {
  const result = await engine.client.search<{ ended: string | null }>({
    index: engine.names.meta, size: 1, _source: ['ended'],
    query: { bool: { filter: [{ term: { kind: 'load' } }, { term: { status: 'done' } }], must_not: [{ term: { dryRun: true } }] } },
    sort: [{ ended: { order: 'desc', unmapped_type: 'date' } }],
    track_total_hits: true,
  }, { ignore: [404] });
  const total = result.hits?.total;
  const release = typeof total === 'number' ? total : total?.value ?? 0;
  return { release, date: result.hits?.hits?.[0]?._source?.ended ?? null };
}
