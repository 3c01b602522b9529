/**
 * Line files for exports. Text is handled as "binary" (latin1) strings, one character per byte of
 * the UTF-8 files: comparing two such strings compares the UTF-8 bytes, so sorting them gives byte
 * order, and writing them back as latin1 restores the exact bytes. Memory stays constant: one read
 * buffer per reader, one pending buffer per writer.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { createGzip, type Gzip } from 'node:zlib';

/** Reads a file line by line ('\n'), each line a fresh latin1 string (never a slice of a big chunk). */
export class LineReader {
  private buffer: Buffer;
  private start = 0;
  private end = 0;
  private eof = false;
  private line: string | undefined;

  private constructor(
    private readonly handle: FileHandle,
    bufferSize: number,
  ) {
    this.buffer = Buffer.allocUnsafe(bufferSize);
  }

  /** Opens `path` and reads its first line. */
  static async open(path: string, bufferSize = 256 * 1024): Promise<LineReader> {
    const reader = new LineReader(await open(path, 'r'), bufferSize);
    await reader.advance();
    return reader;
  }

  /** The current line, undefined once the file is exhausted. */
  get current(): string | undefined {
    return this.line;
  }

  /** Moves to the next line; returns a promise only when it has to read from disk. */
  advance(): Promise<void> | undefined {
    const newline = this.buffer.indexOf(10, this.start);
    if (newline >= 0 && newline < this.end) {
      this.line = this.buffer.toString('latin1', this.start, newline);
      this.start = newline + 1;
      return undefined;
    }
    return this.refill();
  }

  private async refill(): Promise<void> {
    for (;;) {
      const newline = this.buffer.indexOf(10, this.start);
      if (newline >= 0 && newline < this.end) {
        this.line = this.buffer.toString('latin1', this.start, newline);
        this.start = newline + 1;
        return;
      }
      if (this.eof) {
        // A last line without its newline still counts.
        this.line = this.start < this.end ? this.buffer.toString('latin1', this.start, this.end) : undefined;
        this.start = this.end;
        if (this.line === undefined) await this.close();
        return;
      }
      if (this.start > 0) {
        this.buffer.copy(this.buffer, 0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      }
      if (this.end === this.buffer.length) {
        const bigger = Buffer.allocUnsafe(this.buffer.length * 2);
        this.buffer.copy(bigger, 0, 0, this.end);
        this.buffer = bigger;
      }
      const { bytesRead } = await this.handle.read(this.buffer, this.end, this.buffer.length - this.end, null);
      if (bytesRead === 0) this.eof = true;
      this.end += bytesRead;
    }
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}

/** Writes latin1 text to a file (gzip-compressed on the fly when asked), buffering small writes. */
export class TextWriter {
  private pending: string[] = [];
  private pendingLength = 0;
  private readonly file: WriteStream;
  private readonly gzip?: Gzip;
  private readonly finished: Promise<unknown>;
  private failure: Error | undefined;
  /** Bytes handed to the writer (before compression). */
  bytes = 0;

  constructor(
    readonly path: string,
    options: { gzip: boolean },
  ) {
    this.file = createWriteStream(path);
    const fail = (error: Error): void => {
      this.failure ??= error;
    };
    this.file.on('error', fail);
    if (options.gzip) {
      this.gzip = createGzip({ level: 6 });
      this.gzip.on('error', fail);
      this.gzip.pipe(this.file);
    }
    this.finished = once(this.file, 'close');
  }

  /** Appends text; returns a promise only when the output asks to slow down. */
  write(text: string): Promise<void> | undefined {
    this.pending.push(text);
    this.pendingLength += text.length;
    if (this.pendingLength < 64 * 1024) return undefined;
    return this.flush();
  }

  private async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.pendingLength === 0) return;
    const chunk = Buffer.from(this.pending.join(''), 'latin1');
    this.bytes += chunk.length;
    this.pending = [];
    this.pendingLength = 0;
    const target = this.gzip ?? this.file;
    // Callers that do not wait share one wait for 'drain' rather than stacking listeners.
    if (!target.write(chunk)) {
      this.draining ??= once(target, 'drain').then(() => {
        this.draining = undefined;
      });
    }
    if (this.draining) await this.draining;
  }

  private draining: Promise<void> | undefined;

  /** Writes what is pending and closes the file. */
  async end(): Promise<void> {
    await this.flush();
    (this.gzip ?? this.file).end();
    await this.finished;
    if (this.failure) throw this.failure;
  }

  /** Closes without caring for the content (after a failure elsewhere). */
  destroy(): void {
    this.gzip?.destroy();
    this.file.destroy();
  }
}

/** A JavaScript string as its UTF-8 bytes, one latin1 character per byte. */
export function toBinary(text: string): string {
  // Plain ASCII (almost every compound id) is the same in both forms.
  for (let i = 0; i < text.length; i += 1) {
    if (text.charCodeAt(i) > 0x7f) return Buffer.from(text, 'utf8').toString('latin1');
  }
  return text;
}

/** The inverse of toBinary. */
export function fromBinary(binary: string): string {
  return Buffer.from(binary, 'latin1').toString('utf8');
}
