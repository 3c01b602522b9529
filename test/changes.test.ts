import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Engine } from '../src/engine/client';
import type { LoadRecord } from '../src/engine/documents';
import { loadRecord, saveLoadRecord } from '../src/engine/loads';
import { parseExportArguments } from '../src/export/cli';
import { exportChanges } from '../src/export/changes';
import { startApi, type RunningApi } from './support/api';
import { fixtureDump, fixturesDir, freshPrefix, load, testConfig } from './support/fixture';

const release2 = join(fixturesDir, 'releases', 'bzr-release-2.tsv');
/** Medazepam's structure in the fixture dump (UCI 808), before release 2 put it on Diazepam's. */
const medazepamInchi =
  'InChI=1S/C16H15ClN2/c1-19-10-9-18-16(12-5-3-2-4-6-12)14-11-13(17)7-8-15(14)19/h2-8,11H,9-10H2,1H3';

/** Release 3 of bzr_names: release 2 without Clorazepate, and Medazepam back on its own structure. */
function writeRelease3(): string {
  const lines = readFileSync(release2, 'utf8')
    .split('\n')
    .filter(Boolean)
    .filter((line) => !line.startsWith('Clorazepate\t'))
    .map((line) =>
      line.startsWith('Medazepam\t') ? `Medazepam\t${medazepamInchi}\tYLCXGBZIZBEVPZ-UHFFFAOYSA-N` : line,
    );
  const file = join(mkdtempSync(join(tmpdir(), 'chemxref-bzr-')), 'bzr-release-3.tsv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The UCI a bzr_names id is currently assigned to. */
async function currentUci(engine: Engine, compoundId: string): Promise<number> {
  const result = await engine.client.search<{ uci: number }>({
    index: engine.names.assignmentsOf(104),
    query: { bool: { filter: [{ term: { compoundId } }, { term: { assignment: 1 } }] } },
  });
  return result.hits.hits[0]._source!.uci;
}

describe('loads and changes of a source', function () {
  this.timeout(240_000);
  let prefix: string;
  let engine: Engine;
  let api: RunningApi;
  let dumpLoad: string;
  let release2Load: string;
  let release3Load: string;
  const ucis: Record<string, number> = {};
  /** The answers right after release 2, as JSON and as NDJSON lines. */
  let afterRelease2: { body: any; lines: object[] };
  let dumpChanges: unknown;

  before(async () => {
    prefix = freshPrefix('changes');
    const dump = await load(prefix, ['dump', fixtureDump]);
    dumpLoad = String((dump.steps as Record<string, unknown>[])[2].loadId);
    dumpChanges = (dump.steps as Record<string, unknown>[])[2].changes;
    engine = new Engine(testConfig(prefix));
    api = await startApi(testConfig(prefix));
    release2Load = String((await load(prefix, ['source', '104', release2])).loadId);
    for (const id of ['Clorazepate', 'Lorazepam', 'Meclonazepam', 'Nordazepam'])
      ucis[id] = await currentUci(engine, id);
    const json = await api.get(`/api/v1/sources/104/changes?since=${dumpLoad}`);
    const ndjson = await api.get(`/api/v1/sources/104/changes?since=${dumpLoad}`, { accept: 'application/x-ndjson' });
    afterRelease2 = {
      body: json.body,
      lines: ndjson.text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    };
    release3Load = String((await load(prefix, ['source', '104', writeRelease3()])).loadId);
  });
  after(async () => {
    await api?.stop();
    await engine?.close();
  });

  it('a bzr_names reload reports exactly the ids it added, dropped and re-pointed', () => {
    const { body } = afterRelease2;
    expect(body).to.deep.include({ response: 'Success', sourceID: 104 });
    expect(body.since.loadId).to.equal(dumpLoad);
    expect(body.until.loadId).to.equal(release2Load);
    expect(body.added).to.deep.equal([
      { compoundId: 'Clorazepate', uci: ucis.Clorazepate },
      { compoundId: 'Lorazepam', uci: ucis.Lorazepam },
      { compoundId: 'Meclonazepam', uci: ucis.Meclonazepam },
    ]);
    expect(body.dropped).to.deep.equal([
      { compoundId: 'Chlordiazepoxide', uci: 16 },
      { compoundId: 'Delorazepam', uci: 80 },
      { compoundId: 'Estazolam', uci: 75 },
    ]);
    expect(body.moved).to.deep.equal([
      { compoundId: 'Medazepam', fromUci: 808, toUci: 3 },
      { compoundId: 'Nordazepam', fromUci: 13, toUci: ucis.Nordazepam },
    ]);
  });

  it('the same reload as NDJSON: one line per change, sorted by compound id', () => {
    expect(afterRelease2.lines).to.deep.equal([
      { change: 'dropped', compoundId: 'Chlordiazepoxide', uci: 16 },
      { change: 'added', compoundId: 'Clorazepate', uci: ucis.Clorazepate },
      { change: 'dropped', compoundId: 'Delorazepam', uci: 80 },
      { change: 'dropped', compoundId: 'Estazolam', uci: 75 },
      { change: 'added', compoundId: 'Lorazepam', uci: ucis.Lorazepam },
      { change: 'added', compoundId: 'Meclonazepam', uci: ucis.Meclonazepam },
      { change: 'moved', compoundId: 'Medazepam', fromUci: 808, toUci: 3 },
      { change: 'moved', compoundId: 'Nordazepam', fromUci: 13, toUci: ucis.Nordazepam },
    ]);
  });

  it('net change across two reloads: an id added then dropped, or moved A → B → A, is in no list', async () => {
    const { status, body } = await api.get(`/api/v1/sources/104/changes?since=${dumpLoad}`);
    expect(status).to.equal(200);
    expect(body).to.deep.include({ response: 'Success', sourceID: 104 });
    expect(body.since.loadId).to.equal(dumpLoad);
    expect(body.until.loadId).to.equal(release3Load);
    expect(Date.parse(body.until.ended)).to.be.above(Date.parse(body.since.ended));
    expect(body.added).to.deep.equal([
      { compoundId: 'Lorazepam', uci: ucis.Lorazepam },
      { compoundId: 'Meclonazepam', uci: ucis.Meclonazepam },
    ]);
    expect(body.dropped).to.deep.equal([
      { compoundId: 'Chlordiazepoxide', uci: 16 },
      { compoundId: 'Delorazepam', uci: 80 },
      { compoundId: 'Estazolam', uci: 75 },
    ]);
    expect(body.moved).to.deep.equal([{ compoundId: 'Nordazepam', fromUci: 13, toUci: ucis.Nordazepam }]);
  });

  it('since the middle reload: Clorazepate dropped, Medazepam moved back to its own structure', async () => {
    const { body } = await api.get(`/api/v1/sources/104/changes?since=${release2Load}`);
    expect(body.added).to.deep.equal([]);
    expect(body.dropped).to.deep.equal([{ compoundId: 'Clorazepate', uci: ucis.Clorazepate }]);
    expect(body.moved).to.deep.equal([{ compoundId: 'Medazepam', fromUci: 3, toUci: 808 }]);
  });

  it('since the latest load: empty lists, until is that load', async () => {
    const { status, body } = await api.get(`/api/v1/sources/104/changes?since=${release3Load}`);
    expect(status).to.equal(200);
    expect(body).to.deep.include({ added: [], dropped: [], moved: [] });
    expect(body.until.loadId).to.equal(release3Load);
  });

  it('with Accept: application/x-ndjson, the net change across both reloads', async () => {
    const { status, text, headers } = await api.get(`/api/v1/sources/104/changes?since=${dumpLoad}`, {
      accept: 'application/x-ndjson',
    });
    expect(status).to.equal(200);
    expect(headers.get('content-type')).to.match(/^application\/x-ndjson/);
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    ).to.deep.equal([
      { change: 'dropped', compoundId: 'Chlordiazepoxide', uci: 16 },
      { change: 'dropped', compoundId: 'Delorazepam', uci: 80 },
      { change: 'dropped', compoundId: 'Estazolam', uci: 75 },
      { change: 'added', compoundId: 'Lorazepam', uci: ucis.Lorazepam },
      { change: 'added', compoundId: 'Meclonazepam', uci: ucis.Meclonazepam },
      { change: 'moved', compoundId: 'Nordazepam', fromUci: 13, toUci: ucis.Nordazepam },
    ]);
  });

  it("lists the loads of bzr_names newest first, the dump's reference table included", async () => {
    const { status, body } = await api.get('/api/v1/sources/104/loads');
    expect(status).to.equal(200);
    expect(body.response).to.equal('Success');
    expect(body.loads.map((l: { loadId: string }) => l.loadId)).to.deep.equal([release3Load, release2Load, dumpLoad]);
    expect(body.loads[1]).to.deep.include({
      status: 'done',
      file: release2,
      rowsRead: 24,
      rowsLoaded: 24,
      rowsRejected: 0,
      releaseNumber: '2',
    });
    expect(Object.keys(body.loads[1]).sort()).to.deep.equal([
      'ended',
      'file',
      'loadId',
      'releaseNumber',
      'rowsLoaded',
      'rowsRead',
      'rowsRejected',
      'started',
      'status',
    ]);
    expect(body.loads[2]).to.deep.include({ releaseNumber: null });
    const zinc = await api.get('/api/v1/sources/9/loads');
    expect(
      zinc.body.loads.map((l: { loadId: string }) => l.loadId),
      'ZINC was only in the dump',
    ).to.deep.equal([dumpLoad]);
  });

  it('an unknown source is a 404, for loads and changes', async () => {
    for (const path of ['/api/v1/sources/999/loads', `/api/v1/sources/999/changes?since=${dumpLoad}`]) {
      const { status, body } = await api.get(path);
      expect(status, path).to.equal(404);
      expect(body).to.deep.include({ response: 'Error', error: 'source 999 does not exist' });
    }
  });

  it('changes since an unknown load or a load of another source are a 404; without since a 400', async () => {
    const unknown = await api.get('/api/v1/sources/104/changes?since=20990101T000000-000000');
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.match(/there is no load "20990101T000000-000000"/);
    const other = await api.get(`/api/v1/sources/9/changes?since=${release2Load}`);
    expect(other.status).to.equal(404);
    expect(other.body.error).to.equal(`load ${release2Load} (source) did not load source 9 (it loaded source 104)`);
    const missing = await api.get('/api/v1/sources/104/changes');
    expect(missing.status).to.equal(400);
    expect(missing.body).to.deep.include({ response: 'Error', error: 'the field "since" is missing' });
  });

  it('a refused reload leaves no changes, and cannot be asked since', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chemxref-bzr-')), 'bzr-one-row.tsv');
    writeFileSync(file, readFileSync(release2, 'utf8').split('\n').slice(0, 2).join('\n'));
    const refused = await load(prefix, ['source', '104', file]).catch(
      (error) => (error as { summary: Record<string, unknown> }).summary,
    );
    expect(refused.status).to.equal('refused');
    await engine.client.indices.refresh({ index: engine.names.changes });
    const { count } = await engine.client.count({
      index: engine.names.changes,
      query: { term: { loadId: refused.loadId } },
    });
    expect(count).to.equal(0);
    const { status, body } = await api.get(`/api/v1/sources/104/changes?since=${refused.loadId}`);
    expect(status).to.equal(404);
    expect(body.error).to.match(/did not complete \(refused\)/);
    const latest = await api.get(`/api/v1/sources/104/changes?since=${release3Load}`);
    expect(latest.body.until.loadId, 'the refused load changed nothing').to.equal(release3Load);
  });

  it('a dry run records no changes', async () => {
    await engine.client.indices.refresh({ index: engine.names.changes });
    const before = (await engine.client.count({ index: engine.names.changes })).count;
    const summary = await load(prefix, ['source', '104', release2, '--dry-run']);
    expect(summary.status).to.equal('done');
    await engine.client.indices.refresh({ index: engine.names.changes });
    expect((await engine.client.count({ index: engine.names.changes })).count).to.equal(before);
  });

  it('since a load older than the recorded changes is a 410 naming the load to ask from', async () => {
    const record = (await loadRecord(engine, release2Load))!;
    const { changesRecorded: _recorded, ...older } = record;
    void _recorded;
    // As a load of a version that recorded no changes left its record.
    await saveLoadRecord(engine, older as LoadRecord);
    try {
      const { status, body } = await api.get(`/api/v1/sources/104/changes?since=${dumpLoad}`);
      expect(status).to.equal(410);
      expect(body.error).to.include(`ask since ${release2Load} or a later load`);
      const fromThere = await api.get(`/api/v1/sources/104/changes?since=${release2Load}`);
      expect(fromThere.status).to.equal(200);
    } finally {
      await saveLoadRecord(engine, record);
    }
  });

  it('npm run export -- changes 104 --since <load> writes the NDJSON answer to a file', async () => {
    const parsed = parseExportArguments(['changes', '104', '--since', release2Load]);
    expect(parsed).to.deep.equal({ command: 'changes', options: { sourceId: 104, since: release2Load, folder: '.' } });
    const folder = mkdtempSync(join(tmpdir(), 'chemxref-changes-'));
    const summary = await exportChanges(engine, { sourceId: 104, since: dumpLoad, folder });
    expect(summary).to.deep.include({ status: 'done', format: 'ndjson', added: 2, dropped: 3, moved: 1 });
    const { text } = await api.get(`/api/v1/sources/104/changes?since=${dumpLoad}`, { accept: 'application/x-ndjson' });
    expect(readFileSync(String(summary.file), 'utf8')).to.equal(text);
    expect(String(summary.file)).to.equal(join(folder, `changes-src104-since-${dumpLoad}.ndjson`));
    await exportChanges(engine, { sourceId: 104, since: 'no-such-load', folder }).then(
      () => expect.fail('an unknown load exported'),
      (error: Error) => expect(error.message).to.match(/there is no load "no-such-load"/),
    );
  });

  it(
    'a first load of a source records nothing (no change answer can start ' +
      'before it); retiring it records every id as dropped',
    async () => {
      const fresh = freshPrefix('changes-first');
      await load(fresh, ['sources', join(fixtureDump, 'source.tsv.gz')]);
      await load(fresh, ['structures', join(fixtureDump, 'structure.tsv.gz')]);
      const first = await load(fresh, ['source', '104', release2]);
      expect(first.changes).to.deep.equal({ added: 0, dropped: 0, moved: 0 });
      const retired = await load(fresh, ['remove-source', '104']);
      expect(retired.changes).to.deep.equal({ added: 0, dropped: 24, moved: 0 });
      const freshApi = await startApi(testConfig(fresh));
      try {
        const { body } = await freshApi.get(`/api/v1/sources/104/changes?since=${first.loadId}`);
        expect(body.added).to.deep.equal([]);
        expect(body.moved).to.deep.equal([]);
        expect(body.dropped.map((d: { compoundId: string }) => d.compoundId))
          .to.have.length(24)
          .and.include.members(['Diazepam', 'Medazepam']);
      } finally {
        await freshApi.stop();
      }
    },
  );

  it('the first dump records no change; a reference table reloaded later records what it put back', async () => {
    expect(dumpChanges, 'the first load of every source of reference.tsv.gz').to.deep.equal({
      added: 0,
      dropped: 0,
      moved: 0,
    });
    const again = await load(prefix, ['references', join(fixtureDump, 'reference.tsv.gz')]);
    expect(again.changes).to.deep.equal({ added: 3, dropped: 2, moved: 1 });
    const { body } = await api.get(`/api/v1/sources/104/changes?since=${release3Load}`);
    expect(body.until.loadId).to.equal(again.loadId);
    expect(body.added).to.deep.equal([
      { compoundId: 'Chlordiazepoxide', uci: 16 },
      { compoundId: 'Delorazepam', uci: 80 },
      { compoundId: 'Estazolam', uci: 75 },
    ]);
    expect(body.dropped).to.deep.equal([
      { compoundId: 'Lorazepam', uci: ucis.Lorazepam },
      { compoundId: 'Meclonazepam', uci: ucis.Meclonazepam },
    ]);
    expect(body.moved).to.deep.equal([{ compoundId: 'Nordazepam', fromUci: ucis.Nordazepam, toUci: 13 }]);
    const zinc = await api.get(`/api/v1/sources/9/changes?since=${dumpLoad}`);
    expect(zinc.body, 'ZINC is the same in both reference tables').to.deep.include({
      added: [],
      dropped: [],
      moved: [],
    });
  });
});
