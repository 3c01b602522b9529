/**
 * Searches that differ only in the values of their leading term clause become one search: the key
 * lookups of eight concurrent requests (`terms standardInchiKey [k]`, sorted, first page of 100)
 * become one `terms` query on the eight keys with a page of 800, whose hits go back to each lookup
 * by the key they carry. A search's fixed cost in the engine (parsing, the shard's query and fetch
 * phases) is paid once instead of eight times: engine CPU per key lookup 0.23–0.31 → 0.10 ms, measured
 * straight against the engine with eight lookups at a time (BENCHMARKS.md).
 *
 * Each search still gets exactly the hits it would get alone:
 * - a search gets the hits whose field value it asked for, in the merged search's order, which is
 *   its own (same sort, same filters), cut to its own page size;
 * - when the merged page came back full, a search that got fewer than its page cannot know it got
 *   them all: it is sent again on its own;
 * - a hit that no search asked for (its field value does not read back as any value asked, say a
 *   number written as "1.0") sends every search of the group again on its own.
 */
import type { SearchHit, SearchResponse } from '@elastic/elasticsearch/lib/api/types';

type Value = string | number;
type Body = Record<string, unknown>;

/** A search that can be merged: the values of its leading clause, and how to rebuild the body with others. */
export interface Mergeable {
  /** Searches with the same signature differ only in `values` and `size`. */
  signature: string;
  field: string;
  values: Value[];
  size: number;
  build: (values: Value[], size: number) => Body;
}

/**
 * What one merged search may hold: hits up to the engine's index.max_result_window, and values well
 * under its index.max_terms_count (65,536). A search with more values than a merged one may hold is
 * big enough to go on its own.
 */
export const mergedLimits = { hits: 10_000, values: 10_000 };

/** The body keys a mergeable search may have; anything else (aggregations, search_after, from, ...) is sent as it is. */
const mergeableKeys = new Set(['query', 'size', 'sort', '_source', 'track_total_hits']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isValue = (value: unknown): value is Value => typeof value === 'string' || typeof value === 'number';
const only = (object: Record<string, unknown>): [string, unknown] | undefined => {
  const entries = Object.entries(object);
  return entries.length === 1 ? entries[0] : undefined;
};

interface Lead { field: string; values: Value[]; place: (clause: object) => object }

/** `{ids}`, `{term}` or `{terms}` on one top-level field, alone or first in a `bool` of filters only. */
function leadClause(query: unknown): Lead | undefined {
  if (!isObject(query)) return undefined;
  const [kind, spec] = only(query) ?? [];
  if (kind === 'bool' && isObject(spec)) {
    const [key, filters] = only(spec) ?? [];
    if (key !== 'filter' || !Array.isArray(filters) || filters.length === 0) return undefined;
    const lead = leadClause(filters[0]);
    return lead && { ...lead, place: (clause) => ({ bool: { filter: [lead.place(clause), ...filters.slice(1)] } }) };
  }
  if (!isObject(spec)) return undefined;
  if (kind === 'ids') {
    const [key, values] = only(spec) ?? [];
    return key === 'values' && Array.isArray(values) && values.every(isValue) ? { field: '_id', values, place: (clause) => clause } : undefined;
  }
  const [field, value] = only(spec) ?? [];
  if (field === undefined || field.includes('.')) return undefined;
  if (kind === 'term' && isValue(value)) return { field, values: [value], place: (clause) => clause };
  if (kind === 'terms' && Array.isArray(value) && value.every(isValue)) return { field, values: value, place: (clause) => clause };
  return undefined;
}

/** Whether `_source` brings `field` back, so that hits can be told apart by it. */
function keepsField(source: unknown, field: string): boolean {
  if (field === '_id' || source === undefined || source === true) return true;
  const listed = (list: unknown): string[] | undefined => (list === undefined ? undefined : Array.isArray(list) ? list : [list]) as string[] | undefined;
  const wildcard = (list: string[] | undefined): boolean => list?.some((pattern) => typeof pattern !== 'string' || pattern.includes('*')) ?? false;
  const includes = isObject(source) ? listed(source.includes) : listed(source);
  const excludes = isObject(source) ? listed(source.excludes) : undefined;
  if (source === false || wildcard(includes) || wildcard(excludes)) return false;
  return (!includes || includes.includes(field)) && !(excludes?.includes(field));
}

/** The search as a mergeable one, or undefined when it must go as it is. */
export function mergeable(header: Body, body: Body): Mergeable | undefined {
  if (Object.keys(body).some((key) => !mergeableKeys.has(key))) return undefined;
  // A hit total would count the other searches' hits too.
  if (body.track_total_hits !== false || typeof body.size !== 'number' || body.size < 1) return undefined;
  const lead = leadClause(body.query);
  if (!lead || !keepsField(body._source, lead.field) || lead.values.length > mergedLimits.values || body.size > mergedLimits.hits) return undefined;
  const build = (values: Value[], size: number): Body => ({
    ...body, size, query: lead.place(lead.field === '_id' ? { ids: { values } } : { terms: { [lead.field]: values } }),
  });
  return { signature: JSON.stringify([header, build([], 0), lead.field]), field: lead.field, values: lead.values, size: body.size, build };
}

const valueKey = (value: unknown): string => String(value);

/** The value of `field` a hit carries. */
function hitValue(hit: SearchHit<unknown>, field: string): unknown {
  return field === '_id' ? hit._id : (hit._source as Record<string, unknown> | undefined)?.[field];
}

/**
 * The hits of a merged search dealt back to its searches: each search's own response, or
 * undefined for a search that must be sent again on its own.
 */
export function dealHits<S extends Mergeable>(field: string, searches: S[], mergedSize: number, response: SearchResponse<unknown>): Map<S, SearchResponse<unknown> | undefined> {
  const askedBy = new Map<string, S[]>();
  for (const search of searches) {
    for (const key of new Set(search.values.map(valueKey))) askedBy.set(key, [...askedBy.get(key) ?? [], search]);
  }
  const slices = new Map<S, SearchHit<unknown>[]>(searches.map((search) => [search, []]));
  const hits = response.hits.hits;
  for (const hit of hits) {
    const askers = askedBy.get(valueKey(hitValue(hit, field)));
    if (!askers) return new Map(searches.map((search) => [search, undefined]));
    for (const search of askers) slices.get(search)!.push(hit);
  }
  const full = hits.length >= mergedSize;
  return new Map(searches.map((search) => {
    const slice = slices.get(search)!;
    if (slice.length < search.size && full) return [search, undefined];
    return [search, { ...response, hits: { ...response.hits, hits: slice.slice(0, search.size) } }];
  }));
}
