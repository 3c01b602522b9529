/** Deployments of earlier index layouts (src/engine/layout.ts), built from their mappings in test/fixtures/layouts/. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { mappingOf, type Engine } from '../../src/engine/client';
import { fixturesDir } from './fixture';

const layout1 = join(fixturesDir, 'layouts', '1');
const oldMapping = (name: string): { settings: Record<string, unknown>; mappings: Record<string, unknown> } =>
  JSON.parse(readFileSync(join(layout1, `${name}.json`), 'utf8'));

/** Every document of `index` with its `_id` (the fixture's indices are small). */
async function documentsOf(engine: Engine, index: string): Promise<{ id: string; source: Record<string, unknown> }[]> {
  const result = await engine.client.search<Record<string, unknown>>({ index, size: 10_000, sort: ['_doc'] });
  return result.hits.hits.map((hit) => ({ id: hit._id!, source: hit._source! }));
}

async function copyDocuments(
  engine: Engine,
  documents: { id: string; source: Record<string, unknown> }[],
  index: string,
): Promise<void> {
  if (documents.length === 0) return;
  const result = await engine.client.bulk({
    refresh: true,
    operations: documents.flatMap(({ id, source }) => [{ index: { _index: index, _id: id } }, source]),
  });
  expect(result.errors, JSON.stringify(result.items.find((item) => item.index?.error))).to.equal(false);
}

/**
 * Builds under `target` the deployment a chemxref of layout 1 would have written for what `source`
 * holds: the old mappings (test/fixtures/layouts/1), release indices and aliases named
 * `{prefix}-xrefs*`, no fingerprints index, no layout recorded.
 */
export async function buildLayout1(engine: Engine, source: string, target: string): Promise<void> {
  for (const name of ['compounds', 'sources', 'meta', 'changes'] as const) {
    const old = name === 'meta' || name === 'sources';
    const { settings, mappings } = old ? oldMapping(name) : mappingOf(name);
    const fields = Object.keys((mappings as { properties: object }).properties);
    await engine.client.indices.create({ index: `${target}-${name}`, settings, mappings });
    let documents = await documentsOf(engine, `${source}-${name}`);
    if (name === 'meta')
      documents = documents.filter(({ source: document }) => document.kind === 'load' || document.kind === 'sequence');
    // The fields layout 1 had: a source of names (idsAreNames, layout 3) was not.
    if (old)
      documents = documents.map(({ id, source: document }) => ({
        id,
        source: Object.fromEntries(Object.entries(document).filter(([key]) => fields.includes(key))),
      }));
    await copyDocuments(engine, documents, `${target}-${name}`);
  }
  const releases = await engine.client.indices.get({ index: `${source}-assignments-*`, features: ['aliases'] });
  const actions: object[] = [];
  for (const [index, state] of Object.entries(releases)) {
    const old = index.replace(`${source}-assignments-`, `${target}-xrefs-`);
    const { settings, mappings } = oldMapping('xrefs');
    await engine.client.indices.create({ index: old, settings, mappings });
    await copyDocuments(engine, await documentsOf(engine, index), old);
    for (const [alias, definition] of Object.entries((state.aliases ?? {}) as Record<string, { filter?: object }>)) {
      const renamed = alias
        .replace(`${source}-previous-assignments-`, `${target}-previous-xrefs-`)
        .replace(`${source}-assignments`, `${target}-xrefs`);
      actions.push({
        add: { index: old, alias: renamed, ...(definition.filter ? { filter: definition.filter } : {}) },
      });
    }
  }
  await engine.client.indices.updateAliases({ actions } as never);
}
