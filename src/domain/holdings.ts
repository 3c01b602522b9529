/**
 * What the service holds, as `npm run demo` and `npm start` say it when they start: its structures,
 * current assignments and sources, and the structures that no similarity or substructure search can
 * find because they have no fingerprint, with the reason their load recorded.
 */
import type { Engine } from '../engine/client';
import { fingerprintlessReasons } from '../engine/fingerprints';
import { indexFigures } from '../engine/lookups';
import { allSources } from '../engine/sources';

export interface Holdings {
  structures: number;
  currentAssignments: number;
  sources: number;
  /** Structures with no fingerprint. */
  withoutFingerprint: number;
  /** Why, as the loads recorded it, with how many structures each reason stands for. */
  withoutFingerprintReasons: Map<string, number>;
  /** Of those, the structures no kept load record speaks for. */
  withoutFingerprintUnrecorded: number;
}

/** Counts what the indices of `engine` hold. */
export async function holdingsOf(engine: Engine): Promise<Holdings> {
  const figures = await indexFigures(engine);
  if (figures.structures === 0)
    // Nothing loaded yet (the indices may not even exist): nothing more to count.
    return {
      structures: 0,
      currentAssignments: figures.current,
      sources: 0,
      withoutFingerprint: 0,
      withoutFingerprintReasons: new Map(),
      withoutFingerprintUnrecorded: 0,
    };
  const [sources, fingerprintless] = await Promise.all([allSources(engine), fingerprintlessReasons(engine)]);
  return {
    structures: figures.structures,
    currentAssignments: figures.current,
    sources: sources.length,
    withoutFingerprint: fingerprintless.count,
    withoutFingerprintReasons: fingerprintless.reasons,
    withoutFingerprintUnrecorded: fingerprintless.unrecorded,
  };
}

const counted = (count: number, word: string): string =>
  `${count.toLocaleString('en')} ${word}${count === 1 ? '' : 's'}`;

/** One line for what the service holds. */
export function holdingsLine(holdings: Holdings): string {
  return (
    `It holds ${counted(holdings.structures, 'structure')} and ${counted(holdings.currentAssignments, 'current assignment')} ` +
    `in ${counted(holdings.sources, 'source')}.`
  );
}

/**
 * One line for the structures with no fingerprint, and why, or none when every structure has one:
 * "6 structures have no fingerprint (RDKit could not read ...): similarity and substructure searches
 * cannot find them".
 */
export function fingerprintlessLine(holdings: Holdings): string | undefined {
  if (holdings.withoutFingerprint === 0) return undefined;
  const reasons = [...holdings.withoutFingerprintReasons].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (holdings.withoutFingerprintUnrecorded > 0)
    reasons.push([
      'not computed yet, or their reason is no longer kept: `npm run load -- fingerprints` computes them',
      holdings.withoutFingerprintUnrecorded,
    ]);
  const why = reasons.length === 1 ? reasons[0][0] : reasons.map(([reason, count]) => `${count}: ${reason}`).join('; ');
  const count = holdings.withoutFingerprint;
  return (
    `${counted(count, 'structure')} ${count === 1 ? 'has' : 'have'} no fingerprint (${why}): similarity and ` +
    `substructure searches cannot find ${count === 1 ? 'it' : 'them'}.`
  );
}
