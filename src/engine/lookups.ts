/**
 * Reads of the assignments that answer API requests. Every user value is only ever a term value
 * (term / terms queries), never query syntax or a script.
 */
import type { AssignmentDocument } from './documents';
import type { Engine } from './client';
import { EngineUnavailable, indicesMissing } from './errors';
import { laterPages, sortedSources } from './paging';

export interface AssignmentFilter {
  /** Only current assignments (the default), or obsolete ones too. */
  includeObsolete?: boolean;
  /** Only obsolete assignments. */
  obsoleteOnly?: boolean;
  /** Only this source (searched through its alias). */
  sourceId?: number;
}

function filters(filter: AssignmentFilter): object[] {
  const clauses: object[] = [];
  if (filter.obsoleteOnly) clauses.push({ term: { assignment: 0 } });
  else if (!filter.includeObsolete) clauses.push({ term: { assignment: 1 } });
  return clauses;
}

/**
 * Every assignment matching `clause` and `filter`, in (uci, sourceId, compoundId) order, up to
 * `limit` documents. Searches the all-sources alias, or with `filter.sourceId` that source's alias,
 * which holds only its assignments (filtered on its id when its index is shared).
 */
async function assignmentsWhere(
  engine: Engine,
  clause: object,
  filter: AssignmentFilter,
  limit: number,
  firstHits?: number,
): Promise<AssignmentDocument[]> {
  const found = await sortedSources<AssignmentDocument>(
    engine,
    {
      index: filter.sourceId === undefined ? engine.names.assignments : engine.names.assignmentsOf(filter.sourceId),
      ignore_unavailable: true,
      allow_no_indices: true,
      query: { bool: { filter: [clause, ...filters(filter)] } } as never,
      sort: [{ uci: 'asc' }, { sourceId: 'asc' }, { compoundId: 'asc' }],
    },
    limit,
    firstHits,
  );
  if (found.length === 0) await requireIndices(engine);
  return found;
}

/** When the indices were last seen, by engine: an empty answer checks them at most once a second. */
const indicesSeen = new WeakMap<Engine, number>();

/**
 * Throws EngineUnavailable when the structures or sources index is gone. A source's alias is searched with
 * `ignore_unavailable` (a source without a release has none), so that an engine whose indices were wiped
 * would otherwise answer "no such compound id" where the data is missing.
 */
async function requireIndices(engine: Engine): Promise<void> {
  if (Date.now() - (indicesSeen.get(engine) ?? 0) < 1_000) return;
  const present = await engine.client.indices.exists({ index: [engine.names.compounds, engine.names.sources] });
  if (!present) throw new EngineUnavailable(indicesMissing);
  indicesSeen.set(engine, Date.now());
}

/**
 * Records a structure has in all sources, for a first page that holds most answers for many UCIs in
 * one read (a structure has a few; the 500k set holds 3.3 a structure).
 */
const recordsPerStructure = 10;

const unlimited = 1_000_000;

/** Assignments of structures with these full InChIKeys. */
export function assignmentsByKeys(
  engine: Engine,
  keys: string[],
  filter: AssignmentFilter = {},
  limit = unlimited,
): Promise<AssignmentDocument[]> {
  return keys.length === 0
    ? Promise.resolve([])
    : assignmentsWhere(engine, { terms: { standardInchiKey: keys } }, filter, limit);
}

/** Assignments of structures with these UCIs. */
export function assignmentsByUcis(
  engine: Engine,
  ucis: number[],
  filter: AssignmentFilter = {},
  limit = unlimited,
): Promise<AssignmentDocument[]> {
  const distinct = [...new Set(ucis)];
  return distinct.length === 0
    ? Promise.resolve([])
    : assignmentsWhere(
        engine,
        { terms: { uci: distinct } },
        filter,
        limit,
        Math.min(laterPages, Math.max(100, distinct.length * recordsPerStructure)),
      );
}

/** Assignments of one compound id, in every source or in `filter.sourceId`. */
export function assignmentsByCompoundId(
  engine: Engine,
  compoundId: string,
  filter: AssignmentFilter = {},
  limit = unlimited,
): Promise<AssignmentDocument[]> {
  return assignmentsWhere(engine, { term: { compoundId } }, filter, limit);
}

/**
 * Current assignments whose compound id is `name` in one of `sourceIds`, ASCII case aside (the
 * engine's `case_insensitive` term): the name searches of sources whose ids are names.
 */
export function assignmentsByName(
  engine: Engine,
  name: string,
  sourceIds: number[],
  limit = unlimited,
): Promise<AssignmentDocument[]> {
  if (sourceIds.length === 0) return Promise.resolve([]);
  return assignmentsWhere(
    engine,
    {
      bool: {
        filter: [{ term: { compoundId: { value: name, case_insensitive: true } } }, { terms: { sourceId: sourceIds } }],
      },
    },
    {},
    limit,
  );
}

/** Assignments of structures whose first InChIKey block is `block`. */
export function assignmentsByConnectivityBlock(
  engine: Engine,
  block: string,
  filter: AssignmentFilter = {},
  limit = unlimited,
): Promise<AssignmentDocument[]> {
  return assignmentsWhere(engine, { term: { connectivityBlock: block } }, filter, limit);
}

/** Whether the engine answers and the indices chemxref needs exist (for GET /ready). */
export async function engineReady(engine: Engine): Promise<{ ready: boolean; reason?: string }> {
  const restore = engine.restore?.current;
  if (restore)
    return { ready: false, reason: `the data is being restored from the backup ${restore.snapshot} (npm run restore)` };
  try {
    await engine.client.cluster.health({ timeout: '2s' }, { requestTimeout: 3_000 });
  } catch {
    return { ready: false, reason: 'the search engine is unreachable' };
  }
  const exists = await engine.client.indices.exists(
    { index: [engine.names.compounds, engine.names.sources].join(',') },
    { requestTimeout: 3_000 },
  );
  return exists
    ? { ready: true }
    : { ready: false, reason: 'the indices are missing: load data with `npm run load` first' };
}

/** Figures of the whole index for the legacy `release` endpoint. */
export async function indexFigures(
  engine: Engine,
): Promise<{ structures: number; assignments: number; current: number; obsolete: number }> {
  const count = async (index: string, query: object): Promise<number> =>
    (await engine.client.count({ index, query, ignore_unavailable: true, allow_no_indices: true })).count;
  const [structures, assignments, current] = await Promise.all([
    count(engine.names.compounds, { match_all: {} }),
    count(engine.names.assignments, { match_all: {} }),
    count(engine.names.assignments, { term: { assignment: 1 } }),
  ]);
  return { structures, assignments, current, obsolete: assignments - current };
}

/** Whether any source has a published release with at least one assignment. */
export async function hasAssignments(engine: Engine): Promise<boolean> {
  const { count } = await engine.client.count({
    index: engine.names.assignments,
    ignore_unavailable: true,
    allow_no_indices: true,
  });
  return count > 0;
}
