/**
 * The engine's disk against its watermarks (Elasticsearch's disk-based shard allocation): past the
 * high watermark a node takes no new index, past the flood stage the engine makes every index with a
 * shard on it read-only, and lifts that block itself once the node is below the high watermark
 * again. What a load checks before it writes, and the figures a full disk's message gives.
 */
import type { Engine } from './client';
import { EngineDiskFull } from './errors';

export type Watermark = 'low' | 'high' | 'flood_stage';

export interface NodeDisk {
  node: string;
  /** The node's data path (the fullest, when it has several). */
  path: string;
  totalBytes: number;
  /** Bytes the engine may still use there (what it weighs against the watermarks). */
  freeBytes: number;
  /** The highest watermark the node is past, reckoned as the engine does. */
  past?: 'high' | 'flood_stage';
}

export interface DiskReport {
  /** Whether the watermarks are on (cluster.routing.allocation.disk.threshold_enabled). */
  enabled: boolean;
  /** Each watermark as set: `95%`, `0.95` or free bytes such as `1gb`. */
  watermarks: Record<Watermark, string>;
  /** Each data node's disk. */
  nodes: NodeDisk[];
}

/** The watermarks in force and each data node's disk, as the engine reports them now. */
export async function diskReport(engine: Engine, timeoutMs = 10_000): Promise<DiskReport> {
  const options = { requestTimeout: timeoutMs };
  const [settings, stats] = await Promise.all([
    engine.client.cluster.getSettings(
      { include_defaults: true, flat_settings: true, filter_path: '*.cluster.routing.allocation.disk.*' },
      options,
    ),
    engine.client.nodes.stats(
      { metric: 'fs', filter_path: 'nodes.*.name,nodes.*.roles,nodes.*.fs.data' } as never,
      options,
    ) as unknown as Promise<{
      nodes?: Record<string, { name: string; roles?: string[]; fs?: { data?: FsData[] } }>;
    }>,
  ]);
  const setting = (key: string): string | undefined => {
    const name = `cluster.routing.allocation.disk.${key}`;
    for (const scope of [settings.transient, settings.persistent, settings.defaults] as (
      Record<string, string> | undefined
    )[])
      if (scope?.[name] !== undefined) return String(scope[name]);
    return undefined;
  };
  const enabled = setting('threshold_enabled') !== 'false';
  const watermarks = {
    low: setting('watermark.low') ?? '85%',
    high: setting('watermark.high') ?? '90%',
    flood_stage: setting('watermark.flood_stage') ?? '95%',
  };
  const nodes: NodeDisk[] = [];
  for (const node of Object.values(stats.nodes ?? {})) {
    if (node.roles && !node.roles.some((role) => role === 'data' || role.startsWith('data_'))) continue;
    // The engine judges a node by its fullest data path.
    const fullest = (node.fs?.data ?? [])
      .filter((data) => data.total_in_bytes > 0)
      .sort((a, b) => a.available_in_bytes / a.total_in_bytes - b.available_in_bytes / b.total_in_bytes)[0];
    if (!fullest) continue;
    const disk: NodeDisk = {
      node: node.name,
      path: fullest.path,
      totalBytes: fullest.total_in_bytes,
      freeBytes: fullest.available_in_bytes,
    };
    // The free space each watermark stands for on this disk, as the engine works it out (its share of
    // the disk, capped by the watermark's max_headroom, or bytes).
    const pastOf = (threshold: number | undefined): boolean =>
      enabled && threshold !== undefined && disk.freeBytes < threshold;
    if (pastOf(fullest.flood_stage_free_space_in_bytes)) disk.past = 'flood_stage';
    else if (pastOf(fullest.high_watermark_free_space_in_bytes)) disk.past = 'high';
    nodes.push(disk);
  }
  return { enabled, watermarks, nodes };
}

interface FsData {
  path: string;
  total_in_bytes: number;
  available_in_bytes: number;
  high_watermark_free_space_in_bytes?: number;
  flood_stage_free_space_in_bytes?: number;
}

function size(bytes: number): string {
  for (const [unit, factor] of [
    ['TB', 2 ** 40],
    ['GB', 2 ** 30],
    ['MB', 2 ** 20],
    ['kB', 2 ** 10],
  ] as const)
    if (bytes >= factor) return `${(bytes / factor).toFixed(bytes >= 10 * factor ? 0 : 1)} ${unit}`;
  return `${bytes} B`;
}

/** What to free, and that the next load needs nothing else. */
function advice(report: DiskReport): string {
  return (
    "Free space on that disk (files that are not the engine's, indices of other prefixes or applications, " +
    'rejects of past loads, previous releases: see docs/operations.md#a-full-disk) or give the engine a bigger ' +
    'disk, then run the load again: the engine lifts the block itself once the disk is below its high ' +
    `watermark (${report.watermarks.high}).`
  );
}

/**
 * The message of a full disk, with the figures of its fullest node: past which watermark, its data
 * path, how full; then `consequence` (what the failed operation left), and what to free.
 */
export function fullDiskMessage(report: DiskReport, consequence: string): string {
  const node =
    report.nodes.find((disk) => disk.past === 'flood_stage') ??
    report.nodes.find((disk) => disk.past === 'high') ??
    [...report.nodes].sort((a, b) => a.freeBytes / a.totalBytes - b.freeBytes / b.totalBytes)[0];
  const figures = node
    ? `${node.path} on node ${node.node} is ${(100 - (100 * node.freeBytes) / node.totalBytes).toFixed(1)} % full ` +
      `(${size(node.freeBytes)} free of ${size(node.totalBytes)})`
    : 'no data node reported its disk';
  const state =
    node?.past === 'high'
      ? `Elasticsearch's disk is past its high watermark (${report.watermarks.high}): ${figures}, ` +
        'and the engine places no new index there.'
      : node?.past === 'flood_stage' || !node
        ? `Elasticsearch's disk is past its flood-stage watermark (${report.watermarks.flood_stage}): ${figures}, ` +
          'and the engine has made its indices read-only.'
        : `Elasticsearch's indices are read-only since its disk passed the flood-stage watermark ` +
          `(${report.watermarks.flood_stage}); ${figures} now, and the engine lifts the block when it next ` +
          'reads the disk (cluster.info.update.interval, 30 s by default).';
  return `${state} ${consequence} ${advice(report)}`;
}

/** Gives `error` the disk's figures (once); keeps its generic message when the engine cannot tell them. */
export async function explainDiskFull(engine: Engine, error: EngineDiskFull, consequence: string): Promise<void> {
  if (error.explained) return;
  try {
    error.message = fullDiskMessage(await diskReport(engine), consequence);
  } catch {
    error.message = `${error.message}. ${consequence}`;
  }
  error.explained = true;
}

/** Whether any index of this prefix carries the read-only block of a flood stage. */
async function blockedIndices(engine: Engine): Promise<string[]> {
  const settings = await engine.client.indices.getSettings(
    {
      index: `${engine.names.prefix}-*`,
      name: 'index.blocks.read_only_allow_delete',
      flat_settings: true,
      expand_wildcards: 'all',
    },
    { ignore: [404] },
  );
  return Object.entries(settings ?? {})
    .filter(([, state]) => String(state.settings?.['index.blocks.read_only_allow_delete']) === 'true')
    .map(([index]) => index);
}

/**
 * Before a load writes: throws EngineDiskFull (explained with `consequence`) when a data node is
 * past its high watermark (a new release index would not be placed) or its flood stage (read-only).
 * When the disk is below them but indices of this prefix still carry the block of an earlier flood
 * stage (space was just freed), waits for the engine to lift it, which it does when it next reads
 * the disk, up to `waitMs`. Engines that do not report their disk are not checked.
 */
export async function ensureDiskRoom(
  engine: Engine,
  consequence: string,
  options: { waitMs?: number; onWait?: (message: string) => void } = {},
): Promise<void> {
  let report: DiskReport;
  try {
    report = await diskReport(engine);
  } catch {
    return;
  }
  if (!report.enabled) return;
  if (report.nodes.some((node) => node.past)) {
    const error = new EngineDiskFull();
    error.message = fullDiskMessage(report, consequence);
    error.explained = true;
    throw error;
  }
  const deadline = Date.now() + (options.waitMs ?? 90_000);
  let blocked = await blockedIndices(engine);
  if (blocked.length > 0)
    options.onWait?.(
      `waiting for Elasticsearch to lift the read-only block of a full disk from ${blocked.length} ` +
        `index(es) of ${engine.names.prefix} (space has been freed)`,
    );
  while (blocked.length > 0) {
    if (Date.now() > deadline) {
      const error = new EngineDiskFull();
      error.message = fullDiskMessage(await diskReport(engine), consequence);
      error.explained = true;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    blocked = await blockedIndices(engine);
  }
}
