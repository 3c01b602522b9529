/**
 * Reads a structure table in a worker thread: lines, loading rules (parsing every InChI and checking
 * its key) and compound documents, a batch at a time, a few batches ahead of the loader. Reading
 * is most of the loader's CPU time; in a thread of its own it runs while the main thread writes.
 */
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { compoundDocument } from '../src/domain/compound';
import { actionStart, bulkLinesAfter, encodeParts } from '../src/engine/bulk';
import { ByteCounter, FileFormatError, readRowBatches } from './read';
import { Reject, rejectMalformed } from './reject';
import { checkStructure, parseUci } from './structure-rules';

/** A Standard InChIKey's length (14 + 10 + 1 letters, two hyphens): keys are joined without separators. */
const keyLength = 27;

/**
 * `index`: the compounds index, named in each document's bulk action line; a batch is `batchSize`
 * rows, or fewer once they hold `batchChars` characters.
 */
export interface ReaderOptions {
  file: string;
  maxInchiLength: number;
  loadId: string;
  batchSize: number;
  batchChars: number;
  index: string;
}

/**
 * One batch, as few strings as possible (a batch crosses threads as a copy, except `documents`,
 * whose memory is handed over): the accepted rows' keys (`keyLength` characters each), raw rows
 * joined, with where each ends, and their documents, encoded. A document is its two lines of a bulk
 * body (a `create` of its key), so a batch whose rows are all new is sent as it came.
 * `documentEnds` (in bytes) repeats the previous end for a row given by key alone.
 */
export interface CheckedBatch {
  bytesRead: number;
  rowsRead: number;
  /** The highest UCI of the batch's rows, rejected ones included: what the loader reserves. */
  highest: number;
  rejects: { line: number; raw: string; code: string; message: string }[];
  lines: number[];
  ucis: number[];
  keys: string;
  raws: string;
  rawEnds: number[];
  documents: Buffer;
  documentEnds: number[];
}

/**
 * One row of a batch that passed the rules. Its document (its bulk lines) is bytes `documentStart`
 * to `documentEnd` of the batch's documents: none when they are equal (the row gave only a key).
 */
export interface CheckedRow {
  line: number;
  raw: string;
  uci: number;
  key: string;
  documentStart: number;
  documentEnd: number;
}

/** The rows of a checked batch. */
export function rowsOf(batch: CheckedBatch): CheckedRow[] {
  let raw = 0;
  let document = 0;
  return batch.lines.map((line, i) => {
    const row: CheckedRow = {
      line,
      uci: batch.ucis[i],
      key: batch.keys.slice(i * keyLength, (i + 1) * keyLength),
      raw: batch.raws.slice(raw, batch.rawEnds[i]),
      documentStart: document,
      documentEnd: batch.documentEnds[i],
    };
    raw = batch.rawEnds[i];
    document = batch.documentEnds[i];
    return row;
  });
}

/** Applies the loading rules to a batch of rows (`fields`: uci, standardinchi, standardinchikey). */
function checkBatch(
  rows: { line: number; raw: string; fields: Record<string, string> }[],
  options: ReaderOptions,
  bytesRead: number,
): CheckedBatch {
  const batch: CheckedBatch = {
    bytesRead,
    rowsRead: rows.length,
    highest: 0,
    rejects: [],
    lines: [],
    ucis: [],
    keys: '',
    raws: '',
    rawEnds: [],
    documents: Buffer.alloc(0),
    documentEnds: [],
  };
  const keys: string[] = [];
  const raws: string[] = [];
  const documents: string[] = [];
  const create = actionStart('create', options.index);
  let rawEnd = 0;
  let documentEnd = 0;
  for (const row of rows) {
    try {
      rejectMalformed(row.fields);
      const uci = parseUci(row.fields.uci);
      batch.highest = Math.max(batch.highest, uci);
      const checked = checkStructure(row.fields.standardinchi, row.fields.standardinchikey, options.maxInchiLength);
      if (checked.parsed) {
        const document = bulkLinesAfter(
          create,
          checked.standardInchiKey,
          JSON.stringify(compoundDocument(uci, checked.standardInchiKey, checked.parsed, options.loadId)),
        );
        documents.push(document);
        documentEnd += document.length;
      }
      batch.lines.push(row.line);
      batch.ucis.push(uci);
      keys.push(checked.standardInchiKey);
      raws.push(row.raw);
      batch.rawEnds.push((rawEnd += row.raw.length));
      batch.documentEnds.push(documentEnd); // in characters until the documents are encoded
    } catch (error) {
      if (!(error instanceof Reject)) throw error;
      batch.rejects.push({ line: row.line, raw: row.raw, code: error.code, message: error.message });
    }
  }
  batch.keys = keys.join('');
  batch.raws = raws.join('');
  const encoded = encodeParts(documents, batch.documentEnds);
  batch.documents = encoded.body;
  batch.documentEnds = encoded.ends;
  return batch;
}

type Message = { batch: CheckedBatch } | { done: true } | { error: string; fileFormat: boolean };

/** The worker's side: reads the table, posting each batch once the loader has room for it. */
export function readInWorker(): void {
  if (isMainThread || !parentPort) throw new Error('readInWorker runs in a worker thread');
  const port = parentPort;
  const options = workerData as ReaderOptions;
  let credits = 2;
  let wake: (() => void) | undefined;
  port.on('message', () => {
    credits += 1;
    wake?.();
  });
  const post = (message: Message): void => {
    // A batch's documents (most of its bytes) are handed over, not copied, when their memory is
    // theirs alone: small encodings share Node's buffer pool.
    const documents = 'batch' in message ? message.batch.documents : undefined;
    const own =
      documents !== undefined &&
      documents.byteOffset === 0 &&
      documents.buffer.byteLength === documents.length &&
      documents.length > 0;
    port.postMessage(message, own ? [documents.buffer as ArrayBuffer] : []);
  };
  void (async () => {
    const counter = new ByteCounter(0);
    for await (const rows of readRowBatches(options.file, 'tsv', options.batchSize, counter, options.batchChars)) {
      while (credits === 0)
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      credits -= 1;
      post({ batch: checkBatch(rows, options, counter.bytesRead) });
    }
    post({ done: true });
  })().catch((error: Error) => post({ error: error.message, fileFormat: error instanceof FileFormatError }));
}

/** The checked batches of a structure table, read by a worker thread a few batches ahead. */
export async function* readCheckedStructures(options: ReaderOptions): AsyncGenerator<CheckedBatch> {
  // A few batches live at a time (at most `batchChars` characters of rows each, and documents of up
  // to six times their rows' length, for long InChIs of many components): a bounded heap keeps V8
  // from growing it far beyond that, which the loader's peak RSS would show.
  const worker = new Worker(join(__dirname, 'structure-reader.cjs'), {
    workerData: options,
    resourceLimits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 128 },
  });
  const queue: CheckedBatch[] = [];
  let done = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  worker.on('message', (message: Message) => {
    // A Buffer arrives as a plain Uint8Array over the same memory.
    if ('batch' in message) {
      const { documents } = message.batch;
      queue.push({
        ...message.batch,
        documents: Buffer.from(documents.buffer, documents.byteOffset, documents.length),
      });
    } else if ('done' in message) {
      done = true;
    } else {
      failure = message.fileFormat ? new FileFormatError(message.error) : new Error(message.error);
    }
    wake?.();
  });
  worker.on('error', (error) => {
    failure ??= new Error(`the structure reader failed: ${error.message}`);
    wake?.();
  });
  worker.on('exit', (code) => {
    if (!done) failure ??= new Error(`the structure reader stopped (exit ${code})`);
    wake?.();
  });
  try {
    for (;;) {
      const batch = queue.shift();
      if (batch) {
        worker.postMessage('more');
        yield batch;
      } else if (failure) {
        throw failure;
      } else if (done) {
        return;
      } else {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    }
  } finally {
    await worker.terminate();
  }
}
