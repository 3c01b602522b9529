/** Publishing a written release: seal it, count its structures, swap the aliases, update the sources. */
import type { SourceDocument } from '../src/engine/documents';
import type { Engine } from '../src/engine/client';
import { publishReleases, recordReleaseSources, releaseFieldsOf, sealReleaseIndex } from '../src/engine/schema';
import { countCurrentUcis, putSource } from '../src/engine/sources';

/** The name and date of a source's release (srcReleaseNumber, srcReleaseDate as an ISO timestamp). */
export interface ReleaseName {
  number: string;
  date: string;
}

/**
 * The release a curator's load of one source publishes: as named by --release and --release-date,
 * else the source's last release number plus one (1 when it has none) dated at the load. A last
 * release that is not a whole number (`2025_01`) cannot count up: the curator names the next one.
 */
export function nextRelease(
  source: SourceDocument,
  asked: { number?: string; date?: string } = {},
  now = new Date(),
): ReleaseName {
  const last = source.srcReleaseNumber?.trim() || null;
  let number = asked.number;
  if (number === undefined) {
    if (last !== null && !/^[0-9]+$/.test(last)) {
      throw new Error(
        `source ${source.sourceID}'s last release is "${last}", which does not ` +
          `count up: name this one with --release (and --release-date)`,
      );
    }
    number = last === null ? '1' : String(BigInt(last) + 1n);
  }
  return { number, date: asked.date ?? now.toISOString() };
}

/**
 * Makes `index` the served release of every source of `sources` in one atomic alias call and stores
 * the exact number of structures each currently holds (`uciCounts` when the loader counted them on
 * the way; else the engine counts). Readers see the old releases until the swap, the new ones after.
 * Returns the UCI count of each source.
 */
export async function publishSourceReleases(
  engine: Engine,
  sources: SourceDocument[],
  index: string,
  options: {
    touch: boolean;
    retired?: boolean;
    uciCounts?: Map<number, number>;
    onNote?: (note: string) => void;
    release?: ReleaseName;
  },
): Promise<Map<number, number>> {
  const underReplicated = await sealReleaseIndex(engine, index);
  if (underReplicated) options.onNote?.(underReplicated);
  const uciCounts = options.uciCounts ?? (await countCurrentUcis(engine, index));
  const updated = sources.map((source) => {
    const next: SourceDocument = { ...source, UCICount: uciCounts.get(source.sourceID) ?? 0 };
    delete next.retired;
    if (options.retired) next.retired = true;
    // A curator's reload is an update of the source; a dump keeps the dates its source table gives.
    if (options.touch) next.lastUpdated = new Date().toISOString();
    if (options.release)
      Object.assign(next, { srcReleaseNumber: options.release.number, srcReleaseDate: options.release.date });
    return next;
  });
  // The release keeps its sources' release fields, for a rollback to it (and for the sweep to finish one).
  await recordReleaseSources(
    engine,
    index,
    new Map(updated.map((source) => [source.sourceID, releaseFieldsOf(source)])),
  );
  await publishReleases(
    engine,
    index,
    sources.map((source) => source.sourceID),
  );
  for (const source of updated) await putSource(engine, source);
  return uciCounts;
}

/** Publishes `index` as the release of one source; returns its UCI count. */
export async function publishSourceRelease(
  engine: Engine,
  source: SourceDocument,
  index: string,
  options: { touch: boolean; retired?: boolean; onNote?: (note: string) => void; release?: ReleaseName },
): Promise<number> {
  return (await publishSourceReleases(engine, [source], index, options)).get(source.sourceID) ?? 0;
}
