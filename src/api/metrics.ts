/**
 * `GET /metrics`, in Prometheus' text format: the API's requests by route template, method and
 * status (count, latency, in flight), the engine requests it makes by operation (latency, errors),
 * the searches each `_msearch` carries, the process's own figures (CPU, memory, event loop lag,
 * GC), and, read from the meta index at scrape time, each source's last load.
 */
import type { Request, RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LoadRecord, SourceDocument } from '../engine/documents';
import type { EngineObserver } from '../engine/client';
import { rowsLoadedFor } from '../domain/sources';

/** The last load of each source, and the sources (for their names). */
/** The last load of each source, and the sources. */
export type LoadFigures = () => Promise<{ loads: Map<number, LoadRecord>; sources: Map<number, SourceDocument> }>;

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Load figures are read at most this often, whatever the scrape rate. */
const loadsCacheMs = 10_000;

/** The route template that answered a request (`/rest/inchikey/:inchikey`), or `unmatched`. */
export function routeOf(req: Request): string {
  return req.route ? `${req.baseUrl}${(req.route as { path: string }).path}` : req.baseUrl || 'unmatched';
}

let processRegistry: Registry | undefined;

/**
 * The process's own series (CPU, memory, event loop, GC), set up once per process however many apps it runs (tests
 * start many).
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class Metrics implements EngineObserver {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'chemxref_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly requestSeconds = new Histogram({
    name: 'chemxref_http_request_duration_seconds',
    help: "Time from a request's arrival to its last byte sent, by route template, method and status",
    labelNames: ['route', 'method', 'status'] as const,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'chemxref_http_requests_in_flight',
    help: 'HTTP requests being answered',
    registers: [this.registry],
  });
  private readonly engineSeconds = new Histogram({
    name: 'chemxref_engine_request_duration_seconds',
    help: 'Elasticsearch requests of the API, by operation (search, msearch, count, open_point_in_time as pit, ...)',
    labelNames: ['operation'] as const,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  private readonly engineErrors = new Counter({
    name: 'chemxref_engine_request_errors_total',
    help: 'Elasticsearch requests of the API that failed (no answer, 429 or 5xx), by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });
  private readonly msearchSearches = new Histogram({
    name: 'chemxref_engine_msearch_searches',
    help: 'Searches carried by each _msearch the API sends (lookups of one event-loop turn, batched)',
    buckets: [1, 2, 3, 4, 5, 6, 7, 8],
    registers: [this.registry],
  });
  private loadsReadAt = 0;
  private loadsReading?: Promise<void>;

  private readonly lastLoad: Record<'ended' | 'age' | 'loaded' | 'rejected', Gauge<'source_id' | 'source'>> & {
    status: Gauge<'source_id' | 'source' | 'status'>;
  };

  constructor(private readonly loadFigures: LoadFigures) {
    // Read when scraped (at most every loadsCacheMs): loads run in other processes, and their
    // records are the truth. Every load series waits for the same read before it is reported.
    const refresh = (): Promise<void> => this.readLoads();
    const labels = ['source_id', 'source'] as const;
    const gauge = (name: string, help: string): Gauge<'source_id' | 'source'> =>
      new Gauge({ name, help, labelNames: labels, registers: [this.registry], collect: refresh });
    this.lastLoad = {
      ended: gauge(
        'chemxref_source_last_load_end_timestamp_seconds',
        'When the last load of each source ended (Unix time)',
      ),
      age: gauge('chemxref_source_last_load_age_seconds', 'Seconds since the last load of each source ended'),
      loaded: gauge(
        'chemxref_source_last_load_rows_loaded',
        "Rows the last load of each source loaded for it (of a dump or reference table, that source's own rows)",
      ),
      rejected: gauge('chemxref_source_last_load_rows_rejected', 'Rows the last load of each source rejected'),
      status: new Gauge({
        name: 'chemxref_source_last_load_status',
        help: 'How the last load of each source ended: 1 for its status (done, failed, refused), 0 for the others',
        labelNames: [...labels, 'status'] as const,
        registers: [this.registry],
        collect: refresh,
      }),
    };
    const read = new Gauge({
      name: 'chemxref_source_last_load_read',
      help: '1 when the load figures were read from the engine at this scrape or the one before, else 0',
      registers: [this.registry],
      collect: async () => {
        await refresh();
        read.set(Date.now() - this.loadsReadAt < loadsCacheMs * 2 ? 1 : 0);
      },
    });
  }

  private readLoads(): Promise<void> {
    if (Date.now() - this.loadsReadAt < loadsCacheMs) return Promise.resolve();
    this.loadsReading ??= (async () => {
      try {
        const { loads, sources } = await this.loadFigures();
        for (const series of Object.values(this.lastLoad)) series.reset();
        for (const [sourceId, record] of loads) {
          const label = { source_id: String(sourceId), source: sources.get(sourceId)?.name ?? '' };
          const ended = Date.parse(record.ended ?? record.heartbeat) / 1000;
          this.lastLoad.ended.set(label, ended);
          this.lastLoad.age.set(label, Math.max(0, Date.now() / 1000 - ended));
          // A load of several sources counts each source's own rows; a total would repeat on every source.
          const loaded = rowsLoadedFor(record, sourceId);
          if (loaded !== undefined) this.lastLoad.loaded.set(label, loaded);
          this.lastLoad.rejected.set(label, record.rowsRejected);
          for (const status of ['done', 'failed', 'refused'])
            this.lastLoad.status.set({ ...label, status }, record.status === status ? 1 : 0);
        }
        this.loadsReadAt = Date.now();
      } catch {
        // The engine unreachable: the load series keep their last values; the request series still answer.
      } finally {
        this.loadsReading = undefined;
      }
    })();
    return this.loadsReading;
  }

  engineRequest(operation: string, seconds: number, failed: boolean): void {
    this.engineSeconds.observe({ operation }, seconds);
    if (failed) this.engineErrors.inc({ operation });
  }

  msearchSent(searches: number): void {
    this.msearchSearches.observe(searches);
  }

  /** Counts every request: in flight while answered, then by the route template that answered it. */
  readonly middleware: RequestHandler = (req, res, next) => {
    const started = process.hrtime.bigint();
    const method = req.method;
    this.inFlight.inc();
    let counted = false;
    const done = (): void => {
      if (counted) return;
      counted = true;
      this.inFlight.dec();
      const labels = { route: routeOf(req), method, status: String(res.statusCode) };
      this.requests.inc(labels);
      this.requestSeconds.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };

  /** The handler of GET /metrics. */
  readonly handler: RequestHandler = (_req, res, next) => {
    Registry.merge([processMetrics(), this.registry])
      .metrics()
      .then((text) => {
        res.type(this.registry.contentType).send(text);
      }, next);
  };
}
