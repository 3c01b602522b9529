/**
 * `npm run es:start | es:stop | es:status | es:fetch`: the project's local Elasticsearch, one node
 * or a cluster of ES_NODES nodes from ES_URL's first port (see scripts/engine.ts).
 * `npm run es:stop -- --wipe` also deletes their data.
 */
import { readConfig } from '../src/config';
import { Engine } from '../src/engine/client';
import { clusterReport } from '../src/engine/health';
import { engineStatus, fetchDistribution, startEngine, stopEngine } from './engine';

async function main(command: string | undefined, flags: string[]): Promise<void> {
  const config = readConfig();
  switch (command) {
    case 'fetch':
      process.stderr.write(`[es] distribution ready in ${fetchDistribution()}\n`);
      return;
    case 'start':
      await startEngine(config.ES_URL, config.ES_HEAP, config.ES_NODES);
      return;
    case 'stop':
      await stopEngine(config.ES_URL, config.ES_NODES, { wipe: flags.includes('--wipe') });
      return;
    case 'status': {
      const status = await engineStatus(config.ES_URL, config.ES_NODES);
      // The shards and replicas behind each alias of ES_INDEX_PREFIX, as GET /health reports them.
      let indices: unknown;
      if (status.health) {
        const engine = new Engine(config);
        try {
          indices = (await clusterReport(engine, 5_000)).indices;
        } catch (error) {
          indices = { error: (error as Error).message };
        } finally {
          await engine.close();
        }
      }
      const nodes = status.nodes.map(({ name, url, httpPort, transportPort, pid, alive, answers }) => ({ name, url, httpPort, transportPort, pid: pid ?? null, alive, answers }));
      process.stdout.write(`${JSON.stringify({ esUrl: config.ES_URL, version: status.version, cluster: status.cluster, nodes, health: status.health ?? null, ...(status.healthError ? { healthError: status.healthError } : {}), indices })}\n`);
      if (status.nodes.some((node) => !node.answers)) process.exitCode = 1;
      return;
    }
    default:
      throw new Error('usage: tsx scripts/es.ts fetch | start | stop [--wipe] | status');
  }
}

main(process.argv[2], process.argv.slice(3)).catch((error: Error) => {
  process.stderr.write(`[es] ${error.message}\n`);
  process.exit(1);
});
