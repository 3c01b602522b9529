/**
 * What every load shares: counters, the rejects file, the progress bar on a terminal, and the load
 * record in the meta index (with a heartbeat, so a killed load can be told from a running one).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../src/config';
import type { LoadRecord } from '../src/engine/documents';
import type { Engine } from '../src/engine/client';
import { writeBulkBatches, type BulkBatch, type BulkFailure } from '../src/engine/bulk';
import { heartbeatEveryMs, saveLoadRecord } from '../src/engine/loads';
import { createRejectsIndex, publishRejects, writeRejects, type RejectDocument } from '../src/engine/rejects';
import { stderrLog } from '../src/log';
import { createReleaseIndex } from '../src/engine/schema';
import { refusalReasons, ReleaseRefused, type ReleaseFigures } from './guard';
import type { ReleaseName } from './publish';
import { readAhead, type ByteCounter, type Row, type RowRef } from './read';
import { Reject } from './reject';

// Loaders take Reject from here with the rest of a load; the structure rules and the reader's worker
// import ./reject itself, which keeps the engine client out of the worker.
export { Reject };

export interface LoadOptions {
  dryRun: boolean;
  rejectsFile?: string;
  /** Progress on stderr; on by default when stderr is a terminal. */
  progress?: boolean;
  /** Publish a release even when the guard would refuse it (guard.ts). */
  allowShrink?: boolean;
  /** The release a source load publishes (--release, --release-date as an ISO timestamp). */
  release?: { number?: string; date?: string };
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** One run of `npm run load`: counts rows, writes rejects, shows progress and keeps the load record. */
export class LoadRun {
  readonly loadId = `${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
  readonly started = new Date();
  rowsRead = 0;
  rowsLoaded = 0;
  rowsRejected = 0;
  readonly rejectsByReason: Record<string, number> = {};
  /** The sources a reference table replaced, for the load record. */
  sourceIds?: number[];
  /** The assignments written for each source, when the load replaced several (a reference table). */
  rowsLoadedBySource?: Record<string, number>;
  /** The release a source load publishes, for the load record. */
  release?: ReleaseName;
  /** The load recorded its changes of its sources' current assignments (loaders/changes.ts). */
  changesRecorded = false;
  /** Extra figures for the summary line (sources replaced, structures created, ...). */
  readonly details: Record<string, unknown> = {};
  private rejects?: WriteStream;
  readonly rejectsPath: string;
  /** Rejected rows waiting to be indexed, the rejects index once created, and how many it holds. */
  private rejectsToIndex: RejectDocument[] = [];
  private rejectsIndex?: string;
  private rejectsIndexed = 0;
  private rejectsIndexError?: string;
  private counter?: ByteCounter;
  private lastDraw = 0;
  private lastLogged = Date.now();
  private heartbeat?: NodeJS.Timeout;
  private beating?: Promise<void>;
  private record: LoadRecord;
  private readonly showProgress: boolean;

  constructor(
    readonly engine: Engine,
    readonly config: Config,
    readonly command: string,
    readonly file: string | null,
    readonly options: LoadOptions,
  ) {
    this.rejectsPath = resolve(options.rejectsFile ?? `rejects/${this.loadId}-${command}.tsv`);
    this.showProgress = options.progress ?? Boolean(process.stderr.isTTY);
    this.record = {
      kind: 'load',
      loadId: this.loadId,
      command,
      file,
      status: 'running',
      dryRun: options.dryRun,
      rowsRead: 0,
      rowsLoaded: 0,
      rowsRejected: 0,
      rejectsByReason: {},
      started: this.started.toISOString(),
      heartbeat: this.started.toISOString(),
      ended: null,
      seconds: null,
      host: hostname(),
      pid: process.pid,
    };
  }

  get dryRun(): boolean {
    return this.options.dryRun;
  }

  /** Follows the bytes read of the current file, for the percentage and the ETA. */
  track(counter: ByteCounter): void {
    this.counter = counter;
  }

  /** Records the release index this load writes, so a concurrent cleanup spares it. */
  async begin(extra: Partial<LoadRecord> = {}): Promise<void> {
    Object.assign(this.record, extra);
    if (this.dryRun) return;
    await saveLoadRecord(this.engine, this.record);
    // On a timer, not per batch: a batch held up by a slow engine must not make the load look killed.
    this.heartbeat = setInterval(() => {
      this.beating ??= saveLoadRecord(this.engine, { ...this.snapshot(), heartbeat: new Date().toISOString() })
        .catch(() => undefined)
        .finally(() => {
          this.beating = undefined;
        });
    }, heartbeatEveryMs);
    this.heartbeat.unref();
  }

  /**
   * Creates the fresh release index this load writes, sized for `expectedAssignments` (or made by
   * `create`: a clone), recording its name in the load record first, so that a sweep by a load
   * starting meanwhile never takes it for a leftover.
   */
  async createIndex(
    tag: number | 'dump',
    expectedAssignments: number,
    create = (index: string): Promise<void> => createReleaseIndex(this.engine, index, expectedAssignments),
  ): Promise<string> {
    const index = this.engine.names.assignmentsRelease(tag);
    this.record.index = index;
    await saveLoadRecord(this.engine, { ...this.snapshot(), heartbeat: new Date().toISOString() });
    await create(index);
    return index;
  }

  /** Records in the load record the release index this load publishes without writing it (a rollback's). */
  async recordIndex(index: string): Promise<void> {
    this.record.index = index;
    await this.checkpoint();
  }

  /**
   * Set once the load's release is served: a failure after that leaves its record running, for the
   * next sweep or `doctor` to finish the load (a rollback's), instead of marking it failed.
   */
  served = false;

  /** Stops the heartbeat and leaves the record as it is, for a sweep to find the load interrupted. */
  abandon(): void {
    clearInterval(this.heartbeat);
  }

  /** Saves the load record as it stands now (a dry run saves nothing). */
  async checkpoint(): Promise<void> {
    if (this.dryRun) return;
    await saveLoadRecord(this.engine, { ...this.snapshot(), heartbeat: new Date().toISOString() });
  }

  reject(row: Row | { line: number; raw: string }, reason: Reject): void {
    this.rowsRejected += 1;
    this.rejectsByReason[reason.code] = (this.rejectsByReason[reason.code] ?? 0) + 1;
    if (!this.rejects) {
      mkdirSync(dirname(this.rejectsPath), { recursive: true });
      this.rejects = createWriteStream(this.rejectsPath);
      this.rejects.write('line\treason\tmessage\trow\n');
    }
    const clean = (text: string): string => text.replace(/[\t\r\n]+/g, ' ');
    this.rejects.write(`${row.line}\t${reason.code}\t${clean(reason.message)}\t${clean(row.raw).slice(0, 10_000)}\n`);
    if (!this.dryRun && this.rejectsIndexed + this.rejectsToIndex.length < this.config.REJECTS_INDEXED) {
      const fromRow = 'fields' in row ? Number(row.fields.src_id) : NaN;
      this.rejectsToIndex.push({
        loadId: this.loadId,
        command: this.command,
        file: this.file,
        sourceId: this.record.sourceId ?? (Number.isSafeInteger(fromRow) && fromRow > 0 ? fromRow : null),
        line: row.line,
        reason: reason.code,
        message: reason.message,
        row: row.raw.slice(0, 10_000),
        time: new Date().toISOString(),
      });
    }
  }

  /**
   * Indexes the rejected rows gathered so far. A failure stops the indexing, not the load: the
   * rejects file still holds every row, and the summary says why the index does not.
   */
  private async indexRejects(): Promise<void> {
    if (this.rejectsToIndex.length === 0 || this.rejectsIndexError) return;
    const documents = this.rejectsToIndex;
    this.rejectsToIndex = [];
    try {
      this.rejectsIndex ??= await createRejectsIndex(this.engine, this.loadId);
      await writeRejects(this.engine, this.rejectsIndex, documents);
      this.rejectsIndexed += documents.length;
    } catch (error) {
      this.rejectsIndexError = (error as Error).message;
    }
  }

  /** After the last batch: indexes what is left and makes this load's rejects the last load's. */
  private async publishRejects(): Promise<void> {
    await this.indexRejects();
    if (this.rejectsIndex && !this.rejectsIndexError) {
      await publishRejects(this.engine, this.loadId, this.config.REJECTS_KEPT_LOADS).catch((error: Error) => {
        this.rejectsIndexError = error.message;
      });
    }
    if (this.rejectsIndex) this.details.rejectsIndexed = this.rejectsIndexed;
    if (this.rejectsIndexError)
      this.details.rejectsIndexError =
        `rejected rows not indexed past ${this.rejectsIndexed}: ` +
        `${this.rejectsIndexError} (the rejects file has them all)`;
  }

  /**
   * Called after each batch: redraws the progress bar on a terminal; elsewhere (a log collector, a
   * container) writes a JSON progress line on stderr every LOAD_PROGRESS_EVERY, unless --no-progress.
   */
  async tick(): Promise<void> {
    if (this.rejectsToIndex.length >= 1_000) await this.indexRejects();
    const now = Date.now();
    if (
      !this.showProgress &&
      this.options.progress !== false &&
      now - this.lastLogged >= this.config.LOAD_PROGRESS_EVERY
    ) {
      this.lastLogged = now;
      const seconds = (now - this.started.getTime()) / 1000;
      const total = this.counter?.totalBytes ?? 0;
      stderrLog.info('load progress', {
        loadId: this.loadId,
        command: this.command,
        file: this.file,
        rowsRead: this.rowsRead,
        rowsRejected: this.rowsRejected,
        rowsPerSecond: Math.round(this.rowsRead / Math.max(seconds, 0.001)),
        ...(total > 0 ? { percent: Math.round(Math.min(this.counter!.bytesRead / total, 1) * 1000) / 10 } : {}),
      });
    }
    if (this.showProgress && now - this.lastDraw > 200) {
      this.lastDraw = now;
      const seconds = (now - this.started.getTime()) / 1000;
      const rate = this.rowsRead / Math.max(seconds, 0.001);
      let bar = '';
      if (this.counter && this.counter.totalBytes > 0) {
        const done = Math.min(this.counter.bytesRead / this.counter.totalBytes, 1);
        const width = 24;
        const eta = done > 0 ? (seconds * (1 - done)) / done : Infinity;
        bar =
          `[${'#'.repeat(Math.round(done * width)).padEnd(width, '.')}] ` +
          `${(done * 100).toFixed(1)}% ETA ${formatDuration(eta)} `;
      }
      process.stderr.write(
        `\r${this.command} ${bar}${this.rowsRead} rows ${Math.round(rate)} rows/s ${this.rowsRejected} rejected  `,
      );
    }
  }

  private snapshot(): LoadRecord {
    return {
      ...this.record,
      ...(this.sourceIds ? { sourceIds: this.sourceIds } : {}),
      ...(this.rowsLoadedBySource ? { rowsLoadedBySource: this.rowsLoadedBySource } : {}),
      ...(this.release ? { releaseNumber: this.release.number, releaseDate: this.release.date } : {}),
      ...(this.changesRecorded ? { changesRecorded: true } : {}),
      rowsRead: this.rowsRead,
      rowsLoaded: this.rowsLoaded,
      rowsRejected: this.rowsRejected,
      rejectsByReason: { ...this.rejectsByReason },
    };
  }

  /** Notes how the release was published when it could not be fully replicated (a node gone); also on stderr. */
  readonly note = (note: string): void => {
    this.details.replication = note;
    process.stderr.write(`${note}\n`);
  };

  /** Notes the rows that repeat another row of the file (read, neither loaded again nor rejected). */
  countRepeatedRows(): void {
    const repeated = this.rowsRead - this.rowsLoaded - this.rowsRejected;
    if (repeated > 0) this.details.repeatedRows = repeated;
  }

  /**
   * Weighs the release before it is published: throws ReleaseRefused when the guard refuses it
   * (a dry run too, so that it says whether the real load would be refused), unless --allow-shrink.
   */
  guard(sources: ReleaseFigures[]): void {
    const reasons = refusalReasons(this, sources, this.config);
    if (reasons.length === 0) return;
    if (this.options.allowShrink) {
      this.details.allowedShrink = reasons;
      return;
    }
    this.details.refused = reasons;
    throw new ReleaseRefused(reasons);
  }

  /** Closes the rejects file, saves the final record and returns the summary line's object. */
  async finish(status: LoadRecord['status'], message?: string): Promise<Record<string, unknown>> {
    clearInterval(this.heartbeat);
    await this.beating; // a heartbeat landing after the final record would mark the load running again
    if (this.showProgress) process.stderr.write('\n');
    if (this.rejects) await new Promise<void>((done) => this.rejects!.end(done));
    await this.publishRejects();
    const ended = new Date();
    const seconds = Math.round((ended.getTime() - this.started.getTime()) / 10) / 100;
    const record: LoadRecord = {
      ...this.snapshot(),
      status,
      ended: ended.toISOString(),
      heartbeat: ended.toISOString(),
      seconds,
      message: message ?? null,
    };
    if (!this.dryRun) await saveLoadRecord(this.engine, record).catch(() => undefined);
    return {
      command: this.command,
      file: this.file,
      status,
      dryRun: this.dryRun,
      rowsRead: this.rowsRead,
      rowsLoaded: this.rowsLoaded,
      rowsRejected: this.rowsRejected,
      rejectedByReason: this.rejectsByReason,
      rejectsFile: this.rowsRejected > 0 ? this.rejectsPath : null,
      ...this.details,
      seconds,
      loadId: this.loadId,
      ...(message ? { error: message } : {}),
    };
  }
}

/**
 * Writes `batches`, the next two prepared while this one is written; a dry run only walks them.
 * Returns how many documents were written.
 */
export async function writeBatches<C extends RowRef>(
  run: LoadRun,
  batches: AsyncIterable<BulkBatch<C>>,
  onFailure: (failure: BulkFailure<C>) => void,
): Promise<number> {
  const prepared = readAhead(batches, 2);
  if (run.dryRun) {
    for await (const batch of prepared) void batch;
    return 0;
  }
  return (await writeBulkBatches(run.engine, prepared, onFailure)).written;
}
