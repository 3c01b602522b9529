/**
 * The legacy connectivity search (docs/legacy.md key_search / cpd_search): criteria A–H, and the two output
 * shapes of UniChem 1, on the one connectivity search of src/domain/connectivity.ts. No Express here.
 */
import { emptyLayers, inchiFromLayers, inchiKeyOf, parseStandardInchi, type Comparison } from '../../chemistry';
import { compoundsByKey } from '../../engine/compounds';
import { assignmentsByCompoundId, assignmentsByConnectivityBlock, assignmentsByKeys } from '../../engine/lookups';
import {
  connectivitySearch,
  readSkeleton,
  relations,
  searchedStructureOf,
  type ConnectivityEntry,
  type ConnectivityOptions,
  type SearchedStructure,
  type SkeletonReads,
  type TypeOfSearch,
} from '../../domain/connectivity';
import { InvalidQuery, UnknownResource } from '../../domain/errors';
import { indexedStructure, maxSourceId, requireSource, type LookupContext } from '../../domain/lookup';
import type { LegacyValue } from './format';
import labelTable from './labels.json';
import { legacySource, requireIdAssigned, sourceSummary } from './lookups';

/** The search criteria A–H of UniChem 1, as numbers. */
export interface Criteria {
  A: number;
  B: number;
  C: number;
  D: number;
  E: number;
  F: number;
  G: number;
  H: number;
}

export const criterionNames = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'] as const;

// Highest value of each criterion (A is a source id naming a source, or 0).
const maxima: Record<keyof Criteria, number> = { A: maxSourceId, B: 1, C: 4, D: 500, E: 2000, F: 1, G: 1, H: 1 };
const meanings: Record<keyof Criteria, string> = {
  A: `a source id (1 to ${maxSourceId}), or 0 for every source`,
  B: '0 (first InChIKey block) or 1 (first two blocks)',
  C:
    '0 (whole ~ whole), 1 (query ~ component of hit), 2 (component of ' +
    'query ~ hit), 3 (component ~ component) or 4 (all)',
  D: `0 (the service's COMPONENT_FREQUENCY_CAP) to 500`,
  E: '0 (off) to 2000',
  F: '0 (labels) or 1 (none)',
  G: '0 (current) or 1 (also obsolete)',
  H: '0 (nested) or 1 (table)',
};

/** Criteria from path segments; a left-off criterion is 0; InvalidQuery (400) for a value out of range. */
export function parseCriteria(segments: Partial<Record<keyof Criteria, string>>): Criteria {
  const criteria = {} as Criteria;
  for (const name of criterionNames) {
    const text = segments[name];
    if (text === undefined) {
      criteria[name] = 0;
      continue;
    }
    if (!/^[0-9]{1,10}$/.test(text) || Number(text) > maxima[name]) {
      throw new InvalidQuery(`criterion ${name} is "${text}": it must be ${meanings[name]}`);
    }
    criteria[name] = Number(text);
  }
  return criteria;
}

const relationsOfC: TypeOfSearch[][] = [
  ['match'],
  ['queryIsComponent'],
  ['componentIsResult'],
  ['componentMatch'],
  [...relations],
];
const labels = new Map(Object.entries((labelTable as { labels: Record<string, string> }).labels));

/**
 * The structure a key_search term stands for: a full key names an indexed structure; a 14-letter
 * first block stands for the connectivity layers (formula, /c, /h, /q) of an indexed structure
 * with that block, so every stereo and isotope layer of a hit is compared against "none".
 */
async function searchedOfKeyTerm(
  context: LookupContext,
  term: string,
  includeObsolete: boolean,
): Promise<SearchedStructure> {
  if (/^[A-Z]{14}$/.test(term)) {
    const [any] = await assignmentsByConnectivityBlock(context.engine, term, { includeObsolete }, 1);
    const structure = any ? await indexedStructure(context, { uci: any.uci }) : undefined;
    if (!structure) throw new UnknownResource(`no structure with the first InChIKey block ${term}`);
    const { formula, connections, hAtoms, charge } = structure.layers;
    const parsed = parseStandardInchi(
      // The skeleton alone: the first block's layers, no stereo, isotopes or protonation.
      inchiFromLayers({ ...emptyLayers(), formula, connections, hAtoms, charge }),
    );
    return { uci: null, standardInchiKey: inchiKeyOf(parsed), connectivityBlock: term, parsed };
  }
  if (!/^[A-Z]{14}-[A-Z]{8}SA-[A-Z]$/.test(term)) {
    throw new InvalidQuery(
      `"${term}" is neither a Standard InChIKey (XXXXXXXXXXXXXX-XXXXXXXXSA-X) nor its first block (14 capital letters)`,
    );
  }
  // Whether the key has an assignment and its structure by _id, side by side: one round trip with
  // the skeleton's reads the caller started (keySearch).
  const [[indexed], structures] = await Promise.all([
    assignmentsByKeys(context.engine, [term], { includeObsolete }, 1),
    compoundsByKey(context.engine, [term]),
  ]);
  const structure = indexed ? structures.get(term) : undefined;
  if (!structure) throw new UnknownResource(`no structure with InChIKey ${term}`);
  return searchedStructureOf(structure);
}

/**
 * The structures a cpd_search id stands for, by UCI: the ones it is current on (or, with G=1 and none current, was).
 */
async function searchedOfId(
  context: LookupContext,
  id: string,
  sourceText: string,
  includeObsolete: boolean,
): Promise<SearchedStructure[]> {
  const source = await legacySource(context, sourceText);
  let own = await assignmentsByCompoundId(context.engine, id, { sourceId: source.sourceID });
  if (own.length === 0 && includeObsolete)
    own = await assignmentsByCompoundId(context.engine, id, { sourceId: source.sourceID, obsoleteOnly: true });
  // An id that exists without a structure to search from finds nothing: {} (404 when it never existed).
  if (own.length === 0) await requireIdAssigned(context, id, source);
  const searched: SearchedStructure[] = [];
  for (const uci of [...new Set(own.map((x) => x.uci))].sort((a, b) => a - b)) {
    const structure = await indexedStructure(context, { uci });
    if (structure) searched.push(searchedStructureOf(structure));
  }
  return searched;
}

const flag = (same: boolean | null): string | null => (same === null ? null : same ? '0' : '1');

/** UniChem 1's per-layer flags: "0" same, "1" different; `p` null for component relations. */
function flags(comparison: Comparison): {
  b: string | null;
  i: string | null;
  m: string | null;
  p: string | null;
  s: string | null;
  t: string | null;
} {
  return {
    b: flag(comparison.stereoDbond),
    i: flag(comparison.isotope && comparison.isotopicExchangeableH),
    m: flag(comparison.stereoSp3Inverted),
    p: flag(comparison.protonation),
    s: flag(comparison.stereoType),
    t: flag(comparison.stereoSp3),
  };
}

/** The label of a match: the label-table name of the hit's matched component (or of the hit itself), else "". */
function labelOf(entry: ConnectivityEntry): string {
  const component = entry.structure.components?.find((c) => c.standardInchi === entry.hitInchi);
  return labels.get(component?.connectivityBlock ?? entry.structure.connectivityBlock) ?? '';
}

export const tableHeader = [
  'src_compound_id',
  'src_id',
  'aux_src',
  'assignment',
  'label',
  'C',
  'Full_Query_InChI',
  'Full_CpdId_InChI',
  'Matching_Query_InChI',
  'Matching_CpdId_InChI',
  'p',
  'b',
  't',
  'm',
  's',
  'i',
  'Query_InChIKey',
  'CpdId_InChIKey',
];

/**
 * H=0, as UniChem 1 documents it: per source, its metadata, the query's full key and InChI ("Full
 * Query InChIKey": the 14 letters when the query was a first block), and `src_matches`, each with
 * the pattern criterion `B` and a `match_compare` entry holding the component mapping `C`.
 */
function nested(
  searched: SearchedStructure,
  queryKey: string | null,
  entries: ConnectivityEntry[],
  criteria: Criteria,
): LegacyValue {
  const query = { 'Full Query InChIKey': queryKey, 'Full Query InChI': searched.parsed?.inchi ?? null };
  const bySource = new Map<number, { source: ConnectivityEntry['source']; matches: LegacyValue[] }>();
  for (const entry of entries) {
    const f = flags(entry.comparison);
    const group = bySource.get(entry.source.sourceID) ?? { source: entry.source, matches: [] };
    group.matches.push({
      src_compound_id: entry.assignment.compoundId,
      aux_src: entry.assignment.auxSrc ?? null,
      assignment: String(entry.assignment.assignment),
      label: criteria.F === 0 ? labelOf(entry) : '',
      B: String(criteria.B),
      CpdId_InChIKey: entry.structure.standardInchiKey,
      Full_CpdId_InChI: entry.structure.standardInchi,
      match_compare: [
        {
          C: String(relations.indexOf(entry.typeOfSearch)),
          Matching_Query_InChI: entry.queryInchi,
          Matching_CpdId_InChI: entry.hitInchi,
          b: f.b,
          i: f.i,
          m: f.m,
          p: f.p,
          s: f.s,
          t: f.t,
        },
      ],
    });
    bySource.set(entry.source.sourceID, group);
  }
  return [...bySource.values()]
    .sort((a, b) => a.source.sourceID - b.source.sourceID)
    .map((group) => ({ ...sourceSummary(group.source), ...query, src_matches: group.matches }));
}

function table(searched: SearchedStructure, entries: ConnectivityEntry[], criteria: Criteria): LegacyValue {
  return [
    tableHeader,
    ...entries.map((entry) => {
      const f = flags(entry.comparison);
      return [
        entry.assignment.compoundId,
        String(entry.source.sourceID),
        entry.assignment.auxSrc ?? null,
        String(entry.assignment.assignment),
        criteria.F === 0 ? labelOf(entry) : '',
        String(relations.indexOf(entry.typeOfSearch)),
        searched.parsed?.inchi ?? null,
        entry.structure.standardInchi,
        entry.queryInchi,
        entry.hitInchi,
        f.p,
        f.b,
        f.t,
        f.m,
        f.s,
        f.i,
        searched.standardInchiKey,
        entry.structure.standardInchiKey,
      ];
    }),
  ];
}

/** The connectivity search that the criteria A to G ask for. */
function optionsOf(context: LookupContext, criteria: Criteria): ConnectivityOptions {
  return {
    relations: new Set(relationsOfC[criteria.C]),
    sameStereoAndIsotopes: criteria.B === 1,
    frequencyCap: criteria.D || context.config.COMPONENT_FREQUENCY_CAP,
    minComponentInchiLength: criteria.E,
    sourceId: criteria.A || undefined,
    includeObsolete: criteria.G === 1,
    maxEntries: context.config.CONNECTIVITY_MAX_ENTRIES,
  };
}

/**
 * Each structure searched from, by its number; `queryKey` names the query as given (a first block
 * stays 14 letters); `skeleton`: reads of the skeleton already started (a full key's).
 */
async function search(
  context: LookupContext,
  searchedList: SearchedStructure[],
  criteria: Criteria,
  queryKey?: string,
  skeleton?: SkeletonReads,
): Promise<Record<string, LegacyValue>> {
  if (criteria.A !== 0) await requireSource(context, criteria.A);
  const out: Record<string, LegacyValue> = {};
  for (const [i, searched] of searchedList.entries()) {
    const result = await connectivitySearch(context, searched, optionsOf(context, criteria), skeleton);
    const key = queryKey ?? searched.standardInchiKey;
    out[String(i + 1)] =
      criteria.H === 1 ? table(searched, result.entries, criteria) : nested(searched, key, result.entries, criteria);
  }
  return out;
}

/** key_search/{key or first block}/A/.../H. */
export async function keySearch(
  context: LookupContext,
  term: string,
  criteria: Criteria,
): Promise<Record<string, LegacyValue>> {
  // A full key names its skeleton before it is resolved: the skeleton's reads leave with the key's
  // own, in one round trip, as a v1 connectivity search by key does.
  const skeleton =
    term.length > 14 && /^[A-Z]{14}-/.test(term)
      ? readSkeleton(context, term.slice(0, 14), optionsOf(context, criteria))
      : undefined;
  return search(context, [await searchedOfKeyTerm(context, term, criteria.G === 1)], criteria, term, skeleton);
}

/** cpd_search/{id}/{src}/A/.../H: one numbered result per structure the id stands for. */
export async function compoundSearch(
  context: LookupContext,
  id: string,
  sourceText: string,
  criteria: Criteria,
): Promise<Record<string, LegacyValue>> {
  return search(context, await searchedOfId(context, id, sourceText, criteria.G === 1), criteria);
}
