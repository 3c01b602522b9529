/**
 * Searches issued in one turn of the event loop leave for the engine as one `_msearch`. A lookup's
 * parallel queries (a key's assignments and its structure) share one round trip, and under
 * concurrent load the queries of every request in flight do: the API's client and the engine's
 * HTTP layer handle one request where they handled a dozen. Searches among them that differ only in
 * the values of their leading term clause (the key lookups of concurrent requests) go as one
 * search (merge.ts). Each search gets back its own answer or its own error, as if it had been
 * sent alone; the exception is a body the engine cannot parse at all (a caller's bug), which fails
 * the whole `_msearch` it travels in.
 */
import { errors, type Client } from '@elastic/elasticsearch';
import type { estypes } from '@elastic/elasticsearch';
import { currentRequest, type RequestContext } from '../request-context';
import { EngineUnavailable } from './errors';
import { dealHits, mergeable, mergedBody, mergedLimits, type ExactFields, type Mergeable } from './merge';

/** Parameters that go in a search's `_msearch` header line; everything else is its body. */
const headerParameters = new Set([
  'index',
  'ignore_unavailable',
  'allow_no_indices',
  'expand_wildcards',
  'preference',
  'routing',
  'request_cache',
  'search_type',
]);
/** URL-only parameters of `_search` that have no place in `_msearch`: a caller using one is a bug. */
const urlOnly = new Set(['filter_path', '_source_includes', '_source_excludes', 'q', 'scroll']);

interface Pending {
  header: Record<string, unknown>;
  body: Record<string, unknown>;
  resolve: (response: estypes.SearchResponse<unknown>) => void;
  reject: (error: unknown) => void;
  /** Sent as it is, never merged: a merged search could not answer it. */
  alone?: boolean;
  /** Sent again once already after a partial answer or a shard failure. */
  retried?: boolean;
  /** The API request that asked for it. */
  request?: RequestContext;
  /** When it was asked for (process.hrtime.bigint()). */
  askedAt: bigint;
}

/** One search of an `_msearch`: a pending search, or several merged into one (merge.ts). */
interface Outgoing {
  header: Record<string, unknown>;
  body: Record<string, unknown>;
  /**
   * `whole`: the `_msearch` itself failed (engine unreachable, 429, a body it could not parse ...), not this search
   * alone.
   */
  settle: (outcome: { response: estypes.SearchResponse<unknown> } | { error: unknown; whole?: boolean }) => void;
  /** The API requests it answers. */
  requests: (RequestContext | undefined)[];
  /** When the first of its searches was asked for. */
  askedAt: bigint;
}

type Member = Mergeable & { search: Pending };

export class SearchBatcher {
  private pending: Pending[] = [];
  /** `_msearch` requests sent and not yet answered. */
  private inFlight = 0;
  /** A flush is already due in a microtask. */
  private flushDue = false;

  /**
   * `maxSearches`: the most searches one `_msearch` carries, after merging; a longer queue leaves
   * in several, side by side. An `_msearch` answers once its last search is done, and the engine
   * runs a few of them at a time (four on a 2-core node), so a long one holds every request in it
   * back: key lookups at 16 connections had p99 36 ms with up to 64 searches per `_msearch`, 31 ms
   * with 8 and 25 ms with 2 (one lookup's pair), at the same throughput within the noise. Eight
   * keeps most of the saving under load. `maxWaitNs`: how long a queue may hold its first search
   * in a long turn of the event loop before the next search asked makes it leave (see queue).
   */
  constructor(
    private readonly client: Client,
    private readonly exact: ExactFields,
    private readonly onSend: (searches: number) => void = () => undefined,
    private readonly maxSearches = 8,
    private readonly maxWaitNs = 1_000_000n,
  ) {}

  /** One search, sent with the others queued in this turn of the event loop. */
  search<T>(request: estypes.SearchRequest): Promise<estypes.SearchResponse<T>> {
    return new Promise((resolve, reject) => {
      // A search that misses shards (a release index deleted under it, a node gone) must fail, not
      // answer "Not found" from the shards it reached.
      const header: Record<string, unknown> = { allow_partial_search_results: false };
      const body: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(request)) {
        if (value === undefined) continue;
        if (urlOnly.has(name)) throw new Error(`search parameter ${name} cannot be batched into _msearch`);
        (headerParameters.has(name) ? header : body)[name] = value;
      }
      this.queue({
        header,
        body,
        resolve: resolve as Pending['resolve'],
        reject,
        request: currentRequest(),
        askedAt: process.hrtime.bigint(),
      });
    });
  }

  /**
   * Queues a search. While the engine is answering other `_msearch` requests, the queue leaves at the
   * event loop's check phase, with every search the other requests ready meanwhile issued (merged);
   * when nothing is in flight, it leaves once the current job's promise callbacks have run, with the
   * searches its lookup issued together, instead of waiting behind the I/O callbacks of the turn.
   * In a long turn, a search that joins a queue whose first search has waited `maxWaitNs` makes it
   * leave as it would with nothing in flight: merging never holds a search much longer than that.
   */
  private queue(search: Pending): void {
    const first = this.pending.push(search) === 1;
    if (first && this.inFlight > 0) setImmediate(() => this.flush());
    // Nothing in flight, or a long turn of the event loop (a burst of answers to send, a GC pause):
    // the queue leaves once this job's callbacks have run, not at the check phase.
    else if (!this.flushDue && (first || search.askedAt - this.pending[0].askedAt > this.maxWaitNs)) {
      this.flushDue = true;
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    this.flushDue = false;
    if (this.pending.length === 0) return;
    const outgoing = this.merge(this.pending);
    this.pending = [];
    for (let start = 0; start < outgoing.length; start += this.maxSearches)
      void this.send(outgoing.slice(start, start + this.maxSearches));
  }

  /** The searches to send: those of one shape merged, within mergedLimits per merged search. */
  private merge(queue: Pending[]): Outgoing[] {
    const outgoing: Outgoing[] = [];
    const groups = new Map<string, { members: Member[]; hits: number; values: number }[]>();
    for (const search of queue) {
      const shape = search.alone ? undefined : mergeableOrNot(search, this.exact);
      if (!shape) {
        outgoing.push(this.alone(search));
        continue;
      }
      const chunks = groups.get(shape.signature) ?? [];
      groups.set(shape.signature, chunks);
      let chunk = chunks[chunks.length - 1];
      if (
        !chunk ||
        chunk.hits + shape.size > mergedLimits.hits ||
        chunk.values + shape.values.length > mergedLimits.values
      ) {
        chunk = { members: [], hits: 0, values: 0 };
        chunks.push(chunk);
      }
      chunk.members.push(shape);
      chunk.hits += shape.size;
      chunk.values += shape.values.length;
    }
    for (const { members } of [...groups.values()].flat())
      outgoing.push(members.length === 1 ? this.alone(members[0].search) : this.merged(members));
    return outgoing;
  }

  /**
   * A search sent as it is: a partial answer or a failure of its shards goes again once, then fails with
   * EngineUnavailable.
   */
  private alone(search: Pending): Outgoing {
    return {
      header: search.header,
      body: search.body,
      requests: [search.request],
      askedAt: search.askedAt,
      settle: (outcome) => {
        const failure =
          'error' in outcome ? (outcome.whole ? undefined : shardFailure(outcome.error)) : partial(outcome.response);
        if (failure) {
          if (!search.retried) return this.queue({ ...search, alone: true, retried: true });
          return search.reject(
            new EngineUnavailable(`the search engine answered only part of a search (${failure}); try again shortly`),
          );
        }
        if ('error' in outcome) search.reject(outcome.error);
        else search.resolve(outcome.response);
      },
    };
  }

  private merged(members: Member[]): Outgoing {
    const { body, size } = mergedBody(members);
    const sendAlone = (member: Member): void => this.queue({ ...member.search, alone: true });
    return {
      header: members[0].search.header,
      body,
      requests: members.map((member) => member.search.request),
      askedAt: members.reduce(
        (first, member) => (member.search.askedAt < first ? member.search.askedAt : first),
        members[0].search.askedAt,
      ),
      settle: (outcome) => {
        if ('error' in outcome) {
          // A refusal of the merged search (4xx) may be one search's own (a value its field cannot hold,
          // a limit only the merged search reaches): each goes again alone. An overloaded or failing
          // engine (429, 5xx, no answer) fails them all, as it would have failed each.
          const status = (outcome.error as { statusCode?: number }).statusCode ?? 0;
          if (!outcome.whole && ((status >= 400 && status < 500 && status !== 429) || shardFailure(outcome.error)))
            members.forEach(sendAlone);
          else for (const member of members) member.search.reject(outcome.error);
          return;
        }
        if (partial(outcome.response)) return members.forEach(sendAlone);
        let dealt: Map<Member, estypes.SearchResponse<unknown> | undefined>;
        try {
          dealt = dealHits(members, size, outcome.response);
        } catch {
          return members.forEach(sendAlone);
        }
        for (const [member, response] of dealt) {
          if (response) member.search.resolve(response);
          else sendAlone(member);
        }
      },
    };
  }

  private async send(batch: Outgoing[]): Promise<void> {
    let responses: estypes.MsearchResponseItem<unknown>[];
    this.onSend(batch.length);
    try {
      // Every request it answers, as X-Opaque-Id (the engine keeps it with the search's task and slow log).
      const requests = new Set(batch.flatMap((search) => search.requests).filter((request) => request !== undefined));
      const opaqueId = [...requests]
        .map((request) => request.id)
        .join(',')
        .slice(0, 512);
      const started = process.hrtime.bigint();
      // How long each request's searches waited for this _msearch to leave: the longest of them.
      const asked = new Map<RequestContext, bigint>();
      for (const search of batch) {
        for (const request of search.requests)
          if (request && (asked.get(request) ?? started) > search.askedAt) asked.set(request, search.askedAt);
      }
      for (const [request, askedAt] of asked)
        request.queuedMs = (request.queuedMs ?? 0) + Number(started - askedAt) / 1e6;
      let took = 0;
      this.inFlight += 1;
      try {
        const answer = await this.client.msearch(
          { searches: batch.flatMap((search) => [search.header, search.body]) },
          opaqueId ? { opaqueId } : undefined,
        );
        responses = answer.responses;
        took = answer.took;
      } finally {
        this.inFlight -= 1;
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        for (const request of requests) {
          request.engineMs += ms;
          request.tookMs = (request.tookMs ?? 0) + took;
        }
      }
    } catch (error) {
      for (const search of batch) search.settle({ error, whole: true });
      return;
    }
    responses.forEach((item, i) => {
      if ('error' in item) {
        // The error a lone search would have thrown, so callers translate it as before (index missing, 429, ...).
        batch[i].settle({
          error: new errors.ResponseError({
            body: item,
            statusCode: item.status,
            headers: {},
            warnings: null,
            meta: {} as never,
          }),
        });
      } else {
        batch[i].settle({ response: item as estypes.SearchResponse<unknown> });
      }
    });
    for (const search of batch.slice(responses.length))
      search.settle({
        error: new Error(`the engine answered ${responses.length} of ${batch.length} searches`),
        whole: true,
      });
  }
}

/**
 * The search as a mergeable one; undefined when it is not, or cannot even be serialised (it is then sent as it is, and
 * its `_msearch` fails).
 */
function mergeableOrNot(search: Pending, exact: ExactFields): Member | undefined {
  try {
    const shape = mergeable(search.header, search.body, exact);
    return shape && Object.assign(shape, { search });
  } catch {
    return undefined;
  }
}

/** What is missing from an answer: failed shards, or a timeout (undefined when it is whole). */
function partial(response: estypes.SearchResponse<unknown>): string | undefined {
  if (response.timed_out) return 'timed out';
  const failed = response._shards?.failed ?? 0;
  return failed > 0 ? `${failed} of ${response._shards.total} shards failed` : undefined;
}

/**
 * A search's own error that means its shards could not all be searched (an index deleted or moved
 * under it, a node gone): worth one more try, which the alias then routes to the current release.
 */
function shardFailure(error: unknown): string | undefined {
  const status = (error as { statusCode?: number }).statusCode ?? 0;
  const type = (error as { body?: { error?: { type?: string } } }).body?.error?.type ?? '';
  if (status >= 500 || type === 'search_phase_execution_exception' || type === 'no_shard_available_action_exception')
    return type || `HTTP ${status}`;
  return undefined;
}
