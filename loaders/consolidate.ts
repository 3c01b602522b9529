/**
 * `npm run load -- consolidate`: puts every source's current release back into one index.
 *
 * Each source reload publishes a release index of its own, and a lookup by key or UCI searches
 * every shard of every release behind the all-sources alias: after 40 sources were reloaded one by
 * one, 40 shards a lookup. Consolidation copies what the all-sources alias serves (its filters show
 * an older index only for the sources it still serves), read from one point in time, into one fresh
 * release index, checks it source by source against what was served, merges it into one segment and
 * publishes it for every source in one atomic alias swap, as a dump's release is. The replaced
 * indices become previous releases (kept for RELEASE_GRACE). The sources' metadata (counts, dates,
 * retired) is left as it is: the assignments are the same ones.
 */
import {
  currentReleaseIndices,
  mergeIntoOneSegment,
  publishReleases,
  refreshIndex,
  sealReleaseIndex,
} from '../src/engine/schema';
import { bulkWrite, type BulkItem } from '../src/engine/bulk';
import { assignmentsPerSource, scanAssignments } from '../src/engine/assignments';
import type { LoadRun } from './run';

export async function consolidateReleases(run: LoadRun): Promise<void> {
  const { engine } = run;
  const releases = await currentReleaseIndices(engine);
  const indices = new Set(releases.values());
  run.details.sources = releases.size;
  run.details.releaseIndicesBefore = indices.size;
  if (indices.size <= 1) {
    run.details.releaseIndicesAfter = indices.size;
    run.details.note =
      indices.size === 0
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
  const index = await run.createIndex('dump', total);
  async function* copies(): AsyncGenerator<BulkItem<undefined>> {
    for await (const page of scanAssignments(engine, engine.names.assignments)) {
      for (const { id, assignment } of page)
        yield { index, id, op: 'create', document: assignment, context: undefined };
      run.rowsRead += page.length;
      await run.tick();
    }
  }
  let refused: string | undefined;
  const result = await bulkWrite(engine, copies(), (failure) => {
    refused ??= `${failure.id}: ${failure.reason}`;
  });
  run.rowsLoaded = result.written;
  if (result.failed > 0)
    throw new Error(
      `the engine refused ${result.failed} assignments of the consolidated ` +
        `index (the first, ${refused}): nothing published`,
    );
  await refreshIndex(engine, index);
  const copied = await assignmentsPerSource(engine, index);
  for (const sourceId of new Set([...served.keys(), ...copied.keys()])) {
    const before = served.get(sourceId) ?? { current: 0, obsolete: 0 };
    const after = copied.get(sourceId) ?? { current: 0, obsolete: 0 };
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
  await publishReleases(
    engine,
    index,
    [...releases.keys()].sort((a, b) => a - b),
  );
  run.details.releaseIndicesAfter = 1;
}
