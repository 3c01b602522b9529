/** Engine failures, translated into what callers (the API, the loaders) can act on. */
import { errors } from '@elastic/elasticsearch';

/** The engine cannot be reached, or the indices chemxref needs are missing. */
export class EngineUnavailable extends Error {}

/** The error types of a request the engine refused: its error's and its root causes' (none for any other error). */
export function engineErrorTypes(error: unknown): string[] {
  if (!(error instanceof errors.ResponseError)) return [];
  const body = error.body as { error?: { type?: string; root_cause?: { type?: string }[] } } | undefined;
  return [body?.error?.type, ...(body?.error?.root_cause ?? []).map((cause) => cause.type)].filter(
    (type): type is string => type !== undefined,
  );
}

/** Translates a client error into EngineUnavailable when it means "no usable engine"; returns others as they are. */
export function translateEngineError(error: unknown): unknown {
  if (error instanceof errors.TimeoutError)
    return new EngineUnavailable('the search engine did not answer in time; try again shortly');
  if (error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError) {
    return new EngineUnavailable('the search engine is unreachable; try again shortly');
  }
  if (error instanceof errors.ResponseError) {
    const type = (error.body as { error?: { type?: string } } | undefined)?.error?.type;
    if (type === 'index_not_found_exception') {
      return new EngineUnavailable('the search indices are missing: load data with `npm run load` first');
    }
    if (error.statusCode === 503 || error.statusCode === 429) {
      return new EngineUnavailable('the search engine is overloaded or not ready; try again shortly');
    }
  }
  return error;
}
