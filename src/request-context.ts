/**
 * The API request being answered, wherever its work runs (AsyncLocalStorage): its id, which the
 * request log names and every engine request made for it carries as `X-Opaque-Id` (so a slow search
 * in Elasticsearch's logs and tasks can be traced to the request that asked for it), and the time
 * it waited for the engine.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestContext {
  id: string;
  /**
   * Milliseconds spent waiting for engine requests made for it (a batched `_msearch` counts whole for each request in
   * it).
   */
  engineMs: number;
  /**
   * Milliseconds its searches waited in the batcher before their `_msearch` left (per `_msearch`, its longest wait).
   */
  queuedMs?: number;
  /** The engine's own `took` of the `_msearch` requests it was in, in milliseconds. */
  tookMs?: number;
}

const requests = new AsyncLocalStorage<RequestContext>();

/** The request whose work is running, if any. */
export function currentRequest(): RequestContext | undefined {
  return requests.getStore();
}

/** Runs `work` (and everything it starts) as the work of `request`. */
export function asRequest<T>(request: RequestContext, work: () => T): T {
  return requests.run(request, work);
}

/** A client's own X-Request-Id when it is a sensible one (1 to 128 visible ASCII characters), else a new UUID. */
export function requestIdOf(given: string | string[] | undefined): string {
  const value = Array.isArray(given) ? given[0] : given;
  return value && /^[\x21-\x7e]{1,128}$/.test(value) ? value : randomUUID();
}
