/** `npm run es:start | es:stop | es:status`: the local Elasticsearch node (see scripts/engine.ts). */
import { readConfig } from '../src/config';
import { engineStatus, fetchDistribution, startEngine, stopEngine } from './engine';

async function main(command: string | undefined): Promise<void> {
  const config = readConfig();
  switch (command) {
    case 'fetch':
      process.stderr.write(`[es] distribution ready in ${fetchDistribution()}\n`);
      return;
    case 'start':
      await startEngine(config.ES_URL, config.ES_HEAP);
      return;
    case 'stop':
      process.stderr.write((await stopEngine()) ? '[es] stopped\n' : '[es] no node started by this project is running\n');
      return;
    case 'status': {
      const status = await engineStatus(config.ES_URL);
      process.stdout.write(`${JSON.stringify({ esUrl: config.ES_URL, version: status.version, pid: status.pid ?? null, ...status.probe })}\n`);
      if (status.probe.state !== 'elasticsearch') process.exitCode = 1;
      return;
    }
    default:
      throw new Error('usage: tsx scripts/es.ts fetch|start|stop|status');
  }
}

main(process.argv[2]).catch((error: Error) => {
  process.stderr.write(`[es] ${error.message}\n`);
  process.exit(1);
});
