/** Reads only the legacy API needs: a whole source's assignments (mapping, mappingaux) and the release record. */
import type { XrefDocument } from '../domain/types';
import type { Engine } from './client';
import { EngineUnavailable } from './errors';

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
 * (compoundId, uci) order, paged with search_after in a point in time of the source's release, so
 * that a reload published between two pages cannot mix two releases in one answer. Only the three
 * fields a mapping needs are read back; a page missing shards fails the answer.
 */
export async function currentAssignmentsOfSource(engine: Engine, sourceId: number, withAuxSrc = false): Promise<SourceAssignment[]> {
  const opened = await engine.client.openPointInTime({ index: engine.names.xrefsOf(sourceId), keep_alive: '1m', ignore_unavailable: true }, { ignore: [404] });
  if (!opened.id) return [];
  const pit = { id: opened.id, keep_alive: '1m' };
  const found: SourceAssignment[] = [];
  let after: (string | number)[] | undefined;
  try {
    for (;;) {
      const size = 10_000;
      const result = await engine.client.search<SourceAssignment>({
        pit, size, allow_partial_search_results: false,
        // The source's own filter too: a dump's index holds other sources behind the alias's filter.
        query: { bool: { filter: [{ term: { sourceId } }, currentOf(withAuxSrc)] } } as never,
        sort: [{ compoundId: 'asc' }, { uci: 'asc' }],
        _source: ['compoundId', 'uci', 'auxSrc'],
        track_total_hits: false,
        ...(after ? { search_after: after } : {}),
      });
      if (result.timed_out || result._shards.failed > 0) throw new EngineUnavailable('the search engine answered only part of a mapping; try again shortly');
      const hits = result.hits.hits;
      for (const hit of hits) found.push(hit._source!);
      if (hits.length < size) return found;
      after = hits[hits.length - 1].sort as (string | number)[];
    }
  } finally {
    await engine.client.closePointInTime({ id: opened.id }, { ignore: [404] }).catch(() => undefined);
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
