/**
 * `npm run load -- remove-source <sourceId>`: retires a source. Its ids become obsolete (a new
 * release holding every assignment with assignment 0 replaces the current one); its metadata stays.
 * Every id it held current is recorded as dropped.
 */
import type { SourceDocument } from '../src/engine/documents';
import { bulkWrite, type BulkItem } from '../src/engine/bulk';
import { currentReleaseIndex } from '../src/engine/schema';
import { sourceById } from '../src/engine/sources';
import { countCurrentOfSource, scanSourceAssignments, assignmentId } from '../src/engine/assignments';
import { ChangeRecorder } from './changes';
import { publishSourceRelease } from './publish';
import { FileFormatError, type RowRef } from './read';
import { Reject, type LoadRun } from './run';

export async function removeSource(run: LoadRun, sourceId: number): Promise<void> {
  const source: SourceDocument | undefined = await sourceById(run.engine, sourceId);
  if (!source) throw new FileFormatError(`source ${sourceId} is not known`);
  const previous = await currentReleaseIndex(run.engine, sourceId);
  if (!previous) throw new FileFormatError(`source ${sourceId} has no loaded release to retire`);
  if (run.dryRun) {
    for await (const page of scanSourceAssignments(run.engine, previous, sourceId)) run.rowsRead += page.length;
    run.rowsLoaded = run.rowsRead;
    return;
  }
  const next = await run.createIndex(sourceId, await countCurrentOfSource(run.engine, previous, sourceId));
  const changes = new ChangeRecorder(run);
  async function* obsolete(): AsyncGenerator<BulkItem<RowRef>> {
    for await (const page of scanSourceAssignments(run.engine, previous!, sourceId)) {
      await changes.droppedAll(sourceId, page);
      for (const assignment of page) {
        run.rowsRead += 1;
        yield {
          index: next,
          id: assignmentId(sourceId, assignment.uci, assignment.compoundId),
          op: 'index',
          document: { ...assignment, assignment: 0 },
          context: { line: run.rowsRead, raw: assignment.compoundId },
        };
      }
      await run.tick();
    }
  }
  const result = await bulkWrite(run.engine, obsolete(), (failure) =>
    run.reject(failure.context ?? { line: 0, raw: failure.id }, new Reject('engine-refused', failure.reason)),
  );
  run.rowsLoaded = result.written;
  await changes.finish();
  run.details.UCICount = await publishSourceRelease(run.engine, source, next, {
    touch: true,
    retired: true,
    onNote: run.note,
  });
}
