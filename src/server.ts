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
 * prototypes. Express gives every request and response those prototypes (`Object.setPrototypeOf`),
 * and V8 handles each such change with a map transition whose garbage outlives the young
 * generation; objects born with the prototype make the change a no-op. At 670 key lookups/s the
 * API's young collections took 2.0–3.3 ms instead of 3.0–5.1 ms (four interleaved pairs, BENCHMARKS.md).
 */
function bornAsExpress(app: Express): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  function Request(this: unknown, ...args: ConstructorParameters<typeof IncomingMessage>): IncomingMessage {
    return Reflect.construct(IncomingMessage, args, new.target);
  }
  Request.prototype = app.request;
  function Response(this: unknown, ...args: ConstructorParameters<typeof ServerResponse>): ServerResponse {
    return Reflect.construct(ServerResponse, args, new.target);
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
