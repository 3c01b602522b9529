/**
 * Streaming readers for every file `npm run load` accepts: TSV, CSV, JSON arrays, JSON Lines and
 * SDF, gzip or plain (recognised by content, not by name). Memory stays constant whatever the size.
 */
import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse';
import { parser as jsonParser } from 'stream-json';
import { streamArray } from 'stream-json/streamers/StreamArray';

/** A fatal problem with a whole file (wrong header, unknown format): the load stops and changes nothing. */
export class FileFormatError extends Error {}

/** One data row: its 1-based line (or record) number, the raw text, and its fields by lower-case column name. */
export interface Row {
  line: number;
  raw: string;
  fields: Record<string, string>;
}

/** Where a row came from, for the rejects file. */
export type RowRef = Pick<Row, 'line' | 'raw'>;

export type Format = 'tsv' | 'csv' | 'json' | 'jsonl' | 'sdf';

/** Counts the bytes read from disk, so progress can show a percentage and an ETA of compressed files too. */
export class ByteCounter {
  bytesRead = 0;
  constructor(readonly totalBytes: number) {}
}

/** Size of a file in bytes, 0 when it does not exist. */
export function fileSize(file: string): number {
  try {
    return statSync(file).isFile() ? statSync(file).size : 0;
  } catch {
    return 0;
  }
}

/**
 * About how many rows a file of `bytesPerRow`-byte rows holds, from its size: a gzip file is taken
 * to hold five times its bytes (UniChem's tables compress about 4-6 fold). For sizing, not counting.
 */
export async function estimatedRows(file: string, bytesPerRow: number): Promise<number> {
  const bytes = fileSize(file);
  return Math.ceil((bytes * (bytes > 0 && (await isGzip(file)) ? 5 : 1)) / bytesPerRow);
}

async function isGzip(file: string): Promise<boolean> {
  const stream = createReadStream(file, { start: 0, end: 1 });
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const head = Buffer.concat(chunks);
  return head.length === 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** The decompressed text stream of a file, counting the bytes read from disk into `counter`. */
export async function openText(file: string, counter?: ByteCounter): Promise<Readable> {
  if (!fileSize(file)) throw new FileFormatError(`cannot read ${file}: no such file, or it is empty`);
  const gzip = await isGzip(file);
  if (counter) counter.bytesRead = 0;
  const raw = createReadStream(file);
  // Attached only once nothing awaits any more: a 'data' listener starts the flow at once.
  if (counter)
    raw.on('data', (chunk) => {
      counter.bytesRead += chunk.length;
    });
  if (gzip) {
    // 64 kB output chunks instead of 16: a quarter of the callbacks, a third less CPU to read a table.
    const gunzip = createGunzip({ chunkSize: 64 * 1024 });
    raw.on('error', (error) => gunzip.destroy(error));
    gunzip.on('close', () => raw.destroy());
    return raw.pipe(gunzip);
  }
  return raw;
}

/** The format of a file, from its name (compression suffix ignored) or, failing that, its first character. */
export async function detectFormat(file: string): Promise<Format> {
  const name = file.toLowerCase().replace(/\.(gz|gzip)$/, '');
  if (/\.(tsv|tab|txt)$/.test(name)) return 'tsv';
  if (name.endsWith('.csv')) return 'csv';
  if (/\.(jsonl|ndjson)$/.test(name)) return 'jsonl';
  if (/\.(sdf|sd|mol)$/.test(name)) return 'sdf';
  const text = await openText(file);
  for await (const chunk of text) {
    const first = String(chunk).trimStart()[0];
    text.destroy();
    if (first === '[') return 'json';
    if (first === '{') return 'jsonl';
    break;
  }
  if (name.endsWith('.json')) return 'json';
  return 'tsv';
}

/** Whether an error is zlib's, about the compressed data. */
function isGzipError(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code?.startsWith('Z_') === true;
}

/**
 * The lines of a file, a decoded chunk's worth at a time (64 kB): line breaks as readline reads them
 * (`\n`, `\r\n` or a lone `\r`), the last line even without a break. Rows are read a chunk at a
 * time, not through an async step per line: that allocated most of what a reference load collected
 * (3 of its 10 GB, bench:load). A reader that stops early (the header of a file read, say) closes
 * the file, so that a broken end of it is never read, nor reported, after nobody listens any more.
 */
async function* lineChunks(file: string, counter?: ByteCounter): AsyncGenerator<string[]> {
  const text = await openText(file, counter);
  const decoder = new StringDecoder('utf8');
  let pending = '';
  try {
    for await (const chunk of text) {
      const decoded = decoder.write(chunk as Buffer);
      // A line longer than a chunk is joined up, not split again with every chunk it spans.
      if (!anyBreak.test(decoded)) {
        pending += decoded;
        continue;
      }
      let joined = pending + decoded;
      // A last '\r' may be the first half of a '\r\n' split between chunks: it waits for the next one.
      const heldBack = joined.endsWith('\r');
      if (heldBack) joined = joined.slice(0, -1);
      const found = joined.split(lineBreak);
      pending = found.pop()! + (heldBack ? '\r' : '');
      if (found.length > 0) yield found;
    }
  } catch (error) {
    if (isGzipError(error))
      throw new FileFormatError(`${file}: the gzip data is truncated or corrupt (${(error as Error).message})`);
    throw error;
  } finally {
    text.destroy();
  }
  const last = pending + decoder.end();
  if (last !== '') yield [last.endsWith('\r') ? last.slice(0, -1) : last];
}

const lineBreak = /\r\n|\n|\r/;
const anyBreak = /[\r\n]/;

/** The lines of a file, one at a time. */
async function* lines(file: string, counter?: ByteCounter): AsyncGenerator<string> {
  for await (const found of lineChunks(file, counter)) yield* found;
}

/**
 * Marks a row whose column count is not the header's (a line cut short, a stray tab): the loaders
 * reject it with reason `wrong-column-count` (see reject.ts). Empty columns past the header's last
 * are tolerated (a trailing tab).
 */
function markColumnCount(fields: Record<string, string>, values: string[], columns: number): void {
  if (values.length === columns) return;
  if (values.length > columns && values.slice(columns).every((value) => value.trim() === '')) return;
  fields.__columns = `the row has ${values.length} column${values.length === 1 ? '' : 's'}, the header ${columns}`;
}

function normaliseHeader(header: string[]): string[] {
  return header.map((name) =>
    name
      .replace(/^\uFEFF/, '')
      .trim()
      .toLowerCase(),
  );
}

/** The rows of a TSV file, a chunk of lines at a time. */
async function* tsvRowChunks(file: string, counter?: ByteCounter): AsyncGenerator<Row[]> {
  let header: string[] | undefined;
  let line = 0;
  for await (const texts of lineChunks(file, counter)) {
    const rows: Row[] = [];
    for (const text of texts) {
      line += 1;
      if (!header) {
        header = normaliseHeader(text.split('\t'));
        continue;
      }
      if (text.trim() === '') continue;
      const values = text.split('\t');
      const fields: Record<string, string> = {};
      for (let i = 0; i < header.length; i += 1) fields[header[i]] = (values[i] ?? '').trim();
      markColumnCount(fields, values, header.length);
      rows.push({ line, raw: text, fields });
    }
    if (rows.length > 0) yield rows;
  }
  if (!header) throw new FileFormatError(`${file} is empty: expected a header row`);
}

async function* csvRows(file: string, counter?: ByteCounter): AsyncGenerator<Row> {
  const records = (await openText(file, counter)).pipe(
    parseCsv({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true, raw: true }),
  );
  let header: string[] | undefined;
  for await (const { record, info, raw } of records as AsyncIterable<{
    record: string[];
    info: { lines: number };
    raw: string;
  }>) {
    if (!header) {
      header = normaliseHeader(record);
      continue;
    }
    const fields: Record<string, string> = {};
    for (let i = 0; i < header.length; i += 1) fields[header[i]] = (record[i] ?? '').trim();
    markColumnCount(fields, record, header.length);
    yield { line: info.lines, raw: raw.replace(/\r?\n$/, ''), fields };
  }
  if (!header) throw new FileFormatError(`${file} is empty: expected a header row`);
}

function objectFields(value: unknown, where: string): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new FileFormatError(`${where} is not a JSON object`);
  }
  const fields: Record<string, string> = {};
  for (const [key, field] of Object.entries(value)) {
    fields[key.trim().toLowerCase()] = field === null || field === undefined ? '' : String(field).trim();
  }
  return fields;
}

async function* jsonArrayRows(file: string, counter?: ByteCounter): AsyncGenerator<Row> {
  const pipeline = (await openText(file, counter)).pipe(jsonParser()).pipe(streamArray());
  try {
    for await (const { key, value } of pipeline as AsyncIterable<{ key: number; value: unknown }>) {
      yield { line: key + 1, raw: JSON.stringify(value), fields: objectFields(value, `record ${key + 1}`) };
    }
  } catch (error) {
    if (error instanceof FileFormatError) throw error;
    throw new FileFormatError(`${file} is not a JSON array of objects: ${(error as Error).message}`);
  }
}

async function* jsonLinesRows(file: string, counter?: ByteCounter): AsyncGenerator<Row> {
  let line = 0;
  for await (const text of lines(file, counter)) {
    line += 1;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // One bad line is a bad row, not a bad file: it is rejected with its line number.
      yield { line, raw: text, fields: { __error: 'the line is not valid JSON' } };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { line, raw: text, fields: { __error: 'the line is not a JSON object' } };
      continue;
    }
    yield { line, raw: text, fields: objectFields(value, `line ${line}`) };
  }
}

/**
 * SDF records: the molfile goes in `molfile`, the title line in `title`, and every `> <PROP>` data
 * item in its lower-case name. `line` is the record's first line.
 */
async function* sdfRows(file: string, counter?: ByteCounter): AsyncGenerator<Row> {
  let block: string[] = [];
  let first = 1;
  let line = 0;
  for await (const text of lines(file, counter)) {
    line += 1;
    if (text.startsWith('$$$$')) {
      yield sdfRecord(block, first);
      block = [];
      first = line + 1;
      continue;
    }
    block.push(text);
  }
  if (block.some((text) => text.trim() !== '')) yield sdfRecord(block, first);
}

function sdfRecord(block: string[], line: number): Row {
  const end = block.findIndex((text) => text.startsWith('M  END'));
  const fields: Record<string, string> = { title: (block[0] ?? '').trim() };
  if (end >= 0) fields.molfile = block.slice(0, end + 1).join('\n');
  for (let i = end + 1; i < block.length; i += 1) {
    const match = /^>.*<([^>]+)>/.exec(block[i]);
    if (!match) continue;
    const values: string[] = [];
    for (i += 1; i < block.length && block[i].trim() !== ''; i += 1) values.push(block[i]);
    fields[match[1].trim().toLowerCase()] = values.join('\n').trim();
  }
  return { line, raw: block.slice(0, 1).join(''), fields };
}

/** Every data row of `file`, in `format` (detected when not given). */
export async function* readRows(file: string, format?: Format, counter?: ByteCounter): AsyncGenerator<Row> {
  const chosen = format ?? (await detectFormat(file));
  switch (chosen) {
    case 'tsv':
      for await (const rows of tsvRowChunks(file, counter)) yield* rows;
      break;
    case 'csv':
      yield* csvRows(file, counter);
      break;
    case 'json':
      yield* jsonArrayRows(file, counter);
      break;
    case 'jsonl':
      yield* jsonLinesRows(file, counter);
      break;
    case 'sdf':
      yield* sdfRows(file, counter);
      break;
  }
}

/**
 * The column names of a file (lower case): its header row for TSV and CSV, the keys of its first
 * record for JSON. Read before anything is written, so a wrong header changes nothing.
 */
export async function readColumns(file: string, format: Format): Promise<string[]> {
  if (format === 'tsv') {
    for await (const text of lines(file)) return normaliseHeader(text.split('\t'));
  } else if (format === 'csv') {
    const records = (await openText(file)).pipe(parseCsv({ bom: true, relax_column_count: true, to_line: 1 }));
    for await (const record of records as AsyncIterable<string[]>) return normaliseHeader(record);
  } else {
    for await (const row of readRows(file, format))
      return Object.keys(row.fields).filter((key) => !key.startsWith('__'));
  }
  return [];
}

/** The rows of `file` a chunk at a time: TSV a decoded chunk's worth, the other formats a row each. */
async function* rowChunks(file: string, format: Format, counter?: ByteCounter): AsyncGenerator<Row[]> {
  if (format === 'tsv') yield* tsvRowChunks(file, counter);
  else for await (const row of readRows(file, format, counter)) yield [row];
}

/**
 * The rows of `file` in batches of `size` (the last one shorter), or fewer once their raw rows
 * reach `maxChars` characters together: a batch of long rows stays as small in memory as one of
 * typical rows.
 */
export async function* readRowBatches(
  file: string,
  format: Format,
  size: number,
  counter?: ByteCounter,
  maxChars = Infinity,
): AsyncGenerator<Row[]> {
  let batch: Row[] = [];
  let chars = 0;
  for await (const rows of rowChunks(file, format, counter)) {
    for (const row of rows) {
      batch.push(row);
      chars += row.raw.length;
      if (batch.length >= size || chars >= maxChars) {
        yield batch;
        batch = [];
        chars = 0;
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * The values of `source`, with up to `depth` of them prepared ahead of the consumer: the next
 * batch's lookups run while this one is written, instead of between its requests.
 */
export function readAhead<T>(source: AsyncIterable<T>, depth: number): AsyncIterableIterator<T> {
  return new ReadAhead(source[Symbol.asyncIterator](), depth);
}

class ReadAhead<T> implements AsyncIterableIterator<T> {
  // An async generator queues concurrent next() calls and runs them one after the other.
  private pending: Promise<IteratorResult<T>>[] = [];
  private finished = false;

  constructor(
    private readonly source: AsyncIterator<T>,
    private readonly depth: number,
  ) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  async next(): Promise<IteratorResult<T>> {
    if (!this.finished) {
      while (this.pending.length < this.depth) this.pending.push(this.source.next());
      let result: IteratorResult<T>;
      try {
        result = await this.pending.shift()!;
      } catch (error) {
        await this.close();
        throw error;
      }
      if (!result.done) return result;
    }
    await this.close();
    return { value: undefined, done: true };
  }

  /** Called by `for await` when its loop ends early. */
  async return(): Promise<IteratorResult<T>> {
    await this.close();
    return { value: undefined, done: true };
  }

  private async close(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    const pending = this.pending.splice(0);
    await Promise.allSettled(pending);
    await this.source.return?.(undefined);
  }
}
