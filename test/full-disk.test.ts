/**
 * A full disk is a clear error, not a broken engine: an engine of its own (on FULL_DISK_ES_PORT, a
 * free port by default; 512 MiB of heap) with its data on a 300 MB tmpfs, filled past its flood
 * stage (95 %, the engine's default). Needs root, to mount the tmpfs. Whatever ES_URL says: the
 * engine it fills is always one it started. It is started and filled in the background from the
 * start of the run, so its half minute of waiting overlaps the other files' tests.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { startEngine, stopEngine } from '../scripts/engine';
import type { Config } from '../src/config';
import { bulkWrite } from '../src/engine/bulk';
import { Engine } from '../src/engine/client';
import { diskReport } from '../src/engine/disk';
import { EngineDiskFull } from '../src/engine/errors';
import { startApi, type RunningApi } from './support/api';
import { atRunEnd, bodiesSent, freePortSync } from './support/engine';
import { fixtureDump, freshPrefix, testConfig } from './support/fixture';
import { runToEnd } from './support/run';

const fullDiskPort = process.env.FULL_DISK_ES_PORT || '0';
if (!/^[0-9]+$/.test(fullDiskPort) || Number(fullDiskPort) > 65335)
  throw new Error(`FULL_DISK_ES_PORT must be a TCP port (0 for a free one, at most 65335), got "${fullDiskPort}"`);
const url = `http://127.0.0.1:${Number(fullDiskPort) || freePortSync()}`;
const notRoot = process.getuid?.() !== 0 ? 'mounting a tmpfs needs root' : undefined;

/** The filled engine, or why the suite is skipped. */
interface Filled {
  config: Config;
  engine: Engine;
  api: RunningApi;
  aliasesBefore: unknown;
  answerBefore: unknown;
}

// Under the run's TMPDIR, which the engine's own user must be able to cross.
const home = join(tmpdir(), 'full-disk-engine');
const data = join(home, 'data');
const filler = join(data, 'filler');
let mounted = false;
let started = false;
let filled: Filled | undefined;

const load = (config: Config): ReturnType<typeof runToEnd> =>
  runToEnd(
    process.execPath,
    [
      '--require',
      require.resolve('tsx/cjs'),
      join('loaders', 'cli.ts'),
      'dump',
      fixtureDump,
      '--no-progress',
      '--no-fingerprints',
    ],
    { ES_URL: url, ES_INDEX_PREFIX: config.ES_INDEX_PREFIX, LOG_LEVEL: 'silent' },
  );
const aliases = async ({ engine, config }: Pick<Filled, 'engine' | 'config'>): Promise<unknown> =>
  engine.client.indices.getAlias({ index: `${config.ES_INDEX_PREFIX}-*` });
const paracetamol = async (api: RunningApi): Promise<unknown> =>
  (await api.post('/api/v1/compounds', { type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 })).body;
const blocked = async ({ engine, config }: Pick<Filled, 'engine' | 'config'>): Promise<boolean> => {
  const settings = await engine.client.indices.getSettings({
    index: `${config.ES_INDEX_PREFIX}-*`,
    name: 'index.blocks.read_only_allow_delete',
    flat_settings: true,
  });
  return Object.values(settings).some(
    (state) => String(state.settings?.['index.blocks.read_only_allow_delete']) === 'true',
  );
};

/**
 * The engine of its own, a load served, then its disk filled and its indices made read-only; or why
 * the suite is skipped. Half a minute of waiting on the engine (its start, its disk read every 10 s).
 */
async function fill(): Promise<Filled | string> {
  chmodSync(tmpdir(), 0o711);
  mkdirSync(data, { recursive: true });
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=300m', 'tmpfs', data], { encoding: 'utf8' });
  if (mount.status !== 0) return `mount -t tmpfs failed: ${(mount.stderr || String(mount.error)).trim()}`;
  mounted = true;
  started = true;
  if ((await startEngine(url, '512m', 1, { home })).reused) {
    started = false;
    // Not this test's engine: it would be filled, and its cluster settings changed.
    return `${url} answers already, an engine this test did not start; set FULL_DISK_ES_PORT to a free port`;
  }
  const config = testConfig(freshPrefix('full-disk'), { ES_URL: url });
  const engine = new Engine(config);
  // The engine reads its disk every cluster.info.update.interval (30 s by default); 10 s is the least it takes.
  await engine.client.cluster.putSettings({ persistent: { 'cluster.info.update.interval': '10s' } });
  const first = await load(config);
  expect(first.code, first.stderr).to.equal(0);
  const api = await startApi(config);
  filled = { config, engine, api, aliasesBefore: undefined, answerBefore: await paracetamol(api) };
  filled.aliasesBefore = await aliases(filled);
  expect(filled.answerBefore).to.have.property('totalCompounds', 1);
  // Filled to 8 MB short of full: past the flood stage (5 % of 300 MB free).
  const { bavail, bsize } = statfsSync(data);
  execFileSync('fallocate', ['-l', String(bavail * bsize - 8 * 2 ** 20), filler]);
  for (let waited = 0; !(await blocked(filled)); waited += 1) {
    if (waited > 60) throw new Error('the engine did not make its indices read-only within 60 s');
    await sleep(1_000);
  }
  return filled;
}

/** Stops the engine and unmounts its disk, once the tests are done or at the end of the run. */
async function tearDown(): Promise<void> {
  await filling;
  const { api, engine } = filled ?? {};
  filled = undefined;
  await api?.stop();
  await engine?.close();
  if (started) await stopEngine(url, 1, { home });
  started = false;
  if (mounted) execFileSync('umount', [data]);
  mounted = false;
  rmSync(home, { recursive: true, force: true });
}

// Filled in the background from the start of the run (a root hook of this file), while the other
// files' tests run: its own engine shares nothing with theirs.
let filling: Promise<Filled | string | Error> | undefined;
before(() => {
  if (notRoot) return;
  filling = fill().catch((error: Error) => error);
  atRunEnd(tearDown);
});

(notRoot ? describe.skip : describe)(`a load on a full disk${notRoot ? ` (skipped: ${notRoot})` : ''}`, function () {
  this.timeout(180_000);
  let config: Config;
  let engine: Engine;
  let api: RunningApi;
  let aliasesBefore: unknown;
  let answerBefore: unknown;

  before(async function () {
    const ready = await filling;
    if (ready instanceof Error) throw ready;
    if (typeof ready === 'string' || ready === undefined) {
      const why = ready ?? 'the engine was not filled';
      for (const test of this.test!.parent!.tests) test.title += ` (skipped: ${why})`;
      this.skip();
    }
    ({ config, engine, api, aliasesBefore, answerBefore } = ready);
  });
  after(async function () {
    this.timeout(120_000);
    await tearDown();
  });

  it('a load past the flood stage stops (exit 1) saying so and what to free, and publishes nothing', async () => {
    const failed = await load(config);
    expect(failed.code).to.equal(1);
    expect(failed.stderr).to.match(/load failed: Elasticsearch's disk is past its flood-stage watermark \(95%\)/);
    expect(failed.stderr).to.include(`${data} on node`);
    expect(failed.stderr).to.include('read-only');
    expect(failed.stderr).to.match(/Free space on that disk .* then run the load again/);
    expect(failed.stderr).to.include('docs/operations.md#a-full-disk');
    expect(await aliases({ engine, config }), 'the served releases').to.deep.equal(aliasesBefore);
    expect(await paracetamol(api), 'the API answers as before').to.deep.equal(answerBefore);
  });

  it('/health says degraded and names the disk past its flood stage', async () => {
    const health = (await api.get('/health')).body as {
      status: string;
      engine: { status: string; disk: { nodes: { path: string; past?: string; freeBytes: number }[] } };
    };
    expect(health.status).to.equal('degraded');
    expect(health.engine.disk.nodes).to.have.length(1);
    expect(health.engine.disk.nodes[0]).to.include({ path: data, past: 'flood_stage' });
    expect(health.engine.disk.nodes[0].freeBytes).to.be.below(16 * 2 ** 20);
  });

  it('a bulk write into a read-only index stops at its first request with EngineDiskFull, blaming no row', async () => {
    const [release] = Object.keys(aliasesBefore as object).filter((index) => index.includes('-assignments-dump-'));
    const refused: unknown[] = [];
    async function* items(): AsyncGenerator<{
      index: string;
      id: string;
      op: 'index';
      document: object;
      context: number;
    }> {
      for (let i = 0; i < 100; i += 1) yield { index: release, id: `x${i}`, op: 'index', document: {}, context: i };
    }
    let error: unknown;
    const requests = await bodiesSent(engine, '/_bulk', async () => {
      error = await bulkWrite(engine, items(), (failure) => refused.push(failure)).catch((e: unknown) => e);
    });
    expect(error).to.be.instanceOf(EngineDiskFull);
    expect(refused).to.deep.equal([]);
    // Not sent again as a busy engine's 429 would be.
    expect(requests).to.have.length(1);
  });

  it('once space is freed, the next load works with no index setting changed by hand', async () => {
    rmSync(filler);
    // The engine reads the file system's figures anew at most every second; the block may stay longer.
    while ((await diskReport(engine)).nodes.some((node) => node.past)) await sleep(200);
    const next = await load(config);
    expect(next.code, next.stderr).to.equal(0);
    expect(JSON.parse(next.stdout)).to.include({ status: 'done' });
    expect(await blocked({ engine, config })).to.equal(false);
    expect(await aliases({ engine, config }), 'a new release is served').not.to.deep.equal(aliasesBefore);
    expect(await paracetamol(api)).to.deep.equal(answerBefore);
    expect((await api.get('/health')).body).to.have.property('status', 'ok');
  });
});
