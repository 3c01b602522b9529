/**
 * Root hooks: make sure a real Elasticsearch answers (start the project's node if none does, and
 * stop only what was started here), and give this test run its own index prefix so tests never
 * touch real data.
 */
import { randomBytes } from 'node:crypto';
import { readConfig } from '../src/config';
import { startEngine, stopEngine } from '../scripts/engine';
import { deleteIndicesByPrefix } from './support/engine';

process.env.ES_INDEX_PREFIX = `chemxref-test-${randomBytes(3).toString('hex')}`;
// Request logs of the in-process API would drown the test report; LOG_LEVEL=info brings them back.
process.env.LOG_LEVEL ??= 'silent';
let startedHere = false;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(600_000);
    const config = readConfig();
    // startEngine throws with the tail of the node's log when the engine cannot come up.
    const result = await startEngine(config.ES_URL, config.ES_HEAP, config.ES_NODES);
    startedHere = !result.reused;
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(120_000);
    const config = readConfig();
    // A failure here would leave this run's indices on the node: say so, but do not fail the run for it.
    await deleteIndicesByPrefix(config.ES_URL, config.ES_INDEX_PREFIX).catch((error: Error) => process.stderr.write(`could not delete the ${config.ES_INDEX_PREFIX}-* test indices: ${error.message}\n`));
    if (startedHere && !process.env.KEEP_ENGINE) await stopEngine(config.ES_URL, config.ES_NODES);
  },
};
