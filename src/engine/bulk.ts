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
  document: object;
  context: C;
}

export interface BulkFailure<C> { status: number; reason: string; id: string; context: C | undefined }

// Far more than can be in flight (flushBytes × concurrency / smallest document), so a failure always finds its row.
const rememberedContexts = 250_000;

/** Writes every item of `items`; resolves with the counts once all are acknowledged. */
export async function bulkWrite<C>(
  engine: Engine,
  items: AsyncIterable<BulkItem<C>>,
  onFailure: (failure: BulkFailure<C>) => void,
): Promise<{ written: number; failed: number }> {
  const contexts = new Map<string, C>();
  const remember = (key: string, context: C): void => {
    contexts.set(key, context);
    if (contexts.size > rememberedContexts) contexts.delete(contexts.keys().next().value as string);
  };
  const stats = await engine.client.helpers.bulk<BulkItem<C>>({
    datasource: items[Symbol.asyncIterator](),
    concurrency: 3,
    flushBytes: 4_000_000,
    flushInterval: 5_000,
    retries: 6,
    wait: 1_000,
    refreshOnCompletion: false,
    onDocument: (item) => {
      remember(`${item.index}\u0000${item.id}`, item.context);
      return [{ [item.op]: { _index: item.index, _id: item.id } } as never, item.document];
    },
    onDrop: (dropped) => {
      const action = Object.values(dropped.operation as object)[0] as { _index: string; _id: string };
      onFailure({
        status: dropped.status,
        reason: dropped.error?.reason ?? dropped.error?.type ?? `HTTP ${dropped.status}`,
        id: action._id,
        context: contexts.get(`${action._index}\u0000${action._id}`),
      });
    },
  });
  if (stats.aborted) throw new Error('the bulk write was aborted');
  return { written: stats.successful, failed: stats.failed };
}
