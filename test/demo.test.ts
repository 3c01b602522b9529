import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { readConfig } from '../src/config';
import { clusterNodes } from '../scripts/engine';
import { esStopCommand } from '../scripts/demo';
import { Engine } from '../src/engine/client';
import { atRunEnd, runEngine } from './support/engine';
import { freshPrefix, testConfig } from './support/fixture';
import { freePort } from './support/checking-clients';

const root = join(__dirname, '..');

/** The session id of a process (the sixth field of /proc/<pid>/stat). */
function sessionOf(pid: number | 'self'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
}

/** Runs `npm run demo` in a process group of its own, as a terminal would; collects what it prints. */
function demo(env: Record<string, string>, args: string[] = []): { child: ChildProcess; output: () => string } {
  const child = spawn('npm', ['run', '--silent', 'demo', ...(args.length > 0 ? ['--', ...args] : [])], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return { child, output: () => output };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // gone already
  }
}

/**
 * The Quick start's demo, started in the background from the start of the run (a root hook of this
 * file): its minute of loading and computing fingerprints overlaps the other files' tests.
 */
let quickStart: { run: ReturnType<typeof demo>; port: number } | undefined;
before(async () => {
  const port = await freePort();
  // The test engine holds the other tests' indices: --force, as the demo's refusal says.
  quickStart = { run: demo({ PORT: String(port), ES_INDEX_PREFIX: freshPrefix('demo') }, ['--force']), port };
  const { child, output } = quickStart.run;
  atRunEnd(async () => {
    if (child.exitCode === null && child.signalCode === null) killGroup(child, 'SIGKILL');
    // The rejects file its fingerprints wrote into rejects/, as a user's demo does (the structures without one).
    for (const [, loadId] of output().matchAll(/"loadId":"([^"]+)"/g))
      rmSync(join(root, 'rejects', `${loadId}-fingerprints.tsv`), { force: true });
  });
});

describe('the Quick start: npm run demo', function () {
  this.timeout(180_000);
  const config = readConfig();
  const running: ChildProcess[] = [];
  afterEach(() => {
    for (const child of running.splice(0)) killGroup(child, 'SIGKILL');
  });

  it(
    'loads the sample, serves the API on PORT, every example request it ' +
      'prints answers, and Ctrl-C stops the demo but not the engine',
    async () => {
      const { run, port } = quickStart!;
      running.push(run.child);
      const since = Date.now();
      while (!run.output().includes('Stop with Ctrl-C')) {
        if (Date.now() - since > 170_000 || run.child.exitCode !== null)
          throw new Error(`the demo did not start:\n${run.output()}`);
        await sleep(200);
      }
      const loaded = run
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line.message === 'sample loaded');
      expect(loaded, run.output()).to.deep.include({
        rowsRead: 8 + 28_437 + 29_093,
        rowsLoaded: 8 + 28_437 + 29_092,
        rowsRejected: 0,
      });
      // The load computed the fingerprints of its structures (a few of them cannot be rebuilt).
      expect(loaded!.fingerprints, run.output()).to.be.within(28_000, 28_437);
      expect(run.output()).to.include(`chemxref is running on http://127.0.0.1:${port}`);
      // What it holds, and the structures no similarity or substructure search finds, with why.
      expect(run.output()).to.include('It holds 28,437 structures and 28,993 current assignments in 8 sources.');
      expect(run.output()).to.include(
        '6 structures have no fingerprint (RDKit could not read the molecule Indigo rebuilt from the InChI): ' +
          'similarity and substructure searches cannot find them.',
      );
      expect(run.output()).to.include(`Stop with Ctrl-C (the engine keeps running: ${esStopCommand(config)}).`);
      const examples = run
        .output()
        .split('\n')
        .filter((line) => line.startsWith('  curl '))
        .map((line) => line.trim());
      expect(examples).to.have.length(5);
      for (const example of examples) {
        const curl = spawn('bash', ['-c', example], { stdio: ['ignore', 'pipe', 'inherit'] });
        let body = '';
        curl.stdout!.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        await once(curl, 'close');
        const answer = JSON.parse(body) as { response?: string } | unknown[];
        if (Array.isArray(answer)) expect(answer, example).to.not.be.empty;
        else expect(answer.response, `${example}\n${body.slice(0, 300)}`).to.equal('Success');
      }
      // At the default LOG_LEVEL the requests it answered wrote no log line.
      expect(run.output()).not.to.match(/"message":"request"/);
      killGroup(run.child, 'SIGINT');
      await once(run.child, 'exit');
      const stopped =
        `the demo stops; the engine on ${config.ES_URL} keeps running ` + `(${esStopCommand(config)} stops it)`;
      expect(run.output()).to.include(stopped);
      const health = await fetch(`${config.ES_URL.split(',')[0]}/_cluster/health`);
      expect(health.status, 'the engine still answers after Ctrl-C').to.equal(200);
    },
  );

  it('refuses to write into an engine that holds indices of others, and says how to go on', async () => {
    // An index of someone else's (under the run's prefix, which the run deletes), whatever else the engine holds.
    const others = new Engine(testConfig(freshPrefix('others')));
    try {
      await others.client.indices.create({ index: `${others.names.prefix}-data` }, { ignore: [400] });
    } finally {
      await others.close();
    }
    const run = demo({ PORT: String(await freePort()), ES_INDEX_PREFIX: freshPrefix('demo-refused') });
    running.push(run.child);
    const [code] = await once(run.child, 'exit');
    expect(code, run.output()).to.equal(2);
    expect(run.output()).to.match(/holds indices that are not chemxref's/);
    expect(run.output()).to.include('npm run demo -- --force');
    expect(run.output()).to.include('ES_URL=http://127.0.0.1:9250 npm run demo');
  });

  it("its stop hint names ES_URL and ES_NODES when they are not the defaults: it stops the demo's engine only", () => {
    expect(esStopCommand({ ES_URL: 'http://127.0.0.1:9200', ES_NODES: 1 })).to.equal('npm run es:stop');
    expect(esStopCommand({ ES_URL: 'http://127.0.0.1:9250', ES_NODES: 1 })).to.equal(
      'ES_URL=http://127.0.0.1:9250 npm run es:stop',
    );
    // The demo starts one node whatever ES_NODES says: the command that stops it must say so too.
    expect(esStopCommand({ ES_URL: 'http://127.0.0.1:9200', ES_NODES: 3 })).to.equal('ES_NODES=1 npm run es:stop');
    expect(esStopCommand({ ES_URL: "http://127.0.0.1:9250/it's", ES_NODES: 1 })).to.equal(
      `ES_URL='http://127.0.0.1:9250/it'\\''s' npm run es:stop`,
    );
  });

  it(
    'the engine runs in a session of its own, so Ctrl-C in the terminal ' + 'that started it does not reach it',
    function () {
      const [node] = clusterNodes(config.ES_URL, config.ES_NODES, runEngine?.home);
      // An engine this checkout did not start (another checkout's, a remote one) has no pid here.
      if (node.pid === undefined) this.skip();
      expect(sessionOf(node.pid!)).to.not.equal(sessionOf('self'));
    },
  );
});
