/**
 * chemxref on a three-node cluster (issue 22): the same answers as with the one-node layout, and
 * lookups that keep answering, the same, while a node is killed and brought back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Client } from '@elastic/elasticsearch';
import { clusterNodes, startEngine } from '../../scripts/engine';
import { engineNodes, readConfig } from '../../src/config';
import { parseArguments, runCommand } from '../../loaders/cli';
import { startApi, type RunningApi } from '../support/api';
import { answersOf, apiQueries, differing } from '../support/answers';
import { runEngine, skipUnlessOwnEngine } from '../support/engine';
import { fixtureDump, fixturesDir, freshPrefix, load, testConfig } from '../support/fixture';

describe('chemxref on a three-node cluster (ES_SHARDS=3, ES_REPLICAS=1)', function () {
  this.timeout(600_000);
  const config = readConfig();
  const admin = new Client({ nodes: engineNodes(config.ES_URL) });
  const all = apiQueries(fixtureDump);
  let clustered: RunningApi;
  let oneNodeLayout: RunningApi;
  let prefix: string;
  let expected: string[];

  before(async () => {
    prefix = freshPrefix('three-shards');
    const single = freshPrefix('one-shard');
    await load(prefix, ['dump', fixtureDump], { fingerprints: true });
    // The one-node layout, on the same cluster: one primary, no replica.
    const singleConfig = testConfig(single, { ES_SHARDS: '1', ES_REPLICAS: '0' });
    await runCommand(parseArguments(['dump', fixtureDump, '--no-progress']), singleConfig);
    clustered = await startApi(testConfig(prefix));
    oneNodeLayout = await startApi(singleConfig);
    expected = await answersOf(oneNodeLayout.url, all);
  });
  after(async () => {
    await clustered?.stop();
    await oneNodeLayout?.stop();
    await admin.close();
  });

  it('a dump is loaded with three primary shards and one replica, and /health shows it fully replicated', async () => {
    const health = (await clustered.get('/health')).body;
    expect(health.status).to.equal('ok');
    expect(health.engine).to.include({ status: 'green', nodes: 3, dataNodes: 3 });
    expect(health.engine.indices[`${prefix}-compounds`]).to.include({ shards: 3, replicas: 1 });
    expect(health.engine.indices[`${prefix}-fingerprints`]).to.include({ shards: 3, replicas: 1 });
    expect(health.engine.indices[`${prefix}-assignments-1`]).to.include({ shards: 3, replicas: 1 });
    expect(health.engine.indices[`${prefix}-meta`]).to.include({ shards: 1, replicas: 1 });
  });

  it('gives exactly the answers of the one-node layout: compounds, connectivity (same order), legacy, similarity, substructure', async () => {
    expect(
      expected.filter((answer) => !answer.startsWith('200 ')),
      'every query answers 200',
    ).to.deep.equal([]);
    expect(differing(all, expected, await answersOf(clustered.url, all)), `${all.length} queries`).to.deep.equal([]);
  });

  describe('with one node killed (kill -9)', () => {
    let victim: { name: string; pid?: number; httpPort: number };

    before(async function () {
      skipUnlessOwnEngine(this, 'kills a node (kill -9) and starts it again');
      const nodes = clusterNodes(config.ES_URL, config.ES_NODES, runEngine!.home);
      victim = nodes[1];
      expect(victim.pid, 'the pid of the node to kill').to.be.a('number');
      process.kill(victim.pid!, 'SIGKILL');
      // Wait on the cluster, not on a clock: the survivors see the node leave.
      const survivors = new Client({
        nodes: engineNodes(config.ES_URL).filter((url) => !url.endsWith(`:${victim.httpPort}`)),
      });
      try {
        await survivors.cluster.health({ wait_for_nodes: '2', timeout: '120s' }, { requestTimeout: 130_000 });
      } finally {
        await survivors.close();
      }
    });

    it('every lookup keeps answering 200 with the same answers, and /health says degraded, not down', async () => {
      const health = (await clustered.get('/health')).body;
      expect(health.status).to.equal('degraded');
      expect(health.engine).to.include({ nodes: 2 });
      expect(
        differing(all, expected, await answersOf(clustered.url, all)),
        `${all.length} queries with node ${victim.name} down`,
      ).to.deep.equal([]);
    });

    it('a source reload completes on the two nodes left, fully replicated there, and is served', async () => {
      const summary = await load(prefix, ['source', '104', join(fixturesDir, 'releases', 'bzr-release-2.tsv')]);
      expect(summary.status).to.equal('done');
      const removed = JSON.parse(readFileSync(join(fixturesDir, 'releases', 'expected.json'), 'utf8'))
        .removed as string[];
      const answer = await clustered.post('/api/v1/compounds', {
        type: 'sourceID',
        compound: removed[0],
        sourceID: 104,
      });
      expect(answer.status).to.equal(200);
      expect(answer.body.response).to.equal('Not found');
      const release = Object.keys(await admin.indices.getAlias({ name: `${prefix}-assignments-104` }))[0];
      const state = await admin.cluster.health({ index: release });
      expect(state.status, 'the new release has its replica on the other survivor').to.equal('green');
    });

    it('the node comes back and the cluster is green with three nodes again', async () => {
      await startEngine(config.ES_URL, config.ES_HEAP, config.ES_NODES, { home: runEngine!.home });
      const health = await admin.cluster.health(
        { wait_for_nodes: '3', wait_for_status: 'green', timeout: '180s' },
        { requestTimeout: 190_000 },
      );
      expect(health).to.include({ status: 'green', number_of_nodes: 3 });
      expect((await clustered.get('/health')).body.status).to.equal('ok');
    });

    it(
      'consolidate then serves the reloaded source and the others from one ' +
        'release index, fully replicated, with the same answers',
      async () => {
        const reloaded = await answersOf(clustered.url, all);
        const summary = await load(prefix, ['consolidate']);
        expect(summary).to.include({ status: 'done', releaseIndicesBefore: 2, releaseIndicesAfter: 1 });
        const layout = (await clustered.get('/health')).body.engine.indices[`${prefix}-assignments`];
        expect(layout.indices).to.have.length(1);
        expect(layout).to.include({ shards: 3, replicas: 1 });
        expect((await admin.cluster.health({ index: layout.indices[0] })).status).to.equal('green');
        expect(
          differing(all, reloaded, await answersOf(clustered.url, all)),
          `${all.length} queries after consolidate`,
        ).to.deep.equal([]);
      },
    );
  });
});
