/**
 * What a load changes in a source's current assignments, recorded in the changes index under its
 * load id as it goes: the loader already reads each batch of the new release and each page of the
 * previous one, and asks here on the way. Compound ids new to the source are found batch by batch
 * while the release is written; ids whose structures changed are found while the previous release
 * is read (against the new one, complete by then). Changes are written in bulk, one request in
 * flight, so memory stays bounded whatever the size of the release.
 */
import { changesOfCompound, type Change } from '../src/domain/changes';
import { countChangesOf, refreshChanges, writeChanges, type ChangeDocument } from '../src/engine/changes';
import type { XrefDocument } from '../src/engine/documents';
import { currentCompoundIds, currentUcisOf } from '../src/engine/xrefs';
import type { LoadRun } from './run';

const flushAt = 5_000;

export class ChangeRecorder {
  private pending: ChangeDocument[] = [];
  private writing?: Promise<void>;

  constructor(private readonly run: LoadRun) {}

  /**
   * Rows of the new release of `sourceId` (current assignments): those whose compound id has no
   * current assignment in the `previous` release (or that have no previous release) are added.
   * Ids the previous release has are left to `comparePage`.
   */
  async newRows(sourceId: number, previous: string | undefined, rows: { compoundId: string; uci: number }[]): Promise<void> {
    if (rows.length === 0) return;
    const known = previous ? await currentCompoundIds(this.run.engine, previous, sourceId, rows.map((row) => row.compoundId)) : new Set<string>();
    for (const row of rows) {
      if (!known.has(row.compoundId)) await this.add(sourceId, { change: 'added', compoundId: row.compoundId, uci: row.uci });
    }
  }

  /**
   * One page of the previous release of `sourceId`, against the complete new release `next`:
   * records the changes of every compound id of the page whose current structures differ, and
   * returns the current UCIs in `next` of the page's ids (which the loader uses to tell what to
   * obsolete). An id whose assignments span two pages is compared in full both times (its changes
   * are written once).
   */
  async comparePage(sourceId: number, previous: string, next: string, page: XrefDocument[]): Promise<Map<string, Set<number>>> {
    const after = await currentUcisOf(this.run.engine, next, sourceId, page.map((xref) => xref.compoundId));
    const before = new Map<string, Set<number>>();
    for (const xref of page) {
      if (xref.assignment !== 1) continue;
      if (!before.has(xref.compoundId)) before.set(xref.compoundId, new Set());
      before.get(xref.compoundId)!.add(xref.uci);
    }
    const differs = (compoundId: string, ucis: Set<number>): boolean => {
      const now = after.get(compoundId) ?? new Set<number>();
      return [...ucis].some((uci) => !now.has(uci)) || [...now].some((uci) => !ucis.has(uci));
    };
    const changed = [...before].filter(([compoundId, ucis]) => differs(compoundId, ucis)).map(([compoundId]) => compoundId);
    // The page may hold only some of an id's assignments: its whole previous state decides.
    const wholeBefore = changed.length > 0 ? await currentUcisOf(this.run.engine, previous, sourceId, changed) : new Map<string, Set<number>>();
    for (const compoundId of changed) {
      const was = wholeBefore.get(compoundId) ?? new Set<number>();
      const now = after.get(compoundId) ?? new Set<number>();
      for (const change of changesOfCompound(compoundId, [...now].filter((uci) => !was.has(uci)), [...was].filter((uci) => !now.has(uci)))) {
        await this.add(sourceId, change);
      }
    }
    return after;
  }

  /** Every current assignment of a page of the previous release is dropped (the source is retired). */
  async droppedAll(sourceId: number, page: XrefDocument[]): Promise<void> {
    for (const xref of page) if (xref.assignment === 1) await this.add(sourceId, { change: 'dropped', compoundId: xref.compoundId, uci: xref.uci });
  }

  private async add(sourceId: number, change: Change): Promise<void> {
    this.pending.push({ ...change, loadId: this.run.loadId, loadStarted: this.run.started.toISOString(), sourceId } as ChangeDocument);
    if (this.pending.length >= flushAt) await this.flush();
  }

  /** Starts writing what is pending, once the previous write is acknowledged (one in flight). */
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
   * changes. Call before the release is published.
   */
  async finish(): Promise<void> {
    await this.flush();
    await this.writing;
    await refreshChanges(this.run.engine);
    this.run.changesRecorded = true;
    this.run.details.changes = await countChangesOf(this.run.engine, this.run.loadId);
  }
}
