/**
 * The door to Elasticsearch: the client, the index names behind ES_INDEX_PREFIX and the mappings.
 * Nothing outside src/engine/ imports @elastic/elasticsearch.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, HttpConnection, SniffingTransport } from '@elastic/elasticsearch';
import type { estypes } from '@elastic/elasticsearch';
import { engineNodes, type Config } from '../config';
import { currentRequest } from '../request-context';
import { SearchBatcher } from './msearch-batcher';
import { Breaker } from './breaker';
import { exactFieldsOf } from './merge';
import { markerDocument, RestoreWatch, type RestoreMarker } from './restore-watch';

export type MappingName =
  'compounds' | 'fingerprints' | 'assignments' | 'sources' | 'meta' | 'rejects' | 'changes' | 'jobs' | 'job-parts';

const mappingsDir = join(__dirname, '..', '..', 'mappings');

/** The settings and mappings of one index, as committed under mappings/. */
export function mappingOf(name: MappingName): { settings: Record<string, unknown>; mappings: Record<string, unknown> } {
  return JSON.parse(readFileSync(join(mappingsDir, `${name}.json`), 'utf8'));
}

/**
 * Every index and alias name chemxref uses, all behind one prefix. `releases` names the release
 * indices and their aliases: `assignments`, or `xrefs` for an API serving indices of layout 1
 * (src/engine/layout.ts) until `npm run migrate` renames them.
 */
export class IndexNames {
  constructor(
    readonly prefix: string,
    readonly releases: 'assignments' | 'xrefs' = 'assignments',
  ) {}
  get compounds(): string {
    return `${this.prefix}-compounds`;
  }
  /** Each structure's fingerprints and molecule, for similarity and substructure searches (derived data). */
  get fingerprints(): string {
    return `${this.prefix}-fingerprints`;
  }
  /** Alias over every source's current release. */
  get assignments(): string {
    return `${this.prefix}-${this.releases}`;
  }
  get sources(): string {
    return `${this.prefix}-sources`;
  }
  get meta(): string {
    return `${this.prefix}-meta`;
  }
  /** Alias over the rejected rows of every load kept (one index a load). */
  get rejects(): string {
    return `${this.prefix}-rejects`;
  }
  /** Alias of the rejected rows of the most recent load that rejected any. */
  get rejectsOfLastLoad(): string {
    return `${this.prefix}-rejects-last`;
  }
  /** The index of one load's rejected rows. */
  rejectsOf(loadId: string): string {
    return `${this.prefix}-rejects-load-${loadId.toLowerCase()}`;
  }
  /** Every load's rejects index. */
  get rejectsOfEveryLoad(): string {
    return `${this.prefix}-rejects-load-*`;
  }
  /** What each load changed in its sources' current assignments (one document per compound id and change). */
  get changes(): string {
    return `${this.prefix}-changes`;
  }
  /** Bulk mapping jobs: their state (one document a job), and their queries and results (parts of lines). */
  get jobs(): string {
    return `${this.prefix}-jobs`;
  }
  get jobParts(): string {
    return `${this.prefix}-job-parts`;
  }
  /**
   * The marker of a restore in progress (one document, `restore`): while it exists the API answers 503. Never part of
   * a backup.
   */
  get restoring(): string {
    return `${this.prefix}-restoring`;
  }
  /** Alias of one source's current release. */
  assignmentsOf(sourceId: number): string {
    return `${this.prefix}-${this.releases}-${sourceId}`;
  }
  /** Alias of the release a source served before its current one, kept for `rollback` until its next publish. */
  previousAssignmentsOf(sourceId: number): string {
    return `${this.prefix}-previous-${this.releases}-${sourceId}`;
  }
  /** Every previous-release alias. */
  get previousAssignments(): string {
    return `${this.prefix}-previous-${this.releases}-*`;
  }
  /**
   * A fresh physical index for one release: of one source (`source`, `remove-source`) or of every
   * source of a reference table (`dump`), which then serves them all from one shard.
   */
  assignmentsRelease(tag: number | 'dump', stamp = Date.now()): string {
    return `${this.prefix}-${this.releases}-${tag}-${stamp}`;
  }
}

/** What the API measures of the engine (src/api/metrics.ts). */
export interface EngineObserver {
  /**
   * One HTTP request to a node: its operation (`search`, `msearch`, `count`, ...), how long it took, whether it failed.
   */
  engineRequest(operation: string, seconds: number, failed: boolean): void;
  /** One `_msearch` left with this many searches. */
  msearchSent(searches: number): void;
}

/**
 * The operation of an engine request, from its path: the first `_` segment (`/idx/_search` is
 * `search`, `/_cluster/health` is `cluster_health`), or `index` for a request on an index itself.
 */
export function engineOperation(path: string): string {
  const segments = path.split('?')[0].split('/').filter(Boolean);
  const at = segments.findIndex((segment) => segment.startsWith('_'));
  if (at < 0) return 'index';
  const name = segments[at].slice(1);
  return ['cluster', 'cat', 'nodes', 'tasks', 'security'].includes(name) &&
    segments[at + 1] &&
    !segments[at + 1].startsWith('_')
    ? `${name}_${segments[at + 1]}`
    : name;
}

/**
 * A connection that goes through `breaker`: refused at once while it is open, and tells it how
 * each request went; `observer` hears each request's operation, duration and outcome. A request
 * made for an API request carries its id as X-Opaque-Id.
 */
function guardedConnection(breaker: Breaker, restore: RestoreWatch, observer?: EngineObserver): typeof HttpConnection {
  return class GuardedConnection extends HttpConnection {
    async request(...args: Parameters<HttpConnection['request']>): Promise<never> {
      breaker.check();
      if (readsData(args[0].method, args[0].path)) {
        await restore.firstRead;
        restore.check();
      }
      // Work done for an API request names it and counts its time, unless the caller did (a batched _msearch, for each
      // request in it).
      const params = args[0];
      const request = params.headers?.['x-opaque-id'] ? undefined : currentRequest();
      if (request) params.headers = { ...params.headers, 'x-opaque-id': request.id };
      const started = process.hrtime.bigint();
      const seconds = (): number => {
        const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
        if (request) request.engineMs += elapsed * 1000;
        return elapsed;
      };
      const operation = observer ? engineOperation(args[0].path) : '';
      try {
        const result = await super.request(...args);
        breaker.succeeded();
        const status = (result as { statusCode?: number }).statusCode ?? 0;
        observer?.engineRequest(operation, seconds(), status >= 500 || status === 429);
        return result as never;
      } catch (error) {
        const name = (error as Error).name;
        if (name === 'ConnectionError' || name === 'TimeoutError') breaker.failed();
        observer?.engineRequest(operation, seconds(), true);
        throw error;
      }
    }
  } as typeof HttpConnection;
}

/**
 * Whether a request reads or writes the data of the prefix, which a restore in progress makes wrong to serve: all but
 * the cluster's and nodes' state and the settings and aliases of indices (GET /health reports those meanwhile).
 */
function readsData(method: string, path: string): boolean {
  const segments = path.split('?')[0].split('/').filter(Boolean);
  if (['_cluster', '_nodes', '_cat'].includes(segments[0] ?? '')) return false;
  return !(method === 'GET' && ['_settings', '_alias'].includes(segments[1] ?? ''));
}

/** The client's transport with its one retry after a connection error 50 ms later, not after a backoff of seconds. */
class QuickRetryTransport extends SniffingTransport {
  constructor(options: ConstructorParameters<typeof SniffingTransport>[0]) {
    super({ ...options, retryBackoff: () => 0.05 });
  }
}

export interface EngineOptions {
  /**
   * For the API: every request gets ENGINE_TIMEOUT_MS and at most one quick retry after a
   * connection error, and a circuit breaker fails requests at once while the engine is unreachable.
   * Loads and exports keep a long timeout and retries with backoff.
   */
  serving?: boolean;
  /** Hears every request of a serving engine (metrics). */
  observer?: EngineObserver;
}

/** The Elasticsearch client of `config`, plus the index names. */
export class Engine {
  readonly client: Client;
  /** The names it reads and writes; an API serving an older layout switches them when it is migrated (layout.ts). */
  names: IndexNames;
  readonly breaker?: Breaker;
  /** A serving engine's view of a restore in progress (which makes its requests fail with EngineUnavailable). */
  readonly restore?: RestoreWatch;
  private readonly batcher: SearchBatcher;
  private readonly probeClient?: Client;

  constructor(
    readonly config: Config,
    options: EngineOptions = {},
  ) {
    const auth = config.ES_API_KEY
      ? { apiKey: config.ES_API_KEY }
      : config.ES_USERNAME
        ? { username: config.ES_USERNAME, password: config.ES_PASSWORD ?? '' }
        : undefined;
    // node:http rather than the client's default undici pool: at half the peak rate, six interleaved
    // pairs of sourceID lookups had p99 15.8-31.7 ms against 30.7-42.8 ms, at the same API CPU
    // (BENCHMARKS.md, API, design figures).
    // Several nodes: requests go round the living ones; a node that fails a request is marked dead
    // and tried again after a while with a real request (optimistic resurrection: the distribution
    // the project runs answers no `HEAD /`, the client's default probe).
    const nodes = engineNodes(config.ES_URL);
    const cluster = { nodes, auth, resurrectStrategy: 'optimistic' as const };
    if (options.serving) {
      const deadline = config.ENGINE_TIMEOUT_MS;
      this.probeClient = new Client({
        ...cluster,
        requestTimeout: deadline,
        maxRetries: nodes.length - 1,
        Connection: HttpConnection,
      });
      const probe = this.probeClient;
      // Cluster health, not ping: the engine distribution the project runs has no `HEAD /`.
      this.breaker = new Breaker(() => probe.cluster.health({ timeout: '1s' }));
      const marker = markerDocument(new IndexNames(config.ES_INDEX_PREFIX));
      this.restore = new RestoreWatch(async () => {
        const found = await probe.get<RestoreMarker>(marker, { ignore: [404], requestTimeout: 1_000, maxRetries: 0 });
        return found.found ? found._source : undefined;
      });
      // One retry on one node; on a cluster, one on each other node, so a dead node costs a request one quick retry.
      this.client = new Client({
        ...cluster,
        requestTimeout: deadline,
        maxRetries: Math.max(1, nodes.length - 1),
        Transport: QuickRetryTransport,
        Connection: guardedConnection(this.breaker, this.restore, options.observer),
      });
    } else {
      this.client = new Client({
        ...cluster,
        requestTimeout: 60_000,
        maxRetries: Math.max(2, nodes.length),
        Connection: HttpConnection,
      });
    }
    this.names = new IndexNames(config.ES_INDEX_PREFIX);
    this.batcher = new SearchBatcher(
      this.client,
      exactFieldsOf((['compounds', 'assignments', 'sources', 'meta'] as const).map(mappingOf)),
      (searches) => options.observer?.msearchSent(searches),
    );
  }

  /** A search that leaves with the others of this turn of the event loop, in one `_msearch` (see batch.ts). */
  search<T>(request: estypes.SearchRequest): Promise<estypes.SearchResponse<T>> {
    return this.batcher.search<T>(request);
  }

  async close(): Promise<void> {
    this.breaker?.close();
    this.restore?.close();
    await this.client.close();
    await this.probeClient?.close();
  }
}
