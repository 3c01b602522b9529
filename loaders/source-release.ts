/**
 * `npm run load -- source <sourceId> <release file>`: a curator reloads one source from its own
 * release (TSV, CSV, JSON array, JSON Lines with InChIs and/or keys; SMILES or SDF via the toolkit).
 *
 * Known structures keep their UCI, new ones get UCIs from the sequence; the release is written to a
 * fresh index; ids of the previous release that are gone or now point elsewhere are copied in as
 * obsolete; what changed is recorded under the load's id (loaders/changes.ts); then the alias moves
 * in one atomic call. Readers never see a half-loaded source.
 */
import type { ParsedInchi } from '../src/chemistry';
import { compoundDocument } from '../src/domain/compound';
import { normalName } from '../src/domain/lookup';
import type { AssignmentDocument } from '../src/engine/documents';
import { bulkWrite, type BulkItem } from '../src/engine/bulk';
import type { Engine } from '../src/engine/client';
import { createCompounds, ucisByKey } from '../src/engine/compounds';
import { currentReleaseIndex, refreshIndex } from '../src/engine/schema';
import { sourceById } from '../src/engine/sources';
import { allocateUcis } from '../src/engine/sequence';
import { countCurrentOfSource, scanSourceAssignments, assignmentId } from '../src/engine/assignments';
import { ChangeRecorder } from './changes';
import { nextRelease, publishSourceRelease } from './publish';
import {
  ByteCounter,
  detectFormat,
  estimatedRows,
  FileFormatError,
  fileSize,
  readColumns,
  readRowBatches,
  type Format,
  type Row,
  type RowRef,
} from './read';
import { rejectMalformed } from './reject';
import { Reject, type LoadRun } from './run';
import { checkStructure } from './structure-rules';
import { StructureToolkit, type DrawnStructure } from './toolkit';

const batchSize = 1_000;
const idColumns = ['compound_id', 'src_compound_id', 'id'];
const inchiColumns = ['standard_inchi', 'std_inchi', 'inchi', 'standardinchi'];
const keyColumns = ['standard_inchikey', 'std_inchikey', 'inchikey', 'standardinchikey'];

function first(fields: Record<string, string>, names: string[]): string | undefined {
  for (const name of names) if (fields[name]) return fields[name];
  return undefined;
}

export interface SourceReleaseOptions {
  /** SDF only: the data item holding the compound id (default: the title line). */
  idProperty?: string;
}

interface Entry {
  row: Row;
  compoundId: string;
  auxSrc: string | null;
  key: string;
  parsed: ParsedInchi | null;
}

/** Reads the structures of one batch: InChI/key as given, or computed from SMILES or a molfile. */
async function checkBatch(
  run: LoadRun,
  rows: Row[],
  format: Format,
  toolkit: StructureToolkit,
  options: SourceReleaseOptions,
  idsAreNames: boolean,
): Promise<Entry[]> {
  const drawn = rows.map((row): DrawnStructure | undefined => {
    if (row.fields.molfile) return { type: 'molfile', text: row.fields.molfile };
    if (first(row.fields, inchiColumns) || first(row.fields, keyColumns) || !row.fields.smiles) return undefined;
    return { type: 'smiles', text: row.fields.smiles };
  });
  const toCompute = drawn.filter((structure): structure is DrawnStructure => structure !== undefined);
  const computed = toCompute.length > 0 ? await toolkit.inchis(toCompute) : [];
  let next = 0;
  const entries: Entry[] = [];
  rows.forEach((row, i) => {
    run.rowsRead += 1;
    try {
      rejectMalformed(row.fields);
      const given =
        format === 'sdf'
          ? ((options.idProperty ? row.fields[options.idProperty.toLowerCase()] : row.fields.title) ?? '')
          : (first(row.fields, idColumns) ?? '');
      // A source of names keeps each name in the form name searches read (one space between words).
      const compoundId = idsAreNames ? normalName(given) : given;
      if (compoundId === '') throw new Reject('no-compound-id', 'the row has no compound id');
      let inchi = first(row.fields, inchiColumns);
      if (drawn[i]) {
        const result = computed[next++];
        if ('error' in result) throw new Reject('unreadable-structure', result.error);
        inchi = result.inchi;
      }
      const checked = checkStructure(inchi, first(row.fields, keyColumns), run.config.MAX_INCHI_LENGTH);
      entries.push({
        row,
        compoundId,
        auxSrc: row.fields.aux_src || null,
        key: checked.standardInchiKey,
        parsed: checked.parsed,
      });
    } catch (error) {
      if (!(error instanceof Reject)) throw error;
      run.reject(row, error);
    }
  });
  return entries;
}

/** UCIs for every entry: known structures keep theirs, new ones are created with fresh UCIs. */
async function resolveUcis(run: LoadRun, entries: Entry[]): Promise<Map<string, number>> {
  const ucis = await ucisByKey(run.engine, [...new Set(entries.map((e) => e.key))]).catch((error) => {
    if (run.dryRun) return new Map<string, number>();
    throw error;
  });
  const fresh = new Map<string, ParsedInchi>();
  for (const entry of entries) if (!ucis.has(entry.key) && entry.parsed) fresh.set(entry.key, entry.parsed);
  if (fresh.size === 0 || run.dryRun) {
    if (run.dryRun) for (const key of fresh.keys()) ucis.set(key, 0);
    return ucis;
  }
  let uci = await allocateUcis(run.engine, fresh.size);
  const documents = [...fresh].map(([key, parsed]) => compoundDocument(uci++, key, parsed, run.loadId));
  for (const [key, value] of await createCompounds(run.engine, documents)) ucis.set(key, value);
  run.details.structuresCreated = ((run.details.structuresCreated as number) ?? 0) + documents.length;
  return ucis;
}

/**
 * Copies the previous release's assignments that the new release no longer has, as obsolete, and
 * counts the ids it drops: previous current ids that are not current in the new release (an id
 * that moved to another structure is obsoleted there but not dropped). Records what changed on the
 * way.
 */
async function* obsoleteAssignments(
  engine: Engine,
  sourceId: number,
  previous: string,
  next: string,
  counter: { obsoleted: number; dropped: number },
  changes: ChangeRecorder,
): AsyncGenerator<BulkItem<RowRef>> {
  for await (const page of scanSourceAssignments(engine, previous, sourceId)) {
    // The new release holds only its current assignments until it is refreshed again.
    const ids = page.map((assignment) => assignmentId(sourceId, assignment.uci, assignment.compoundId));
    const { present, stillCurrent } = await changes.comparePage(sourceId, previous, next, page);
    const gone = page
      .filter((assignment, i) => !present.has(ids[i]) && assignment.assignment === 1)
      .map((assignment) => assignment.compoundId);
    counter.dropped += gone.filter((compoundId) => !stillCurrent.has(compoundId)).length;
    for (let i = 0; i < page.length; i += 1) {
      if (present.has(ids[i])) continue;
      counter.obsoleted += page[i].assignment === 1 ? 1 : 0;
      const document: AssignmentDocument = { ...page[i], assignment: 0 };
      yield {
        index: next,
        id: ids[i],
        op: 'create',
        document,
        context: { line: 0, raw: `${page[i].compoundId} (previous release)` },
      };
    }
  }
}

/** A dry run keeps the ids it reads, up to this many, to say how many current ids the release would drop. */
const dryRunIdLimit = 10_000_000;

/** Previous current ids of the source that a dry run's release does not hold (undefined past dryRunIdLimit). */
async function droppedInDryRun(
  engine: Engine,
  sourceId: number,
  previous: string,
  ids: Set<string> | undefined,
): Promise<number | undefined> {
  if (!ids) return undefined;
  let dropped = 0;
  for await (const page of scanSourceAssignments(engine, previous, sourceId)) {
    for (const assignment of page) if (assignment.assignment === 1 && !ids.has(assignment.compoundId)) dropped += 1;
  }
  return dropped;
}

/** Loads one source's release. */
export async function loadSourceRelease(
  run: LoadRun,
  sourceId: number,
  file: string,
  options: SourceReleaseOptions = {},
): Promise<void> {
  const format = await detectFormat(file);
  if (format !== 'sdf') {
    const columns = await readColumns(file, format);
    if (!idColumns.some((c) => columns.includes(c))) {
      throw new FileFormatError(
        `${file}: a source release needs a compound id column ` +
          `(${idColumns.join(', ')}); found ${columns.join(', ') || 'none'}`,
      );
    }
    if (![...inchiColumns, ...keyColumns, 'smiles'].some((c) => columns.includes(c))) {
      throw new FileFormatError(
        `${file}: a source release needs a Standard InChI, InChIKey or SMILES ` +
          `column (${[...inchiColumns, ...keyColumns, 'smiles'].join(', ')}); ` +
          `found ${columns.join(', ')}`,
      );
    }
  }
  const source = await sourceById(run.engine, sourceId).catch(() => undefined);
  if (!source)
    throw new FileFormatError(
      `source ${sourceId} is not known: load its metadata with \`npm run load -- sources\` first`,
    );
  const idsAreNames = source.idsAreNames ?? false;
  const release = nextRelease(source, run.options.release);
  run.release = release;
  run.details.release = release;
  const previous = await currentReleaseIndex(run.engine, sourceId);
  const currentBefore = previous ? await countCurrentOfSource(run.engine, previous, sourceId) : 0;
  let dryRunIds: Set<string> | undefined = run.dryRun ? new Set() : undefined;
  // Sized for the larger of the release it replaces and what the file holds (a row with an InChI is about 100 bytes).
  const next = run.dryRun
    ? ''
    : await run.createIndex(sourceId, Math.max(currentBefore, await estimatedRows(file, 100)));
  const toolkit = new StructureToolkit();
  const changes = new ChangeRecorder(run);
  const counter = new ByteCounter(fileSize(file));
  run.track(counter);

  async function* items(): AsyncGenerator<BulkItem<RowRef>> {
    for await (const rows of readRowBatches(file, format, batchSize, counter)) {
      const entries = await checkBatch(run, rows, format, toolkit, options, idsAreNames);
      const ucis = await resolveUcis(run, entries);
      const written: { compoundId: string; uci: number }[] = [];
      for (const entry of entries) {
        const uci = ucis.get(entry.key);
        if (uci === undefined) {
          run.reject(
            entry.row,
            new Reject('unknown-key-without-inchi', `${entry.key} is given without an InChI and is not already known`),
          );
          continue;
        }
        if (run.dryRun) {
          run.rowsLoaded += 1;
          dryRunIds?.add(entry.compoundId);
          if ((dryRunIds?.size ?? 0) > dryRunIdLimit) dryRunIds = undefined;
          continue;
        }
        const document: AssignmentDocument = {
          sourceId,
          compoundId: entry.compoundId,
          uci,
          assignment: 1,
          auxSrc: entry.auxSrc,
          standardInchiKey: entry.key,
          connectivityBlock: entry.key.slice(0, 14),
        };
        written.push({ compoundId: entry.compoundId, uci });
        yield {
          index: next,
          id: assignmentId(sourceId, uci, entry.compoundId),
          op: 'index',
          document,
          context: entry.row,
        };
      }
      await changes.newRows(sourceId, previous, written);
      await run.tick();
    }
  }

  try {
    if (run.dryRun) {
      for await (const item of items()) void item;
      const dropped = previous ? await droppedInDryRun(run.engine, sourceId, previous, dryRunIds) : 0;
      if (dropped === undefined)
        run.details.dropNotChecked = `a dry run checks the drop for releases of up to ${dryRunIdLimit} ids`;
      run.details.currentBefore = currentBefore;
      run.details.dropped = dropped ?? null;
      run.guard([{ sourceId, currentBefore, dropped: dropped ?? 0 }]);
      return;
    }
    const refused = (failure: { reason: string; id: string; context: RowRef | undefined }): void =>
      run.reject(
        failure.context ?? { line: 0, raw: failure.id },
        new Reject('engine-refused', `the engine refused the assignment: ${failure.reason}`),
      );
    await bulkWrite(run.engine, items(), refused);
    await refreshIndex(run.engine, next);
    // Distinct assignments: a row repeated in the file is one document.
    run.rowsLoaded = await countCurrentOfSource(run.engine, next, sourceId);
    run.countRepeatedRows();
    const counted = { obsoleted: 0, dropped: 0 };
    if (previous)
      await bulkWrite(run.engine, obsoleteAssignments(run.engine, sourceId, previous, next, counted, changes), refused);
    run.details.obsoleted = counted.obsoleted;
    run.details.currentBefore = currentBefore;
    run.details.dropped = counted.dropped;
    run.guard([{ sourceId, currentBefore, dropped: counted.dropped }]);
    await changes.finish();
    run.details.UCICount = await publishSourceRelease(run.engine, source, next, {
      touch: true,
      onNote: run.note,
      release,
    });
  } finally {
    await toolkit.close();
  }
}
