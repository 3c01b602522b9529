/**
 * A rolling restart of the three-node cluster (issue 60): each node restarted in turn with the steps
 * docs/scale.md gives an operator (restartNode, which `npm run es:restart` runs), while eight
 * clients check every answer: none wrong, and fewer than 1 % answered 503.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { clusterNodes, restartNode } from '../../scripts/engine';
import { readConfig } from '../../src/config';
import { startApi, type RunningApi } from '../support/api';
import { runEngine, skipUnlessOwnEngine } from '../support/engine';
import { dumpTable } from '../support/answers';
import { CheckingClients, compoundLookups, tally, type CheckedLookup } from '../support/checking-clients';
import { fixtureDump, freshPrefix, load, testConfig } from '../support/fixture';

/** Lookups of current assignments of the fixture (every third), by InChIKey and by source id. */
function fixtureLookups(): CheckedLookup[] {
  const keys = new Map(dumpTable(join(fixtureDump, 'structure.tsv.gz')).map((s) => [s.uci, s.standardinchikey]));
  const current = dumpTable(join(fixtureDump, 'reference.tsv.gz')).filter((r, i) => r.assigment === '1' && i % 3 === 0);
  return current.flatMap((r) =>
    compoundLookups(Number(r.src_id), [{ compoundId: r.src_compound_id, standardInchiKey: keys.get(r.uci)! }]),
  );
}

describe('a rolling restart of the three-node cluster (shards 3, replicas 1)', function () {
  this.timeout(1_800_000);
  const config = readConfig();
  let api: RunningApi;

  before(async () => {
    const prefix = freshPrefix('rolling-restart');
    await load(prefix, ['dump', fixtureDump]);
    api = await startApi(testConfig(prefix));
  });
  after(async () => {
    await api?.stop();
  });

  it('each node restarted in turn as docs/scale.md says, 8 checking clients: no wrong answer, under 1 % 503', async function () {
    skipUnlessOwnEngine(this, 'restarts every node of the cluster');
    const clients = new CheckingClients(api.url, fixtureLookups(), { clients: 8, timeoutMs: 15_000 });
    clients.start();
    for (const node of clusterNodes(config.ES_URL, config.ES_NODES, runEngine!.home)) {
      const before = clients.answers.length;
      await restartNode(
        config.ES_URL,
        config.ES_NODES,
        node.name,
        config.ES_HEAP,
        (step) => process.stdout.write(`      ${step}\n`),
        runEngine!.home,
      );
      const during = tally(clients.answers.slice(before));
      process.stdout.write(
        `      ${node.name} restarted: ${during.requests} requests, ${during.unavailable} answered 503, ` +
          `${during.wrong} wrong, ${during.errors} other errors\n`,
      );
    }
    const answers = await clients.stop();
    const total = tally(answers);
    const share = total.unavailable / total.requests;
    process.stdout.write(
      `      rolling restart: ${total.requests} requests, ${total.right} right, ${total.wrong} wrong, ` +
        `${total.unavailable} answered 503 (${(share * 100).toFixed(2)} %), ${total.errors} other errors\n`,
    );
    const wrong = answers.filter((a) => a.verdict === 'wrong' || a.verdict === 'error').map((a) => a.detail);
    expect(wrong.slice(0, 10), 'wrong answers and errors').to.deep.equal([]);
    expect(total.unavailableWithoutRetryAfter, '503s without Retry-After').to.equal(0);
    expect(share, '503 answers of all requests').to.be.lessThan(0.01);
    expect((await api.get('/health')).body.engine).to.include({ status: 'green', nodes: 3 });
  });
});
