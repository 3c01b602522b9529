/**
 * Queries answered in bulk (the batch endpoint, jobs, `npm run map`): each query is a v1 compounds
 * or connectivity request plus an optional `op` and a client `id`, and gets, on a line of its own,
 * the status and body its single endpoint would have answered. A bad query fails alone.
 */
import type { Request } from 'express';
import { describeError, v1ErrorBody } from '../errors';
import { compoundQuery } from './routes';
import { findCompounds, searchConnectivity } from './responses';
import type { LookupContext } from '../../domain/lookup';
import { log } from '../../log';
import { QueryValidator, queryOperations, type QueryOperation } from './validate';
import { searchSimilar, searchSubstructure, type SubstructureQuery } from './similarity';

export type QueryId = string | number | boolean | null;

/** One answered query, as a line of a batch's or a job's results. */
export interface AnswerLine {
  index: number;
  id?: QueryId;
  status: number;
  body: unknown;
}

/** A query line that is not JSON: it is answered as such, in its place. */
export class UnreadableQuery {
  constructor(readonly reason: string) {}
}

/** One NDJSON line as a query, or what it is when it is not JSON. */
export function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (error) {
    return new UnreadableQuery((error as Error).message);
  }
}

/**
 * The operation a query asks for: its `op`, `compounds` when it has none (or one that is not valid: its line says so).
 */
export function operationOf(query: unknown): QueryOperation {
  const op = query !== null && typeof query === 'object' ? (query as { op?: unknown }).op : undefined;
  return queryOperations.find((operation) => operation === op) ?? 'compounds';
}

/** `op`'s words when it is not an operation. */
export function operationProblem(op: unknown): string | undefined {
  if (op === undefined || queryOperations.some((operation) => operation === op)) return undefined;
  return `"op" is ${JSON.stringify(op)}: it must be ${queryOperations
    .slice(0, -1)
    .map((operation) => `"${operation}"`)
    .join(', ')} or "${queryOperations[queryOperations.length - 1]}"`;
}

function lineOf(index: number, id: QueryId | undefined, status: number, body: unknown): AnswerLine {
  return id === undefined ? { index, status, body } : { index, id, status, body };
}

/** The line of a refused query: its status and the v1 error body. */
function failed(
  index: number,
  id: QueryId | undefined,
  status: number,
  message: string,
  details: { path: string; message: string }[] = [],
): AnswerLine {
  return lineOf(index, id, status, v1ErrorBody(message, details));
}

export class QueryAnswerer {
  constructor(
    private readonly context: LookupContext,
    private readonly validator = new QueryValidator(),
  ) {}

  /** The line of query `index`; never rejects. */
  async answer(index: number, query: unknown): Promise<AnswerLine> {
    if (query instanceof UnreadableQuery)
      return failed(index, undefined, 400, `query ${index} is not valid JSON: ${query.reason}`);
    if (query === null || typeof query !== 'object' || Array.isArray(query)) {
      return failed(
        index,
        undefined,
        400,
        `query ${index} must be a JSON object, such as {"type": "inchikey", "compound": "..."}`,
      );
    }
    const { op, id, ...request } = query as { op?: unknown; id?: unknown };
    if (id !== undefined && id !== null && typeof id === 'object')
      return failed(
        index,
        undefined,
        400,
        '"id" must be a string, a number, a boolean or null: it is echoed on the query\'s line',
      );
    const queryId = id as QueryId | undefined;
    const problem = operationProblem(op);
    if (problem) return failed(index, queryId, 400, problem);
    const operation = operationOf(query);
    const asRequest = QueryValidator.requestOf(operation, request);
    try {
      await this.validator.check(asRequest);
      const body = asRequest.body as Parameters<typeof compoundQuery>[0];
      const answers = {
        compounds: () => findCompounds(this.context, compoundQuery(body)),
        connectivity: () => searchConnectivity(this.context, compoundQuery(body)),
        similarity: () => searchSimilar(this.context, compoundQuery(body)),
        substructure: () => searchSubstructure(this.context, asRequest.body as SubstructureQuery),
      };
      const answer = await answers[operation]();
      return lineOf(index, queryId, 200, answer);
    } catch (error) {
      const { status, message, details } = describeError(error, asRequest as unknown as Request);
      if (status >= 500 && status !== 503)
        log.error('batch query failed', { index, error: (error as Error)?.stack ?? String(error) });
      return failed(index, queryId, status, message, details);
    }
  }

  /**
   * The lines of `queries`, in their order. Queries start in waves of `concurrency`, each wave in
   * one turn of the event loop, so that their searches leave together and merge (src/engine/msearch-batcher.ts);
   * the next wave starts as the previous one begins to be taken, so at most two waves are answered
   * or wait to be taken at once: the consumer's pace bounds the work ahead of it. `before`, when
   * given, is awaited before each query starts (a rate limit's wait).
   */
  async *answerInOrder(
    queries: Iterable<unknown> | AsyncIterable<unknown>,
    options: { concurrency: number; firstIndex?: number; before?: (query: unknown) => Promise<void> },
  ): AsyncGenerator<AnswerLine> {
    const iterator = Symbol.asyncIterator in queries ? queries[Symbol.asyncIterator]() : queries[Symbol.iterator]();
    let index = options.firstIndex ?? 0;
    const startWave = async (): Promise<Promise<AnswerLine>[]> => {
      const wave: Promise<AnswerLine>[] = [];
      while (wave.length < options.concurrency) {
        const next = await iterator.next();
        if (next.done) break;
        if (options.before) await options.before(next.value);
        wave.push(this.answer(index, next.value));
        index += 1;
      }
      return wave;
    };
    try {
      let wave = await startWave();
      while (wave.length > 0) {
        const following = await startWave();
        for (const line of wave) yield await line;
        wave = following;
      }
    } finally {
      await iterator.return?.();
    }
  }
}

/** A line of results as sent: one JSON object and a newline; `id` only when the query had one. */
export function serialiseLine(line: AnswerLine): string {
  return `${JSON.stringify(line)}\n`;
}
