/**
 * The web pages for chemists and curators: `/` (the search box), `/search?q=&source=`,
 * `/compound/{uci}`, `/sources`, `/sources/{id}`. Server-rendered HTML built on the same domain
 * functions as the API, so the two never disagree; they work without JavaScript (the script adds
 * copy buttons and the structure editor).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { inchiKeyOf, type Comparison } from '../chemistry';
import { compoundsByConnectivityBlock, compoundsByUci } from '../engine/compounds';
import type { CompoundDocument, LoadRecord, SourceDocument, AssignmentDocument } from '../engine/documents';
import { lastLoadOfEachSource, loadHistory } from '../engine/loads';
import { assignmentsByKeys, assignmentsByUcis } from '../engine/lookups';
import { connectivitySearch, relations, searchedStructureOf, type ConnectivityEntry } from '../domain/connectivity';
import { InvalidQuery, UnprocessableStructure } from '../domain/errors';
import {
  idOrNameAssignments,
  indexedStructure,
  noSourceHoldsUci,
  parseQueryInchi,
  type LookupContext,
} from '../domain/lookup';
import { compoundUrl, rowsLoadedFor } from '../domain/sources';
import { computeStandardInchi } from '../domain/structures';
import { operationCosts } from '../api/rate-limit';
import { openApiDocument } from '../api/document';
import { copyable, depiction, message, plural, structureList, structuresPage, type Rendered } from './fragments';
import { html, Html, page, type SourceChoice } from './html';
import { understand, type Reading, type Understood } from './input';
import { editorFrame, jsmeFiles } from './editor';
import {
  defaultThreshold,
  furtherSearches,
  lowestThreshold,
  similarPage,
  similarSection,
  substructurePage,
  thresholdOf,
} from './structure-search';

const staticDir = join(__dirname, 'static');
const staticFiles: Record<string, { type: string; body: string }> = {
  'chemxref.css': { type: 'text/css', body: readFileSync(join(staticDir, 'chemxref.css'), 'utf8') },
  'chemxref.js': { type: 'text/javascript', body: readFileSync(join(staticDir, 'chemxref.js'), 'utf8') },
  'favicon.svg': { type: 'image/svg+xml', body: readFileSync(join(staticDir, 'favicon.svg'), 'utf8') },
  'editor-frame.js': { type: 'text/javascript', body: readFileSync(join(staticDir, 'editor-frame.js'), 'utf8') },
  'editor-frame.css': { type: 'text/css', body: readFileSync(join(staticDir, 'editor-frame.css'), 'utf8') },
};

/** Structures a skeleton's list shows, at most. */
const skeletonListed = 1_000;
/** Relatives shown a page of the compound page. */
const relativesPerPage = 50;

/** The words of a layer that differs, for the relatives' table. */
const layerWords: [keyof Comparison, string][] = [
  ['formula', 'formula'],
  ['HAtoms', 'hydrogens'],
  ['charge', 'charge'],
  ['protonation', 'protonation'],
  ['stereoDbond', 'double-bond stereo'],
  ['stereoSp3', 'tetrahedral stereo'],
  ['stereoSp3Inverted', 'inverted stereo'],
  ['stereoType', 'stereo type'],
  ['isotope', 'isotopes'],
  ['isotopicExchangeableH', 'exchangeable isotopic H'],
];

const groups = [
  { id: 'stereo', title: 'Stereoisomers' },
  { id: 'isotope', title: 'Isotopologues' },
  { id: 'charge', title: 'Other charge or protonation' },
  { id: 'other', title: 'Same skeleton, other layers' },
  { id: 'components', title: 'Salts and mixtures sharing a component' },
] as const;
type GroupId = (typeof groups)[number]['id'];

const relationWords: Record<string, string> = {
  queryIsComponent: 'contains this structure as a component',
  componentIsResult: 'is a component of this structure',
  componentMatch: 'shares a component with this structure',
};

function differences(comparison: Comparison): string[] {
  return layerWords.filter(([layer]) => !comparison[layer]).map(([, words]) => words);
}

function groupOf(entry: ConnectivityEntry): GroupId {
  if (entry.typeOfSearch !== 'match') return 'components';
  const c = entry.comparison;
  if (!c.stereoDbond || !c.stereoSp3 || !c.stereoSp3Inverted || !c.stereoType) return 'stereo';
  if (!c.isotope || !c.isotopicExchangeableH) return 'isotope';
  if (!c.charge || !c.protonation) return 'charge';
  return 'other';
}

function choices(sources: Map<number, SourceDocument>): SourceChoice[] {
  return [...sources.values()]
    .sort((a, b) => a.sourceID - b.sourceID)
    .map((s) => ({ sourceID: s.sourceID, label: s.nameLabel ?? s.name }));
}

function label(source: SourceDocument | undefined, sourceId: number): string {
  return source ? (source.nameLabel ?? source.name) : `source ${sourceId}`;
}

function dateOf(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 10) : '–';
}

/** The table of every source holding a structure: its ids, current or obsolete, linked to the source's pages. */
function sourcesTable(assignments: AssignmentDocument[], sources: Map<number, SourceDocument>): Html {
  const withAux = assignments.some((assignment) => assignment.auxSrc);
  const current = assignments.filter((x) => x.assignment === 1);
  const rows = [...assignments]
    .sort((a, b) => b.assignment - a.assignment || a.sourceId - b.sourceId || a.compoundId.localeCompare(b.compoundId))
    .map((assignment) => {
      const source = sources.get(assignment.sourceId);
      const url = source ? compoundUrl(source, assignment.compoundId, assignment.auxSrc) : null;
      return html`<tr class="${assignment.assignment === 1 ? 'current' : 'obsolete'}">
<td><a href="/sources/${assignment.sourceId}">${label(source, assignment.sourceId)}</a></td>
<td>${url ? html`<a href="${url}" rel="noopener">${assignment.compoundId}</a>` : assignment.compoundId}</td>
<td>${assignment.assignment === 1 ? 'current' : 'obsolete'}</td>
${withAux ? html`<td>${assignment.auxSrc ?? ''}</td>` : ''}
</tr>`;
    });
  return html`<table class="assignments"><caption>${plural(current.length, 'current id')} in ${plural(new Set(current.map((x) => x.sourceId)).size, 'source')}</caption>
<thead><tr><th scope="col">Source</th><th scope="col">Compound id</th><th scope="col">Assignment</th>${withAux ? html`<th scope="col">Aux</th>` : ''}</tr></thead>
<tbody>${rows}</tbody></table>`;
}

/**
 * The compound page of one structure: depiction, identifiers, every source, the connectivity
 * relatives, the similar structures. `searched`, on the answer of a search, says under the title what
 * was searched and offers its other searches.
 */
async function compoundPage(
  context: LookupContext,
  structure: CompoundDocument,
  pageNumber: number,
  searched: Html | string = '',
): Promise<Rendered> {
  const [sources, assignments, related, similar] = await Promise.all([
    context.sources.all(),
    assignmentsByUcis(context.engine, [structure.uci], { includeObsolete: true }),
    connectivitySearch(context, searchedStructureOf(structure), {
      relations: new Set(relations),
      frequencyCap: context.config.COMPONENT_FREQUENCY_CAP,
      maxEntries: context.config.CONNECTIVITY_MAX_ENTRIES,
    }),
    similarSection(context, structure),
  ]);
  const byUci = new Map<number, ConnectivityEntry>();
  for (const entry of related.entries)
    if (entry.structure.uci !== structure.uci && !byUci.has(entry.structure.uci)) byUci.set(entry.structure.uci, entry);
  const relatives = [...byUci.values()].sort(
    (a, b) =>
      groups.findIndex((g) => g.id === groupOf(a)) - groups.findIndex((g) => g.id === groupOf(b)) ||
      a.structure.uci - b.structure.uci,
  );
  const pages = Math.max(1, Math.ceil(relatives.length / relativesPerPage));
  const shown = relatives.slice((pageNumber - 1) * relativesPerPage, pageNumber * relativesPerPage);
  const sections = groups.map((group) => {
    const members = shown.filter((entry) => groupOf(entry) === group.id);
    if (members.length === 0) return '';
    return html`<section class="relatives" id="${group.id}"><h3>${group.title} (${relatives.filter((e) => groupOf(e) === group.id).length})</h3>
${structureList(
  members.map((m) => m.structure),
  (s) => {
    const entry = byUci.get(s.uci)!;
    const words =
      entry.typeOfSearch === 'match'
        ? `differs in ${differences(entry.comparison).join(', ') || 'no layer'}`
        : relationWords[entry.typeOfSearch];
    return html`<span class="relation">${words}</span>`;
  },
)}</section>`;
  });
  const pager =
    pages > 1
      ? html`<nav class="pager" aria-label="relatives pages">${Array.from({ length: pages }, (_, i) => i + 1).map((n) => (n === pageNumber ? html`<span aria-current="page">${n}</span> ` : html`<a href="/compound/${structure.uci}?page=${n}#relatives">${n}</a> `))}</nav>`
      : '';
  return {
    status: 200,
    title: `UCI ${structure.uci}`,
    canonical: `/compound/${structure.uci}`,
    body: html`<article class="compound">
<h1>UCI ${structure.uci}</h1>
${searched}
<div class="identity">
${depiction(structure.uci, 'large', `structure of ${structure.standardInchiKey}`)}
<dl>
<dt>Standard InChIKey</dt><dd>${copyable(structure.standardInchiKey, 'InChIKey')}</dd>
<dt>Standard InChI</dt><dd class="inchi">${copyable(structure.standardInchi, 'InChI')}</dd>
<dt>UCI</dt><dd>${copyable(String(structure.uci), 'UCI')}</dd>
<dt>Formula</dt><dd>${structure.layers.formula}</dd>
</dl>
</div>
<h2>In the sources</h2>
${sourcesTable(assignments, sources)}
<h2 id="relatives">Same skeleton (${structure.connectivityBlock})</h2>
${relatives.length === 0 ? html`<p>No other structure shares its skeleton or one of its components.</p>` : html`${sections}${pager}`}
${related.truncated ? html`<p class="message">Only the first ${context.config.CONNECTIVITY_MAX_ENTRIES} assignments of the connectivity search are shown.</p>` : ''}
<h2 id="similar">Similar structures</h2>
${similar}
</article>`,
  };
}

/**
 * The page of a UCI: its compound page while a source holds it. Once every source has dropped its ids
 * no lookup answers it (the API's /compounds says "Not found" with the same words), so its page is a
 * 404 that says why and lists those obsolete ids; a UCI never given is a plain 404.
 */
async function uciPage(
  context: LookupContext,
  uci: number,
  pageNumber: number,
  page = (structure: CompoundDocument): Promise<Rendered> => compoundPage(context, structure, pageNumber),
): Promise<Rendered> {
  const [structure, current] = await Promise.all([
    indexedStructure(context, { uci }),
    assignmentsByUcis(context.engine, [uci], {}, 1),
  ]);
  if (!structure) return message(404, 'Not found', `There is no structure with UCI ${uci}.`);
  if (current.length > 0) return page(structure);
  const [sources, obsolete] = await Promise.all([
    context.sources.all(),
    assignmentsByUcis(context.engine, [uci], { includeObsolete: true }),
  ]);
  const block = structure.connectivityBlock;
  const gone = message(
    404,
    'Not found',
    html`${noSourceHoldsUci(uci).replace(/^n/, 'N')} (InChIKey <code>${structure.standardInchiKey}</code>). <a href="/search?q=${block}">Search its skeleton (${block})</a> for the forms sources hold.`,
  );
  return { ...gone, body: html`${gone.body}${sourcesTable(obsolete, sources)}` };
}

async function structuresOf(context: LookupContext, ucis: number[]): Promise<CompoundDocument[]> {
  const found = await compoundsByUci(context.engine, ucis);
  return [...found.values()].sort((a, b) => a.uci - b.uci);
}

/** What a search looks for: the structure itself, the structures like it, or those containing it. */
type Mode = 'exact' | 'similar' | 'substructure';
const modes: Mode[] = ['exact', 'similar', 'substructure'];

/** One search of the search box (`q`, `source`) in its mode: the answer's page. */
async function search(
  context: LookupContext,
  q: string,
  sourceId: number | undefined,
  options: { mode: Mode; pageNumber: number; threshold: number; reading?: Reading },
): Promise<Rendered> {
  const sources = await context.sources.all();
  const input = understand(q, sourceId, [...sources.values()], options.reading);
  if (options.mode === 'similar') return similarPage(context, input, q, sourceId, options.threshold);
  if (options.mode === 'substructure') return substructurePage(context, input, q);
  return exactSearch(context, input, q, sourceId, options.pageNumber);
}

/**
 * The Standard InChIKey of a SMILES; undefined when RDKit cannot read it but a source holds the text
 * as a compound id or name (a name in brackets reads as a SMILES), else the error saying why not.
 */
async function smilesKey(context: LookupContext, smiles: string): Promise<string | undefined> {
  try {
    return (await computeStandardInchi(context, 'smiles', smiles)).standardInchiKey;
  } catch (error) {
    if (error instanceof InvalidQuery && (await idOrNameAssignments(context, smiles)).length > 0) return undefined;
    throw error;
  }
}

/**
 * The structure an input names: its compound page, a list of structures, or a message saying why
 * not; with the similarity and substructure searches of the same input offered beside it.
 */
async function exactSearch(
  context: LookupContext,
  input: Understood,
  q: string,
  sourceId: number | undefined,
  pageNumber: number,
): Promise<Rendered> {
  const further = furtherSearches(input, q, sourceId);
  // A compound page searches its similar structures under their own heading.
  const answer = (structure: CompoundDocument, said: string): Promise<Rendered> =>
    compoundPage(
      context,
      structure,
      pageNumber,
      html`<p class="understood">Searched: ${said}.</p>${furtherSearches(input, q, sourceId, { similar: false })}`,
    );
  switch (input.kind) {
    case 'refused':
      return message(400, 'Cannot search this', input.message);
    case 'smarts':
      // A SMARTS is a pattern: what it can find is the structures containing it.
      return substructurePage(context, input, q);
    case 'inchikey':
    case 'inchi':
    case 'smiles': {
      const key =
        input.kind === 'inchikey'
          ? input.standardInchiKey
          : input.kind === 'inchi'
            ? inchiKeyOf(parseQueryInchi(input.inchi, context.config.MAX_INCHI_LENGTH))
            : await smilesKey(context, input.smiles);
      if (key === undefined) {
        // Text RDKit cannot read as a SMILES may still be a name: n-(4-hydroxyphenyl)ethanamide.
        const text = q.trim();
        const said = `compound id or name ${text}, in every source`;
        return exactSearch(context, { kind: 'anySource', compoundId: text, said }, q, sourceId, pageNumber);
      }
      // The key names its structure: read it while a current assignment is looked for.
      const [current, structure] = await Promise.all([
        assignmentsByKeys(context.engine, [key], {}, 1),
        indexedStructure(context, { standardInchiKey: key }),
      ]);
      if (current.length === 0 || !structure) {
        // In the API's words: no structure with the key, or one whose every id is obsolete.
        const block = key.slice(0, 14);
        const why = structure
          ? html`${noSourceHoldsUci(structure.uci).replace(/^n/, 'N')} (InChIKey <code>${key}</code>).`
          : html`There is no structure with InChIKey <code>${key}</code>.`;
        const missing = message(
          404,
          'Not found',
          html`${why} <a href="/search?q=${block}">Search its skeleton (${block})</a> for stereoisomers, isotopologues and other forms.`,
        );
        // A key names no structure to compare; a structure not stored can still be compared, and searched for.
        return input.kind === 'inchikey' ? missing : { ...missing, body: html`${missing.body}${further}` };
      }
      return answer(structure, input.kind === 'smiles' ? `${input.said} (${key})` : input.said);
    }
    case 'uci':
      return uciPage(context, input.uci, pageNumber, (structure) => answer(structure, input.said));
    case 'connectivityBlock': {
      const structures = (
        await compoundsByConnectivityBlock(context.engine, input.connectivityBlock, skeletonListed)
      ).sort((a, b) => a.uci - b.uci);
      if (structures.length === 0)
        return message(404, 'Not found', `No structure has the skeleton ${input.connectivityBlock}.`);
      const title =
        structures.length === skeletonListed
          ? `The first ${skeletonListed} structures of skeleton ${input.connectivityBlock}`
          : `${structures.length} structures of skeleton ${input.connectivityBlock}`;
      return structuresPage(title, input.said, structures);
    }
    case 'sourceId':
    case 'anySource': {
      const own = await idOrNameAssignments(
        context,
        input.compoundId,
        input.kind === 'sourceId' ? input.source.sourceID : undefined,
      );
      const ucis = [...new Set(own.map((x) => x.uci))];
      if (ucis.length === 0) {
        const where =
          input.kind === 'sourceId'
            ? `${input.source.idsAreNames ? 'or name ' : ''}${input.compoundId} in ${label(input.source, input.source.sourceID)}`
            : `or name ${input.compoundId} in any source (pick a source if it names a structure there, or give its InChIKey)`;
        return message(404, 'Not found', `No current compound id ${where}.`);
      }
      const [structures, sources] = await Promise.all([structuresOf(context, ucis), context.sources.all()]);
      if (structures.length === 1) return answer(structures[0], input.said);
      const inSource = (s: CompoundDocument): string =>
        own
          .filter((x) => x.uci === s.uci)
          .map(
            (x) =>
              `${x.compoundId === input.compoundId ? '' : `${x.compoundId} `}in ${label(sources.get(x.sourceId), x.sourceId)}`,
          )
          .join(', ');
      return structuresPage(
        `${input.compoundId}: ${structures.length} structures`,
        input.said,
        structures,
        (s) => html`<span class="relation">${inSource(s)}</span>`,
      );
    }
  }
}

/**
 * A source's last load, with the rows it loaded for that source: a source's own release loads
 * only it, but a reference table or a dump loads many sources at once, and its record counts them
 * all as well as each source's own.
 */
function lastLoadCell(record: LoadRecord | undefined, sourceId: number): Html {
  if (!record) return html`<td>–</td>`;
  const when = `${dateOf(record.ended ?? record.started)}, ${record.status}`;
  const sources = record.sourceIds?.length ?? 1;
  if (sources <= 1) {
    const [loaded, rejected] = [record.rowsLoaded, record.rowsRejected].map((count) => count.toLocaleString('en'));
    return html`<td>${when}: ${loaded} loaded, ${rejected} rejected</td>`;
  }
  const rejected = record.rowsRejected > 0 ? `, ${record.rowsRejected.toLocaleString('en')} rejected in all` : '';
  const own = rowsLoadedFor(record, sourceId);
  const loaded = own === undefined ? '' : `: ${own.toLocaleString('en')} loaded`;
  const load = `${record.command} of ${sources} sources${rejected}`;
  return html`<td>${when}${loaded} <span class="shared">(${load})</span></td>`;
}

async function sourcesPage(context: LookupContext): Promise<Rendered> {
  const [sources, loads] = await Promise.all([context.sources.all(), lastLoadOfEachSource(context.engine)]);
  // Release and site are secondary: a phone's narrow screen hides them (chemxref.css), each source's page has them.
  const rows = [...sources.values()]
    .sort((a, b) => a.sourceID - b.sourceID)
    .map(
      (s) => html`<tr>
<td class="id">${s.sourceID}</td>
<td class="name"><a href="/sources/${s.sourceID}">${s.nameLabel ?? s.name}</a>${s.retired ? ' (retired)' : ''}</td>
<td class="count">${s.UCICount.toLocaleString('en')}</td>
<td class="secondary">${s.srcReleaseNumber ?? '–'} (${dateOf(s.srcReleaseDate)})</td>
${lastLoadCell(loads.get(s.sourceID), s.sourceID)}
<td class="secondary">${
        s.srcUrl ? html`<a href="${s.srcUrl}" rel="noopener">${s.nameLong ?? s.name}</a>` : s.nameLong
      }</td>
</tr>`,
    );
  const head = html`<tr><th scope="col" class="id">Id</th><th scope="col">Name</th>
<th scope="col" class="count">Structures</th><th scope="col" class="secondary">Release (date)</th>
<th scope="col">Last load</th><th scope="col" class="secondary">Site</th></tr>`;
  return {
    status: 200,
    title: 'Sources',
    canonical: '/sources',
    body: html`<h1>Sources</h1>
<div class="scroll"><table class="sources"><thead>${head}</thead><tbody>${rows}</tbody></table></div>`,
  };
}

async function sourcePage(context: LookupContext, sourceId: number): Promise<Rendered> {
  const source = await context.sources.get(sourceId);
  if (!source) return message(404, 'Not found', `There is no source ${sourceId}.`);
  const loads = await loadHistory(context.engine, 100, sourceId);
  const rows = loads.map(
    (l) =>
      html`<tr><td>${l.started.replace('T', ' ').slice(0, 19)}</td><td>${l.command}</td><td>${l.status}${l.dryRun ? ' (dry run)' : ''}</td><td>${l.releaseNumber ?? ''}</td><td>${l.rowsRead.toLocaleString('en')}</td><td>${l.rowsLoaded.toLocaleString('en')}</td><td>${l.rowsRejected.toLocaleString('en')}</td><td>${l.message ?? ''}</td></tr>`,
  );
  return {
    status: 200,
    title: source.nameLabel ?? source.name,
    canonical: `/sources/${sourceId}`,
    body: html`<h1>${source.nameLabel ?? source.name} <small>(source ${sourceId})</small></h1>
<p>${source.description ?? ''}</p>
<dl class="source">
<dt>Structures</dt><dd>${source.UCICount.toLocaleString('en')}</dd>
<dt>Release</dt><dd>${source.srcReleaseNumber ?? '–'}, ${dateOf(source.srcReleaseDate)}</dd>
<dt>Last updated</dt><dd>${dateOf(source.lastUpdated)}</dd>
${source.srcUrl ? html`<dt>Site</dt><dd><a href="${source.srcUrl}" rel="noopener">${source.srcUrl}</a></dd>` : ''}
</dl>
<h2>Loads</h2>
${loads.length === 0 ? html`<p>No load of this source is recorded.</p>` : html`<table class="loads"><thead><tr><th scope="col">Started (UTC)</th><th scope="col">Command</th><th scope="col">Status</th><th scope="col">Release</th><th scope="col">Read</th><th scope="col">Loaded</th><th scope="col">Rejected</th><th scope="col">Message</th></tr></thead><tbody>${rows}</tbody></table>`}`,
  };
}

const home: Rendered = {
  status: 200,
  title: 'Search',
  canonical: '/',
  body: html`<h1>Find a compound in every source</h1>
<p>Give a name (<a href="/search?q=aspirin">aspirin</a>), a Standard InChIKey (<a href="/search?q=RZVAJINKPMORJF-UHFFFAOYSA-N">RZVAJINKPMORJF-UHFFFAOYSA-N</a>), a Standard InChI, a UCI,
a SMILES (<a href="/search?q=CC(%3DO)Nc1ccc(O)cc1">CC(=O)Nc1ccc(O)cc1</a>), <code>source:id</code> (<a href="/search?q=chembl%3ACHEMBL112">chembl:CHEMBL112</a>) or a compound id with its source.</p>
<section class="draw" aria-labelledby="draw">
<h2 id="draw">Draw a structure</h2>
<iframe class="editor" title="Structure editor (JSME)" hidden></iframe>
<form class="mode" action="/search" method="get">
<input type="hidden" name="as" value="smiles">
<label for="drawn">SMILES</label> <input id="drawn" name="q" required autocomplete="off" spellcheck="false" placeholder="CC(=O)Nc1ccc(O)cc1">
<label for="drawn-threshold">similar at Tanimoto</label> <input id="drawn-threshold" name="threshold" type="number" min="${lowestThreshold}" max="1" step="0.05" value="${defaultThreshold}" required>
<button type="submit" name="mode" value="exact">Exact structure</button>
<button type="submit" name="mode" value="similar">Similar structures</button>
<button type="submit" name="mode" value="substructure">Structures containing it</button>
</form>
</section>`,
};

function positive(text: unknown): number | undefined {
  return typeof text === 'string' && /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : undefined;
}

/**
 * Under RATE_LIMIT, a similarity or substructure page costs what the API's search does: `limit`
 * charges a connectivity search's cost, so it is charged again until the page has paid as much
 * (x-rate-cost of the OpenAPI document: 5, 10 and 20 today).
 */
function surcharge(limit: RequestHandler): RequestHandler {
  const costs = operationCosts(openApiDocument());
  const times = (operationId: string): number =>
    Math.max(0, Math.round((costs.get(operationId) ?? 0) / (costs.get('postConnectivity') ?? 1)) - 1);
  const extra: Record<string, number> = { similar: times('postSimilarity'), substructure: times('postSubstructure') };
  return (req, res, next) => {
    const charge = (left: number): void => {
      if (left <= 0) return next();
      void limit(req, res, (error?: unknown) => (error ? next(error) : charge(left - 1)));
    };
    charge(extra[String(req.query.mode)] ?? 0);
  };
}

/**
 * The web pages, for `app.use`. `limit`, when RATE_LIMIT is on, charges each page that searches
 * (a compound page runs a connectivity search); a refusal is a 429 page with Retry-After.
 */
export function webPages(context: LookupContext, limit?: RequestHandler): Router {
  const router = Router();
  if (limit) router.use(['/search', '/compound/:uci', '/sources'], limit);
  const send = async (req: Request, res: Response, render: () => Promise<Rendered> | Rendered): Promise<void> => {
    const sources = await context.sources.all().catch(() => new Map<number, SourceDocument>());
    let rendered: Rendered;
    try {
      rendered = await render();
    } catch (error) {
      if (error instanceof InvalidQuery) rendered = message(400, 'Cannot search this', error.message);
      else if (error instanceof UnprocessableStructure) rendered = message(422, 'Cannot search this', error.message);
      else {
        const status = (error as { status?: number }).status;
        rendered = message(
          status === 503 || status === undefined ? 503 : status,
          'Not available',
          `The search engine did not answer: try again in a moment. (${(error as Error).message})`,
        );
      }
    }
    const q = typeof req.query.q === 'string' ? req.query.q : undefined;
    res
      .status(rendered.status)
      .type('html')
      .send(
        page(
          {
            title: rendered.title,
            q,
            source: positive(req.query.source),
            sources: choices(sources),
            canonical: rendered.canonical,
          },
          rendered.body,
        ),
      );
  };
  router.get('/', (req, res) => send(req, res, () => home));
  if (limit) router.get('/search', surcharge(limit));
  router.get('/search', (req, res) =>
    send(req, res, () => {
      const { source, mode = 'exact', as: reading } = req.query;
      if (source !== undefined && source !== '' && positive(source) === undefined)
        return message(400, 'Cannot search this', `"${String(source)}" is not a source id.`);
      if (!modes.includes(mode as Mode))
        return message(400, 'Cannot search this', `"${String(mode)}" is not a search: exact, similar or substructure.`);
      if (reading !== undefined && reading !== 'smiles' && reading !== 'smarts')
        return message(400, 'Cannot search this', `"${String(reading)}" is not a reading: smiles or smarts.`);
      const threshold = thresholdOf(req.query.threshold);
      if (typeof threshold !== 'number') return message(400, 'Cannot search this', threshold.refused);
      return search(context, typeof req.query.q === 'string' ? req.query.q : '', positive(source), {
        mode: mode as Mode,
        pageNumber: positive(req.query.page) ?? 1,
        threshold,
        reading,
      });
    }),
  );
  router.get('/compound/:uci', (req, res) =>
    send(req, res, async () => {
      const uci = positive(req.params.uci);
      if (uci === undefined) return message(404, 'Not found', `There is no structure with UCI ${req.params.uci}.`);
      return uciPage(context, uci, positive(req.query.page) ?? 1);
    }),
  );
  router.get('/sources', (req, res) => send(req, res, () => sourcesPage(context)));
  router.get('/sources/:id', (req, res) =>
    send(req, res, () => {
      const id = positive(req.params.id);
      return id === undefined
        ? message(404, 'Not found', `"${req.params.id}" is not a source id.`)
        : sourcePage(context, id);
    }),
  );
  const refused: ErrorRequestHandler = (error, req, res, next) => {
    const status = (error as { status?: number }).status;
    if (status !== 429) return next(error);
    const retryAfter = (error as { retryAfter?: number }).retryAfter;
    if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
    void send(req, res, () => message(429, 'Too many searches', (error as Error).message));
  };
  router.use(refused);
  router.get('/editor', editorFrame);
  router.use('/static/jsme', jsmeFiles);
  router.get('/static/:file', (req, res, next) => {
    const file = staticFiles[req.params.file];
    if (!file) return next();
    res.type(file.type).setHeader('Cache-Control', 'public, max-age=3600');
    res.send(file.body);
  });
  return router;
}

/** The paths the web pages answer (GET), for the method guard. */
export const webPaths = [
  '/',
  '/search',
  '/compound/{uci}',
  '/sources',
  '/sources/{id}',
  '/editor',
  '/static/{file}',
  '/static/jsme/{file}',
];
