/**
 * POST /api/v1/batch (docs/api.md): up to BATCH_MAX_QUERIES queries (compounds, connectivity, similarity,
 * substructure) in one request, as `{"queries": [...]}` or one query a line (NDJSON), answered as NDJSON in
 * query order.
 * The queries are all read (and counted: too many is a 413 before any is answered), then answered
 * BATCH_CONCURRENCY at a time, their searches merged into shared `_msearch` requests; each line is
 * written as its turn comes and the next queries wait while the client does not read (backpressure),
 * so memory holds the queries and a window of answers, whatever the batch's size.
 */
import { createInterface } from 'node:readline';
import type { Request, RequestHandler, Response } from 'express';
import type { Config } from '../../config';
import { operationOf, parseLine, serialiseLine, type AnswerLine, type QueryAnswerer } from './answer';
import { HttpError } from '../errors';
import { clientKey, type CostLimiter } from '../rate-limit';

export const ndjsonTypes = [
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/jsonlines',
  'application/x-jsonlines',
];

/** The media type a request's body is sent as (its Content-Type without parameters, lower case); '' without one. */
export function mediaTypeOf(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** How a refused media type is named in a 415's message. */
export function sentAs(type: string): string {
  return type ? `"${type}"` : 'without a Content-Type';
}

/**
 * The lines of a body that are not blank, as they arrive; `tooLarge` is thrown once the body passes
 * `maxBytes`. Leaving the loop early stops reading.
 */
export async function* bodyLines(req: Request, maxBytes: number, tooLarge: () => Error): AsyncGenerator<string> {
  let bytes = 0;
  const lines = createInterface({ input: req, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      bytes += Buffer.byteLength(line) + 1;
      if (bytes > maxBytes) throw tooLarge();
      if (line.trim() !== '') yield line;
    }
  } finally {
    lines.close();
  }
}

/**
 * The queries of a body: parsed (JSON form) or as lines still to parse (NDJSON); throws an HttpError when the body
 * cannot be a batch.
 */
export async function readQueries(
  req: Request,
  limits: { maxQueries: number; maxBytes: number; what: string; alternative?: string },
): Promise<unknown[]> {
  const type = mediaTypeOf(req);
  const tooMany = (count: string): HttpError =>
    new HttpError(
      413,
      `the ${limits.what} has ${count} queries, more than the ${limits.maxQueries} it may hold` +
        `${limits.alternative ? `: ${limits.alternative}` : ''}`,
    );
  const tooLarge = (): HttpError =>
    new HttpError(413, `the body is larger than the ${limits.maxBytes} bytes a ${limits.what} accepts`);
  if (type === 'application/json' || type.endsWith('+json')) {
    let bytes = 0;
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) throw tooLarge();
      chunks.push(chunk);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (error) {
      throw new HttpError(400, `the body is not valid JSON: ${(error as Error).message}`);
    }
    if (
      body === null ||
      typeof body !== 'object' ||
      Array.isArray(body) ||
      !Array.isArray((body as { queries?: unknown }).queries)
    ) {
      throw new HttpError(
        400,
        'the body must be a JSON object with a list of queries, {"queries": ' +
          '[{"type": "inchikey", "compound": "..."}, ...]}, or one query a line ' +
          '(Content-Type: application/x-ndjson)',
      );
    }
    const extra = Object.keys(body).filter((key) => key !== 'queries');
    if (extra.length > 0)
      throw new HttpError(
        400,
        `the field "${extra[0]}" is not part of this request (unknown field): the body holds only "queries"`,
      );
    const queries = (body as { queries: unknown[] }).queries;
    if (queries.length > limits.maxQueries) throw tooMany(String(queries.length));
    return queries;
  }
  if (ndjsonTypes.includes(type)) {
    const queries: unknown[] = [];
    for await (const line of bodyLines(req, limits.maxBytes, tooLarge)) {
      if (queries.length === limits.maxQueries) throw tooMany(`more than ${limits.maxQueries}`);
      queries.push(parseLine(line));
    }
    return queries;
  }
  throw new HttpError(
    415,
    `the body must be JSON (Content-Type: application/json, {"queries": ` +
      `[...]}) or NDJSON (Content-Type: application/x-ndjson, one query a ` +
      `line), not ${sentAs(type)}`,
  );
}

/** Writes `text`, waiting while the client's socket is full; false once the client is gone. */
export async function writeOrWait(res: Response, text: string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  if (res.write(text)) return true;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
  return !res.destroyed;
}

/**
 * The cost a query charges a client's bucket: its single endpoint's `x-rate-cost` (a lookup 1, a
 * connectivity search 5, a similarity search 10, a substructure search 20).
 */
function costOf(costs: Map<string, number>, query: unknown): number {
  const operation = operationOf(query);
  return costs.get(`post${operation[0].toUpperCase()}${operation.slice(1)}`) ?? 1;
}

export function batchHandler(
  config: Config,
  answerer: QueryAnswerer,
  limiter: CostLimiter | undefined,
  costs: Map<string, number>,
): RequestHandler {
  return async (req, res) => {
    const queries = await readQueries(req, {
      maxQueries: config.BATCH_MAX_QUERIES,
      maxBytes: config.BATCH_BODY_LIMIT,
      what: 'batch',
      alternative: 'send it in several batches, or as a job (POST /api/v1/jobs)',
    });
    // Under RATE_LIMIT the request has paid its entry (rateLimit, in front of this handler: a 429 when
    // the client's bucket is empty); then each query costs what its single request would, and waits
    // for the bucket to refill when it is empty, so a batch runs at its client's pace.
    const client = clientKey(req.ip);
    const before = limiter
      ? async (query: unknown): Promise<void> => {
          for (;;) {
            const decision = limiter.take(client, costOf(costs, query));
            if (decision.allowed || res.destroyed) return;
            await new Promise((resolve) => setTimeout(resolve, decision.retryAfterSeconds * 1000));
          }
        }
      : undefined;
    res.status(200).type('application/x-ndjson; charset=utf-8').set('X-Batch-Queries', String(queries.length));
    res.flushHeaders();
    const lines: AsyncGenerator<AnswerLine> = answerer.answerInOrder(queries, {
      concurrency: config.BATCH_CONCURRENCY,
      before,
    });
    for await (const line of lines) {
      if (!(await writeOrWait(res, serialiseLine(line)))) {
        await lines.return(undefined);
        return;
      }
    }
    res.end();
  };
}
