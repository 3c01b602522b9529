import { join } from 'node:path';
import { expect } from 'chai';
import { parseArguments, runCommand, UsageError } from '../loaders/cli';
import { Engine } from '../src/engine/client';
import { loadHistory } from '../src/engine/loads';
import type { RejectDocument } from '../src/engine/rejects';
import { sourceById } from '../src/engine/sources';
import { startApi } from './support/api';
import { fixturesDir, freshPrefix, load, loadFixture, testConfig } from './support/fixture';

const rules = join(fixturesDir, 'rules');
const bzrRelease = join(fixturesDir, 'releases', 'bzr-release-2.tsv');

async function rejectsIn(engine: Engine, index: string): Promise<RejectDocument[]> {
  const result = await engine.client.search<RejectDocument>(
    { index, size: 1_000, sort: [{ line: 'asc' }] },
    { ignore: [404] },
  );
  return (result.hits?.hits ?? []).map((hit) => hit._source!);
}

describe('what curators look at lives in Elasticsearch', function () {
  this.timeout(120_000);

  describe('rejected rows', () => {
    let prefix: string;
    let engine: Engine;
    before(async () => {
      prefix = await loadFixture(freshPrefix('rejects-index'));
      engine = new Engine(testConfig(prefix));
    });
    after(() => engine.close());

    it("a load's rejected rows are in the rejects index with their reason, line, source and load id", async () => {
      await load(prefix, ['structures', join(rules, 'structure.tsv')]);
      const summary = await load(prefix, ['references', join(rules, 'reference.tsv'), '--allow-shrink']);
      expect(summary.rowsRejected).to.equal(4);
      expect(summary.rejectsIndexed).to.equal(4);
      const rejects = await rejectsIn(engine, engine.names.rejectsOfLastLoad);
      expect(rejects.map((r) => `${r.line}:${r.reason}:${r.sourceId}`)).to.deep.equal([
        '3:unknown-uci:1',
        '4:unknown-source:999',
        '5:no-compound-id:1',
        '6:bad-assignment:1',
      ]);
      for (const reject of rejects) {
        expect(reject).to.include({
          loadId: summary.loadId,
          command: 'references',
          file: join(rules, 'reference.tsv'),
        });
        expect(reject.message).to.be.a('string').and.not.equal('');
        expect(Date.parse(reject.time)).to.be.closeTo(Date.now(), 120_000);
      }
      expect(rejects[0].row).to.equal('777777\t1\tCHEMBL25\t1\tunknown-uci');
      const { count } = await engine.client.count({
        index: engine.names.rejects,
        query: { term: { loadId: summary.loadId } },
      });
      expect(count, 'the all-loads alias holds them too').to.equal(4);
    });

    it(
      'the rejects of the last load that rejected rows are behind ' + "rejects-last; every load's behind rejects",
      async () => {
        const first = await load(prefix, ['structures', join(rules, 'structure.tsv')]);
        const second = await load(prefix, ['structures', join(rules, 'structure.tsv')]);
        const last = await rejectsIn(engine, engine.names.rejectsOfLastLoad);
        expect(new Set(last.map((r) => r.loadId))).to.deep.equal(new Set([second.loadId]));
        expect(last).to.have.length(Number(second.rowsRejected));
        expect(
          last.every((r) => r.sourceId === null),
          'a structure row names no source',
        ).to.equal(true);
        const { count } = await engine.client.count({
          index: engine.names.rejects,
          query: { terms: { loadId: [first.loadId, second.loadId] } },
        });
        expect(count).to.equal(Number(first.rowsRejected) + Number(second.rowsRejected));
      },
    );

    it(
      'indexes the first REJECTS_INDEXED rows of a load and keeps the ' +
        'rejects of the last REJECTS_KEPT_LOADS loads; the count and the file ' +
        'stay whole',
      async () => {
        const bounded = testConfig(prefix, { REJECTS_INDEXED: '3', REJECTS_KEPT_LOADS: '2' });
        const run = (): Promise<Record<string, unknown>> =>
          runCommand(
            parseArguments([
              'structures',
              join(rules, 'structure.tsv'),
              '--no-fingerprints',
              '--no-progress',
              '--rejects',
              join(process.env.TMPDIR!, `bounded-${Date.now()}.tsv`),
            ]),
            bounded,
          );
        const summaries = [await run(), await run(), await run()];
        const last = summaries[2];
        expect(last.rowsRejected).to.equal(8);
        expect(last.rejectsIndexed).to.equal(3);
        expect(await rejectsIn(engine, engine.names.rejectsOfLastLoad)).to.have.length(3);
        const kept = Object.keys(await engine.client.indices.get({ index: engine.names.rejectsOfEveryLoad })).sort();
        expect(kept).to.deep.equal(
          [engine.names.rejectsOf(String(summaries[1].loadId)), engine.names.rejectsOf(String(last.loadId))].sort(),
        );
      },
    );

    it('a dry run indexes no rejected row', async () => {
      const before = (await engine.client.count({ index: engine.names.rejects })).count;
      const summary = await load(prefix, ['structures', join(rules, 'structure.tsv'), '--dry-run']);
      expect(summary.rowsRejected).to.equal(8);
      expect(summary).to.not.have.property('rejectsIndexed');
      expect((await engine.client.count({ index: engine.names.rejects })).count).to.equal(before);
    });
  });

  describe('release metadata of a source reload', () => {
    let prefix: string;
    let engine: Engine;
    before(async () => {
      prefix = await loadFixture(freshPrefix('release-names'));
      engine = new Engine(testConfig(prefix));
    });
    after(() => engine.close());

    it(
      "without --release the release number counts up from the dump's and is " +
        'dated at the load, in the load record too',
      async () => {
        expect((await sourceById(engine, 104))!.srcReleaseNumber).to.equal('1');
        const began = Date.now();
        const summary = await load(prefix, ['source', '104', bzrRelease]);
        const source = (await sourceById(engine, 104))!;
        expect(source.srcReleaseNumber).to.equal('2');
        expect(Date.parse(source.srcReleaseDate!)).to.be.within(began - 1_000, Date.now());
        expect(summary.release).to.deep.equal({ number: '2', date: source.srcReleaseDate });
        const [record] = await loadHistory(engine, 1);
        expect(record).to.include({ loadId: summary.loadId, releaseNumber: '2', releaseDate: source.srcReleaseDate });
        expect(record.sourceIds).to.deep.equal([104]);
      },
    );

    it(
      '--release and --release-date name the release, shown by v1 /sources ' + 'and the legacy src_ids and sources',
      async () => {
        await load(prefix, [
          'source',
          '104',
          bzrRelease,
          '--release',
          '35',
          '--release-date',
          '2025-01-10',
          '--allow-shrink',
        ]);
        const api = await startApi(testConfig(prefix));
        try {
          const v1 = (await api.get('/api/v1/sources/104')).body;
          expect(v1.sources[0]).to.include({ srcReleaseNumber: 35 });
          expect(v1.sources[0].srcReleaseDate).to.match(/^2025-01-10/);
          const legacy = (await api.get('/rest/sources/104')).body[0];
          expect(legacy).to.include({ src_release_number: '35' });
          expect(legacy.src_release_date).to.match(/^2025-01-10/);
        } finally {
          await api.stop();
        }
      },
    );

    it(
      'a source whose last release is not a whole number needs --release, ' + 'and says so before it writes anything',
      async () => {
        await load(prefix, ['source', '104', bzrRelease, '--release', '2025_01']);
        const loadsBefore = (await loadHistory(engine, 100)).length;
        const error = await load(prefix, ['source', '104', bzrRelease]).then(
          () => undefined,
          (e: Error) => e,
        );
        expect(error?.message).to.equal(
          'source 104\'s last release is "2025_01", which does not count up: ' +
            'name this one with --release (and --release-date)',
        );
        expect((await sourceById(engine, 104))!.srcReleaseNumber).to.equal('2025_01');
        expect((await loadHistory(engine, 100)).length, "only the failed load's own record").to.equal(loadsBefore + 1);
      },
    );

    it('a bad --release-date, or --release given to another command, is a usage error', () => {
      expect(() => parseArguments(['source', '104', bzrRelease, '--release-date', '2025-02-30'])).to.throw(
        UsageError,
        '--release-date "2025-02-30" is not a date written YYYY-MM-DD (e.g. 2025-01-10)',
      );
      expect(() => parseArguments(['source', '104', bzrRelease, '--release', ''])).to.throw(
        UsageError,
        'is not a release name',
      );
      expect(() => parseArguments(['dump', 'folder', '--release', '35'])).to.throw(
        UsageError,
        'they go with `source <sourceId> <file>`',
      );
    });
  });
});
