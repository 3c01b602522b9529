/**
 * `npm run load -- references <reference.tsv(.gz)>`: UniChem's reference table (UCI, SRC_ID,
 * SRC_COMPOUND_ID, ASSIGMENT). Every source in the file is replaced: the rows of all of them go to
 * one fresh release index, published for every source by one atomic alias swap once the file is in.
 * What changed in each source's current assignments is recorded under the load's id.
 */
import { normalName } from '../src/domain/lookup';
import type { SourceDocument, AssignmentDocument } from '../src/engine/documents';
import { actionStart, BulkBatchBuilder, type BulkBatch } from '../src/engine/bulk';
import { structureRefsByUci, type StructureRef } from '../src/engine/compounds';
import { currentReleaseIndex, refreshIndex } from '../src/engine/schema';
import { allSources } from '../src/engine/sources';
import {
  countCurrentOfSource,
  assignmentsPerSource,
  scanSourceAssignments,
  assignmentBulkLines,
  assignmentId,
} from '../src/engine/assignments';
import { ChangeRecorder } from './changes';
import { publishSourceReleases } from './publish';
import {
  ByteCounter,
  estimatedRows,
  FileFormatError,
  fileSize,
  readColumns,
  readRowBatches,
  type Row,
  type RowRef,
} from './read';
import { rejectMalformed } from './reject';
import { Reject, writeBatches, type LoadRun } from './run';
import { parseUci } from './structure-rules';
import type { DryRunMemory } from './uci-bitset';
import { StreamingUciCount } from './uci-count';

const batchSize = 5_000;

/** Parses an assignment column: 1 (current) or 0 (obsolete). */
export function parseAssignment(value: string | undefined): 0 | 1 {
  if (value === undefined || value === '' || value === '1') return 1;
  if (value === '0') return 0;
  throw new Reject('bad-assignment', `assignment "${value}" is neither 1 (current) nor 0 (obsolete)`);
}

/**
 * Loads a reference table, replacing every source it contains (`dryRun`: what a dry run of the earlier tables would
 * have written).
 */
export async function loadReferences(run: LoadRun, file: string, dryRun?: DryRunMemory): Promise<void> {
  const columns = await readColumns(file, 'tsv');
  for (const needed of ['uci', 'src_id', 'src_compound_id']) {
    if (!columns.includes(needed)) {
      throw new FileFormatError(
        `${file}: a reference table needs the tab-separated columns UCI, ` +
          `SRC_ID, SRC_COMPOUND_ID, ASSIGMENT (missing ${needed.toUpperCase()}; ` +
          `found ${columns.join(', ') || 'none'})`,
      );
    }
  }
  if (!columns.includes('assigment') && !columns.includes('assignment')) {
    throw new FileFormatError(`${file}: a reference table needs an ASSIGMENT (or ASSIGNMENT) column`);
  }
  const sources = new Map<number, SourceDocument>(
    (
      await allSources(run.engine).catch((error) => {
        if (run.dryRun) return [];
        throw error;
      })
    ).map((s) => [s.sourceID, s]),
  );
  let release: string | undefined;
  const rowsPerSource = new Map<number, number>();
  const currentPerSource = new Map<number, number>();
  const counter = new ByteCounter(fileSize(file));
  run.track(counter);
  const uciCount = new StreamingUciCount();
  let refused = false;
  const changes = new ChangeRecorder(run);
  // The release each source served before this load, looked up once per source.
  const previousReleases = new Map<number, Promise<string | undefined>>();
  const previousOf = (sourceId: number): Promise<string | undefined> => {
    if (!previousReleases.has(sourceId)) previousReleases.set(sourceId, currentReleaseIndex(run.engine, sourceId));
    return previousReleases.get(sourceId)!;
  };

  // One index for every source of the file: a lookup across sources then searches one shard.
  async function releaseIndex(): Promise<string> {
    if (!release) {
      // A reference row is about 25 bytes (UCI, source id, compound id, assignment).
      release = await run.createIndex('dump', await estimatedRows(file, 25));
    }
    return release;
  }

  async function* bulkBatches(): AsyncGenerator<BulkBatch<RowRef>> {
    for await (const batch of readRowBatches(file, 'tsv', batchSize, counter)) {
      const currentRows = new Map<number, { compoundId: string; uci: number }[]>();
      const parsed: {
        row: Row;
        uci: number;
        sourceId: number;
        compoundId: string;
        assignment: 0 | 1;
        auxSrc?: string;
      }[] = [];
      for (const row of batch) {
        run.rowsRead += 1;
        try {
          rejectMalformed(row.fields);
          const uci = parseUci(row.fields.uci);
          const sourceText = row.fields.src_id;
          if (!/^[0-9]+$/.test(sourceText ?? ''))
            throw new Reject('bad-source-id', `SRC_ID "${sourceText ?? ''}" is not a source id`);
          const sourceId = Number(sourceText);
          if (!sources.has(sourceId) && !dryRun?.sourceIds.has(sourceId))
            throw new Reject(
              'unknown-source',
              `source ${sourceId} is not known: load it with \`npm run load -- sources\` first`,
            );
          // Compound ids are case sensitive and may hold any character; only surrounding blanks go,
          // and in a source of names each run of blanks inside becomes one space.
          const given = row.fields.src_compound_id ?? '';
          const compoundId = sources.get(sourceId)?.idsAreNames ? normalName(given) : given;
          if (compoundId === '') throw new Reject('no-compound-id', 'the row has no compound id');
          const assignment = parseAssignment(row.fields.assigment ?? row.fields.assignment);
          // AUX_SRC: a column chemxref's dumps add after UniChem's four (empty for none).
          const auxSrc = row.fields.aux_src || undefined;
          parsed.push({ row, uci, sourceId, compoundId, assignment, auxSrc });
        } catch (error) {
          if (!(error instanceof Reject)) throw error;
          run.reject(row, error);
        }
      }
      const structures = await structureRefsByUci(
        run.engine,
        parsed.map((p) => p.uci),
      ).catch((error) => {
        if (run.dryRun) return new Map<number, StructureRef>();
        throw error;
      });
      // The index is created with the first row to write; its action start is made once per batch.
      let action: string | undefined;
      const writes = new BulkBatchBuilder<RowRef>();
      for (const item of parsed) {
        const structure = structures.get(item.uci);
        if (!structure && !(run.dryRun && dryRun?.ucis.has(item.uci))) {
          run.reject(
            item.row,
            new Reject('unknown-uci', `UCI ${item.uci} is not a known structure: load the structure table first`),
          );
          continue;
        }
        rowsPerSource.set(item.sourceId, (rowsPerSource.get(item.sourceId) ?? 0) + 1);
        if (item.assignment === 1) currentPerSource.set(item.sourceId, (currentPerSource.get(item.sourceId) ?? 0) + 1);
        if (run.dryRun) {
          run.rowsLoaded += 1;
          continue;
        }
        const document: AssignmentDocument = {
          sourceId: item.sourceId,
          compoundId: item.compoundId,
          uci: item.uci,
          assignment: item.assignment,
          standardInchiKey: structure!.standardInchiKey,
          connectivityBlock: structure!.connectivityBlock,
          auxSrc: item.auxSrc,
        };
        uciCount.add(item.sourceId, item.uci, item.compoundId, item.assignment);
        if (item.assignment === 1) {
          if (!currentRows.has(item.sourceId)) currentRows.set(item.sourceId, []);
          currentRows.get(item.sourceId)!.push({ compoundId: item.compoundId, uci: item.uci });
        }
        action ??= actionStart('index', await releaseIndex());
        const id = assignmentId(item.sourceId, item.uci, item.compoundId);
        writes.addLines(id, assignmentBulkLines(action, id, document), { line: item.row.line, raw: item.row.raw });
      }
      for (const [sourceId, rows] of currentRows) await changes.newRows(sourceId, await previousOf(sourceId), rows);
      await run.tick();
      if (writes.size > 0) yield writes.take();
    }
  }
  const written = await writeBatches(run, bulkBatches(), (failure) => {
    refused = true;
    run.reject(
      failure.context ?? { line: 0, raw: failure.id },
      new Reject('engine-refused', `the engine refused the assignment: ${failure.reason}`),
    );
  });
  run.details.sourcesReplaced = Object.fromEntries([...rowsPerSource].sort((a, b) => a[0] - b[0]));
  const replacedIds = [...rowsPerSource.keys()].sort((a, b) => a - b);
  run.sourceIds = replacedIds;
  if (!run.dryRun && release) {
    await refreshIndex(run.engine, release);
    // Distinct assignments, each source's and in all: a row repeated in the file is one document.
    const perSource = await assignmentsPerSource(run.engine, release);
    const bySource = replacedIds.map((id) => [
      id,
      (perSource.get(id)?.current ?? 0) + (perSource.get(id)?.obsolete ?? 0),
    ]);
    run.rowsLoadedBySource = Object.fromEntries(bySource);
    run.rowsLoaded += bySource.reduce((sum, [, rows]) => sum + rows, 0);
    run.countRepeatedRows();
  } else {
    run.rowsLoaded += written;
  }
  // A reference table replaces each of its sources whole: a source whose current assignments shrink
  // by more than MAX_RELEASE_DROP (a table cut short) refuses the whole table.
  const figures = await Promise.all(
    replacedIds.map(async (sourceId) => {
      const currentBefore = await countCurrentOfSource(
        run.engine,
        run.engine.names.assignmentsOf(sourceId),
        sourceId,
      ).catch(() => 0);
      return { sourceId, currentBefore, dropped: Math.max(0, currentBefore - (currentPerSource.get(sourceId) ?? 0)) };
    }),
  );
  run.guard(figures);
  if (!run.dryRun && release) {
    // Ids of each source's previous release whose structures changed, against the new one.
    for (const sourceId of replacedIds) {
      const previous = await previousOf(sourceId);
      if (!previous) continue;
      for await (const page of scanSourceAssignments(run.engine, previous, sourceId))
        await changes.comparePage(sourceId, previous, release, page);
    }
    await changes.finish();
  }
  if (!run.dryRun) {
    const replaced = replacedIds.map((sourceId) => sources.get(sourceId)!);
    // Counted on the way when the rows came in UCI order and the engine took them all; else by the engine.
    const uciCounts = refused ? undefined : uciCount.counts();
    run.details.uciCountedBy = uciCounts ? 'loader' : 'engine';
    if (release && replaced.length > 0)
      await publishSourceReleases(run.engine, replaced, release, { touch: false, uciCounts, onNote: run.note });
  }
}
