/**
 * Where each request's time went, on its answer as `Server-Timing` (W3C): `total` until the headers
 * leave; `validate`, from arrival to the end of request validation; `queue`, its searches waiting in
 * the batcher for their `_msearch` to leave; `engine`, waiting for the engine's answers (`took`: what
 * the engine says it spent); `serialise`, from the answer's object to its JSON; `app`, the rest (the
 * domain's work, and waiting for the event loop). Browsers' developer tools show it; `npm run
 * bench:api` sums it.
 */
import type { RequestHandler, Response } from 'express';
import type { RequestContext } from '../request-context';

interface Marks {
  started: bigint;
  validated?: bigint;
  serialising?: bigint;
}

const ms = (from: bigint, to: bigint): number => Number(to - from) / 1e6;
const entry = (name: string, duration: number): string => `${name};dur=${Math.max(0, duration).toFixed(2)}`;

function header(marks: Marks, request: RequestContext | undefined, now: bigint): string {
  const total = ms(marks.started, now);
  const validate = marks.validated ? ms(marks.started, marks.validated) : 0;
  const serialise = marks.serialising ? ms(marks.serialising, now) : 0;
  const queue = request?.queuedMs ?? 0;
  const engine = request?.engineMs ?? 0;
  const parts = [
    entry('total', total),
    entry('validate', validate),
    entry('queue', queue),
    entry('engine', engine),
    entry('took', request?.tookMs ?? 0),
    entry('serialise', serialise),
  ];
  return [...parts, entry('app', total - validate - queue - engine - serialise)].join(', ');
}

/**
 * Starts a request's clock (after its RequestContext is in res.locals.request), and sets the header as the headers
 * leave.
 */
export const startTiming: RequestHandler = (_req, res, next) => {
  const marks: Marks = { started: process.hrtime.bigint() };
  res.locals.timing = marks;
  const json = res.json.bind(res);
  res.json = (body: unknown): Response => {
    marks.serialising ??= process.hrtime.bigint();
    return json(body);
  };
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
  res.writeHead = ((...args: unknown[]) => {
    if (!res.headersSent)
      res.setHeader(
        'Server-Timing',
        header(marks, res.locals.request as RequestContext | undefined, process.hrtime.bigint()),
      );
    return writeHead(...args);
  }) as typeof res.writeHead;
  next();
};

/** Marks the end of request validation. */
export const validated: RequestHandler = (_req, res, next) => {
  const marks = res.locals.timing as Marks | undefined;
  if (marks) marks.validated = process.hrtime.bigint();
  next();
};
