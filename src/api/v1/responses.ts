/** The answers of the v1 API (docs/api.md), shaped as UniChem's clients read them. */
import { inchiKeyOf } from '../../chemistry';
import { compoundsByKey, compoundsByUci } from '../../engine/compounds';
import { assignmentsByCompoundId, assignmentsByKeys, assignmentsByUcis } from '../../engine/lookups';
import {
  connectivitySearch,
  readSkeleton,
  relations,
  searchedStructureOf,
  type SearchedStructure,
  type TypeOfSearch,
} from '../../domain/connectivity';
import { InvalidQuery, UnknownResource } from '../../domain/errors';
import { asIdentifierQuery, structureText, type Computed } from '../../domain/structures';
import {
  checkInchiKey,
  compoundViews,
  indexedStructure,
  inchiView,
  nameAssignments,
  nameSources,
  nameType,
  normalName,
  noSourceHoldsUci,
  parseQueryInchi,
  parseUciText,
  queryKey,
  requireSource,
  sourceEntry,
  sourceIdAssignments,
  type CompoundQuery,
  type CompoundView,
  type IdentifierQuery,
  type LookupContext,
  type StructureType,
} from '../../domain/lookup';
import { sourceView } from '../../domain/sources';
import { changeSpan, sourceLoads, type ChangeSpan, type LoadView } from '../../domain/changes';
import type { CompoundDocument, SourceDocument, AssignmentDocument } from '../../engine/documents';

export interface NotFound {
  response: 'Not found';
  error: string;
  totalCompounds: 0;
  compounds: [];
  notFound: string[];
}

export function notFound(compound: string, error: string): NotFound {
  return { response: 'Not found', error, totalCompounds: 0, compounds: [], notFound: [compound] };
}

export function describe(query: IdentifierQuery): string {
  const compound = query.compound.trim();
  switch (query.type) {
    case 'uci':
      return `no structure with UCI ${compound}`;
    case 'inchikey':
      return `no structure with InChIKey ${compound}`;
    case 'inchi':
      return `no structure with this InChI (InChIKey ${inchiKeyOf(compound)})`;
    case 'sourceID':
      return `no current compound "${compound}" in source ${query.sourceID}`;
  }
}

/**
 * Why a query found nothing: as `describe` says, except for a UCI, InChIKey or InChI whose structure is
 * stored but whose ids every source has dropped, which the pages and every v1 search call by that name.
 */
export async function describeMissing(context: LookupContext, query: IdentifierQuery): Promise<string> {
  if (query.type === 'uci') {
    const uci = parseUciText(query.compound.trim());
    if ((await compoundsByUci(context.engine, [uci], ['uci'])).has(uci)) return noSourceHoldsUci(uci);
  }
  const key = queryKey(context, query);
  if (key !== undefined) {
    const [stored] = (await compoundsByKey(context.engine, [key])).values();
    if (stored) return noSourceHoldsUci(stored.uci);
  }
  return describe(query);
}

/**
 * The answer to a query, by identifier or by structure: a SMILES or molfile is answered as its
 * computed Standard InChI, and the answer (Success or Not found) adds what was computed; its
 * `notFound` names the structure as it was sent.
 */
export async function answer<Q extends CompoundQuery, R extends { response: string }>(
  context: LookupContext,
  query: Q,
  answerIdentifier: (query: Q & IdentifierQuery) => Promise<R>,
): Promise<R | (R & { computed: Computed })> {
  const { query: identifierQuery, computed } = await asIdentifierQuery(context, query);
  const result = await answerIdentifier(identifierQuery);
  if (!computed) return result;
  const sent =
    result.response === 'Not found' ? { notFound: [structureText(query.type as StructureType, query.compound)] } : {};
  return { ...result, ...sent, computed };
}

/** POST /compounds: the structures a query stands for, with their records in every source. */
export async function findCompounds(
  context: LookupContext,
  query: CompoundQuery,
): Promise<
  | { response: 'Success'; totalCompounds: number; notFound: string[]; compounds: CompoundView[]; computed?: Computed }
  | (NotFound & { computed?: Computed })
  | { response: 'Success'; totalCompounds: number; notFound: string[]; compounds: CompoundView[]; names: NameGiven[] }
> {
  if (query.type === nameType) return findByName(context, query.compound);
  return answer(context, query, (identifierQuery) => findByIdentifier(context, identifierQuery));
}

/** Which source gives which structure the name searched (a `type: name` answer's `names`). */
export interface NameGiven {
  uci: number;
  id: number;
  shortName: string;
  name: string;
}

/**
 * POST /compounds with `type: name`: every structure a source of names gives the name, with its
 * records in every source, and which source gave it the name.
 */
async function findByName(
  context: LookupContext,
  text: string,
): Promise<
  | { response: 'Success'; totalCompounds: number; notFound: string[]; compounds: CompoundView[]; names: NameGiven[] }
  | NotFound
> {
  const name = normalName(text);
  const [named, sources] = await Promise.all([nameAssignments(context, name), nameSources(context)]);
  if (named.length === 0) {
    const searched =
      sources.length === 0
        ? 'no source holds names'
        : `in ${sources.map((source) => `${source.name} (${source.sourceID})`).join(', ')}`;
    return notFound(name, `no structure named "${name}" (${searched})`);
  }
  const [assignments, structures] = await Promise.all([
    assignmentsByUcis(
      context.engine,
      named.map((x) => x.uci),
    ),
    compoundsByKey(context.engine, [...new Set(named.map((x) => x.standardInchiKey))]),
  ]);
  const compounds = await compoundViews(context, assignments, structures);
  const byId = new Map(sources.map((source) => [source.sourceID, source]));
  const names = named
    .filter((x) => byId.has(x.sourceId))
    .map((x) => ({ uci: x.uci, id: x.sourceId, shortName: byId.get(x.sourceId)!.name, name: x.compoundId }));
  return { response: 'Success', totalCompounds: compounds.length, notFound: [], compounds, names };
}

async function findByIdentifier(
  context: LookupContext,
  query: IdentifierQuery,
): Promise<{ response: 'Success'; totalCompounds: number; notFound: string[]; compounds: CompoundView[] } | NotFound> {
  const [assignments, structures] = await queryAssignments(context, query);
  const compounds = await compoundViews(context, assignments, structures);
  if (compounds.length === 0) {
    // A UCI or key whose ids every source dropped still names its structure: say so, as the pages do.
    const [stored] = query.type === 'sourceID' ? [] : (structures?.values() ?? []);
    return notFound(query.compound.trim(), stored ? noSourceHoldsUci(stored.uci) : describe(query));
  }
  return { response: 'Success', totalCompounds: compounds.length, notFound: [], compounds };
}

/**
 * The current assignments a /compounds query stands for, with the structures already known by then:
 * a key or InChI names its structure, and a UCI too (by its `uci` field), read while its assignments
 * are searched; a source's id names its structures' keys, read while their other assignments are
 * searched.
 */
async function queryAssignments(
  context: LookupContext,
  query: IdentifierQuery,
): Promise<[AssignmentDocument[], Map<string, CompoundDocument>?]> {
  const key = queryKey(context, query);
  if (key !== undefined)
    return Promise.all([assignmentsByKeys(context.engine, [key]), compoundsByKey(context.engine, [key])]);
  if (query.type === 'uci') {
    const uci = parseUciText(query.compound.trim());
    const [assignments, structures] = await Promise.all([
      assignmentsByUcis(context.engine, [uci]),
      compoundsByUci(context.engine, [uci]),
    ]);
    return [assignments, new Map([...structures.values()].map((structure) => [structure.standardInchiKey, structure]))];
  }
  const own = await sourceIdAssignments(context, query);
  return Promise.all([
    assignmentsByUcis(
      context.engine,
      own.map((x) => x.uci),
    ),
    compoundsByKey(context.engine, [...new Set(own.map((x) => x.standardInchiKey))]),
  ]);
}

/** The structure a connectivity query stands for; undefined when it names nothing indexed. */
export async function resolveSearched(
  context: LookupContext,
  query: IdentifierQuery,
): Promise<SearchedStructure | undefined> {
  const compound = query.compound.trim();
  const fromIndexed = async (uci: number): Promise<SearchedStructure | undefined> => {
    const structure = await indexedStructure(context, { uci });
    const current = structure ? await assignmentsByUcis(context.engine, [uci], {}, 1) : [];
    if (!structure || current.length === 0) return undefined;
    return searchedStructureOf(structure);
  };
  switch (query.type) {
    case 'uci':
      return fromIndexed(parseUciText(compound));
    case 'inchi': {
      const parsed = parseQueryInchi(compound, context.config.MAX_INCHI_LENGTH);
      const standardInchiKey = inchiKeyOf(parsed);
      const indexed = await assignmentsByKeys(context.engine, [standardInchiKey], {}, 1);
      return { uci: indexed[0]?.uci ?? null, standardInchiKey, connectivityBlock: parsed.connectivityBlock, parsed };
    }
    case 'inchikey': {
      const standardInchiKey = checkInchiKey(compound);
      // The key names its structure: read it while a current assignment is looked for.
      const [indexed, structures] = await Promise.all([
        assignmentsByKeys(context.engine, [standardInchiKey], {}, 1),
        compoundsByKey(context.engine, [standardInchiKey]),
      ]);
      const structure = structures.get(standardInchiKey);
      if (indexed.length > 0 && structure) return searchedStructureOf(structure);
      // Not indexed: its first block still names a skeleton.
      return { uci: null, standardInchiKey, connectivityBlock: standardInchiKey.slice(0, 14), parsed: null };
    }
    case 'sourceID': {
      if (query.sourceID === undefined)
        throw new InvalidQuery('a sourceID query needs "sourceID": the id of the source the compound id belongs to');
      await requireSource(context, query.sourceID);
      const own = await assignmentsByCompoundId(context.engine, compound, { sourceId: query.sourceID });
      const ucis = [...new Set(own.map((x) => x.uci))].sort((a, b) => a - b);
      if (ucis.length > 1) {
        throw new InvalidQuery(
          `"${compound}" in source ${query.sourceID} is assigned to ` +
            `${ucis.length} structures (UCIs ${ucis.join(', ')}): query one of ` +
            `them by "type": "uci"`,
        );
      }
      return ucis.length === 1 ? fromIndexed(ucis[0]) : undefined;
    }
  }
}

/** POST /connectivity. */
export async function searchConnectivity(
  context: LookupContext,
  query: CompoundQuery & { searchComponents?: boolean },
): Promise<object> {
  return answer(context, query, (identifierQuery) => searchByIdentifier(context, identifierQuery));
}

async function searchByIdentifier(
  context: LookupContext,
  query: IdentifierQuery & { searchComponents?: boolean },
): Promise<NotFound | { response: 'Success'; [field: string]: unknown }> {
  const options = {
    relations: new Set<TypeOfSearch>(query.searchComponents ? relations : ['match']),
    frequencyCap: context.config.COMPONENT_FREQUENCY_CAP,
    maxEntries: context.config.CONNECTIVITY_MAX_ENTRIES,
  };
  // A key's first block is its skeleton: the skeleton is read in the same round trip as the key.
  const skeleton =
    query.type === 'inchikey'
      ? readSkeleton(context, checkInchiKey(query.compound.trim()).slice(0, 14), options)
      : undefined;
  const searched = await resolveSearched(context, query);
  if (!searched) return notFound(query.compound.trim(), await describeMissing(context, query));
  const result = await connectivitySearch(context, searched, options, skeleton);
  if (result.totalSources === 0)
    return notFound(
      query.compound.trim(),
      `no indexed structure shares the skeleton (first InChIKey block ${searched.connectivityBlock}) of the query`,
    );
  return {
    response: 'Success',
    searchedCompound: {
      uci: searched.uci,
      standardInchiKey: searched.standardInchiKey,
      inchi: searched.parsed ? inchiView(searched.parsed.inchi, searched.parsed.layers) : null,
    },
    totalCompounds: result.totalCompounds,
    totalSources: result.totalSources,
    truncated: result.truncated,
    skippedComponents: result.skippedComponents,
    sources: result.entries.map((entry) => ({
      ...sourceEntry(entry.source, entry.assignment),
      uci: entry.assignment.uci,
      standardInchiKey: entry.structure.standardInchiKey,
      typeOfSearch: entry.typeOfSearch,
      comparison: entry.comparison,
    })),
  };
}

function sourceResponse(source: SourceDocument): object {
  const view = sourceView(source);
  const release = view.srcReleaseNumber;
  return { ...view, srcReleaseNumber: release !== null && /^[0-9]+$/.test(release) ? Number(release) : release };
}

/** GET /sources. */
export async function listSources(context: LookupContext): Promise<object> {
  const sources = [...(await context.sources.all()).values()].sort((a, b) => a.sourceID - b.sourceID);
  return { response: 'Success', totalSources: sources.length, sources: sources.map(sourceResponse) };
}

/** GET /sources/{id}. */
export async function getSource(context: LookupContext, sourceId: number): Promise<object> {
  const source = await requireSource(context, sourceId);
  return { response: 'Success', totalSources: 1, sources: [sourceResponse(source)] };
}

/** The Standard InChI of a UCI with a current assignment (for the image endpoint); UnknownResource otherwise. */
export async function inchiOfUci(context: LookupContext, uci: number): Promise<string> {
  const structure = (await compoundsByUci(context.engine, [uci], ['uci', 'standardInchi'])).get(uci);
  const current = structure ? await assignmentsByUcis(context.engine, [uci], {}, 1) : [];
  if (!structure || current.length === 0) throw new UnknownResource(`no structure with UCI ${uci}`);
  return structure.standardInchi;
}

/** GET /sources/{sourceID}/loads: the loads that replaced a source's assignments, newest first. */
export async function sourceLoadList(
  context: LookupContext,
  sourceId: number,
): Promise<{ response: 'Success'; loads: LoadView[] }> {
  await requireSource(context, sourceId);
  return { response: 'Success', loads: await sourceLoads(context.engine, sourceId) };
}

/** GET /sources/{sourceID}/changes: which loads make the net change of a source since load `since`. */
export async function sourceChangeSpan(context: LookupContext, sourceId: number, since: string): Promise<ChangeSpan> {
  await requireSource(context, sourceId);
  return changeSpan(context.engine, sourceId, since.trim());
}
