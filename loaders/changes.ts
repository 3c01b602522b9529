/**
 * What a load changes in a source's current assignments, recorded in the changes index under its
 * load id as it goes, at the cost of one search by id per batch of rows and of little more than the
 * loader already asks of each page of the previous release:
 *
 * - each row of the new release whose assignment was not current in the previous release is
 *   `added`, unless no completed load of the source came before this one: no `since` can then name
 *   a point before this load, so its rows would never be read (a first dump of UniChem's size would
 *   write one change per assignment, as many documents as the release itself);
 * - each page of the previous release is compared with the complete new release: an id that lost
 *   a structure is classified from its whole previous and new structures (`dropped`, `moved`, or an
 *   id on several structures that gained or lost one); a move takes back the `added` its new
 *   structure's row wrote.
 *
 * Changes are written in bulk, in order, one request in flight, so memory stays bounded whatever
 * the size of the release.
 */
import { changesOfCompound, type Change } from '../src/domain/changes';
import {
  countChangesOf,
  refreshChanges,
  writeChanges,
  type ChangeDocument,
  type ChangeWrite,
} from '../src/engine/changes';
import type { AssignmentDocument } from '../src/engine/documents';
import { hasCompletedLoadBefore } from '../src/engine/loads';
import { currentIds, currentUcisOf, assignmentId } from '../src/engine/assignments';
import type { LoadRun } from './run';

const flushAt = 5_000;

/** What a page of the previous release is in the new one. */
export interface PageInNewRelease {
  /** The `_id`s of the page's assignments that are current in the new release. */
  present: Set<string>;
  /**
   * For each id of the page that lost a structure, the structures it is current on in the new release (none: dropped).
   */
  stillCurrent: Map<string, Set<number>>;
}

export class ChangeRecorder {
  private pending: ChangeWrite[] = [];
  private writing?: Promise<void>;
  /** Per source: whether a completed load of it came before this one (see newRows). */
  private readonly followsALoad = new Map<number, Promise<boolean>>();
  /** What a dry run would record, by change. */
  private readonly counted = new Map<string, ChangeDocument['change']>();

  constructor(private readonly run: LoadRun) {}

  /**
   * Rows of the new release of `sourceId` (current assignments): those whose assignment is not
   * current in the `previous` release (or that have no previous release) are added. Nothing is
   * recorded when no completed load of the source came before this one: every change answer starts
   * after a completed load of the source (`since`), so it would never include these.
   */
  async newRows(
    sourceId: number,
    previous: string | undefined,
    rows: { compoundId: string; uci: number }[],
  ): Promise<void> {
    if (rows.length === 0) return;
    if (!this.followsALoad.has(sourceId))
      this.followsALoad.set(
        sourceId,
        hasCompletedLoadBefore(this.run.engine, sourceId, this.run.started.toISOString()),
      );
    if (!(await this.followsALoad.get(sourceId))) return;
    const ids = rows.map((row) => assignmentId(sourceId, row.uci, row.compoundId));
    const current = previous ? await currentIds(this.run.engine, previous, ids) : new Set<string>();
    for (let i = 0; i < rows.length; i += 1) {
      if (!current.has(ids[i]))
        await this.push({
          write: this.document(sourceId, { change: 'added', compoundId: rows[i].compoundId, uci: rows[i].uci }),
        });
    }
  }

  /**
   * One page of the previous release of `sourceId`, against the complete new release `next`
   * (searchable; what the load writes into it after that is not): records the changes of every id
   * of the page that lost a structure, and tells the loader what of the page is still current. An
   * id whose assignments span two pages is classified in full both times (written once).
   */
  async comparePage(
    sourceId: number,
    previous: string,
    next: string,
    page: AssignmentDocument[],
  ): Promise<PageInNewRelease> {
    const ids = page.map((assignment) => assignmentId(sourceId, assignment.uci, assignment.compoundId));
    const present = await currentIds(this.run.engine, next, ids);
    const lost = [
      ...new Set(
        page
          .filter((assignment, i) => assignment.assignment === 1 && !present.has(ids[i]))
          .map((assignment) => assignment.compoundId),
      ),
    ];
    if (lost.length === 0) return { present, stillCurrent: new Map() };
    const [after, before] = await Promise.all([
      currentUcisOf(this.run.engine, next, sourceId, lost),
      currentUcisOf(this.run.engine, previous, sourceId, lost),
    ]);
    for (const compoundId of lost) {
      const was = before.get(compoundId) ?? new Set<number>();
      const now = after.get(compoundId) ?? new Set<number>();
      for (const change of changesOfCompound(
        compoundId,
        [...now].filter((uci) => !was.has(uci)),
        [...was].filter((uci) => !now.has(uci)),
      )) {
        if (change.change === 'moved')
          await this.push({ retract: this.document(sourceId, { change: 'added', compoundId, uci: change.toUci }) });
        await this.push({ write: this.document(sourceId, change) });
      }
    }
    return { present, stillCurrent: after };
  }

  /** Every current assignment of a page of the previous release is dropped (the source is retired). */
  async droppedAll(sourceId: number, page: AssignmentDocument[]): Promise<void> {
    for (const assignment of page)
      if (assignment.assignment === 1)
        await this.push({
          write: this.document(sourceId, { change: 'dropped', compoundId: assignment.compoundId, uci: assignment.uci }),
        });
  }

  private document(sourceId: number, change: Change): ChangeDocument {
    return {
      ...change,
      loadId: this.run.loadId,
      loadStarted: this.run.started.toISOString(),
      sourceId,
    } as ChangeDocument;
  }

  private async push(write: ChangeWrite): Promise<void> {
    if (this.run.dryRun) {
      // A dry run (of a rollback) counts what it would record, a change found twice once, as the index does.
      const change = 'write' in write ? write.write : write.retract;
      const key = `${change.compoundId}\t${JSON.stringify(change)}`;
      if ('write' in write) this.counted.set(key, change.change);
      else this.counted.delete(key);
      return;
    }
    this.pending.push(write);
    if (this.pending.length >= flushAt) await this.flush();
  }

  /**
   * Starts writing what is pending, once the previous write is acknowledged (one in flight, so writes keep their
   * order).
   */
  private async flush(): Promise<void> {
    await this.writing;
    const changes = this.pending;
    this.pending = [];
    this.writing = writeChanges(this.run.engine, changes);
    // A failure is reported by the next flush or by `finish`; not left unhandled meanwhile.
    this.writing.catch(() => undefined);
  }

  /**
   * Writes what is left and makes every change searchable; marks the load as one that recorded its
   * changes, and counts them for its summary. Call before the release is published.
   */
  async finish(): Promise<void> {
    if (this.run.dryRun) {
      const counts = { added: 0, dropped: 0, moved: 0 };
      for (const kind of this.counted.values()) counts[kind] += 1;
      this.run.details.changes = counts;
      return;
    }
    await this.flush();
    await this.writing;
    await refreshChanges(this.run.engine);
    this.run.changesRecorded = true;
    this.run.details.changes = await countChangesOf(this.run.engine, this.run.loadId);
  }
}
