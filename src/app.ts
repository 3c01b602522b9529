/**
 * The HTTP service: the OpenAPI document decides routes and validation, handlers are looked up by
 * operationId, one error handler shapes every error.
 */
import cors from 'cors';
import express, { type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import swaggerUi from 'swagger-ui-express';
import type { Config } from './config';
import { SourceCatalog } from './domain/sources';
import type { LookupContext } from './domain/lookup';
import { Engine } from './engine/client';
import { lastLoadOfEachSource } from './engine/loads';
import { openApiDocument, operations } from './api/document';
import { errorHandler, errorSender, isLegacyPath, type ErrorSender } from './api/errors';
import { CostLimiter, operationCosts, rateLimit } from './api/rate-limit';
import { securityHeaders } from './api/security';
import { startTiming, validated } from './api/timing';
import { collapseSlashes, methodGuard, routeTable } from './api/methods';
import { Metrics, routeOf } from './api/metrics';
import { v1Handlers } from './api/v1/routes';
import { batchHandler } from './api/v1/batch';
import { QueryAnswerer } from './api/v1/answer';
import { Jobs } from './jobs';
import { jobHandlers } from './api/v1/jobs';
import { legacyHandlers, renderLegacyError, unmatchedLegacyPath } from './api/legacy';
import { Depictor } from './toolkits/depiction';
import { StructureConverter } from './toolkits/structures';
import { MoleculeToolkit } from './toolkits/molecules';
import { availableParallelism } from 'node:os';
import { log } from './log';
import { asRequest, requestIdOf, type RequestContext } from './request-context';
import { webPages, webPaths } from './web/pages';

export interface AppOptions {
  /** Validate responses against the document too (tests). */
  validateResponses?: boolean;
}

export interface App {
  app: express.Express;
  context: LookupContext;
  /** Answers a request with an error in its API family's shape, as the error middleware would. */
  sendError: ErrorSender;
  close: () => Promise<void>;
}

/** Builds the Express app for `config`. */
export function createApp(config: Config, options: AppOptions = {}): App {
  // The metrics hear the engine's requests, and read the loads through it when scraped.
  const metrics: Metrics = new Metrics(async () => {
    const [loads, sources] = await Promise.all([lastLoadOfEachSource(engine), context.sources.all()]);
    return { loads, sources };
  });
  const engine: Engine = new Engine(config, { serving: true, observer: metrics });
  const structures = new StructureConverter(config.STRUCTURE_TIMEOUT_MS);
  // Substructure matches are checked on up to four cores at once.
  const molecules = new MoleculeToolkit(
    Math.min(4, availableParallelism()),
    config.SUBSTRUCTURE_TIMEOUT_MS + 5_000,
    config.SUBSTRUCTURE_KEPT_MOLECULES,
  );
  const context: LookupContext = { engine, config, sources: new SourceCatalog(engine), structures, molecules };
  // A restore may bring back other sources than those read before it.
  engine.restore?.onChange(() => context.sources.forget());
  const depictor = new Depictor();
  const document = openApiDocument();
  const app = express();
  app.disable('x-powered-by');
  // Behind proxies named in TRUST_PROXY, req.ip (the rate limit's client) comes from X-Forwarded-For.
  app.set('trust proxy', config.TRUST_PROXY);
  app.set('etag', false);
  // The page fetches the document by URL: swagger-ui-express would otherwise inline it into a script
  // through String.replace, where a `$` followed by a backtick in a description breaks the page.
  // The base layout has no top bar, whose logo would need an inline style of its own under the
  // Content-Security-Policy; no validator badge: it would send the document's URL to validator.swagger.io.
  const docsOptions = {
    customSiteTitle: 'chemxref API',
    customCss: '',
    swaggerOptions: { url: '/api/v1/openapi.json', tryItOutEnabled: true, validatorUrl: null, layout: 'BaseLayout' },
  };
  const docsAliases = ['/docs', '/docs/'];
  const documentPaths = [
    '/beta/api/v1/swagger.json',
    '/api/v1/openapi.json',
    '/api/v1/swagger.json',
    '/beta/api/v1/openapi.json',
  ];
  app.use(collapseSlashes);
  // Every request has an id: the client's X-Request-Id, or a new one; it is answered back, logged,
  // and sent to the engine with each of the request's searches.
  app.use((req, res, next) => {
    const request: RequestContext = { id: requestIdOf(req.headers['x-request-id']), engineMs: 0 };
    res.locals.request = request;
    res.setHeader('X-Request-Id', request.id);
    asRequest(request, next);
  });
  app.use(startTiming);
  app.use(metrics.middleware);
  app.use(securityHeaders(swaggerUi.generateHTML(undefined, docsOptions)));
  const pages = [...webPaths, ...docsAliases, '/api/docs', '/metrics', ...documentPaths];
  app.use(methodGuard(routeTable(operations(document), pages)));
  app.use(cors({ methods: ['GET', 'HEAD', 'POST', 'OPTIONS'] }));
  // A line per request only at LOG_LEVEL=debug: at the default level the log says what happens to the
  // service (start, stop, loads, jobs, errors), not every request it answers.
  if (log.debugEnabled)
    app.use((req, res, next) => {
      const started = process.hrtime.bigint();
      const method = req.method;
      res.on('finish', () =>
        log.debug('request', {
          method,
          path: req.originalUrl,
          route: routeOf(req),
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          engineMs: Math.round((res.locals.request as RequestContext).engineMs * 1000) / 1000,
          requestId: (res.locals.request as RequestContext).id,
        }),
      );
      next();
    });
  // HEAD is GET without a body: Node already knows not to send one, so the rest of the chain (the
  // validator, which knows no HEAD, and the routes) sees a GET.
  app.use((req, _res, next) => {
    if (req.method === 'HEAD') req.method = 'GET';
    next();
  });

  const documentJson: RequestHandler = (_req, res) => {
    res.json(document);
  };
  app.get(documentPaths, documentJson);
  app.get('/metrics', metrics.handler);
  app.use('/api/docs', swaggerUi.serve, swaggerUi.setup(undefined, docsOptions));
  // Where a newcomer looks for the docs first; the page itself stays at /api/docs/ (its assets are relative to it).
  app.get(docsAliases, (_req, res) => {
    res.redirect(301, '/api/docs/');
  });
  // RATE_LIMIT charges each operation its `x-rate-cost`, and a web page that searches a connectivity search's; the
  // service's own probes are free.
  const limiter = config.RATE_LIMIT > 0 ? new CostLimiter(config.RATE_LIMIT) : undefined;
  const costs = operationCosts(document);
  app.use(webPages(context, limiter ? rateLimit(limiter, () => costs.get('postConnectivity') ?? 5) : undefined));

  // The bulk endpoints read their own bodies, streamed (a batch's queries are each validated as the
  // body of their single endpoint, by the same document): they come before the JSON body parser.
  const answerer = new QueryAnswerer(context);
  const jobs = new Jobs(engine, config, answerer);
  if (config.JOBS_ENABLED) jobs.start();
  const { postJobs, ...jobQueries } = jobHandlers(jobs, config, context);
  const bulkHandlers: Record<string, RequestHandler> = {
    postBatch: batchHandler(config, answerer, limiter, costs),
    postJobs,
  };
  for (const operation of operations(document).filter((candidate) => bulkHandlers[candidate.operationId])) {
    const chain = limiter
      ? [rateLimit(limiter, () => 1), bulkHandlers[operation.operationId]]
      : [bulkHandlers[operation.operationId]];
    for (const server of operation.servers)
      (app as unknown as Record<string, (path: string, ...handlers: RequestHandler[]) => void>)[operation.method](
        `${server.replace(/\/$/, '')}${operation.path}`,
        ...chain,
      );
  }

  app.use(express.json({ limit: config.BODY_LIMIT, type: ['application/json', 'application/*+json'] }));
  app.use(
    OpenApiValidator.middleware({
      apiSpec: document as never,
      validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
      validateResponses: options.validateResponses ? { removeAdditional: false } : false,
      ignorePaths: (path: string) => isLegacyPath(path) || path === '/health' || path === '/ready',
      ignoreUndocumented: false,
      // The path after collapseSlashes, not the one sent.
      useRequestUrl: true,
    }),
  );
  app.use(validated);

  const handlers = { ...v1Handlers(context, depictor), ...jobQueries, ...legacyHandlers(context) };
  for (const operation of operations(document)) {
    if (bulkHandlers[operation.operationId]) continue;
    const handler = handlers[operation.operationId];
    if (!handler) throw new Error(`no handler for operationId ${operation.operationId}`);
    const cost = costs.get(operation.operationId) ?? 1;
    const chain =
      limiter && !['getHealth', 'getReady'].includes(operation.operationId)
        ? [rateLimit(limiter, () => cost), handler]
        : [handler];
    for (const server of operation.servers) {
      const path = `${server.replace(/\/$/, '')}${operation.path}`;
      (app as unknown as Record<string, (path: string, ...handlers: RequestHandler[]) => void>)[operation.method](
        path,
        ...chain,
      );
    }
  }
  app.use(unmatchedLegacyPath());
  app.use((_req, _res, next) => {
    next(Object.assign(new Error('not found'), { status: 404 }));
  });
  const sendError = errorSender(renderLegacyError);
  app.use(errorHandler(sendError));

  return {
    app,
    context,
    sendError,
    close: async () => {
      limiter?.close();
      await jobs.stop();
      await depictor.close();
      await structures.close();
      await molecules.close();
      await engine.close();
    },
  };
}
