/**
 * The structure searches of the web pages: the similar structures of a compound page, and the
 * similarity and substructure searches of `/search?mode=similar|substructure`. They call the API's
 * own functions (src/api/v1/similarity.ts), so the pages and the API give the same answers.
 */
import { compoundQuery } from '../api/v1/routes';
import { searchSimilar, searchSubstructure } from '../api/v1/similarity';
import { idOrNameAssignments, type CompoundQuery, type LookupContext } from '../domain/lookup';
import type { CompoundDocument } from '../engine/documents';
import { storedMorgan } from '../engine/fingerprints';
import { html, Html } from './html';
import { type Understood } from './input';
import { message, plural, structureList, structuresPage, type Rendered } from './fragments';

/** What `searchSimilar` answers (docs/similarity.md), as far as the pages read it. */
interface SimilarAnswer {
  response: 'Success' | 'Not found';
  error?: string;
  totalResults?: number;
  searchedCompound?: { uci: number | null; standardInchiKey: string };
  computed?: { standardInchiKey: string };
  results?: SimilarResult[];
}

interface SimilarResult {
  uci: number;
  standardInchiKey: string | null;
  tanimoto: number;
}

/** What `searchSubstructure` answers. */
interface SubstructureAnswer {
  complete: boolean;
  reason?: string;
  results: { uci: number; standardInchiKey: string | null }[];
}

/** The Tanimoto a similarity search starts from, and the range the API accepts. */
export const defaultThreshold = 0.7;
export const lowestThreshold = 0.3;
/** The compound page's similar structures: at `defaultThreshold` or above, the best `similarShown`. */
const similarShown = 20;
/** Structures a similarity or substructure page lists, at most. */
const searchListed = 100;

/** The threshold asked for (`threshold` of the URL), or why it is not one. */
export function thresholdOf(text: unknown): number | { refused: string } {
  if (text === undefined || text === '') return defaultThreshold;
  const value = typeof text === 'string' && /^[0-9]*\.?[0-9]+$/.test(text) ? Number(text) : NaN;
  if (value >= lowestThreshold && value <= 1) return value;
  return { refused: `"${String(text)}" is not a threshold: give a Tanimoto from ${lowestThreshold} to 1.` };
}

/** A Tanimoto as shown: two decimals, cut rather than rounded, so that only 1 reads 1.00. */
function tanimotoText(tanimoto: number): string {
  return (Math.floor(tanimoto * 100) / 100).toFixed(2);
}

/** Similar structures as a list: thumbnail, UCI, key and Tanimoto, each linking to its page. */
function similarList(results: SimilarResult[], searchedUci: number | null = null): Html {
  return structureList(
    results.map((result) => ({ uci: result.uci, standardInchiKey: result.standardInchiKey ?? '', result })),
    ({ result }) =>
      html`<span class="relation score">Tanimoto ${tanimotoText(result.tanimoto)}${result.uci === searchedUci ? ' (the structure searched)' : ''}</span>`,
  );
}

/**
 * The compound page's similar structures: the best `similarShown` other stored structures at
 * Tanimoto ≥ `defaultThreshold`, or why there are none, under the form that searches them at
 * another threshold. It never fails the page: a search that cannot run says so in the section.
 */
export async function similarSection(context: LookupContext, structure: CompoundDocument): Promise<Html> {
  try {
    if (!(await storedMorgan(context.engine, structure.uci)))
      return html`<p class="message">This structure has no fingerprint yet, so it cannot be compared with others (<code>npm run load -- fingerprints</code> computes the missing ones).</p>`;
    const answer = (await searchSimilar(context, {
      type: 'uci',
      compound: String(structure.uci),
      threshold: defaultThreshold,
      limit: similarShown + 1,
    })) as SimilarAnswer;
    const others = (answer.results ?? []).filter((result) => result.uci !== structure.uci).slice(0, similarShown);
    // The structure itself is stored with its fingerprint, so it is one of the structures counted.
    const total = Math.max(0, (answer.totalResults ?? 0) - 1);
    const form = similarForm(String(structure.uci), undefined, defaultThreshold, 'Search at this threshold');
    if (others.length === 0)
      return html`${form}<p>No other stored structure reaches a Tanimoto of ${defaultThreshold} to this one.</p>`;
    const shown = total > others.length ? `the best ${others.length} of ${total}` : plural(total, 'structure');
    return html`${form}<p>Other stored structures at a Tanimoto of ${defaultThreshold} or more (Morgan fingerprints, radius 2, 2048 bits), best first: ${shown}.</p>
${similarList(others)}`;
  } catch (error) {
    return html`<p class="message">Similar structures cannot be shown now: ${(error as Error).message}.</p>`;
  }
}

/** The hidden fields that carry a search over to another mode. */
function carried(q: string, sourceId: number | undefined, mode: string): Html {
  return html`<input type="hidden" name="q" value="${q}">${sourceId === undefined ? '' : html`<input type="hidden" name="source" value="${sourceId}">`}<input type="hidden" name="mode" value="${mode}">`;
}

/** The form that runs a similarity search of `q`, its threshold adjustable. */
function similarForm(q: string, sourceId: number | undefined, threshold: number, button: string): Html {
  return html`<form class="mode" action="/search" method="get">${carried(q, sourceId, 'similar')}
<label for="threshold">Tanimoto at least</label> <input id="threshold" name="threshold" type="number" min="${lowestThreshold}" max="1" step="0.05" value="${threshold}" required>
<button type="submit">${button}</button></form>`;
}

/** The form that runs a substructure search of `q`, read as a SMILES or a SMARTS. */
function substructureForm(q: string, reading: 'smiles' | 'smarts', button: string): Html {
  const option = (value: string, text: string): Html =>
    html`<option value="${value}"${reading === value ? new Html(' selected') : ''}>${text}</option>`;
  return html`<form class="mode" action="/search" method="get">${carried(q, undefined, 'substructure')}
<label for="as">read as</label> <select id="as" name="as">${option('smiles', 'SMILES')}${option('smarts', 'SMARTS')}</select>
<button type="submit">${button}</button></form>`;
}

/**
 * The searches offered with an exact answer: similar structures of any one structure (unless the
 * page has its own form for them, as a compound page does under its similar structures), and the
 * structures containing it for a SMILES.
 */
export function furtherSearches(
  input: Understood,
  q: string,
  sourceId: number | undefined,
  offer: { similar: boolean } = { similar: true },
): Html {
  if (!['inchikey', 'inchi', 'smiles', 'uci', 'sourceId', 'anySource'].includes(input.kind)) return html``;
  if (!offer.similar && input.kind !== 'smiles') return html``;
  return html`<nav class="further" aria-label="other searches of this structure">
${offer.similar ? similarForm(q.trim(), sourceId, defaultThreshold, 'Similar structures') : ''}
${input.kind === 'smiles' ? substructureForm(q.trim(), 'smiles', 'Structures containing it') : ''}
</nav>`;
}

/** The query of the API an understood input stands for, or the page saying why it has none. */
async function similarityQuery(
  context: LookupContext,
  input: Understood,
  threshold: number,
): Promise<CompoundQuery | Rendered> {
  switch (input.kind) {
    case 'refused':
      return message(400, 'Cannot search this', input.message);
    case 'inchikey':
      return { type: 'inchikey', compound: input.standardInchiKey };
    case 'inchi':
      return { type: 'inchi', compound: input.inchi };
    case 'smiles':
      return { type: 'smiles', compound: input.smiles };
    case 'uci':
      return { type: 'uci', compound: String(input.uci) };
    case 'sourceId':
      return { type: 'sourceID', compound: input.compoundId, sourceID: input.source.sourceID };
    case 'connectivityBlock':
      return message(
        400,
        'Cannot search this',
        'The first block of an InChIKey names a skeleton, not one structure: give a whole InChIKey, an InChI or a SMILES to search similar structures.',
      );
    case 'smarts':
      return message(
        400,
        'Cannot search this',
        'A SMARTS is a pattern, not one structure: search the structures containing it, or give a SMILES to search similar structures.',
      );
    case 'anySource': {
      const ucis = [...new Set((await idOrNameAssignments(context, input.compoundId)).map((x) => x.uci))].sort(
        (a, b) => a - b,
      );
      if (ucis.length === 1) return { type: 'uci', compound: String(ucis[0]) };
      if (ucis.length === 0)
        return message(404, 'Not found', `No current compound id or name ${input.compoundId} in any source.`);
      return structuresPage(
        `${input.compoundId}: ${ucis.length} structures`,
        `${input.said}; pick the structure whose similar structures to search`,
        ucis.map((uci) => ({ uci, standardInchiKey: '' })),
        (s) =>
          html`<a class="relation" href="/search?q=${s.uci}&amp;mode=similar&amp;threshold=${threshold}">similar structures</a>`,
      );
    }
  }
}

/** `/search?mode=similar`: the stored structures like the one searched, best first, with their Tanimoto. */
export async function similarPage(
  context: LookupContext,
  input: Understood,
  q: string,
  sourceId: number | undefined,
  threshold: number,
): Promise<Rendered> {
  const query = await similarityQuery(context, input, threshold);
  if ('status' in query) return query;
  const answer = (await searchSimilar(context, {
    ...compoundQuery(query),
    threshold,
    limit: searchListed,
  })) as SimilarAnswer;
  const said = input.kind === 'refused' ? '' : input.said;
  if (answer.response === 'Not found')
    return message(404, 'Not found', `There is no structure to compare: ${answer.error ?? 'nothing was found'}.`);
  const searched = answer.searchedCompound!;
  const results = answer.results ?? [];
  const total = answer.totalResults ?? results.length;
  const which =
    searched.uci === null
      ? html`The structure searched (InChIKey <code>${searched.standardInchiKey}</code>) is not stored; the stored structures like it:`
      : html`The structure searched is <a href="/compound/${searched.uci}">UCI ${searched.uci}</a>; the stored structures like it, itself included:`;
  const count =
    total === 0
      ? `No stored structure reaches a Tanimoto of ${threshold}.`
      : total > results.length
        ? `${plural(total, 'structure')} reach it; the best ${results.length} are shown, best first.`
        : `${plural(total, 'structure')}, best first.`;
  return {
    status: 200,
    title: `Similar structures (Tanimoto ≥ ${threshold})`,
    body: html`<h1>Similar structures</h1>
<p class="understood">Searched: ${said}; Tanimoto of Morgan fingerprints (radius 2, 2048 bits) at least ${threshold}.</p>
${similarForm(q.trim(), sourceId, threshold, 'Search again')}
<p>${which} ${count}</p>
${results.length > 0 ? similarList(results, searched.uci) : ''}`,
  };
}

/** `/search?mode=substructure`, and a SMARTS in the search box: the stored structures containing it. */
export async function substructurePage(context: LookupContext, input: Understood, q: string): Promise<Rendered> {
  if (input.kind === 'refused') return message(400, 'Cannot search this', input.message);
  // Text that reads as something else than a structure is searched as a SMILES, unless it plainly names one.
  if (['inchikey', 'inchi', 'uci', 'connectivityBlock', 'sourceId'].includes(input.kind))
    return message(
      400,
      'Cannot search this',
      `A substructure search takes a SMILES or a SMARTS, and this is ${input.said.replace(/[:(;].*$/, '').trim()}.`,
    );
  const reading = input.kind === 'smarts' ? 'smarts' : 'smiles';
  const text = q.trim();
  const answer = (await searchSubstructure(context, {
    type: reading,
    compound: text,
    limit: searchListed,
  })) as SubstructureAnswer;
  const name = reading === 'smarts' ? 'SMARTS' : 'SMILES';
  const found = answer.results.length;
  const count = !answer.complete
    ? ''
    : found === 0
      ? 'No stored structure contains it.'
      : found === searchListed
        ? `The first ${searchListed} by UCI; there may be more.`
        : `${plural(found, 'structure')}, by UCI.`;
  return {
    status: 200,
    title: `Structures containing ${text}`,
    body: html`<h1>Structures containing it</h1>
<p class="understood">Searched: the stored structures containing the ${name} <code>${text}</code> (RDKit's substructure match).</p>
${substructureForm(text, reading, 'Search again')}
${answer.complete ? '' : html`<p class="message" role="status">The search stopped before the end: ${answer.reason}. ${plural(found, 'structure')} found until then, by UCI.</p>`}
<p>${count}</p>
${found > 0 ? structureList(answer.results.map((r) => ({ uci: r.uci, standardInchiKey: r.standardInchiKey ?? '' }))) : ''}
<p class="hint">Stored structures are matched as chemists draw them (amides, lactams, pyridones); a SMILES also matches the other tautomer of its mobile-hydrogen groups, a SMARTS only itself.</p>`,
  };
}
