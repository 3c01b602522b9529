/**
 * `npm start`: serves the API on HOST:PORT, against ES_URL / ES_INDEX_PREFIX. On SIGTERM or SIGINT it
 * stops taking connections, lets the requests in flight finish, and answers those still running at
 * the drain deadline with a 503 of their API family instead of cutting them off.
 */
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, Request, Response } from 'express';
import { readConfig, type Config } from './config';
import { createApp, type AppOptions } from './app';
import { HttpError } from './api/errors';
import { watchLayout, type LayoutStartCheck } from './engine/layout';
import { log } from './log';
import { Engine } from './engine/client';
import { fingerprintlessLine, holdingsOf } from './domain/holdings';

/** How long a stop lets the requests in flight run before answering them 503. */
export const drainDeadlineMs = 10_000;
/** The Retry-After of the 503 a request still running at the drain deadline gets: about a restart. */
const restartSeconds = 5;

export interface ServerOptions extends AppOptions {
  /** Address to bind; config.HOST by default. */
  host?: string;
  /** A client must have sent its request's headers within this (slow-header clients, "slowloris"). */
  headersTimeoutMs?: number;
  /** ... and its whole request within this. */
  requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs?: number;
  /**
   * How often node checks connections against the two deadlines above (node's default, 30 s, would let a slow client
   * run 40 s).
   */
  timeoutCheckIntervalMs?: number;
  /** The start's first check of the index layout (8 s of tries, 4 s each, by default). */
  layoutStartCheck?: LayoutStartCheck;
}

/**
 * Defaults of the server's deadlines: long enough for any honest client of a lookup API, short enough that slow ones
 * cannot hold sockets for minutes.
 */
export const serverTimeouts = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  timeoutCheckIntervalMs: 1_000,
};

/** The URL a bound address is reached at: the loopback of its family when it is every interface (0.0.0.0, ::). */
export function urlOf(address: AddressInfo): string {
  const ipv6 = address.family === 'IPv6';
  const host =
    address.address === '0.0.0.0' || address.address === '::'
      ? ipv6
        ? '[::1]'
        : '127.0.0.1'
      : ipv6
        ? `[${address.address}]`
        : address.address;
  return `http://${host}:${address.port}`;
}

export interface RunningServer {
  server: Server;
  /** Where the server listens, as bound (address, family, port). */
  address: AddressInfo;
  /** A URL that reaches it from this machine. */
  url: string;
  /**
   * Stops taking connections, waits up to `deadlineMs` for the requests in flight, answers those
   * still running 503 (Retry-After), then closes every connection and the app's engine client.
   */
  stop: (deadlineMs?: number) => Promise<void>;
}

/** Starts the service; resolves once it listens on `options.host` (config.HOST). `port` 0 picks a free port (tests). */
export async function startServer(
  config: Config,
  options: ServerOptions = {},
  port = config.PORT,
): Promise<RunningServer> {
  const timeouts = { ...serverTimeouts, ...options };
  const { app, close, sendError, context } = createApp(config, options);
  // A newer layout is refused here; an older one is served, and followed while it is migrated.
  let stopWatching: () => void;
  try {
    stopWatching = await watchLayout(context.engine, log, options.layoutStartCheck);
  } catch (error) {
    await close();
    throw error;
  }
  // The responses not yet finished: at the drain deadline each one still open gets its 503.
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  let drained: (() => void) | undefined;
  function untrack(this: ServerResponse): void {
    inFlight.delete(this);
    if (draining && inFlight.size === 0) drained?.();
  }
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    inFlight.add(res);
    res.on('close', untrack);
    // A keep-alive client is told to reconnect (elsewhere) once the server drains.
    if (draining) res.setHeader('Connection', 'close');
    app(req as Request, res as Response);
  };
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = createServer(
      {
        ...bornAsExpress(app),
        headersTimeout: timeouts.headersTimeoutMs,
        requestTimeout: timeouts.requestTimeoutMs,
        connectionsCheckingInterval: timeouts.timeoutCheckIntervalMs,
      },
      handle,
    );
    listening.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
    listening.once('error', reject);
    listening.listen(port, options.host ?? config.HOST, () => {
      listening.off('error', reject);
      resolve(listening);
    });
  });
  const address = server.address() as AddressInfo;
  const url = urlOf(address);
  /** Resolves once no request is in flight, or after `ms`. */
  const untilDrained = async (ms: number): Promise<void> => {
    if (inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((done) => {
      drained = done;
      timer = setTimeout(done, ms);
    });
    clearTimeout(timer);
  };
  let stopping: Promise<void> | undefined;
  const stop = (deadlineMs = drainDeadlineMs): Promise<void> => {
    stopping ??= (async () => {
      draining = true;
      const closed = new Promise<void>((done) => server.close(() => done()));
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      server.closeIdleConnections();
      await untilDrained(deadlineMs);
      if (inFlight.size > 0) {
        log.warn('answering 503 to the requests still running at the drain deadline', {
          requests: inFlight.size,
          deadlineMs,
        });
        const unavailable = new HttpError(503, 'the service is shutting down; try again shortly', [], restartSeconds);
        for (const res of inFlight) {
          if (res.headersSent) continue;
          res.setHeader('Connection', 'close');
          sendError(unavailable, res.req as Request, res as Response);
        }
        // Each 503 is a few hundred bytes: a moment for them to leave before the sockets are cut.
        await untilDrained(1_000);
      }
      server.closeAllConnections();
      await closed;
      stopWatching();
      await close();
    })();
    return stopping;
  };
  return { server, address, url, stop };
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
function bornAsExpress(app: Express): {
  IncomingMessage?: typeof IncomingMessage;
  ServerResponse?: typeof ServerResponse;
} {
  // A node:http whose classes cannot be called as functions gets node:http's own; Express then sets the prototypes as
  // usual.
  if ([IncomingMessage, ServerResponse].some((type) => /^class\b/.test(Function.prototype.toString.call(type))))
    return {};
  function Request(this: IncomingMessage, ...args: ConstructorParameters<typeof IncomingMessage>): void {
    IncomingMessage.apply(this, args);
  }
  Request.prototype = app.request;
  function Response(this: ServerResponse, ...args: ConstructorParameters<typeof ServerResponse>): void {
    ServerResponse.apply(this, args);
  }
  Response.prototype = app.response;
  return {
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
}

/**
 * Logs what the indices hold, and the structures no similarity or substructure search finds, with why;
 * a warning if the engine cannot say.
 */
async function logHoldings(config: Config): Promise<void> {
  const engine = new Engine(config);
  try {
    const holdings = await holdingsOf(engine);
    log.info('chemxref holds', {
      structures: holdings.structures,
      currentAssignments: holdings.currentAssignments,
      sources: holdings.sources,
      structuresWithoutFingerprint: holdings.withoutFingerprint,
    });
    const fingerprintless = fingerprintlessLine(holdings);
    if (fingerprintless) log.info(fingerprintless, { structuresWithoutFingerprint: holdings.withoutFingerprint });
  } catch (error) {
    log.warn('could not count what the indices hold', { error: (error as Error).message });
  } finally {
    await engine.close();
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const { address, url, stop } = await startServer(config);
  log.info('chemxref is listening', {
    address: address.address,
    port: address.port,
    url,
    docs: `${url}/api/docs`,
    esUrl: config.ES_URL,
    indexPrefix: config.ES_INDEX_PREFIX,
    ...(address.address === '0.0.0.0' || address.address === '::' ? { note: 'bound to every interface (HOST)' } : {}),
  });
  const shutdown = (signal: string): void => {
    log.info('shutting down', { signal, drainDeadlineMs });
    // Should closing hang past the deadline and the 503s, the process still goes.
    setTimeout(() => process.exit(1), drainDeadlineMs + 5_000).unref();
    stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error: Error) => {
        log.error('stopping failed', { error: error.message });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  await logHoldings(config);
}

if (require.main === module) {
  main().catch((error: Error) => {
    log.error('chemxref could not start', { error: error.message });
    process.exit(1);
  });
}
