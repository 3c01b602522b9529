/**
 * The jobs API (docs/api.md): POST /jobs takes NDJSON queries, or a plain list of compounds with their
 * `type` (and `sourceID`, `op`, `searchComponents`) as parameters, streamed into the engine a part
 * at a time, and answers 202 with the job's address; GET /jobs/{jobId} says how far it is; GET
 * /jobs/{jobId}/results?from=N streams the result lines written so far, from line N.
 */
import type { Request, RequestHandler } from 'express';
import type { Config } from '../../config';
import { jobView, JobRefused, type Jobs, type JobWriter } from '../../jobs';
import { queryTypes } from '../../domain/lookup';
import { HttpError } from '../errors';
import { bodyLines, mediaTypeOf, ndjsonTypes, sentAs, writeOrWait } from './batch';

const listParameters = ['type', 'sourceID', 'op', 'searchComponents'];

/** The query of one line of a plain list: the compound, with the list's parameters. */
function listQuery(req: Request): (line: string) => string {
  const parameters = req.query as Record<string, unknown>;
  for (const name of Object.keys(parameters)) {
    if (!listParameters.includes(name)) throw new HttpError(400, `the parameter "${name}" is not part of this request (unknown parameter): a list takes ${listParameters.join(', ')}`);
    if (typeof parameters[name] !== 'string') throw new HttpError(400, `the parameter "${name}" is given more than once`);
  }
  const { type, sourceID, op, searchComponents } = parameters as Record<string, string | undefined>;
  const types: readonly string[] = queryTypes;
  if (type === undefined) throw new HttpError(400, `a list of compounds needs ?type=: what each line is, one of ${types.join(', ')}`);
  if (!types.includes(type)) throw new HttpError(400, `"type" must be one of ${types.join(', ')}`);
  if (type === 'sourceID' && (sourceID === undefined || !/^[1-9][0-9]{0,9}$/.test(sourceID))) throw new HttpError(400, 'a list of compound ids needs ?sourceID=: the id of the source they belong to, a whole number');
  if (op !== undefined && op !== 'compounds' && op !== 'connectivity') throw new HttpError(400, `"op" is "${op}": it must be "compounds" or "connectivity"`);
  if (searchComponents !== undefined && !['true', 'false'].includes(searchComponents)) throw new HttpError(400, `"searchComponents" is "${searchComponents}": it must be true or false`);
  if (searchComponents !== undefined && op !== 'connectivity') throw new HttpError(400, '"searchComponents" is a parameter of connectivity searches (op=connectivity)');
  const base = {
    ...(op ? { op } : {}), type, ...(type === 'sourceID' ? { sourceID: Number(sourceID) } : {}), ...(searchComponents ? { searchComponents: searchComponents === 'true' } : {}),
  };
  return (line) => JSON.stringify({ ...base, compound: line.trim() });
}

/** Reads a job's lines into `writer`; throws an HttpError (or JobRefused) when the body cannot be a job. */
async function readJob(req: Request, writer: JobWriter, config: Config): Promise<void> {
  const type = mediaTypeOf(req);
  let toQuery: (line: string) => string;
  if (ndjsonTypes.includes(type)) {
    if (Object.keys(req.query).length > 0) throw new HttpError(400, `the parameter "${Object.keys(req.query)[0]}" applies to a plain list of compounds (Content-Type: text/plain) only: NDJSON queries say everything themselves`);
    toQuery = (line) => line.trim();
  } else if (type === 'text/plain') {
    toQuery = listQuery(req);
  } else {
    throw new HttpError(415, `the body must be NDJSON queries (Content-Type: application/x-ndjson) or a list of compounds, one a line (Content-Type: text/plain, with ?type=), not ${sentAs(type)}`);
  }
  const tooLarge = (): HttpError => new HttpError(413, `the body is larger than the ${config.JOB_BODY_LIMIT} bytes a job accepts (JOB_BODY_LIMIT)`);
  for await (const line of bodyLines(req, config.JOB_BODY_LIMIT, tooLarge)) await writer.add(toQuery(line));
  if (writer.total === 0) throw new HttpError(400, 'the job has no queries: the body is empty');
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

export function jobHandlers(jobs: Jobs, config: Config): Record<string, RequestHandler> {
  return {
    postJobs: async (req, res) => {
      if (!config.JOBS_ENABLED) throw disabled();
      await jobs.admit().catch((error) => { throw refusal(error); });
      const writer = await jobs.writer();
      try {
        await readJob(req, writer, config);
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
      if (!config.JOBS_ENABLED) throw disabled();
      const jobId = String(req.params.jobId);
      const job = await jobs.get(jobId);
      if (!job) throw new HttpError(404, `no job ${jobId}: it never existed, or has expired (jobs are kept ${config.JOB_TTL / 3_600_000} h)`);
      res.set('Cache-Control', 'no-store').json({ ...jobView(job), links: jobLinks(apiBase(req), job.jobId) });
    },
    getJobResults: async (req, res) => {
      if (!config.JOBS_ENABLED) throw disabled();
      const jobId = String(req.params.jobId);
      const job = await jobs.get(jobId);
      if (!job) throw new HttpError(404, `no job ${jobId}: it never existed, or has expired (jobs are kept ${config.JOB_TTL / 3_600_000} h)`);
      const fromText = req.query.from === undefined ? '0' : String(req.query.from);
      if (!/^[0-9]{1,10}$/.test(fromText)) throw new HttpError(400, `"from" is "${fromText}": it must be a line number, a whole number from 0`);
      const from = Number(fromText);
      if (from > job.total) throw new HttpError(400, `"from" is ${from}: the job has ${job.total} lines (0 to ${job.total - 1})`);
      res.status(200).type('application/x-ndjson; charset=utf-8').set({ 'Cache-Control': 'no-store', 'X-Job-Status': job.status, 'X-Job-Done': String(job.done), 'X-Job-Total': String(job.total) });
      res.flushHeaders();
      for await (const text of jobs.results(job, from)) {
        if (!await writeOrWait(res, text)) return;
      }
      res.end();
    },
  };
}
