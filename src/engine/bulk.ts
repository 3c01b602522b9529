/**
 * Bulk writes through the client's bulk helper: flushes by size, several requests in flight,
 * back-off and retry on 429. Every item has an `_id`, and its context (line number, raw row) is
 * remembered by `_id` for as long as it can still be in flight, so a refused document is reported
 * against the row it came from without deserialising every acknowledged document.
 */
import type { Engine } from './client';

export interface BulkItem<C> {
  index: string;
  id: string;
  /** 'create' refuses to overwrite (409 on an existing _id); 'index' replaces. */
  op: 'create' | 'index';
  /** The document, or its JSON already (sent as it is). */
  document: object | string;
  context: C;
}

export interface BulkFailure<C> { status: number; reason: string; id: string; context: C | undefined }

const concurrency = 3;
// 1 MB requests: the loader ran as fast as with 4 MB ones (bench:load), with a quarter of the memory in
// flight; peak RSS fell from 500 to under 300 MB.
const flushBytes = 1_000_000;
/**
 * Contexts are kept in two generations of this many bulk-body characters each. A document is in
 * flight only while fewer than (concurrency + 1) × flushBytes newer bytes have been queued after it
 * (the helper blocks the source while every slot is busy; a character is at least one byte), so a
 * generation of that size, with a margin, still holds the context of any refused document. Swapping
 * generations costs nothing per item, unlike evicting the oldest key of one Map (which walks the
 * Map's deleted slots each time: that was most of the loader's CPU time). Memory stays proportional
 * to what is in flight, not to a fixed number of rows.
 */
const generationBytes = (concurrency + 1.5) * flushBytes;
/** The action line `{"create":{"_index":"…","_id":"…"}}` around the index name and id. */
const actionOverhead = 32;

/**
 * Serialises the documents of a batch into one string and gives each item its slice of it. The
 * helper holds each document until its request is acknowledged, a few young-generation collections
 * later; a slice costs those collections a small header instead of a copy of the whole text (the
 * joined string is allocated where they do not copy it). Measured on the structures load before its
 * reader moved to a worker: scavenges 2.1–2.5 s against 2.3–2.7 s a load. A batch whose documents
 * all come serialised (the structure reader's, already slices of one string per batch) is left as
 * it is.
 */
export function packDocuments<C>(items: BulkItem<C>[]): BulkItem<C>[] {
  if (items.every((item) => typeof item.document === 'string')) return items;
  const texts = items.map((item) => (typeof item.document === 'string' ? item.document : JSON.stringify(item.document)));
  const joined = texts.join('');
  let offset = 0;
  items.forEach((item, i) => {
    item.document = joined.slice(offset, offset += texts[i].length);
  });
  return items;
}

/** Remembers the context of each item in flight by index and `_id`, in two generations (see above). */
class InFlight<C> {
  private current = new Map<string, Map<string, C>>();
  private previous = new Map<string, Map<string, C>>();
  private currentBytes = 0;

  add(index: string, id: string, context: C, bytes: number): void {
    let byId = this.current.get(index);
    if (!byId) this.current.set(index, byId = new Map());
    byId.set(id, context);
    this.currentBytes += bytes;
    if (this.currentBytes >= generationBytes) {
      this.previous = this.current;
      this.current = new Map();
      this.currentBytes = 0;
    }
  }

  get(index: string, id: string): C | undefined {
    return this.current.get(index)?.get(id) ?? this.previous.get(index)?.get(id);
  }
}

/** Writes every item of `items`; resolves with the counts once all are acknowledged. */
export async function bulkWrite<C>(
  engine: Engine,
  items: AsyncIterable<BulkItem<C>>,
  onFailure: (failure: BulkFailure<C>) => void,
): Promise<{ written: number; failed: number }> {
  const inFlight = new InFlight<C>();
  const stats = await engine.client.helpers.bulk<BulkItem<C>>({
    datasource: items[Symbol.asyncIterator](),
    concurrency,
    flushBytes,
    flushInterval: 5_000,
    retries: 6,
    wait: 1_000,
    refreshOnCompletion: false,
    // The helper needs each item's operation, status and error, not the other ~150 bytes per document.
    filter_path: 'errors,items.*.status,items.*.error',
    onDocument: (item) => {
      // Serialised here (the helper sends a string as it is) to count the bytes the contexts cover.
      const document = typeof item.document === 'string' ? item.document : JSON.stringify(item.document);
      inFlight.add(item.index, item.id, item.context, document.length + item.index.length + item.id.length + actionOverhead);
      // Literal keys: an object built with a computed key is a slow dictionary-mode object.
      const action = { _index: item.index, _id: item.id };
      return [(item.op === 'create' ? { create: action } : { index: action }) as never, document as never];
    },
    onDrop: (dropped) => {
      const action = Object.values(dropped.operation as object)[0] as { _index: string; _id: string };
      onFailure({
        status: dropped.status,
        reason: dropped.error?.reason ?? dropped.error?.type ?? `HTTP ${dropped.status}`,
        id: action._id,
        context: inFlight.get(action._index, action._id),
      });
    },
  });
  if (stats.aborted) throw new Error('the bulk write was aborted');
  return { written: stats.successful, failed: stats.failed };
}
