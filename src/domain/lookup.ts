/**
 * Compound lookups shared by the v1 and legacy APIs: a query (UCI, InChI, InChIKey or a source's
 * compound id) resolves to structures and their assignments.
 */
import {
  InchiError,
  inchiKeyOf,
  parseStandardInchi,
  responseLayers,
  type FullInchiLayers,
  type InchiLayers,
  type ParsedInchi,
} from '../chemistry';
import type { Config } from '../config';
import type { Engine } from '../engine/client';
import { compoundsByKey, compoundsByUci } from '../engine/compounds';
import { assignmentsByCompoundId, assignmentsByName, type AssignmentFilter } from '../engine/lookups';
import { InvalidQuery, UnknownResource } from './errors';
import { compoundUrl, type SourceCatalog } from './sources';
import type { CompoundDocument, SourceDocument, AssignmentDocument } from '../engine/documents';

/** Query types that name a structure by an identifier (UniChem's). */
export const identifierTypes = ['uci', 'inchi', 'inchikey', 'sourceID'] as const;
/**
 * Query types that draw a structure (docs/api.md): its Standard InChI is computed, then it is looked up as an InChI.
 */
export const structureTypes = ['smiles', 'molfile'] as const;
export const queryTypes = [...identifierTypes, ...structureTypes] as const;
export type QueryType = (typeof queryTypes)[number];
export type IdentifierType = (typeof identifierTypes)[number];
export type StructureType = (typeof structureTypes)[number];

/**
 * The query type of a name (aspirin, acetylsalicylic acid) in the sources whose compound ids are
 * names: POST /compounds only.
 */
export const nameType = 'name';

export interface CompoundQuery {
  type: QueryType | typeof nameType;
  compound: string;
  sourceID?: number;
}

/** A query by identifier: what a structure query becomes once its InChI is computed. */
export interface IdentifierQuery extends Omit<CompoundQuery, 'type'> {
  type: IdentifierType;
}

/**
 * Reads SMILES and molfiles (RDKit, in an isolated worker): the Standard InChI of one, or a domain error saying why
 * not.
 */
export interface StructureReader {
  standardInchi(type: StructureType, text: string): Promise<string>;
}

/** What a substructure query is written in (docs/similarity.md). */
export type SubstructureQueryType = 'smiles' | 'smarts' | 'molfile';

/**
 * Fingerprints and substructure matches (RDKit, in isolated workers): what the similarity and
 * substructure searches ask of the molecule toolkit, which has this shape.
 */
export interface MoleculeMatcher {
  /** How many workers it matches structures on at once. */
  readonly size: number;
  /** The on-bits of each InChI's Morgan fingerprint, in order, or why it has none. */
  fingerprints(inchis: string[]): Promise<({ morgan: number[] } | { error: string })[]>;
  /** A substructure query's pattern fingerprint and its heavy atoms, or why it cannot be read. */
  describeQuery(
    type: SubstructureQueryType,
    text: string,
  ): Promise<{ pattern: number[]; heavyAtoms: number } | { unreadable: string }>;
  /** Which of the stored molecules (RDKit's binary form, base64) contain the query, in order. */
  match(type: SubstructureQueryType, text: string, molecules: { uci: number; molecule: string }[]): Promise<boolean[]>;
}

/** Everything a lookup needs, built once per process. */
export interface LookupContext {
  engine: Engine;
  config: Config;
  sources: SourceCatalog;
  /** Structures as input; a context without it answers SMILES and molfile queries with an error. */
  structures?: StructureReader;
  /** Fingerprints and substructure matches, for similarity and substructure searches. */
  molecules?: MoleculeMatcher;
}

/**
 * A Standard InChIKey, case aside: a non-standard key (no SA) names no structure chemxref can hold.
 * Keys are upper case, but one copied from a lower-cased table or URL still names its structure.
 * (Without the `u` flag, `i` folds ASCII letters only: no other character reads as A-Z.)
 */
const standardInchiKeyPattern = /^[A-Z]{14}-[A-Z]{8}SA-[A-Z]$/i;

/** A UCI from user text: a positive integer, else InvalidQuery. */
export function parseUciText(text: string): number {
  if (!/^[0-9]{1,15}$/.test(text) || Number(text) < 1)
    throw new InvalidQuery(`"${text}" is not a UCI: a UCI is a positive integer`);
  return Number(text);
}

/** A Standard InChIKey from user text (v1 and legacy alike), in upper case; InvalidQuery (400) if it is none. */
export function checkInchiKey(text: string): string {
  if (!standardInchiKeyPattern.test(text)) {
    throw new InvalidQuery(
      `"${text}" is not a Standard InChIKey: it has the form XXXXXXXXXXXXXX-XXXXXXXXSA-X ` +
        '(14 letters, a hyphen, 8 letters and SA, a hyphen, 1 letter; lower case is read as upper case)',
    );
  }
  return text.toUpperCase();
}

/**
 * `text` in upper case when it has the form of an InChIKey or of its first block in any case
 * (`rzvajinkpmorjf-uhfffaoysa-n`), else as it is: what a key-taking path reads.
 */
export function inchiKeyCase(text: string): string {
  return /^[A-Z]{14}(-[A-Z]{10}-[A-Z])?$/i.test(text) ? text.toUpperCase() : text;
}

/** A Standard InChI from user text, parsed; InvalidQuery with the reason when it is not one. */
export function parseQueryInchi(text: string, maxLength: number): ParsedInchi {
  if (text.length > maxLength)
    throw new InvalidQuery(`the InChI has ${text.length} characters, more than the ${maxLength} this service accepts`);
  try {
    return parseStandardInchi(text);
  } catch (error) {
    if (error instanceof InchiError) throw new InvalidQuery(error.message);
    throw error;
  }
}

/**
 * Why `compound` is not a valid value for a query of `type`, in the words of the domain's own checks;
 * undefined when it is one. For the request validator's findings, which only say which pattern failed.
 */
export function compoundProblem(type: QueryType, compound: unknown): string | undefined {
  if (typeof compound !== 'string' && !(type === 'uci' && typeof compound === 'number')) {
    return `"compound" must be a string${type === 'uci' ? ' or a whole number' : ''}`;
  }
  const text = String(compound).trim();
  if (text === '') return 'the compound is empty or only whitespace';
  try {
    if (type === 'uci') parseUciText(text);
    if (type === 'inchikey') checkInchiKey(text);
    if (type === 'inchi') parseQueryInchi(text, Infinity);
  } catch (error) {
    if (error instanceof InvalidQuery) return error.message;
    throw error;
  }
  return undefined;
}

/** The largest source id: source ids are 32-bit integers in the engine (and in the OpenAPI document). */
export const maxSourceId = 2_147_483_647;

/** Checks that a source exists; UnknownResource (404) otherwise. */
export async function requireSource(context: LookupContext, sourceId: number): Promise<SourceDocument> {
  const source = await context.sources.get(sourceId);
  if (!source) throw new UnknownResource(`source ${sourceId} does not exist`);
  return source;
}

/** The InChIKey an `inchikey` or `inchi` query names (checked, or computed); undefined for the other types. */
export function queryKey(context: LookupContext, query: IdentifierQuery): string | undefined {
  const compound = query.compound.trim();
  if (query.type === 'inchikey') return checkInchiKey(compound);
  if (query.type === 'inchi') return inchiKeyOf(parseQueryInchi(compound, context.config.MAX_INCHI_LENGTH));
  return undefined;
}

/** The assignments of a `sourceID` query's compound id in its own source, under `filter`. */
export async function sourceIdAssignments(
  context: LookupContext,
  query: CompoundQuery,
  filter: AssignmentFilter = {},
): Promise<AssignmentDocument[]> {
  if (query.sourceID === undefined || query.sourceID === null)
    throw new InvalidQuery('a sourceID lookup needs "sourceID": the id of the source the compound id belongs to');
  await requireSource(context, query.sourceID);
  const compound = query.compound.trim();
  if (compound === '') throw new InvalidQuery('"compound" is empty: give the compound id in the source');
  return assignmentsByCompoundId(context.engine, compound, { ...filter, sourceId: query.sourceID });
}

/**
 * A name as name searches read it and name sources keep it: without surrounding whitespace, each
 * run of whitespace inside one space (case is left to the search, which ignores it).
 */
export function normalName(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/** The sources whose compound ids are names, by id. */
export async function nameSources(context: LookupContext): Promise<SourceDocument[]> {
  return [...(await context.sources.all()).values()]
    .filter((source) => source.idsAreNames && !source.retired)
    .sort((a, b) => a.sourceID - b.sourceID);
}

/**
 * The current assignments that give a structure the name `text`, in the sources whose compound ids
 * are names, case and whitespace aside (aspirin, Aspirin and ` ASPIRIN ` are one name).
 */
export async function nameAssignments(
  context: LookupContext,
  text: string,
  sourceId?: number,
): Promise<AssignmentDocument[]> {
  const name = normalName(text);
  if (name === '') return [];
  const sources = (await nameSources(context)).filter(
    (source) => sourceId === undefined || source.sourceID === sourceId,
  );
  return assignmentsByName(
    context.engine,
    name,
    sources.map((source) => source.sourceID),
  );
}

/**
 * The current assignments of `text` as a compound id, as the source writes it, or as a name in the
 * sources of names (`nameAssignments`): what a search box's plain text finds. In every source, or
 * in `sourceId` only.
 */
export async function idOrNameAssignments(
  context: LookupContext,
  text: string,
  sourceId?: number,
): Promise<AssignmentDocument[]> {
  const [byId, byName] = await Promise.all([
    assignmentsByCompoundId(context.engine, text, sourceId === undefined ? {} : { sourceId }),
    nameAssignments(context, text, sourceId),
  ]);
  const seen = new Set(byId.map((x) => `${x.sourceId}\t${x.uci}\t${x.compoundId}`));
  return [...byId, ...byName.filter((x) => !seen.has(`${x.sourceId}\t${x.uci}\t${x.compoundId}`))].sort(
    (a, b) => a.uci - b.uci || a.sourceId - b.sourceId || (a.compoundId < b.compoundId ? -1 : 1),
  );
}

/** The `inchi` object of a v1 response: the InChI and its 11 layers. */
export function inchiView(inchi: string, layers: FullInchiLayers): InchiLayers & { inchi: string } {
  return { inchi, ...responseLayers(layers) };
}

export interface SourceEntry {
  id: number;
  shortName: string;
  longName: string | null;
  compoundId: string;
  url: string | null;
}

/** One assignment as a v1 `sources` entry. */
export function sourceEntry(source: SourceDocument, assignment: AssignmentDocument): SourceEntry {
  return {
    id: source.sourceID,
    shortName: source.name,
    longName: source.nameLong ?? source.nameLabel,
    compoundId: assignment.compoundId,
    url: compoundUrl(source, assignment.compoundId, assignment.auxSrc),
  };
}

export function bySourceThenId(a: { id: number; compoundId: string }, b: { id: number; compoundId: string }): number {
  return a.id - b.id || (a.compoundId < b.compoundId ? -1 : a.compoundId > b.compoundId ? 1 : 0);
}

export interface CompoundView {
  uci: number;
  standardInchiKey: string;
  inchi: InchiLayers & { inchi: string };
  sources: SourceEntry[];
}

/**
 * Structures and their sources for a set of assignments: compounds by UCI, sources by id then
 * compound id. `known`: structures already read, by key.
 */
export async function compoundViews(
  context: LookupContext,
  assignments: AssignmentDocument[],
  known = new Map<string, CompoundDocument>(),
): Promise<CompoundView[]> {
  const sources = await context.sources.all();
  // Every assignment carries its structure's key, the compounds' _id: one search by _id (sent with the lookup's other
  // searches).
  const missing = [...new Set(assignments.map((x) => x.standardInchiKey))].filter((key) => !known.has(key));
  const byKey = new Map([...known, ...(await compoundsByKey(context.engine, missing))]);
  const structures = new Map([...byKey.values()].map((structure) => [structure.uci, structure]));
  const views = new Map<number, CompoundView>();
  for (const assignment of assignments) {
    const structure = structures.get(assignment.uci);
    const source = sources.get(assignment.sourceId);
    if (!structure || !source) continue;
    let view = views.get(assignment.uci);
    if (!view) {
      view = {
        uci: assignment.uci,
        standardInchiKey: structure.standardInchiKey,
        inchi: inchiView(structure.standardInchi, structure.layers),
        sources: [],
      };
      views.set(assignment.uci, view);
    }
    view.sources.push(sourceEntry(source, assignment));
  }
  for (const view of views.values()) view.sources.sort(bySourceThenId);
  return [...views.values()].sort((a, b) => a.uci - b.uci);
}

/** The structure a UCI, key or InChI names, when it is indexed. */
export async function indexedStructure(
  context: LookupContext,
  query: { uci?: number; standardInchiKey?: string },
): Promise<CompoundDocument | undefined> {
  if (query.uci !== undefined) return (await compoundsByUci(context.engine, [query.uci])).get(query.uci);
  if (query.standardInchiKey)
    return (await compoundsByKey(context.engine, [query.standardInchiKey])).get(query.standardInchiKey);
  return undefined;
}

/**
 * Why a UCI whose structure is stored answers no lookup: every id that named it is obsolete (UCIs are
 * never reused, so a released-away structure keeps its number and its history). The API's "Not
 * found" and the compound page's 404 both say it.
 */
export function noSourceHoldsUci(uci: number | string): string {
  return `no source holds UCI ${uci} now: every id that named it is obsolete`;
}
