import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { startServer } from '../src/server';
import { startApi, type RunningApi } from './support/api';
import { fixturePrefix, testConfig } from './support/fixture';

const repoRoot = join(__dirname, '..');

/** A port nothing listens on (the OS's pick, released again). */
async function freePort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

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

/** A search engine that accepts connections and never answers (a frozen node); `reached` resolves at its first request. */
async function frozenEngine(): Promise<{ url: string; reached: Promise<void>; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let reach: () => void = () => {};
  const reached = new Promise<void>((done) => { reach = done; });
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
interface Started { child: ChildProcess; output: () => string; exited: Promise<unknown[]> }

function startProcess(command: string, args: string[], env: Record<string, string>): Started {
  const child = spawn(command, args, { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'info', ...env } });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  return { child, output: () => output, exited: once(child, 'exit') };
}

async function untilAnswering(started: Started, port: number, host = '127.0.0.1'): Promise<void> {
  const since = Date.now();
  while (!(await answers(port, host))) {
    if (Date.now() - since > 30_000 || started.child.exitCode !== null) throw new Error(`no answer on ${host}:${port}:\n${started.output()}`);
    await sleep(100);
  }
}

/** The JSON log line with `message`. */
function logLine(output: string, message: string): Record<string, unknown> | undefined {
  return output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.message === message);
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

  it('SIGTERM to `npm start` stops the server: its port stops answering and nothing is left serving on it', async () => {
    const port = await freePort();
    started = startProcess('npm', ['start'], { PORT: String(port) });
    await untilAnswering(started, port);
    process.kill(started.child.pid!, 'SIGTERM');
    const [code, signal] = await Promise.race([started.exited, sleep(15_000).then(() => { throw new Error(`npm start still runs 15 s after SIGTERM:\n${started!.output()}`); })]);
    expect({ code, signal }, started.output()).to.satisfy((x: { code: number | null; signal: string | null }) => x.code === 0 || x.signal === 'SIGTERM');
    // npm gone is not enough: the server it started must be gone too, and nothing else serve the port.
    await sleep(500);
    expect(await answers(port), started.output()).to.equal(false);
    expect(logLine(started.output(), 'stopped'), started.output()).to.not.equal(undefined);
  });

  it('HOST chooses the address the server binds to, and the start log names it', async () => {
    const port = await freePort();
    started = startProcess(process.execPath, ['--import', 'tsx', 'src/server.ts'], { PORT: String(port), HOST: '127.0.0.2' });
    await untilAnswering(started, port, '127.0.0.2');
    expect(await answers(port, '127.0.0.1'), 'the default address, 127.0.0.1, is not bound').to.equal(false);
    expect(logLine(started.output(), 'chemxref is listening')).to.deep.include({ address: '127.0.0.2', port, url: `http://127.0.0.2:${port}` });
    process.kill(started.child.pid!, 'SIGTERM');
    await started.exited;
  });

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
      expect(running.server).to.deep.include({ headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000 });
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
    socket.on('data', (chunk: Buffer) => { reply += chunk.toString(); });
    socket.on('error', () => {});
    socket.write(text);
    await Promise.race([once(socket, 'close'), sleep(10_000).then(() => { socket.destroy(); throw new Error('the server kept the stalled connection open for 10 s'); })]);
    return { reply, closedAfterMs: Date.now() - since };
  }

  it('a client that sends half its headers and stalls gets a 408 and its connection closed', async () => {
    const running = await startServer(testConfig('chemxref-test-slow'), { headersTimeoutMs: 300, requestTimeoutMs: 600, timeoutCheckIntervalMs: 50 }, 0);
    try {
      const { reply } = await stall(running.url, 'GET /health HTTP/1.1\r\nHost: chemxref\r\nAccept: appl');
      expect(reply).to.match(/^HTTP\/1\.1 408 /);
    } finally {
      await running.stop();
    }
  });

  it('a client that sends its body too slowly gets a 408 and its connection closed', async () => {
    const running = await startServer(testConfig('chemxref-test-slow'), { headersTimeoutMs: 300, requestTimeoutMs: 600, timeoutCheckIntervalMs: 50 }, 0);
    try {
      const { reply } = await stall(running.url, 'POST /api/v1/compounds HTTP/1.1\r\nHost: chemxref\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n{"type": "inchikey", ');
      expect(reply).to.match(/^HTTP\/1\.1 408 /);
    } finally {
      await running.stop();
    }
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const running = await startServer(testConfig('chemxref-test-slow'), { keepAliveTimeoutMs: 200 }, 0);
    try {
      const { reply } = await stall(running.url, 'GET /health HTTP/1.1\r\nHost: chemxref\r\n\r\n');
      expect(reply).to.match(/^HTTP\/1\.1 200 /);
    } finally {
      await running.stop();
    }
  });
});

describe('stopping the server with requests in flight', function () {
  this.timeout(60_000);

  it('a request still running at the drain deadline is answered 503 with Retry-After in its API family\'s shape, not an empty reply', async () => {
    const engine = await frozenEngine();
    const running = await startServer(testConfig('chemxref-test-frozen', { ES_URL: engine.url }), {}, 0);
    try {
      const v1 = fetch(`${running.url}/api/v1/compounds`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 }),
      });
      const legacy = fetch(`${running.url}/rest/src_compound_id/CHEMBL112/1`);
      const legacyXml = fetch(`${running.url}/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N`, { headers: { accept: 'text/xml' } });
      await engine.reached;
      await sleep(100);
      const stopped = running.stop(300);
      const [v1Response, legacyResponse, xmlResponse] = await Promise.all([v1, legacy, legacyXml]);
      expect(v1Response.status).to.equal(503);
      expect(v1Response.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
      expect(await v1Response.json()).to.deep.include({ response: 'Error', errors: [] }).and.to.have.property('error').that.matches(/shutting down/);
      expect(legacyResponse.status).to.equal(503);
      expect(legacyResponse.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
      expect(await legacyResponse.json()).to.have.property('error').that.matches(/shutting down/);
      expect(xmlResponse.status).to.equal(503);
      expect(await xmlResponse.text()).to.match(/<opt><error>the service is shutting down[^<]*<\/error><\/opt>/);
      await engine.close();
      await stopped;
    } finally {
      await engine.close();
      await running.stop(0);
    }
  });
});

describe('security headers', function () {
  this.timeout(180_000);
  let api: RunningApi;

  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
  });
  after(async () => { await api?.stop(); });

  it('every answer (v1, legacy, error, docs) carries the security headers, a public resource policy and no HSTS', async () => {
    const answers = [
      await api.post('/api/v1/compounds', { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' }),
      await api.get('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA-N'),
      await api.get('/api/v1/nowhere'),
      await api.get('/api/docs/'),
    ];
    for (const { status, headers } of answers) {
      expect(headers.get('content-security-policy'), String(status)).to.contain("default-src 'self'").and.to.contain("script-src 'self'").and.to.contain("object-src 'none'");
      expect(headers.get('x-content-type-options')).to.equal('nosniff');
      expect(headers.get('x-frame-options')).to.equal('SAMEORIGIN');
      expect(headers.get('referrer-policy')).to.equal('no-referrer');
      // Other sites embed depictions and load legacy JSONP: the resource policy must let them.
      expect(headers.get('cross-origin-resource-policy')).to.equal('cross-origin');
      expect(headers.get('strict-transport-security')).to.equal(null);
      expect(headers.get('x-powered-by')).to.equal(null);
    }
  });

  it('the docs page runs in a real browser under its Content-Security-Policy without a single violation, "Try it out" included', async () => {
    const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: install Debian's chromium or set CHROMIUM_PATH`);
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    try {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) violations.push(message.text()); });
      await page.exposeFunction('reportViolation', (text: string) => { violations.push(text); });
      // Page code, as text: the tests are compiled without the DOM's types.
      await page.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(`${e.violatedDirective}: ${e.blockedURI} ${e.sample}`));" });
      await page.goto(`${api.url}/api/docs/`);
      const operation = page.locator('#operations-compounds-postCompounds');
      await operation.locator('.opblock-summary').click();
      const tryItOut = operation.locator('button.try-out__btn', { hasText: 'Try it out' });
      if (await tryItOut.count()) await tryItOut.click();
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/v1/compounds') && r.request().method() === 'POST'),
        operation.locator('button.execute').click(),
      ]);
      expect(response.status()).to.equal(200);
      await operation.locator('.live-responses-table .response-col_status').first().waitFor();
      // The sprite sheet the page hides with an inline style is hidden: its style attribute was allowed.
      expect(await page.evaluate("getComputedStyle(document.querySelector('body > svg')).position")).to.equal('absolute');
      expect(violations).to.deep.equal([]);
    } finally {
      await browser.close();
    }
  });
});

describe('bad numbers and blank compounds', function () {
  this.timeout(180_000);
  let api: RunningApi;

  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
  });
  after(async () => { await api?.stop(); });

  it('sourceID 99999999999, past the 32-bit source ids, is a 400 naming 99999999999 in v1 lookups, connectivity and /sources', async () => {
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
  });

  it('source 99999999999 in a legacy path is a 400 naming it, while the largest 32-bit id, 2147483647, is an unknown source (404)', async () => {
    for (const path of ['/rest/src_compound_id/CHEMBL112/99999999999', '/rest/src_compound_id/CHEMBL112/1/99999999999', '/rest/structure/CHEMBL112/99999999999',
      '/rest/mapping/1/99999999999', '/rest/sources/99999999999', '/legacy/rest/orphanIdMap/CHEMBL112/99999999999']) {
      const { status, body } = await api.get(path);
      expect(status, path).to.equal(400);
      expect(body.error, path).to.equal('"99999999999" is not a source id: a source id is an integer from 1 to 2147483647');
    }
    const criterion = await api.get('/rest/cpd_search/CHEMBL112/1/99999999999/0/0');
    expect(criterion.status).to.equal(400);
    expect(criterion.body.error).to.contain('"99999999999"');
    const largest = await api.get('/rest/src_compound_id/CHEMBL112/2147483647');
    expect(largest.status).to.equal(404);
    expect(largest.body.error).to.equal('source 2147483647 does not exist');
  });

  it('a compound of only whitespace is the same 400 in v1 lookups and connectivity (every type) and in every legacy path with a compound', async () => {
    const v1 = [];
    for (const type of ['uci', 'inchi', 'inchikey', 'sourceID']) {
      for (const path of ['/api/v1/compounds', '/api/v1/connectivity']) v1.push(await api.post(path, { type, compound: '   ', sourceID: 1 }));
    }
    v1.push(await api.post('/api/v1/compounds', { type: 'inchikey', compound: '' }));
    for (const { status, body } of v1) {
      expect(status).to.equal(400);
      expect(body.error).to.equal('the compound is empty or only whitespace');
    }
    for (const path of ['/rest/inchikey/%20%20%20', '/rest/inchikey_all/%20', '/rest/verbose_inchikey/%20', '/rest/inchi/%09%20', '/rest/key_search/%20%20%20/0/0',
      '/rest/src_compound_id/%20%20/1', '/rest/src_compound_id_all/%20/1/101', '/rest/src_compound_id_url/%20/1/1', '/rest/structure/%20/1', '/rest/structure_all/%20/1',
      '/rest/cpd_search/%20/1', '/rest/orphanIdSource/%20%20', '/legacy/rest/orphanIdMap/%20']) {
      const { status, body } = await api.get(path);
      expect(status, path).to.equal(400);
      expect(body.error, path).to.equal('the compound is empty or only whitespace');
    }
    const xml = await api.get('/rest/inchikey/%20%20%20', { accept: 'text/xml' });
    expect(xml.text).to.contain('<opt><error>the compound is empty or only whitespace</error></opt>');
  });
});
