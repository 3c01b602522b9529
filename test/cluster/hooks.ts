/**
 * Root hooks of `npm run test:cluster`: a three-node cluster of the suite's own on 127.0.0.1 from
 * TEST_CLUSTER_PORT (9210, 9211 and 9212 by default; ES_URL given in the environment names another
 * cluster instead), 512 MiB of heap each, three primary shards and one replica per large index (the
 * release indices too: RELEASE_SHARD_ASSIGNMENTS 1).
 */
import { engineHooks } from '../support/engine';

process.env.ES_NODES ??= '3';
process.env.ES_HEAP ??= '512m';
process.env.ES_SHARDS ??= '3';
process.env.ES_REPLICAS ??= '1';
// The fixture's releases are tiny: sized by their data they would get one shard each; these tests
// are about releases spread over three.
process.env.RELEASE_SHARD_ASSIGNMENTS ??= '1';

export const mochaHooks = engineHooks('chemxref-cluster', { portVariable: 'TEST_CLUSTER_PORT', defaultPort: 9210 });
