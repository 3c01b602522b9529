/**
 * Indices and aliases: the base indices, one physical index per release (of one source, or of all
 * the sources of a dump) behind two aliases (`{prefix}-assignments-{sourceId}` and `{prefix}-assignments`), and
 * the atomic swap that publishes a release.
 */
import type { estypes } from '@elastic/elasticsearch';
import type { Engine, MappingName } from './client';
import { mappingOf } from './client';
import type { SourceDocument } from './documents';

const baseIndices = ['compounds', 'fingerprints', 'sources', 'meta', 'changes'] as const;
/** Indices that grow with the data and take ES_SHARDS primary shards; the others keep one. */
const largeIndices = new Set<MappingName>(['compounds', 'fingerprints', 'assignments', 'changes']);

/** Replicas of every index: ES_REPLICAS, or with `auto` 1 when the cluster has two data nodes or more, else 0. */
export async function targetReplicas(engine: Engine): Promise<number> {
  if (engine.config.ES_REPLICAS !== 'auto') return engine.config.ES_REPLICAS;
  const health = await engine.client.cluster.health();
  return health.number_of_data_nodes >= 2 ? 1 : 0;
}

/**
 * The settings of a new index of `name`: its mapping file's, with ES_SHARDS primaries for a large index and `replicas`.
 */
function settingsOf(engine: Engine, name: MappingName, replicas: number): Record<string, unknown> {
  const index = (mappingOf(name).settings.index ?? {}) as Record<string, unknown>;
  return {
    ...index,
    number_of_shards: largeIndices.has(name) ? engine.config.ES_SHARDS : 1,
    number_of_replicas: replicas,
  };
}

/**
 * Creates the compounds, sources and meta indices when missing (idempotent, safe to race), and gives
 * existing ones the replicas asked for (ES_SHARDS applies when an index is created).
 */
export async function ensureBaseIndices(engine: Engine): Promise<void> {
  const replicas = await targetReplicas(engine);
  for (const name of baseIndices) {
    const index = engine.names[name];
    if (await engine.client.indices.exists({ index })) {
      // The meta index's strict mapping gains fields as chemxref grows (load host and pid, load locks).
      if (name === 'meta') await engine.client.indices.putMapping({ index, ...mappingOf(name).mappings });
      // Fingerprints gained `derivation`; an older index keeps its other fields as they were made.
      if (name === 'fingerprints') {
        const { derivation } = mappingOf(name).mappings.properties as Record<string, estypes.MappingProperty>;
        await engine.client.indices.putMapping({ index, properties: { derivation } });
      }
      const current = await engine.client.indices.getSettings({
        index,
        name: 'index.number_of_replicas',
        flat_settings: true,
      });
      if (Number(Object.values(current)[0]?.settings?.['index.number_of_replicas'] ?? 0) !== replicas) {
        await engine.client.indices.putSettings({ index, settings: { index: { number_of_replicas: replicas } } });
      }
      continue;
    }
    const { mappings } = mappingOf(name);
    await engine.client.indices
      .create({ index, mappings, settings: { index: settingsOf(engine, name, replicas) } }, { ignore: [400] })
      .catch((error) => {
        if (!/resource_already_exists_exception/.test(String(error))) throw error;
      });
  }
  await engine.client.cluster.health({
    index: baseIndices.map((n) => engine.names[n]),
    wait_for_status: 'yellow',
    timeout: '30s',
  });
}

/**
 * Primary shards of a release expected to hold `assignments`: one per RELEASE_SHARD_ASSIGNMENTS, at
 * least one, at most ES_SHARDS. Every key lookup searches every shard of every release behind the
 * all-sources alias, so a source's release is no larger in shards than its size asks: 40 sources
 * reloaded one by one make 40 shards a lookup, not 40 × ES_SHARDS.
 */
export function releaseShards(engine: Engine, assignments: number): number {
  return Math.min(
    engine.config.ES_SHARDS,
    Math.max(1, Math.ceil(assignments / engine.config.RELEASE_SHARD_ASSIGNMENTS)),
  );
}

/**
 * Creates a fresh, unaliased release index (named by `IndexNames.assignmentsRelease`), with refresh off
 * while it is written: for one source, or for every source of a reference table, sized for
 * `expectedAssignments` (releaseShards). Nobody reads it before it is published, and a load that
 * dies leaves it to the sweep, so its translog is synced every few seconds instead of on every bulk
 * request while it is written.
 */
export async function createReleaseIndex(engine: Engine, index: string, expectedAssignments: number): Promise<void> {
  const { mappings } = mappingOf('assignments');
  // No replicas while it is written: each document is indexed once; the copies are made at seal time.
  await engine.client.indices.create({
    index,
    mappings,
    settings: {
      index: {
        ...settingsOf(engine, 'assignments', 0),
        number_of_shards: releaseShards(engine, expectedAssignments),
        refresh_interval: '-1',
        'translog.durability': 'async',
      },
    },
  });
}

/**
 * Makes `index` a fresh release index holding what the published release `source` holds, through
 * the engine's clone: its segments are hard-linked, no document is indexed again. The clone gets
 * today's assignments mapping (refused when it conflicts with the source's: nothing is left
 * behind) and is written like a fresh release (no replicas, refresh off). The engine clones only
 * a write-blocked index: a published release is never written, and its block is lifted again
 * whatever happens.
 */
export async function cloneReleaseIndex(engine: Engine, source: string, index: string): Promise<void> {
  await engine.client.indices.addBlock({ index: source, block: 'write' });
  try {
    await engine.client.indices.clone({
      index: source,
      target: index,
      settings: {
        index: { 'blocks.write': false, number_of_replicas: 0, refresh_interval: '-1', 'translog.durability': 'async' },
      },
    });
  } finally {
    await engine.client.indices.putSettings({ index: source, settings: { index: { 'blocks.write': null } } });
  }
  try {
    await engine.client.indices.putMapping({ index, ...(mappingOf('assignments').mappings as object) });
  } catch (error) {
    await engine.client.indices.delete({ index }, { ignore: [404] });
    throw error;
  }
}

/** How many shards `index` has. */
export async function shardsOf(engine: Engine, index: string): Promise<number> {
  const settings = await engine.client.indices.getSettings({
    index,
    name: 'index.number_of_shards',
    flat_settings: true,
  });
  return Number(Object.values(settings)[0]?.settings?.['index.number_of_shards']);
}

/**
 * Merges an index that will not be written again (a consolidated release before it is sealed) into
 * one segment: each segment costs every search that reaches it a seek of its own.
 */
export async function mergeIntoOneSegment(engine: Engine, index: string): Promise<void> {
  const { task } = await engine.client.indices.forcemerge({ index, max_num_segments: 1, wait_for_completion: false });
  await waitForTask(engine, String(task), `merging ${index} into one segment`);
}

/**
 * Waits for an engine task (a merge of gigabytes outlasts any request timeout), polled after 100 ms,
 * then twice as long each time up to every 2 s (a merge of a small index ends within the first
 * polls); a wait that fails cancels the task. `what` names it in errors.
 */
async function waitForTask(engine: Engine, taskId: string, what: string): Promise<void> {
  try {
    for (let wait = 100; ; wait = Math.min(2 * wait, 2_000)) {
      const state = (await engine.client.tasks.get({ task_id: taskId })) as {
        completed?: boolean;
        error?: { reason?: string; type?: string };
      };
      if (state.completed) {
        const failure = state.error?.reason ?? state.error?.type;
        if (failure) throw new Error(`${what} failed: ${failure}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  } catch (error) {
    await engine.client.tasks.cancel({ task_id: taskId }).catch(() => undefined);
    throw error;
  }
}

/** A written release could not be fully replicated in time: it is not published. */
export class ReplicationTimeout extends Error {}

/**
 * Makes a written release index durable (flushed, translog synced per request again), searchable,
 * and replicated: it gets the replicas of every index and is published only once every copy is
 * placed (green), waiting at most ES_GREEN_TIMEOUT. When the cluster has fewer data nodes than
 * copies asked (a node is gone), it waits for the copies that can be placed and says what is
 * missing. Returns that note, or undefined when the release is fully replicated.
 */
export async function sealReleaseIndex(engine: Engine, index: string): Promise<string | undefined> {
  await engine.client.indices.putSettings({ index, settings: { index: { 'translog.durability': 'request' } } });
  await engine.client.indices.flush({ index });
  await resumeRefresh(engine, index, 'assignments');
  const replicas = await targetReplicas(engine);
  if (replicas === 0) return undefined;
  await engine.client.indices.putSettings({ index, settings: { index: { number_of_replicas: replicas } } });
  const deadline = Date.now() + engine.config.ES_GREEN_TIMEOUT;
  for (;;) {
    // A wait that times out answers 408 with the health as it is.
    const health = await engine.client.cluster.health(
      { index, wait_for_status: 'green', timeout: '20s' },
      { ignore: [408] },
    );
    if (health.status === 'green') return undefined;
    const copies = health.number_of_data_nodes;
    if (
      copies < replicas + 1 &&
      health.initializing_shards === 0 &&
      health.relocating_shards === 0 &&
      health.status === 'yellow'
    ) {
      return (
        `${index} has ${copies} of ${replicas + 1} copies of each shard: the ` +
        `cluster has ${copies} data node${copies === 1 ? '' : 's'}; the ` +
        `missing replicas are made when nodes join`
      );
    }
    if (Date.now() > deadline) {
      throw new ReplicationTimeout(
        `${index} was not fully replicated (${health.status}, ` +
          `${health.unassigned_shards} shard copies unassigned) within ` +
          `ES_GREEN_TIMEOUT ` +
          `(${Math.round(engine.config.ES_GREEN_TIMEOUT / 1000)} s): nothing published`,
      );
    }
  }
}

/** The physical index behind a source's alias, if the source has a published release. */
export async function currentReleaseIndex(engine: Engine, sourceId: number): Promise<string | undefined> {
  const aliases = await engine.client.indices.getAlias(
    { name: engine.names.assignmentsOf(sourceId) },
    { ignore: [404] },
  );
  const indices = Object.keys(aliases ?? {}).filter((key) => key !== 'error' && key !== 'status');
  return indices[0];
}

/**
 * Which sources each release index serves, read from the per-source aliases (the truth: the
 * all-sources alias is derived from them). A dump's index may serve many sources, or fewer than it
 * holds once some of them were reloaded on their own.
 */
export async function servedSources(engine: Engine): Promise<Map<string, Set<number>>> {
  const aliases = await engine.client.indices.getAlias({ name: `${engine.names.assignments}-*` }, { ignore: [404] });
  const pattern = new RegExp(`^${escape(engine.names.assignments)}-([0-9]+)$`);
  const served = new Map<string, Set<number>>();
  for (const [index, state] of Object.entries(aliases ?? {})) {
    for (const alias of Object.keys((state as { aliases?: object }).aliases ?? {})) {
      const match = pattern.exec(alias);
      if (!match) continue;
      if (!served.has(index)) served.set(index, new Set());
      served.get(index)!.add(Number(match[1]));
    }
  }
  return served;
}

/** Every source's current release index, resolved once (an export reads these, not the moving aliases). */
export async function currentReleaseIndices(engine: Engine): Promise<Map<number, string>> {
  const releases = new Map<number, string>();
  for (const [index, sourceIds] of await servedSources(engine)) {
    for (const sourceId of sourceIds) releases.set(sourceId, index);
  }
  return releases;
}

/**
 * The filter of a source's alias on an index shared by several sources. A range, not a term: the
 * engine runs a range on a numeric field with doc values as "points or doc values", whichever the
 * query's other clauses make cheaper, so a lookup that finds one id checks one document's value;
 * a term is a points query that visits every document of the source, whatever the lookup finds
 * (0.14 against 0.55 ms a lookup in a 6M-assignment index; BENCHMARKS.md, "Growth curve").
 */
function sourceFilter(sourceId: number): object {
  return { range: { sourceId: { gte: sourceId, lte: sourceId } } };
}

/**
 * Publishes `index` as the release of every source of `sourceIds` in one atomic alias call: readers
 * see the old releases until this call and the new ones after, never a mix.
 *
 * A source's alias filters on its id when the index holds several sources. The all-sources alias
 * shows a previous index only for the sources it still serves. The release a source served until
 * now becomes its previous release (`{prefix}-previous-assignments-{sourceId}`), and is not deleted in the
 * swap: searches already routed to it finish on it, and `npm run load -- rollback` can serve it again.
 * The release that was previous before goes once nothing points at it and it stopped serving more
 * than RELEASE_GRACE ago (`deleteUnaliasedReplaced`, or a later sweep: `removeExpiredPreviousReleases`).
 * Publishes take turns (a lock in the meta index): each one rewrites the all-sources filter from
 * what the aliases say at that moment.
 */
export async function publishReleases(engine: Engine, index: string, sourceIds: number[]): Promise<void> {
  await withPublishLock(engine, async () => {
    const served = await servedSources(engine);
    const previousAliases = await aliasHolders(
      engine,
      sourceIds.map((sourceId) => engine.names.previousAssignmentsOf(sourceId)),
    );
    const published = new Set(sourceIds);
    const shared = sourceIds.length > 1;
    const actions: object[] = [];
    const retired: string[] = [];
    for (const sourceId of sourceIds) {
      actions.push({
        add: {
          index,
          alias: engine.names.assignmentsOf(sourceId),
          ...(shared ? { filter: sourceFilter(sourceId) } : {}),
        },
      });
    }
    actions.push({ add: { index, alias: engine.names.assignments } });
    for (const [alias, holders] of previousAliases) {
      for (const holder of holders) actions.push({ remove: { index: holder, alias } });
    }
    for (const [previous, sources] of served) {
      if (previous === index) continue;
      const replaced = [...sources].filter((sourceId) => published.has(sourceId));
      if (replaced.length === 0) continue;
      const remaining = [...sources].filter((sourceId) => !published.has(sourceId)).sort((a, b) => a - b);
      for (const sourceId of replaced) {
        actions.push({ remove: { index: previous, alias: engine.names.assignmentsOf(sourceId) } });
        actions.push({
          add: { index: previous, alias: engine.names.previousAssignmentsOf(sourceId), filter: sourceFilter(sourceId) },
        });
      }
      if (remaining.length === 0) {
        actions.push({ remove: { index: previous, alias: engine.names.assignments } });
        retired.push(previous);
      } else {
        actions.push({
          add: { index: previous, alias: engine.names.assignments, filter: { terms: { sourceId: remaining } } },
        });
      }
    }
    await engine.client.indices.updateAliases({ actions } as never);
    // When each release stopped serving: once no source can roll back to it either, RELEASE_GRACE counts from then.
    for (const previous of retired) await mergeReleaseMeta(engine, previous, { retiredAt: new Date().toISOString() });
    await deleteUnaliasedReplaced(engine, [...previousAliases.values()].flat());
  });
}

/** The release-bound fields of a source's metadata: what a rollback puts back with the release. */
export type ReleaseFields = Pick<
  SourceDocument,
  'srcReleaseNumber' | 'srcReleaseDate' | 'lastUpdated' | 'UCICount' | 'retired'
>;

/** What a release index records of itself in its mapping's `_meta`. */
interface ReleaseMeta {
  /** When it stopped serving every source. */
  retiredAt?: string;
  /** Per source id, the source's release fields while this index serves (or served) it. */
  sources?: Record<string, ReleaseFields>;
}

/** The `_meta` of a release index ({} when it has none or is gone). */
export async function releaseMetaOf(engine: Engine, index: string): Promise<ReleaseMeta> {
  const mapping = await engine.client.indices.getMapping({ index }, { ignore: [404] });
  const found = Object.values(mapping ?? {})[0] as { mappings?: { _meta?: ReleaseMeta } } | undefined;
  return found?.mappings?._meta ?? {};
}

/** Merges `patch` into a release index's `_meta` (the engine replaces `_meta` whole, so it is read first). */
async function mergeReleaseMeta(engine: Engine, index: string, patch: ReleaseMeta): Promise<void> {
  const meta = await releaseMetaOf(engine, index);
  const merged = { ...meta, ...patch, sources: { ...meta.sources, ...patch.sources } };
  await engine.client.indices.putMapping({ index, _meta: merged as never });
}

/** Records the release fields of each source `index` serves (or is about to), for a rollback to it. */
export async function recordReleaseSources(
  engine: Engine,
  index: string,
  sources: Map<number, ReleaseFields>,
): Promise<void> {
  if (sources.size === 0) return;
  await mergeReleaseMeta(engine, index, {
    sources: Object.fromEntries([...sources].map(([sourceId, fields]) => [String(sourceId), fields])),
  });
}

/** The release fields of a source's metadata. */
export function releaseFieldsOf(source: SourceDocument): ReleaseFields {
  return {
    srcReleaseNumber: source.srcReleaseNumber ?? null,
    srcReleaseDate: source.srcReleaseDate ?? null,
    lastUpdated: source.lastUpdated ?? null,
    UCICount: source.UCICount,
    ...(source.retired ? { retired: true } : {}),
  };
}

/** A source's current and previous release indices (undefined where it has none). */
export async function releasesOf(engine: Engine, sourceId: number): Promise<{ current?: string; previous?: string }> {
  const holders = await aliasHolders(engine, [
    engine.names.assignmentsOf(sourceId),
    engine.names.previousAssignmentsOf(sourceId),
  ]);
  return {
    current: holders.get(engine.names.assignmentsOf(sourceId))?.[0],
    previous: holders.get(engine.names.previousAssignmentsOf(sourceId))?.[0],
  };
}

/** The source ids an index holds assignments of. */
async function sourcesHeldBy(engine: Engine, index: string): Promise<Set<number>> {
  const result = await engine.client.search({
    index,
    size: 0,
    track_total_hits: false,
    aggs: { sources: { terms: { field: 'sourceId', size: 10_000 } } },
  });
  const buckets = (result.aggregations?.sources as { buckets: { key: number }[] } | undefined)?.buckets ?? [];
  return new Set(buckets.map((bucket) => bucket.key));
}

/**
 * Serves `sourceId` from its previous release again, in one atomic alias call: the previous release
 * becomes the current one and the current one the previous one (so doing it again undoes it).
 * `expected` is what the caller found and weighed: when the aliases say otherwise now, nothing is
 * done and false is returned. Each index keeps the all-sources alias for exactly the sources it
 * serves after the swap.
 */
export async function swapWithPreviousRelease(
  engine: Engine,
  sourceId: number,
  expected: { current: string; previous: string },
): Promise<boolean> {
  let swapped = false;
  await withPublishLock(engine, async () => {
    const { current, previous } = await releasesOf(engine, sourceId);
    if (current !== expected.current || previous !== expected.previous) return;
    const served = await servedSources(engine);
    const servedAfter = (index: string, change: (sources: Set<number>) => void): number[] => {
      const sources = new Set(served.get(index) ?? []);
      change(sources);
      return [...sources].sort((a, b) => a - b);
    };
    const fromCurrent = servedAfter(current, (sources) => sources.delete(sourceId));
    const onPrevious = servedAfter(previous, (sources) => sources.add(sourceId));
    const held = await sourcesHeldBy(engine, previous);
    const sharedPrevious = [...held].some((id) => id !== sourceId);
    const actions: object[] = [
      { remove: { index: current, alias: engine.names.assignmentsOf(sourceId) } },
      { remove: { index: previous, alias: engine.names.previousAssignmentsOf(sourceId) } },
      {
        add: { index: current, alias: engine.names.previousAssignmentsOf(sourceId), filter: sourceFilter(sourceId) },
      },
      {
        add: {
          index: previous,
          alias: engine.names.assignmentsOf(sourceId),
          ...(sharedPrevious ? { filter: sourceFilter(sourceId) } : {}),
        },
      },
      fromCurrent.length === 0
        ? { remove: { index: current, alias: engine.names.assignments } }
        : { add: { index: current, alias: engine.names.assignments, filter: { terms: { sourceId: fromCurrent } } } },
      // Unfiltered when it serves every source it holds, as a freshly published release is.
      {
        add: {
          index: previous,
          alias: engine.names.assignments,
          ...([...held].every((id) => onPrevious.includes(id)) ? {} : { filter: { terms: { sourceId: onPrevious } } }),
        },
      },
    ];
    await engine.client.indices.updateAliases({ actions } as never);
    swapped = true;
    if (fromCurrent.length === 0) await mergeReleaseMeta(engine, current, { retiredAt: new Date().toISOString() });
  });
  return swapped;
}

/** The indices each alias of `aliases` points at. */
async function aliasHolders(engine: Engine, aliases: string[]): Promise<Map<string, string[]>> {
  const found = await engine.client.indices.getAlias({ name: aliases.join(',') }, { ignore: [404] });
  const holders = new Map<string, string[]>();
  for (const [index, state] of Object.entries(found ?? {})) {
    for (const alias of Object.keys((state as { aliases?: object }).aliases ?? {})) {
      if (!aliases.includes(alias)) continue;
      holders.set(alias, [...(holders.get(alias) ?? []), index]);
    }
  }
  return holders;
}

/**
 * Deletes those of `indices` that no alias points at any more (no source serves them, none can roll
 * back to them) and that stopped serving more than RELEASE_GRACE ago.
 */
async function deleteUnaliasedReplaced(engine: Engine, indices: string[]): Promise<void> {
  if (indices.length === 0) return;
  const state = await engine.client.indices.get(
    { index: [...new Set(indices)].join(','), features: ['aliases', 'mappings'] },
    { ignore: [404] },
  );
  const expired = Object.entries(state ?? {})
    .filter(([name, value]) => indices.includes(name) && pastGrace(value, engine.config.RELEASE_GRACE))
    .map(([name]) => name);
  if (expired.length > 0) await engine.client.indices.delete({ index: expired.join(',') }, { ignore: [404] });
}

type IndexState = { aliases?: object; mappings?: { _meta?: ReleaseMeta } };

/** Whether a release index serves no source, is no source's previous one, and stopped serving over `graceMs` ago. */
function pastGrace(state: unknown, graceMs: number): boolean {
  const value = state as IndexState;
  if (Object.keys(value.aliases ?? {}).length > 0) return false;
  const retiredAt = Date.parse(value.mappings?._meta?.retiredAt ?? '');
  return Number.isFinite(retiredAt) && Date.now() - retiredAt > graceMs;
}

/**
 * Deletes the replaced releases that no source can roll back to any more (no alias points at them)
 * and that stopped serving more than `graceMs` ago. A source's previous release stays as long as it
 * is one. Returns what it deleted.
 */
export async function removeExpiredPreviousReleases(engine: Engine, graceMs: number): Promise<string[]> {
  const all = await engine.client.indices.get(
    { index: `${engine.names.assignments}-*`, features: ['aliases', 'mappings'] },
    { ignore: [404] },
  );
  const expired = Object.entries(all ?? {})
    .filter(([, state]) => pastGrace(state, graceMs))
    .map(([index]) => index);
  if (expired.length > 0) await engine.client.indices.delete({ index: expired.join(',') }, { ignore: [404] });
  return expired;
}

const lockId = 'publish-lock';
/** A lock older than this was left by a killed publish (a publish holds it for well under a second). */
const staleLockMs = 60_000;

async function withPublishLock(engine: Engine, work: () => Promise<void>): Promise<void> {
  const index = engine.names.meta;
  for (;;) {
    const taken = await engine.client.create(
      { index, id: lockId, document: { kind: 'lock', started: new Date().toISOString() } },
      { ignore: [409] },
    );
    if ((taken as { result?: string }).result === 'created') break;
    const held = await engine.client.get<{ started: string }>({ index, id: lockId }, { ignore: [404] });
    if (held.found && Date.now() - Date.parse(held._source!.started) > staleLockMs) {
      await engine.client.delete(
        { index, id: lockId, if_seq_no: held._seq_no, if_primary_term: held._primary_term },
        { ignore: [404, 409] },
      );
    } else {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    await work();
  } finally {
    await engine.client.delete({ index, id: lockId }, { ignore: [404] });
  }
}

/**
 * Deletes every assignments release index that no alias points at and no running load is writing: the
 * leftovers of killed loads. Returns what it deleted.
 */
export async function removeAllLeftoverReleases(engine: Engine, running: Set<string>): Promise<string[]> {
  const all = await engine.client.indices.get(
    { index: `${engine.names.assignments}-*`, expand_wildcards: 'all', features: ['aliases', 'mappings'] },
    { ignore: [404] },
  );
  const pattern = new RegExp(`^${escape(engine.names.assignments)}-([0-9]+|dump)-[0-9]+$`);
  // A release that once served (it has stopped: retiredAt) is kept for RELEASE_GRACE (removeExpiredPreviousReleases).
  const leftovers = Object.entries(all ?? {})
    .filter(
      ([index, state]) =>
        pattern.test(index) &&
        Object.keys((state as IndexState).aliases ?? {}).length === 0 &&
        !(state as IndexState).mappings?._meta?.retiredAt &&
        !running.has(index),
    )
    .map(([index]) => index);
  if (leftovers.length > 0) await engine.client.indices.delete({ index: leftovers.join(',') });
  return leftovers;
}

function escape(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Turns periodic refresh of the compounds index off for a bulk load (on again with `resumeRefresh`). */
export async function pauseRefresh(engine: Engine, index: string): Promise<void> {
  await engine.client.indices.putSettings({ index, settings: { index: { refresh_interval: '-1' } } });
}

/** Restores the refresh interval the mapping file gives `index`, and refreshes it now. */
export async function resumeRefresh(engine: Engine, index: string, name: MappingName): Promise<void> {
  const refresh = (((mappingOf(name).settings.index ?? {}) as Record<string, unknown>).refresh_interval ??
    '1s') as string;
  await engine.client.indices.putSettings({ index, settings: { index: { refresh_interval: refresh } } });
  await engine.client.indices.refresh({ index });
}

/** Makes what was written to `index` searchable now. */
export async function refreshIndex(engine: Engine, index: string): Promise<void> {
  await engine.client.indices.refresh({ index });
}

/** Whether periodic refresh of `index` is off (a bulk load paused it). */
export async function refreshPaused(engine: Engine, index: string): Promise<boolean> {
  const settings = await engine.client.indices.getSettings(
    { index, name: 'index.refresh_interval' },
    { ignore: [404] },
  );
  const value = (
    Object.values(settings ?? {})[0] as { settings?: { index?: { refresh_interval?: string } } } | undefined
  )?.settings?.index?.refresh_interval;
  return value === '-1';
}
