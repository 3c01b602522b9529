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

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

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
    this.maxChars = options.maxBufferedChars ?? 24_000_000;
    this.maxLines = options.maxBufferedLines ?? 600_000;
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
    const lines = this.buffer.sort(byCodeUnit);
    this.buffer = [];
    this.bufferedChars = 0;
    const path = this.nextRunPath();
    const writer = new TextWriter(path, { gzip: false });
    for (const line of lines) {
      const wait = writer.write(`${line}\n`);
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
      const lines = this.buffer.sort(byCodeUnit);
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
