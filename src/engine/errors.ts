/** Engine failures, translated into what callers (the API, the loaders) can act on. */
import { errors } from '@elastic/elasticsearch';

/** The engine cannot be reached, or the indices chemxref needs are missing. */
export class EngineUnavailable extends Error {}

/** What a request meets when the indices it reads are gone (never loaded, or wiped). */
export const indicesMissing = 'the search indices are missing: load data with `npm run load` first';

/**
 * The engine's disk is past a watermark: past the flood stage its indices are read-only (reads
 * still work; deleting an index is allowed), past the high watermark it places no new index. Not
 * worth retrying until disk space is freed. `explained` once the message carries the disk's figures.
 */
export class EngineDiskFull extends EngineUnavailable {
  explained = false;
  constructor(
    message = "the search engine's disk is full (past its flood-stage watermark): writes are refused until disk space is freed",
  ) {
    super(message);
  }
}

/**
 * Whether an error of the engine (a response's, or a bulk item's `{type, reason}`) is the
 * read-only-allow-delete block Elasticsearch puts on the indices of a node past its flood stage.
 */
export function isFloodStageBlock(error: { type?: string; reason?: string | null } | undefined): boolean {
  return (
    error?.type === 'cluster_block_exception' &&
    /flood-stage watermark|read-only-allow-delete|read_only_allow_delete/.test(error.reason ?? '')
  );
}

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
    const body = error.body as
      { error?: { type?: string; reason?: string; root_cause?: { type?: string; reason?: string }[] } } | undefined;
    if ([body?.error, ...(body?.error?.root_cause ?? [])].some(isFloodStageBlock)) return new EngineDiskFull();
    const type = body?.error?.type;
    if (type === 'index_not_found_exception') {
      return new EngineUnavailable(indicesMissing);
    }
    if (error.statusCode === 503 || error.statusCode === 429) {
      return new EngineUnavailable('the search engine is overloaded or not ready; try again shortly');
    }
  }
  return error;
}
