/**
 * Clients that check every answer, and the engine's process to freeze, for the reliability tests.
 * A checking client loops over lookups whose right answer is known and sorts each answer: right,
 * wrong (a 200 without the expected record), 503, or
 * anything else.
 */
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** A lookup and the record a right answer must contain. */
export interface CheckedLookup {
  path: string;
  body: Record<string, unknown>;
  sourceId: number;
  compoundId: string;
  standardInchiKey: string;
}

/**
 * right: 200 with the expected record; wrong: 200 without it; unavailable: 503; error: any other status, no answer, or
 * a client timeout.
 */
export type Verdict = 'right' | 'wrong' | 'unavailable' | 'error';

export interface Answer {
  lookup: CheckedLookup;
  /** performance.now() when the request left and when its answer was read, in ms. */
  started: number;
  ended: number;
  /** HTTP status; 0 when no answer came (connection error or client timeout). */
  status: number;
  verdict: Verdict;
  retryAfter: string | undefined;
  /** For a wrong answer or an error: what came instead. */
  detail?: string;
}

interface CompoundsBody {
  response?: string;
  compounds?: { standardInchiKey?: string; sources?: { id?: number; compoundId?: string }[] }[];
}

/** Whether a v1 compounds answer holds the structure `standardInchiKey` with the record `sourceId:compoundId`. */
export function holdsRecord(body: unknown, lookup: CheckedLookup): boolean {
  const compounds = (body as CompoundsBody | undefined)?.compounds ?? [];
  return compounds.some(
    (compound) =>
      compound.standardInchiKey === lookup.standardInchiKey &&
      (compound.sources ?? []).some((s) => s.id === lookup.sourceId && s.compoundId === lookup.compoundId),
  );
}

/** For each record, POST /api/v1/compounds by its InChIKey and by its sourceID. */
export function compoundLookups(
  sourceId: number,
  records: { compoundId: string; standardInchiKey: string }[],
): CheckedLookup[] {
  return records.flatMap((record) => [
    { path: '/api/v1/compounds', body: { type: 'inchikey', compound: record.standardInchiKey }, sourceId, ...record },
    {
      path: '/api/v1/compounds',
      body: { type: 'sourceID', compound: record.compoundId, sourceID: sourceId },
      sourceId,
      ...record,
    },
  ]);
}

/** One POST with a JSON body; resolves with the status (0 when none came within `timeoutMs`), headers and body text. */
export async function postJson(
  url: string,
  body: unknown,
  options: { agent?: Agent; timeoutMs: number },
): Promise<{ status: number; retryAfter?: string; text: string; error?: string }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: options.agent,
        signal: AbortSignal.timeout(options.timeoutMs),
        headers: { 'content-type': 'application/json', 'content-length': payload.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', (error) => resolve({ status: 0, text: '', error: error.message }));
      },
    );
    req.on('error', (error) =>
      resolve({
        status: 0,
        text: '',
        error:
          error.name === 'AbortError' || error.name === 'TimeoutError'
            ? `no answer within ${options.timeoutMs} ms`
            : error.message,
      }),
    );
    req.end(payload);
  });
}

function judge(
  lookup: CheckedLookup,
  status: number,
  text: string,
  error?: string,
): { verdict: Verdict; detail?: string } {
  if (status === 503) return { verdict: 'unavailable' };
  if (status !== 200) return { verdict: 'error', detail: error ?? `${status} ${text.slice(0, 200)}` };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { verdict: 'error', detail: `200 with a body that is not JSON: ${text.slice(0, 200)}` };
  }
  if (holdsRecord(body, lookup)) return { verdict: 'right' };
  return { verdict: 'wrong', detail: `${JSON.stringify(lookup.body)} -> 200 ${text.slice(0, 300)}` };
}

/**
 * `clients` loops, each sending one lookup at a time (the next of `lookups`, round robin across all
 * clients) to the API at `url` until `stop()`, keeping every answer.
 */
export class CheckingClients {
  readonly answers: Answer[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private next = 0;
  private readonly agent: Agent;

  /**
   * `timeoutMs`: a client gives up on an answer after this long. `pauseAfterFailureMs` (100): after a
   * 503 or no answer a client waits this long before its next lookup, as a polite client would
   * (Retry-After itself is not waited for, so a recovery is seen within the pause).
   */
  constructor(
    private readonly url: string,
    private readonly lookups: CheckedLookup[],
    private readonly options: { clients: number; timeoutMs: number; pauseAfterFailureMs?: number },
  ) {
    if (lookups.length === 0) throw new Error('checking clients need at least one lookup');
    this.agent = new Agent({ keepAlive: true, maxSockets: options.clients });
  }

  start(): void {
    this.running = true;
    this.loops = Array.from({ length: this.options.clients }, () => this.loop());
  }

  /** Stops after the requests in flight are answered; resolves with every answer. */
  async stop(): Promise<Answer[]> {
    this.running = false;
    await Promise.all(this.loops);
    this.agent.destroy();
    return this.answers;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const lookup = this.lookups[this.next++ % this.lookups.length];
      const started = performance.now();
      const { status, retryAfter, text, error } = await postJson(`${this.url}${lookup.path}`, lookup.body, {
        agent: this.agent,
        timeoutMs: this.options.timeoutMs,
      });
      this.answers.push({
        lookup,
        started,
        ended: performance.now(),
        status,
        retryAfter,
        ...judge(lookup, status, text, error),
      });
      if (status === 0 || status === 503) await sleep(this.options.pauseAfterFailureMs ?? 100);
    }
  }
}

export interface Tally {
  requests: number;
  right: number;
  wrong: number;
  unavailable: number;
  unavailableWithoutRetryAfter: number;
  errors: number;
}

export function tally(answers: Answer[]): Tally {
  const count = (verdict: Verdict): number => answers.filter((a) => a.verdict === verdict).length;
  return {
    requests: answers.length,
    right: count('right'),
    wrong: count('wrong'),
    unavailable: count('unavailable'),
    unavailableWithoutRetryAfter: answers.filter((a) => a.verdict === 'unavailable' && a.retryAfter === undefined)
      .length,
    errors: count('error'),
  };
}

/** The answers whose request was in flight at some moment of [from, to] (performance.now() ms). */
export function answersDuring(answers: Answer[], from: number, to: number): Answer[] {
  return answers.filter((a) => a.started <= to && a.ended >= from);
}

/** A TCP port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

// ---------------------------------------------------------------------------------------------
// The engine's process

/**
 * The process id of the Elasticsearch node at `esUrl`, from its nodes info, checked to be a Java
 * process of this machine (the node could be remote, or in a container whose pids are not ours).
 */
export async function enginePid(esUrl: string): Promise<number> {
  const response = await fetch(`${esUrl}/_nodes/_local/process`, { signal: AbortSignal.timeout(10_000) });
  const info = (await response.json()) as { nodes: Record<string, { process?: { id?: number } }> };
  const pid = Object.values(info.nodes)[0]?.process?.id;
  if (!pid) throw new Error(`${esUrl} did not say its process id`);
  const commandLine = existsSync(`/proc/${pid}/cmdline`) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
  if (!/java/.test(commandLine) || !/elasticsearch/i.test(commandLine)) {
    throw new Error(
      `process ${pid} of ${esUrl} is not an Elasticsearch node of this ` +
        `machine (a remote or containerised engine cannot be frozen from here)`,
    );
  }
  return pid;
}

/**
 * Freezes the engine's process (SIGSTOP) until `thaw()`. While frozen, this process's exit or a
 * SIGINT/SIGTERM thaws it first, so a test or benchmark that dies never leaves the engine stopped.
 */
export class EngineFreezer {
  private frozen = false;
  private readonly onExit = (): void => this.thaw();
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.thaw();
    // Re-raised only when nobody else handles it (a benchmark cleaning up on SIGINT exits itself).
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };

  constructor(readonly pid: number) {}

  get isFrozen(): boolean {
    return this.frozen;
  }

  freeze(): void {
    if (this.frozen) return;
    process.on('exit', this.onExit);
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
    this.frozen = true;
    process.kill(this.pid, 'SIGSTOP');
  }

  thaw(): void {
    if (!this.frozen) return;
    this.frozen = false;
    try {
      process.kill(this.pid, 'SIGCONT');
    } catch {
      // The process is gone: nothing left to thaw.
    }
    process.removeListener('exit', this.onExit);
    process.removeListener('SIGINT', this.onSignal);
    process.removeListener('SIGTERM', this.onSignal);
  }
}
