/**
 * Root hooks of `npm run test:cluster`: a three-node cluster of the project's own engine on
 * 127.0.0.1:9210-9212 (512 MiB of heap each), three primary shards and one replica per large index
 * (the release indices too: RELEASE_SHARD_ASSIGNMENTS 1).
 */
import { engineHooks } from '../support/engine';

process.env.ES_URL ??= 'http://127.0.0.1:9210,http://127.0.0.1:9211,http://127.0.0.1:9212';
process.env.ES_NODES ??= '3';
process.env.ES_HEAP ??= '512m';
process.env.ES_SHARDS ??= '3';
process.env.ES_REPLICAS ??= '1';
// The fixture's releases are tiny: sized by their data they would get one shard each; these tests
// are about releases spread over three.
process.env.RELEASE_SHARD_ASSIGNMENTS ??= '1';

export const mochaHooks = engineHooks('chemxref-cluster');
