import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { once } from 'node:events';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import express from 'express';
import { errorHandler, errorSender, HttpError } from '../src/api/errors';
import { clientKey, CostLimiter } from '../src/api/rate-limit';
import { EngineUnavailable } from '../src/engine/errors';
import { renderLegacyError } from '../src/api/legacy';
import { startServer } from '../src/server';
import { startApi, type RunningApi } from './support/api';
import { fixturePrefix, testConfig } from './support/fixture';
import { freePort } from './support/checking-clients';

const repoRoot = join(__dirname, '..');

/** Whether anything answers HTTP on `host`:`port`. */
async function answers(port: number, host = '127.0.0.1'): Promise<boolean> {
  try {
    const response = await fetch(`http://${host}:${port}/health`, { signal: AbortSignal.timeout(2_000) });
    await response.text();
    return true;
  } catch {
    return false;
  }
}

/**
 * A search engine that accepts connections and never answers (a frozen node); `reached` resolves at its first request.
 */
async function frozenEngine(): Promise<{ url: string; reached: Promise<void>; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let reach: () => void = () => {};
  const reached = new Promise<void>((done) => {
    reach = done;
  });
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.once('data', () => reach());
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    reached,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** A process started here in its own process group, with everything it printed so far. */
interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<unknown[]>;
}

function startProcess(command: string, args: string[], env: Record<string, string>): Started {
  const child = spawn(command, args, {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return { child, output: () => output, exited: once(child, 'exit') };
}

async function untilAnswering(started: Started, port: number, host = '127.0.0.1'): Promise<void> {
  const since = Date.now();
  while (!(await answers(port, host))) {
    if (Date.now() - since > 30_000 || started.child.exitCode !== null)
      throw new Error(`no answer on ${host}:${port}:\n${started.output()}`);
    await sleep(100);
  }
}

/** The JSON log line with `message`. */
function logLine(output: string, message: string): Record<string, unknown> | undefined {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((line) => line.message === message);
}

describe('the server process', function () {
  this.timeout(60_000);
  let started: Started | undefined;

  afterEach(() => {
    // Whatever a failed test left, its leader gone or not: the process group started here, by its id.
    if (started?.child.pid === undefined) return;
    try {
      process.kill(-started.child.pid, 'SIGKILL');
    } catch {
      // nothing left
    }
  });

  it(
    'SIGTERM to `npm start` stops the server: its port stops answering and ' + 'nothing is left serving on it',
    async () => {
      const port = await freePort();
      started = startProcess('npm', ['start'], { PORT: String(port) });
      await untilAnswering(started, port);
      process.kill(started.child.pid!, 'SIGTERM');
      const [code, signal] = await Promise.race([
        started.exited,
        sleep(15_000).then(() => {
          throw new Error(`npm start still runs 15 s after SIGTERM:\n${started!.output()}`);
        }),
      ]);
      expect({ code, signal }, started.output()).to.satisfy(
        (x: { code: number | null; signal: string | null }) => x.code === 0 || x.signal === 'SIGTERM',
      );
      // npm gone is not enough: the server it started must be gone too, and nothing else serve the port.
      await sleep(500);
      expect(await answers(port), started.output()).to.equal(false);
      expect(logLine(started.output(), 'stopped'), started.output()).to.not.equal(undefined);
    },
  );

  it('HOST chooses the address the server binds to, and the start log names it', async () => {
    const port = await freePort();
    started = startProcess(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      PORT: String(port),
      HOST: '127.0.0.2',
    });
    await untilAnswering(started, port, '127.0.0.2');
    expect(await answers(port, '127.0.0.1'), 'the default address, 127.0.0.1, is not bound').to.equal(false);
    expect(logLine(started.output(), 'chemxref is listening')).to.deep.include({
      address: '127.0.0.2',
      port,
      url: `http://127.0.0.2:${port}`,
    });
    process.kill(started.child.pid!, 'SIGTERM');
    await started.exited;
  });

  it('at the default LOG_LEVEL it logs where it serves and what it holds, and no line per request', async function () {
    // The fixture may be loaded first, with its fingerprints.
    this.timeout(300_000);
    const config = testConfig(await fixturePrefix());
    const port = await freePort();
    started = startProcess(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      PORT: String(port),
      ES_INDEX_PREFIX: config.ES_INDEX_PREFIX,
      LOG_FORMAT: 'json',
      LOG_LEVEL: '',
    });
    await untilAnswering(started, port);
    const lookup = await fetch(`http://127.0.0.1:${port}/api/v1/compounds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' }),
    });
    expect(lookup.status).to.equal(200);
    const since = Date.now();
    while (!logLine(started.output(), 'chemxref holds') && Date.now() - since < 20_000) await sleep(100);
    await sleep(200);
    expect(logLine(started.output(), 'chemxref is listening'), started.output()).to.deep.include({
      url: `http://127.0.0.1:${port}`,
    });
    const holds = logLine(started.output(), 'chemxref holds');
    expect(holds, started.output()).to.deep.include({ level: 'info', sources: 7 });
    expect(holds!.structures).to.be.above(0);
    expect(holds!.currentAssignments).to.be.above(0);
    expect(logLine(started.output(), 'request'), started.output()).to.equal(undefined);
    process.kill(started.child.pid!, 'SIGTERM');
    await started.exited;
  });

  it(
    'with LOG_LEVEL=debug, each request is logged as one JSON line (route, status, time, engine ' +
      'time, request id), answered with X-Request-Id, and its searches reach ' +
      'the engine with that id as X-Opaque-Id',
    async () => {
      // A recording proxy in front of the real engine: what the API sends, headers included.
      const config = testConfig(await fixturePrefix());
      const engineUrl = new URL(config.ES_URL.split(',')[0]);
      const seen: { path: string; opaqueId?: string }[] = [];
      const proxy = createHttpServer((req, res) => {
        seen.push({ path: req.url ?? '', opaqueId: req.headers['x-opaque-id'] as string | undefined });
        const forwarded = httpRequest(
          { host: engineUrl.hostname, port: engineUrl.port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forwarded.on('error', () => res.destroy());
        req.pipe(forwarded);
      });
      await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
      try {
        const port = await freePort();
        const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
        started = startProcess(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
          PORT: String(port),
          ES_URL: proxyUrl,
          ES_INDEX_PREFIX: config.ES_INDEX_PREFIX,
          LOG_FORMAT: 'json',
          LOG_LEVEL: 'debug',
        });
        await untilAnswering(started, port);
        const lookup = await fetch(`http://127.0.0.1:${port}/api/v1/compounds`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': 'lookup-42' },
          body: JSON.stringify({ type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' }),
        });
        expect(lookup.status).to.equal(200);
        expect(lookup.headers.get('x-request-id')).to.equal('lookup-42');
        // Where its time went: each part a duration, the engine's wait within the total.
        const timing = Object.fromEntries(
          (lookup.headers.get('server-timing') ?? '')
            .split(', ')
            .map((part) => [part.split(';')[0], Number(part.split('dur=')[1])]),
        );
        expect(Object.keys(timing)).to.deep.equal(['total', 'validate', 'queue', 'engine', 'took', 'serialise', 'app']);
        expect(timing.engine).to.be.above(0).and.at.most(timing.total);
        expect(timing.validate + timing.queue + timing.engine + timing.serialise + timing.app).to.be.closeTo(
          timing.total,
          0.05,
        );
        const unnamed = await fetch(`http://127.0.0.1:${port}/rest/src_compound_id/CHEMBL112/1`, {
          headers: { 'x-request-id': 'not a sensible id' },
        });
        expect(unnamed.status).to.equal(200);
        const generated = unnamed.headers.get('x-request-id')!;
        expect(generated).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        await sleep(200);
        const lines = started
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        const logged = lines.find((line) => line.message === 'request' && line.requestId === 'lookup-42');
        expect(logged, started.output()).to.deep.include({
          level: 'debug',
          method: 'POST',
          path: '/api/v1/compounds',
          route: '/api/v1/compounds',
          status: 200,
        });
        expect(logged!.ms).to.be.a('number');
        expect(logged!.engineMs)
          .to.be.a('number')
          .and.above(0)
          .and.at.most(logged!.ms as number);
        expect(lines.find((line) => line.message === 'request' && line.requestId === generated)).to.deep.include({
          route: '/rest/src_compound_id/:id/:src',
          status: 200,
        });
        expect(
          seen.filter((request) => request.opaqueId === 'lookup-42').map((request) => request.path.split('?')[0]),
          "the lookup's searches",
        ).to.include('/_msearch');
        expect(
          seen.some((request) => request.opaqueId === generated),
          "the legacy lookup's searches",
        ).to.equal(true);
        process.kill(started.child.pid!, 'SIGTERM');
        await started.exited;
      } finally {
        await new Promise<void>((done) => proxy.close(() => done()));
      }
    },
  );

  it('binds 127.0.0.1 unless HOST says otherwise', async () => {
    const running = await startServer(testConfig('chemxref-test-host', { HOST: '' }), {}, 0);
    try {
      expect(running.address.address).to.equal('127.0.0.1');
      expect(running.url).to.equal(`http://127.0.0.1:${running.address.port}`);
    } finally {
      await running.stop();
    }
  });
});

describe('slow clients', function () {
  this.timeout(30_000);

  it('the server has a 10 s header deadline, a 30 s request deadline and a 5 s keep-alive', async () => {
    const running = await startServer(testConfig('chemxref-test-timeouts'), {}, 0);
    try {
      expect(running.server).to.deep.include({
        headersTimeout: 10_000,
        requestTimeout: 30_000,
        keepAliveTimeout: 5_000,
      });
    } finally {
      await running.stop();
    }
  });

  /** Opens a raw connection and writes `text`; resolves with what came back once the server closes it. */
  async function stall(url: string, text: string): Promise<{ reply: string; closedAfterMs: number }> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    const since = Date.now();
    let reply = '';
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
    });
    socket.on('error', () => {});
    socket.write(text);
    await Promise.race([
      once(socket, 'close'),
      sleep(10_000).then(() => {
        socket.destroy();
        throw new Error('the server kept the stalled connection open for 10 s');
      }),
    ]);
    return { reply, closedAfterMs: Date.now() - since };
  }

  /** What a server started with `options` answers a client that sends `sent` and then stalls. */
  async function replyToStalled(options: Parameters<typeof startServer>[1], sent: string): Promise<string> {
    const running = await startServer(testConfig('chemxref-test-slow'), options, 0);
    try {
      return (await stall(running.url, sent)).reply;
    } finally {
      await running.stop();
    }
  }
  const deadlines = { headersTimeoutMs: 300, requestTimeoutMs: 600, timeoutCheckIntervalMs: 50 };

  it('a client that sends half its headers and stalls gets a 408 and its connection closed', async () => {
    expect(await replyToStalled(deadlines, 'GET /health HTTP/1.1\r\nHost: chemxref\r\nAccept: appl')).to.match(
      /^HTTP\/1\.1 408 /,
    );
  });

  it('a client that sends its body too slowly gets a 408 and its connection closed', async () => {
    const sent =
      'POST /api/v1/compounds HTTP/1.1\r\nHost: chemxref\r\nContent-Type: ' +
      'application/json\r\nContent-Length: 60\r\n\r\n{"type": "inchikey", ';
    expect(await replyToStalled(deadlines, sent)).to.match(/^HTTP\/1\.1 408 /);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    expect(
      await replyToStalled({ keepAliveTimeoutMs: 200 }, 'GET /health HTTP/1.1\r\nHost: chemxref\r\n\r\n'),
    ).to.match(/^HTTP\/1\.1 200 /);
  });
});

describe('stopping the server with requests in flight', function () {
  this.timeout(60_000);

  it(
    'a request still running at the drain deadline is answered 503 with ' +
      "Retry-After in its API family's shape, not an empty reply",
    async () => {
      const engine = await frozenEngine();
      // The engine never answers: the start's layout check gives up after one short try.
      const frozen = testConfig('chemxref-test-frozen', { ES_URL: engine.url });
      const running = await startServer(frozen, { layoutStartCheck: { withinMs: 0, requestTimeoutMs: 200 } }, 0);
      try {
        const v1 = fetch(`${running.url}/api/v1/compounds`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 }),
        });
        const legacy = fetch(`${running.url}/rest/src_compound_id/CHEMBL112/1`);
        const legacyXml = fetch(`${running.url}/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N`, {
          headers: { accept: 'text/xml' },
        });
        await engine.reached;
        await sleep(100);
        const stopped = running.stop(300);
        const [v1Response, legacyResponse, xmlResponse] = await Promise.all([v1, legacy, legacyXml]);
        expect(v1Response.status).to.equal(503);
        expect(v1Response.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
        expect(await v1Response.json())
          .to.deep.include({ response: 'Error', errors: [] })
          .and.to.have.property('error')
          .that.matches(/shutting down/);
        expect(legacyResponse.status).to.equal(503);
        expect(legacyResponse.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
        expect(await legacyResponse.json())
          .to.have.property('error')
          .that.matches(/shutting down/);
        expect(xmlResponse.status).to.equal(503);
        expect(await xmlResponse.text()).to.match(/<opt><error>the service is shutting down[^<]*<\/error><\/opt>/);
        await engine.close();
        await stopped;
      } finally {
        await engine.close();
        await running.stop(0);
      }
    },
  );
});

describe('security headers, bad numbers and blank compounds', function () {
  this.timeout(180_000);
  let api: RunningApi;

  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
  });
  after(async () => {
    await api?.stop();
  });

  it(
    'every answer (v1, legacy, error, docs) carries the security headers, ' + 'a public resource policy and no HSTS',
    async () => {
      const answers = [
        await api.post('/api/v1/compounds', { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' }),
        await api.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N'),
        await api.get('/api/v1/nowhere'),
        await api.get('/api/docs/'),
      ];
      for (const { status, headers } of answers) {
        expect(headers.get('content-security-policy'), String(status))
          .to.contain("default-src 'self'")
          .and.to.contain("script-src 'self'")
          .and.to.contain("object-src 'none'");
        expect(headers.get('x-content-type-options')).to.equal('nosniff');
        expect(headers.get('x-frame-options')).to.equal('SAMEORIGIN');
        expect(headers.get('referrer-policy')).to.equal('no-referrer');
        // Other sites embed depictions and load legacy JSONP: the resource policy must let them.
        expect(headers.get('cross-origin-resource-policy')).to.equal('cross-origin');
        expect(headers.get('strict-transport-security')).to.equal(null);
        expect(headers.get('x-powered-by')).to.equal(null);
      }
    },
  );
  // The docs page and the home page in a real browser under this policy: test/browser.test.ts.

  it(
    'sourceID 99999999999, past the 32-bit source ids, is a 400 naming ' +
      '99999999999 in v1 lookups, connectivity and /sources',
    async () => {
      const answers = [
        await api.post('/api/v1/compounds', { type: 'sourceID', compound: 'CHEMBL112', sourceID: 99999999999 }),
        await api.post('/api/v1/connectivity', { type: 'sourceID', compound: 'CHEMBL112', sourceID: 99999999999 }),
        await api.get('/api/v1/sources/99999999999'),
      ];
      for (const { status, body } of answers) {
        expect(status).to.equal(400);
        expect(body.response).to.equal('Error');
        expect(body.error).to.equal('"sourceID" is 99999999999: it must be <= 2147483647');
      }
    },
  );

  it(
    'source 99999999999 in a legacy path is a 400 naming it; 2147483647 ' + 'and 2147483648 are unknown sources (404)',
    async () => {
      for (const path of [
        '/rest/src_compound_id/CHEMBL112/99999999999',
        '/rest/src_compound_id/CHEMBL112/1/99999999999',
        '/rest/structure/CHEMBL112/99999999999',
        '/rest/mapping/1/99999999999',
        '/rest/sources/99999999999',
        '/legacy/rest/orphanIdMap/CHEMBL112/99999999999',
      ]) {
        const { status, body } = await api.get(path);
        expect(status, path).to.equal(400);
        expect(body.error, path).to.equal(
          '"99999999999" is not a source id: a source id is an integer from 1 to 2147483647',
        );
      }
      const criterion = await api.get('/rest/cpd_search/CHEMBL112/1/99999999999/0/0');
      expect(criterion.status).to.equal(400);
      expect(criterion.body.error).to.contain('"99999999999"');
      const largest = await api.get('/rest/src_compound_id/CHEMBL112/2147483647');
      expect(largest.status).to.equal(404);
      expect(largest.body.error).to.equal('source 2147483647 does not exist');
      // Ten digits are the form of a source id (the document's pattern), but past 2147483647 no source has one.
      const beyond = await api.get('/rest/src_compound_id/CHEMBL112/2147483648');
      const error = 'source 2147483648 does not exist: source ids go up to 2147483647';
      expect([beyond.status, beyond.body.error]).to.deep.equal([404, error]);
    },
  );

  it(
    'a compound of only whitespace is the same 400 in v1 lookups and ' +
      'connectivity (every type) and in every legacy path with a compound',
    async () => {
      const v1 = [];
      for (const type of ['uci', 'inchi', 'inchikey', 'sourceID']) {
        for (const path of ['/api/v1/compounds', '/api/v1/connectivity'])
          v1.push(await api.post(path, { type, compound: '   ', sourceID: 1 }));
      }
      v1.push(await api.post('/api/v1/compounds', { type: 'inchikey', compound: '' }));
      for (const { status, body } of v1) {
        expect(status).to.equal(400);
        expect(body.error).to.equal('the compound is empty or only whitespace');
      }
      for (const path of [
        '/rest/inchikey/%20%20%20',
        '/rest/inchikey_all/%20',
        '/rest/verbose_inchikey/%20',
        '/rest/inchi/%09%20',
        '/rest/key_search/%20%20%20/0/0',
        '/rest/src_compound_id/%20%20/1',
        '/rest/src_compound_id_all/%20/1/101',
        '/rest/src_compound_id_url/%20/1/1',
        '/rest/structure/%20/1',
        '/rest/structure_all/%20/1',
        '/rest/cpd_search/%20/1',
        '/rest/orphanIdSource/%20%20',
        '/legacy/rest/orphanIdMap/%20',
      ]) {
        const { status, body } = await api.get(path);
        expect(status, path).to.equal(400);
        expect(body.error, path).to.equal('the compound is empty or only whitespace');
      }
      const xml = await api.get('/rest/inchikey/%20%20%20', { accept: 'text/xml' });
      expect(xml.text).to.contain('<opt><error>the compound is empty or only whitespace</error></opt>');
    },
  );
});

describe('rate limit (RATE_LIMIT)', function () {
  this.timeout(180_000);
  const paracetamol = { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' };
  let prefix: string;
  const running: RunningApi[] = [];
  /** The API with `overrides` (response validation on), stopped after the test. */
  const limitedApi = async (overrides: Record<string, string>): Promise<RunningApi> => {
    const api = await startApi(testConfig(prefix, overrides));
    running.push(api);
    return api;
  };

  before(async () => {
    prefix = await fixturePrefix();
  });
  afterEach(async () => {
    for (const api of running.splice(0)) await api.stop();
  });

  it(
    'with RATE_LIMIT=10 a client gets 10 lookups, then a 429 in the v1 ' +
      'error shape with Retry-After and the RateLimit headers',
    async () => {
      const api = await limitedApi({ RATE_LIMIT: '10' });
      for (let i = 1; i <= 10; i += 1) {
        const { status, headers } = await api.post('/api/v1/compounds', paracetamol);
        expect(status, `lookup ${i}`).to.equal(200);
        expect(headers.get('ratelimit-limit')).to.equal('10');
        expect(headers.get('ratelimit-remaining')).to.equal(String(10 - i));
        expect(headers.get('ratelimit-policy')).to.equal('10;w=60');
      }
      const { status, body, headers } = await api.post('/api/v1/compounds', paracetamol);
      expect(status).to.equal(429);
      expect(body).to.deep.include({ response: 'Error', errors: [] });
      expect(body.error).to.match(
        /^too many requests: this client may spend 10 cost units a minute \(RATE_LIMIT\); this request costs 1, 0 are left; try again in \d+ s$/,
      );
      // 10 units a minute come back one every 6 s.
      expect(Number(headers.get('retry-after'))).to.be.within(1, 6);
      expect(headers.get('ratelimit-remaining')).to.equal('0');
      expect(Number(headers.get('ratelimit-reset'))).to.be.within(55, 60);
    },
  );

  it('a connectivity search costs five lookups', async () => {
    const api = await limitedApi({ RATE_LIMIT: '10' });
    const search = await api.post('/api/v1/connectivity', paracetamol);
    expect(search.status).to.equal(200);
    expect(search.headers.get('ratelimit-remaining')).to.equal('5');
    expect((await api.post('/api/v1/connectivity', paracetamol)).headers.get('ratelimit-remaining')).to.equal('0');
    const refused = await api.post('/api/v1/compounds', paracetamol);
    expect(refused.status).to.equal(429);
  });

  it(
    'the legacy API answers its 429 in its own shape (JSON or XML), and ' +
      'key_search costs as much as a v1 connectivity search',
    async () => {
      const api = await limitedApi({ RATE_LIMIT: '6' });
      expect(
        (await api.get('/rest/key_search/RZVAJINKPMORJF-UHFFFAOYSA-N')).headers.get('ratelimit-remaining'),
      ).to.equal('1');
      expect((await api.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N')).status).to.equal(200);
      const json = await api.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N');
      expect(json.status).to.equal(429);
      expect(json.body).to.have.all.keys('error');
      expect(json.body.error).to.match(/^too many requests/);
      expect(json.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
      const xml = await api.get('/legacy/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N', { accept: 'text/xml' });
      expect(xml.status).to.equal(429);
      expect(xml.text).to.match(/<opt><error>too many requests[^<]*<\/error><\/opt>/);
    },
  );

  it('health and readiness probes are never limited', async () => {
    const api = await limitedApi({ RATE_LIMIT: '1' });
    for (let i = 0; i < 5; i += 1) {
      expect((await api.get('/health')).status).to.equal(200);
      expect((await api.get('/ready')).status).to.equal(200);
    }
    expect((await api.post('/api/v1/compounds', paracetamol)).status).to.equal(200);
  });

  it('without RATE_LIMIT there is no limit and no RateLimit header', async () => {
    const api = await limitedApi({ RATE_LIMIT: '0' });
    for (let i = 0; i < 30; i += 1) {
      const { status, headers } = await api.post('/api/v1/connectivity', paracetamol);
      expect(status).to.equal(200);
      expect(headers.get('ratelimit-limit')).to.equal(null);
    }
  });

  it(
    'X-Forwarded-For names the client only behind a proxy listed in ' +
      'TRUST_PROXY, so a client cannot dodge the limit by sending it',
    async () => {
      const direct = await limitedApi({ RATE_LIMIT: '1' });
      expect(
        (await direct.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N', { 'x-forwarded-for': '198.51.100.1' })).status,
      ).to.equal(200);
      expect(
        (await direct.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N', { 'x-forwarded-for': '198.51.100.2' })).status,
      ).to.equal(429);
      const proxied = await limitedApi({ RATE_LIMIT: '1', TRUST_PROXY: 'loopback' });
      expect(
        (await proxied.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N', { 'x-forwarded-for': '198.51.100.1' })).status,
      ).to.equal(200);
      expect(
        (await proxied.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N', { 'x-forwarded-for': '198.51.100.2' })).status,
      ).to.equal(200);
      expect(
        (await proxied.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N', { 'x-forwarded-for': '198.51.100.1' })).status,
      ).to.equal(429);
    },
  );

  it('a bucket refills evenly over the minute, and an IPv6 client spends from the bucket of its /64', () => {
    let now = 0;
    const limiter = new CostLimiter(60, () => now);
    try {
      expect(limiter.take('a', 60)).to.include({ allowed: true, remaining: 0, resetSeconds: 60 });
      expect(limiter.take('a', 1)).to.include({ allowed: false, retryAfterSeconds: 1 });
      expect(limiter.take('a', 5)).to.include({ allowed: false, retryAfterSeconds: 5 });
      now = 5_000;
      expect(limiter.take('a', 5)).to.include({ allowed: true, remaining: 0 });
      expect(limiter.take('b', 1)).to.include({ allowed: true, remaining: 59 });
      // A cost above the limit waits for a full bucket instead of never passing.
      expect(limiter.take('c', 500)).to.include({ allowed: true, remaining: 0 });
      now = 125_000;
      limiter.sweep();
      expect(limiter.clients).to.equal(0);
    } finally {
      limiter.close();
    }
    expect(clientKey('2001:db8:1:2::1')).to.equal(clientKey('2001:0db8:0001:0002:ffff:0:0:2'));
    expect(clientKey('2001:db8:1:2::1')).to.not.equal(clientKey('2001:db8:1:3::1'));
    expect(clientKey('::ffff:192.0.2.7')).to.equal('192.0.2.7');
    expect(clientKey('192.0.2.7')).to.equal('192.0.2.7');
  });
});

describe('Retry-After on every 503', function () {
  this.timeout(60_000);

  it('with the engine unreachable, v1 and legacy lookups and /ready answer 503 with Retry-After', async () => {
    const api = await startApi(
      testConfig('chemxref-test-unreachable', { ES_URL: `http://127.0.0.1:${await freePort()}` }),
    );
    try {
      const answers = [
        await api.post('/api/v1/compounds', { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' }),
        await api.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N'),
        await api.get('/ready'),
      ];
      for (const { status, headers } of answers) {
        expect(status).to.equal(503);
        expect(headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
      }
    } finally {
      await api.stop();
    }
  });

  it(
    'a 503 whose error knows when the engine is back says so in ' + 'Retry-After (whole seconds, rounded up), else 1',
    async () => {
      const app = express();
      app.get('/known', () => {
        throw Object.assign(new EngineUnavailable('the search engine is unreachable; try again shortly'), {
          retryAfter: 7,
        });
      });
      app.get('/fraction', () => {
        throw new HttpError(503, 'busy', [], 2.2);
      });
      app.get('/unknown', () => {
        throw new EngineUnavailable('the search engine is unreachable; try again shortly');
      });
      app.use(errorHandler(errorSender(renderLegacyError)));
      const server = app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const { port } = server.address() as { port: number };
      try {
        for (const [path, seconds] of [
          ['/known', '7'],
          ['/fraction', '3'],
          ['/unknown', '1'],
        ]) {
          const response = await fetch(`http://127.0.0.1:${port}${path}`);
          expect(response.status, path).to.equal(503);
          expect(response.headers.get('retry-after'), path).to.equal(seconds);
          expect(await response.json(), path).to.include({ response: 'Error' });
        }
      } finally {
        server.close();
      }
    },
  );
});
