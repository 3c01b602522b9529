/** Source metadata as the API shows it, and the link of a compound id in its source. */
import type { Engine } from '../engine/client';
import { allSources } from '../engine/sources';
import type { LoadRecord, SourceDocument } from '../engine/documents';

/** The link of a compound in its source: baseIdUrl + id (or + auxSrc when auxForUrl), null when the source has none. */
export function compoundUrl(source: SourceDocument, compoundId: string, auxSrc?: string | null): string | null {
  if (!source.baseIdUrlAvailable || !source.baseIdUrl) return null;
  if (source.auxForUrl) return auxSrc ? `${source.baseIdUrl}${auxSrc}` : null;
  return `${source.baseIdUrl}${compoundId}`;
}

/**
 * The rows a load wrote for one source: all of them when it loaded that source alone; its share of a
 * reference table or dump that loaded several, as the load recorded it (undefined for records
 * without it).
 */
export function rowsLoadedFor(record: LoadRecord, sourceId: number): number | undefined {
  return (record.sourceIds?.length ?? 1) > 1 ? record.rowsLoadedBySource?.[sourceId] : record.rowsLoaded;
}

/** The source metadata of the v1 API (docs/api.md), without internal fields. */
export function sourceView(source: SourceDocument): Omit<SourceDocument, 'retired'> {
  const { retired: _retired, ...view } = source;
  void _retired;
  return view;
}

/**
 * Every source, read at most once per `ttlMs`: sources change only when a curator loads, and each
 * request needs their names and links. Once read, the list is served while a newer one is being
 * read, so no request waits for that round trip (only the first ones after start-up, or after a
 * failed read, do).
 */
export class SourceCatalog {
  private current?: Promise<Map<number, SourceDocument>>;
  private readAt = 0;
  private refreshing?: Promise<unknown>;
  /** Bumped by `forget`, so that a read begun before it is not served after it. */
  private generation = 0;

  constructor(
    private readonly engine: Engine,
    private readonly ttlMs = 2_000,
  ) {}

  async all(): Promise<Map<number, SourceDocument>> {
    if (!this.current) {
      this.current = this.read();
      this.current.catch(() => {
        this.current = undefined;
      });
    } else if (Date.now() - this.readAt > this.ttlMs && !this.refreshing) {
      const generation = this.generation;
      this.refreshing = this.read()
        .then(
          (sources) => {
            if (generation === this.generation) this.current = Promise.resolve(sources);
          },
          () => undefined,
        )
        .finally(() => {
          this.refreshing = undefined;
        });
    }
    return this.current;
  }

  /** Reads the sources anew at the next request: the data was replaced (a restore). */
  forget(): void {
    this.generation += 1;
    this.current = undefined;
  }

  /** One source; a source missing from the list served waits for the newer list being read, if any. */
  async get(sourceId: number): Promise<SourceDocument | undefined> {
    const found = (await this.all()).get(sourceId);
    if (found || !this.refreshing) return found;
    await this.refreshing;
    return (await this.all()).get(sourceId);
  }

  private async read(): Promise<Map<number, SourceDocument>> {
    this.readAt = Date.now();
    return new Map((await allSources(this.engine)).map((s) => [s.sourceID, s]));
  }
}
