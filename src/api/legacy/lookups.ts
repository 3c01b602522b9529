/**
 * The lookups of the legacy API (docs/legacy.md), on the shared domain (src/domain/lookup.ts) and engine
 * reads: every value a string, as UniChem 1 returned them. No Express here.
 */
import { compoundsByKey, compoundsByUci } from '../../engine/compounds';
import { releaseOfIndex, SourceRelease, type WholeSourceReadOptions } from '../../engine/legacy';
import {
  indexFigures,
  assignmentsByCompoundId,
  assignmentsByKeys,
  assignmentsByUcis,
  type AssignmentFilter,
} from '../../engine/lookups';
import { InvalidQuery, UnknownResource } from '../../domain/errors';
import { checkInchiKey, maxSourceId, requireSource, type LookupContext } from '../../domain/lookup';
import { compoundUrl } from '../../domain/sources';
import type { SourceDocument, AssignmentDocument } from '../../engine/documents';
import type { LegacyValue } from './format';

type Row = Record<string, LegacyValue>;

/**
 * A source id in a legacy path: up to 10 digits without a leading zero (400 naming it otherwise),
 * naming a source (404 otherwise). An id of 10 digits over maxSourceId is well-formed, but no source
 * can have it: it is a 404 like any other id no source has, as the document says.
 */
export async function legacySource(context: LookupContext, text: string): Promise<SourceDocument> {
  if (!/^[1-9][0-9]{0,9}$/.test(text)) {
    throw new InvalidQuery(`"${text}" is not a source id: a source id is an integer from 1 to ${maxSourceId}`);
  }
  if (Number(text) > maxSourceId) {
    throw new UnknownResource(`source ${text} does not exist: source ids go up to ${maxSourceId}`);
  }
  return requireSource(context, Number(text));
}

/** The metadata UniChem 1 gave with each source (verbose_inchikey, key_search). */
export function sourceSummary(source: SourceDocument): Row {
  return {
    src_id: String(source.sourceID),
    name: source.name,
    name_long: source.nameLong,
    name_label: source.nameLabel,
    description: source.description,
    src_url: source.srcUrl,
    base_id_url: source.baseIdUrl,
    base_id_url_available: source.baseIdUrlAvailable ? '1' : '0',
    aux_for_url: source.auxForUrl ? '1' : '0',
  };
}

function bySourceThenId(a: AssignmentDocument, b: AssignmentDocument): number {
  return (
    a.sourceId - b.sourceId ||
    (a.compoundId < b.compoundId ? -1 : a.compoundId > b.compoundId ? 1 : 0) ||
    b.assignment - a.assignment
  );
}

/**
 * Rows of `assignments` by source then id, without repeats (an id on several of the structures appears once per
 * assignment state).
 */
function rows(assignments: AssignmentDocument[], row: (assignment: AssignmentDocument) => Row): Row[] {
  const seen = new Set<string>();
  const out: Row[] = [];
  for (const assignment of [...assignments].sort(bySourceThenId)) {
    const shaped = row(assignment);
    const key = JSON.stringify(shaped);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(shaped);
    }
  }
  return out;
}

/*
 * UniChem 1 answers a well-formed query about something that exists with a list, empty when there is
 * nothing to give (an id with no obsolete assignment, a structure whose ids are all obsolete), and
 * 404 only for what does not exist: an id never assigned in its source, a key of no structure, an
 * unknown source. "Exists" is "has an assignment, current or obsolete".
 */

/** Whether `id` has ever been assigned in `source` (in any source when undefined); UnknownResource (404) when not. */
export async function requireIdAssigned(context: LookupContext, id: string, source?: SourceDocument): Promise<void> {
  const any = await assignmentsByCompoundId(
    context.engine,
    id,
    { includeObsolete: true, sourceId: source?.sourceID },
    1,
  );
  if (any.length > 0) return;
  throw new UnknownResource(
    source ? `no compound "${id}" in source ${source.sourceID} (${source.name})` : `no source holds a compound "${id}"`,
  );
}

/** Whether a structure with `key` has an assignment, current or obsolete; UnknownResource (404) when not. */
async function requireKeyAssigned(context: LookupContext, key: string): Promise<void> {
  if ((await assignmentsByKeys(context.engine, [key], { includeObsolete: true }, 1)).length === 0)
    throw new UnknownResource(`no structure with InChIKey ${key}`);
}

/**
 * The UCIs a (source, id) pair is assigned to under `filter`: none when the id exists without such an assignment,
 * UnknownResource (404) when it does not exist.
 */
async function ucisOfId(
  context: LookupContext,
  id: string,
  source: SourceDocument,
  filter: AssignmentFilter,
): Promise<number[]> {
  const own = await assignmentsByCompoundId(context.engine, id, { ...filter, sourceId: source.sourceID });
  if (own.length === 0) await requireIdAssigned(context, id, source);
  return [...new Set(own.map((x) => x.uci))];
}

/** inchikey / inchikey_all: the ids of a structure; `all` adds obsolete ones with their assignment. */
export async function idsOfKey(context: LookupContext, key: string, all: boolean): Promise<Row[]> {
  const assignments = await assignmentsByKeys(context.engine, [checkInchiKey(key)], { includeObsolete: all });
  if (assignments.length === 0) await requireKeyAssigned(context, key);
  return rows(assignments, (x): Row =>
    all
      ? { src_id: String(x.sourceId), src_compound_id: x.compoundId, assignment: String(x.assignment) }
      : { src_id: String(x.sourceId), src_compound_id: x.compoundId },
  );
}

/** verbose_inchikey: per source, its metadata and the structure's current ids in it. */
export async function verboseIdsOfKey(context: LookupContext, key: string): Promise<Row[]> {
  const assignments = await assignmentsByKeys(context.engine, [checkInchiKey(key)]);
  if (assignments.length === 0) await requireKeyAssigned(context, key);
  const sources = await context.sources.all();
  const bySource = new Map<number, string[]>();
  for (const assignment of [...assignments].sort(bySourceThenId)) {
    const ids = bySource.get(assignment.sourceId) ?? [];
    if (!ids.includes(assignment.compoundId)) ids.push(assignment.compoundId);
    bySource.set(assignment.sourceId, ids);
  }
  return [...bySource]
    .filter(([id]) => sources.has(id))
    .map(([id, ids]) => ({ ...sourceSummary(sources.get(id)!), src_compound_id: ids }));
}

export type IdMode = 'current' | 'all' | 'obsolete';

/**
 * src_compound_id(_all, _all_obsolete)[/to_src]: the ids on the structures an id stands for.
 * `current`: the structures the id is current on, their current ids; `all`: the same structures,
 * obsolete ids too; `obsolete`: the structures the id was assigned to and no longer is, every id.
 */
export async function idsOfId(
  context: LookupContext,
  id: string,
  sourceText: string,
  toSourceText: string | undefined,
  mode: IdMode,
): Promise<Row[]> {
  const source = await legacySource(context, sourceText);
  const toSource = toSourceText === undefined ? undefined : await legacySource(context, toSourceText);
  const ucis = await ucisOfId(context, id, source, mode === 'obsolete' ? { obsoleteOnly: true } : {});
  const assignments = await assignmentsByUcis(context.engine, ucis, {
    includeObsolete: mode !== 'current',
    sourceId: toSource?.sourceID,
  });
  if (mode === 'obsolete') {
    return rows(assignments, (x): Row =>
      toSource
        ? { src_compound_id: x.compoundId, assignment: String(x.assignment), UCI: String(x.uci) }
        : {
            src_id: String(x.sourceId),
            src_compound_id: x.compoundId,
            assignment: String(x.assignment),
            InChIKey: x.standardInchiKey,
          },
    );
  }
  return rows(assignments, (x) => ({
    ...(toSource ? {} : { src_id: String(x.sourceId) }),
    src_compound_id: x.compoundId,
    ...(mode === 'all' ? { assignment: String(x.assignment) } : {}),
  }));
}

/**
 * src_compound_id_url: the links of the ids in `to_src` on the structures an id is current on (ids without a link are
 * left out).
 */
export async function urlsOfId(
  context: LookupContext,
  id: string,
  sourceText: string,
  toSourceText: string,
): Promise<Row[]> {
  const source = await legacySource(context, sourceText);
  const toSource = await legacySource(context, toSourceText);
  const ucis = await ucisOfId(context, id, source, {});
  const assignments = await assignmentsByUcis(context.engine, ucis, { sourceId: toSource.sourceID });
  const urls = [
    ...new Set(
      assignments
        .sort(bySourceThenId)
        .map((x) => compoundUrl(toSource, x.compoundId, x.auxSrc))
        .filter((url): url is string => url !== null),
    ),
  ];
  return urls.map((url) => ({ url }));
}

/**
 * `pages` read one ahead: the next page is on its way from the engine while the caller joins and
 * writes this one, so at most two pages are held. A 1.2-million-pair mapping took 20-55 s against
 * 27-57 s without (four interleaved pairs on a loaded machine, faster in each).
 */
async function* readAhead<T>(pages: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = pages.next();
  try {
    for (;;) {
      const current = await next;
      if (current.done) return;
      next = pages.next();
      // Settled on the next turn, or dropped (below) when the reader stops first.
      next.catch(() => undefined);
      yield current.value;
    }
  } finally {
    await next.catch(() => undefined);
    await pages.return(undefined);
  }
}

/**
 * mapping/{src}/{to_src}: every pair of current ids of the two sources on one structure, a page of
 * `src` at a time: each page of `src` assignments (in id order) is joined with the `to_src` ids of
 * its UCIs, so an answer holds one page of each side whatever the sources' sizes. Each side is read
 * from one release (a point in time), closed when the answer ends, fails or is abandoned. Pairs
 * come by `src` id (UTF-8 byte order), an id on several structures by UCI, then by `to_src` id; a
 * pair met again through another shared structure is left out. The sources are checked before the
 * first page, so an unknown one is a 404 before any byte of the answer.
 */
export async function* mappingOf(
  context: LookupContext,
  sourceText: string,
  toSourceText: string,
  options: WholeSourceReadOptions = {},
): AsyncGenerator<Row[]> {
  const source = await legacySource(context, sourceText);
  const toSource = await legacySource(context, toSourceText);
  const fromKey = String(source.sourceID);
  const toKey = String(toSource.sourceID);
  const from = await SourceRelease.open(context.engine, source.sourceID, options);
  let to: SourceRelease | undefined;
  try {
    // A source mapped to itself is read from one release, not two that a reload could tell apart.
    to =
      toSource.sourceID === source.sourceID
        ? from
        : await SourceRelease.open(context.engine, toSource.sourceID, options);
    // The pairs already given for the current `src` id: its rows are consecutive, possibly across pages.
    let id: string | undefined;
    let paired = new Set<string>();
    for await (const page of readAhead(from.pages())) {
      const toIds = await to.idsOnUcis([...new Set(page.map((x) => x.uci))]);
      const rows: Row[] = [];
      for (const x of page) {
        if (x.compoundId !== id) {
          id = x.compoundId;
          paired = new Set();
        }
        for (const toId of toIds.get(x.uci) ?? []) {
          if (paired.has(toId)) continue;
          paired.add(toId);
          rows.push({ [fromKey]: x.compoundId, [toKey]: toId });
        }
      }
      yield rows;
    }
  } finally {
    await Promise.all([from.close(), to !== from ? to?.close() : undefined]);
  }
}

/**
 * mappingaux/{src}: the current ids of a source that carry auxiliary data, with it, a page at a time (in id order, as
 * mapping).
 */
export async function* auxiliaryDataOf(
  context: LookupContext,
  sourceText: string,
  options: WholeSourceReadOptions = {},
): AsyncGenerator<Row[]> {
  const source = await legacySource(context, sourceText);
  const release = await SourceRelease.open(context.engine, source.sourceID, options);
  try {
    let id: string | undefined;
    let given = new Set<string>();
    for await (const page of release.pages(true)) {
      const rows: Row[] = [];
      for (const x of page) {
        if (!x.auxSrc) continue;
        if (x.compoundId !== id) {
          id = x.compoundId;
          given = new Set();
        }
        if (given.has(x.auxSrc)) continue;
        given.add(x.auxSrc);
        rows.push({ src_compound_id: x.compoundId, 'auxiliary data': x.auxSrc });
      }
      yield rows;
    }
  } finally {
    await release.close();
  }
}

/** structure / structure_all: the structures of an id (`all`: obsolete assignments too, with their state). */
export async function structuresOfId(
  context: LookupContext,
  id: string,
  sourceText: string,
  all: boolean,
): Promise<Row[]> {
  const source = await legacySource(context, sourceText);
  const own = await assignmentsByCompoundId(context.engine, id, { includeObsolete: all, sourceId: source.sourceID });
  if (own.length === 0) await requireIdAssigned(context, id, source);
  const structures = await compoundsByUci(
    context.engine,
    own.map((x) => x.uci),
    ['uci', 'standardInchi', 'standardInchiKey'],
  );
  return rows(own, (x) => ({
    standardinchi: structures.get(x.uci)?.standardInchi ?? null,
    standardinchikey: x.standardInchiKey,
    ...(all ? { assignment: String(x.assignment) } : {}),
  }));
}

/** inchi/{key}: the Standard InChI of an indexed structure with a current assignment. */
export async function inchiOfKey(context: LookupContext, key: string): Promise<Row[]> {
  checkInchiKey(key);
  const current = await assignmentsByKeys(context.engine, [key], {}, 1);
  const structure = current.length > 0 ? (await compoundsByKey(context.engine, [key])).get(key) : undefined;
  if (structure) return [{ standardinchi: structure.standardInchi }];
  await requireKeyAssigned(context, key);
  return [];
}

/** src_ids: every source id. */
export async function sourceIds(context: LookupContext): Promise<Row[]> {
  return [...(await context.sources.all()).keys()].sort((a, b) => a - b).map((id) => ({ src_id: String(id) }));
}

/** sources/{src}: one source's metadata, as a one-element list. */
export async function sourceDetails(context: LookupContext, sourceText: string): Promise<Row[]> {
  const source = await legacySource(context, sourceText);
  return [
    {
      ...sourceSummary(source),
      src_details: source.srcDetails,
      src_release_number: source.srcReleaseNumber,
      src_release_date: source.srcReleaseDate,
      created: source.created,
      last_updated: source.lastUpdated,
      update_comments: source.updateComments,
    },
  ];
}

/** release: the index's release (completed loads) and its figures. */
export async function releaseFigures(context: LookupContext): Promise<Row> {
  const [release, figures, sources] = await Promise.all([
    releaseOfIndex(context.engine),
    indexFigures(context.engine),
    context.sources.all(),
  ]);
  return {
    release: String(release.release),
    date: release.date,
    source_count: String(sources.size),
    structure_count: String(figures.structures),
    xref_count: String(figures.assignments),
    xref_count_current: String(figures.current),
    xref_count_obsolete: String(figures.obsolete),
  };
}

/**
 * The sources where an id (of any source) is current: none when it is only obsolete, UnknownResource when no source
 * ever held it.
 */
async function currentHolders(context: LookupContext, id: string): Promise<Map<number, number[]>> {
  const holders = new Map<number, number[]>();
  for (const x of await assignmentsByCompoundId(context.engine, id))
    holders.set(x.sourceId, [...(holders.get(x.sourceId) ?? []), x.uci]);
  if (holders.size === 0) await requireIdAssigned(context, id);
  return holders;
}

/** orphanIdSource/{id}: the sources where the id is current. */
export async function sourcesOfOrphanId(context: LookupContext, id: string): Promise<Row[]> {
  return [...(await currentHolders(context, id)).keys()]
    .sort((a, b) => a - b)
    .map((sourceId) => ({ src_id: String(sourceId) }));
}

/** orphanIdMap/{id}[/to_src]: for each source holding the id, the current ids on its structures (in `to_src` only). */
export async function mapOfOrphanId(
  context: LookupContext,
  id: string,
  toSourceText: string | undefined,
): Promise<Row> {
  const toSource = toSourceText === undefined ? undefined : await legacySource(context, toSourceText);
  const holders = await currentHolders(context, id);
  // One search for the structures of every holder, not one per holder.
  const assignments = await assignmentsByUcis(context.engine, [...holders.values()].flat(), {
    sourceId: toSource?.sourceID,
  });
  const out: Row = {};
  for (const [sourceId, ucis] of [...holders].sort((a, b) => a[0] - b[0])) {
    const own = new Set(ucis);
    out[String(sourceId)] = rows(
      assignments.filter((x) => own.has(x.uci)),
      (x) => ({ src_id: String(x.sourceId), src_compound_id: x.compoundId, UCI: String(x.uci) }),
    );
  }
  return out;
}
