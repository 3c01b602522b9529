/**
 * Root hooks of `npm run test:cluster`: a three-node cluster of the project's own engine on
 * 127.0.0.1:9210-9212 (512 MiB of heap each), started here unless it already answers, and stopped
 * at the end unless KEEP_ENGINE is set. The indices of this run live under their own prefix.
 */
import { randomBytes } from 'node:crypto';
import { readConfig } from '../../src/config';
import { startEngine, stopEngine } from '../../scripts/engine';
import { deleteIndicesByPrefix } from '../support/engine';

process.env.ES_URL ??= 'http://127.0.0.1:9210,http://127.0.0.1:9211,http://127.0.0.1:9212';
process.env.ES_NODES ??= '3';
process.env.ES_HEAP ??= '512m';
process.env.ES_SHARDS ??= '3';
process.env.ES_REPLICAS ??= '1';
process.env.ES_INDEX_PREFIX = `chemxref-cluster-${randomBytes(3).toString('hex')}`;
process.env.LOG_LEVEL ??= 'silent';
let startedHere = false;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(600_000);
    const config = readConfig();
    const result = await startEngine(config.ES_URL, config.ES_HEAP, config.ES_NODES);
    startedHere = !result.reused;
  },
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(180_000);
    const config = readConfig();
    await deleteIndicesByPrefix(config.ES_URL, config.ES_INDEX_PREFIX).catch((error: Error) => process.stderr.write(`could not delete the ${config.ES_INDEX_PREFIX}-* indices: ${error.message}\n`));
    if (startedHere && !process.env.KEEP_ENGINE) await stopEngine(config.ES_URL, config.ES_NODES);
  },
};
