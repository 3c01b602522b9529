/** Test helpers around the real engine. */
import { Client } from '@elastic/elasticsearch';
import { engineNodes } from '../../src/config';
import type { Engine } from '../../src/engine/client';

/**
 * Deletes every index whose name starts with `prefix-` (by name: the node has no wildcard deletes in
 * production), twenty names a request: a test run leaves about a hundred indices, and all their
 * names in one request line pass the engine's 4 kB limit (too_long_http_line_exception). Returns
 * the names deleted.
 */
export async function deleteIndicesByPrefix(esUrl: string, prefix: string): Promise<string[]> {
  const client = new Client({ nodes: engineNodes(esUrl) });
  try {
    const indices = Object.keys(await client.indices.get({ index: `${prefix}-*`, expand_wildcards: 'all' }));
    for (let start = 0; start < indices.length; start += 20) {
      await client.indices.delete({ index: indices.slice(start, start + 20).join(',') }, { ignore: [404] });
    }
    return indices;
  } finally {
    await client.close();
  }
}

/** The search bodies of every `_msearch` `engine` sends while `work` runs, one list per `_msearch`. */
export async function msearchesSent(engine: Engine, work: () => Promise<unknown>): Promise<Record<string, unknown>[][]> {
  const sent: Record<string, unknown>[][] = [];
  const listener = (_error: unknown, event: { meta: { request: { params: { path: string; body?: unknown; bulkBody?: unknown } } } } | null): void => {
    const params = event?.meta.request.params;
    if (!params?.path.endsWith('/_msearch')) return;
    const lines = String(params.bulkBody ?? params.body).split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    sent.push(lines.filter((_line, i) => i % 2 === 1));
  };
  engine.client.diagnostic.on('request', listener as never);
  try {
    await work();
  } finally {
    engine.client.diagnostic.removeListener('request', listener as never);
  }
  return sent;
}
