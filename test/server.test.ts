import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { startServer } from '../src/server';
import { testConfig } from './support/fixture';

const repoRoot = join(__dirname, '..');

/** A port nothing listens on (the OS's pick, released again). */
async function freePort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

/** Whether anything accepts a TCP connection on 127.0.0.1:`port`. */
async function answers(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2_000) });
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

describe('the server process', function () {
  this.timeout(60_000);
  let child: ChildProcess | undefined;

  afterEach(() => {
    // Whatever a failed test left, npm gone or not: the process group npm led (started here, by its id).
    if (child?.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // nothing left
    }
  });

  it('SIGTERM to `npm start` stops the server: its port stops answering and nothing is left serving on it', async () => {
    const port = await freePort();
    child = spawn('npm', ['start'], {
      cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PORT: String(port), LOG_LEVEL: 'info' },
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const exited = once(child, 'exit');
    const started = Date.now();
    while (!(await answers(port))) {
      if (Date.now() - started > 30_000 || child.exitCode !== null) throw new Error(`npm start did not answer /health on port ${port}:\n${output}`);
      await sleep(100);
    }
    process.kill(child.pid!, 'SIGTERM');
    const [code, signal] = await Promise.race([exited, sleep(15_000).then(() => { throw new Error(`npm start still runs 15 s after SIGTERM:\n${output}`); })]);
    expect({ code, signal }, output).to.satisfy((x: { code: number | null; signal: string | null }) => x.code === 0 || x.signal === 'SIGTERM');
    // npm gone is not enough: the server it started must be gone too, and nothing else serve the port.
    await sleep(500);
    expect(await answers(port), output).to.equal(false);
    expect(output).to.contain('"message":"stopped"');
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
