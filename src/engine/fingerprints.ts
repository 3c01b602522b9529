/**
 * The fingerprints index: one document a structure (`_id` = UCI) with the on-bits of its Morgan
 * fingerprint as terms scored 1 each (`similarity: boolean`), their count (`popcount`, the index's
 * sort), the on-bits of its pattern fingerprint and its molecule. Similarity and substructure
 * searches are plain queries on it: no script.
 */
import type { estypes } from '@elastic/elasticsearch';
import type { Engine } from './client';
import { Gate } from './gate';

export interface FingerprintDocument {
  uci: number;
  standardInchiKey: string;
  popcount: number;
  morgan: number[];
  pattern: number[];
  molecule: string;
}

/** A threshold as the fraction `share / scale`, so that every comparison is exact integer arithmetic. */
export interface Threshold {
  share: number;
  scale: number;
}

export function thresholdOf(value: number): Threshold {
  return { share: Math.round(value * 1_000_000), scale: 1_000_000 };
}

/**
 * The popcounts b a structure can have and still reach the threshold against a query of `a` bits,
 * in runs of equal `shared`: the fewest bits it must share with the query, ⌈t(a + b) / (1 + t)⌉
 * (from c / (a + b − c) ≥ t). Tanimoto ≤ min(a, b) / max(a, b) bounds b to [⌈ta⌉, ⌊a/t⌋].
 */
export function popcountRuns(a: number, { share, scale }: Threshold): { from: number; to: number; shared: number }[] {
  const runs: { from: number; to: number; shared: number }[] = [];
  if (a === 0) return runs;
  const from = Math.max(1, Math.ceil((share * a) / scale));
  const to = Math.min(2048, Math.floor((scale * a) / share));
  for (let b = from; b <= to; b += 1) {
    const shared = Math.max(1, Math.ceil((share * (a + b)) / (scale + share)));
    const last = runs[runs.length - 1];
    if (last && last.shared === shared) last.to = b;
    else runs.push({ from: b, to: b, shared });
  }
  return runs;
}

/** A stored structure like the query: how many bits it shares with it, and its own count. */
export interface SimilarHit {
  uci: number;
  standardInchiKey: string;
  shared: number;
  popcount: number;
}

function hitOf(hit: estypes.SearchHit<unknown>, popcount: number): SimilarHit {
  const [score, uci] = hit.sort as number[];
  const standardInchiKey = (hit.fields?.standardInchiKey as string[] | undefined)?.[0] ?? '';
  return { uci, standardInchiKey, shared: Math.round(score), popcount };
}

/**
 * Every stored structure whose Tanimoto to the query's Morgan on-bits reaches the threshold: their
 * count, and, for each popcount, the `limit` that share the most bits with the query (lowest UCI
 * first), which hold the `limit` best of all. One search a run of popcounts (sent together in one
 * `_msearch`); within a run, a structure's score is the number of bits it shares, and at least
 * `shared` of them are asked for, so the engine counts exactly the structures at or above the
 * threshold.
 */
export function similarStructures(
  engine: Engine,
  morgan: number[],
  threshold: Threshold,
  limit: number,
): Promise<{ total: number; hits: SimilarHit[] }> {
  // SIMILARITY_CONCURRENCY at once: more would hold the engine, and the lookups whose searches leave
  // in the same _msearch, past the deadline, and their timeouts would open the breaker.
  let gate = gates.get(engine);
  if (!gate) gates.set(engine, (gate = new Gate('similarity searches', engine.config.SIMILARITY_CONCURRENCY)));
  return gate.run(() => similarNow(engine, morgan, threshold, limit));
}

const gates = new WeakMap<Engine, Gate>();

async function similarNow(
  engine: Engine,
  morgan: number[],
  threshold: Threshold,
  limit: number,
): Promise<{ total: number; hits: SimilarHit[] }> {
  const should = morgan.map((bit) => ({ term: { morgan: String(bit) } }));
  const sort: estypes.Sort = [{ _score: { order: 'desc' } }, { uci: { order: 'asc' } }];
  const answers = await Promise.all(
    popcountRuns(morgan.length, threshold).map(async (run) => {
      const single = run.from === run.to;
      const result = await engine.search({
        index: engine.names.fingerprints,
        query: {
          bool: {
            filter: [{ range: { popcount: { gte: run.from, lte: run.to } } }],
            should,
            minimum_should_match: run.shared,
          },
        },
        track_total_hits: true,
        _source: false,
        docvalue_fields: ['standardInchiKey'],
        size: single ? limit : 0,
        sort,
        ...(single
          ? {}
          : {
              aggs: {
                popcounts: {
                  terms: { field: 'popcount', size: run.to - run.from + 1 },
                  aggs: {
                    best: { top_hits: { size: limit, sort, _source: false, docvalue_fields: ['standardInchiKey'] } },
                  },
                },
              },
            }),
      });
      const total = (result.hits.total as estypes.SearchTotalHits).value;
      if (single) return { total, hits: result.hits.hits.map((hit) => hitOf(hit, run.from)) };
      const buckets = (result.aggregations?.popcounts as estypes.AggregationsLongTermsAggregate).buckets as unknown as {
        key: number;
        best: { hits: { hits: estypes.SearchHit<unknown>[] } };
      }[];
      return { total, hits: buckets.flatMap((bucket) => bucket.best.hits.hits.map((hit) => hitOf(hit, bucket.key))) };
    }),
  );
  return {
    total: answers.reduce((sum, answer) => sum + answer.total, 0),
    hits: answers.flatMap((answer) => answer.hits),
  };
}

/** The Morgan on-bits stored for a structure; undefined when it has none (yet). */
export function storedMorgan(engine: Engine, uci: number): Promise<number[] | undefined> {
  return storedMorganOf(engine, { uci });
}

/** The Morgan on-bits stored for a structure, by UCI or key; undefined when it has none (yet). */
export async function storedMorganOf(
  engine: Engine,
  structure: { uci: number } | { standardInchiKey: string },
): Promise<number[] | undefined> {
  const result = await engine.search<{ morgan: number[] }>({
    index: engine.names.fingerprints,
    query: 'uci' in structure ? { ids: { values: [String(structure.uci)] } } : { term: structure },
    _source: ['morgan'],
    size: 1,
    track_total_hits: false,
  });
  return result.hits.hits[0]?._source?.morgan;
}

/**
 * Stored structures after UCI `afterUci` whose pattern fingerprint holds every on-bit of the query's,
 * in UCI order, up to `size`, with their molecules: the candidates a substructure match then checks.
 */
export async function substructureCandidates(
  engine: Engine,
  pattern: number[],
  afterUci: number,
  size: number,
): Promise<{ uci: number; standardInchiKey: string; molecule: string }[]> {
  const result = await engine.client.search<{ uci: number; standardInchiKey: string; molecule: string }>({
    index: engine.names.fingerprints,
    query: {
      bool: {
        filter: [{ range: { uci: { gt: afterUci } } }, ...pattern.map((bit) => ({ term: { pattern: String(bit) } }))],
      },
    },
    sort: [{ uci: 'asc' }],
    size,
    _source: ['uci', 'standardInchiKey', 'molecule'],
    track_total_hits: false,
  });
  return result.hits.hits.map((hit) => hit._source!);
}

/** The highest UCI with a fingerprint document: a backfill goes on after it. */
export async function lastFingerprintedUci(engine: Engine): Promise<number> {
  const result = await engine.client.search({
    index: engine.names.fingerprints,
    size: 0,
    aggs: { last: { max: { field: 'uci' } } },
  });
  return Number((result.aggregations?.last as estypes.AggregationsMaxAggregate | undefined)?.value ?? 0);
}

/** Writes fingerprint documents (`_id` = UCI, so that writing one again replaces it). */
export async function writeFingerprints(engine: Engine, documents: FingerprintDocument[]): Promise<void> {
  if (documents.length === 0) return;
  const result = await engine.client.bulk({
    operations: documents.flatMap((document) => [
      { index: { _index: engine.names.fingerprints, _id: String(document.uci) } },
      document,
    ]),
  });
  if (!result.errors) return;
  const refused = result.items.find((item) => item.index?.error)?.index?.error;
  throw new Error(`the engine refused a fingerprint: ${refused?.reason ?? refused?.type ?? 'unknown reason'}`);
}
