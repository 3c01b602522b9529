/**
 * External merge sort of lines: lines are collected in a bounded buffer, each full buffer is sorted
 * and written as a run file, and the runs are merged (in several passes when there are many), so
 * the memory used does not grow with the number of lines.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LineReader, TextWriter } from './files';

export interface SortOptions {
  /** Folder for the run files (removed by `dispose`). */
  folder: string;
  /** Most characters held in memory before a run is written. */
  maxBufferedChars?: number;
  /** Most lines held in memory before a run is written. */
  maxBufferedLines?: number;
  /** Most runs merged at once. */
  fanIn?: number;
}

function codeAt(text: string, depth: number): number {
  return depth < text.length ? text.charCodeAt(depth) : -1;
}

/**
 * Sorts `lines[lo, hi)` in code-unit order, all sharing their first `depth` characters: multikey
 * quicksort (Bentley and Sedgewick), which looks at each character once per partition instead of
 * comparing whole strings from the start, about twice as fast as Array.prototype.sort here, where
 * keys share long prefixes (the pair of sources, the id's letters).
 */
export function sortLines(lines: string[], lo = 0, hi = lines.length, depth = 0, level = 0): string[] {
  for (;;) {
    const n = hi - lo;
    if (level > 500 && n > 24) {
      // Pathologically unbalanced partitions: finish with the engine's sort rather than recurse deeper.
      const part = lines.slice(lo, hi).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (let i = 0; i < part.length; i += 1) lines[lo + i] = part[i];
      return lines;
    }
    if (n <= 24) {
      for (let i = lo + 1; i < hi; i += 1) {
        const value = lines[i];
        let j = i - 1;
        while (j >= lo && lines[j] > value) {
          lines[j + 1] = lines[j];
          j -= 1;
        }
        lines[j + 1] = value;
      }
      return lines;
    }
    const x = codeAt(lines[lo], depth);
    const y = codeAt(lines[lo + (n >> 1)], depth);
    const z = codeAt(lines[hi - 1], depth);
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let lt = lo;
    let gt = hi - 1;
    let i = lo;
    while (i <= gt) {
      const code = codeAt(lines[i], depth);
      if (code < pivot) {
        const swap = lines[lt];
        lines[lt] = lines[i];
        lines[i] = swap;
        lt += 1;
        i += 1;
      } else if (code > pivot) {
        const swap = lines[gt];
        lines[gt] = lines[i];
        lines[i] = swap;
        gt -= 1;
      } else {
        i += 1;
      }
    }
    sortLines(lines, lo, lt, depth, level + 1);
    sortLines(lines, gt + 1, hi, depth, level + 1);
    if (pivot < 0) return lines; // the equal part is lines that all end here: equal lines
    lo = lt;
    hi = gt + 1;
    depth += 1;
    level += 1;
  }
}

/** Sorts latin1 lines (no '\n' inside) in code-unit order, which for latin1 strings is byte order. */
export class ExternalSorter {
  private buffer: string[] = [];
  private bufferedChars = 0;
  private runs: string[] = [];
  private runCount = 0;
  private readonly maxChars: number;
  private readonly maxLines: number;
  private readonly fanIn: number;
  /** Lines added. */
  lines = 0;

  constructor(private readonly options: SortOptions) {
    this.maxChars = options.maxBufferedChars ?? 10_000_000;
    this.maxLines = options.maxBufferedLines ?? 250_000;
    this.fanIn = options.fanIn ?? 64;
  }

  /** Adds one line; returns a promise only when a run has to be written first. */
  add(line: string): Promise<void> | undefined {
    this.buffer.push(line);
    this.bufferedChars += line.length;
    this.lines += 1;
    if (this.bufferedChars < this.maxChars && this.buffer.length < this.maxLines) return undefined;
    return this.spill();
  }

  private nextRunPath(): string {
    this.runCount += 1;
    return join(this.options.folder, `run-${String(this.runCount).padStart(6, '0')}.txt`);
  }

  private async spill(): Promise<void> {
    if (this.buffer.length === 0) return;
    const lines = sortLines(this.buffer);
    this.buffer = [];
    this.bufferedChars = 0;
    const path = this.nextRunPath();
    const writer = new TextWriter(path, { gzip: false });
    for (let i = 0; i < lines.length; i += 4_096) {
      const wait = writer.write(`${lines.slice(i, i + 4_096).join('\n')}\n`);
      if (wait) await wait;
    }
    await writer.end();
    this.runs.push(path);
  }

  /**
   * Every line added, in order, duplicates included. Lines still in memory are merged with the runs
   * without being written when they are all there is.
   */
  async *sorted(): AsyncGenerator<string[]> {
    if (this.runs.length === 0) {
      const lines = sortLines(this.buffer);
      this.buffer = [];
      this.bufferedChars = 0;
      for (let i = 0; i < lines.length; i += 4_096) yield lines.slice(i, i + 4_096);
      return;
    }
    await this.spill();
    while (this.runs.length > this.fanIn) {
      const merged: string[] = [];
      for (let i = 0; i < this.runs.length; i += this.fanIn) {
        const group = this.runs.slice(i, i + this.fanIn);
        if (group.length === 1) {
          merged.push(group[0]);
          continue;
        }
        const path = this.nextRunPath();
        const writer = new TextWriter(path, { gzip: false });
        for await (const batch of mergeRuns(group)) {
          const wait = writer.write(`${batch.join('\n')}\n`);
          if (wait) await wait;
        }
        await writer.end();
        await Promise.all(group.map((run) => rm(run, { force: true })));
        merged.push(path);
      }
      this.runs = merged;
    }
    yield* mergeRuns(this.runs);
  }

  /** Removes the run files. */
  async dispose(): Promise<void> {
    await Promise.all(this.runs.map((run) => rm(run, { force: true })));
    this.runs = [];
    this.buffer = [];
  }
}

/** k-way merge of sorted run files through a binary heap; yields lines in batches. */
async function* mergeRuns(paths: string[]): AsyncGenerator<string[]> {
  const readers = await Promise.all(paths.map((path) => LineReader.open(path)));
  const heap = readers.filter((reader) => reader.current !== undefined);
  const less = (a: LineReader, b: LineReader): boolean => a.current! < b.current!;
  const down = (i: number): void => {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && less(heap[left], heap[smallest])) smallest = left;
      if (right < heap.length && less(heap[right], heap[smallest])) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest], heap[i]];
      i = smallest;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i -= 1) down(i);
  let batch: string[] = [];
  try {
    while (heap.length > 0) {
      const top = heap[0];
      batch.push(top.current!);
      const wait = top.advance();
      if (wait) await wait;
      if (top.current === undefined) {
        heap[0] = heap[heap.length - 1];
        heap.pop();
      }
      if (heap.length > 0) down(0);
      if (batch.length >= 4_096) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    await Promise.all(readers.map((reader) => reader.close()));
  }
}
