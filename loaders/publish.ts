/** Publishing a written source release: seal it, count its structures, swap the aliases, update the source. */
import type { SourceDocument } from '../src/domain/types';
import type { Engine } from '../src/engine/client';
import { publishRelease, sealReleaseIndex } from '../src/engine/schema';
import { countCurrentUcis, putSource } from '../src/engine/sources';

/**
 * Makes `index` the source's served release in one atomic alias call and stores the exact number of
 * structures it currently holds. Readers see the old release until the swap, the new one after.
 */
export async function publishSourceRelease(
  engine: Engine, source: SourceDocument, index: string, options: { touch: boolean; retired?: boolean },
): Promise<number> {
  await sealReleaseIndex(engine, index);
  const uciCount = await countCurrentUcis(engine, index);
  await publishRelease(engine, source.sourceID, index);
  const updated: SourceDocument = { ...source, UCICount: uciCount };
  delete updated.retired;
  if (options.retired) updated.retired = true;
  // A curator's reload is an update of the source; a dump keeps the dates its source table gives.
  if (options.touch) updated.lastUpdated = new Date().toISOString();
  await putSource(engine, updated);
  return uciCount;
}
