/**
 * Bulk mapping jobs in the engine: one document a job (its state) in `{prefix}-jobs`, and its queries
 * and results as parts of NDJSON lines in `{prefix}-job-parts`. Query parts hold a fixed number of
 * lines each (line N is in part N / queryPartLines); result parts hold up to a number of lines or
 * bytes and say which lines (`from`, `count`), so a download resumes from any line.
 */
import type { Engine } from './client';
import { mappingOf } from './client';
import { engineErrorTypes } from './errors';
import { deleteWhere } from './loads';
import { targetReplicas } from './schema';

export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

export interface JobDocument {
  jobId: string;
  status: JobStatus;
  total: number;
  /** Lines of results written. */
  done: number;
  /** Lines whose status is not 200. */
  errors: number;
  queryBytes: number;
  resultBytes: number;
  created: string;
  started: string | null;
  finished: string | null;
  expires: string;
  /** Why a failed job failed. */
  error: string | null;
  /** The process running it, and when it last said it still is (a lease: a stale one is taken over). */
  owner: string | null;
  heartbeat: string | null;
  /** When the current run started, and `done` then: the rate is that run's. */
  runningSince: string | null;
  doneAtStart: number;
}

export interface JobPart {
  jobId: string;
  kind: 'queries' | 'results';
  part: number;
  from: number;
  count: number;
  /** NDJSON, one line per query or result. */
  lines: string;
}

/** A job with what an optimistic update of it needs. */
export interface StoredJob {
  job: JobDocument;
  seqNo: number;
  primaryTerm: number;
}

export const queryPartLines = 1000;

const partId = (jobId: string, kind: JobPart['kind'], part: number): string => `${jobId}-${kind}-${part}`;

/** Creates the two jobs indices when missing (safe to race). */
export async function ensureJobIndices(engine: Engine): Promise<void> {
  const replicas = await targetReplicas(engine);
  for (const [index, name] of [
    [engine.names.jobs, 'jobs'],
    [engine.names.jobParts, 'job-parts'],
  ] as const) {
    if (await engine.client.indices.exists({ index })) continue;
    const { settings, mappings } = mappingOf(name);
    await engine.client.indices
      .create({ index, mappings, settings: { index: { ...(settings.index as object), number_of_replicas: replicas } } })
      .catch((error) => {
        if (!/resource_already_exists_exception/.test(String(error))) throw error;
      });
  }
}

const missingIndex = (error: unknown): boolean => engineErrorTypes(error).includes('index_not_found_exception');

/** Jobs queued or running and not expired, and the bytes every kept job holds. */
export async function jobsInUse(engine: Engine, now = new Date()): Promise<{ active: number; bytes: number }> {
  try {
    const result = await engine.client.search({
      index: engine.names.jobs,
      size: 0,
      track_total_hits: false,
      aggs: {
        active: {
          filter: {
            bool: {
              filter: [{ terms: { status: ['queued', 'running'] } }, { range: { expires: { gt: now.toISOString() } } }],
            },
          },
        },
        queryBytes: { sum: { field: 'queryBytes' } },
        resultBytes: { sum: { field: 'resultBytes' } },
      },
    });
    const aggs = result.aggregations as {
      active: { doc_count: number };
      queryBytes: { value: number };
      resultBytes: { value: number };
    };
    return { active: aggs.active.doc_count, bytes: aggs.queryBytes.value + aggs.resultBytes.value };
  } catch (error) {
    if (missingIndex(error)) return { active: 0, bytes: 0 };
    throw error;
  }
}

/**
 * Writes parts of lines (queries or results); throws with the engine's reason if it refuses one.
 * Results are found by search (which part holds line N): they are searchable when this returns.
 */
export async function writeParts(engine: Engine, parts: JobPart[]): Promise<void> {
  if (parts.length === 0) return;
  const refresh = parts.some((part) => part.kind === 'results');
  const result = await engine.client.bulk({
    refresh,
    operations: parts.flatMap((part) => [
      { index: { _index: engine.names.jobParts, _id: partId(part.jobId, part.kind, part.part) } },
      part,
    ]),
  });
  if (!result.errors) return;
  const refused = result.items.find((item) => item.index?.error)?.index?.error;
  throw new Error(`the engine refused a part of a job: ${refused?.reason ?? refused?.type ?? 'unknown reason'}`);
}

/** Creates or replaces a job's document, visible to searches when this returns. */
export async function putJob(engine: Engine, job: JobDocument): Promise<void> {
  await engine.client.index({ index: engine.names.jobs, id: job.jobId, document: job, refresh: 'wait_for' });
}

export async function getJob(engine: Engine, jobId: string): Promise<StoredJob | undefined> {
  try {
    const found = await engine.client.get<JobDocument>({ index: engine.names.jobs, id: jobId }, { ignore: [404] });
    if (!found.found || !found._source) return undefined;
    return { job: found._source, seqNo: found._seq_no!, primaryTerm: found._primary_term! };
  } catch (error) {
    if (missingIndex(error)) return undefined;
    throw error;
  }
}

/**
 * Changes a job's document if nobody changed it since `stored` was read; the job as changed, or
 * undefined when another process got there first. A change of status is visible to searches (the
 * count of active jobs, the next job to run) when this returns; progress is read by id, and is not
 * waited for.
 */
export async function updateJob(
  engine: Engine,
  stored: StoredJob,
  changes: Partial<JobDocument>,
): Promise<StoredJob | undefined> {
  const job = { ...stored.job, ...changes };
  const refresh = job.status !== stored.job.status ? 'wait_for' : false;
  try {
    const result = await engine.client.index({
      index: engine.names.jobs,
      id: job.jobId,
      document: job,
      if_seq_no: stored.seqNo,
      if_primary_term: stored.primaryTerm,
      refresh,
    });
    return { job, seqNo: result._seq_no!, primaryTerm: result._primary_term! };
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 409) return undefined;
    throw error;
  }
}

/** The oldest job waiting to run: queued, or running under a lease not renewed since `staleBefore`. */
export async function nextJobToRun(
  engine: Engine,
  staleBefore: Date,
  now = new Date(),
): Promise<StoredJob | undefined> {
  try {
    const result = await engine.client.search<JobDocument>({
      index: engine.names.jobs,
      size: 1,
      seq_no_primary_term: true,
      sort: [{ created: 'asc' }],
      query: {
        bool: {
          filter: [{ range: { expires: { gt: now.toISOString() } } }],
          should: [
            { term: { status: 'queued' } },
            {
              bool: {
                filter: [{ term: { status: 'running' } }, { range: { heartbeat: { lt: staleBefore.toISOString() } } }],
              },
            },
          ],
          minimum_should_match: 1,
        },
      },
    });
    const hit = result.hits.hits[0];
    return hit?._source ? { job: hit._source, seqNo: hit._seq_no!, primaryTerm: hit._primary_term! } : undefined;
  } catch (error) {
    if (missingIndex(error)) return undefined;
    throw error;
  }
}

/** A query part of a job, by number. */
export async function queryPart(engine: Engine, jobId: string, part: number): Promise<JobPart | undefined> {
  const found = await engine.client.get<JobPart>(
    { index: engine.names.jobParts, id: partId(jobId, 'queries', part) },
    { ignore: [404] },
  );
  return found.found ? found._source : undefined;
}

/** The result parts of a job holding lines from `fromLine` on, in order, one read at a time. */
export async function* resultParts(engine: Engine, jobId: string, fromLine: number): AsyncGenerator<JobPart> {
  // The part holding line `fromLine`, then the ones after it.
  const first = await engine.client.search<JobPart>({
    index: engine.names.jobParts,
    size: 1,
    sort: [{ from: 'desc' }],
    query: {
      bool: { filter: [{ term: { jobId } }, { term: { kind: 'results' } }, { range: { from: { lte: fromLine } } }] },
    },
  });
  let part = first.hits.hits[0]?._source;
  while (part) {
    yield part;
    const next = await engine.client.search<JobPart>({
      index: engine.names.jobParts,
      size: 1,
      sort: [{ from: 'asc' }],
      query: {
        bool: {
          filter: [
            { term: { jobId } },
            { term: { kind: 'results' } },
            { range: { from: { gte: part.from + part.count } } },
          ],
        },
      },
    });
    part = next.hits.hits[0]?._source;
  }
}

/** Deletes a job's results (a run starting again from `fromLine` replaces those after it). */
export async function deleteResultsFrom(engine: Engine, jobId: string, fromLine: number): Promise<void> {
  await deleteWhere(engine, engine.names.jobParts, {
    bool: { filter: [{ term: { jobId } }, { term: { kind: 'results' } }, { range: { from: { gte: fromLine } } }] },
  });
}

/** Deletes jobs (their documents and parts); the ids of jobs expired by `now` when `jobIds` is not given. */
export async function deleteJobs(engine: Engine, jobIds?: string[], now = new Date()): Promise<string[]> {
  let ids = jobIds;
  try {
    if (!ids) {
      const expired = await engine.client.search<JobDocument>({
        index: engine.names.jobs,
        size: 1000,
        _source: ['jobId'],
        query: { range: { expires: { lte: now.toISOString() } } },
      });
      ids = expired.hits.hits.map((hit) => hit._id!);
    }
    if (ids.length === 0) return [];
    await deleteWhere(engine, engine.names.jobParts, { terms: { jobId: ids } });
    await engine.client.bulk({
      refresh: true,
      operations: ids.map((id) => ({ delete: { _index: engine.names.jobs, _id: id } })),
    });
    return ids;
  } catch (error) {
    if (missingIndex(error)) return [];
    throw error;
  }
}
