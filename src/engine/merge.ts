/**
 * Searches that differ only in the values of their leading term clause become one search: the key
 * lookups of eight concurrent requests (`terms standardInchiKey [k]`, sorted, first page of 100)
 * become one `terms` query on the eight keys with a page of 800, whose hits go back to each lookup
 * by the key they carry. A search's fixed cost in the engine (parsing, the shard's query and fetch
 * phases) is paid once instead of eight times: engine CPU per key lookup 0.21–0.31 → 0.09–0.10 ms,
 * measured straight against the engine with eight lookups at a time (BENCHMARKS.md).
 *
 * Each search still gets exactly the hits it would get alone:
 * - only clauses on fields whose stored value is the term it matched are merged: keywords without a
 *   normalizer asked with strings, integers asked with integers (`ExactFields`, from mappings/);
 *   a hit is dealt to the searches that asked for its value;
 * - a hit whose value is not of that kind (a list, a number in a keyword field) or that no search
 *   asked for sends every search of the group again on its own;
 * - a search gets its hits in the merged search's order, which is its own (same sort, same other
 *   filters), cut to its own page; when the merged page came back full, a search that got fewer
 *   than its page cannot know it got them all, and goes again on its own;
 * - only searches whose order does not depend on scores are merged (sorted without `_score`, or
 *   constant-score: filter context, `ids`, `terms`), and the merged clause sits in filter context.
 */
import type { estypes } from '@elastic/elasticsearch';
import { maxResultWindow } from './limits';

type Value = string | number;
type Body = Record<string, unknown>;

/** Fields whose stored value is the very term a term query matches: by name, keyword or integer. */
export type ExactFields = Map<string, Kind>;
type Kind = 'keyword' | 'integer';

const integerTypes = new Set(['long', 'integer', 'short', 'byte']);

/** The exact fields of these mappings: top-level keywords without a normalizer and integers, of one kind in all. */
export function exactFieldsOf(mappings: { mappings: Record<string, unknown> }[]): ExactFields {
  const kinds = new Map<string, string | undefined>();
  for (const { mappings: mapping } of mappings) {
    for (const [field, spec] of Object.entries(
      (mapping.properties ?? {}) as Record<string, { type?: string; normalizer?: string }>,
    )) {
      const kind =
        spec.type === 'keyword' && !spec.normalizer
          ? 'keyword'
          : integerTypes.has(spec.type ?? '')
            ? 'integer'
            : undefined;
      kinds.set(field, kinds.has(field) && kinds.get(field) !== kind ? undefined : kind);
    }
  }
  return new Map([...kinds].filter((entry): entry is [string, Kind] => entry[1] !== undefined));
}

/** A search that can be merged: the values of its leading clause, and how to rebuild the body with others. */
export interface Mergeable {
  /** Searches with the same signature differ only in `values` and `size`. */
  signature: string;
  field: string;
  /** What the field's values are: `_id` is a keyword. */
  kind: Kind;
  values: Value[];
  size: number;
  build: (values: Value[], size: number) => Body;
}

/**
 * What one merged search may hold: hits up to the engine's index.max_result_window, and values well
 * under its index.max_terms_count (65,536). A search with more values than a merged one may hold is
 * big enough to go on its own.
 */
export const mergedLimits = { hits: maxResultWindow, values: 10_000 };

/**
 * The body keys a mergeable search may have; anything else (aggregations, search_after, from, ...) is sent as it is.
 */
const mergeableKeys = new Set(['query', 'size', 'sort', '_source', 'track_total_hits']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const only = (object: Record<string, unknown>): [string, unknown] | undefined => {
  const entries = Object.entries(object);
  return entries.length === 1 ? entries[0] : undefined;
};

/** Whether `value` is of the field's kind: a string for keywords and `_id`, a safe integer for integers. */
function ofKind(kind: Kind, value: unknown): value is Value {
  return kind === 'keyword' ? typeof value === 'string' : Number.isSafeInteger(value);
}

interface Lead {
  field: string;
  kind: Kind;
  values: Value[];
  constantScore: boolean;
  place: (clause: object) => object;
}

/** `{ids}`, `{term}` or `{terms}` on one exact field, alone or first in a `bool` of filters only. */
function leadClause(query: unknown, exact: ExactFields): Lead | undefined {
  if (!isObject(query)) return undefined;
  const [kind, spec] = only(query) ?? [];
  if (kind === 'bool' && isObject(spec)) {
    const [key, filters] = only(spec) ?? [];
    if (key !== 'filter' || !Array.isArray(filters) || filters.length === 0) return undefined;
    const lead = leadClause(filters[0], exact);
    return (
      lead && { ...lead, constantScore: true, place: (clause) => ({ bool: { filter: [clause, ...filters.slice(1)] } }) }
    );
  }
  if (!isObject(spec)) return undefined;
  const place = (clause: object): object => ({ bool: { filter: [clause] } });
  if (kind === 'ids') {
    const [key, values] = only(spec) ?? [];
    if (key !== 'values' || !Array.isArray(values) || !values.every((value) => ofKind('keyword', value)))
      return undefined;
    return { field: '_id', kind: 'keyword', values, constantScore: true, place };
  }
  const [field, value] = only(spec) ?? [];
  const fieldKind = field === undefined ? undefined : exact.get(field);
  if (!fieldKind) return undefined;
  if (kind === 'term' && ofKind(fieldKind, value))
    return { field: field!, kind: fieldKind, values: [value], constantScore: false, place };
  if (kind === 'terms' && Array.isArray(value) && value.every((v) => ofKind(fieldKind, v)))
    return { field: field!, kind: fieldKind, values: value, constantScore: true, place };
  return undefined;
}

/** Whether the hits come in an order of their own, whatever their scores (`sort: []` is score order). */
function sortedWithoutScore(sort: unknown): boolean {
  return sort !== undefined && !(Array.isArray(sort) && sort.length === 0) && !JSON.stringify(sort).includes('_score');
}

/** Whether `_source` brings `field` back, so that hits can be dealt by it (read conservatively). */
function keepsField(source: unknown, field: string): boolean {
  if (field === '_id' || source === undefined || source === true) return true;
  const plain = (list: unknown): list is string[] =>
    Array.isArray(list) && list.every((name) => typeof name === 'string' && !name.includes('*'));
  if (plain(source)) return source.includes(field);
  if (!isObject(source) || Object.keys(source).some((key) => key !== 'includes' && key !== 'excludes')) return false;
  const { includes, excludes } = source;
  return (
    (includes === undefined || (plain(includes) && includes.includes(field))) &&
    (excludes === undefined || (plain(excludes) && !excludes.includes(field)))
  );
}

/** The search as a mergeable one, or undefined when it must go as it is. */
export function mergeable(header: Body, body: Body, exact: ExactFields): Mergeable | undefined {
  if (Object.keys(body).some((key) => !mergeableKeys.has(key))) return undefined;
  // A hit total would count the other searches' hits too.
  if (
    body.track_total_hits !== false ||
    typeof body.size !== 'number' ||
    body.size < 1 ||
    body.size > mergedLimits.hits
  )
    return undefined;
  const lead = leadClause(body.query, exact);
  if (
    !lead ||
    lead.values.length > mergedLimits.values ||
    !(lead.constantScore || sortedWithoutScore(body.sort)) ||
    !keepsField(body._source, lead.field)
  )
    return undefined;
  const build = (values: Value[], size: number): Body => ({
    ...body,
    size,
    query: lead.place(lead.field === '_id' ? { ids: { values } } : { terms: { [lead.field]: values } }),
  });
  return {
    signature: JSON.stringify([header, build([], 0), lead.field]),
    field: lead.field,
    kind: lead.kind,
    values: lead.values,
    size: body.size,
    build,
  };
}

/** One search for `searches` (of one signature): their values together, their pages end to end. */
export function mergedBody(searches: Mergeable[]): { body: Body; size: number } {
  const values = new Map(searches.flatMap((search) => search.values.map((value) => [value, value] as const)));
  const size = searches.reduce((sum, search) => sum + search.size, 0);
  return { body: searches[0].build([...values.values()], size), size };
}

/**
 * The hits of a merged search dealt back to its searches: each search's own response, or
 * undefined for a search that must be sent again on its own. Searches asking the same value share
 * its hit objects (no caller changes a hit), and unsorted hits score 0 in filter context where a
 * lone `ids` or `terms` search scores 1 (no caller reads scores).
 */
export function dealHits<S extends Mergeable>(
  searches: S[],
  mergedSize: number,
  response: estypes.SearchResponse<unknown>,
): Map<S, estypes.SearchResponse<unknown> | undefined> {
  const { field, kind } = searches[0];
  const askedBy = new Map<Value, number[]>();
  searches.forEach((search, i) => {
    for (const value of new Set(search.values)) askedBy.set(value, [...(askedBy.get(value) ?? []), i]);
  });
  const slices: estypes.SearchHit<unknown>[][] = searches.map(() => []);
  const hits = response.hits.hits;
  for (const hit of hits) {
    const value = field === '_id' ? hit._id : (hit._source as Record<string, unknown> | undefined)?.[field];
    const askers = ofKind(kind, value) ? askedBy.get(value) : undefined;
    if (!askers) return new Map(searches.map((search) => [search, undefined]));
    for (const i of askers) slices[i].push(hit);
  }
  const full = hits.length >= mergedSize;
  return new Map(
    searches.map((search, i) => {
      const slice = slices[i];
      if (slice.length < search.size && full) return [search, undefined];
      return [search, { ...response, hits: { ...response.hits, hits: slice.slice(0, search.size) } }];
    }),
  );
}
