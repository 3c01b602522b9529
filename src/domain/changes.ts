/**
 * Loads and changes of a source (docs/api.md): the loads that replaced a source's assignments, and the
 * net change of its current assignments since one of them, folded from what each load recorded.
 */
import { scanChanges, type ChangeDocument } from '../engine/changes';
import type { Engine } from '../engine/client';
import type { LoadRecord } from '../engine/documents';
import { loadHistory, loadRecord } from '../engine/loads';
import { NoLongerAvailable, UnknownResource } from './errors';

/** One change of a compound id's current assignments. */
export type Change =
  | { change: 'added'; compoundId: string; uci: number }
  | { change: 'dropped'; compoundId: string; uci: number }
  | { change: 'moved'; compoundId: string; fromUci: number; toUci: number };

/**
 * The changes of one compound id whose current structures gained the UCIs `gained` and lost the
 * UCIs `lost`: one lost and one gained is a move; otherwise each gained UCI is added and each lost
 * one dropped (an id on several structures may gain or lose one of them).
 */
export function changesOfCompound(compoundId: string, gained: number[], lost: number[]): Change[] {
  if (gained.length === 1 && lost.length === 1)
    return [{ change: 'moved', compoundId, fromUci: lost[0], toUci: gained[0] }];
  const byUci = (a: number, b: number): number => a - b;
  return [
    ...[...gained].sort(byUci).map((uci): Change => ({ change: 'added', compoundId, uci })),
    ...[...lost].sort(byUci).map((uci): Change => ({ change: 'dropped', compoundId, uci })),
  ];
}

/**
 * The net changes of recorded changes read in compound id order (several loads' changes of one id
 * follow each other): each UCI an id gained and lost again cancels out, so an id added then dropped,
 * or moved A → B → A, gives nothing. Holds one compound id's changes at a time.
 */
export async function* netChanges(pages: AsyncIterable<ChangeDocument[]>): AsyncGenerator<Change> {
  let compoundId: string | undefined;
  let balance = new Map<number, number>();
  const settle = function* (): Generator<Change> {
    if (compoundId === undefined) return;
    const gained = [...balance].filter(([, n]) => n > 0).map(([uci]) => uci);
    const lost = [...balance].filter(([, n]) => n < 0).map(([uci]) => uci);
    yield* changesOfCompound(compoundId, gained, lost);
  };
  const add = (uci: number, n: number): void => {
    balance.set(uci, (balance.get(uci) ?? 0) + n);
  };
  for await (const page of pages) {
    for (const change of page) {
      if (change.compoundId !== compoundId) {
        yield* settle();
        compoundId = change.compoundId;
        balance = new Map();
      }
      if (change.change === 'added') add(change.uci, 1);
      else if (change.change === 'dropped') add(change.uci, -1);
      else {
        add(change.fromUci, -1);
        add(change.toUci, 1);
      }
    }
  }
  yield* settle();
}

/** A load as the loads list of a source shows it. */
export interface LoadView {
  loadId: string;
  started: string;
  ended: string | null;
  status: LoadRecord['status'];
  file: string | null;
  rowsRead: number;
  rowsLoaded: number;
  rowsRejected: number;
  releaseNumber: string | null;
}

/** Most loads of one source listed or looked through. */
const loadsKept = 10_000;

const loadsOf = (record: LoadRecord): number[] => record.sourceIds ?? (record.sourceId ? [record.sourceId] : []);

/** The loads that replaced a source's assignments (its own, and reference tables and dumps), newest first. */
export async function sourceLoads(engine: Engine, sourceId: number): Promise<LoadView[]> {
  return (await loadHistory(engine, loadsKept, sourceId)).map((record) => ({
    loadId: record.loadId,
    started: record.started,
    ended: record.ended,
    status: record.status,
    file: record.file,
    rowsRead: record.rowsRead,
    rowsLoaded: record.rowsLoaded,
    rowsRejected: record.rowsRejected,
    releaseNumber: record.releaseNumber ?? null,
  }));
}

/** The span of a changes answer: from right after load `since` to the last completed load, and the loads in between. */
export interface ChangeSpan {
  sourceId: number;
  since: { loadId: string; ended: string | null };
  until: { loadId: string; ended: string | null };
  /** The completed loads after `since`, up to `until`, whose changes make the answer. */
  loadIds: string[];
}

/**
 * Checks that the net change of `sourceId` since load `since` can be told, and which loads make it:
 * `since` must be a completed load of that source (else UnknownResource), and every completed load
 * of the source after it must have recorded its changes (loads of versions that did not record them
 * make the answer unknowable: NoLongerAvailable, naming the load to ask from instead).
 */
export async function changeSpan(engine: Engine, sourceId: number, since: string): Promise<ChangeSpan> {
  const record = await loadRecord(engine, since);
  if (!record || record.kind !== 'load' || record.dryRun)
    throw new UnknownResource(
      `there is no load "${since}": GET /api/v1/sources/${sourceId}/loads lists the loads of source ${sourceId}`,
    );
  if (!loadsOf(record).includes(sourceId)) {
    const loaded = loadsOf(record);
    throw new UnknownResource(
      `load ${since} (${record.command}) did not load source ${sourceId}` +
        `${loaded.length > 0 ? ` (it loaded source ${loaded.join(', ')})` : ''}`,
    );
  }
  if (record.status !== 'done')
    throw new UnknownResource(
      `load ${since} of source ${sourceId} did not complete ` +
        `(${record.status}): nothing of it was published; ask since a ` +
        `completed load`,
    );
  const later = (await loadHistory(engine, loadsKept, sourceId))
    .filter((load) => load.status === 'done' && !load.dryRun && load.loadId !== since && load.started > record.started)
    .reverse();
  const unrecorded = later.filter((load) => !load.changesRecorded);
  if (unrecorded.length > 0) {
    const last = unrecorded[unrecorded.length - 1];
    throw new NoLongerAvailable(
      `the changes of source ${sourceId} since load ${since} are not known: ` +
        `load ${last.loadId} (${last.command}, ended ${last.ended}) changed ` +
        `the source without recording its changes (it ran a version of ` +
        `chemxref that did not record them); ask since ${last.loadId} or a ` +
        `later load`,
    );
  }
  const until = later.length > 0 ? later[later.length - 1] : record;
  return {
    sourceId,
    since: { loadId: record.loadId, ended: record.ended },
    until: { loadId: until.loadId, ended: until.ended },
    loadIds: later.map((load) => load.loadId),
  };
}

/** The net changes of a span, sorted by compound id, read a page at a time. */
export function changesOfSpan(engine: Engine, span: ChangeSpan): AsyncGenerator<Change> {
  return netChanges(scanChanges(engine, span.sourceId, span.loadIds));
}

/** Text chunks of about this many characters: a streamed answer is neither a write per change nor held whole. */
const chunkSize = 64 * 1024;

function entryOf(change: Change): object {
  const { change: _kind, ...entry } = change;
  void _kind;
  return entry;
}

/**
 * The changes answer as JSON text, streamed (docs/api.md): `added`, `dropped` and `moved`, each sorted
 * by compound id. Each list is one pass over the recorded changes, so memory stays bounded however
 * many there are.
 */
export async function* changesAsJson(engine: Engine, span: ChangeSpan): AsyncGenerator<string> {
  yield `{"response":"Success","sourceID":${span.sourceId},"since":${JSON.stringify(span.since)},"until":${JSON.stringify(span.until)}`;
  for (const kind of ['added', 'dropped', 'moved'] as const) {
    let text = `,"${kind}":[`;
    let first = true;
    for await (const change of changesOfSpan(engine, span)) {
      if (change.change !== kind) continue;
      text += `${first ? '' : ','}${JSON.stringify(entryOf(change))}`;
      first = false;
      if (text.length >= chunkSize) {
        yield text;
        text = '';
      }
    }
    yield `${text}]`;
  }
  yield '}';
}

/** One NDJSON line of a change: `{"change": "added"|"dropped"|"moved", "compoundId", ...}`. */
export function changeLine(change: Change): string {
  return `${JSON.stringify(change)}\n`;
}

/** The changes answer as NDJSON: one line per change (`changeLine`), by compound id. */
export async function* changesAsNdjson(engine: Engine, span: ChangeSpan): AsyncGenerator<string> {
  let text = '';
  for await (const change of changesOfSpan(engine, span)) {
    text += changeLine(change);
    if (text.length >= chunkSize) {
      yield text;
      text = '';
    }
  }
  if (text !== '') yield text;
}
