/**
 * The jobs API (docs/api.md): POST /jobs takes NDJSON queries, or a plain list of compounds with their
 * `type` (and `sourceID`, `op`, `searchComponents`) as parameters (with NDJSON, the parameters fill
 * in what a query does not say), streamed into the engine a part at a time, and answers 202 with
 * the job's address; GET /jobs/{jobId} says how far it is; GET /jobs/{jobId}/results?from=N streams
 * the result lines written so far, from line N (none past the last).
 */
import type { Request, RequestHandler } from 'express';
import type { Config } from '../../config';
import { jobView, JobRefused, type JobDocument, type Jobs, type JobWriter } from '../../jobs';
import { maxSourceId, nameType, queryTypes, requireSource, type LookupContext } from '../../domain/lookup';
import { HttpError } from '../errors';
import { operationProblem } from './answer';
import { bodyLines, mediaTypeOf, ndjsonTypes, sentAs, writeOrWait } from './batch';

const listParameters = ['type', 'sourceID', 'op', 'searchComponents'];

/**
 * What the lines of a plain list may be: the types of a query, SMARTS for substructure searches and
 * names for compounds lookups.
 */
const listTypes = [...queryTypes, 'smarts', nameType] as const;

type ListParameters = Record<'type' | 'sourceID' | 'op' | 'searchComponents', string | undefined>;

/**
 * The list parameters of a request, checked as the document describes them: each at most once,
 * `sourceID` a whole number from 1 to 2147483647 naming a source (404 when it names none, before
 * any line is read), `op` and `searchComponents` from their lists.
 */
async function checkedParameters(req: Request, context: LookupContext): Promise<ListParameters> {
  const parameters = req.query as Record<string, unknown>;
  for (const name of Object.keys(parameters)) {
    if (!listParameters.includes(name)) {
      const takes = `a job takes ${listParameters.join(', ')}`;
      throw new HttpError(400, `the parameter "${name}" is not part of this request (unknown parameter): ${takes}`);
    }
    if (typeof parameters[name] !== 'string') {
      throw new HttpError(400, `the parameter "${name}" is given more than once`);
    }
  }
  const { type, sourceID, op, searchComponents } = parameters as ListParameters;
  const types: readonly string[] = listTypes;
  if (type !== undefined && !types.includes(type)) {
    throw new HttpError(400, `"type" must be one of ${types.join(', ')}`);
  }
  if (type === 'smarts' && op !== 'substructure') {
    throw new HttpError(400, '"type" smarts goes with "op" substructure: a SMARTS is a query, not a structure');
  }
  if (type === nameType && op !== undefined && op !== 'compounds') {
    throw new HttpError(400, `"type" name goes with "op" compounds: a name cannot be given to ${op}`);
  }
  if (sourceID !== undefined) {
    if (!/^[0-9]{1,10}$/.test(sourceID) || Number(sourceID) < 1 || Number(sourceID) > maxSourceId) {
      const range = `a whole number from 1 to ${maxSourceId}`;
      throw new HttpError(400, `"sourceID" is "${sourceID}": it must be the id of a source, ${range}`);
    }
    // A list of a million ids of a source that does not exist would fail line by line: it is refused whole.
    await requireSource(context, Number(sourceID));
  }
  const problem = operationProblem(op);
  if (problem) throw new HttpError(400, problem);
  if (searchComponents !== undefined && !['true', 'false'].includes(searchComponents)) {
    throw new HttpError(400, `"searchComponents" is "${searchComponents}": it must be true or false`);
  }
  return { type, sourceID, op, searchComponents };
}

/**
 * The fields the parameters give each query: `sourceID` only for `type=sourceID` (with other types,
 * as in a v1 body, it is not read), `searchComponents` only for connectivity searches (a lookup
 * has no components to search: it is not read for `op=compounds`).
 */
function parameterFields(parameters: ListParameters, type: string | undefined): Record<string, unknown> {
  const { sourceID, op, searchComponents } = parameters;
  return {
    ...(op ? { op } : {}),
    ...(type ? { type } : {}),
    ...(type === 'sourceID' && sourceID ? { sourceID: Number(sourceID) } : {}),
    ...(op === 'connectivity' && searchComponents ? { searchComponents: searchComponents === 'true' } : {}),
  };
}

/** The query of one line of a plain list: the compound, with the list's parameters. */
function listQuery(parameters: ListParameters): (line: string) => string {
  const { type, sourceID } = parameters;
  const types: readonly string[] = listTypes;
  if (type === undefined) {
    throw new HttpError(400, `a list of compounds needs ?type=: what each line is, one of ${types.join(', ')}`);
  }
  if (type === 'sourceID' && sourceID === undefined) {
    throw new HttpError(
      400,
      'a list of compound ids needs ?sourceID=: the id of the source they belong to, a whole number',
    );
  }
  const base = parameterFields(parameters, type);
  return (line) => JSON.stringify({ ...base, compound: line.trim() });
}

/**
 * The query of one NDJSON line: as sent, or, when the request has parameters, with each field a
 * parameter gives and the query does not say itself (a line that is not a JSON object stays as it
 * is, to be answered as such on its line).
 */
function ndjsonQuery(parameters: ListParameters): (line: string) => string {
  if (Object.values(parameters).every((value) => value === undefined)) return (line) => line.trim();
  return (line) => {
    let query: unknown;
    try {
      query = JSON.parse(line);
    } catch {
      return line.trim();
    }
    if (query === null || typeof query !== 'object' || Array.isArray(query)) return line.trim();
    const own = query as Record<string, unknown>;
    const type = typeof own.type === 'string' ? own.type : parameters.type;
    const given = parameterFields({ ...parameters, op: typeof own.op === 'string' ? own.op : parameters.op }, type);
    return JSON.stringify({ ...given, ...own });
  };
}

/** Reads a job's lines into `writer`; throws an HttpError (or JobRefused) when the body cannot be a job. */
async function readJob(req: Request, writer: JobWriter, config: Config, parameters: ListParameters): Promise<void> {
  const type = mediaTypeOf(req);
  let toQuery: (line: string) => string;
  if (ndjsonTypes.includes(type)) {
    toQuery = ndjsonQuery(parameters);
  } else if (type === 'text/plain') {
    toQuery = listQuery(parameters);
  } else {
    throw new HttpError(
      415,
      `the body must be NDJSON queries (Content-Type: application/x-ndjson) ` +
        `or a list of compounds, one a line (Content-Type: text/plain, with ` +
        `?type=), not ${sentAs(type)}`,
    );
  }
  const tooLarge = (): HttpError =>
    new HttpError(413, `the body is larger than the ${config.JOB_BODY_LIMIT} bytes a job accepts (JOB_BODY_LIMIT)`);
  // A body of blank lines (or none) is a job of no queries, done at once, as a batch of none is answered.
  for await (const line of bodyLines(req, config.JOB_BODY_LIMIT, tooLarge)) await writer.add(toQuery(line));
}

/** The base of the request's API (`/api/v1` or `/beta/api/v1`), for the links it answers. */
const apiBase = (req: Request): string => req.path.replace(/\/jobs(\/.*)?$/, '');

function jobLinks(base: string, jobId: string): { self: string; results: string } {
  return { self: `${base}/jobs/${jobId}`, results: `${base}/jobs/${jobId}/results` };
}

function refusal(error: unknown): unknown {
  return error instanceof JobRefused ? new HttpError(error.status, error.message, [], error.retryAfter) : error;
}

const disabled = (): HttpError => new HttpError(404, 'jobs are turned off on this service (JOBS_ENABLED=false)');

export function jobHandlers(jobs: Jobs, config: Config, context: LookupContext): Record<string, RequestHandler> {
  /** The job the request's path names: 404 when jobs are off, or when it never existed or has expired. */
  async function jobOf(req: Request): Promise<JobDocument> {
    if (!config.JOBS_ENABLED) throw disabled();
    const jobId = String(req.params.jobId);
    const job = await jobs.get(jobId);
    if (!job)
      throw new HttpError(
        404,
        `no job ${jobId}: it never existed, or has expired (jobs are kept ${config.JOB_TTL / 3_600_000} h)`,
      );
    return job;
  }

  return {
    postJobs: async (req, res) => {
      if (!config.JOBS_ENABLED) throw disabled();
      const parameters = await checkedParameters(req, context);
      await jobs.admit().catch((error) => {
        throw refusal(error);
      });
      const writer = await jobs.writer();
      try {
        await readJob(req, writer, config, parameters);
        const job = await jobs.submit(writer);
        const links = jobLinks(apiBase(req), job.jobId);
        res.status(202).location(links.self).json({ jobId: job.jobId, status: job.status, total: job.total, links });
      } catch (error) {
        // What was written of a refused job goes (its queries, and its document if it got one).
        await jobs.discard(writer.jobId);
        throw refusal(error);
      }
    },
    getJob: async (req, res) => {
      const job = await jobOf(req);
      res.set('Cache-Control', 'no-store').json({ ...jobView(job), links: jobLinks(apiBase(req), job.jobId) });
    },
    getJobResults: async (req, res) => {
      const job = await jobOf(req);
      const fromText = req.query.from === undefined ? '0' : String(req.query.from);
      if (!/^[0-9]{1,10}$/.test(fromText))
        throw new HttpError(400, `"from" is "${fromText}": it must be a line number, a whole number from 0`);
      // Past the last line is an empty page, as for a client paging on while the job runs.
      const from = Number(fromText);
      res
        .status(200)
        .type('application/x-ndjson; charset=utf-8')
        .set({
          'Cache-Control': 'no-store',
          'X-Job-Status': job.status,
          'X-Job-Done': String(job.done),
          'X-Job-Total': String(job.total),
        });
      res.flushHeaders();
      for await (const text of jobs.results(job, from)) {
        if (!(await writeOrWait(res, text))) return;
      }
      res.end();
    },
  };
}
