/** Test helpers around the real engine. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteIndicesByPrefix, startEngine, stopEngine } from '../../scripts/engine';

export { deleteIndicesByPrefix };
import { readConfig } from '../../src/config';
import type { Engine } from '../../src/engine/client';

/** The body of every request to a path ending in `pathEnd` that `engine` sends while `work` runs. */
export async function bodiesSent(engine: Engine, pathEnd: string, work: () => Promise<unknown>): Promise<unknown[]> {
  const bodies: unknown[] = [];
  const listener = (
    _error: unknown,
    event: { meta: { request: { params: { path: string; body?: unknown; bulkBody?: unknown } } } } | null,
  ): void => {
    const params = event?.meta.request.params;
    if (params?.path.endsWith(pathEnd)) bodies.push(params.bulkBody ?? params.body);
  };
  engine.client.diagnostic.on('request', listener as never);
  try {
    await work();
  } finally {
    engine.client.diagnostic.removeListener('request', listener as never);
  }
  return bodies;
}

/** The search bodies of every `_msearch` `engine` sends while `work` runs, one list per `_msearch`. */
export async function msearchesSent(
  engine: Engine,
  work: () => Promise<unknown>,
): Promise<Record<string, unknown>[][]> {
  return (await bodiesSent(engine, '/_msearch', work)).map((body) =>
    String(body)
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((_line, i) => i % 2 === 1),
  );
}

/**
 * Root hooks of a test run: make sure the engine of ES_URL answers (start the project's nodes,
 * ES_NODES of them, if none does, and stop only what was started here unless KEEP_ENGINE is set),
 * and give the run its own index prefix `<stem>-xxxxxx` and its own TMPDIR (the files tests write
 * and the loads' rejects files), both deleted at the end, so tests never touch real data nor leave
 * files behind. Request logs are off (LOG_LEVEL=info brings them back).
 */
export function engineHooks(stem: string): Mocha.RootHookObject {
  process.env.ES_INDEX_PREFIX = `${stem}-${randomBytes(3).toString('hex')}`;
  const runTmp = mkdtempSync(join(tmpdir(), `${process.env.ES_INDEX_PREFIX}-`));
  process.env.TMPDIR = runTmp;
  process.env.LOG_LEVEL ??= 'silent';
  let startedHere = false;
  return {
    async beforeAll(this: Mocha.Context): Promise<void> {
      this.timeout(600_000);
      const config = readConfig();
      // startEngine throws with the tail of the node's log when the engine cannot come up.
      const result = await startEngine(config.ES_URL, config.ES_HEAP, config.ES_NODES);
      startedHere = !result.reused;
    },
    async afterAll(this: Mocha.Context): Promise<void> {
      this.timeout(180_000);
      const config = readConfig();
      // A failure here would leave this run's indices on the engine: say so, but do not fail the run for it.
      await deleteIndicesByPrefix(config.ES_URL, config.ES_INDEX_PREFIX).catch((error: Error) =>
        process.stderr.write(`could not delete the ${config.ES_INDEX_PREFIX}-* test indices: ${error.message}\n`),
      );
      if (startedHere && !process.env.KEEP_ENGINE) await stopEngine(config.ES_URL, config.ES_NODES);
      rmSync(runTmp, { recursive: true, force: true });
    },
  };
}
