import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { parseArguments, runCommand } from '../loaders/cli';
import { Engine } from '../src/engine/client';
import type { LoadRecord } from '../src/engine/documents';
import { loadRecord, saveLoadRecord } from '../src/engine/loads';
import { sourceById } from '../src/engine/sources';
import { releasesOf } from '../src/engine/schema';
import { startApi, type RunningApi } from './support/api';
import { fixtureDump, fixturesDir, freshPrefix, load, testConfig } from './support/fixture';
import { runToEnd } from './support/run';

const release2 = join(fixturesDir, 'releases', 'bzr-release-2.tsv');

/** Release 2 of bzr_names with its ids shifted by one row: each name on the next row's structure. */
function writeShiftedRelease(): string {
  const [header, ...rows] = readFileSync(release2, 'utf8').split('\n').filter(Boolean);
  const ids = rows.map((row) => row.split('\t')[0]);
  const shifted = rows.map((row, i) => [ids[(i + 1) % ids.length], ...row.split('\t').slice(1)].join('\t'));
  const file = join(mkdtempSync(join(tmpdir(), 'chemxref-bzr-')), 'bzr-shifted.tsv');
  writeFileSync(file, `${[header, ...shifted].join('\n')}\n`);
  return file;
}

/** What the API answers of each id of a source, by v1 and legacy, and of the source itself. */
async function answersOf(
  api: RunningApi,
  engine: Engine,
  sourceId: number,
  ids: string[],
): Promise<Record<string, unknown>> {
  const answers: Record<string, unknown> = {};
  for (const id of ids) {
    answers[`v1 ${id}`] = (
      await api.post('/api/v1/compounds', { type: 'sourceID', compound: id, sourceID: sourceId })
    ).body;
    answers[`legacy ${id}`] = (await api.get(`/rest/src_compound_id_all/${encodeURIComponent(id)}/${sourceId}`)).body;
  }
  answers.source = await sourceAnswer(api, engine, sourceId);
  return answers;
}

/**
 * The API's answer for a source once it shows what the sources index holds: the API reads sources
 * at most every 2 s (SourceCatalog), so right after a load or rollback it may still show the last ones.
 */
async function sourceAnswer(api: RunningApi, engine: Engine, sourceId: number): Promise<unknown> {
  const stored = await sourceById(engine, sourceId);
  const since = Date.now();
  for (;;) {
    const { body } = await api.get(`/api/v1/sources/${sourceId}`);
    const shown = (body as { sources?: { lastUpdated?: string; srcReleaseNumber?: unknown }[] }).sources?.[0];
    if (
      shown?.lastUpdated === stored?.lastUpdated &&
      String(shown?.srcReleaseNumber) === String(stored?.srcReleaseNumber)
    )
      return body;
    if (Date.now() - since > 15_000) return body;
    await sleep(100);
  }
}

/** The changes of a source since a load, as the API gives them. */
async function changesSince(api: RunningApi, loadId: string): Promise<{ added: any[]; dropped: any[]; moved: any[] }> {
  const { status, body } = await api.get(`/api/v1/sources/104/changes?since=${loadId}`);
  expect(status, JSON.stringify(body)).to.equal(200);
  return { added: body.added, dropped: body.dropped, moved: body.moved };
}

describe('npm run load -- rollback (issue 60)', function () {
  this.timeout(300_000);
  let prefix: string;
  let engine: Engine;
  let api: RunningApi;
  let ids: string[];
  let goodLoad: string;
  let goodRelease: string;
  let badRelease: string;
  let badLoad: string;
  let beforeBad: Record<string, unknown>;
  let afterBad: Record<string, unknown>;
  let badChanges: { added: any[]; dropped: any[]; moved: any[] };

  before(async () => {
    prefix = freshPrefix('rollback');
    await load(prefix, ['dump', fixtureDump]);
    engine = new Engine(testConfig(prefix));
    api = await startApi(testConfig(prefix));
    const good = await load(prefix, ['source', '104', release2]);
    goodLoad = String(good.loadId);
    goodRelease = (good.release as { number: string }).number;
    const dumpIds = await engine.client.search<{ compoundId: string }>({
      index: `${prefix}-assignments-*`,
      size: 1000,
      query: { term: { sourceId: 104 } },
    });
    ids = [...new Set(dumpIds.hits.hits.map((hit) => hit._source!.compoundId))].sort();
    beforeBad = await answersOf(api, engine, 104, ids);
    const bad = await load(prefix, ['source', '104', writeShiftedRelease()]);
    expect(bad.status, 'the shifted release passes the release guard').to.equal('done');
    badLoad = String(bad.loadId);
    badRelease = (bad.release as { number: string }).number;
    afterBad = await answersOf(api, engine, 104, ids);
    badChanges = await changesSince(api, goodLoad);
  });
  after(async () => {
    await api?.stop();
    await engine?.close();
  });

  it('the bad release changed answers (the test would prove nothing otherwise)', () => {
    expect(afterBad).to.not.deep.equal(beforeBad);
    expect(badChanges.moved.length).to.be.above(10);
  });

  it('--dry-run says what would change and writes nothing', async () => {
    const releases = await releasesOf(engine, 104);
    const summary = await load(prefix, ['rollback', '104', '--dry-run']);
    expect(summary).to.deep.include({ command: 'rollback', status: 'done', dryRun: true });
    expect(summary.changes).to.deep.equal({
      added: badChanges.dropped.length,
      dropped: badChanges.added.length,
      moved: badChanges.moved.length,
    });
    expect((summary.to as { release: string }).release).to.equal(goodRelease);
    expect((summary.from as { release: string }).release).to.equal(badRelease);
    expect(await releasesOf(engine, 104)).to.deep.equal(releases);
    expect(await answersOf(api, engine, 104, ids)).to.deep.equal(afterBad);
    expect(await loadRecord(engine, String(summary.loadId))).to.equal(undefined);
  });

  it('every id of the source answers as before the bad release, and the changes feed shows both steps', async () => {
    const summary = await load(prefix, ['rollback', '104']);
    expect(summary).to.deep.include({ command: 'rollback', status: 'done', dryRun: false });
    expect(await answersOf(api, engine, 104, ids)).to.deep.equal(beforeBad);
    const rollbackLoad = String(summary.loadId);
    const record = (await loadRecord(engine, rollbackLoad))!;
    expect(record).to.deep.include({ command: 'rollback', status: 'done', sourceId: 104, changesRecorded: true });
    const loads = (await api.get('/api/v1/sources/104/loads')).body.loads as { loadId: string }[];
    expect(loads.slice(0, 3).map((l) => l.loadId)).to.deep.equal([rollbackLoad, badLoad, goodLoad]);
    // The rollback's changes are the bad release's, reversed; since the good release nothing changed in all.
    const undone = await changesSince(api, badLoad);
    expect(undone.added).to.deep.equal(badChanges.dropped);
    expect(undone.dropped).to.deep.equal(badChanges.added);
    expect(undone.moved).to.deep.equal(
      badChanges.moved.map(({ compoundId, fromUci, toUci }) => ({ compoundId, fromUci: toUci, toUci: fromUci })),
    );
    expect(await changesSince(api, goodLoad)).to.deep.equal({ added: [], dropped: [], moved: [] });
  });

  it('a second rollback undoes the first, and a third restores the good release again', async () => {
    await load(prefix, ['rollback', '104']);
    expect(await answersOf(api, engine, 104, ids)).to.deep.equal(afterBad);
    await load(prefix, ['rollback', '104']);
    expect(await answersOf(api, engine, 104, ids)).to.deep.equal(beforeBad);
  });

  it('a rollback killed after its alias swap is finished by the next run, which rolls back no further', async () => {
    // The sources index refuses writes: the rollback fails right after its swap, as if killed there.
    await engine.client.indices.putSettings({ index: engine.names.sources, settings: { 'index.blocks.write': true } });
    let loadId: string;
    try {
      const error = await load(prefix, ['rollback', '104']).then(
        () => undefined,
        (e: Error & { summary?: { loadId: string } }) => e,
      );
      expect(error?.message).to.match(/doctor/);
      loadId = error!.summary!.loadId;
    } finally {
      await engine.client.indices.putSettings({
        index: engine.names.sources,
        settings: { 'index.blocks.write': null },
      });
    }
    // Its process gone: a record silent for long, from another machine.
    const record = (await loadRecord(engine, loadId))!;
    expect(record.status).to.equal('running');
    await saveLoadRecord(engine, { ...record, host: 'another-machine', heartbeat: '2026-01-01T00:00:05.000Z' });
    const again = await load(prefix, ['rollback', '104']);
    expect(again).to.deep.include({ command: 'rollback', status: 'done', loadId });
    expect(await answersOf(api, engine, 104, ids)).to.deep.equal(afterBad);
    expect((await loadRecord(engine, loadId))!.status).to.equal('done');
    expect((await changesSince(api, badLoad)).moved).to.deep.equal([]);
    await load(prefix, ['rollback', '104']);
    expect(await answersOf(api, engine, 104, ids)).to.deep.equal(beforeBad);
  });

  it('a rollback killed before its alias swap did nothing: the sweep marks it failed', async () => {
    const { current, previous } = await releasesOf(engine, 104);
    const dead: LoadRecord = {
      kind: 'load',
      loadId: '20260101T000000-dead60',
      command: 'rollback',
      file: null,
      sourceId: 104,
      sourceIds: [104],
      index: previous,
      status: 'running',
      dryRun: false,
      rowsRead: 0,
      rowsLoaded: 0,
      rowsRejected: 0,
      rejectsByReason: {},
      started: '2026-01-01T00:00:00.000Z',
      heartbeat: '2026-01-01T00:00:05.000Z',
      ended: null,
      seconds: null,
      host: 'another-machine',
      pid: 1,
      changesRecorded: true,
    };
    await saveLoadRecord(engine, dead);
    const report = await load(prefix, ['doctor']);
    expect(report.interruptedLoads).to.deep.equal([
      { loadId: dead.loadId, command: 'rollback', why: 'no heartbeat since 2026-01-01T00:00:05.000Z' },
    ]);
    expect((await loadRecord(engine, dead.loadId))!.status).to.equal('failed');
    expect(await releasesOf(engine, 104)).to.deep.equal({ current, previous });
    expect(await answersOf(api, engine, 104, ids)).to.deep.equal(beforeBad);
  });

  it('refused with exit 1 when the source keeps no previous release', async () => {
    const run = await runToEnd('npx', ['tsx', 'loaders/cli.ts', 'rollback', '102', '--no-progress'], {
      ES_INDEX_PREFIX: prefix,
    });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.match(/^rollback refused: source 102 keeps no previous release to roll back to/m);
    const unknown = await load(prefix, ['rollback', '999']).catch((error: Error) => error);
    expect((unknown as Error).message).to.equal('source 999 is not known');
  });

  it('the previous release stays past RELEASE_GRACE; the one before it goes once the grace is over', async () => {
    const { current, previous } = await releasesOf(engine, 104);
    const config = testConfig(prefix, { RELEASE_GRACE: '1ms' });
    await runCommand(parseArguments(['doctor', '--no-progress']), config);
    expect(await releasesOf(engine, 104)).to.deep.equal({ current, previous });
    expect(await engine.client.indices.exists({ index: previous! })).to.equal(true);
    // A new release: the one before it was the previous release, and is now past the grace.
    await load(prefix, ['source', '104', release2]);
    await runCommand(parseArguments(['doctor', '--no-progress']), config);
    expect(await engine.client.indices.exists({ index: previous! })).to.equal(false);
    expect((await releasesOf(engine, 104)).previous).to.equal(current);
  });
});
