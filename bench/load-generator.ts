/**
 * The load generator of the API benchmarks (bench:api, bench:scale): POSTs at a fixed concurrency
 * (autocannon) or at a fixed rate (an open loop over node:http), and what their latencies sum to.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import autocannon from 'autocannon';

export interface Measure {
  rps: number; p50: number; p99: number; requests: number; failures: number;
  /** CPU ms per request of the engine (every user of the node, so noisy), the API child and the load generator (bench:api). */
  cpuMs?: { engine: number; api: number; client: number };
}

/** The `p`th percentile of ascending `sorted`; NaN when it is empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Throughput and p50/p99 of successful requests' `latencies` (ms) over `elapsedSeconds`. */
export function summarise(latencies: number[], failures: number, elapsedSeconds: number): Measure {
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / elapsedSeconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), requests: latencies.length, failures };
}

/** autocannon at `connections` against one path, cycling through `bodies`; latencies taken per response, in ms. */
export async function drive(url: string, path: string, bodies: object[], duration: number, connections: number): Promise<Measure> {
  const payloads = bodies.map((body) => JSON.stringify(body));
  let next = 0;
  const latencies: number[] = [];
  let failures = 0;
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
      else failures += 1;
    });
  });
  return summarise(latencies, failures + result.errors + result.timeouts, result.duration);
}

/** One POST through a keep-alive agent (node:http costs the load generator a fraction of fetch's CPU); `onAnswer` sees each answer's status and headers. */
function post(target: URL, agent: Agent, path: string, body: string, onAnswer?: (status: number, headers: IncomingHttpHeaders) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: target.hostname, port: target.port, path, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      response.resume();
      onAnswer?.(response.statusCode ?? 0, response.headers);
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * Open loop at `rate` requests/s, evenly spaced (request i is sent at i/rate s, whatever the
 * answers), so the latency is that of a service at that load, not of bursts: autocannon's
 * `overallRate` sends each second's quota at once and then waits, which queues every burst.
 * `send(i)` resolves true for a success.
 */
export async function paced(send: (i: number) => Promise<boolean>, duration: number, rate: number): Promise<Measure> {
  const latencies: number[] = [];
  let failures = 0;
  const started = process.hrtime.bigint();
  const interval = 1e9 / rate;
  const total = Math.floor(duration * rate);
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = started + BigInt(Math.round(i * interval));
    const wait = Number(due - process.hrtime.bigint()) / 1e6;
    if (wait > 1) await new Promise((done) => setTimeout(done, wait));
    const begun = process.hrtime.bigint();
    inFlight.push(send(i).then((ok) => {
      if (ok) latencies.push(Number(process.hrtime.bigint() - begun) / 1e6);
      else failures += 1;
    }, () => { failures += 1; }));
  }
  await Promise.all(inFlight);
  return summarise(latencies, failures, Number(process.hrtime.bigint() - started) / 1e9);
}

/** The service at `rate` requests/s, one body after the other; `onAnswer` sees each answer's status and headers. */
export async function drivePaced(url: string, path: string, bodies: object[], duration: number, rate: number, onAnswer?: (status: number, headers: IncomingHttpHeaders) => void): Promise<Measure> {
  const payloads = bodies.map((body) => JSON.stringify(body));
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  try {
    return await paced(async (i) => (await post(target, agent, path, payloads[i % payloads.length], onAnswer)) === 200, duration, rate);
  } finally {
    agent.destroy();
  }
}
