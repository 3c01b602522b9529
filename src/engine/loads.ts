/** Load records in the meta index: what `npm run load -- history` lists. */
import type { LoadRecord } from '../domain/types';
import type { Engine } from './client';

/** Writes (or rewrites) the record of one load. */
export async function saveLoadRecord(engine: Engine, record: LoadRecord): Promise<void> {
  await engine.client.index({ index: engine.names.meta, id: `load-${record.loadId}`, document: record, refresh: true });
}

/** Past loads, most recent first. */
export async function loadHistory(engine: Engine, limit = 100): Promise<LoadRecord[]> {
  const result = await engine.client.search<LoadRecord>({
    index: engine.names.meta, size: limit, query: { term: { kind: 'load' } }, sort: [{ started: 'desc' }],
  }, { ignore: [404] });
  return (result.hits?.hits ?? []).map((hit) => hit._source!);
}

/** Release indices of loads that are still running and have reported progress recently. */
export async function indicesOfRunningLoads(engine: Engine, staleAfterMs = 10 * 60_000): Promise<Set<string>> {
  const result = await engine.client.search<LoadRecord>({
    index: engine.names.meta, size: 1000, query: { bool: { filter: [{ term: { kind: 'load' } }, { term: { status: 'running' } }] } },
  }, { ignore: [404] });
  const running = new Set<string>();
  for (const hit of result.hits?.hits ?? []) {
    const record = hit._source!;
    const last = Date.parse(record.heartbeat ?? record.started);
    if (record.index && Date.now() - last < staleAfterMs) for (const index of record.index.split(",")) running.add(index);
  }
  return running;
}
