/**
 * The UCI sequence: one document in the meta index, advanced with optimistic concurrency
 * (if_seq_no / if_primary_term), so two loads at once never hand out the same UCI.
 */
import type { Engine } from './client';

const sequenceId = 'uci-sequence';

async function highestUci(engine: Engine): Promise<number> {
  const result = await engine.client.search({
    index: engine.names.compounds,
    size: 0,
    aggs: { highest: { max: { field: 'uci' } } },
  });
  const value = (result.aggregations?.highest as { value: number | null } | undefined)?.value;
  return value ?? 0;
}

function isConflict(error: unknown): boolean {
  return (error as { meta?: { statusCode?: number } }).meta?.statusCode === 409;
}

/**
 * The sequence document as this process last wrote it. A loader that raises the sequence batch after
 * batch tries its next write against that version straight away, instead of reading the document
 * first: a realtime read of a document written since the last refresh makes the engine refresh the
 * meta index, once a batch. If another load moved the sequence meanwhile, the write is refused (409)
 * and the sequence is read as usual.
 */
export interface SequenceVersion {
  nextUci: number;
  seqNo: number;
  primaryTerm: number;
}

/** Where a caller that advances the sequence again and again keeps the version it wrote last. */
export interface SequenceMemory {
  version?: SequenceVersion;
}

/** The sequence as it stands; undefined when it did not exist yet and has just been created. */
async function readSequence(engine: Engine): Promise<SequenceVersion | undefined> {
  const read = await engine.client.get<{ nextUci: number }>(
    { index: engine.names.meta, id: sequenceId },
    { ignore: [404] },
  );
  if (read.found) return { nextUci: read._source!.nextUci, seqNo: read._seq_no!, primaryTerm: read._primary_term! };
  const start = (await highestUci(engine)) + 1;
  try {
    await engine.client.create({
      index: engine.names.meta,
      id: sequenceId,
      document: { kind: 'sequence', nextUci: start },
      refresh: false,
    });
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
  return undefined;
}

/**
 * Moves the sequence with `advance(next)` → new next value, retrying on concurrent updates.
 * Returns the value of `next` before the successful update. `memory`, when given, is tried first
 * for a write and updated after each one.
 */
async function advanceSequence(
  engine: Engine,
  advance: (next: number) => number,
  memory?: SequenceMemory,
): Promise<number> {
  let remembered = memory?.version;
  for (let attempt = 0; attempt < 100; attempt += 1) {
    // Only a write can prove a remembered version current; a caller that needs no write reads.
    const current =
      remembered && advance(remembered.nextUci) !== remembered.nextUci ? remembered : await readSequence(engine);
    remembered = undefined;
    if (!current) continue;
    const next = current.nextUci;
    const updated = advance(next);
    if (updated === next) return next;
    try {
      const written = await engine.client.index({
        index: engine.names.meta,
        id: sequenceId,
        document: { kind: 'sequence', nextUci: updated },
        if_seq_no: current.seqNo,
        if_primary_term: current.primaryTerm,
      });
      if (memory) memory.version = { nextUci: updated, seqNo: written._seq_no!, primaryTerm: written._primary_term! };
      return next;
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
  throw new Error('the UCI sequence is contended beyond 100 retries');
}

/** Reserves `count` consecutive UCIs and returns the first. */
export async function allocateUcis(engine: Engine, count: number): Promise<number> {
  return advanceSequence(engine, (next) => next + count);
}

/**
 * Makes sure the sequence never hands out a UCI at or below `highest` (a dump load raises it before
 * it writes UCIs of its own). Returns the next UCI the sequence held before. `memory`: see
 * SequenceMemory, for a caller that raises it again and again.
 */
export async function raiseSequenceAbove(engine: Engine, highest: number, memory?: SequenceMemory): Promise<number> {
  return advanceSequence(engine, (next) => Math.max(next, highest + 1), memory);
}

/** The next UCI the sequence would hand out: every UCI in use is below it. */
export async function nextUci(engine: Engine): Promise<number> {
  return advanceSequence(engine, (next) => next);
}
