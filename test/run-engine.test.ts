/**
 * The engine a test run uses (test/support/engine.ts): its own unless ES_URL is given, and an engine
 * it did not start is never frozen, stopped, filled or written outside the run's prefix.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { engineRoot } from '../scripts/engine';
import { chooseEngine, runEngine, singleNodeSuite, suiteEngineRoot } from './support/engine';
import { enginePid } from './support/checking-clients';
import { repoRoot } from './support/run';

describe('the engine of a test run', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'engine-root-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('without ES_URL, is an engine of its own on a free port (never 9200), in a folder of its own', () => {
    const run = chooseEngine({}, singleNodeSuite, root);
    const port = Number(new URL(run.url).port);
    expect(run).to.deep.include({ given: false, nodes: 1, home: join(root, `test-${port}`), own: false });
    expect(port).to.be.above(10_000);
    expect(chooseEngine({ TEST_ES_PORT: '9399' }, singleNodeSuite, root)).to.deep.include({
      url: 'http://127.0.0.1:9399',
      home: join(root, 'test-9399'),
    });
    expect(
      chooseEngine({ ES_NODES: '3' }, { portVariable: 'TEST_CLUSTER_PORT', defaultPort: 9210 }, root),
    ).to.deep.include({
      url: 'http://127.0.0.1:9210,http://127.0.0.1:9211,http://127.0.0.1:9212',
      home: join(root, 'test-9210-9212'),
    });
    expect(() => chooseEngine({ TEST_ES_PORT: 'any' }, singleNodeSuite, root)).to.throw(
      /TEST_ES_PORT must be a TCP port/,
    );
  });

  it('with ES_URL given in the environment, is that engine, and not its own until the run starts it', () => {
    expect(chooseEngine({ ES_URL: 'http://127.0.0.1:9303/' }, singleNodeSuite, root)).to.deep.equal({
      url: 'http://127.0.0.1:9303',
      nodes: 1,
      given: true,
      claimed: false,
      own: false,
    });
  });

  it('a kept engine that has died since is not taken, and its folder is removed', () => {
    const home = join(root, 'test-9399');
    mkdirSync(join(home, 'run'), { recursive: true });
    writeFileSync(join(home, 'run', 'elasticsearch.pid'), '999999999\n');
    writeFileSync(join(home, 'kept-by-tests'), '999999999\n');
    expect(chooseEngine({ TEST_ES_PORT: '9399' }, singleNodeSuite, root)).to.deep.include({
      claimed: false,
      own: false,
    });
    expect(existsSync(home)).to.equal(false);
  });

  it('keeps the folder of its own single node in memory when /dev/shm is a tmpfs with room, else under the engine root', () => {
    expect(suiteEngineRoot(1, join(root, 'none')), 'no such folder').to.equal(engineRoot);
    expect(suiteEngineRoot(3), 'a cluster').to.equal(engineRoot);
    const memory = suiteEngineRoot(1);
    if (memory !== engineRoot) expect(memory).to.match(/^\/dev\/shm\/chemxref-engines-[0-9a-f]{12}$/);
  });

  it(
    'on an engine it did not start, a run skips the freeze, saying why, and leaves it answering with ' +
      'the same indices',
    async function () {
      this.timeout(300_000);
      // This run's engine is one the child run did not start: the child is given its ES_URL.
      const url = runEngine!.url.split(',')[0];
      let pid: number;
      try {
        pid = await enginePid(url);
      } catch (error) {
        this.test!.title += ` (skipped: ${(error as Error).message})`;
        this.skip();
      }
      const indices = async (): Promise<string> =>
        (await (await fetch(`${url}/_cat/indices?h=index&s=index&expand_wildcards=all`)).text()).trim();
      const before = await indices();
      const states = new Set<string>();
      const seen = new Set<string>();
      let running = true;
      const watch = (async () => {
        for (let tick = 0; running; tick += 1) {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          states.add(stat[stat.lastIndexOf(')') + 2]);
          if (tick % 10 === 0) seen.add(await indices());
          await sleep(25);
        }
      })();
      const env: NodeJS.ProcessEnv = { ...process.env, ES_URL: url };
      delete env.KEEP_ENGINE;
      delete env.ES_INDEX_PREFIX;
      const child = spawn(
        process.execPath,
        [
          join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js'),
          'test/reliability.test.ts',
          '--grep',
          'a frozen engine gives 503',
          '--reporter',
          'json',
        ],
        { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'close')) as [number | null];
      running = false;
      await watch;
      expect(code, stderr).to.equal(0);
      const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as {
        stats: { passes: number; failures: number; pending: number };
        pending: { title: string }[];
      };
      expect(report.stats).to.include({ passes: 0, failures: 0, pending: 1 });
      expect(report.pending[0].title).to.match(
        /\(skipped: it freezes the engine \(SIGSTOP, then SIGCONT\), and http:\/\/127\.0\.0\.1:\d+ is an engine this run did not start\)$/,
      );
      expect(stderr).to.include('the tests that would freeze, kill, stop or fill an engine are skipped');
      expect([...states], 'the states of the engine process during the child run').not.to.include('T');
      expect(new Set([...seen, await indices()]), 'the indices during and after the child run').to.deep.equal(
        new Set([before]),
      );
      expect((await fetch(`${url}/_cluster/health`)).status).to.equal(200);
    },
  );
});
