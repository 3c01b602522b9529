/**
 * POST /similarity and /substructure (docs/similarity.md): stored structures like a query (Tanimoto
 * of Morgan fingerprints, exact), or containing it (RDKit's substructure match), each with its
 * records in every source.
 */
import {
  similarStructures,
  storedMorgan,
  storedMorganOf,
  substructureCandidates,
  thresholdOf,
  unsearchableStructures,
  type SimilarHit,
} from '../../engine/fingerprints';
import { assignmentsByUcis } from '../../engine/lookups';
import { InvalidQuery, UnprocessableStructure } from '../../domain/errors';
import {
  bySourceThenId,
  inchiView,
  type CompoundQuery,
  type IdentifierQuery,
  type LookupContext,
  type MoleculeMatcher,
  type SourceEntry,
  sourceEntry,
  type SubstructureQueryType,
} from '../../domain/lookup';
import { WorkerTimedOut } from '../../toolkits/worker';
import { answer, describeMissing, notFound, resolveSearched } from './responses';

export interface SimilarityQuery extends CompoundQuery {
  threshold?: number;
  limit?: number;
}

export interface SubstructureQuery {
  type: SubstructureQueryType;
  compound: string;
  limit?: number;
}

function toolkitOf(context: LookupContext): MoleculeMatcher {
  if (!context.molecules) throw new Error('this lookup context has no molecule toolkit');
  return context.molecules;
}

/** The current records in every source of each structure, by UCI. */
async function sourcesOf(context: LookupContext, ucis: number[]): Promise<Map<number, SourceEntry[]>> {
  const [assignments, sources] = await Promise.all([assignmentsByUcis(context.engine, ucis), context.sources.all()]);
  const found = new Map<number, SourceEntry[]>(ucis.map((uci) => [uci, []]));
  for (const assignment of assignments) {
    const source = sources.get(assignment.sourceId);
    if (source) found.get(assignment.uci)?.push(sourceEntry(source, assignment));
  }
  for (const entries of found.values()) entries.sort(bySourceThenId);
  return found;
}

/** The structure whose stored fingerprint a query by UCI or key names (its own text, as the lookup reads it). */
function storedFingerprintOf(query: IdentifierQuery): { uci: number } | { standardInchiKey: string } | undefined {
  const text = query.compound.trim();
  if (query.type === 'uci' && /^[0-9]{1,15}$/.test(text)) return { uci: Number(text) };
  if (query.type === 'inchikey') return { standardInchiKey: text.toUpperCase() };
  return undefined;
}

/**
 * How many stored structures a search could not look at (they have no fingerprint), asked for
 * beside the search's first engine requests and awaited only by an answer that says it.
 */
function countUnsearchable(context: LookupContext): Promise<number> {
  const counted = unsearchableStructures(context.engine);
  counted.catch(() => undefined); // a query answered Not found or refused never reads it
  return counted;
}

/** Tanimoto rounded to 4 decimals, as answered. */
function tanimotoOf(hit: SimilarHit, a: number): number {
  return Math.round((hit.shared / (a + hit.popcount - hit.shared)) * 10_000) / 10_000;
}

/** POST /similarity. */
export async function searchSimilar(context: LookupContext, query: SimilarityQuery): Promise<object> {
  return answer(context, query, async (identifierQuery: IdentifierQuery & SimilarityQuery) => {
    // A UCI or a key names its fingerprint: it is read in the same round trip as the structure.
    const named = storedFingerprintOf(identifierQuery);
    const unsearchable = countUnsearchable(context);
    const [searched, stored] = await Promise.all([
      resolveSearched(context, identifierQuery),
      named ? storedMorganOf(context.engine, named) : undefined,
    ]);
    if (!searched?.parsed)
      return notFound(identifierQuery.compound.trim(), await describeMissing(context, identifierQuery));
    const threshold = identifierQuery.threshold ?? 0.7;
    const limit = identifierQuery.limit ?? 100;
    let morgan =
      stored ?? (searched.uci === null || named ? undefined : await storedMorgan(context.engine, searched.uci));
    if (!morgan) {
      const [computed] = await toolkitOf(context).fingerprints([searched.parsed.inchi]);
      if ('error' in computed)
        throw new UnprocessableStructure(`this structure has no fingerprint to compare: ${computed.error}`);
      morgan = computed.morgan;
    }
    const a = morgan.length;
    const { total, hits } = await similarStructures(context.engine, morgan, thresholdOf(threshold), limit);
    // Each popcount's best come back; the best of all are those with the highest exact Tanimoto.
    const ranked = hits
      .map((hit) => ({ ...hit, exact: hit.shared / (a + hit.popcount - hit.shared), tanimoto: tanimotoOf(hit, a) }))
      .sort((x, y) => y.exact - x.exact || x.uci - y.uci)
      .slice(0, limit);
    const sources = await sourcesOf(
      context,
      ranked.map((hit) => hit.uci),
    );
    return {
      response: 'Success' as const,
      searchedCompound: {
        uci: searched.uci,
        standardInchiKey: searched.standardInchiKey,
        inchi: inchiView(searched.parsed.inchi, searched.parsed.layers),
      },
      threshold,
      totalResults: total,
      unsearchable: await unsearchable,
      results: ranked.map((hit) => ({
        uci: hit.uci,
        standardInchiKey: hit.standardInchiKey,
        tanimoto: hit.tanimoto,
        sources: sources.get(hit.uci) ?? [],
      })),
    };
  });
}

const queryNames: Record<SubstructureQueryType, string> = { smiles: 'SMILES', smarts: 'SMARTS', molfile: 'molfile' };

/** Candidates read at a time: enough for most queries' first page of matches in one round trip. */
const candidatesAtOnce = 1_000;
/** Candidates a worker checks at a time, between two looks at the clock. */
const checkedAtOnce = 200;

/** POST /substructure. */
export async function searchSubstructure(context: LookupContext, query: SubstructureQuery): Promise<object> {
  const toolkit = toolkitOf(context);
  const name = queryNames[query.type];
  const text = query.type === 'molfile' ? query.compound.trimEnd() : query.compound.trim();
  const limit = query.limit ?? 100;
  if (text.trim() === '') throw new InvalidQuery('the compound is empty or only whitespace');
  if (text.length > context.config.MAX_STRUCTURE_LENGTH)
    throw new InvalidQuery(
      `the ${name} has ${text.length} characters, more than the ${context.config.MAX_STRUCTURE_LENGTH} ` +
        'this service accepts (MAX_STRUCTURE_LENGTH)',
    );
  const described = await toolkit.describeQuery(query.type, text);
  if ('unreadable' in described) throw new InvalidQuery(`the ${name} could not be read: ${described.unreadable}`);
  if (described.heavyAtoms < 3)
    throw new InvalidQuery(
      `the ${name} has ${described.heavyAtoms} heavy atom${described.heavyAtoms === 1 ? '' : 's'}: a substructure ` +
        'query needs at least 3 to be selective',
    );
  const deadline = Date.now() + context.config.SUBSTRUCTURE_TIMEOUT_MS;
  const unsearchable = countUnsearchable(context);
  const matched: { uci: number; standardInchiKey: string }[] = [];
  let reason: string | undefined;
  let checkedUpTo = 0;
  pages: for await (const candidates of substructureCandidates(context.engine, described.pattern, candidatesAtOnce)) {
    // A round of `checkedAtOnce` candidates a worker, on every core the API's toolkit has.
    for (let start = 0; start < candidates.length; start += checkedAtOnce * toolkit.size) {
      if (Date.now() >= deadline) {
        reason =
          `the search stopped after ${context.config.SUBSTRUCTURE_TIMEOUT_MS} ms (SUBSTRUCTURE_TIMEOUT_MS), ` +
          (checkedUpTo ? `having checked the structures up to UCI ${checkedUpTo}` : 'before checking any structure');
        break pages;
      }
      const round = candidates.slice(start, start + checkedAtOnce * toolkit.size);
      let matches: boolean[];
      try {
        matches = await toolkit.match(query.type, text, round);
      } catch (error) {
        if (!(error instanceof WorkerTimedOut)) throw error;
        reason = `matching this ${name} took longer than the toolkit allows a batch of structures`;
        break pages;
      }
      round.forEach((candidate, i) => {
        if (matches[i]) matched.push(candidate);
      });
      checkedUpTo = round[round.length - 1].uci;
      if (matched.length >= limit) break pages;
    }
  }
  const hits = matched.slice(0, limit);
  const sources = await sourcesOf(
    context,
    hits.map((hit) => hit.uci),
  );
  return {
    response: 'Success',
    complete: reason === undefined,
    ...(reason ? { reason } : {}),
    unsearchable: await unsearchable,
    results: hits.map((hit) => ({
      uci: hit.uci,
      standardInchiKey: hit.standardInchiKey,
      sources: sources.get(hit.uci) ?? [],
    })),
  };
}
