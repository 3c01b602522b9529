// The load generator of the API benchmarks: POSTs at a fixed concurrency (autocannon, or async loops)
// or at a fixed rate (an open loop over keep-alive sockets), and what their latencies sum to.
import { connect, type Socket } from 'node:net';
import autocannon from 'autocannon';

/** A run: its rate, latency percentiles (ms), requests, and failures by why (`HTTP 503`, an error's code). */
export interface Measure {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  failures: number;
  failedBy?: FailedBy;
  /** CPU ms a request of the engine (every user of the node, so noisy), the API and the load generator (bench:api). */
  cpuMs?: { engine: number; api: number; client: number };
}

type FailedBy = Record<string, number>;

/** Why a request failed, for `FailedBy`: the engine's or the API's status, else the error's code or name. */
function failureReason(error: unknown): string {
  const { statusCode, code, name } = (error ?? {}) as { statusCode?: number; code?: string; name?: string };
  return statusCode ? `HTTP ${statusCode}` : (code ?? name ?? String(error));
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
  const [rps, p50, p99] = [latencies.length / elapsedSeconds, percentile(latencies, 50), percentile(latencies, 99)];
  return { rps, p50, p99, requests: latencies.length, failures, failedBy };
}

function countFailure(failedBy: FailedBy, why: string, count = 1): void {
  failedBy[why] = (failedBy[why] ?? 0) + count;
}

/** The failures of `runs` by why, as text: "HTTP 503 × 20, ECONNRESET × 3". */
export function describeFailures(...runs: Measure[]): string {
  const all: FailedBy = {};
  for (const run of runs) for (const [why, count] of Object.entries(run.failedBy ?? {})) countFailure(all, why, count);
  return Object.entries(all)
    .map(([why, count]) => `${why} × ${count}`)
    .join(', ');
}

/** autocannon at `connections` against one path, cycling through `bodies`; latencies taken per response, in ms. */
export async function drive(
  url: string,
  path: string,
  bodies: object[],
  duration: number,
  connections: number,
): Promise<Measure> {
  const payloads = bodies.map((body) => JSON.stringify(body));
  let next = 0;
  const latencies: number[] = [];
  const failedBy: FailedBy = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration,
        requests: [
          {
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json' },
            setupRequest: (request) => ({ ...request, body: payloads[next++ % payloads.length] }),
          },
        ],
      },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode === 200) latencies.push(responseTime);
      else countFailure(failedBy, `HTTP ${statusCode}`);
    });
  });
  if (result.errors > 0) countFailure(failedBy, 'connection errors', result.errors);
  if (result.timeouts > 0) countFailure(failedBy, 'timeouts', result.timeouts);
  return summarise(latencies, failedBy, result.duration);
}

/** `workers` loops calling `work(i)` (i counting up) for `duration` s; the rate is of the answers `work` counts. */
export async function closedLoop(
  workers: number,
  duration: number,
  work: (i: number) => Promise<{ answered: number; failed: number }>,
): Promise<Measure> {
  let [next, answered] = [0, 0];
  const latencies: number[] = [];
  const failedBy: FailedBy = {};
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(duration * 1e9);
  const worker = async (): Promise<void> => {
    while (process.hrtime.bigint() < deadline) {
      const begun = process.hrtime.bigint();
      try {
        const counts = await work(next++);
        answered += counts.answered;
        if (counts.failed > 0) countFailure(failedBy, 'not answered', counts.failed);
        latencies.push(Number(process.hrtime.bigint() - begun) / 1e6);
      } catch (error) {
        countFailure(failedBy, failureReason(error));
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  return { ...summarise(latencies, failedBy, elapsed), rps: answered / elapsed, requests: answered };
}

/**
 * Keep-alive HTTP/1.1 connections for the open loop, as light as can be (node:http's client cost the
 * API 0.1-0.2 ms of its core a request): request bytes built once, an answer read for its status,
 * its Content-Length and one header.
 */
export class Connections {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();

  /** A connection idle over `maxIdleMs` is closed, not used: it would race the API's own close at 5 s (ECONNRESET). */
  constructor(
    private readonly target: URL,
    private readonly header?: string,
    private readonly maxIdleMs = 4_000,
  ) {}

  /** The bytes of a POST of `body` to `path`. */
  request(path: string, body: string): Buffer {
    const payload = Buffer.from(body);
    const head =
      `POST ${path} HTTP/1.1\r\nHost: ${this.target.host}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${payload.length}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
  }

  /** Sends `request` on an idle connection (or a new one); resolves its status and the asked-for header. */
  send(request: Buffer): Promise<Answer> {
    // The last connection to go idle is the first reused: when it has idled too long, so have the others.
    const last = this.idle.at(-1);
    if (last && performance.now() - last.idleSince > this.maxIdleMs) {
      for (const stale of this.idle.splice(0)) stale.close();
    }
    const connection = this.idle.pop() ?? this.open();
    return connection.exchange(request).then(
      (answer) => {
        connection.idleSince = performance.now();
        this.idle.push(connection);
        return answer;
      },
      (error: unknown) => {
        connection.close();
        throw error;
      },
    );
  }

  close(): void {
    for (const connection of this.all) connection.close();
  }

  private open(): Connection {
    const socket = connect({ host: this.target.hostname, port: Number(this.target.port) });
    const connection = new Connection(socket, this.header, () => {
      // The server closes a connection idle past its keep-alive timeout: it leaves the pool.
      this.all.delete(connection);
      const at = this.idle.indexOf(connection);
      if (at >= 0) this.idle.splice(at, 1);
    });
    this.all.add(connection);
    return connection;
  }
}

interface Answer {
  status: number;
  header?: string;
}

/** One keep-alive socket, one exchange at a time. */
class Connection {
  idleSince = 0;
  private received: Buffer = Buffer.alloc(0);
  private end = -1; // where the awaited answer ends in `received`, once its head is read
  private status = 0;
  private value?: string;
  private waiting?: { resolve: (answer: Answer) => void; reject: (error: Error) => void };
  private readonly headerPattern?: RegExp;

  constructor(
    private readonly socket: Socket,
    header: string | undefined,
    onClose: () => void,
  ) {
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
 * Open loop at `rate` requests/s, evenly spaced (request i at i/rate s, whatever the answers), unlike
 * autocannon's `overallRate`, which sends each second's quota at once. `send(i)`: true, or why it failed.
 */
export async function paced(
  send: (i: number) => Promise<true | string>,
  duration: number,
  rate: number,
): Promise<Measure> {
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
    inFlight.push(
      send(i).then(
        (outcome) => {
          if (outcome === true) latencies.push(Number(process.hrtime.bigint() - begun) / 1e6);
          else countFailure(failedBy, outcome);
        },
        (error) => {
          countFailure(failedBy, failureReason(error));
        },
      ),
    );
  }
  await Promise.all(inFlight);
  return summarise(latencies, failedBy, Number(process.hrtime.bigint() - started) / 1e9);
}

/** The service at `rate` requests/s, one body after the other; `onAnswer` sees each status and `header`. */
export async function drivePaced(
  url: string,
  path: string,
  bodies: object[],
  duration: number,
  rate: number,
  header?: string,
  onAnswer?: (status: number, value: string | undefined) => void,
): Promise<Measure> {
  const connections = new Connections(new URL(url), header);
  const requests = bodies.map((body) => connections.request(path, JSON.stringify(body)));
  try {
    return await paced(
      async (i) => {
        const answer = await connections.send(requests[i % requests.length]);
        onAnswer?.(answer.status, answer.header);
        return answer.status === 200 || `HTTP ${answer.status}`;
      },
      duration,
      rate,
    );
  } finally {
    connections.close();
  }
}
