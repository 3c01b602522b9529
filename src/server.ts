/** `npm start`: serves the API on PORT, against ES_URL / ES_INDEX_PREFIX. Graceful shutdown on SIGTERM. */
import type { Server } from 'node:http';
import { readConfig, type Config } from './config';
import { createApp, type AppOptions } from './app';
import { log } from './log';

/** Starts the service; resolves once it listens. `port` 0 picks a free port (tests). */
export async function startServer(config: Config, options: AppOptions = {}, port = config.PORT): Promise<{ server: Server; url: string; stop: () => Promise<void> }> {
  const { app, close } = createApp(config, options);
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(port, '0.0.0.0', () => resolve(listening));
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
