/**
 * The steps that bring the indices of one layout to the next, in order: `npm run migrate` runs
 * those from the layout recorded in the meta index (layout.ts) to the last one here, recording each
 * as it ends. The current layout is the `to` of the last step.
 *
 * Every change to the indices (a mapping, an index or alias name, a setting the code relies on)
 * adds a step at the end, with a test that builds the previous layout and migrates it while the API
 * serves (test/migrate.test.ts). A step
 * - works inside the engine: aliases, `_clone`/`_split`, mappings that only add fields, copies by
 *   scan and bulk (the engine distribution chemxref runs has no reindex); nothing is read from files;
 * - keeps every answer the same while it runs: readers see the old layout until one atomic alias
 *   call shows them the new one, and an API of this version reads both (layout.ts: `releaseNames`);
 * - is safe to run twice and to kill and run again: each part checks what is already done.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { estypes } from '@elastic/elasticsearch';
import { mappingOf, type Engine } from './client';
import { ensureBaseIndices } from './schema';

export interface MigrationStep {
  from: number;
  to: number;
  /** What it changes, in one line (the summary of `npm run migrate` and docs/operations.md). */
  what: string;
  /** Does it; `note` tells the operator each part as it goes. Safe to run again after a kill at any point. */
  run: (engine: Engine, note: (message: string) => void) => Promise<void>;
}

/** How often a serving API checks the layout (layout.ts), so a migration knows how long readers take to follow. */
export const layoutCheckEveryMs = 2_000;

/**
 * 1 → 2: release indices and their aliases are named `{prefix}-assignments*` instead of
 * `{prefix}-xrefs*`; the meta index gains the fields of load records and the layout, and the
 * fingerprints and changes indices are created when missing (additive).
 *
 * An index cannot be renamed: each `{prefix}-xrefs-{tag}-{stamp}` is cloned (its segments
 * hard-linked, nothing indexed again) to `{prefix}-assignments-{tag}-{stamp}`, then one alias call
 * moves every alias to the clones and adds its new name beside it, with the same filter. An API of
 * this version then reads the new names (it checks every few seconds); once it had time to, the
 * old names and the old indices go.
 */
const xrefsToAssignments: MigrationStep = {
  from: 1,
  to: 2,
  what: 'release indices and aliases {prefix}-xrefs* renamed {prefix}-assignments* (cloned, not copied)',
  run: async (engine, note) => {
    const prefix = engine.names.prefix;
    const renamed = (name: string): string =>
      name.startsWith(`${prefix}-previous-xrefs-`)
        ? `${prefix}-previous-assignments-${name.slice(`${prefix}-previous-xrefs-`.length)}`
        : `${prefix}-assignments${name.slice(`${prefix}-xrefs`.length)}`;
    await ensureBaseIndices(engine);
    const releases = await releaseIndicesNamed(engine, `${prefix}-xrefs`);
    for (const [index, state] of releases) {
      const clone = renamed(index);
      if (!(await engine.client.indices.exists({ index: clone }))) {
        await cloneIndex(engine, index, clone, state.replicas);
        note(`cloned ${index} to ${clone}`);
      }
      await engine.client.cluster.health({ index: clone, wait_for_status: 'yellow', timeout: '60s' });
      const [before, after] = await Promise.all(
        [index, clone].map(async (name) => (await engine.client.count({ index: name })).count),
      );
      if (before !== after)
        throw new Error(`${clone} holds ${after} assignments where ${index} holds ${before}: nothing was moved`);
    }
    const actions: object[] = [];
    for (const [index, state] of releases) {
      for (const [alias, definition] of Object.entries(state.aliases)) {
        const filter = definition.filter ? { filter: definition.filter } : {};
        actions.push({ remove: { index, alias } });
        actions.push({ add: { index: renamed(index), alias, ...filter } });
        actions.push({ add: { index: renamed(index), alias: renamed(alias), ...filter } });
      }
    }
    if (actions.length > 0) {
      await engine.client.indices.updateAliases({ actions } as never);
      note(`moved ${actions.length / 3} aliases to the clones, with their new names beside them`);
    }
    const oldAliases = await engine.client.indices.getAlias(
      { name: `${prefix}-xrefs*,${prefix}-previous-xrefs-*` },
      { ignore: [404] },
    );
    const removals = Object.entries(oldAliases ?? {}).flatMap(([index, state]) =>
      Object.keys((state as { aliases?: object }).aliases ?? {}).map((alias) => ({ remove: { index, alias } })),
    );
    if (removals.length > 0) {
      // An API of this version checks the layout every few seconds, and then reads the new names.
      note('waiting for the APIs to read the new names');
      await sleep(2 * layoutCheckEveryMs + 1_000);
      await engine.client.indices.updateAliases({ actions: removals } as never);
      note(`removed the ${removals.length} aliases of the old names`);
    }
    if (releases.size > 0) {
      await engine.client.indices.delete({ index: [...releases.keys()].join(',') }, { ignore: [404] });
      note(`deleted ${[...releases.keys()].join(', ')}`);
    }
  },
};

/**
 * 2 → 3: the sources index gains `idsAreNames`, the mark of a source whose compound ids are names
 * (searched by name). A mapping that only adds a field: existing sources stay unmarked until a source
 * table marks them, and an API of this version reads layout 2 as a deployment without sources of names.
 */
const sourcesOfNames: MigrationStep = {
  from: 2,
  to: 3,
  what: 'the sources index gains idsAreNames (sources whose compound ids are names)',
  run: async (engine, note) => {
    const { idsAreNames } = mappingOf('sources').mappings.properties as Record<string, estypes.MappingProperty>;
    await engine.client.indices.putMapping({ index: engine.names.sources, properties: { idsAreNames } });
    note(`${engine.names.sources} has idsAreNames`);
  },
};

/** Every step, in order; the current layout is the last one's `to`. Add a step at the end for each change. */
export const migrations: MigrationStep[] = [xrefsToAssignments, sourcesOfNames];

interface ReleaseState {
  aliases: Record<string, { filter?: object }>;
  replicas: number;
}

/** The release indices `{stem}-{tag}-{stamp}` (tag a source id or `dump`), with their aliases and replicas. */
async function releaseIndicesNamed(engine: Engine, stem: string): Promise<Map<string, ReleaseState>> {
  const found = await engine.client.indices.get(
    { index: `${stem}-*`, features: ['aliases', 'settings'], expand_wildcards: 'all' },
    { ignore: [404] },
  );
  const pattern = new RegExp(`^${stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-([0-9]+|dump)-[0-9]+$`);
  const releases = new Map<string, ReleaseState>();
  for (const [index, state] of Object.entries(found ?? {})) {
    if (!pattern.test(index)) continue;
    const value = state as {
      aliases?: Record<string, { filter?: object }>;
      settings?: { index?: { number_of_replicas?: string } };
    };
    releases.set(index, {
      aliases: value.aliases ?? {},
      replicas: Number(value.settings?.index?.number_of_replicas ?? 0),
    });
  }
  return releases;
}

/**
 * Clones `source` to `target` with `replicas` (the engine clones a write-blocked index only; the
 * block is lifted again whatever happens), and waits for its primaries.
 */
async function cloneIndex(engine: Engine, source: string, target: string, replicas: number): Promise<void> {
  await engine.client.indices.addBlock({ index: source, block: 'write' });
  try {
    await engine.client.indices.clone({
      index: source,
      target,
      settings: { index: { 'blocks.write': false, number_of_replicas: replicas } },
      wait_for_active_shards: 1,
    });
  } finally {
    await engine.client.indices.putSettings({ index: source, settings: { index: { 'blocks.write': null } } });
  }
}
