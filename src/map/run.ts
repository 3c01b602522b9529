/**
 * `npm run map`: a local file of compounds (one a line, with their type) or of NDJSON queries,
 * mapped through the same code as the batch endpoint and jobs (QueryAnswerer), straight to the
 * engine, written as TSV (a row per record found) or NDJSON (a line per query, as the API's).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { parseLine, QueryAnswerer, type AnswerLine } from '../api/v1/answer';
import type { LookupContext } from '../domain/lookup';
import type { QueryOperation } from '../api/v1/validate';
import { Progress } from '../export/progress';

export interface MapOptions {
  /** The input file; `-` for stdin. */
  file: string;
  /** What each line is; undefined for NDJSON queries. */
  type?: string;
  sourceId?: number;
  /** Only records in this source are written. */
  to?: number;
  op: QueryOperation;
  searchComponents?: boolean;
  threshold?: number;
  limit?: number;
  format: 'tsv' | 'ndjson';
  concurrency: number;
  progress: boolean;
}

export interface MapSummary {
  queries: number;
  found: number;
  notFound: number;
  errors: number;
  rowsWritten: number;
  seconds: number;
  queriesPerSecond: number;
}

/** Counts the lines of a file (for the progress bar's total); undefined for stdin. */
async function countLines(file: string): Promise<number | undefined> {
  if (file === '-') return undefined;
  let count = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity }))
    if (line.trim() !== '') count += 1;
  return count;
}

/** The queries of the input: NDJSON lines as they are, or a compound a line with the options' type. */
async function* readQueries(options: MapOptions): AsyncGenerator<unknown> {
  const input = options.file === '-' ? process.stdin : createReadStream(options.file);
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    if (!options.type) {
      yield parseLine(line);
      continue;
    }
    const compound = line.trim();
    yield {
      id: compound,
      op: options.op,
      type: options.type,
      compound,
      ...(options.type === 'sourceID' ? { sourceID: options.sourceId } : {}),
      ...(options.searchComponents ? { searchComponents: true } : {}),
      ...(options.threshold !== undefined ? { threshold: options.threshold } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    };
  }
}

interface SourceRecord {
  id: number;
  shortName: string;
  compoundId: string;
  uci?: number;
  standardInchiKey?: string;
  typeOfSearch?: string;
}

/** What `npm run map` reads of an answer: the v1 compounds or connectivity body, or an error. */
interface AnswerBody {
  response?: string;
  error?: string;
  compounds?: { uci: number; standardInchiKey: string; sources: SourceRecord[] }[];
  sources?: SourceRecord[];
  /** Similarity and substructure hits. */
  results?: { uci: number; standardInchiKey: string; tanimoto?: number; sources: SourceRecord[] }[];
}

/** The records of an answer: each source entry with its structure (compounds) or as listed (connectivity). */
function recordsOf(body: AnswerBody): SourceRecord[] {
  if (body.results)
    return body.results.flatMap((hit) =>
      hit.sources.map((source) => ({
        ...source,
        uci: hit.uci,
        standardInchiKey: hit.standardInchiKey,
        typeOfSearch: hit.tanimoto === undefined ? 'substructure' : `tanimoto ${hit.tanimoto}`,
      })),
    );
  if (body.compounds)
    return body.compounds.flatMap((compound) =>
      compound.sources.map((source) => ({ ...source, uci: compound.uci, standardInchiKey: compound.standardInchiKey })),
    );
  return body.sources ?? [];
}

/** The answer with only the records of source `to`. */
function onlySource(body: AnswerBody, to: number): AnswerBody {
  if (body.compounds) {
    const compounds = body.compounds
      .map((compound) => ({ ...compound, sources: compound.sources.filter((source) => source.id === to) }))
      .filter((compound) => compound.sources.length > 0);
    return { ...body, totalCompounds: compounds.length, compounds } as AnswerBody;
  }
  if (body.sources) return { ...body, sources: body.sources.filter((source) => source.id === to) };
  if (body.results)
    return {
      ...body,
      results: body.results
        .map((hit) => ({ ...hit, sources: hit.sources.filter((source) => source.id === to) }))
        .filter((hit) => hit.sources.length > 0),
    };
  return body;
}

export const tsvHeader = ['query', 'result', 'uci', 'standardInchiKey', 'sourceId', 'source', 'compoundId', 'relation'];

const clean = (value: unknown): string =>
  value === undefined || value === null ? '' : String(value).replace(/[\t\r\n]+/g, ' ');

/** The TSV rows of one answered query: a row per record (of `to` only, when given), or one saying why there is none. */
function tsvRows(line: AnswerLine, to: number | undefined): string[] {
  const query = clean(line.id ?? line.index);
  const body = (line.body ?? {}) as AnswerBody;
  if (line.status !== 200)
    return [[query, `error ${line.status}: ${clean(body.error)}`, '', '', '', '', '', ''].join('\t')];
  const records = recordsOf(body).filter((record) => to === undefined || record.id === to);
  if (records.length === 0)
    return [
      [query, body.response === 'Success' ? `none in source ${to}` : 'not found', '', '', '', '', '', ''].join('\t'),
    ];
  return records.map((record) =>
    [
      query,
      'found',
      record.uci,
      record.standardInchiKey,
      record.id,
      record.shortName,
      record.compoundId,
      record.typeOfSearch,
    ]
      .map(clean)
      .join('\t'),
  );
}

/** Maps the input to `output`; resolves with the counts. */
export async function runMap(context: LookupContext, options: MapOptions, output: Writable): Promise<MapSummary> {
  const started = Date.now();
  const progress = new Progress(options.progress);
  // The file is read once more for the bar's total only when there is a bar.
  progress.begin(`map ${options.file}`, options.progress ? ((await countLines(options.file)) ?? 0) : 0);
  const summary: MapSummary = {
    queries: 0,
    found: 0,
    notFound: 0,
    errors: 0,
    rowsWritten: 0,
    seconds: 0,
    queriesPerSecond: 0,
  };
  const write = async (text: string): Promise<void> => {
    if (!output.write(text)) await once(output, 'drain');
  };
  if (options.format === 'tsv') await write(`${tsvHeader.join('\t')}\n`);
  const answerer = new QueryAnswerer(context);
  for await (const line of answerer.answerInOrder(readQueries(options), { concurrency: options.concurrency })) {
    summary.queries += 1;
    const response = (line.body as { response?: string } | null)?.response;
    if (line.status !== 200) summary.errors += 1;
    else if (response === 'Success') summary.found += 1;
    else summary.notFound += 1;
    const rows =
      options.format === 'tsv'
        ? tsvRows(line, options.to)
        : [
            JSON.stringify(
              options.to !== undefined && line.status === 200
                ? { ...line, body: onlySource(line.body as AnswerBody, options.to) }
                : line,
            ),
          ];
    summary.rowsWritten += rows.length;
    await write(`${rows.join('\n')}\n`);
    progress.tick(1);
  }
  progress.done();
  summary.seconds = Math.round((Date.now() - started) / 100) / 10;
  summary.queriesPerSecond = Math.round(summary.queries / Math.max(summary.seconds, 0.1));
  return summary;
}
