/** `npm start`: serves the API on PORT, against ES_URL / ES_INDEX_PREFIX. Graceful shutdown on SIGTERM. */
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Express } from 'express';
import { readConfig, type Config } from './config';
import { createApp, type AppOptions } from './app';
import { log } from './log';

/** Starts the service; resolves once it listens. `port` 0 picks a free port (tests). */
export async function startServer(config: Config, options: AppOptions = {}, port = config.PORT): Promise<{ server: Server; url: string; stop: () => Promise<void> }> {
  const { app, close } = createApp(config, options);
  const server = await new Promise<Server>((resolve) => {
    const listening = createServer(bornAsExpress(app), app).listen(port, '0.0.0.0', () => resolve(listening));
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`;
  const stop = async (): Promise<void> => {
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeIdleConnections();
    });
    await close();
  };
  return { server, url, stop };
}

/**
 * The server's request and response classes, with the app's `request` and `response` as their
 * prototypes. Express gives every request and response those prototypes (`Object.setPrototypeOf`);
 * objects born with them make that a no-op, so they keep the shapes V8 has optimised Express's and
 * node:http's code for. The constructors call node:http's as plain functions, as node:http itself
 * does (`Reflect.construct` with another `new.target` is a slow path in V8). Key lookups at 16
 * connections: API CPU per request 0.53-0.56 ms -> 0.35-0.38 ms, throughput 1,505-1,610 ->
 * 2,053-2,189 requests/s (three interleaved pairs, BENCHMARKS.md).
 */
function bornAsExpress(app: Express): { IncomingMessage?: typeof IncomingMessage; ServerResponse?: typeof ServerResponse } {
  // A node:http whose classes cannot be called as functions gets node:http's own; Express then sets the prototypes as usual.
  if ([IncomingMessage, ServerResponse].some((type) => /^class\b/.test(Function.prototype.toString.call(type)))) return {};
  function Request(this: IncomingMessage, ...args: ConstructorParameters<typeof IncomingMessage>): void {
    IncomingMessage.apply(this, args);
  }
  Request.prototype = app.request;
  function Response(this: ServerResponse, ...args: ConstructorParameters<typeof ServerResponse>): void {
    ServerResponse.apply(this, args);
  }
  Response.prototype = app.response;
  return { IncomingMessage: Request as unknown as typeof IncomingMessage, ServerResponse: Response as unknown as typeof ServerResponse };
}

async function main(): Promise<void> {
  const config = readConfig();
  const { url, stop } = await startServer(config);
  log.info('chemxref is listening', { url, docs: `${url}/api/docs`, esUrl: config.ES_URL, indexPrefix: config.ES_INDEX_PREFIX });
  const shutdown = (signal: string): void => {
    log.info('shutting down', { signal });
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

if (require.main === module) {
  main().catch((error: Error) => {
    log.error('chemxref could not start', { error: error.message });
    process.exit(1);
  });
}
