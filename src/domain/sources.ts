/** Source metadata as the API shows it, and the link of a compound id in its source. */
import type { Engine } from '../engine/client';
import { allSources } from '../engine/sources';
import type { SourceDocument } from './types';

/** The link of a compound in its source: baseIdUrl + id (or + auxSrc when auxForUrl), null when the source has none. */
export function compoundUrl(source: SourceDocument, compoundId: string, auxSrc?: string | null): string | null {
  if (!source.baseIdUrlAvailable || !source.baseIdUrl) return null;
  if (source.auxForUrl) return auxSrc ? `${source.baseIdUrl}${auxSrc}` : null;
  return `${source.baseIdUrl}${compoundId}`;
}

/** The source metadata of the v1 API (SPEC §3), without internal fields. */
export function sourceView(source: SourceDocument): Omit<SourceDocument, 'retired'> {
  const { retired: _retired, ...view } = source;
  void _retired;
  return view;
}

/**
 * Every source, read at most once per `ttlMs`: sources change only when a curator loads, and each
 * request needs their names and links.
 */
export class SourceCatalog {
  private cached?: { at: number; sources: Promise<Map<number, SourceDocument>> };

  constructor(private readonly engine: Engine, private readonly ttlMs = 2_000) {}

  async all(): Promise<Map<number, SourceDocument>> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > this.ttlMs) {
      const sources = allSources(this.engine).then((list) => new Map(list.map((s) => [s.sourceID, s])));
      this.cached = { at: now, sources };
      sources.catch(() => { this.cached = undefined; });
    }
    return this.cached.sources;
  }

  async get(sourceId: number): Promise<SourceDocument | undefined> {
    return (await this.all()).get(sourceId);
  }
}
