/**
 * The one error handler: anything thrown by a route becomes the JSON error of its API family
 * (v1: `{response: "Error", error, errors}`; legacy: `{error}` or its XML form), never HTML or a stack.
 */
import type { ErrorRequestHandler, Request, Response } from 'express';
import { InvalidQuery, NoLongerAvailable, UnknownResource, UnprocessableStructure } from '../domain/errors';
import { compoundProblem, queryTypes, type QueryType } from '../domain/lookup';
import { EngineUnavailable, translateEngineError } from '../engine/errors';
import { log } from '../log';
import { currentRequest } from '../request-context';

/**
 * An HTTP error with a status and a message for the caller; `retryAfter` (seconds) becomes the Retry-After header of a
 * 429 or 503.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: { path: string; message: string }[] = [],
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** The one answer to a compound that is empty or only whitespace, in every endpoint of both API families. */
export const blankCompound = 'the compound is empty or only whitespace';

interface ValidatorError {
  status?: number;
  statusCode?: number;
  type?: string;
  errors?: { path?: string; message?: string; errorCode?: string }[];
  message?: string;
}

/**
 * The value a validator finding is about, as the request sent it (a path segment as typed, a body value as JSON),
 * shortened.
 */
function valueAt(req: Request | undefined, path: string): string | undefined {
  const parts = path.split('/');
  // Findings of a body checked by its discriminator's schema have paths without the /body prefix.
  const [, where, ...keys] = ['body', 'params', 'query'].includes(parts[1]) ? parts : ['', 'body', ...parts.slice(1)];
  // The validator runs before Express matches a route: path parameters are the ones it parsed itself.
  const params =
    (req as { openapi?: { pathParams?: Record<string, string> } } | undefined)?.openapi?.pathParams ?? req?.params;
  let value: unknown =
    where === 'body' ? req?.body : where === 'params' ? params : where === 'query' ? req?.query : undefined;
  for (const key of keys)
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  if (value === undefined) return undefined;
  const shown = where === 'params' && typeof value === 'string' ? value : JSON.stringify(value);
  return shown.length > 60 ? `${shown.slice(0, 60)}...` : shown;
}

/**
 * Words for a request-validator finding: "body must have required property 'type'" → "the field \"type\" is missing".
 */
function validatorMessage(error: ValidatorError, req?: Request): string {
  const first = error.errors?.[0];
  if (!first) return error.message ?? 'the request is not valid';
  const field = (first.path ?? '').replace(/^\/?(body|query|params|path)\/?/, '').replace(/^[./]/, '') || 'body';
  const message = first.message ?? 'is not valid';
  // A v1 body is checked by the schema of its `type`: name what is wrong as the domain would.
  if (req?.method === 'POST' && (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)))
    return 'the body must be a JSON object, such as {"type": "inchikey", "compound": "..."}';
  const body = (req?.body ?? {}) as { type?: unknown; compound?: unknown };
  const typeOutsideList = /^'type' must be equal to one of the allowed values: (.*?)\.?$/.exec(message);
  if (typeOutsideList) {
    const allowed = typeOutsideList[1];
    if (body.type === undefined) return 'the field "type" is missing';
    // A list of one string is what R's jsonlite writes without auto_unbox.
    if (typeof body.type !== 'string')
      return `"type" is ${JSON.stringify(body.type)}: it must be a string, one of ${allowed}`;
    return `"type" must be one of ${allowed}`;
  }
  if (
    field === 'compound' &&
    typeof body.type === 'string' &&
    queryTypes.includes(body.type as QueryType) &&
    !/required property/.test(message)
  ) {
    return compoundProblem(body.type as QueryType, body.compound) ?? `"compound" ${message}`;
  }
  if (field === 'compound' && message === 'must match pattern "\\S"') return blankCompound;
  // A number out of range is named as sent: `"sourceID" is 99999999999: it must be <= 2147483647`.
  const value =
    /^(maximum|minimum|exclusiveMaximum|exclusiveMinimum|type)\./.test(first.errorCode ?? '') ||
    /^must be (<|>|integer|string|boolean)/.test(message)
      ? valueAt(req, first.path ?? '')
      : undefined;
  if (value !== undefined) return `"${field}" is ${value}: it ${message}`;
  const missing = /must have required property '([^']+)'/.exec(message);
  if (missing?.[1] === 'sourceID')
    return 'a sourceID query needs "sourceID": the id of the source the compound id belongs to';
  if (missing) return `the field "${missing[1]}" is missing`;
  const unknown = /must NOT have additional properties|Unknown query parameter/.exec(message);
  if (unknown) return `the field "${field}" is not part of this request (unknown field)`;
  const enumeration = /must be equal to one of the allowed values: (.*)/.exec(message);
  if (enumeration) return `"${field}" must be one of ${enumeration[1]}`;
  return `"${field}" ${message}`;
}

/**
 * Whole seconds from a thrown error's `retryAfter` (on it or on the error it translates), when it carries a usable one.
 */
function retryAfterOf(...errors: unknown[]): number | undefined {
  for (const error of errors) {
    const seconds = (error as { retryAfter?: unknown } | null)?.retryAfter;
    if (typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0) return Math.ceil(seconds);
  }
  return undefined;
}

/** Status, message, details and, for a 429 or 503, the seconds to wait, for anything thrown. */
export function describeError(
  error: unknown,
  req?: Request,
): { status: number; message: string; details: { path: string; message: string }[]; retryAfter?: number } {
  const translated = translateEngineError(error);
  if (translated instanceof HttpError)
    return {
      status: translated.status,
      message: translated.message,
      details: translated.details,
      retryAfter: retryAfterOf(translated),
    };
  if (translated instanceof InvalidQuery)
    return { status: 400, message: translated.message, details: translated.details };
  if (translated instanceof UnknownResource) return { status: 404, message: translated.message, details: [] };
  if (translated instanceof UnprocessableStructure) return { status: 422, message: translated.message, details: [] };
  if (translated instanceof NoLongerAvailable) return { status: 410, message: translated.message, details: [] };
  if (translated instanceof EngineUnavailable)
    return { status: 503, message: translated.message, details: [], retryAfter: retryAfterOf(translated, error) };
  const e = translated as ValidatorError & Error;
  const status = e.status ?? e.statusCode;
  if (e.type === 'entity.parse.failed') return { status: 400, message: 'the body is not valid JSON', details: [] };
  if (e.type === 'entity.too.large')
    return { status: 413, message: 'the body is larger than this service accepts (BODY_LIMIT)', details: [] };
  if (status === 404) return { status: 404, message: 'there is no such path', details: [] };
  if (status === 405) return { status: 405, message: e.message ?? 'method not allowed', details: [] };
  if (status === 415)
    return { status: 415, message: 'the body must be JSON (Content-Type: application/json)', details: [] };
  if (status && status >= 400 && status < 500) {
    return {
      status,
      message: validatorMessage(e, req),
      details: (e.errors ?? []).map((x) => ({ path: x.path ?? '', message: x.message ?? '' })),
    };
  }
  return { status: 500, message: 'an internal error occurred', details: [] };
}

/** The body of a v1 error (docs/api.md): what the error handler answers, and a batch's line of a refused query. */
export function v1ErrorBody(
  message: string,
  details: { path: string; message: string }[] = [],
): { response: 'Error'; error: string; errors: { path: string; message: string }[] } {
  return { response: 'Error', error: message, errors: details };
}

/** Renders an error in the legacy family's shape (src/api/legacy). */
export type LegacyErrorRenderer = (req: Request, status: number, message: string) => { type: string; body: string };

export function isLegacyPath(path: string): boolean {
  return /^\/(legacy\/)?rest(\/|$)/.test(path);
}

/**
 * Sends `error` as the error of `req`'s API family; what the error middleware does, also usable outside a route (the
 * server's drain deadline).
 */
export type ErrorSender = (error: unknown, req: Request, res: Response) => void;

/** The error sender. `legacy` renders legacy errors (JSON `{error}`, XML or JSONP as asked). */
export function errorSender(legacy: LegacyErrorRenderer): ErrorSender {
  return (error, req, res) => {
    const { status, message, details, retryAfter } = describeError(error, req);
    if (status >= 500 && status !== 503)
      log.error('request failed', {
        method: req.method,
        path: req.path,
        requestId: currentRequest()?.id,
        error: (error as Error)?.stack ?? String(error),
      });
    if (res.headersSent) return;
    // Every 503 says when to try again (1 s unless the error knows better), and so does a 429.
    if (status === 503 || (status === 429 && retryAfter !== undefined)) res.set('Retry-After', String(retryAfter ?? 1));
    if (isLegacyPath(req.path)) {
      const rendered = legacy(req, status, message);
      res.status(status).type(rendered.type).send(rendered.body);
      return;
    }
    res.status(status).json(v1ErrorBody(message, details));
  };
}

/** The error middleware, around `send`. */
export function errorHandler(send: ErrorSender): ErrorRequestHandler {
  return (error, req, res, _next) => {
    void _next;
    send(error, req, res);
  };
}
