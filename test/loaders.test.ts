import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { Engine } from '../src/engine/client';
import { currentReleaseIndex, currentReleaseIndices } from '../src/engine/schema';
import { writeFingerprints } from '../src/engine/fingerprints';
import { allSources } from '../src/engine/sources';
import { loadHistory } from '../src/engine/loads';
import type { AssignmentDocument } from '../src/engine/documents';
import { fixtureDump, fixturesDir, freshPrefix, load, loadFixture, testConfig } from './support/fixture';
import { batchSize as structureBatchRows } from '../loaders/structures';
import { parseArguments, runCommand, UsageError } from '../loaders/cli';

function table(file: string): Record<string, string>[] {
  const text = file.endsWith('.gz') ? gunzipSync(readFileSync(file)).toString('utf8') : readFileSync(file, 'utf8');
  const [header, ...lines] = text.split('\n').filter(Boolean);
  const columns = header.split('\t').map((c) => c.toLowerCase());
  return lines.map((line) => Object.fromEntries(line.split('\t').map((value, i) => [columns[i], value])));
}

async function assignmentsOf(engine: Engine, sourceId: number): Promise<AssignmentDocument[]> {
  const result = await engine.client.search<AssignmentDocument>({
    index: engine.names.assignmentsOf(sourceId),
    size: 10_000,
    sort: [{ compoundId: 'asc' }, { uci: 'asc' }],
  });
  return result.hits.hits.map((hit) => hit._source!);
}

async function uciOfKey(engine: Engine, key: string): Promise<number | undefined> {
  const result = await engine.client.get<{ uci: number }>(
    { index: engine.names.compounds, id: key },
    { ignore: [404] },
  );
  return result.found ? result._source!.uci : undefined;
}

describe('npm run load', function () {
  this.timeout(300_000);
  const references = table(join(fixtureDump, 'reference.tsv.gz'));
  const structures = table(join(fixtureDump, 'structure.tsv.gz'));
  const engines: Engine[] = [];
  const engineFor = (prefix: string): Engine => {
    const engine = new Engine(testConfig(prefix));
    engines.push(engine);
    return engine;
  };
  after(async () => {
    await Promise.all(engines.map((e) => e.close()));
  });

  describe('dump of the fixture', () => {
    let engine: Engine;
    let summary: Record<string, unknown>;
    before(async () => {
      const prefix = freshPrefix('load-dump');
      engine = engineFor(prefix);
      summary = await load(prefix, ['dump', fixtureDump]);
    });

    it('reads and loads every row of the three tables, rejecting none', () => {
      expect(summary.rowsRejected).to.equal(0);
      expect(summary.rowsRead).to.equal(7 + structures.length + references.length);
      expect(summary.rowsLoaded).to.equal(summary.rowsRead);
    });

    it('with --no-fingerprints, says how many structures it left without fingerprints, and computed none', async () => {
      expect(summary.structuresWithoutFingerprints).to.equal(structures.length);
      expect(summary).not.to.have.property('fingerprints');
      expect((await engine.client.count({ index: engine.names.fingerprints })).count).to.equal(0);
    });

    it('serves every source with the assignments and the exact UCI count the fixture gives', async () => {
      const sources = await allSources(engine);
      expect(sources.map((s) => s.sourceID)).to.deep.equal([1, 9, 22, 101, 102, 103, 104]);
      for (const source of sources) {
        const rows = references.filter((r) => Number(r.src_id) === source.sourceID);
        const current = new Set(rows.filter((r) => r.assigment === '1').map((r) => r.uci));
        expect(source.UCICount, `UCICount of ${source.name}`).to.equal(current.size);
        const assignments = await assignmentsOf(engine, source.sourceID);
        expect(assignments.length, `assignments of ${source.name}`).to.equal(rows.length);
      }
    });

    it('keeps the UCIs of the dump and carries the InChIKey on every assignment', async () => {
      const keyOfUci = new Map(structures.map((s) => [Number(s.uci), s.standardinchikey]));
      const chembl = await assignmentsOf(engine, 1);
      const paracetamol = chembl.find((x) => x.compoundId === 'CHEMBL112')!;
      expect(paracetamol.standardInchiKey).to.equal('RZVAJINKPMORJF-UHFFFAOYSA-N');
      expect(keyOfUci.get(paracetamol.uci)).to.equal('RZVAJINKPMORJF-UHFFFAOYSA-N');
      expect(await uciOfKey(engine, 'RZVAJINKPMORJF-UHFFFAOYSA-N')).to.equal(paracetamol.uci);
    });

    it('keeps PubChem 100976278 on both of its structures', async () => {
      const pubchem = (await assignmentsOf(engine, 22)).filter((x) => x.compoundId === '100976278');
      expect(pubchem.map((x) => x.standardInchiKey).sort()).to.deep.equal([
        'FOXHEVJOMXBFNJ-OJDZSJEKSA-O',
        'PMPKIFXHVHQBCN-OJDZSJEKSA-P',
      ]);
    });

    it('keeps the obsolete NCI assignments as assignment 0', async () => {
      const obsolete = (await assignmentsOf(engine, 101))
        .filter((x) => x.assignment === 0)
        .map((x) => x.compoundId)
        .sort();
      expect(obsolete).to.deep.equal(
        references
          .filter((r) => r.assigment === '0')
          .map((r) => r.src_compound_id)
          .sort(),
      );
      expect(obsolete).to.have.length(6);
    });

    it('serves every source of the dump from one release index', async () => {
      const releases = await currentReleaseIndices(engine);
      expect([...releases.keys()].sort((a, b) => a - b)).to.deep.equal([1, 9, 22, 101, 102, 103, 104]);
      expect(new Set(releases.values()).size).to.equal(1);
      const { count } = await engine.client.count({ index: engine.names.assignments });
      expect(count).to.equal(references.length);
      const [index] = releases.values();
      const settings = await engine.client.indices.getSettings({ index, name: 'index.translog.durability' });
      expect(settings[index].settings?.index?.translog?.durability, 'synced per request once published').to.equal(
        'request',
      );
    });

    it('lists the loads in the history, most recent first', async () => {
      const history = await load(engine.names.prefix, ['history']);
      const commands = (history.loads as { command: string; status: string }[])
        .slice(0, 3)
        .map((l) => `${l.command}:${l.status}`);
      expect(commands).to.deep.equal(['references:done', 'structures:done', 'sources:done']);
    });
  });

  describe('a curator reloads bzr_names (104) from its own release', () => {
    const expected = JSON.parse(readFileSync(join(fixturesDir, 'releases', 'expected.json'), 'utf8'));
    for (const format of ['tsv', 'csv', 'json', 'jsonl', 'smiles.tsv', 'sdf']) {
      it(`from ${format}: finds the new ids, obsoletes the removed and re-pointed ones, keeps known UCIs`, async () => {
        const prefix = await loadFixture(freshPrefix(`reload-${format}`));
        const engine = engineFor(prefix);
        const before = await assignmentsOf(engine, 104);
        const highestBefore = Math.max(...structures.map((s) => Number(s.uci)));
        const diazepamUci = before.find((x) => x.compoundId === 'Diazepam')!.uci;
        const oldIndex = await currentReleaseIndex(engine, 104);

        const summary = await load(prefix, ['source', '104', join(fixturesDir, 'releases', `bzr-release-2.${format}`)]);
        expect(summary.rowsRejected).to.equal(0);
        expect(summary.rowsLoaded).to.equal(expected.rows);
        const after = await assignmentsOf(engine, 104);
        const current = after.filter((x) => x.assignment === 1);
        const obsolete = after.filter((x) => x.assignment === 0);
        expect(current).to.have.length(expected.rows);
        for (const added of expected.added) {
          const assignment = current.find((x) => x.compoundId === added.id)!;
          expect(assignment.standardInchiKey).to.equal(added.key);
          expect(assignment.uci, `new UCI of ${added.id}`).to.be.above(highestBefore);
        }
        expect(obsolete.map((x) => x.compoundId).sort()).to.deep.equal(
          [...expected.removed, 'Medazepam', 'Nordazepam'].sort(),
        );
        const medazepam = after.filter((x) => x.compoundId === 'Medazepam');
        expect(
          medazepam.find((x) => x.assignment === 1)!.uci,
          'Medazepam now on the structure of Diazepam, UCI unchanged',
        ).to.equal(diazepamUci);
        expect(medazepam.find((x) => x.assignment === 0)!.standardInchiKey).to.equal(expected.repointedToKnown.from);
        const nordazepam = after.filter((x) => x.compoundId === 'Nordazepam');
        expect(nordazepam.find((x) => x.assignment === 1)!.standardInchiKey).to.equal(expected.repointedToNew.to);
        expect(nordazepam.find((x) => x.assignment === 1)!.uci).to.be.above(highestBefore);
        for (const kept of before.filter(
          (x) => !expected.removed.includes(x.compoundId) && !['Medazepam', 'Nordazepam'].includes(x.compoundId),
        )) {
          expect(current.find((x) => x.compoundId === kept.compoundId)!.uci, `UCI of ${kept.compoundId}`).to.equal(
            kept.uci,
          );
        }
        const sources = await allSources(engine);
        expect(sources.find((s) => s.sourceID === 104)!.UCICount).to.equal(new Set(current.map((x) => x.uci)).size);
        const newIndex = await currentReleaseIndex(engine, 104);
        expect(newIndex).to.not.equal(oldIndex);
        const { count } = await engine.client.count({
          index: engine.names.assignments,
          query: { term: { sourceId: 104 } },
        });
        expect(count, 'the all-sources alias shows the new release only').to.equal(after.length);
        expect(await currentReleaseIndex(engine, 1), 'the dump index still serves the other sources').to.equal(
          oldIndex,
        );
      });
    }
  });

  describe('loading rules', () => {
    let prefix: string;
    let engine: Engine;
    before(async () => {
      prefix = await loadFixture(freshPrefix('rules'));
      engine = engineFor(prefix);
    });

    it('rejects each structure row that breaks a rule, with its reason, and loads the others', async () => {
      const summary = await load(prefix, ['structures', join(fixturesDir, 'rules', 'structure.tsv')]);
      expect(summary.rejectedByReason).to.deep.equal({
        'inchi-key-mismatch': 1,
        'no-structure': 1,
        'unknown-key-without-inchi': 1,
        'non-standard-inchi': 1,
        'invalid-inchi': 1,
        'inchi-too-long': 1,
        'bad-uci': 1,
        'uci-conflict': 1,
      });
      expect(summary.rowsLoaded).to.equal(2);
      expect(await uciOfKey(engine, 'NARVIWMVBMUEOG-UHFFFAOYSA-N'), 'prop-1-en-2-ol loaded with its UCI').to.equal(
        9001,
      );
      const rejects = readFileSync(summary.rejectsFile as string, 'utf8')
        .split('\n')
        .filter(Boolean)
        .slice(1);
      expect(rejects.map((line) => line.split('\t').slice(0, 2).join(':'))).to.include.members([
        '3:inchi-key-mismatch',
        '6:non-standard-inchi',
        '8:inchi-too-long',
      ]);
    });

    it('rejects each reference row that breaks a rule and publishes the rest', async () => {
      await load(prefix, ['structures', join(fixturesDir, 'rules', 'structure.tsv')]);
      // Four rules broken in five rows: far past MAX_REJECT_RATIO, so the curator forces it.
      const summary = await load(prefix, ['references', join(fixturesDir, 'rules', 'reference.tsv'), '--allow-shrink']);
      expect(summary.rejectedByReason).to.deep.equal({
        'unknown-uci': 1,
        'unknown-source': 1,
        'no-compound-id': 1,
        'bad-assignment': 1,
      });
      const chembl = await assignmentsOf(engine, 1);
      expect(chembl.map((x) => `${x.compoundId}:${x.uci}`)).to.deep.equal(['CHEMBL545:9001']);
    });

    it('rejects a UCI given to a second structure thousands of lines later, in another batch', async () => {
      // Real structures of the demo dump, with fresh UCIs; the last row reuses the first row's UCI.
      const demo = table(join(__dirname, '..', 'examples', 'demo', 'structure.tsv.gz')).slice(
        0,
        structureBatchRows + 500,
      );
      const rows = demo.map((row, i) => `${20_000 + i}\t${row.standardinchi}\t${row.standardinchikey}`);
      rows[rows.length - 1] =
        `20000\t${demo[demo.length - 1].standardinchi}\t${demo[demo.length - 1].standardinchikey}`;
      const file = join(mkdtempSync(join(tmpdir(), 'chemxref-uci-twice-')), 'structure.tsv');
      writeFileSync(file, `UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n${rows.join('\n')}\n`);
      const fresh = freshPrefix('uci-twice');
      const summary = await load(fresh, ['structures', file]);
      expect(summary.rejectedByReason).to.deep.equal({ 'uci-conflict': 1 });
      const twice = engineFor(fresh);
      expect(await uciOfKey(twice, demo[0].standardinchikey)).to.equal(20_000);
      expect(await uciOfKey(twice, demo[demo.length - 1].standardinchikey)).to.equal(undefined);
    });

    it(
      'after a batch of new structures, finds known ones by their refused ' +
        'creation: same UCI loaded, another UCI rejected',
      async () => {
        const demo = table(join(__dirname, '..', 'examples', 'demo', 'structure.tsv.gz')).slice(
          0,
          2_500 + structureBatchRows,
        );
        const line = (row: Record<string, string>, uci: number): string =>
          `${uci}\t${row.standardinchi}\t${row.standardinchikey}`;
        const folder = mkdtempSync(join(tmpdir(), 'chemxref-known-later-'));
        const write = (name: string, rows: string[]): string => {
          writeFileSync(join(folder, name), `UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n${rows.join('\n')}\n`);
          return join(folder, name);
        };
        const fresh = freshPrefix('known-later');
        await load(fresh, [
          'structures',
          write(
            'first.tsv',
            demo.slice(0, 2_500).map((row, i) => line(row, 30_000 + i)),
          ),
        ]);
        // A batch of new structures first (the key lookups stop), then ten known ones, one of them with another UCI.
        const second = [
          ...demo.slice(2_500).map((row, i) => line(row, 32_500 + i)),
          ...demo.slice(0, 10).map((row, i) => line(row, i === 9 ? 39_999 : 30_000 + i)),
        ];
        const summary = await load(fresh, ['structures', write('second.tsv', second)]);
        expect(summary.rejectedByReason).to.deep.equal({ 'uci-conflict': 1 });
        expect(summary.rowsLoaded).to.equal(structureBatchRows + 9);
        const known = engineFor(fresh);
        expect(await uciOfKey(known, demo[9].standardinchikey), 'the known key keeps its UCI').to.equal(30_009);
        expect(await uciOfKey(known, demo.at(-1)!.standardinchikey)).to.equal(32_500 + structureBatchRows - 1);
      },
    );

    it('refuses a file with the wrong header and changes nothing', async () => {
      const before = await currentReleaseIndex(engine, 9);
      for (const command of ['structures', 'references', 'sources']) {
        let failure: Error | undefined;
        try {
          await load(prefix, [command, join(fixturesDir, 'rules', 'wrong-header.tsv')]);
        } catch (error) {
          failure = error as Error;
        }
        expect(failure?.message, command).to.match(/needs .*column/);
      }
      let failure: Error | undefined;
      try {
        await load(prefix, ['source', '9', join(fixturesDir, 'rules', 'wrong-header.tsv')]);
      } catch (error) {
        failure = error as Error;
      }
      expect(failure?.message).to.match(/compound id column/);
      expect(await currentReleaseIndex(engine, 9)).to.equal(before);
    });

    it('fails a structure table whose gzip data breaks off, and says so', async () => {
      const whole = readFileSync(join(fixtureDump, 'structure.tsv.gz'));
      const file = join(mkdtempSync(join(tmpdir(), 'chemxref-truncated-')), 'structure.tsv.gz');
      writeFileSync(file, whole.subarray(0, Math.floor(whole.length / 2)));
      let failure: Error | undefined;
      try {
        await load(freshPrefix('truncated'), ['structures', file, '--dry-run']);
      } catch (error) {
        failure = error as Error;
      }
      expect(failure?.message).to.match(/gzip data is truncated or corrupt/);
    });

    it('--dry-run validates and counts but writes nothing', async () => {
      const dryPrefix = freshPrefix('dry-run');
      const summary = await load(dryPrefix, ['dump', fixtureDump, '--dry-run']);
      expect(summary.rowsRejected).to.equal(0);
      expect(summary.dryRun).to.equal(true);
      const dry = engineFor(dryPrefix);
      const existing = await dry.client.indices.get({ index: `${dryPrefix}-*` });
      expect(Object.keys(existing)).to.deep.equal([]);
    });
  });

  it('two sources with the same compound id for one structure keep both assignments in a dump', async () => {
    const prefix = await loadFixture(freshPrefix('same-id'));
    const engine = engineFor(prefix);
    const paracetamol = await uciOfKey(engine, 'RZVAJINKPMORJF-UHFFFAOYSA-N');
    const file = join(mkdtempSync(join(tmpdir(), 'chemxref-same-id-')), 'reference.tsv');
    writeFileSync(
      file,
      `UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT\n${paracetamol}\t22\t1983\t1\n${paracetamol}\t101\t1983\t1\n`,
    );
    // Two rows replace sources 22 and 101 whole: a shrink the guard would refuse without --allow-shrink.
    const summary = await load(prefix, ['references', file, '--allow-shrink']);
    expect(summary.rowsLoaded).to.equal(2);
    for (const sourceId of [22, 101]) {
      expect(
        (await assignmentsOf(engine, sourceId)).map((x) => `${x.compoundId}:${x.uci}`),
        `source ${sourceId}`,
      ).to.deep.equal([`1983:${paracetamol}`]);
    }
  });

  it(
    'a second dump replaces the first: every source moves at once, nothing ' +
      'is served twice, the old index stays as the previous release until ' +
      'the next dump, then for RELEASE_GRACE',
    async () => {
      const prefix = await loadFixture(freshPrefix('redump'));
      const engine = engineFor(prefix);
      const [first] = new Set((await currentReleaseIndices(engine)).values());
      const countsBefore = (await allSources(engine)).map((s) => `${s.sourceID}:${s.UCICount}`);
      // The same table in UCI order, as UniChem ships it: the loader counts the UCIs on the way.
      const header = 'UCI\tSRC_ID\tSRC_COMPOUND_ID\tASSIGMENT';
      const sorted = [...references]
        .sort((a, b) => Number(a.uci) - Number(b.uci))
        .map((r) => `${r.uci}\t${r.src_id}\t${r.src_compound_id}\t${r.assigment}`);
      const file = join(mkdtempSync(join(tmpdir(), 'chemxref-redump-')), 'reference.tsv');
      writeFileSync(file, `${header}\n${sorted.join('\n')}\n`);
      const summary = await load(prefix, ['references', file]);
      expect(summary.uciCountedBy).to.equal('loader');
      expect(
        (await allSources(engine)).map((s) => `${s.sourceID}:${s.UCICount}`),
        'UCICount counted by the loader, as the engine counted it',
      ).to.deep.equal(countsBefore);
      const releases = new Set((await currentReleaseIndices(engine)).values());
      expect(releases.size).to.equal(1);
      expect(releases.has(first)).to.equal(false);
      expect(await engine.client.indices.exists({ index: first }), 'kept for searches already routed to it').to.equal(
        true,
      );
      expect(
        Object.keys(await engine.client.indices.getAlias({ index: first }).then((a) => a[first].aliases)).sort(),
      ).to.deep.equal((await allSources(engine)).map((s) => engine.names.previousAssignmentsOf(s.sourceID)).sort());
      expect((await engine.client.count({ index: engine.names.assignments })).count).to.equal(references.length);
      await load(prefix, ['references', file]);
      expect(
        await engine.client.indices.getAlias({ index: first }).then((a) => Object.keys(a[first].aliases)),
        'no source can roll back to it once a newer release is the previous one',
      ).to.deep.equal([]);
      expect(await engine.client.indices.exists({ index: first }), 'kept for RELEASE_GRACE').to.equal(true);
      await runCommand(parseArguments(['doctor']), testConfig(prefix, { RELEASE_GRACE: '1ms' }));
      expect(await engine.client.indices.exists({ index: first }), 'gone past RELEASE_GRACE').to.equal(false);
      expect((await engine.client.count({ index: engine.names.assignments })).count).to.equal(references.length);
    },
  );

  it('two sources of one dump replaced at once: the old assignments of neither show again', async () => {
    const prefix = await loadFixture(freshPrefix('two-at-once'));
    const engine = engineFor(prefix);
    const dumpIndex = await currentReleaseIndex(engine, 102);
    await Promise.all([
      load(prefix, ['remove-source', '102']),
      load(prefix, ['source', '104', join(fixturesDir, 'releases', 'bzr-release-2.tsv')]),
    ]);
    for (const sourceId of [102, 104]) {
      expect(await currentReleaseIndex(engine, sourceId)).to.not.equal(dumpIndex);
      const served = (await assignmentsOf(engine, sourceId)).length;
      const { count } = await engine.client.count({ index: engine.names.assignments, query: { term: { sourceId } } });
      expect(count, `source ${sourceId} through the all-sources alias`).to.equal(served);
    }
    const { count: cas } = await engine.client.count({
      index: engine.names.assignments,
      query: { bool: { filter: [{ term: { sourceId: 102 } }, { term: { assignment: 1 } }] } },
    });
    expect(cas, 'the retired source has no current assignment').to.equal(0);
    for (const sourceId of [1, 9, 22, 101, 103])
      expect(await currentReleaseIndex(engine, sourceId)).to.equal(dumpIndex);
  });

  it('a publish lock left by a killed load is taken over once stale', async () => {
    const prefix = await loadFixture(freshPrefix('stale-lock'));
    const engine = engineFor(prefix);
    const twoMinutesAgo = new Date(Date.now() - 120_000).toISOString();
    await engine.client.index({
      index: engine.names.meta,
      id: 'publish-lock',
      document: { kind: 'lock', started: twoMinutesAgo },
      refresh: true,
    });
    const summary = await load(prefix, ['remove-source', '102']);
    expect(summary.status).to.equal('done');
    expect((await assignmentsOf(engine, 102)).every((x) => x.assignment === 0)).to.equal(true);
    const lock = await engine.client.get({ index: engine.names.meta, id: 'publish-lock' }, { ignore: [404] });
    expect(lock.found, 'released after the publish').to.equal(false);
  });

  it('retires a source: its ids become obsolete, its metadata stays', async () => {
    const prefix = await loadFixture(freshPrefix('retire'));
    const engine = engineFor(prefix);
    await load(prefix, ['remove-source', '102']);
    const assignments = await assignmentsOf(engine, 102);
    expect(assignments).to.have.length(71);
    expect(assignments.every((x) => x.assignment === 0)).to.equal(true);
    const cas = (await allSources(engine)).find((s) => s.sourceID === 102)!;
    expect(cas.name).to.equal('cas_rn');
    expect(cas.UCICount).to.equal(0);
  });

  it('a command line it cannot run is a usage error naming what is wrong: exit 2, the engine not reached', () => {
    const refusal = (argv: string[]): string => {
      try {
        parseArguments(argv);
      } catch (error) {
        expect(error, argv.join(' ')).to.be.instanceOf(UsageError);
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refusal(['history', '--limit', 'x'])).to.equal('--limit needs a whole number from 0 to 10000, got "x"');
    expect(refusal(['dumps', 'folder'])).to.equal('unknown command "dumps"');
    expect(refusal(['dump'])).to.equal('the dump folder is missing');
    expect(refusal(['dump', 'folder', 'other'])).to.equal('unexpected argument "other"');
    expect(refusal(['source', '104'])).to.equal('the release file is missing');
    expect(refusal(['remove-source', 'CHEMBL'])).to.equal('"CHEMBL" is not a source id (a positive integer)');
    expect(refusal(['dump', 'folder', '--rejects'])).to.equal('--rejects needs a value');
    expect(refusal(['dump', 'folder', '--dry-run=yes'])).to.equal('--dry-run takes no value');
    expect(refusal(['dump', 'folder', '--dryrun'])).to.equal('unknown option --dryrun');
    expect(refusal(['fingerprints', '--no-fingerprints'])).to.equal(
      '--no-fingerprints goes with the loads that add structures: `dump`, `structures` and `source`',
    );
    expect(parseArguments(['structures', 'f.tsv', '--no-fingerprints']).fingerprints).to.equal(false);
    // What worked before parseArgs works the same.
    expect(parseArguments(['history'])).to.deep.include({ command: 'history', args: [], limit: 20, wait: false });
    const flags = [
      '--id-property',
      'NAME',
      '--release-date',
      '2025-01-10',
      '--release',
      '35',
      '--wait',
      '--allow-shrink',
      '--dry-run',
      '--rejects',
      'r.tsv',
      '--progress',
      '--no-progress',
    ];
    expect(parseArguments(['source', '104', 'f.sdf', ...flags])).to.deep.equal({
      command: 'source',
      args: ['104', 'f.sdf'],
      idProperty: 'NAME',
      limit: 20,
      wait: true,
      fingerprints: true,
      options: {
        dryRun: true,
        progress: false,
        allowShrink: true,
        rejectsFile: 'r.tsv',
        release: { number: '35', date: '2025-01-10T00:00:00.000Z' },
      },
    });
    expect(parseArguments(['dump', 'folder']).options).to.deep.equal({ dryRun: false });
    const offline = { ...process.env, ES_URL: 'http://127.0.0.1:1', ES_INDEX_PREFIX: freshPrefix('usage') };
    const cli = join(__dirname, '..', 'loaders', 'cli.ts');
    const result = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), cli, 'dumps', fixtureDump], {
      env: offline,
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).to.equal(2);
    expect(result.stderr).to.match(/^unknown command "dumps"\nusage: npm run load -- <command> \[options\]\ncommands:/);
  });

  it('without a terminal a load writes JSON progress lines on stderr and only its summary on stdout', () => {
    const result = spawnSync(
      process.execPath,
      [
        '--require',
        require.resolve('tsx/cjs'),
        join(__dirname, '..', 'loaders', 'cli.ts'),
        'dump',
        fixtureDump,
        '--no-fingerprints',
      ],
      {
        env: {
          ...process.env,
          ES_INDEX_PREFIX: freshPrefix('progress-lines'),
          LOAD_PROGRESS_EVERY: '1ms',
          LOG_LEVEL: 'info',
        },
        encoding: 'utf8',
      },
    );
    expect(result.status, result.stderr).to.equal(0);
    const stdout = result.stdout.trim().split('\n');
    expect(stdout).to.have.length(1);
    expect(JSON.parse(stdout[0])).to.include({ command: 'dump', status: 'done' });
    const progress = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(progress.length, result.stderr).to.be.above(0);
    expect(
      progress.every(
        (line) => line.message === 'load progress' && line.level === 'info' && typeof line.rowsRead === 'number',
      ),
    ).to.equal(true);
    expect(new Set(progress.map((line) => line.command))).to.include('references');
  });

  it('consolidate serves every source from one merged release index again, with the same assignments and metadata', async () => {
    const prefix = await loadFixture(freshPrefix('consolidate'));
    const engine = engineFor(prefix);
    await load(prefix, ['source', '104', join(fixturesDir, 'releases', 'bzr-release-2.tsv')]);
    await load(prefix, ['remove-source', '102']);
    const sourceIds = [1, 9, 22, 101, 102, 103, 104];
    const served = async (): Promise<Record<number, AssignmentDocument[]>> =>
      Object.fromEntries(
        await Promise.all(sourceIds.map(async (id) => [id, await assignmentsOf(engine, id)] as const)),
      );
    const before = await served();
    const sourcesBefore = await allSources(engine);
    const { count: allBefore } = await engine.client.count({ index: engine.names.assignments });
    expect(new Set((await currentReleaseIndices(engine)).values()).size).to.equal(3);
    // Fingerprints written in two refreshes: two segments, which consolidate merges too.
    for (const uci of [1, 2]) {
      const fingerprint = {
        uci,
        standardInchiKey: `KEY${uci}`,
        popcount: 1,
        derivation: 2,
        morgan: [uci],
        pattern: [],
        molecule: '',
      };
      await writeFingerprints(engine, [fingerprint]);
      await engine.client.indices.refresh({ index: engine.names.fingerprints });
    }

    const dryRun = await load(prefix, ['consolidate', '--dry-run']);
    expect(dryRun.rowsRead).to.equal(allBefore);
    expect(new Set((await currentReleaseIndices(engine)).values()).size, 'a dry run publishes nothing').to.equal(3);

    const summary = await load(prefix, ['consolidate']);
    expect(summary).to.include({
      status: 'done',
      releaseIndicesBefore: 3,
      releaseIndicesAfter: 1,
      rowsLoaded: allBefore,
      sources: 7,
    });
    // The dump's release serves most: it is cloned, without what it holds of the reloaded and retired sources.
    expect(summary.cloned).to.match(/-assignments-dump-/);
    expect(summary.removedFromClone).to.be.greaterThan(0);
    const releases = await currentReleaseIndices(engine);
    expect(new Set(releases.values()).size).to.equal(1);
    expect(await served(), 'every source serves the same assignments').to.deep.equal(before);
    expect(await allSources(engine), 'counts, dates and retired flags unchanged').to.deep.equal(sourcesBefore);
    const { count: allAfter } = await engine.client.count({ index: engine.names.assignments });
    expect(allAfter).to.equal(allBefore);
    const [index] = releases.values();
    const segments = await engine.client.indices.segments({ index });
    const shards = Object.values(segments.indices[index].shards).flat() as {
      num_committed_segments: number;
      routing: { primary: boolean };
    }[];
    expect(shards.filter((shard) => shard.routing.primary).map((shard) => shard.num_committed_segments)).to.deep.equal([
      1,
    ]);
    const structureSegments = await engine.client.cat.segments({ index: engine.names.compounds, format: 'json' });
    expect(structureSegments, 'the structures index is merged into one segment too').to.have.length(1);
    const fingerprintSegments = await engine.client.cat.segments({ index: engine.names.fingerprints, format: 'json' });
    expect(fingerprintSegments, 'and the fingerprints index').to.have.length(1);

    const again = await load(prefix, ['consolidate']);
    expect(again).to.include({ status: 'done', releaseIndicesBefore: 1, releaseIndicesAfter: 1 });
    expect(again.note).to.equal('every source is already served from one release index');
  });

  it(
    'a load killed half-way (kill -9) leaves the previous release served, ' + 'and the next run removes its leftovers',
    async () => {
      const prefix = await loadFixture(freshPrefix('killed'));
      const engine = engineFor(prefix);
      const served = await currentReleaseIndex(engine, 101);
      const before = await assignmentsOf(engine, 101);
      const structuresBefore = (await engine.client.count({ index: engine.names.compounds })).count;
      // A big release of NCI/DTP: every demo structure under a made-up NSC-like id, so the load takes a while.
      const demo = table(join(__dirname, '..', 'examples', 'demo', 'structure.tsv.gz'));
      const folder = mkdtempSync(join(tmpdir(), 'chemxref-killed-'));
      const file = join(folder, 'nci-release.tsv');
      // Three ids per structure (about 86,000 rows), so the load is still running when it is killed.
      const rows = [0, 1, 2].flatMap((copy) =>
        demo.map((s, i) => `${900000 + copy * 100000 + i}\t${s.standardinchi}\t${s.standardinchikey}`),
      );
      writeFileSync(file, `compound_id\tstandard_inchi\tstandard_inchikey\n${rows.join('\n')}\n`);
      // The loader runs in this one process (tsx as a require hook, not the tsx CLI, which would start
      // the loader in a grandchild that SIGKILL of the child does not reach).
      const child = spawn(
        process.execPath,
        [
          '--require',
          require.resolve('tsx/cjs'),
          join(__dirname, '..', 'loaders', 'cli.ts'),
          'source',
          '101',
          file,
          '--no-progress',
          '--no-fingerprints',
        ],
        {
          env: { ...process.env, ES_INDEX_PREFIX: prefix },
          stdio: 'ignore',
        },
      );
      const exited = new Promise((done) => child.once('exit', done));
      // Kill once the new release index has assignments in it.
      for (let i = 0; i < 1200; i += 1) {
        const indices = Object.keys(await engine.client.indices.get({ index: `${prefix}-assignments-101-*` }));
        const fresh = indices.filter((index) => index !== served);
        if (fresh.length > 0) {
          const stats = await engine.client.indices.stats({ index: fresh[0], metric: 'indexing' });
          if ((stats._all.total?.indexing?.index_total ?? 0) > 0) break;
        }
        await new Promise((done) => setTimeout(done, 50));
      }
      child.kill('SIGKILL');
      await exited;
      expect(await currentReleaseIndex(engine, 101)).to.equal(served);
      expect(await assignmentsOf(engine, 101)).to.deep.equal(before);
      const leftovers = Object.keys(await engine.client.indices.get({ index: `${prefix}-assignments-101-*` })).filter(
        (i) => i !== served,
      );
      expect(leftovers, 'the killed load left its half-built index').to.have.length(1);
      // Its heartbeat is seconds old, but its process is gone: the next load sweeps at once.
      await load(prefix, ['sources', join(fixtureDump, 'source.tsv.gz')]);
      expect(await engine.client.indices.exists({ index: leftovers[0] })).to.equal(false);
      expect(await currentReleaseIndex(engine, 101)).to.equal(served);
      const killed = (await loadHistory(engine, 10)).find((record) => record.command === 'source');
      expect(killed?.status).to.equal('failed');
      expect(killed?.message).to.match(/^interrupted: its process [0-9]+ on .* is gone$/);
      await engine.client.indices.refresh({ index: engine.names.compounds });
      expect(
        (await engine.client.count({ index: engine.names.compounds })).count,
        'structures only the killed load created are gone',
      ).to.equal(structuresBefore);
      const settings = await engine.client.indices.getSettings({
        index: engine.names.compounds,
        name: 'index.refresh_interval',
      });
      expect(JSON.stringify(settings), 'the refresh the killed load paused is on again').not.to.include('"-1"');
    },
  );

  it('two loads at once never give one InChIKey two UCIs, nor one UCI two keys', async () => {
    const prefix = await loadFixture(freshPrefix('concurrent'));
    const engine = engineFor(prefix);
    const release = join(fixturesDir, 'releases', 'bzr-release-2.tsv');
    // The same new structures arrive through two sources at the same moment.
    // Source 103's fixture ids are all replaced by BZR's: a shrink, forced.
    await Promise.all([
      load(prefix, ['source', '104', release]),
      load(prefix, ['source', '103', release, '--allow-shrink']),
    ]);
    const result = await engine.client.search<{ uci: number; standardInchiKey: string }>({
      index: engine.names.compounds,
      size: 10_000,
    });
    const ucis = result.hits.hits.map((hit) => hit._source!.uci);
    expect(new Set(ucis).size).to.equal(ucis.length);
    const bzr = (await assignmentsOf(engine, 104)).filter((x) => x.assignment === 1);
    const named = (await assignmentsOf(engine, 103)).filter((x) => x.assignment === 1);
    for (const assignment of bzr) {
      expect(named.find((x) => x.compoundId === assignment.compoundId)!.uci, assignment.compoundId).to.equal(
        assignment.uci,
      );
    }
  });
});
