/**
 * Indices and aliases: the base indices, one physical index per source release behind two aliases
 * (`{prefix}-xrefs-{sourceId}` and `{prefix}-xrefs`), and the atomic swap that publishes a release.
 */
import type { Engine, MappingName } from './client';
import { mappingOf } from './client';

const baseIndices: MappingName[] = ['compounds', 'sources', 'meta'];

/** Creates the compounds, sources and meta indices when missing (idempotent, safe to race). */
export async function ensureBaseIndices(engine: Engine): Promise<void> {
  for (const name of baseIndices) {
    const index = engine.names[name];
    if (await engine.client.indices.exists({ index })) continue;
    await engine.client.indices.create({ index, ...mappingOf(name) }, { ignore: [400] }).catch((error) => {
      if (!/resource_already_exists_exception/.test(String(error))) throw error;
    });
  }
  await engine.client.cluster.health({ index: baseIndices.map((n) => engine.names[n]), wait_for_status: 'yellow', timeout: '30s' });
}

/** Creates a fresh, unaliased release index for one source, with refresh off while it is written. */
export async function createReleaseIndex(engine: Engine, sourceId: number): Promise<string> {
  const index = engine.names.xrefsRelease(sourceId);
  const { settings, mappings } = mappingOf('xrefs');
  const indexSettings = (settings.index ?? {}) as Record<string, unknown>;
  await engine.client.indices.create({ index, mappings, settings: { index: { ...indexSettings, refresh_interval: '-1' } } });
  return index;
}

/** Restores the refresh interval of a written release index and makes its documents searchable. */
export async function sealReleaseIndex(engine: Engine, index: string): Promise<void> {
  await resumeRefresh(engine, index, 'xrefs');
}

/** The physical index behind a source's alias, if the source has a published release. */
export async function currentReleaseIndex(engine: Engine, sourceId: number): Promise<string | undefined> {
  const aliases = await engine.client.indices.getAlias({ name: engine.names.xrefsOf(sourceId) }, { ignore: [404] });
  const indices = Object.keys(aliases ?? {}).filter((key) => key !== 'error' && key !== 'status');
  return indices[0];
}

/** Every source's current release index, resolved once (an export reads these, not the moving aliases). */
export async function currentReleaseIndices(engine: Engine): Promise<Map<number, string>> {
  const aliases = await engine.client.indices.getAlias({ name: engine.names.xrefs }, { ignore: [404] });
  const releases = new Map<number, string>();
  const pattern = new RegExp(`^${engine.names.prefix.replace(/[.]/g, '\\.')}-xrefs-([0-9]+)-[0-9]+$`);
  for (const index of Object.keys(aliases ?? {})) {
    const match = pattern.exec(index);
    if (match) releases.set(Number(match[1]), index);
  }
  return releases;
}

/**
 * Publishes `index` as the source's release in one atomic alias call: readers see the old release
 * until this call and the new one after, never a mix. The old index is deleted afterwards.
 */
export async function publishRelease(engine: Engine, sourceId: number, index: string): Promise<void> {
  const previous = await currentReleaseIndex(engine, sourceId);
  const actions: object[] = [
    { add: { index, alias: engine.names.xrefsOf(sourceId) } },
    { add: { index, alias: engine.names.xrefs } },
  ];
  if (previous && previous !== index) actions.unshift({ remove_index: { index: previous } });
  await engine.client.indices.updateAliases({ actions } as never);
}

/**
 * Deletes every xrefs release index that no alias points at and no running load is writing: the
 * leftovers of killed loads. Returns what it deleted.
 */
export async function removeAllLeftoverReleases(engine: Engine, running: Set<string>): Promise<string[]> {
  const all = await engine.client.indices.get({ index: `${engine.names.prefix}-xrefs-*`, expand_wildcards: 'all', features: ['aliases'] }, { ignore: [404] });
  const pattern = new RegExp(`^${engine.names.prefix.replace(/[.]/g, '\\.')}-xrefs-[0-9]+-[0-9]+$`);
  const leftovers = Object.entries(all ?? {})
    .filter(([index, state]) => pattern.test(index) && Object.keys((state as { aliases?: object }).aliases ?? {}).length === 0 && !running.has(index))
    .map(([index]) => index);
  if (leftovers.length > 0) await engine.client.indices.delete({ index: leftovers.join(',') });
  return leftovers;
}

/** Turns periodic refresh of the compounds index off for a bulk load (on again with `resumeRefresh`). */
export async function pauseRefresh(engine: Engine, index: string): Promise<void> {
  await engine.client.indices.putSettings({ index, settings: { index: { refresh_interval: '-1' } } });
}

/** Restores the refresh interval the mapping file gives `index`, and refreshes it now. */
export async function resumeRefresh(engine: Engine, index: string, name: MappingName): Promise<void> {
  const refresh = (((mappingOf(name).settings.index ?? {}) as Record<string, unknown>).refresh_interval ?? '1s') as string;
  await engine.client.indices.putSettings({ index, settings: { index: { refresh_interval: refresh } } });
  await engine.client.indices.refresh({ index });
}

/** Makes what was written to `index` searchable now. */
export async function refreshIndex(engine: Engine, index: string): Promise<void> {
  await engine.client.indices.refresh({ index });
}
