/**
 * `npm run load -- rollback <sourceId>`: serves a source's previous release again.
 *
 * Every publish keeps the release a source served before behind its previous-release alias, and
 * every release index records its sources' release fields (number, date, last update, UCI count,
 * retired) in its `_meta`. A rollback records what it changes (the reverse of what the undone load
 * changed, compared id by id as a load does), then swaps the two releases in one atomic alias call
 * and puts the restored release's fields back into the source's metadata. The release it undoes
 * becomes the previous one: a second rollback undoes the first.
 *
 * The alias swap is the point of no return. A rollback killed before it did nothing (the next load
 * or `doctor` marks it failed and deletes its changes); one killed after it is finished by the
 * next load's sweep or `doctor` (`finishInterruptedRollback`), and the rollback run again then
 * reports that one instead of rolling back a second time.
 */
import { scanSourceAssignments } from '../src/engine/assignments';
import type { Engine } from '../src/engine/client';
import type { LoadRecord, SourceDocument } from '../src/engine/documents';
import { refreshChanges } from '../src/engine/changes';
import { saveLoadRecord } from '../src/engine/loads';
import {
  recordReleaseSources,
  releaseFieldsOf,
  releaseMetaOf,
  releasesOf,
  swapWithPreviousRelease,
  type ReleaseFields,
} from '../src/engine/schema';
import { countCurrentUcis, putSource, sourceById } from '../src/engine/sources';
import { ChangeRecorder } from './changes';
import type { LoadRun } from './run';

/** A rollback that cannot be done: the source is unknown or keeps no previous release. */
export class RollbackRefused extends Error {}

/** The current and previous release of `sourceId`, or RollbackRefused saying why there is none to go back to. */
export async function releasesToSwap(
  engine: Engine,
  sourceId: number,
): Promise<{ source: SourceDocument; current: string; previous: string }> {
  const source = await sourceById(engine, sourceId).catch(() => undefined);
  if (!source) throw new RollbackRefused(`source ${sourceId} is not known`);
  const { current, previous } = await releasesOf(engine, sourceId);
  if (!current) throw new RollbackRefused(`source ${sourceId} has no published release`);
  if (!previous || previous === current)
    throw new RollbackRefused(
      `source ${sourceId} keeps no previous release to roll back to (${current} is the only one it has served ` +
        'since it was loaded, or since the last consolidate)',
    );
  return { source, current, previous };
}

/**
 * The release fields `index` recorded for `sourceId` when it served it. A release published by a
 * version that did not record them keeps the source's descriptive fields and gets its UCI count
 * counted in the engine, through `alias` (the one that points at `index` for this source), with a note.
 */
async function recordedFields(
  engine: Engine,
  index: string,
  sourceId: number,
  alias: string,
): Promise<{ fields: ReleaseFields | undefined; UCICount: number }> {
  const fields = (await releaseMetaOf(engine, index)).sources?.[String(sourceId)];
  const counted = async (): Promise<number> => Number((await countCurrentUcis(engine, alias)).get(sourceId) ?? 0);
  return { fields, UCICount: fields?.UCICount ?? (await counted()) };
}

/** The source's metadata with the release fields `fields` (or only `UCICount`, when none were recorded). */
function withFields(source: SourceDocument, fields: ReleaseFields | undefined, UCICount: number): SourceDocument {
  const restored: SourceDocument = { ...source, UCICount };
  if (!fields) return restored;
  delete restored.retired;
  return { ...restored, ...fields, UCICount };
}

/** Rolls `sourceId` back to its previous release (see the module's comment); a dry run says what would change. */
export async function rollbackSource(run: LoadRun, sourceId: number): Promise<void> {
  const { engine } = run;
  const { source, current, previous } = await releasesToSwap(engine, sourceId);
  const { fields, UCICount } = await recordedFields(
    engine,
    previous,
    sourceId,
    engine.names.previousAssignmentsOf(sourceId),
  );
  const restored = withFields(source, fields, UCICount);
  run.details.from = { index: current, release: source.srcReleaseNumber ?? null, UCICount: source.UCICount };
  run.details.to = { index: previous, release: restored.srcReleaseNumber ?? null, UCICount: restored.UCICount };
  if (!fields)
    run.details.note =
      `${previous} was published by a version that did not record its release fields: the source keeps its ` +
      'release number and dates, and its UCI count is counted';
  if (restored.srcReleaseNumber)
    run.release = { number: restored.srcReleaseNumber, date: restored.srcReleaseDate ?? run.started.toISOString() };
  if (!run.dryRun) {
    // The record names the release it serves again: the sweep finishes a rollback killed after its swap by it.
    await run.recordIndex(previous);
    // The release undone keeps what the source says of it now, for a rollback back to it.
    await recordReleaseSources(engine, current, new Map([[sourceId, releaseFieldsOf(source)]]));
  }

  // What changes, as a load records it: the previous release's current rows against the current
  // release, then each page of the current release against the previous one.
  const changes = new ChangeRecorder(run);
  for await (const page of scanSourceAssignments(engine, previous, sourceId)) {
    const rows = page.filter((assignment) => assignment.assignment === 1);
    run.rowsRead += page.length;
    run.rowsLoaded += rows.length;
    await changes.newRows(sourceId, current, rows);
    await run.tick();
  }
  for await (const page of scanSourceAssignments(engine, current, sourceId)) {
    await changes.comparePage(sourceId, current, previous, page);
    await run.tick();
  }
  await changes.finish();
  if (run.dryRun) return;
  // The record says the changes are complete before the swap: a sweep then finishes the rollback, not deletes them.
  await run.checkpoint();

  if (!(await swapWithPreviousRelease(engine, sourceId, { current, previous })))
    throw new Error(`the releases of source ${sourceId} changed while it was rolled back: nothing was swapped`);
  run.served = true;
  await putSource(engine, restored);
  run.details.UCICount = restored.UCICount;
}

/**
 * Finishes a rollback killed after its alias swap (its record names the release it serves again,
 * and the source's alias points there): puts the restored release's fields into the source's
 * metadata and marks it done, keeping the changes it recorded. Returns whether it did.
 */
export async function finishInterruptedRollback(engine: Engine, record: LoadRecord, why: string): Promise<boolean> {
  const sourceId = record.sourceId;
  if (record.command !== 'rollback' || !sourceId || !record.index || !record.changesRecorded) return false;
  const { current } = await releasesOf(engine, sourceId);
  if (current !== record.index) return false;
  const source = await sourceById(engine, sourceId);
  if (!source) return false;
  const { fields, UCICount } = await recordedFields(engine, current, sourceId, engine.names.assignmentsOf(sourceId));
  await putSource(engine, withFields(source, fields, UCICount));
  await refreshChanges(engine);
  const ended = new Date().toISOString();
  await saveLoadRecord(engine, {
    ...record,
    status: 'done',
    ended,
    heartbeat: ended,
    seconds: Math.round((Date.parse(ended) - Date.parse(record.started)) / 10) / 100,
    message: `interrupted after its alias swap (${why}): finished by the sweep`,
  });
  return true;
}
