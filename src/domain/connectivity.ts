/**
 * Connectivity search (docs/api.md /connectivity, and the legacy key_search / cpd_search): structures
 * sharing the query's skeleton (first InChIKey block), and, component by component, salts, mixtures
 * and their parts. One implementation for both APIs.
 */
import {
  compareLayers,
  differenceCount,
  parseStandardInchi,
  type Comparison,
  type FullInchiLayers,
  type InchiComponent,
  type ParsedInchi,
} from '../chemistry';
import {
  compoundsByConnectivityBlock,
  compoundsWithComponent,
  countStructuresWithComponent,
} from '../engine/compounds';
import { assignmentsByConnectivityBlock, assignmentsByUcis, type AssignmentFilter } from '../engine/lookups';
import type { LookupContext } from './lookup';
import type { CompoundDocument, SourceDocument, AssignmentDocument } from '../engine/documents';

/** How a result relates to the query, in the documented order (the order also ranks results). */
export const relations = ['match', 'queryIsComponent', 'componentIsResult', 'componentMatch'] as const;
export type TypeOfSearch = (typeof relations)[number];

/** The structure searched for: parsed when its InChI is known; only a first block when an unindexed key was given. */
export interface SearchedStructure {
  uci: number | null;
  standardInchiKey: string | null;
  connectivityBlock: string;
  parsed: ParsedInchi | null;
}

/** The searched structure an indexed structure stands for. */
export function searchedStructureOf(structure: CompoundDocument): SearchedStructure {
  return {
    uci: structure.uci,
    standardInchiKey: structure.standardInchiKey,
    connectivityBlock: structure.connectivityBlock,
    parsed: parseStandardInchi(structure.standardInchi),
  };
}

export interface ConnectivityOptions {
  /** Which relations to search for (v1 without searchComponents: match only). */
  relations: ReadonlySet<TypeOfSearch>;
  /** A component in more multi-component structures than this is not searched inside others. */
  frequencyCap: number;
  /** Components with a shorter InChI are not expanded (legacy E; 0 = off). */
  minComponentInchiLength?: number;
  /** Only assignments of this source (legacy A). */
  sourceId?: number;
  /** Obsolete assignments too (legacy G). */
  includeObsolete?: boolean;
  /** Whole-structure matches must also share the second key block (legacy B=1). */
  sameStereoAndIsotopes?: boolean;
  /** Most entries returned (before the cap, totals are counted). */
  maxEntries: number;
}

export interface ConnectivityEntry {
  source: SourceDocument;
  assignment: AssignmentDocument;
  structure: CompoundDocument;
  typeOfSearch: TypeOfSearch;
  comparison: Comparison;
  /** The InChIs compared: the query's (or its component's) and the hit's (or its component's). */
  queryInchi: string | null;
  hitInchi: string;
}

export interface SkippedComponent {
  connectivityBlock: string;
  formula: string;
  structureCount: number;
}

export interface ConnectivityResult {
  searched: SearchedStructure;
  entries: ConnectivityEntry[];
  totalCompounds: number;
  totalSources: number;
  truncated: boolean;
  skippedComponents: SkippedComponent[];
}

interface Candidate {
  structure: CompoundDocument;
  typeOfSearch: TypeOfSearch;
  comparison: Comparison;
  queryInchi: string | null;
  hitInchi: string;
}

// Structures fetched per block: far above any real connectivity group, and bounded.
const structuresPerBlock = 10_000;

const allEqual: Comparison = {
  formula: true,
  connectivity: true,
  HAtoms: true,
  charge: true,
  protonation: true,
  stereoDbond: true,
  stereoSp3: true,
  stereoSp3Inverted: true,
  stereoType: true,
  isotope: true,
  isotopicExchangeableH: true,
};

function componentsOf(structure: CompoundDocument): InchiComponent[] {
  return parseStandardInchi(structure.standardInchi).components;
}

function distinctComponents(parsed: ParsedInchi): InchiComponent[] {
  const seen = new Set<string>();
  return parsed.components.filter((c) => !seen.has(c.connectivityBlock) && seen.add(c.connectivityBlock));
}

/** Compares query and hit on the first pair of components (in component order) with equal blocks. */
function firstComponentPair(
  queryComponents: InchiComponent[],
  hitComponents: InchiComponent[],
): [InchiComponent, InchiComponent] | undefined {
  for (const q of queryComponents) {
    for (const h of hitComponents) if (q.connectivityBlock === h.connectivityBlock) return [q, h];
  }
  return undefined;
}

function compareComponents(
  query: { layers: FullInchiLayers; inchi: string },
  hit: { layers: FullInchiLayers; inchi: string },
): Pick<Candidate, 'comparison' | 'queryInchi' | 'hitInchi'> {
  return { comparison: compareLayers(query.layers, hit.layers, true), queryInchi: query.inchi, hitInchi: hit.inchi };
}

/** The first reads of a search for whole-structure matches: the skeleton's structures and assignments. */
export interface SkeletonReads {
  connectivityBlock: string;
  structures: Promise<CompoundDocument[]>;
  assignments: Promise<AssignmentDocument[]>;
}

function assignmentFilter(options: ConnectivityOptions): AssignmentFilter {
  return { includeObsolete: options.includeObsolete, sourceId: options.sourceId };
}

/**
 * Starts the reads of one skeleton. An InChIKey names its skeleton (its first block) before it is
 * resolved, so a caller may start them in the same round trip as the key's own lookup and hand them
 * to connectivitySearch. Undefined when the search looks for no whole-structure matches.
 */
export function readSkeleton(
  context: LookupContext,
  connectivityBlock: string,
  options: ConnectivityOptions,
): SkeletonReads | undefined {
  if (!options.relations.has('match')) return undefined;
  const reads = {
    connectivityBlock,
    structures: compoundsByConnectivityBlock(context.engine, connectivityBlock, structuresPerBlock),
    assignments: assignmentsByConnectivityBlock(context.engine, connectivityBlock, assignmentFilter(options)),
  };
  // Read ahead of need, perhaps never awaited: a failure surfaces where they are awaited, never as an unhandled
  // rejection.
  reads.structures.catch(() => undefined);
  reads.assignments.catch(() => undefined);
  return reads;
}

/**
 * Finds the structures related to `searched`, with the relation and the layer comparison of each.
 * After the skeleton (read with the key), the component searches take two round trips whatever the
 * number of components: first how many structures hold each component that may be searched inside
 * others (the frequency cap) together with each component's own structures, then the structures
 * holding each component under the cap. Results are taken in the order the relations and the
 * components rank them.
 */
async function candidates(
  context: LookupContext,
  searched: SearchedStructure,
  options: ConnectivityOptions,
  skeleton: SkeletonReads | undefined,
): Promise<{ found: Map<number, Candidate>; skipped: SkippedComponent[] }> {
  const { engine } = context;
  const found = new Map<number, Candidate>();
  const skipped: SkippedComponent[] = [];
  const add = (candidate: Candidate): void => {
    if (!found.has(candidate.structure.uci)) found.set(candidate.structure.uci, candidate);
  };
  const query = searched.parsed;

  if (skeleton) {
    for (const structure of await skeleton.structures) {
      if (
        options.sameStereoAndIsotopes &&
        searched.standardInchiKey &&
        structure.standardInchiKey.slice(0, 25) !== searched.standardInchiKey.slice(0, 25)
      )
        continue;
      add(
        query
          ? {
              structure,
              typeOfSearch: 'match',
              comparison: compareLayers(query.layers, structure.layers, false),
              queryInchi: query.inchi,
              hitInchi: structure.standardInchi,
            }
          : {
              structure,
              typeOfSearch: 'match',
              comparison: allEqual,
              queryInchi: null,
              hitInchi: structure.standardInchi,
            },
      );
    }
  }
  if (!query) return { found, skipped };

  const expandable = (component: InchiComponent): boolean =>
    !options.minComponentInchiLength || component.inchi.length >= options.minComponentInchiLength;
  const single = query.components.length === 1;
  const distinct = distinctComponents(query).filter(expandable);
  // The components searched inside other structures, each under the frequency cap.
  const inside = single
    ? options.relations.has('queryIsComponent')
      ? query.components.filter(expandable)
      : []
    : options.relations.has('componentMatch')
      ? distinct
      : [];
  // Round trip 1: the counts, and (never capped: one term query each) a mixture's components as whole structures.
  const [counts, wholes] = await Promise.all([
    Promise.all(inside.map((component) => countStructuresWithComponent(engine, component.connectivityBlock))),
    !single && options.relations.has('componentIsResult')
      ? Promise.all(
          distinct.map((component) =>
            compoundsByConnectivityBlock(engine, component.connectivityBlock, structuresPerBlock),
          ),
        )
      : [],
  ]);
  const underCap = inside.map((_, i) => counts[i] <= options.frequencyCap);
  inside.forEach((component, i) => {
    if (!underCap[i])
      skipped.push({
        connectivityBlock: component.connectivityBlock,
        formula: component.layers.formula,
        structureCount: counts[i],
      });
  });
  // Round trip 2: the structures holding each component under the cap.
  const holding = await Promise.all(
    inside.map((component, i) =>
      underCap[i]
        ? compoundsWithComponent(engine, component.connectivityBlock, structuresPerBlock)
        : Promise.resolve([]),
    ),
  );

  if (single) {
    const [component] = query.components;
    for (const structure of holding[0] ?? []) {
      const pair = firstComponentPair([component], componentsOf(structure));
      if (pair) add({ structure, typeOfSearch: 'queryIsComponent', ...compareComponents(pair[0], pair[1]) });
    }
    return { found, skipped };
  }
  wholes.forEach((structures) => {
    for (const structure of structures) {
      const queryComponent = query.components.find((c) => c.connectivityBlock === structure.connectivityBlock)!;
      add({
        structure,
        typeOfSearch: 'componentIsResult',
        ...compareComponents(queryComponent, { layers: structure.layers, inchi: structure.standardInchi }),
      });
    }
  });
  inside.forEach((component, i) => {
    if (!underCap[i]) return;
    // The first pair in component order, among the components that may be searched: those found
    // over the cap so far are left out (components counted later than this one are not).
    const overCapSoFar = new Set(
      inside
        .slice(0, i + 1)
        .filter((_, j) => !underCap[j])
        .map((c) => c.connectivityBlock),
    );
    const searchable = query.components.filter((c) => expandable(c) && !overCapSoFar.has(c.connectivityBlock));
    for (const structure of holding[i]) {
      if (found.has(structure.uci)) continue;
      const pair = firstComponentPair(searchable, componentsOf(structure));
      if (pair) add({ structure, typeOfSearch: 'componentMatch', ...compareComponents(pair[0], pair[1]) });
    }
  });
  return { found, skipped };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Runs a connectivity search. Entries are ordered by relation, then the number of differing
 * layers, then UCI, source id and compound id; at most `maxEntries` are returned.
 */
export async function connectivitySearch(
  context: LookupContext,
  searched: SearchedStructure,
  options: ConnectivityOptions,
  started?: SkeletonReads,
): Promise<ConnectivityResult> {
  const filter = assignmentFilter(options);
  // Assignments carry their structure's block: those of the skeleton are searched while its
  // structures are read; only structures found through a component need a search by UCI after.
  const skeleton =
    started?.connectivityBlock === searched.connectivityBlock
      ? started
      : readSkeleton(context, searched.connectivityBlock, options);
  const [{ found, skipped }, ofBlock] = await Promise.all([
    candidates(context, searched, options, skeleton),
    skeleton?.assignments ?? [],
  ]);
  const others = [...found.values()]
    .filter((c) => !skeleton || c.structure.connectivityBlock !== searched.connectivityBlock)
    .map((c) => c.structure.uci);
  const [sources, ofOthers] = await Promise.all([
    context.sources.all(),
    assignmentsByUcis(context.engine, others, filter),
  ]);
  const assignments = [...ofBlock, ...ofOthers];
  const entries: ConnectivityEntry[] = [];
  for (const assignment of assignments) {
    const candidate = found.get(assignment.uci);
    const source = sources.get(assignment.sourceId);
    if (!candidate || !source) continue;
    entries.push({
      source,
      assignment,
      structure: candidate.structure,
      typeOfSearch: candidate.typeOfSearch,
      comparison: candidate.comparison,
      queryInchi: candidate.queryInchi,
      hitInchi: candidate.hitInchi,
    });
  }
  const rank = (entry: ConnectivityEntry): number => relations.indexOf(entry.typeOfSearch);
  entries.sort(
    (a, b) =>
      rank(a) - rank(b) ||
      differenceCount(a.comparison) - differenceCount(b.comparison) ||
      a.assignment.uci - b.assignment.uci ||
      a.assignment.sourceId - b.assignment.sourceId ||
      compareText(a.assignment.compoundId, b.assignment.compoundId),
  );
  const totalCompounds = new Set(entries.map((e) => e.assignment.uci)).size;
  const truncated = entries.length > options.maxEntries;
  return {
    searched,
    totalCompounds,
    totalSources: entries.length,
    truncated,
    skippedComponents: skipped,
    entries: truncated ? entries.slice(0, options.maxEntries) : entries,
  };
}
