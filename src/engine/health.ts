/** The cluster as chemxref sees it: health, nodes, disks, and the shards and replicas behind each alias. */
import type { Engine } from './client';
import { diskReport, type DiskReport } from './disk';

export interface AliasLayout {
  /** The physical index behind the alias (several for the all-sources alias). */
  indices: string[];
  shards: number;
  replicas: number;
}

export interface ClusterReport {
  /** green: every copy placed; yellow: a replica is missing; red: a primary is missing. */
  status: 'green' | 'yellow' | 'red';
  nodes: number;
  dataNodes: number;
  unassignedShards: number;
  /** Each alias and base index of this prefix, with its layout. */
  indices: Record<string, AliasLayout>;
  /** The watermarks and each data node's disk: past the flood stage the engine refuses every write. */
  disk: DiskReport;
}

/**
 * Reads the cluster's health and the layout of every index and alias under the engine's prefix
 * (`timeoutMs` for each request: a health check must answer while the engine does not).
 */
export async function clusterReport(engine: Engine, timeoutMs = 2_000): Promise<ClusterReport> {
  // The client's own retries stay: on a cluster they are what moves a request off a dead node.
  const options = { requestTimeout: timeoutMs };
  const prefix = engine.names.prefix;
  const [health, settings, aliases, disk] = await Promise.all([
    engine.client.cluster.health({}, options),
    engine.client.indices.getSettings(
      { index: `${prefix}-*`, name: ['index.number_of_shards', 'index.number_of_replicas'], flat_settings: true },
      { ...options, ignore: [404] },
    ),
    engine.client.indices.getAlias({ index: `${prefix}-*` }, { ...options, ignore: [404] }),
    diskReport(engine, timeoutMs),
  ]);
  const layout = new Map<string, { shards: number; replicas: number }>();
  for (const [index, state] of Object.entries(settings ?? {})) {
    const flat = (state as { settings?: Record<string, string> }).settings ?? {};
    if (flat['index.number_of_shards'] === undefined) continue;
    layout.set(index, {
      shards: Number(flat['index.number_of_shards']),
      replicas: Number(flat['index.number_of_replicas'] ?? 0),
    });
  }
  const indices: Record<string, AliasLayout> = {};
  const add = (name: string, index: string): void => {
    const own = layout.get(index);
    if (!own) return;
    const entry = (indices[name] ??= { indices: [], shards: 0, replicas: own.replicas });
    entry.indices.push(index);
    entry.shards += own.shards;
    entry.replicas = Math.min(entry.replicas, own.replicas);
  };
  for (const name of [engine.names.compounds, engine.names.fingerprints, engine.names.sources, engine.names.meta])
    add(name, name);
  for (const [index, state] of Object.entries(aliases ?? {})) {
    for (const alias of Object.keys((state as { aliases?: object }).aliases ?? {})) add(alias, index);
  }
  return {
    status: health.status.toLowerCase() as ClusterReport['status'],
    nodes: health.number_of_nodes,
    dataNodes: health.number_of_data_nodes,
    unassignedShards: health.unassigned_shards,
    indices: Object.fromEntries(Object.entries(indices).sort(([a], [b]) => a.localeCompare(b))),
    disk,
  };
}

/** The indices of the cluster that are neither chemxref's (under its prefix) nor the engine's own (`.`). */
export async function indicesOfOthers(engine: Engine): Promise<string[]> {
  const rows = (await engine.client.cat.indices({ format: 'json', h: 'index' })) as unknown as { index: string }[];
  return rows
    .map((row) => row.index)
    .filter((index) => !index.startsWith('.') && !index.startsWith(`${engine.names.prefix}-`))
    .sort();
}
