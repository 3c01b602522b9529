/**
 * Issue 21: a release that would empty or gut a source is refused and changes nothing served; one
 * load per source at a time; what a load leaves when it is refused or killed is swept.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { LoadRecord, AssignmentDocument } from '../src/engine/documents';
import { Engine } from '../src/engine/client';
import { loadHistory, saveLoadRecord } from '../src/engine/loads';
import { currentReleaseIndex } from '../src/engine/schema';
import { fixtureDump, freshPrefix, load, loadFixture, testConfig } from './support/fixture';

function table(file: string): Record<string, string>[] {
  const [header, ...lines] = gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean);
  const columns = header.split('\t').map((c) => c.toLowerCase());
  return lines.map((line) => Object.fromEntries(line.split('\t').map((value, i) => [columns[i], value])));
}

const references = table(join(fixtureDump, 'reference.tsv.gz'));
const keyOfUci = new Map(table(join(fixtureDump, 'structure.tsv.gz')).map((s) => [s.uci, s.standardinchikey]));
/** ChEMBL's current ids in the fixture, as a curator's release: compound id and Standard InChIKey. */
const chemblRows = references
  .filter((r) => r.src_id === '1' && r.assigment === '1')
  .map((r) => `${r.src_compound_id}\t${keyOfUci.get(r.uci)}`);
const header = 'compound_id\tstandard_inchikey';

function releaseFile(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'chemxref-guard-')), name);
  writeFileSync(file, text);
  return file;
}

/** What a ChEMBL lookup serves: every assignment of source 1, in order. */
async function served(engine: Engine): Promise<string[]> {
  const result = await engine.client.search<AssignmentDocument>({
    index: engine.names.assignmentsOf(1),
    size: 10_000,
    sort: [{ compoundId: 'asc' }, { uci: 'asc' }],
  });
  return result.hits.hits.map((hit) => `${hit._source!.compoundId}:${hit._source!.uci}:${hit._source!.assignment}`);
}

async function refusal(work: Promise<unknown>): Promise<Record<string, unknown>> {
  const error = await work.then(
    () => undefined,
    (e: Error & { summary?: Record<string, unknown> }) => e,
  );
  expect(error, 'the load should have been refused').to.be.instanceOf(Error);
  return error!.summary!;
}

describe('release guard, load locks and sweeps (issue 21)', function () {
  this.timeout(300_000);
  let prefix: string;
  let engine: Engine;
  let servedBefore: string[];
  let releaseBefore: string | undefined;
  let structuresBefore: number;

  before(async () => {
    prefix = await loadFixture(freshPrefix('guard'));
    engine = new Engine(testConfig(prefix));
    servedBefore = await served(engine);
    releaseBefore = await currentReleaseIndex(engine, 1);
    structuresBefore = (await engine.client.count({ index: engine.names.compounds })).count;
  });
  after(async () => {
    await engine.close();
  });

  /** Nothing served changed: same ChEMBL assignments, same release index, no new structure, no leftover index. */
  async function expectNothingChanged(): Promise<void> {
    expect(await served(engine)).to.deep.equal(servedBefore);
    expect(await currentReleaseIndex(engine, 1)).to.equal(releaseBefore);
    await engine.client.indices.refresh({ index: engine.names.compounds });
    expect((await engine.client.count({ index: engine.names.compounds })).count).to.equal(structuresBefore);
    const indices = Object.keys(
      await engine.client.indices.get({ index: `${prefix}-assignments-1-*` }, { ignore: [404] }),
    );
    expect(
      indices.filter((index) => index !== releaseBefore),
      'release indices left behind',
    ).to.deep.equal([]);
  }

  it(
    'a header-only ChEMBL release is refused: exit 3, the summary says ' + 'why, every ChEMBL id still answers',
    async () => {
      expect(chemblRows.length).to.be.greaterThan(100);
      const file = releaseFile('chembl-empty.tsv', `${header}\n`);
      const result = spawnSync(
        process.execPath,
        [
          '--require',
          require.resolve('tsx/cjs'),
          join(__dirname, '..', 'loaders', 'cli.ts'),
          'source',
          '1',
          file,
          '--no-progress',
        ],
        {
          env: { ...process.env, ES_INDEX_PREFIX: prefix },
          encoding: 'utf8',
        },
      );
      expect(result.status, result.stderr).to.equal(3);
      const summary = JSON.parse(result.stdout.trim().split('\n').pop()!);
      expect(summary.status).to.equal('refused');
      expect(summary.refused).to.deep.equal([
        'the release holds no rows',
        `source 1 would drop ${chemblRows.length} of its ${chemblRows.length} ` +
          `current ids (100 %, more than MAX_RELEASE_DROP 50 %)`,
      ]);
      expect(result.stderr).to.match(
        /^load refused: release refused, nothing published: the release holds no rows; .*--allow-shrink/m,
      );
      await expectNothingChanged();
      const [record] = await loadHistory(engine, 1);
      expect(record.status).to.equal('refused');
    },
  );

  it('a plain TSV release cut in half (mid-line) is refused for the ids it would drop', async () => {
    const whole = `${header}\n${chemblRows.join('\n')}\n`;
    const file = releaseFile('chembl-half.tsv', whole.slice(0, Math.floor(whole.length / 2)));
    const summary = await refusal(load(prefix, ['source', '1', file]));
    expect(summary.status).to.equal('refused');
    expect(summary.refused).to.have.length(1);
    expect((summary.refused as string[])[0]).to.match(
      /^source 1 would drop [0-9]+ of its [0-9]+ current ids \([0-9.]+ %, more than MAX_RELEASE_DROP 50 %\)$/,
    );
    expect(summary.dropped as number).to.be.greaterThan(chemblRows.length / 2 - 2);
    await expectNothingChanged();
  });

  it(
    'a release whose rows are all rejected is refused, and so is one ' + 'rejecting more than MAX_REJECT_RATIO',
    async () => {
      const broken = releaseFile(
        'chembl-broken.tsv',
        `${header}\n${chemblRows.map((row) => row.replace(/\t.*$/, '\tNOT-A-KEY')).join('\n')}\n`,
      );
      const all = await refusal(load(prefix, ['source', '1', broken]));
      expect(all.refused as string[]).to.include(`the release loads 0 of its ${chemblRows.length} rows`);
      // Every ChEMBL id, plus as many broken rows again as a third of them: a quarter of the rows rejected.
      const third = Math.ceil(chemblRows.length / 3);
      const rows = [
        ...chemblRows,
        ...chemblRows.slice(0, third).map((row) => row.replace(/^[^\t]*\t.*$/, 'CHEMBL-BROKEN\tNOT-A-KEY')),
      ];
      const some = await refusal(
        load(prefix, ['source', '1', releaseFile('chembl-rejects.tsv', `${header}\n${rows.join('\n')}\n`)]),
      );
      expect(some.refused).to.deep.equal([
        `${third} of ${rows.length} rows rejected ` +
          `(${Math.round((third / rows.length) * 1000) / 10} %, more than ` +
          `MAX_REJECT_RATIO 20 %)`,
      ]);
      await expectNothingChanged();
    },
  );

  it('a dry run of the halved release says it would be refused and writes nothing', async () => {
    const file = releaseFile(
      'chembl-half-dry.tsv',
      `${header}\n${chemblRows.slice(0, Math.floor(chemblRows.length / 3)).join('\n')}\n`,
    );
    const summary = await refusal(load(prefix, ['source', '1', file, '--dry-run']));
    expect(summary).to.include({ status: 'refused', dryRun: true });
    expect(summary.dropped).to.equal(chemblRows.length - Math.floor(chemblRows.length / 3));
    await expectNothingChanged();
  });

  it('a reference table cut short is refused for each source it would gut', async () => {
    const lines = references.filter((r) => r.src_id === '1' || r.src_id === '22');
    const kept = lines.filter((r) => r.src_id === '22' || Number(r.uci) % 4 === 0);
    const file = releaseFile(
      'reference.tsv',
      `UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\n${kept.map((r) => `${r.uci}\t${r.src_id}\t${r.src_compound_id}\t${r.assigment}`).join('\n')}\n`,
    );
    const summary = await refusal(load(prefix, ['references', file]));
    expect(summary.refused).to.have.length(1);
    expect((summary.refused as string[])[0]).to.match(/^source 1 would drop/);
    await expectNothingChanged();
  });

  it(
    'rows with too few or too many columns are rejected with their reason; ' + 'a repeated row is loaded once',
    async () => {
      const [first, second, ...rest] = chemblRows;
      const file = releaseFile(
        'chembl-columns.tsv',
        `${header}\n${first}\n${first}\n${second}\textra\n${rest[0].split('\t')[0]}\n${rest.join('\n')}\n`,
      );
      const summary = await load(prefix, ['source', '1', file]);
      expect(summary.rejectedByReason).to.deep.equal({ 'wrong-column-count': 2 });
      expect(summary.rowsRead).to.equal(chemblRows.length + 2);
      expect(summary.rowsLoaded, 'the repeated row is one assignment').to.equal(chemblRows.length - 1);
      expect(summary.repeatedRows).to.equal(1);
      const rejects = readFileSync(summary.rejectsFile as string, 'utf8')
        .split('\n')
        .filter(Boolean)
        .slice(1)
        .map((line) => line.split('\t').slice(0, 3).join('|'));
      expect(rejects).to.deep.equal([
        '4|wrong-column-count|the row has 3 columns, the header 2',
        '5|wrong-column-count|the row has 1 column, the header 2',
      ]);
      // The two ids rejected for their columns are dropped, and obsolete now; the rest is served as before.
      expect((await served(engine)).filter((row) => row.endsWith(':1'))).to.have.length(chemblRows.length - 1);
      servedBefore = await served(engine);
      releaseBefore = await currentReleaseIndex(engine, 1);
    },
  );

  it('--allow-shrink publishes a halved release when the curator means it', async () => {
    const half = chemblRows.slice(0, Math.floor(chemblRows.length / 2));
    const summary = await load(prefix, [
      'source',
      '1',
      releaseFile('chembl-shrink.tsv', `${header}\n${half.join('\n')}\n`),
      '--allow-shrink',
    ]);
    expect(summary.status).to.equal('done');
    expect(summary.allowedShrink as string[]).to.have.length(1);
    expect((await served(engine)).filter((row) => row.endsWith(':1'))).to.have.length(half.length);
    // Back to the whole release (it grows: nothing to refuse).
    await load(prefix, ['source', '1', releaseFile('chembl-whole.tsv', `${header}\n${chemblRows.join('\n')}\n`)]);
    expect((await served(engine)).filter((row) => row.endsWith(':1'))).to.have.length(chemblRows.length);
  });

  it(
    'a second load of the same source fails at once, naming the load that ' +
      'holds it; with --wait it waits and then loads',
    async () => {
      const file = releaseFile('chembl-again.tsv', `${header}\n${chemblRows.join('\n')}\n`);
      const results = await Promise.allSettled([
        load(prefix, ['source', '1', file]),
        load(prefix, ['source', '1', file]),
      ]);
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      expect(failed).to.have.length(1);
      expect(failed[0].reason.message).to.match(
        /^source 1 is being loaded by load [0-9T]+-[0-9a-f]+ \(source\) since [0-9-]+T[0-9:.]+Z$/,
      );
      const first = load(prefix, ['source', '1', file]);
      // The second starts once the first holds the lock.
      while (
        !(await engine.client.get({ index: engine.names.meta, id: 'lock-load-source-1' }, { ignore: [404] })).found
      )
        await new Promise((done) => setTimeout(done, 20));
      const waited = await Promise.all([first, load(prefix, ['source', '1', file, '--wait'])]);
      expect(waited.map((summary) => summary.status)).to.deep.equal(['done', 'done']);
      expect(
        Date.parse((await loadHistory(engine, 1))[0].started),
        'the waiting load began before the first ended',
      ).to.be.lessThan(Date.parse((await loadHistory(engine, 2))[1].ended!));
      // A reference table may replace any source: it waits for (or is refused by) a load of one.
      const history = await loadHistory(engine, 10);
      expect(history.filter((record) => record.status === 'running')).to.deep.equal([]);
    },
  );

  it(
    '`npm run load -- doctor` marks a load silent for long as failed, ' + 'frees its lock and sweeps its index',
    async () => {
      const loadId = '20260101T000000-dead01';
      const index = `${prefix}-assignments-1-1`;
      await engine.client.indices.create({ index });
      const stale: LoadRecord = {
        kind: 'load',
        loadId,
        command: 'source',
        file: 'elsewhere.tsv',
        sourceId: 1,
        index,
        status: 'running',
        dryRun: false,
        rowsRead: 10,
        rowsLoaded: 0,
        rowsRejected: 0,
        rejectsByReason: {},
        started: '2026-01-01T00:00:00.000Z',
        heartbeat: '2026-01-01T00:00:05.000Z',
        ended: null,
        seconds: null,
        host: 'another-machine',
        pid: 1,
      };
      await saveLoadRecord(engine, stale);
      await engine.client.index({
        index: engine.names.meta,
        id: 'lock-load-source-1',
        document: { kind: 'load-lock', key: 'source-1', loadId, command: 'source', started: stale.started },
        refresh: true,
      });
      const report = await load(prefix, ['doctor']);
      expect(report.interruptedLoads).to.deep.equal([
        { loadId, command: 'source', why: 'no heartbeat since 2026-01-01T00:00:05.000Z' },
      ]);
      expect(report.releaseIndicesRemoved).to.deep.equal([index]);
      expect(
        (await engine.client.get({ index: engine.names.meta, id: 'lock-load-source-1' }, { ignore: [404] })).found,
      ).to.equal(false);
      const record = (await loadHistory(engine, 100)).find((r) => r.loadId === loadId)!;
      expect(record.status).to.equal('failed');
      expect(record.message).to.equal('interrupted: no heartbeat since 2026-01-01T00:00:05.000Z');
    },
  );
});
