/**
 * A backup of the demo data taken on one node, restored into the three-node cluster (issue 60):
 * every answer of both API families byte for byte the same, every index with its replica placed.
 * The single node runs on SINGLE_ES_URL (127.0.0.1:9213 unless set); both share the repository's
 * folder (path.repo), which the cluster registers read-only, as a second cluster should.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { engineRoot, startEngine, stopEngine } from '../../scripts/engine';
import { createBackup, defaultLocation, defaultRepository, restoreBackup } from '../../src/engine/backups';
import { Engine } from '../../src/engine/client';
import { parseArguments, runCommand } from '../../loaders/cli';
import { startApi, type RunningApi } from '../support/api';
import { answersOf, apiQueries, differing } from '../support/answers';
import { deleteIndicesByPrefix } from '../support/engine';
import { freshPrefix, testConfig } from '../support/fixture';
import { repoRoot } from '../support/run';

const demoDump = join(repoRoot, 'examples', 'demo');
const singleUrl = process.env.SINGLE_ES_URL ?? 'http://127.0.0.1:9213';
/** A folder of its own, as every engine a suite starts has. */
const singleHome = join(engineRoot, `test-${new URL(singleUrl).port}`);

describe('a backup of one node restored into the three-node cluster, on the demo data', function () {
  this.timeout(1_800_000);
  const prefix = freshPrefix('restored-demo');
  const singleConfig = testConfig(prefix, { ES_URL: singleUrl, ES_NODES: '1', ES_SHARDS: '1', ES_REPLICAS: '0' });
  const single = new Engine(singleConfig);
  const cluster = new Engine(testConfig(prefix));
  let startedSingle = false;
  let backup = '';
  const apis: RunningApi[] = [];

  before(async function () {
    // An engine already on the default port is someone else's, and this test writes: only one that
    // SINGLE_ES_URL names is used.
    startedSingle = !(await startEngine(singleUrl, '512m', 1, { home: singleHome })).reused;
    if (!startedSingle && process.env.SINGLE_ES_URL === undefined) {
      process.stdout.write(
        `      skipped: ${singleUrl} is an engine this run did not start (SINGLE_ES_URL names one to use)\n`,
      );
      this.skip();
    }
  });

  after(async () => {
    for (const api of apis) await api.stop();
    if (backup)
      await single.client.snapshot.delete({ repository: defaultRepository, snapshot: backup }).catch(() => {});
    await cluster.client.snapshot.deleteRepository({ name: defaultRepository }).catch(() => {});
    await deleteIndicesByPrefix(singleUrl, prefix).catch(() => {});
    await single.close();
    await cluster.close();
    if (startedSingle && !process.env.KEEP_ENGINE) await stopEngine(singleUrl, 1, { home: singleHome });
  });

  it('every answer of the v1 and legacy APIs is the same, and every index is fully replicated', async () => {
    await runCommand(parseArguments(['dump', demoDump, '--no-progress', '--no-fingerprints']), singleConfig);
    const queries = apiQueries(demoDump, { every: 10, structureSearches: false, loads: true });
    const oneNode = await startApi(singleConfig);
    apis.push(oneNode);
    const expected = await answersOf(oneNode.url, queries);
    expect(expected.filter((answer) => !answer.startsWith('200 ')).length, 'queries not answered 200').to.equal(0);
    backup = (await createBackup(single, { repository: defaultRepository })).name;

    // The other cluster reads the same folder: registered read-only, so that only one cluster writes it.
    await cluster.client.snapshot.createRepository({
      name: defaultRepository,
      repository: { type: 'fs', settings: { location: defaultLocation, readonly: true } },
    });
    const restored = await restoreBackup(cluster, {
      repository: defaultRepository,
      name: backup,
      replace: false,
      graceMs: 0,
    });
    expect(restored).to.include({ replicas: 1, status: 'green' });
    const clustered = await startApi(testConfig(prefix));
    apis.push(clustered);
    expect(differing(queries, expected, await answersOf(clustered.url, queries))).to.deep.equal([]);
    const health = (await clustered.get('/health')).body;
    expect(health.engine).to.include({ status: 'green', nodes: 3 });
    expect(health.engine.indices[`${prefix}-compounds`]).to.include({ replicas: 1 });
  });
});
