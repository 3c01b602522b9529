/** Publishing a written release: seal it, count its structures, swap the aliases, update the sources. */
import type { SourceDocument } from '../src/engine/documents';
import type { Engine } from '../src/engine/client';
import { publishReleases, sealReleaseIndex } from '../src/engine/schema';
import { countCurrentUcis, putSource } from '../src/engine/sources';

/**
 * Makes `index` the served release of every source of `sources` in one atomic alias call and stores
 * the exact number of structures each currently holds (`uciCounts` when the loader counted them on
 * the way; else the engine counts). Readers see the old releases until the swap, the new ones after.
 * Returns the UCI count of each source.
 */
export async function publishSourceReleases(
  engine: Engine, sources: SourceDocument[], index: string,
  options: { touch: boolean; retired?: boolean; uciCounts?: Map<number, number>; onNote?: (note: string) => void },
): Promise<Map<number, number>> {
  const underReplicated = await sealReleaseIndex(engine, index);
  if (underReplicated) options.onNote?.(underReplicated);
  const uciCounts = options.uciCounts ?? await countCurrentUcis(engine, index);
  await publishReleases(engine, index, sources.map((source) => source.sourceID));
  for (const source of sources) {
    const updated: SourceDocument = { ...source, UCICount: uciCounts.get(source.sourceID) ?? 0 };
    delete updated.retired;
    if (options.retired) updated.retired = true;
    // A curator's reload is an update of the source; a dump keeps the dates its source table gives.
    if (options.touch) updated.lastUpdated = new Date().toISOString();
    await putSource(engine, updated);
  }
  return uciCounts;
}

/** Publishes `index` as the release of one source; returns its UCI count. */
export async function publishSourceRelease(
  engine: Engine, source: SourceDocument, index: string, options: { touch: boolean; retired?: boolean; onNote?: (note: string) => void },
): Promise<number> {
  return (await publishSourceReleases(engine, [source], index, options)).get(source.sourceID) ?? 0;
}
