/**
 * Test helpers around the real engine, and the engine a test run uses: the one ES_URL names when it
 * is given in the environment, else an engine of the suite's own, in a folder of its own under the
 * engine root (`test-<port>`, `test-<first>-<last>` for a cluster), on the port of the suite's
 * variable (TEST_ES_PORT, TEST_CLUSTER_PORT) or a free one. Only on an engine the run started (or a
 * suite's own engine kept running by KEEP_ENGINE) may a test freeze, kill, stop or fill it.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import {
  clusterNodes,
  deleteIndicesByPrefix,
  engineRoot,
  projectRoot,
  startEngine,
  stopEngine,
} from '../../scripts/engine';

export { deleteIndicesByPrefix };
import { readConfig } from '../../src/config';
import type { Engine } from '../../src/engine/client';

/** The body of every request to a path ending in `pathEnd` that `engine` sends while `work` runs. */
export async function bodiesSent(engine: Engine, pathEnd: string, work: () => Promise<unknown>): Promise<unknown[]> {
  const bodies: unknown[] = [];
  const listener = (
    _error: unknown,
    event: { meta: { request: { params: { path: string; body?: unknown; bulkBody?: unknown } } } } | null,
  ): void => {
    const params = event?.meta.request.params;
    if (params?.path.endsWith(pathEnd)) bodies.push(params.bulkBody ?? params.body);
  };
  engine.client.diagnostic.on('request', listener as never);
  try {
    await work();
  } finally {
    engine.client.diagnostic.removeListener('request', listener as never);
  }
  return bodies;
}

/** The search bodies of every `_msearch` `engine` sends while `work` runs, one list per `_msearch`. */
export async function msearchesSent(
  engine: Engine,
  work: () => Promise<unknown>,
): Promise<Record<string, unknown>[][]> {
  return (await bodiesSent(engine, '/_msearch', work)).map((body) =>
    String(body)
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((_line, i) => i % 2 === 1),
  );
}

/**
 * Where a suite's own engine runs when ES_URL is not given: the variable naming its first port, and
 * that port's default (0: a free port).
 */
export interface SuiteEngine {
  portVariable: string;
  defaultPort: number;
}

/** `npm test`, `test:examples` and `test:fuzz`: one node on TEST_ES_PORT, by default a free port. */
export const singleNodeSuite: SuiteEngine = { portVariable: 'TEST_ES_PORT', defaultPort: 0 };

/** The engine of a test run. */
export interface RunEngine {
  url: string;
  nodes: number;
  /** ES_URL was given in the environment: that engine, whoever runs it. */
  given: boolean;
  /** The folder of the suite's own engine (data, logs, pid files); none for the engine of a given ES_URL. */
  home?: string;
  /** A suite's engine that an earlier run kept (KEEP_ENGINE), claimed by this run. */
  claimed: boolean;
  /** This run started the engine or claimed a kept one: only then may tests freeze, kill, stop or fill it. */
  own: boolean;
}

/** The marker a run that keeps its own engine (KEEP_ENGINE) leaves in its folder: the pids of its nodes. */
const keptMarker = 'kept-by-tests';
const suiteHome = /^test-(\d+)(?:-(\d+))?$/;

function portOf(env: NodeJS.ProcessEnv, suite: SuiteEngine): number {
  const raw = env[suite.portVariable] ?? '';
  if (raw === '') return suite.defaultPort;
  if (!/^[0-9]+$/.test(raw) || Number(raw) > 65335)
    throw new Error(`${suite.portVariable} must be a TCP port (0 for a free one, at most 65335), got "${raw}"`);
  return Number(raw);
}

/**
 * A port the system gives as free, synchronously (the run's ES_URL must be set before the test
 * files load): one of its ephemeral range, never 9200 or the 9200s. Below 65000, so that the
 * node's transport ports (+100 to +199) stay valid.
 */
export function freePortSync(): number {
  const script =
    "const s = require('node:net').createServer(); s.listen(0, '127.0.0.1', () => " +
    '{ process.stdout.write(String(s.address().port)); s.close(); });';
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const found = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    const port = Number(found.stdout);
    if (found.status === 0 && Number.isInteger(port) && port > 0 && port < 65000) return port;
  }
  throw new Error('found no free port below 65000');
}

const urlsOf = (first: number, nodes: number): string =>
  Array.from({ length: nodes }, (_, i) => `http://127.0.0.1:${first + i}`).join(',');

const homeOf = (root: string, first: number, nodes: number): string =>
  join(root, nodes === 1 ? `test-${first}` : `test-${first}-${first + nodes - 1}`);

/** Whether the nodes of `home` run, as the pids its kept marker lists: then this run takes them (once, atomically). */
function claimKept(url: string, nodes: number, home: string): boolean {
  const marker = join(home, keptMarker);
  if (!existsSync(marker)) return false;
  const kept = readFileSync(marker, 'utf8').trim();
  const running = clusterNodes(url, nodes, home)
    .map((node) => node.pid)
    .join(',');
  const claim = `${marker}.${process.pid}`;
  try {
    // Two runs may find the same kept engine: the rename lets one of them have it.
    renameSync(marker, claim);
  } catch {
    return false;
  }
  rmSync(claim, { force: true });
  if (kept === running) return true;
  // The kept engine has died since: its folder holds nothing a run needs.
  if (!clusterNodes(url, nodes, home).some((node) => node.alive)) rmSync(home, { recursive: true, force: true });
  return false;
}

/** Folders of suite engines left by runs that died (no node runs there) more than an hour ago. */
function removeStaleHomes(root: string): void {
  if (!existsSync(root)) return;
  for (const name of readdirSync(root)) {
    const match = suiteHome.exec(name);
    if (!match) continue;
    const home = join(root, name);
    const first = Number(match[1]);
    const nodes = match[2] ? Number(match[2]) - first + 1 : 1;
    try {
      if (Date.now() - statSync(home).mtimeMs < 3_600_000) continue;
      if (clusterNodes(urlsOf(first, nodes), nodes, home).some((node) => node.alive)) continue;
    } catch {
      continue;
    }
    rmSync(home, { recursive: true, force: true });
  }
}

const tmpfsMagic = 0x01021994;
const memoryRoom = 4 * 1024 ** 3;

/**
 * Where a suite keeps the folders of its own engines: for one node, in memory when `shm` is a tmpfs
 * with 4 GiB free (in a folder of this project's, `chemxref-engines-<hash of its path>`), since the
 * engine syncs to its disk every index it creates and every write it refreshes, and a test run
 * creates thousands; else, and for a cluster, under the engine root.
 */
export function suiteEngineRoot(nodes: number, shm = '/dev/shm'): string {
  if (nodes !== 1) return engineRoot;
  try {
    const fs = statfsSync(shm);
    if (fs.type !== tmpfsMagic || fs.bavail * fs.bsize < memoryRoom) return engineRoot;
  } catch {
    return engineRoot;
  }
  return join(shm, `chemxref-engines-${createHash('sha256').update(projectRoot).digest('hex').slice(0, 12)}`);
}

/**
 * The engine a run uses, from `env`: ES_URL when it is given; else a suite engine that an earlier
 * run kept on the suite's port (on any port when that is 0), else a new one on that port or a free
 * one, in its own folder under `root`. Sets nothing and starts nothing.
 */
export function chooseEngine(
  env: NodeJS.ProcessEnv,
  suite: SuiteEngine,
  root = suiteEngineRoot(readConfig(env).ES_NODES),
): RunEngine {
  const nodes = readConfig(env).ES_NODES;
  if (env.ES_URL) return { url: readConfig(env).ES_URL, nodes, given: true, claimed: false, own: false };
  let first = portOf(env, suite);
  if (first === 0 && nodes === 1 && existsSync(root)) {
    for (const name of readdirSync(root).sort()) {
      const match = suiteHome.exec(name);
      if (!match || match[2]) continue;
      const home = join(root, name);
      const url = urlsOf(Number(match[1]), 1);
      if (claimKept(url, 1, home)) return { url, nodes, given: false, home, claimed: true, own: true };
    }
  }
  if (first === 0) first = freePortSync();
  const url = urlsOf(first, nodes);
  const home = homeOf(root, first, nodes);
  const claimed = claimKept(url, nodes, home);
  return { url, nodes, given: false, home, claimed, own: claimed };
}

/**
 * Makes sure the run's engine answers: reuses what answers on its URL, else starts it (ES_HEAP
 * each node). `run.own` then says whether tests may freeze, kill, stop or fill it.
 */
export async function startRunEngine(run: RunEngine, heap: string): Promise<void> {
  if (run.home) removeStaleHomes(join(run.home, '..'));
  // startEngine throws with the tail of the node's log when the engine cannot come up.
  const result = await startEngine(run.url, heap, run.nodes, run.home ? { home: run.home } : {});
  run.own = run.claimed || !result.reused;
  if (!run.own)
    process.stderr.write(
      `[test] ${run.url} answered already: the tests that would freeze, kill, stop or fill an engine are skipped\n`,
    );
}

/**
 * At a run's end: an engine the run started or claimed is stopped (a suite's own one with its
 * folder deleted), or, with KEEP_ENGINE, kept for the next run (a suite's own one marked as such);
 * an engine the run found answering is left as it was.
 */
export async function finishRunEngine(run: RunEngine): Promise<void> {
  if (!run.own) return;
  if (process.env.KEEP_ENGINE) {
    if (run.home) {
      const pids = clusterNodes(run.url, run.nodes, run.home).map((node) => node.pid);
      if (pids.every((pid) => pid !== undefined)) writeFileSync(join(run.home, keptMarker), `${pids.join(',')}\n`);
    }
    process.stderr.write(
      `[test] the engine on ${run.url} keeps running (KEEP_ENGINE)` +
        `${run.home ? '; the next run without ES_URL takes it, and stops it unless KEEP_ENGINE is set' : ''}\n`,
    );
    return;
  }
  await stopEngine(run.url, run.nodes, run.home ? { home: run.home } : {});
  if (!run.home) return;
  rmSync(run.home, { recursive: true, force: true });
  // The run's folder in memory (suiteEngineRoot) goes too once no other run uses it.
  const parent = dirname(run.home);
  if (basename(parent).startsWith('chemxref-engines-')) {
    try {
      rmdirSync(parent);
    } catch {
      // another run's engine is in it
    }
  }
}

/** The run's engine, once the root hooks have chosen it. */
export let runEngine: RunEngine | undefined;

/**
 * Skips the test this is called from (from a hook: every test of its suite) unless the run's engine
 * is its own, adding why to each title, which the reporter prints. `action`: what the test would
 * do to the engine, e.g. "freezes the engine (SIGSTOP)".
 */
export function skipUnlessOwnEngine(context: Mocha.Context, action: string): void {
  if (runEngine?.own) return;
  const why = `skipped: it ${action}, and ${runEngine?.url ?? 'ES_URL'} is an engine this run did not start`;
  const runnable = context.test!;
  const tests: Mocha.Test[] = [];
  const collect = (suite: Mocha.Suite): void => {
    tests.push(...suite.tests);
    suite.suites.forEach(collect);
  };
  if ((runnable as { type?: string }).type === 'hook') collect(runnable.parent!);
  else tests.push(runnable as Mocha.Test);
  for (const test of tests) test.title += ` (${why})`;
  context.skip();
}

const runEndWork: (() => Promise<void>)[] = [];

/**
 * Work a test file leaves for the end of the run, done before the run's indices and folder go: the
 * teardown of something it started in the background, should its own hooks not have run (--grep).
 */
export function atRunEnd(work: () => Promise<void>): void {
  runEndWork.push(work);
}

/**
 * Root hooks of a test run: the run's engine (see chooseEngine: ES_URL when given, else the
 * suite's own), its URL in ES_URL for the whole process and its children, started if nothing
 * answers there; and the run's own index prefix `<stem>-xxxxxx` and TMPDIR (the files tests write
 * and the loads' rejects files), both deleted at the end, so tests never touch data but their own
 * nor leave files behind. Logs are off (LOG_LEVEL=debug brings them back, request lines included).
 */
export function engineHooks(stem: string, suite: SuiteEngine = singleNodeSuite): Mocha.RootHookObject {
  const run = chooseEngine(process.env, suite);
  runEngine = run;
  process.env.ES_URL = run.url;
  process.env.ES_INDEX_PREFIX = `${stem}-${randomBytes(3).toString('hex')}`;
  const runTmp = mkdtempSync(join(tmpdir(), `${process.env.ES_INDEX_PREFIX}-`));
  process.env.TMPDIR = runTmp;
  process.env.LOG_LEVEL ??= 'silent';
  // Started now, while mocha loads and compiles the test files; the first hook waits for it.
  let settled = false;
  const starting = startRunEngine(run, readConfig().ES_HEAP).then(
    () => undefined,
    (error: Error) => error,
  );
  void starting.then(() => (settled = true));
  let finished = false;
  // A run that ends before its last hook (a test file that does not load, Ctrl-C) stops the suite's
  // own engine it started or was starting, unless KEEP_ENGINE says to keep it.
  process.once('exit', () => {
    if (finished || !run.home || process.env.KEEP_ENGINE || (settled && !run.own)) return;
    for (const node of clusterNodes(run.url, run.nodes, run.home)) if (node.pid) process.kill(node.pid, 'SIGTERM');
  });
  return {
    async beforeAll(this: Mocha.Context): Promise<void> {
      this.timeout(600_000);
      const failed = await starting;
      if (failed) throw failed;
    },
    async afterAll(this: Mocha.Context): Promise<void> {
      this.timeout(180_000);
      for (const work of runEndWork.splice(0))
        await work().catch((error: Error) => process.stderr.write(`[test] at the end of the run: ${error.message}\n`));
      const config = readConfig();
      // A failure here would leave this run's indices on the engine: say so, but do not fail the run for it.
      await deleteIndicesByPrefix(config.ES_URL, config.ES_INDEX_PREFIX).catch((error: Error) =>
        process.stderr.write(`could not delete the ${config.ES_INDEX_PREFIX}-* test indices: ${error.message}\n`),
      );
      finished = true;
      await finishRunEngine(run);
      rmSync(runTmp, { recursive: true, force: true });
    },
  };
}
