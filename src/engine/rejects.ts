/**
 * Rejected rows in the engine, for curators in Kibana: one index a load, all of them behind the
 * `{prefix}-rejects` alias, the most recent load's behind `{prefix}-rejects-last`. The rejects file
 * a load writes stays the whole record; these are its first REJECTS_INDEXED rows.
 */
import type { Engine } from './client';
import { mappingOf } from './client';
import { targetReplicas } from './schema';

/** One rejected row: which load, which file and line, why, and the row as read. */
export interface RejectDocument {
  loadId: string;
  command: string;
  file: string | null;
  sourceId: number | null;
  line: number;
  reason: string;
  message: string;
  row: string;
  time: string;
}

/** Creates the index of one load's rejects, behind the all-loads alias. */
export async function createRejectsIndex(engine: Engine, loadId: string): Promise<string> {
  const index = engine.names.rejectsOf(loadId);
  const { settings, mappings } = mappingOf('rejects');
  await engine.client.indices.create({
    index,
    mappings,
    aliases: { [engine.names.rejects]: {} },
    settings: { index: { ...(settings.index as object), number_of_replicas: await targetReplicas(engine) } },
  });
  return index;
}

/** Writes rejected rows into a load's rejects index; throws with the engine's reason if it refuses one. */
export async function writeRejects(engine: Engine, index: string, documents: RejectDocument[]): Promise<void> {
  const result = await engine.client.bulk({
    operations: documents.flatMap((document) => [{ index: { _index: index } }, document]),
  });
  if (!result.errors) return;
  const refused = result.items.find((item) => item.index?.error)?.index?.error;
  throw new Error(`the engine refused a rejected row: ${refused?.reason ?? refused?.type ?? 'unknown reason'}`);
}

/**
 * Makes `loadId`'s rejects those of the last load (one atomic alias move) and deletes the rejects
 * indices of loads older than the `kept` most recent. Returns the indices deleted.
 */
export async function publishRejects(engine: Engine, loadId: string, kept: number): Promise<string[]> {
  const index = engine.names.rejectsOf(loadId);
  const all = engine.names.rejectsOfEveryLoad;
  await engine.client.indices.refresh({ index });
  await engine.client.indices.updateAliases({
    actions: [
      { remove: { index: all, alias: engine.names.rejectsOfLastLoad, must_exist: false } },
      { add: { index, alias: engine.names.rejectsOfLastLoad } },
    ],
  });
  const indices = await engine.client.indices.get({
    index: all,
    expand_wildcards: 'open',
    filter_path: '*.settings.index.creation_date',
  });
  const created = (name: string): number => Number(indices[name]?.settings?.index?.creation_date ?? 0);
  const newestFirst = Object.keys(indices).sort((a, b) => created(b) - created(a) || b.localeCompare(a));
  const old = newestFirst.slice(kept).filter((name) => name !== index);
  for (let start = 0; start < old.length; start += 20) {
    await engine.client.indices.delete({ index: old.slice(start, start + 20).join(',') }, { ignore: [404] });
  }
  return old;
}
