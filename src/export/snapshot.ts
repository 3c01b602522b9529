/**
 * The consistent view an export reads: each source's release index, resolved once, copied to a
 * local file sorted by (uci, compound id). A release deleted while it is copied (its source was
 * reloaded) is copied again from the source's new release, so every source is exported wholly from
 * one release, before or after a concurrent reload, never a mix. Everything after the copy reads
 * only these files.
 */
import { join } from 'node:path';
import type { Engine } from '../engine/client';
import { ReleaseGone, scanRelease } from '../engine/exports';
import { currentReleaseIndex, currentReleaseIndices } from '../engine/schema';
import { LineReader, TextWriter, toBinary } from './files';
import type { Progress } from './progress';

/** What an export read of one source. */
export interface SourceRelease {
  sourceId: number;
  /** The concrete release index read; null when the source has no loaded release. */
  index: string | null;
  /** Assignments copied (current ones only for mapping exports). */
  rows: number;
  /** Compound ids that a tab-separated file cannot hold (tab, line break or NUL inside), left out. */
  skippedIds: number;
  /** How many times the copy started over because a reload replaced the release. */
  restarts: number;
}

export interface SnapshotOptions {
  /** Copy only current assignments (mapping files) or obsolete ones too (dumps). */
  currentOnly: boolean;
  /** Folder for the copies. */
  folder: string;
  progress: Progress;
  /** Rows per engine request. */
  pageSize?: number;
  /** Called after each page is copied (tests use it to reload a source in the middle of a copy). */
  afterPage?: (sourceId: number, page: number) => Promise<void>;
}

/** Copies of the releases of several sources, sorted by (uci, compound id bytes). */
export class Snapshot {
  constructor(
    readonly folder: string,
    readonly releases: Map<number, SourceRelease>,
  ) {}

  fileOf(sourceId: number): string {
    return join(this.folder, `source-${sourceId}.tsv`);
  }
}

const maxRestarts = 10;

/**
 * Copies the release of every source of `sourceIds`. The indices are resolved together, at the
 * start; a source is read again from its new release if it was replaced while it was copied (its
 * index deleted, or no longer the one its alias names when the copy ends).
 */
export async function takeSnapshot(engine: Engine, sourceIds: number[], options: SnapshotOptions): Promise<Snapshot> {
  const resolved = await currentReleaseIndices(engine);
  const snapshot = new Snapshot(options.folder, new Map());
  const copied = new Map<number, SourceRelease>();
  options.progress.begin('read releases');
  const copySource = async (sourceId: number): Promise<void> => {
    let index = resolved.get(sourceId) ?? null;
    for (let restarts = 0; ; restarts += 1) {
      if (restarts > maxRestarts)
        throw new Error(`source ${sourceId} was reloaded ${maxRestarts} times while it was exported; try again later`);
      try {
        const result = await copyRelease(engine, sourceId, index, snapshot.fileOf(sourceId), options);
        // A dump's index outlives the reload of one of its sources: ask whether it still serves this one.
        const current = (await currentReleaseIndex(engine, sourceId)) ?? null;
        if (current === index) {
          copied.set(sourceId, { sourceId, index, rows: result.rows, skippedIds: result.skippedIds, restarts });
          return;
        }
        index = current;
      } catch (error) {
        if (!(error instanceof ReleaseGone)) throw error;
        index = (await currentReleaseIndex(engine, sourceId)) ?? null;
      }
    }
  };
  // Two copies at a time: the engine answers one search per core, and the copy is mostly waiting.
  const queue = [...sourceIds];
  const worker = async (): Promise<void> => {
    for (let sourceId = queue.shift(); sourceId !== undefined; sourceId = queue.shift()) await copySource(sourceId);
  };
  await Promise.all([worker(), worker()]);
  for (const sourceId of sourceIds) snapshot.releases.set(sourceId, copied.get(sourceId)!);
  return snapshot;
}

/** Ids that cannot be one field of a tab-separated line. */
const unrepresentable = /[\t\n\r\0]/;

async function copyRelease(
  engine: Engine,
  sourceId: number,
  index: string | null,
  path: string,
  options: SnapshotOptions,
): Promise<{ rows: number; skippedIds: number }> {
  const writer = new TextWriter(path, { gzip: false });
  let rows = 0;
  let skippedIds = 0;
  try {
    if (index) {
      let page = 0;
      for await (const assignments of scanRelease(engine, index, sourceId, {
        currentOnly: options.currentOnly,
        pageSize: options.pageSize,
      })) {
        let text = '';
        for (const { uci, compoundId, assignment, auxSrc } of assignments) {
          if (unrepresentable.test(compoundId)) {
            skippedIds += 1;
            continue;
          }
          // The id holds no tab, so a tab after it starts the auxiliary data (its own blanks made spaces).
          const aux = auxSrc === undefined || auxSrc === '' ? '' : `\t${toBinary(auxSrc.replace(/[\t\n\r\0]/g, ' '))}`;
          text += `${uci}\t${assignment}\t${toBinary(compoundId)}${aux}\n`;
          rows += 1;
        }
        const wait = writer.write(text);
        if (wait) await wait;
        options.progress.tick(assignments.length);
        page += 1;
        if (options.afterPage) await options.afterPage(sourceId, page);
      }
    }
    await writer.end();
  } catch (error) {
    writer.destroy();
    throw error;
  }
  return { rows, skippedIds };
}

/** One source's assignments to one structure. Ids are binary (latin1-encoded UTF-8) strings. */
export interface Member {
  sourceId: number;
  ids: string[];
  assignments: (0 | 1)[];
  /** Auxiliary data of each id ('' for none), binary like the ids. */
  aux: string[];
}

/** All assignments to one structure, by source (in the order of `sourceIds`), ids in byte order. */
export interface StructureGroup {
  uci: number;
  members: Member[];
}

interface Cursor {
  sourceId: number;
  reader: LineReader;
  uci: number;
}

function uciOf(line: string | undefined): number {
  return line === undefined ? Infinity : Number(line.slice(0, line.indexOf('\t')));
}

/**
 * Walks the snapshot structure by structure, in UCI order: a merge of the per-source copies (each
 * sorted by uci), holding one structure's assignments at a time.
 */
export async function* structureGroups(snapshot: Snapshot, sourceIds: number[]): AsyncGenerator<StructureGroup> {
  const cursors: Cursor[] = [];
  try {
    for (const sourceId of sourceIds) {
      const reader = await LineReader.open(snapshot.fileOf(sourceId));
      cursors.push({ sourceId, reader, uci: uciOf(reader.current) });
    }
    for (;;) {
      let uci = Infinity;
      for (const cursor of cursors) if (cursor.uci < uci) uci = cursor.uci;
      if (uci === Infinity) return;
      const members: Member[] = [];
      for (const cursor of cursors) {
        if (cursor.uci !== uci) continue;
        const member: Member = { sourceId: cursor.sourceId, ids: [], assignments: [], aux: [] };
        while (cursor.uci === uci) {
          const line = cursor.reader.current!;
          const tab = line.indexOf('\t');
          member.assignments.push(line.charCodeAt(tab + 1) === 49 ? 1 : 0);
          const auxTab = line.indexOf('\t', tab + 3);
          member.ids.push(auxTab < 0 ? line.slice(tab + 3) : line.slice(tab + 3, auxTab));
          member.aux.push(auxTab < 0 ? '' : line.slice(auxTab + 1));
          const wait = cursor.reader.advance();
          if (wait) await wait;
          cursor.uci = uciOf(cursor.reader.current);
        }
        members.push(member);
      }
      yield { uci, members };
    }
  } finally {
    await Promise.all(cursors.map((cursor) => cursor.reader.close()));
  }
}
