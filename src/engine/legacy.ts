/**
 * Reads only the legacy API needs: a source's current assignments a page at a time, joined page by
 * page against another source (mapping, mappingaux), and the release record.
 */
import type { AssignmentDocument } from './documents';
import type { Engine } from './client';
import { EngineUnavailable } from './errors';

export type SourceAssignment = Pick<AssignmentDocument, 'compoundId' | 'uci' | 'auxSrc'>;

/**
 * How many assignments one page of a whole-source read holds (at most the engine's
 * max_result_window, 10,000). A mapping answer holds about two pages of its source and the matching
 * assignments of the other source, whatever the sources' sizes. A setting, not a constant, so that
 * tests can cross page boundaries on a small fixture.
 */
export const wholeSourcePaging = { pageSize: 10_000 };

/**
 * A point in time lives this long after each page read with it. A client reading slower than one
 * page in this time gets a truncated answer (the point in time is gone) rather than holding an old
 * release open for ever.
 */
const keepAlive = '1m';

export interface WholeSourceReadOptions {
  /** Assignments a page (wholeSourcePaging.pageSize by default). */
  pageSize?: number;
  /** Aborts the engine request in flight; no page is read once it fired (the client went away). */
  signal?: AbortSignal;
}

type SortValues = (string | number)[];

function currentOf(withAuxSrc: boolean): object {
  return { bool: { filter: [{ term: { assignment: 1 } }, ...(withAuxSrc ? [{ exists: { field: 'auxSrc' } }] : [])] } };
}

/**
 * One source's current release, held by a point in time: every page read through it comes from the
 * same release, so that a reload published meanwhile cannot mix two releases in one answer. A
 * source without a release reads as empty. Close it when done (`close` never throws).
 */
export class SourceRelease {
  private constructor(
    private readonly engine: Engine,
    readonly sourceId: number,
    private readonly pit: string | undefined,
    private readonly pageSize: number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Opens a point in time on `sourceId`'s release alias. */
  static async open(engine: Engine, sourceId: number, options: WholeSourceReadOptions = {}): Promise<SourceRelease> {
    options.signal?.throwIfAborted();
    const opened = await engine.client.openPointInTime(
      { index: engine.names.assignmentsOf(sourceId), keep_alive: keepAlive, ignore_unavailable: true },
      { ignore: [404], signal: options.signal },
    );
    return new SourceRelease(
      engine,
      sourceId,
      opened.id || undefined,
      options.pageSize ?? wholeSourcePaging.pageSize,
      options.signal,
    );
  }

  /**
   * The current assignments of the source (`withAuxSrc`: only those carrying auxiliary data), in
   * (compoundId, uci) order (compound ids in UTF-8 byte order), one page at a time. Only what a
   * mapping needs is read back: the id and UCI from the sort values, auxSrc from doc values.
   */
  async *pages(withAuxSrc = false): AsyncGenerator<SourceAssignment[]> {
    let after: SortValues | undefined;
    do {
      const page = await this.page(currentOf(withAuxSrc), [{ compoundId: 'asc' }, { uci: 'asc' }], after, withAuxSrc);
      if (page.hits.length > 0)
        yield page.hits.map((hit) => ({
          compoundId: String(hit.sort[0]),
          uci: Number(hit.sort[1]),
          ...(withAuxSrc ? { auxSrc: hit.auxSrc ?? null } : {}),
        }));
      after = page.after;
    } while (after);
  }

  /**
   * The current compound ids of the source on each of `ucis`, each list in compoundId order (UCIs
   * without one are left out). `ucis` holds at most a page of UCIs (a terms query of at most
   * index.max_terms_count, 65,536); the answer may span several pages and is read whole.
   */
  async idsOnUcis(ucis: number[]): Promise<Map<number, string[]>> {
    const ids = new Map<number, string[]>();
    if (ucis.length === 0) return ids;
    const query = { bool: { filter: [currentOf(false), { terms: { uci: ucis } }] } };
    let after: SortValues | undefined;
    do {
      const page = await this.page(query, [{ uci: 'asc' }, { compoundId: 'asc' }], after);
      for (const { sort } of page.hits) {
        const [uci, compoundId] = [Number(sort[0]), String(sort[1])];
        const list = ids.get(uci);
        if (list) list.push(compoundId);
        else ids.set(uci, [compoundId]);
      }
      after = page.after;
    } while (after);
    return ids;
  }

  /** Releases the point in time (also after an abort: the close is not the aborted request). */
  async close(): Promise<void> {
    if (this.pit) await this.engine.client.closePointInTime({ id: this.pit }, { ignore: [404] }).catch(() => undefined);
  }

  /**
   * One sorted page after `after`: each hit's sort values (the compound id and UCI, all a mapping
   * needs) and, when `withAuxSrc`, its auxSrc from doc values; and the sort values to continue from
   * (none after the last page). No stored field is read, not even `_id`: fetching one for hits
   * that are not consecutive documents decompresses a block per hit (see exports.ts).
   */
  private async page(
    query: object,
    sort: object[],
    after: SortValues | undefined,
    withAuxSrc = false,
  ): Promise<{ hits: { sort: SortValues; auxSrc?: string }[]; after?: SortValues }> {
    if (!this.pit) return { hits: [] };
    this.signal?.throwIfAborted();
    const size = this.pageSize;
    const result = await this.engine.client.search(
      {
        pit: { id: this.pit, keep_alive: keepAlive },
        size,
        allow_partial_search_results: false,
        // The source's own filter too: a dump's index holds other sources behind the alias's filter.
        query: { bool: { filter: [{ term: { sourceId: this.sourceId } }, query] } } as never,
        sort: sort as never,
        stored_fields: ['_none_'],
        ...(withAuxSrc ? { docvalue_fields: ['auxSrc'] } : {}),
        track_total_hits: false,
        filter_path: ['timed_out', '_shards.failed', 'hits.hits.sort', 'hits.hits.fields'],
        ...(after ? { search_after: after } : {}),
      },
      { signal: this.signal },
    );
    if (result.timed_out || result._shards.failed > 0)
      throw new EngineUnavailable('the search engine answered only part of a mapping; try again shortly');
    // filter_path leaves no `hits` when nothing matched.
    const hits = (result.hits?.hits ?? []).map((hit) => ({
      sort: hit.sort as SortValues,
      auxSrc: (hit.fields as { auxSrc?: string[] } | undefined)?.auxSrc?.[0],
    }));
    return { hits, after: hits.length < size ? undefined : hits[hits.length - 1].sort };
  }
}

/** The release of the whole index: how many loads have completed, and when the last one ended. */
export async function releaseOfIndex(engine: Engine): Promise<{ release: number; date: string | null }> {
  const result = await engine.client.search<{ ended: string | null }>(
    {
      index: engine.names.meta,
      size: 1,
      _source: ['ended'],
      query: {
        bool: {
          filter: [{ term: { kind: 'load' } }, { term: { status: 'done' } }],
          must_not: [{ term: { dryRun: true } }],
        },
      },
      sort: [{ ended: { order: 'desc', unmapped_type: 'date' } }],
      track_total_hits: true,
    },
    { ignore: [404] },
  );
  const total = result.hits?.total;
  const release = typeof total === 'number' ? total : (total?.value ?? 0);
  return { release, date: result.hits?.hits?.[0]?._source?.ended ?? null };
}
