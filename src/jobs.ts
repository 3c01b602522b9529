/**
 * Bulk mapping jobs (docs/api.md): up to JOB_MAX_QUERIES queries taken at once and answered in the
 * background, one job at a time per API process, JOB_CONCURRENCY queries at a time (the job's share
 * of the engine, next to the lookups). Jobs, their queries and their results live in the engine, so
 * a job survives a restart of the API: a process that stops hands its job back (queued, with what is
 * done), and a job whose process died is taken over once its lease is stale. Results are written a
 * part at a time, and `done` moves only once a part is stored: a run that starts again begins at
 * `done`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from './config';
import type { Engine } from './engine/client';
import {
  deleteJobs,
  deleteResultsFrom,
  ensureJobIndices,
  getJob,
  jobsInUse,
  nextJobToRun,
  putJob,
  queryPart,
  queryPartLines,
  resultParts,
  updateJob,
  writeParts,
  type JobDocument,
  type JobPart,
  type StoredJob,
} from './engine/jobs';
import { log } from './log';
import { parseLine, serialiseLine, type AnswerLine, type QueryAnswerer } from './api/v1/answer';

export type { JobDocument } from './engine/jobs';

/** A job id: 128 random bits, as 32 hex digits; one caller cannot guess another's. */
export const jobIdPattern = /^[0-9a-f]{32}$/;

/** Result parts close at this many lines or bytes, whichever comes first. */
const resultPartLines = 1000;
const resultPartBytes = 8 * 1024 * 1024;
/** A running job's process renews its lease this often; a lease three times older is taken over. */
const heartbeatMs = 2_000;
const staleAfterMs = 3 * heartbeatMs;

export class JobRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** Where the queries of a new job are written while they are read, a part at a time. */
export class JobWriter {
  private lines: string[] = [];
  private bytes = 0;
  private part = 0;
  total = 0;

  constructor(
    private readonly engine: Engine,
    readonly jobId: string,
    private readonly maxQueries: number,
  ) {}

  /**
   * Adds one query, as its NDJSON line (not parsed: a line that is not JSON gets its error in its place); JobRefused
   * (413) past JOB_MAX_QUERIES.
   */
  async add(line: string): Promise<void> {
    if (this.total === this.maxQueries)
      throw new JobRefused(
        413,
        `the job has more than the ${this.maxQueries} queries a job may hold ` +
          `(JOB_MAX_QUERIES): split it into several jobs`,
      );
    this.lines.push(line);
    this.bytes += Buffer.byteLength(line) + 1;
    this.total += 1;
    if (this.lines.length === queryPartLines) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.lines.length === 0) return;
    const part: JobPart = {
      jobId: this.jobId,
      kind: 'queries',
      part: this.part,
      from: this.part * queryPartLines,
      count: this.lines.length,
      lines: `${this.lines.join('\n')}\n`,
    };
    this.lines = [];
    this.part += 1;
    await writeParts(this.engine, [part]);
  }

  get queryBytes(): number {
    return this.bytes;
  }
}

export class Jobs {
  private readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private stopped = false;
  private wake?: () => void;
  private loop?: Promise<void>;
  private current?: StoredJob;
  private updating: Promise<unknown> = Promise.resolve();
  private lastSweep = 0;

  constructor(
    private readonly engine: Engine,
    private readonly config: Config,
    private readonly answerer: QueryAnswerer,
  ) {}

  /** Checks that a new job may be taken now: JobRefused (429 or 507) otherwise. */
  async admit(): Promise<void> {
    const { active, bytes } = await jobsInUse(this.engine);
    if (active >= this.config.JOB_MAX_ACTIVE) throw this.tooManyJobs(active);
    if (bytes >= this.config.JOBS_MAX_BYTES) {
      throw new JobRefused(
        507,
        `the jobs kept hold ${bytes} bytes, the most this service keeps ` +
          `(JOBS_MAX_BYTES ${this.config.JOBS_MAX_BYTES}): try again when older ` +
          `jobs have expired`,
      );
    }
  }

  /** A writer for the queries of a new job. */
  async writer(): Promise<JobWriter> {
    await ensureJobIndices(this.engine);
    return new JobWriter(this.engine, randomBytes(16).toString('hex'), this.config.JOB_MAX_QUERIES);
  }

  private tooManyJobs(active: number): JobRefused {
    return new JobRefused(
      429,
      `${active} jobs are queued or running, the most this service takes at ` +
        `once (JOB_MAX_ACTIVE ${this.config.JOB_MAX_ACTIVE}): try again when ` +
        `one has finished`,
      60,
    );
  }

  /**
   * Queues the job whose queries `writer` wrote; JobRefused (429) when others were queued meanwhile
   * (the caller then discards what the writer wrote, as for any refusal).
   */
  async submit(writer: JobWriter): Promise<JobDocument> {
    await writer.flush();
    const now = new Date();
    const job: JobDocument = {
      jobId: writer.jobId,
      status: 'queued',
      total: writer.total,
      done: 0,
      errors: 0,
      queryBytes: writer.queryBytes,
      resultBytes: 0,
      created: now.toISOString(),
      started: null,
      finished: null,
      expires: new Date(now.getTime() + this.config.JOB_TTL).toISOString(),
      error: null,
      owner: null,
      heartbeat: null,
      runningSince: null,
      doneAtStart: 0,
    };
    // Two submissions may both have been admitted: counted again with this one queued, the later gives way.
    await putJob(this.engine, job);
    const { active } = await jobsInUse(this.engine);
    if (active > this.config.JOB_MAX_ACTIVE) throw this.tooManyJobs(active - 1);
    this.wake?.();
    return job;
  }

  /** Deletes a job and whatever it wrote (a submission refused half-way). */
  async discard(jobId: string): Promise<void> {
    await deleteJobs(this.engine, [jobId]).catch((error: Error) =>
      log.error('could not delete a refused job', { jobId, error: error.message }),
    );
  }

  /** The job, unless unknown or expired. */
  async get(jobId: string): Promise<JobDocument | undefined> {
    if (!jobIdPattern.test(jobId)) return undefined;
    const stored = await getJob(this.engine, jobId);
    if (!stored || Date.parse(stored.job.expires) <= Date.now()) return undefined;
    return stored.job;
  }

  /** The result lines of a job from line `from` (0-based), as far as they are written. */
  async *results(job: JobDocument, from: number): AsyncGenerator<string> {
    for await (const part of resultParts(this.engine, job.jobId, from)) {
      if (part.from >= job.done) return;
      const skip = Math.max(0, from - part.from);
      const take = Math.min(part.count, job.done - part.from);
      if (skip === 0 && take === part.count) {
        yield part.lines;
        continue;
      }
      const lines = part.lines.split('\n').slice(skip, take);
      if (lines.length > 0) yield `${lines.join('\n')}\n`;
    }
  }

  /** Starts running jobs in the background; `stop` hands the running one back. */
  start(): void {
    if (this.loop) return;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  private async idle(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (Date.now() - this.lastSweep > 60_000) {
          this.lastSweep = Date.now();
          const expired = await deleteJobs(this.engine);
          if (expired.length > 0) log.info('expired jobs deleted', { jobs: expired.length });
        }
        const next = await nextJobToRun(this.engine, new Date(Date.now() - staleAfterMs));
        const claimed =
          next &&
          (await updateJob(this.engine, next, {
            status: 'running',
            owner: this.owner,
            heartbeat: new Date().toISOString(),
            runningSince: new Date().toISOString(),
            doneAtStart: next.job.done,
            started: next.job.started ?? new Date().toISOString(),
          }));
        if (claimed) await this.runJob(claimed);
        else await this.idle(1_000);
      } catch (error) {
        log.error('the job runner failed; it tries again shortly', { error: (error as Error).message });
        await this.idle(5_000);
      }
    }
  }

  /** Answers a claimed job's queries from `done` on, a part at a time. */
  private async runJob(claimed: StoredJob): Promise<void> {
    this.current = claimed;
    const jobId = claimed.job.jobId;
    log.info('job running', { jobId, total: claimed.job.total, done: claimed.job.done });
    // A part written by a run that stopped before it could move `done` goes again.
    await deleteResultsFrom(this.engine, jobId, claimed.job.done);
    const heartbeat = setInterval(() => void this.renew(), heartbeatMs);
    try {
      let pending: AnswerLine[] = [];
      let pendingText = '';
      const queries = this.queriesFrom(jobId, claimed.job.done, claimed.job.total);
      for await (const line of this.answerer.answerInOrder(queries, {
        concurrency: this.config.JOB_CONCURRENCY,
        firstIndex: claimed.job.done,
      })) {
        // The engine unavailable: the line would say 503; the job waits and answers that part again.
        if (line.status === 503) throw new EngineBusy();
        pending.push(line);
        pendingText += serialiseLine(line);
        if (pending.length >= resultPartLines || pendingText.length >= resultPartBytes) {
          if (!(await this.store(pending, pendingText))) return;
          pending = [];
          pendingText = '';
        }
        if (this.stopped) return this.handBack();
      }
      if (pending.length > 0 && !(await this.store(pending, pendingText))) return;
      await this.finish({ status: 'done' });
    } catch (error) {
      if (error instanceof EngineBusy) {
        log.warn('the engine is unavailable: the job waits', { jobId });
        await this.handBack();
        await this.idle(5_000);
        return;
      }
      throw error;
    } finally {
      clearInterval(heartbeat);
      this.current = undefined;
    }
  }

  /** The queries of a job from line `from`, read a part at a time. */
  private async *queriesFrom(jobId: string, from: number, total: number): AsyncGenerator<unknown> {
    for (let part = Math.floor(from / queryPartLines); part * queryPartLines < total; part += 1) {
      if (this.stopped) return;
      const stored = await queryPart(this.engine, jobId, part);
      if (!stored) throw new Error(`job ${jobId} has lost its queries from line ${part * queryPartLines}`);
      const lines = stored.lines.split('\n').slice(Math.max(0, from - stored.from), stored.count);
      for (const line of lines) yield parseLine(line);
    }
  }

  /**
   * Stores a part of results and moves `done`; false when the job is no longer this process's (or too large, and
   * failed).
   */
  private async store(lines: AnswerLine[], text: string): Promise<boolean> {
    const stored = this.current!;
    const job = stored.job;
    const bytes = Buffer.byteLength(text);
    if (job.resultBytes + bytes > this.config.JOB_MAX_BYTES) {
      await this.finish({
        status: 'failed',
        error:
          `the job's results passed ${this.config.JOB_MAX_BYTES} bytes ` +
          `(JOB_MAX_BYTES) after ${job.done} of ${job.total} queries: the ` +
          `results of those are kept; submit the rest as another job`,
      });
      return false;
    }
    await writeParts(this.engine, [
      { jobId: job.jobId, kind: 'results', part: job.done, from: job.done, count: lines.length, lines: text },
    ]);
    const updated = await this.update((current) => ({
      done: current.done + lines.length,
      errors: current.errors + lines.filter((line) => line.status !== 200).length,
      resultBytes: current.resultBytes + bytes,
      heartbeat: new Date().toISOString(),
    }));
    if (!updated) log.warn('another process took the job over', { jobId: job.jobId });
    return updated !== undefined;
  }

  /**
   * Changes the running job's document, one change at a time (the lease's renewals and the parts'
   * progress would otherwise trip over each other's versions); undefined when another process
   * changed it meanwhile (it took the job over).
   */
  private update(changes: (job: JobDocument) => Partial<JobDocument>): Promise<StoredJob | undefined> {
    const next = this.updating.then(async () => {
      const stored = this.current;
      if (!stored) return undefined;
      const updated = await updateJob(this.engine, stored, changes(stored.job));
      if (updated && this.current === stored) this.current = updated;
      return updated;
    });
    this.updating = next.catch(() => undefined);
    return next;
  }

  private async renew(): Promise<void> {
    await this.update(() => ({ heartbeat: new Date().toISOString() })).catch((error: Error) =>
      log.warn("could not renew a job's lease", { error: error.message }),
    );
  }

  private async finish(changes: Partial<JobDocument>): Promise<void> {
    const updated = await this.update(() => ({
      ...changes,
      finished: new Date().toISOString(),
      owner: null,
      heartbeat: null,
    }));
    if (updated)
      log.info('job finished', {
        jobId: updated.job.jobId,
        status: updated.job.status,
        done: updated.job.done,
        errors: updated.job.errors,
      });
  }

  /** Gives the running job back to the queue, with what is done. */
  private async handBack(): Promise<void> {
    const updated = await this.update(() => ({ status: 'queued', owner: null, heartbeat: null, runningSince: null }));
    if (updated) log.info('job handed back', { jobId: updated.job.jobId, done: updated.job.done });
  }
}

class EngineBusy extends Error {}

/** The state of a job as GET /jobs/{id} answers it. */
export function jobView(job: JobDocument, now = Date.now()): object {
  const running = job.status === 'running' && job.runningSince;
  const seconds = running ? (now - Date.parse(job.runningSince!)) / 1000 : 0;
  const ratePerSecond = running && seconds > 0 ? Math.round(((job.done - job.doneAtStart) / seconds) * 10) / 10 : null;
  return {
    jobId: job.jobId,
    status: job.status,
    total: job.total,
    done: job.done,
    errors: job.errors,
    ratePerSecond,
    etaSeconds: ratePerSecond ? Math.ceil((job.total - job.done) / ratePerSecond) : null,
    created: job.created,
    started: job.started,
    finished: job.finished,
    expires: job.expires,
    ...(job.error ? { error: job.error } : {}),
  };
}
