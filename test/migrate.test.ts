import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { expect } from 'chai';
import { Engine } from '../src/engine/client';
import { currentLayout, readLayout, recordLayout } from '../src/engine/layout';
import { migrations } from '../src/engine/migrations';
import { releasesOf } from '../src/engine/schema';
import { startServer } from '../src/server';
import { startApi, type RunningApi } from './support/api';
import { CheckingClients, compoundLookups, tally } from './support/checking-clients';
import { fixtureDump, fixturesDir, freshPrefix, load, testConfig } from './support/fixture';
import { buildLayout1 } from './support/layouts';
import { repoRoot, runToEnd } from './support/run';

/**
 * Each answer's text, by request: v1 and legacy lookups of every id of every source and of every key,
 * the sources. Asked eight at a time.
 */
async function answers(api: RunningApi, records: { sourceId: number; compoundId: string; key: string }[]) {
  const post = async (path: string, body: object): Promise<string> => {
    const response = await fetch(`${api.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return `${response.status} ${await response.text()}`;
  };
  const get = async (path: string): Promise<string> => {
    const response = await api.get(path);
    return `${response.status} ${response.text}`;
  };
  const requests = new Map<string, () => Promise<string>>();
  for (const { sourceId, compoundId, key } of records) {
    const id = encodeURIComponent(compoundId);
    requests.set(`v1 ${sourceId}:${compoundId}`, () =>
      post('/api/v1/compounds', { type: 'sourceID', compound: compoundId, sourceID: sourceId }),
    );
    requests.set(`legacy ${sourceId}:${compoundId}`, () => get(`/rest/src_compound_id_all/${id}/${sourceId}`));
    requests.set(`v1 ${key}`, () => post('/api/v1/compounds', { type: 'inchikey', compound: key }));
    requests.set(`legacy ${key}`, () => get(`/rest/inchikey_all/${key}`));
  }
  requests.set('sources', () => get('/api/v1/sources'));
  requests.set('connectivity', () => post('/api/v1/connectivity', { type: 'inchikey', compound: records[0].key }));
  const asked = [...requests];
  const texts: Record<string, string> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < asked.length) {
        const [what, ask] = asked[next++];
        texts[what] = await ask();
      }
    }),
  );
  return texts;
}

/**
 * Runs `npm run migrate` for `prefix` as a process of its own; with `killAt`, kills it (SIGKILL) as
 * soon as its stderr says that, and resolves then.
 */
async function runMigrate(
  prefix: string,
  killAt?: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/migrate.ts'], {
    cwd: repoRoot,
    env: { ...process.env, ES_INDEX_PREFIX: prefix },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (killAt?.test(stderr)) child.kill('SIGKILL');
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** The answers that differ from `expected`, each with both texts (cut short). */
function differences(actual: Record<string, string>, expected: Record<string, string>): string[] {
  return Object.keys({ ...expected, ...actual })
    .filter((what) => actual[what] !== expected[what])
    .map((what) => `${what}: ${expected[what]?.slice(0, 400)} => ${actual[what]?.slice(0, 400)}`);
}

describe('npm run migrate (issue 60)', function () {
  this.timeout(600_000);
  let prefix: string;
  let engine: Engine;
  let api: RunningApi;
  let records: { sourceId: number; compoundId: string; key: string }[];
  let answeredBefore: Record<string, string>;

  before(async () => {
    const source = freshPrefix('layout-source');
    // A dump, then release 2 of bzr_names: a dump index serving six sources, one of its own, a previous release.
    await load(source, ['dump', fixtureDump]);
    await load(source, ['source', '104', join(fixturesDir, 'releases', 'bzr-release-2.tsv')]);
    prefix = freshPrefix('layout-1');
    engine = new Engine(testConfig(prefix));
    await buildLayout1(engine, source, prefix);
    const current = await engine.client.search<{ sourceId: number; compoundId: string; standardInchiKey: string }>({
      index: `${prefix}-xrefs`,
      size: 10_000,
      query: { term: { assignment: 1 } },
    });
    records = current.hits.hits
      .map((hit) => ({
        sourceId: hit._source!.sourceId,
        compoundId: hit._source!.compoundId,
        key: hit._source!.standardInchiKey,
      }))
      .sort((a, b) => a.sourceId - b.sourceId || a.compoundId.localeCompare(b.compoundId));
    api = await startApi(testConfig(prefix));
    answeredBefore = await answers(api, records);
  });
  after(async () => {
    await api?.stop();
    await engine?.close();
  });

  it('the steps are in order, each from the layout the one before goes to', () => {
    migrations.forEach((step, i) => expect(step.from).to.equal(i === 0 ? 1 : migrations[i - 1].to));
    expect(currentLayout).to.equal(migrations[migrations.length - 1].to);
  });

  it('the API serves layout 1 as it is: every id answers', async () => {
    expect(await readLayout(engine)).to.equal(1);
    expect(records.length).to.be.above(1000);
    const misses = Object.entries(answeredBefore).filter(
      ([what, text]) => what.startsWith('v1 ') && !text.startsWith('200 {"response":"Success"'),
    );
    expect(misses).to.deep.equal([]);
  });

  it('a load refuses layout 1 and says to migrate; --dry-run names the step and changes nothing', async () => {
    const refused = await load(prefix, ['doctor']).catch((error: Error) => error);
    expect((refused as Error).message).to.include(
      `have layout 1; this chemxref writes layout ${currentLayout}: run \`npm run migrate\``,
    );
    const dry = await runToEnd(process.execPath, ['--import', 'tsx', 'src/migrate.ts', '--dry-run'], {
      ES_INDEX_PREFIX: prefix,
    });
    expect(dry.code, dry.stderr).to.equal(0);
    expect(JSON.parse(dry.stdout)).to.deep.include({ layoutBefore: 1, layout: 1, dryRun: true });
    expect(await readLayout(engine)).to.equal(1);
  });

  it('migrates while the API serves, killed twice on the way: no request fails, every answer is the same', async () => {
    const lookups = compoundLookups(
      104,
      records.filter((r) => r.sourceId === 104).map((r) => ({ compoundId: r.compoundId, standardInchiKey: r.key })),
    );
    const clients = new CheckingClients(api.url, lookups, { clients: 2, timeoutMs: 10_000 });
    clients.start();
    try {
      const first = await runMigrate(prefix, /\[migrate\] cloned /);
      expect(first.code, first.stderr).to.equal(null);
      const second = await runMigrate(prefix, /\[migrate\] moved \d+ aliases/);
      expect(second.code, second.stderr).to.equal(null);
      const third = await runMigrate(prefix);
      expect(third.code, third.stderr).to.equal(0);
      expect(JSON.parse(third.stdout)).to.deep.include({ status: 'done', layoutBefore: 1, layout: currentLayout });
    } finally {
      const answered = tally(await clients.stop());
      expect(answered.requests).to.be.above(0);
      expect(answered).to.deep.include({ wrong: 0, unavailable: 0, errors: 0 });
    }
    expect(await readLayout(engine)).to.equal(currentLayout);
    const left = await engine.client.indices.resolveIndex({ name: `${prefix}-*xrefs*` });
    expect([...left.indices, ...left.aliases].map((i) => i.name)).to.deep.equal([]);
    expect(differences(await answers(api, records), answeredBefore)).to.deep.equal([]);
    // An API started now reads the new layout the same way.
    const fresh = await startApi(testConfig(prefix));
    try {
      expect(differences(await answers(fresh, records), answeredBefore)).to.deep.equal([]);
    } finally {
      await fresh.stop();
    }
  });

  it('run again, it has nothing to do; loads and rollback work on the migrated indices', async () => {
    const again = await runMigrate(prefix);
    expect(again.code, again.stderr).to.equal(0);
    expect(JSON.parse(again.stdout)).to.deep.include({ layoutBefore: currentLayout, layout: currentLayout, steps: [] });
    const { previous } = await releasesOf(engine, 104);
    expect(previous).to.match(new RegExp(`^${prefix}-assignments-dump-`));
    const rollback = await load(prefix, ['rollback', '104']);
    expect(rollback.status).to.equal('done');
    await load(prefix, ['rollback', '104']);
    expect(differences(await answers(api, records), answeredBefore)).to.deep.equal([]);
  });

  it('the API refuses a newer layout with one line; a load too', async () => {
    const newer = freshPrefix('layout-newer');
    await load(newer, ['sources', join(fixtureDump, 'source.tsv.gz')]);
    const other = new Engine(testConfig(newer));
    try {
      await recordLayout(other, currentLayout + 1);
      const refused = await startServer(testConfig(newer), {}, 0).then(
        async (server) => {
          await server.stop();
          return undefined;
        },
        (error: Error) => error,
      );
      expect(refused?.message).to.equal(
        `the indices of ES_INDEX_PREFIX "${newer}" have layout ${currentLayout + 1}, newer than this chemxref ` +
          `reads (layouts 1 to ${currentLayout}): run the chemxref that wrote them, or a newer one`,
      );
      const load2 = await load(newer, ['doctor']).catch((error: Error) => error);
      expect((load2 as Error).message).to.equal(refused!.message);
    } finally {
      await other.close();
    }
  });
});
