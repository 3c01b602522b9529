/**
 * `npm run es:start | es:stop | es:status | es:fetch | es:restart`: the project's local Elasticsearch, one node
 * or a cluster of ES_NODES nodes from ES_URL's first port (see scripts/engine.ts).
 * `npm run es:stop -- --wipe` also deletes their data. Exit codes: 0 done, 1 failed (es:status: a
 * node does not answer), 2 wrong usage.
 */
import { CliExit, parseCommandLine, runCli, UsageError, type CliSpec } from '../src/cli';
import { readConfig } from '../src/config';
import { Engine } from '../src/engine/client';
import { clusterReport } from '../src/engine/health';
import { clusterNodes, engineStatus, fetchDistribution, restartNode, startEngine, stopEngine } from './engine';

export const esCli = {
  name: 'es',
  usage: 'npm run es:<command> [-- options]',
  commands: [
    ['es:start', 'start the engine on ES_URL (ES_NODES nodes, ES_HEAP each), or reuse the one that answers there'],
    ['es:stop', 'stop the nodes this project runs for ES_URL and ES_NODES, and wait until they are gone'],
    [
      'es:status',
      'one JSON line: its nodes, health and the indices of ES_INDEX_PREFIX (exit 1: a node does not ' + 'answer)',
    ],
    ['es:fetch', 'download (with Maven) and unpack the Elasticsearch distribution once'],
    [
      'es:restart [-- <node>...]',
      'a rolling restart of the local cluster: each node (or those named) in turn, with the steps of ' +
        'docs/scale.md#a-rolling-restart',
    ],
  ],
  positionals: true,
  options: {
    wipe: { type: 'boolean', help: 'with es:stop: then delete their data, so the next start is an empty cluster' },
  },
} satisfies CliSpec;

const commands = ['fetch', 'start', 'stop', 'status', 'restart'];

async function main(argv: string[]): Promise<number | void> {
  const {
    values,
    positionals: [command, ...rest],
  } = parseCommandLine(esCli, argv);
  if (!command) throw new UsageError('no command given');
  if (!commands.includes(command)) throw new UsageError(`unknown command "${command}"`);
  if (rest.length > 0 && command !== 'restart') throw new UsageError(`unexpected argument "${rest[0]}"`);
  if (values.wipe && command !== 'stop') throw new UsageError('--wipe goes with es:stop');
  try {
    return await run(command, values.wipe ?? false, rest);
  } catch (error) {
    throw new CliExit(1, `[es] ${(error as Error).message}`);
  }
}

async function run(command: string, wipe: boolean, names: string[]): Promise<number | void> {
  const config = readConfig();
  switch (command) {
    case 'restart': {
      if (config.ES_NODES < 2) throw new Error('a rolling restart is for a cluster: set ES_NODES (and ES_URL) to it');
      const nodes = clusterNodes(config.ES_URL, config.ES_NODES).map((node) => node.name);
      const unknown = names.filter((name) => !nodes.includes(name));
      if (unknown.length > 0) throw new Error(`${unknown.join(', ')}: not among ${nodes.join(', ')}`);
      for (const name of names.length > 0 ? names : nodes)
        await restartNode(config.ES_URL, config.ES_NODES, name, config.ES_HEAP);
      return;
    }
    case 'fetch':
      process.stderr.write(`[es] distribution ready in ${fetchDistribution()}\n`);
      return;
    case 'start':
      await startEngine(config.ES_URL, config.ES_HEAP, config.ES_NODES);
      return;
    case 'stop':
      await stopEngine(config.ES_URL, config.ES_NODES, { wipe });
      return;
    default: {
      const status = await engineStatus(config.ES_URL, config.ES_NODES);
      // The shards and replicas behind each alias of ES_INDEX_PREFIX, as GET /health reports them.
      let indices: unknown;
      let disk: unknown;
      if (status.health) {
        const engine = new Engine(config);
        try {
          // With each data node's disk against the watermarks (past: high or flood_stage when it is).
          ({ indices, disk } = await clusterReport(engine, 5_000));
        } catch (error) {
          indices = disk = { error: (error as Error).message };
        } finally {
          await engine.close();
        }
      }
      const nodes = status.nodes.map(({ name, url, httpPort, transportPort, pid, alive, answers }) => ({
        name,
        url,
        httpPort,
        transportPort,
        pid: pid ?? null,
        alive,
        answers,
      }));
      process.stdout.write(
        `${JSON.stringify({
          esUrl: config.ES_URL,
          version: status.version,
          cluster: status.cluster,
          nodes,
          health: status.health ?? null,
          ...(status.healthError ? { healthError: status.healthError } : {}),
          disk: disk ?? null,
          indices,
        })}\n`,
      );
      return status.nodes.some((node) => !node.answers) ? 1 : 0;
    }
  }
}

if (require.main === module) runCli(esCli, main);
