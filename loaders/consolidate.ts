/**
 * `npm run load -- consolidate`: puts every source's current release back into one index.
 *
 * Each source reload publishes a release index of its own, and a lookup by key or UCI searches
 * every shard of every release behind the all-sources alias: after 40 sources were reloaded one by
 * one, 40 shards a lookup. Consolidation builds one fresh release index holding what the
 * all-sources alias serves (its filters show an older index only for the sources it still serves),
 * checks it source by source against what was served, merges it into one segment and publishes it
 * for every source in one atomic alias swap, as a dump's release is; then it merges the structures
 * index into one segment too. The replaced indices become previous releases (kept for
 * RELEASE_GRACE). The sources' metadata (counts, dates, retired) is left as it is: the assignments
 * are the same ones.
 *
 * The fresh index starts as a clone of the release that serves the most assignments (its segments
 * hard-linked: nothing indexed again), without the assignments of sources it no longer serves; only
 * the other releases' assignments are copied into it, each release read by several sliced scans at
 * once. Releases are never written once published, so what each one serves is fixed while it is read.
 */
import {
  cloneReleaseIndex,
  mergeIntoOneSegment,
  publishReleases,
  recordReleaseSources,
  refreshIndex,
  releaseFieldsOf,
  releaseShards,
  sealReleaseIndex,
  servedSources,
  shardsOf,
} from '../src/engine/schema';
import { bulkWrite, type BulkItem } from '../src/engine/bulk';
import { allSources } from '../src/engine/sources';
import { assignmentsPerSource, closeScan, openScan, scanAssignments } from '../src/engine/assignments';
import type { LoadRun } from './run';

/**
 * Scans of one release copied at once. Each slice is a range of the shard's documents, so two
 * readers keep the engine's two write threads busy where one scan and its writes took turns.
 */
const slicesPerRelease = 2;

export async function consolidateReleases(run: LoadRun): Promise<void> {
  const { engine } = run;
  const servedBy = await servedSources(engine);
  run.details.sources = [...servedBy.values()].reduce((sum, sources) => sum + sources.size, 0);
  run.details.releaseIndicesBefore = servedBy.size;
  if (servedBy.size <= 1) {
    run.details.releaseIndicesAfter = servedBy.size;
    run.details.note =
      servedBy.size === 0
        ? 'no source has a published release'
        : 'every source is already served from one release index';
    return;
  }
  const served = await assignmentsPerSource(engine, engine.names.assignments);
  const total = [...served.values()].reduce((sum, figures) => sum + figures.current + figures.obsolete, 0);
  if (run.dryRun) {
    run.rowsRead = total;
    run.rowsLoaded = total;
    return;
  }
  const ofServed = (index: string): object => ({ terms: { sourceId: [...servedBy.get(index)!] } });
  // Per release, what it serves and what it holds besides (of sources since reloaded or retired):
  // the base is the release whose clone saves the most writes, its served assignments not copied
  // less the others removed.
  const sizes = new Map<string, number>();
  const gains = new Map<string, number>();
  for (const index of servedBy.keys()) {
    const size = (await engine.client.count({ index, query: ofServed(index) as never })).count;
    sizes.set(index, size);
    gains.set(index, 2 * size - (await engine.client.count({ index })).count);
  }
  const [base] = [...gains].sort(([, a], [, b]) => b - a)[0];

  // The clone keeps its release's shards: it is the base only when that is how many the whole needs.
  let index: string | undefined;
  if (gains.get(base)! > 0 && (await shardsOf(engine, base)) === releaseShards(engine, total)) {
    try {
      index = await run.createIndex('dump', total, (target) => cloneReleaseIndex(engine, base, target));
    } catch (error) {
      run.note(`${base} could not be cloned (${(error as Error).message}): every assignment is copied`);
    }
  }
  const copied = [...servedBy.keys()].filter((release) => index === undefined || release !== base);
  if (index === undefined) index = await run.createIndex('dump', total);
  else {
    // The engine has no delete by query here (its reindex module is not part of the distribution we run).
    for await (const page of scanAssignments(engine, index, { query: { bool: { must_not: [ofServed(base)] } } })) {
      const result = await engine.client.bulk({
        operations: page.map(({ id }) => ({ delete: { _index: index, _id: id } })),
      });
      if (result.errors) throw new Error(`the engine refused to remove what ${base} no longer serves from its clone`);
      run.details.removedFromClone = Number(run.details.removedFromClone ?? 0) + page.length;
    }
  }
  const target = index;
  if (!copied.includes(base)) {
    run.rowsRead += sizes.get(base)!;
    run.rowsLoaded += sizes.get(base)!;
    run.details.cloned = base;
  }

  const parts = copied.flatMap((release) => Array.from({ length: slicesPerRelease }, (_, id) => ({ release, id })));
  // The slices of one release share its point in time, opened when its first slice starts and closed
  // when its last one ends.
  const scans = new Map<string, { pit: Promise<string>; left: number }>();
  let refused: string | undefined;
  let failed = 0;
  async function* copies(part: (typeof parts)[number]): AsyncGenerator<BulkItem<undefined>> {
    const scan = scans.get(part.release) ?? { pit: openScan(engine, part.release), left: slicesPerRelease };
    scans.set(part.release, scan);
    const slice = { id: part.id, max: slicesPerRelease, pit: await scan.pit };
    try {
      for await (const page of scanAssignments(engine, part.release, { query: ofServed(part.release), slice })) {
        for (const { id, assignment } of page)
          yield { index: target, id, op: 'create', document: assignment, context: undefined };
        run.rowsRead += page.length;
        await run.tick();
      }
    } finally {
      scan.left -= 1;
      if (scan.left === 0) await closeScan(engine, slice.pit);
    }
  }
  const copier = async (): Promise<void> => {
    for (let part = parts.shift(); part; part = parts.shift()) {
      const result = await bulkWrite(engine, copies(part), (failure) => {
        refused ??= `${failure.id}: ${failure.reason}`;
      });
      run.rowsLoaded += result.written;
      failed += result.failed;
    }
  };
  await Promise.all(Array.from({ length: slicesPerRelease }, copier));
  if (failed > 0)
    throw new Error(
      `the engine refused ${failed} assignments of the consolidated index (the first, ${refused}): nothing published`,
    );
  await refreshIndex(engine, index);
  const held = await assignmentsPerSource(engine, index);
  for (const sourceId of new Set([...served.keys(), ...held.keys()])) {
    const before = served.get(sourceId) ?? { current: 0, obsolete: 0 };
    const after = held.get(sourceId) ?? { current: 0, obsolete: 0 };
    if (before.current !== after.current || before.obsolete !== after.obsolete) {
      throw new Error(
        `the consolidated index holds ${after.current} current and ` +
          `${after.obsolete} obsolete assignments of source ${sourceId}, where ` +
          `${before.current} and ${before.obsolete} were served: nothing published`,
      );
    }
  }
  await mergeIntoOneSegment(engine, index);
  const underReplicated = await sealReleaseIndex(engine, index);
  if (underReplicated) run.note(underReplicated);
  const sourceIds = [...servedBy.values()].flatMap((sources) => [...sources]).sort((a, b) => a - b);
  // The same assignments, so the same release fields: a rollback to the index it replaces changes none.
  const metadata = new Map((await allSources(engine)).map((source) => [source.sourceID, releaseFieldsOf(source)]));
  await recordReleaseSources(
    engine,
    index,
    new Map(sourceIds.filter((id) => metadata.has(id)).map((id) => [id, metadata.get(id)!])),
  );
  await publishReleases(engine, index, sourceIds);
  run.details.releaseIndicesAfter = 1;
  // The structures index too: every lookup reads it, and one segment answered key lookups 23 % faster
  // at 10M structures (BENCHMARKS.md). Loads of structures may go on writing new segments beside it.
  await mergeIntoOneSegment(engine, engine.names.compounds);
  // And the fingerprints: a similarity search seeks its terms in every segment (one answered 2.7-3.3
  // times faster than 21 on the 500k set).
  if (await engine.client.indices.exists({ index: engine.names.fingerprints }))
    await mergeIntoOneSegment(engine, engine.names.fingerprints);
}
