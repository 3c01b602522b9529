/**
 * Bulk writes. Documents come in batches already serialised and encoded as the request body's lines
 * (see `BulkBatch`): a request is a view of one batch (or small batches joined), and a refused
 * document is known by its position in the request, with no per-document objects, maps, copies or
 * serialisation on the way. Requests of up to 4 MB, three in flight; documents refused with 429
 * are sent again after a second, six times; any other refusal is reported with the item's context.
 * A 429 that is the engine's full disk (the flood-stage block) is no backpressure: it stops the
 * write at once with EngineDiskFull.
 */
import type { Engine } from './client';
import { EngineDiskFull, isFloodStageBlock, translateEngineError } from './errors';

export interface BulkItem<C> {
  index: string;
  id: string;
  /** 'create' refuses to overwrite (409 on an existing _id); 'index' replaces. */
  op: 'create' | 'index';
  /** The document, or its JSON already (sent as it is). */
  document: object | string;
  context: C;
}

/**
 * Bulk operations serialised and encoded once: item i is its action line and its document line,
 * each ending in a newline, from byte `ends[i - 1]` (0 for the first) to byte `ends[i]` of `body`.
 */
export interface BulkBatch<C> {
  body: Buffer;
  ends: number[];
  ids: string[];
  contexts: C[];
}

export interface BulkFailure<C> {
  status: number;
  reason: string;
  id: string;
  context: C | undefined;
}

const concurrency = 3;
// 4 MB requests, as raw bulk sends them: each request costs the engine some work of its own (its
// handling, a translog sync). Structure loads ran at 0.90 of raw bulk on average in 0.86 MB requests
// (five runs), at 0.94 in one 3.4 MB request per 4,000-row batch (nine runs; bench:load). Requests
// are views of their batches, so the loader's peak RSS grew only from 220 to 245 MB.
export const flushBytes = 4_000_000;
const retries = 6;
const retryWaitMs = 1_000;

/** An action line up to its `_id`, the same for every item of one operation on one index: made once, used per item. */
export function actionStart(op: 'create' | 'index', index: string): string {
  return `{"${op}":{"_index":${JSON.stringify(index)},"_id":`;
}

/** One item's two lines of a bulk body, after `actionStart`; `document` is its JSON. */
export function bulkLinesAfter(start: string, id: string, document: string): string {
  return `${start}${JSON.stringify(id)}}}\n${document}\n`;
}

/**
 * `parts` joined and encoded as UTF-8, with where each ends in bytes. `charEnds` are where they end
 * in characters (an end may repeat the one before it, for an entry without a part): the same when
 * every character is ASCII, as the encoding is then as long as the text, so the parts are measured
 * one by one only when some are not.
 */
export function encodeParts(parts: string[], charEnds: number[]): { body: Buffer; ends: number[] } {
  const text = parts.join('');
  const body = Buffer.from(text);
  if (body.length === text.length) return { body, ends: charEnds };
  let next = 0;
  let end = 0;
  let previous = 0;
  const ends = charEnds.map((charEnd) => {
    if (charEnd > previous) end += Buffer.byteLength(parts[next++]);
    previous = charEnd;
    return end;
  });
  return { body, ends };
}

/** Collects items into a `BulkBatch`. */
export class BulkBatchBuilder<C> {
  private lines: string[] = [];
  private length = 0;
  private ends: number[] = [];
  private ids: string[] = [];
  private contexts: C[] = [];

  add(item: BulkItem<C>): void {
    this.addLines(
      item.id,
      bulkLinesAfter(
        actionStart(item.op, item.index),
        item.id,
        typeof item.document === 'string' ? item.document : JSON.stringify(item.document),
      ),
      item.context,
    );
  }

  /** An item already written as its two lines. */
  addLines(id: string, lines: string, context: C): void {
    this.lines.push(lines);
    this.ends.push((this.length += lines.length));
    this.ids.push(id);
    this.contexts.push(context);
  }

  get size(): number {
    return this.ids.length;
  }

  get chars(): number {
    return this.length;
  }

  /** The batch of the items added so far; the builder starts empty again. */
  take(): BulkBatch<C> {
    const batch = { ...encodeParts(this.lines, this.ends), ids: this.ids, contexts: this.contexts };
    this.lines = [];
    this.length = 0;
    this.ends = [];
    this.ids = [];
    this.contexts = [];
    return batch;
  }
}

/** Items `from` to `to` (exclusive) of `batch`. */
function sliceOf<C>(batch: BulkBatch<C>, from: number, to: number): BulkBatch<C> {
  if (from === 0 && to === batch.ids.length) return batch;
  const start = from === 0 ? 0 : batch.ends[from - 1];
  return {
    body: batch.body.subarray(start, batch.ends[to - 1]),
    ends: batch.ends.slice(from, to).map((end) => end - start),
    ids: batch.ids.slice(from, to),
    contexts: batch.contexts.slice(from, to),
  };
}

/** Several batches as one. */
function joined<C>(parts: BulkBatch<C>[]): BulkBatch<C> {
  if (parts.length === 1) return parts[0];
  const ends: number[] = [];
  let offset = 0;
  for (const part of parts) {
    for (const end of part.ends) ends.push(offset + end);
    offset += part.body.length;
  }
  return {
    body: Buffer.concat(
      parts.map((part) => part.body),
      offset,
    ),
    ends,
    ids: parts.flatMap((part) => part.ids),
    contexts: parts.flatMap((part) => part.contexts),
  };
}

/** The items at `positions` of `batch`. */
function picked<C>(batch: BulkBatch<C>, positions: number[]): BulkBatch<C> {
  return joined(positions.map((i) => sliceOf(batch, i, i + 1)));
}

interface Counts {
  written: number;
  failed: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one request, and again the items refused with 429 (or the whole request, refused so). */
async function writeRequest<C>(
  engine: Engine,
  request: BulkBatch<C>,
  counts: Counts,
  onFailure: (failure: BulkFailure<C>) => void,
): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    let response;
    try {
      response = await engine.client.bulk({
        // A Buffer goes to the socket as it is, its length known without a second pass.
        operations: request.body as never,
        // Each item's status and error, in order, not the other ~150 bytes of each answer.
        filter_path: 'errors,items.*.status,items.*.error',
      });
    } catch (error) {
      const translated = translateEngineError(error);
      if (translated instanceof EngineDiskFull) throw translated;
      if ((error as { statusCode?: number }).statusCode !== 429 || attempt >= retries) throw error;
      await sleep(retryWaitMs);
      continue;
    }
    if (!response.errors) {
      counts.written += request.ids.length;
      return;
    }
    const busy: number[] = [];
    let diskFull = false;
    response.items.forEach((item, i) => {
      const result = item.create ?? item.index ?? Object.values(item)[0]!;
      if (isFloodStageBlock(result.error)) {
        // No row is to blame: the write stops, and no refused row is reported.
        diskFull = true;
      } else if (result.status < 300) {
        counts.written += 1;
      } else if (result.status === 429 && attempt < retries) {
        busy.push(i);
      } else {
        counts.failed += 1;
        const reason =
          result.status === 429
            ? `the engine was still too busy after ${retries} retries`
            : (result.error?.reason ?? result.error?.type ?? `HTTP ${result.status}`);
        onFailure({ status: result.status, reason, id: request.ids[i], context: request.contexts[i] });
      }
    });
    if (diskFull) throw new EngineDiskFull();
    if (busy.length === 0) return;
    request = picked(request, busy);
    await sleep(retryWaitMs);
  }
}

/**
 * Writes every batch of `batches`; resolves with the counts once all are acknowledged. A request
 * the engine fails as a whole (after the client's own retries) stops the write: the batches not
 * yet sent are not read, and the error is thrown once the requests in flight are answered.
 */
export async function writeBulkBatches<C>(
  engine: Engine,
  batches: AsyncIterable<BulkBatch<C>>,
  onFailure: (failure: BulkFailure<C>) => void,
): Promise<Counts> {
  const counts: Counts = { written: 0, failed: 0 };
  const inFlight = new Set<Promise<void>>();
  let error: unknown;
  let pending: BulkBatch<C>[] = [];
  let pendingBytes = 0;
  const send = async (): Promise<void> => {
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    if (error !== undefined || pending.length === 0) return;
    const request = writeRequest(engine, joined(pending), counts, onFailure)
      .catch((failure: unknown) => {
        error ??= failure;
      })
      .finally(() => inFlight.delete(request));
    inFlight.add(request);
    pending = [];
    pendingBytes = 0;
  };
  for await (const batch of batches) {
    // In pieces of at most flushBytes, of about equal size: a batch of 4.8 MB goes as two of 2.4 MB,
    // each alone, rather than 4 MB and a rest that would have to be joined with the next batch.
    const count = batch.ids.length;
    const bytes = count === 0 ? 0 : batch.ends[count - 1];
    const pieces = Math.ceil(bytes / flushBytes);
    let from = 0;
    for (let piece = 1; piece <= pieces && from < count && error === undefined; piece += 1) {
      const end = (bytes * piece) / pieces;
      let to = from + 1;
      while (to < count && batch.ends[to] <= end) to += 1;
      const pieceBytes = batch.ends[to - 1] - (from === 0 ? 0 : batch.ends[from - 1]);
      if (pendingBytes > 0 && pendingBytes + pieceBytes > flushBytes) await send();
      pending.push(sliceOf(batch, from, to));
      pendingBytes += pieceBytes;
      from = to;
      // Small pieces (a batch with few documents to write) are joined into requests of a quarter of flushBytes or more.
      if (pendingBytes >= flushBytes / 4) await send();
    }
    if (error !== undefined) break;
  }
  await send();
  await Promise.all(inFlight);
  if (error !== undefined) throw error;
  return counts;
}

/** Writes every item of `items` (see `writeBulkBatches`), batched as they come. */
export async function bulkWrite<C>(
  engine: Engine,
  items: AsyncIterable<BulkItem<C>>,
  onFailure: (failure: BulkFailure<C>) => void,
): Promise<Counts> {
  async function* batches(): AsyncGenerator<BulkBatch<C>> {
    const builder = new BulkBatchBuilder<C>();
    for await (const item of items) {
      builder.add(item);
      if (builder.chars >= flushBytes) yield builder.take();
    }
    if (builder.size > 0) yield builder.take();
  }
  return writeBulkBatches(engine, batches(), onFailure);
}
