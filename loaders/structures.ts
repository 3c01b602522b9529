/**
 * `npm run load -- structures <structure.tsv(.gz)>`: UniChem's structure table (UCI, STANDARDINCHI,
 * STANDARDINCHIKEY). The UCIs of the dump are kept; the InChIKey is the document `_id`, written with
 * op_type create, so one key can never get two UCIs.
 */
import type { BulkBatch } from '../src/engine/bulk';
import { structureRefsByUci, ucisByKey, type StructureRef } from '../src/engine/compounds';
import { refreshIndex } from '../src/engine/schema';
import { nextUci, raiseSequenceAbove, type SequenceMemory } from '../src/engine/sequence';
import { ByteCounter, FileFormatError, fileSize, readColumns, type RowRef } from './read';
import { Reject, writeBatches, type LoadRun } from './run';
import { readCheckedStructures, rowsOf, type CheckedBatch, type CheckedRow as Candidate } from './structure-reader';
import { UciBitset, type DryRunMemory } from './uci-bitset';

/**
 * Rows a batch. A batch of new structures is one bulk request of about 3.4 MB (typical InChIs), as
 * few requests as raw bulk sends: each costs the engine some work of its own (see `flushBytes`).
 */
export const batchSize = 4_000;
/**
 * Fewer rows when they are long: at most this many characters of raw rows a batch (about 500 rows of the longest InChIs
 * allowed, whose documents are up to 12 MB).
 */
const batchChars = 2_000_000;

/**
 * Who may already own a UCI. Every UCI in use before this load is below `before` (the sequence's
 * next UCI, read at the start and raised before each batch is written), so only those are looked up
 * in the index; the UCIs this load wrote itself are in `written` (a bitset: 20 MB at 160 million),
 * which the index could not show anyway while refresh is paused.
 */
class UciOwners {
  readonly written = new UciBitset();
  /** The sequence as this load last wrote it: each raise writes without reading it first. */
  readonly sequence: SequenceMemory = {};
  private raisedTo = 0;

  private constructor(private before: number) {}

  static async start(run: LoadRun): Promise<UciOwners> {
    // A dry run writes nothing and raises nothing: every UCI is looked up.
    return new UciOwners(run.dryRun ? Number.POSITIVE_INFINITY : await nextUci(run.engine));
  }

  /** Raises the sequence above a batch's UCIs (up to `highest`) before they are written, so no load hands them out. */
  async reserve(run: LoadRun, highest: number): Promise<void> {
    if (run.dryRun) return;
    if (highest <= this.raisedTo) return;
    const previous = await raiseSequenceAbove(run.engine, highest, this.sequence);
    // UCIs handed out by another load since the last raise are in use too.
    if (previous > Math.max(this.raisedTo + 1, this.before)) this.before = previous;
    this.raisedTo = highest;
  }

  /** Keys of the UCIs among `ucis` that were in use before this load. */
  async inIndex(run: LoadRun, ucis: number[]): Promise<Map<number, StructureRef>> {
    const older = ucis.filter((uci) => uci < this.before);
    return structureRefsByUci(run.engine, older).catch((error) => {
      if (run.dryRun) return new Map<number, StructureRef>();
      throw error;
    });
  }
}

/**
 * Checks one batch against the index: keys already known (unless `lookUpKeys` is off: then `create`
 * finds them), UCIs already taken by another key. Returns the structures to write and how many of
 * the batch's keys were known.
 */
async function resolveBatch(
  run: LoadRun,
  candidates: Candidate[],
  owners: UciOwners,
  lookUpKeys: boolean,
): Promise<{ fresh: Candidate[]; known: number }> {
  const byKey = !lookUpKeys
    ? new Map<string, number>()
    : await ucisByKey(
        run.engine,
        candidates.map((c) => c.key),
      ).catch((error) => {
        if (run.dryRun) return new Map<string, number>();
        throw error;
      });
  const byUci = await owners.inIndex(
    run,
    candidates.filter((c) => !byKey.has(c.key)).map((c) => c.uci),
  );
  const fresh: Candidate[] = [];
  const keysInBatch = new Map<string, number>();
  for (const candidate of candidates) {
    const known = byKey.get(candidate.key);
    try {
      if (known !== undefined) {
        if (known !== candidate.uci)
          throw new Reject(
            'uci-conflict',
            `${candidate.key} already has UCI ${known}, the file gives ${candidate.uci}`,
          );
        run.rowsLoaded += 1; // already loaded with the same UCI: nothing to write
        continue;
      }
      if (candidate.documentEnd === candidate.documentStart)
        throw new Reject(
          'unknown-key-without-inchi',
          `${candidate.key} is given without an InChI and is not already known`,
        );
      const line = keysInBatch.get(candidate.key);
      if (line !== undefined) throw new Reject('duplicate-key', `${candidate.key} was already given on line ${line}`);
      const owner = byUci.get(candidate.uci)?.standardInchiKey;
      if (owner !== undefined && owner !== candidate.key)
        throw new Reject('uci-conflict', `UCI ${candidate.uci} already belongs to ${owner}`);
      if (owners.written.has(candidate.uci))
        throw new Reject(
          'uci-conflict',
          `UCI ${candidate.uci} was already given to another structure earlier in the file`,
        );
      keysInBatch.set(candidate.key, candidate.line);
      owners.written.add(candidate.uci);
      fresh.push(candidate);
    } catch (error) {
      if (!(error instanceof Reject)) throw error;
      run.reject(candidate, error);
    }
  }
  return { fresh, known: byKey.size };
}

/** A structure `create` refused because its key exists: the same UCI is no news, another is a conflict. */
interface KnownKey {
  context: StructureRow;
  key: string;
}

type StructureRow = RowRef & { uci: number };

/**
 * The bulk batch of a checked batch's fresh rows: the batch's documents as the reader encoded them
 * when every row with a document is fresh (a new table, or the new part of one), else theirs joined.
 */
function bulkBatchOf(batch: CheckedBatch, candidates: Candidate[], fresh: Candidate[]): BulkBatch<StructureRow> {
  const documented = candidates.reduce(
    (count, candidate) => count + (candidate.documentEnd > candidate.documentStart ? 1 : 0),
    0,
  );
  const ends: number[] = [];
  let end = 0;
  for (const candidate of fresh) ends.push((end += candidate.documentEnd - candidate.documentStart));
  return {
    body:
      fresh.length === documented
        ? batch.documents
        : Buffer.concat(
            fresh.map((candidate) => batch.documents.subarray(candidate.documentStart, candidate.documentEnd)),
            end,
          ),
    ends,
    ids: fresh.map((candidate) => candidate.key),
    contexts: fresh.map((candidate) => ({ line: candidate.line, raw: candidate.raw, uci: candidate.uci })),
  };
}

/** Loads a structure table; in a dry run, `dryRun` collects the UCIs it would have created. */
export async function loadStructures(run: LoadRun, file: string, dryRun?: DryRunMemory): Promise<void> {
  const columns = await readColumns(file, 'tsv');
  for (const needed of ['uci', 'standardinchi', 'standardinchikey']) {
    if (!columns.includes(needed)) {
      throw new FileFormatError(
        `${file}: a structure table needs the tab-separated columns UCI, ` +
          `STANDARDINCHI, STANDARDINCHIKEY (missing ${needed.toUpperCase()}; ` +
          `found ${columns.join(', ') || 'none'})`,
      );
    }
  }
  const counter = new ByteCounter(fileSize(file));
  run.track(counter);
  let highest = 0;
  const owners = await UciOwners.start(run);
  // Keys are looked up before they are written until a batch finds none known (a new table, or the
  // new part of one); from then on `create` alone finds known keys (409), checked here by batch, and
  // the first one found turns the lookups back on.
  let lookUpKeys = true;
  const knownKeys: KnownKey[] = [];
  const checkKnownKeys = async (): Promise<void> => {
    while (knownKeys.length > 0) {
      const slice = knownKeys.splice(0, batchSize);
      const ucis = await ucisByKey(
        run.engine,
        slice.map((k) => k.key),
      );
      for (const { context, key } of slice) {
        const uci = ucis.get(key);
        if (uci === context.uci)
          run.rowsLoaded += 1; // already loaded with the same UCI
        else
          run.reject(
            context,
            new Reject('uci-conflict', `${key} already has UCI ${uci ?? '?'}, the file gives ${context.uci}`),
          );
      }
    }
  };

  async function* bulkBatches(): AsyncGenerator<BulkBatch<StructureRow>> {
    // Lines, loading rules and documents come from a worker thread, a few batches ahead.
    for await (const batch of readCheckedStructures({
      file,
      maxInchiLength: run.config.MAX_INCHI_LENGTH,
      loadId: run.loadId,
      batchSize,
      batchChars,
      index: run.engine.names.compounds,
    })) {
      counter.bytesRead = batch.bytesRead;
      await checkKnownKeys();
      const reserved = owners.reserve(run, batch.highest);
      run.rowsRead += batch.rowsRead;
      for (const reject of batch.rejects) run.reject(reject, new Reject(reject.code, reject.message));
      const candidates = rowsOf(batch);
      await reserved;
      const { fresh, known } = await resolveBatch(run, candidates, owners, lookUpKeys);
      if (lookUpKeys && known === 0 && !run.dryRun) lookUpKeys = false;
      for (const candidate of fresh) highest = Math.max(highest, candidate.uci);
      if (run.dryRun) {
        run.rowsLoaded += fresh.length;
        for (const candidate of fresh) dryRun?.ucis.add(candidate.uci);
      }
      await run.tick();
      if (!run.dryRun && fresh.length > 0) yield bulkBatchOf(batch, candidates, fresh);
    }
  }
  const written = await writeBatches(run, bulkBatches(), (failure) => {
    if (failure.status === 409 && failure.context) {
      knownKeys.push({ context: failure.context, key: failure.id });
      lookUpKeys = true;
      return;
    }
    run.reject(
      failure.context ?? { line: 0, raw: failure.id },
      new Reject('engine-refused', `the engine refused the structure: ${failure.reason}`),
    );
  });
  if (!run.dryRun) {
    await checkKnownKeys();
    run.rowsLoaded += written;
    if (highest > 0) await raiseSequenceAbove(run.engine, highest, owners.sequence);
    await refreshIndex(run.engine, run.engine.names.compounds);
  }
  run.details.structuresCreated = written;
}
