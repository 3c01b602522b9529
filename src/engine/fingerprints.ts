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
  /** `moleculeDerivation` of the chemxref that computed it (absent before there was one). */
  derivation: number;
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

/** Popcounts from..to, whose structures reach the threshold when they share at least `shared` bits with the query. */
export interface PopcountRun {
  from: number;
  to: number;
  shared: number;
}

/**
 * The popcounts b a structure can have and still reach the threshold against a query of `a` bits,
 * in runs of equal `shared`: the fewest bits it must share with the query, ⌈t(a + b) / (1 + t)⌉
 * (from c / (a + b − c) ≥ t). Tanimoto ≤ min(a, b) / max(a, b) bounds b to [⌈ta⌉, ⌊a/t⌋].
 */
export function popcountRuns(a: number, { share, scale }: Threshold): PopcountRun[] {
  const runs: PopcountRun[] = [];
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

function hitOf(hit: estypes.SearchHit<unknown>, popcount?: number): SimilarHit {
  const [score, uci] = hit.sort as number[];
  const standardInchiKey = (hit.fields?.standardInchiKey as string[] | undefined)?.[0] ?? '';
  const count = popcount ?? (hit.fields?.popcount as number[] | undefined)?.[0] ?? 0;
  return { uci, standardInchiKey, shared: Math.round(score), popcount: count };
}

/**
 * Runs searched together: consecutive runs whose `shared` is within `slack` of the first's. A group
 * asks for the first run's `shared` over all its popcounts, so it finds a few structures below the
 * threshold, which are dropped here; one search where there were several is cheaper by more.
 */
export function runGroups(runs: PopcountRun[], slack = 4): PopcountRun[][] {
  const groups: PopcountRun[][] = [];
  for (const run of runs) {
    const last = groups[groups.length - 1];
    if (last && run.shared - last[0].shared <= slack) last.push(run);
    else groups.push([run]);
  }
  return groups;
}

/** Structures a group's search reads back whole; a group with more is searched again run by run. */
const groupCandidates = 1_000;

/**
 * Every stored structure whose Tanimoto to the query's Morgan on-bits reaches the threshold: their
 * count, and structures among which are the `limit` best (for each popcount, at least the `limit`
 * that share the most bits with the query, lowest UCI first). A structure's score is the number of
 * bits it shares with the query. One search a group of popcount runs (sent together in one
 * `_msearch`) reads back every structure sharing at least the group's fewest bits, and keeps those
 * at or above the threshold; a group with more than `candidates` is searched run by run, each
 * asking for exactly its `shared`, so that the engine counts and ranks them.
 */
export function similarStructures(
  engine: Engine,
  morgan: number[],
  threshold: Threshold,
  limit: number,
  candidates = groupCandidates,
): Promise<{ total: number; hits: SimilarHit[] }> {
  // SIMILARITY_CONCURRENCY at once: more would hold the engine, and the lookups whose searches leave
  // in the same _msearch, past the deadline, and their timeouts would open the breaker.
  let gate = gates.get(engine);
  if (!gate) gates.set(engine, (gate = new Gate('similarity searches', engine.config.SIMILARITY_CONCURRENCY)));
  return gate.run(() => similarNow(engine, morgan, threshold, limit, candidates));
}

const gates = new WeakMap<Engine, Gate>();

const bestFirst: estypes.Sort = [{ _score: { order: 'desc' } }, { uci: { order: 'asc' } }];

/** Structures of popcount from..to sharing at least `shared` bits with the query. */
function sharing(morgan: number[], from: number, to: number, shared: number): estypes.QueryDslQueryContainer {
  return {
    bool: {
      filter: [{ range: { popcount: { gte: from, lte: to } } }],
      should: morgan.map((bit) => ({ term: { morgan: String(bit) } })),
      minimum_should_match: shared,
    },
  };
}

async function similarNow(
  engine: Engine,
  morgan: number[],
  threshold: Threshold,
  limit: number,
  candidates: number,
): Promise<{ total: number; hits: SimilarHit[] }> {
  const a = morgan.length;
  const reaches = (hit: SimilarHit): boolean =>
    hit.shared * threshold.scale >= threshold.share * (a + hit.popcount - hit.shared);
  const answers = await Promise.all(
    runGroups(popcountRuns(a, threshold)).map(async (group) => {
      const { from, shared } = group[0];
      const result = await engine.search({
        index: engine.names.fingerprints,
        query: sharing(morgan, from, group[group.length - 1].to, shared),
        track_total_hits: true,
        stored_fields: '_none_',
        docvalue_fields: ['standardInchiKey', 'popcount'],
        size: candidates,
        sort: bestFirst,
      });
      if ((result.hits.total as estypes.SearchTotalHits).value <= candidates) {
        const hits = result.hits.hits.map((hit) => hitOf(hit)).filter(reaches);
        return { total: hits.length, hits };
      }
      const runs = await Promise.all(group.map((run) => runSearch(engine, morgan, run, limit)));
      return { total: runs.reduce((sum, run) => sum + run.total, 0), hits: runs.flatMap((run) => run.hits) };
    }),
  );
  return {
    total: answers.reduce((sum, answer) => sum + answer.total, 0),
    hits: answers.flatMap((answer) => answer.hits),
  };
}

/** One run's count, and for each of its popcounts the `limit` sharing the most bits. */
async function runSearch(
  engine: Engine,
  morgan: number[],
  run: PopcountRun,
  limit: number,
): Promise<{ total: number; hits: SimilarHit[] }> {
  const single = run.from === run.to;
  const result = await engine.search({
    index: engine.names.fingerprints,
    query: sharing(morgan, run.from, run.to, run.shared),
    track_total_hits: true,
    _source: false,
    docvalue_fields: ['standardInchiKey'],
    size: single ? limit : 0,
    sort: bestFirst,
    ...(single
      ? {}
      : {
          aggs: {
            popcounts: {
              terms: { field: 'popcount', size: run.to - run.from + 1 },
              aggs: {
                best: {
                  top_hits: { size: limit, sort: bestFirst, _source: false, docvalue_fields: ['standardInchiKey'] },
                },
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

export type Candidate = { uci: number; standardInchiKey: string; molecule: string };

/**
 * Engines whose fingerprints index keeps molecules in `_source` only, as indices made before
 * molecules were doc values do: their candidates are read from `_source`, at two to three times the cost.
 */
const moleculesInSourceOnly = new WeakSet<Engine>();

/**
 * The candidates in the UCI window (after, upto], in UCI order, up to `size`. The molecule and key are
 * read from doc values and no stored field is loaded: loading each hit's stored fields (its `_id`
 * and `_source`) took two thirds of a read.
 */
async function candidatesIn(
  engine: Engine,
  pattern: number[],
  after: number,
  upto: number,
  size: number,
  retried = false,
): Promise<Candidate[]> {
  const fromSource = moleculesInSourceOnly.has(engine);
  const fields = ['standardInchiKey', 'molecule'];
  let result: estypes.SearchResponse<Candidate>;
  try {
    result = await engine.client.search<Candidate>({
      index: engine.names.fingerprints,
      query: {
        bool: {
          filter: [
            { range: { uci: { gt: after, lte: upto } } },
            ...pattern.map((bit) => ({ term: { pattern: String(bit) } })),
          ],
        },
      },
      sort: [{ uci: 'asc' }],
      size,
      ...(fromSource ? { _source: ['uci', ...fields] } : { stored_fields: '_none_', docvalue_fields: fields }),
      track_total_hits: false,
    });
  } catch (error) {
    if (fromSource || retried || !/fielddata is unsupported/.test(String(error))) throw error;
    moleculesInSourceOnly.add(engine);
    return candidatesIn(engine, pattern, after, upto, size, true);
  }
  const candidates = result.hits.hits.map((hit) =>
    fromSource
      ? hit._source!
      : {
          uci: hit.sort![0] as number,
          standardInchiKey: hit.fields!.standardInchiKey[0] as string,
          molecule: hit.fields!.molecule?.[0] as string,
        },
  );
  // An index made again since (by a new backfill) keeps its molecules as doc values.
  if (fromSource && !retried && candidates.some((candidate) => candidate.molecule === undefined)) {
    moleculesInSourceOnly.delete(engine);
    return candidatesIn(engine, pattern, after, upto, size, true);
  }
  return candidates;
}

/** The UCIs the first read of a substructure search spans. */
const firstSpan = 2_000;

/**
 * The stored structures whose pattern fingerprint holds every on-bit of the query's, with their
 * molecules, in UCI order, a page of at most `size` at a time: the candidates a substructure match
 * checks. Each page is read while the previous one is checked.
 *
 * A read asks for a window of UCIs, not for "the next `size` after": the index is sorted by popcount,
 * so the engine sorts by UCI every candidate a read's range holds, and the next `size` of a rare
 * fragment's candidates would cost a sort of all those left, again at every page. Each window is sized
 * from the one before to hold about `size` candidates: a window that held more spans what its page
 * covered, one that held fewer spans up to 16 times more.
 */
export async function* substructureCandidates(
  engine: Engine,
  pattern: number[],
  size: number,
): AsyncGenerator<Candidate[]> {
  const read = (after: number, upto: number): Promise<Candidate[]> => {
    const page = candidatesIn(engine, pattern, after, upto, size);
    page.catch(() => undefined); // awaited below, or dropped when the search ends first
    return page;
  };
  let [after, span] = [0, firstSpan];
  let next = read(after, after + span);
  const last = await lastFingerprintedUci(engine);
  for (;;) {
    const page = await next;
    if (page.length === size) {
      const end = page[page.length - 1].uci;
      span = Math.max(1, Math.ceil((end - after) * 1.25));
      after = end;
    } else {
      if (after + span >= last) return yield page;
      after += span;
      span = Math.ceil(span * Math.min(16, Math.max(1.5, (0.8 * size) / Math.max(1, page.length))));
    }
    next = read(after, after + span);
    yield page;
  }
}

/**
 * The highest UCI with a fingerprint document, or with one of that `derivation`: a backfill goes on
 * after it.
 */
export async function lastFingerprintedUci(engine: Engine, derivation?: number): Promise<number> {
  const result = await engine.client.search({
    index: engine.names.fingerprints,
    size: 0,
    ...(derivation === undefined ? {} : { query: { term: { derivation } } }),
    aggs: { last: { max: { field: 'uci' } } },
  });
  return Number((result.aggregations?.last as estypes.AggregationsMaxAggregate | undefined)?.value ?? 0);
}

/**
 * How many stored structures have no fingerprint document yet, so that no similarity or substructure
 * search finds them: the structures counted less the fingerprints counted, never below 0 (a
 * fingerprint may outlive a structure a failed load swept). The two counts leave in the `_msearch`
 * of this turn of the event loop, beside the searches they are asked with.
 */
export async function unsearchableStructures(engine: Engine): Promise<number> {
  const count = async (index: string): Promise<number> => {
    const result = await engine.search({ index, size: 0, track_total_hits: true, query: { match_all: {} } });
    return (result.hits.total as estypes.SearchTotalHits).value;
  };
  const [structures, fingerprints] = await Promise.all([
    count(engine.names.compounds),
    count(engine.names.fingerprints),
  ]);
  return Math.max(0, structures - fingerprints);
}

/** How many fingerprint documents were computed otherwise than `derivation` says (by an older chemxref). */
export async function olderFingerprints(engine: Engine, derivation: number): Promise<number> {
  const result = await engine.client.count({
    index: engine.names.fingerprints,
    query: { bool: { must_not: { term: { derivation } } } },
  });
  return result.count;
}

/**
 * Whether the fingerprints index holds `pattern` as one text a document, its on-bits split on
 * whitespace into terms (the engine indexes a structure's 420 or so bits for about 40 % less CPU than
 * as many keyword values), rather than as keyword values (an index an older chemxref made). The
 * terms are the same, so a search does not ask; a write asks every time, as a restore can bring an
 * older index back.
 */
async function patternIsText(engine: Engine): Promise<boolean> {
  const indices = await engine.client.indices.getFieldMapping(
    { index: engine.names.fingerprints, fields: 'pattern' },
    { ignore: [404] },
  );
  return Object.values(indices).every(({ mappings }) => {
    const field = mappings?.pattern?.mapping?.pattern as { type?: string } | undefined;
    return field?.type !== 'keyword';
  });
}

/**
 * Writes fingerprint documents (`_id` = UCI, so that writing one again replaces it), and deletes those
 * of the UCIs in `without` (structures whose molecule can no longer be rebuilt).
 */
export async function writeFingerprints(
  engine: Engine,
  documents: FingerprintDocument[],
  without: number[] = [],
): Promise<void> {
  if (documents.length === 0 && without.length === 0) return;
  const _index = engine.names.fingerprints;
  const asText = documents.length > 0 && (await patternIsText(engine));
  const result = await engine.client.bulk({
    operations: [
      ...documents.flatMap((document) => [
        { index: { _index, _id: String(document.uci) } },
        asText ? { ...document, pattern: document.pattern.join(' ') } : document,
      ]),
      ...without.map((uci) => ({ delete: { _index, _id: String(uci) } })),
    ],
  });
  if (!result.errors) return;
  const refused = result.items.map((item) => item.index?.error ?? item.delete?.error).find(Boolean);
  throw new Error(`the engine refused a fingerprint: ${refused?.reason ?? refused?.type ?? 'unknown reason'}`);
}

/**
 * Why the structures with no fingerprint have none, as the loads that tried to compute one recorded
 * it (the `no-fingerprint` rejects, the latest a structure got): each reason with how many of them it
 * stands for. Structures that no kept load record speaks for (loaded with --no-fingerprints, or
 * whose rejects were deleted with old loads) are counted under `unrecorded`.
 */
export async function fingerprintlessReasons(
  engine: Engine,
): Promise<{ count: number; reasons: Map<string, number>; unrecorded: number }> {
  const count = await unsearchableStructures(engine);
  const reasons = new Map<string, number>();
  if (count === 0) return { count, reasons, unrecorded: 0 };
  const rejected = await engine.client.search<{ line: number; message: string }>({
    index: engine.names.rejects,
    ignore_unavailable: true,
    allow_no_indices: true,
    query: { term: { reason: 'no-fingerprint' } },
    collapse: { field: 'line' },
    sort: [{ time: 'desc' }],
    size: Math.min(count, 10_000),
    _source: ['line', 'message'],
  });
  const latest = rejected.hits.hits.map((hit) => hit._source!);
  // Only the structures still without a fingerprint (a later run may have computed one).
  const fingerprinted = await engine.client.search({
    index: engine.names.fingerprints,
    query: { ids: { values: latest.map((reject) => String(reject.line)) } },
    size: latest.length,
    _source: false,
  });
  const done = new Set(fingerprinted.hits.hits.map((hit) => hit._id));
  let recorded = 0;
  for (const reject of latest) {
    if (done.has(String(reject.line))) continue;
    reasons.set(reject.message, (reasons.get(reject.message) ?? 0) + 1);
    recorded += 1;
  }
  return { count, reasons, unrecorded: Math.max(0, count - recorded) };
}
