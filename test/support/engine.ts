/** Test helpers around the real engine. */
import { Client } from '@elastic/elasticsearch';

/**
 * Deletes every index whose name starts with `prefix-` (by name: the node has no wildcard deletes in
 * production), twenty names a request: a test run leaves about a hundred indices, and all their
 * names in one request line pass the engine's 4 kB limit (too_long_http_line_exception). Returns
 * the names deleted.
 */
export async function deleteIndicesByPrefix(esUrl: string, prefix: string): Promise<string[]> {
  const client = new Client({ node: esUrl });
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
