/**
 * The release guard: a release that would empty or gut a source is refused before it is published
 * (a header-only file, a file whose rows are all rejected, a table cut in half), unless the curator
 * says the shrink is wanted (`--allow-shrink`). Nothing served changes when a release is refused.
 */
import type { Config } from '../src/config';

/** What the guard weighs for one source's release. */
export interface ReleaseFigures {
  sourceId: number;
  /** Current ids the source serves now (0 when it has no release yet). */
  currentBefore: number;
  /** Of those, how many the new release no longer holds as current. */
  dropped: number;
}

/** A release the guard refused; the load's summary carries `refused` with the reasons. */
export class ReleaseRefused extends Error {
  constructor(readonly reasons: string[]) {
    super(`release refused, nothing published: ${reasons.join('; ')}. Pass --allow-shrink if this is intended`);
  }
}

const percent = (share: number): string => `${Math.round(share * 1000) / 10} %`;

/**
 * Why this load must not be published (empty when it may be): no row loaded, more than
 * MAX_REJECT_RATIO of its rows rejected, or, for any source, more than MAX_RELEASE_DROP of its
 * current ids dropped.
 */
export function refusalReasons(
  counts: { rowsRead: number; rowsLoaded: number; rowsRejected: number },
  sources: ReleaseFigures[],
  config: Pick<Config, 'MAX_RELEASE_DROP' | 'MAX_REJECT_RATIO'>,
): string[] {
  const reasons: string[] = [];
  if (counts.rowsLoaded === 0) {
    reasons.push(
      counts.rowsRead === 0 ? 'the release holds no rows' : `the release loads 0 of its ${counts.rowsRead} rows`,
    );
  }
  const rejected = counts.rowsRead > 0 ? counts.rowsRejected / counts.rowsRead : 0;
  if (counts.rowsLoaded > 0 && rejected > config.MAX_REJECT_RATIO) {
    reasons.push(
      `${counts.rowsRejected} of ${counts.rowsRead} rows rejected ` +
        `(${percent(rejected)}, more than MAX_REJECT_RATIO ${percent(config.MAX_REJECT_RATIO)})`,
    );
  }
  for (const source of sources) {
    if (source.currentBefore === 0) continue;
    const share = source.dropped / source.currentBefore;
    if (share > config.MAX_RELEASE_DROP) {
      reasons.push(
        `source ${source.sourceId} would drop ${source.dropped} of its ` +
          `${source.currentBefore} current ids (${percent(share)}, more than ` +
          `MAX_RELEASE_DROP ${percent(config.MAX_RELEASE_DROP)})`,
      );
    }
  }
  return reasons;
}
