/**
 * The load generator of the API benchmarks (bench:api, bench:scale): POSTs at a fixed concurrency
 * (autocannon) or at a fixed rate (an open loop over keep-alive sockets), and what their latencies sum to.
 */
import { connect, type Socket } from 'node:net';
import autocannon from 'autocannon';

export interface Measure {
  rps: number; p50: number; p99: number; requests: number; failures: number;
  /** Why requests failed, with how many each: an answer's status (`HTTP 503`), an error's code or name. */
  failedBy?: FailedBy;
  /** CPU ms per request of the engine (every user of the node, so noisy), the API child and the load generator (bench:api). */
  cpuMs?: { engine: number; api: number; client: number };
  /** The load generator's own GC pauses during the run (bench:api): their milliseconds, and how many were full collections. */
  clientGc?: { ms: number; full: number };
}

export type FailedBy = Record<string, number>;

/** Why a request failed, for `FailedBy`: the engine's or the API's status, else the error's code or name. */
export function failureReason(error: unknown): string {
  const { statusCode, code, name } = (error ?? {}) as { statusCode?: number; code?: string; name?: string };
  return statusCode ? `HTTP ${statusCode}` : code ?? name ?? String(error);
}

/** `failedBy` as text: "HTTP 503 × 20, ECONNRESET × 3". */
export function describeFailures(failedBy: FailedBy): string {
  return Object.entries(failedBy).map(([why, count]) => `${why} × ${count}`).join(', ');
}

/** The `p`th percentile of ascending `sorted`; NaN when it is empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Throughput and p50/p99 of successful requests' `latencies` (ms) over `elapsedSeconds`. */
export function summarise(latencies: number[], failedBy: FailedBy, elapsedSeconds: number): Measure {
  latencies.sort((a, b) => a - b);
  const failures = Object.values(failedBy).reduce((sum, count) => sum + count, 0);
  return { rps: latencies.length / elapsedSeconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), requests: latencies.length, failures, failedBy };
}

/** Counts `count` failures (one by default) of `why`. */
export function countFailure(failedBy: FailedBy, why: string, count = 1): void {
  failedBy[why] = (failedBy[why] ?? 0) + count;
}

/** The failures of several runs, summed by why. */
export function failuresOf(runs: Measure[]): FailedBy {
  const all: FailedBy = {};
  for (const run of runs) for (const [why, count] of Object.entries(run.failedBy ?? {})) countFailure(all, why, count);
  return all;
}

/** autocannon at `connections` against one path, cycling through `bodies`; latencies taken per response, in ms. */
export async function drive(url: string, path: string, bodies: object[], duration: number, connections: number): Promise<Measure> {
  const payloads = bodies.map((body) => JSON.stringify(body));
  let next = 0;
  const latencies: number[] = [];
  const failedBy: FailedBy = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({
      url, connections, duration,
      requests: [{
        method: 'POST', path, headers: { 'content-type': 'application/json' },
        setupRequest: (request) => ({ ...request, body: payloads[next++ % payloads.length] }),
      }],
    }, (error, finished) => (error ? reject(error) : resolve(finished)));
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode === 200) latencies.push(responseTime);
      else countFailure(failedBy, `HTTP ${statusCode}`);
    });
  });
  if (result.errors > 0) countFailure(failedBy, 'connection errors', result.errors);
  if (result.timeouts > 0) countFailure(failedBy, 'timeouts', result.timeouts);
  return summarise(latencies, failedBy, result.duration);
}

/**
 * Keep-alive HTTP/1.1 connections to one host for the open loop, with as little work per request as
 * the load generator can do: each request's bytes are built once, and an answer is read for its
 * status, its `Content-Length` and one header, nothing else. On a core it shares with the API, the
 * load generator's CPU is taken from the API: node:http's client cost it 0.1-0.2 ms a request.
 */
export class Connections {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();

  /**
   * `maxIdleMs`: a connection idle longer is closed, not used, so that a request never races the
   * server's own close of it (the API's keep-alive timeout is 5 s, src/server.ts): a request
   * written as the server closes the socket fails with ECONNRESET, 3 in 56,000 in one bench:api run.
   */
  constructor(private readonly target: URL, private readonly header?: string, private readonly maxIdleMs = 4_000) {}

  /** The bytes of a POST of `body` to `path`. */
  request(path: string, body: string): Buffer {
    const payload = Buffer.from(body);
    const head = `POST ${path} HTTP/1.1\r\nHost: ${this.target.host}\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
  }

  /** Sends `request` on an idle connection (a new one if none is idle); resolves its status and the value of the header asked for. */
  send(request: Buffer): Promise<Answer> {
    // The last connection to go idle is the first reused: when it has idled too long, so have the others.
    const last = this.idle.at(-1);
    if (last && performance.now() - last.idleSince > this.maxIdleMs) for (const stale of this.idle.splice(0)) stale.close();
    const connection = this.idle.pop() ?? this.open();
    return connection.exchange(request).then((answer) => {
      connection.idleSince = performance.now();
      this.idle.push(connection);
      return answer;
    }, (error: unknown) => {
      connection.close();
      throw error;
    });
  }

  close(): void {
    for (const connection of this.all) connection.close();
  }

  private open(): Connection {
    const connection = new Connection(connect({ host: this.target.hostname, port: Number(this.target.port) }), this.header, () => {
      // The server closes a connection idle past its keep-alive timeout: it leaves the pool.
      this.all.delete(connection);
      const at = this.idle.indexOf(connection);
      if (at >= 0) this.idle.splice(at, 1);
    });
    this.all.add(connection);
    return connection;
  }
}

interface Answer { status: number; header?: string }

/** One keep-alive socket, one exchange at a time. */
class Connection {
  /** When its last answer was read (performance.now()). */
  idleSince = 0;
  private received: Buffer = Buffer.alloc(0);
  /** Where the awaited answer ends in `received`, once its head is read. */
  private end = -1;
  private status = 0;
  private value?: string;
  private waiting?: { resolve: (answer: Answer) => void; reject: (error: Error) => void };
  private readonly headerPattern?: RegExp;

  constructor(private readonly socket: Socket, header: string | undefined, onClose: () => void) {
    socket.setNoDelay(true);
    this.headerPattern = header ? new RegExp(`\r\n${header}:[ \t]*([^\r]*)`, 'i') : undefined;
    socket.on('data', (chunk: Buffer) => {
      this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
      this.answer();
    });
    const fail = (error: Error): void => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(error);
    };
    socket.on('error', fail);
    socket.on('close', () => {
      onClose();
      fail(new Error('the connection closed before the answer'));
    });
  }

  exchange(request: Buffer): Promise<Answer> {
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed) {
        reject(new Error('the connection is closed'));
        return;
      }
      this.waiting = { resolve, reject };
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  /** Resolves the exchange once its answer is whole. */
  private answer(): void {
    if (!this.waiting) return;
    if (this.end < 0) {
      const headEnd = this.received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = this.received.toString('latin1', 0, headEnd);
      const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      if (!length) {
        this.socket.destroy(new Error(`an answer without Content-Length: ${head.slice(0, 200)}`));
        return;
      }
      this.end = headEnd + 4 + Number(length[1]);
      this.status = Number(head.slice(9, 12));
      this.value = this.headerPattern?.exec(head)?.[1];
    }
    if (this.received.length < this.end) return;
    this.received = this.received.subarray(this.end);
    this.end = -1;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting.resolve({ status: this.status, header: this.value });
  }
}

/**
 * Open loop at `rate` requests/s, evenly spaced (request i is sent at i/rate s, whatever the
 * answers), so the latency is that of a service at that load, not of bursts: autocannon's
 * `overallRate` sends each second's quota at once and then waits, which queues every burst.
 * `send(i)` resolves true for a success, or why it failed.
 */
export async function paced(send: (i: number) => Promise<true | string>, duration: number, rate: number): Promise<Measure> {
  const latencies: number[] = [];
  const failedBy: FailedBy = {};
  const started = process.hrtime.bigint();
  const interval = 1e9 / rate;
  const total = Math.floor(duration * rate);
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = started + BigInt(Math.round(i * interval));
    const wait = Number(due - process.hrtime.bigint()) / 1e6;
    if (wait > 1) await new Promise((done) => setTimeout(done, wait));
    const begun = process.hrtime.bigint();
    inFlight.push(send(i).then((outcome) => {
      if (outcome === true) latencies.push(Number(process.hrtime.bigint() - begun) / 1e6);
      else countFailure(failedBy, outcome);
    }, (error) => { countFailure(failedBy, failureReason(error)); }));
  }
  await Promise.all(inFlight);
  return summarise(latencies, failedBy, Number(process.hrtime.bigint() - started) / 1e9);
}

/** The service at `rate` requests/s, one body after the other; `onAnswer` sees each answer's status and the value of its header `header`. */
export async function drivePaced(url: string, path: string, bodies: object[], duration: number, rate: number, header?: string, onAnswer?: (status: number, value: string | undefined) => void): Promise<Measure> {
  const connections = new Connections(new URL(url), header);
  const requests = bodies.map((body) => connections.request(path, JSON.stringify(body)));
  try {
    return await paced(async (i) => {
      const answer = await connections.send(requests[i % requests.length]);
      onAnswer?.(answer.status, answer.header);
      return answer.status === 200 || `HTTP ${answer.status}`;
    }, duration, rate);
  } finally {
    connections.close();
  }
}
