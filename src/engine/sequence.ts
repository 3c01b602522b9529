/**
 * The UCI sequence: one document in the meta index, advanced with optimistic concurrency
 * (if_seq_no / if_primary_term), so two loads at once never hand out the same UCI.
 */
import type { Engine } from './client';

const sequenceId = 'uci-sequence';

async function highestUci(engine: Engine): Promise<number> {
  const result = await engine.client.search({
    index: engine.names.compounds, size: 0, aggs: { highest: { max: { field: 'uci' } } },
  });
  const value = (result.aggregations?.highest as { value: number | null } | undefined)?.value;
  return value ?? 0;
}

function isConflict(error: unknown): boolean {
  return (error as { meta?: { statusCode?: number } }).meta?.statusCode === 409;
}

/**
 * Moves the sequence with `advance(next)` → new next value, retrying on concurrent updates.
 * Returns the value of `next` before the successful update.
 */
async function advanceSequence(engine: Engine, advance: (next: number) => number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const current = await engine.client.get<{ nextUci: number }>({ index: engine.names.meta, id: sequenceId }, { ignore: [404] });
    if (!current.found) {
      const start = (await highestUci(engine)) + 1;
      try {
        await engine.client.create({ index: engine.names.meta, id: sequenceId, document: { kind: 'sequence', nextUci: start }, refresh: false });
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
      continue;
    }
    const next = current._source!.nextUci;
    const updated = advance(next);
    if (updated === next) return next;
    try {
      await engine.client.index({
        index: engine.names.meta, id: sequenceId, document: { kind: 'sequence', nextUci: updated },
        if_seq_no: current._seq_no, if_primary_term: current._primary_term,
      });
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
 * it writes UCIs of its own). Returns the next UCI the sequence held before.
 */
export async function raiseSequenceAbove(engine: Engine, highest: number): Promise<number> {
  return advanceSequence(engine, (next) => Math.max(next, highest + 1));
}

/** The next UCI the sequence would hand out: every UCI in use is below it. */
export async function nextUci(engine: Engine): Promise<number> {
  return advanceSequence(engine, (next) => next);
}
