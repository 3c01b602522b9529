/** Test helpers around the real engine. */
import { Client } from '@elastic/elasticsearch';

/** Deletes every index whose name starts with `prefix-` (by name: the node has no wildcard deletes in production). */
export async function deleteIndicesByPrefix(esUrl: string, prefix: string): Promise<void> {
  const client = new Client({ node: esUrl });
  try {
    const indices = Object.keys(await client.indices.get({ index: `${prefix}-*`, expand_wildcards: 'all' }));
    if (indices.length > 0) await client.indices.delete({ index: indices.join(',') });
  } finally {
    await client.close();
  }
}
