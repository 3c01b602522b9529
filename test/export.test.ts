/**
 * Exports (issue 7): whole-source mapping files and table dumps written from the live indices of the
 * real engine, checked against the fixture dump's own tables and by loading a dump back.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { SourceDocument, AssignmentDocument } from '../src/engine/documents';
import { Engine } from '../src/engine/client';
import { compoundsByKey } from '../src/engine/compounds';
import { currentReleaseIndices } from '../src/engine/schema';
import { allSources } from '../src/engine/sources';
import { scanSourceAssignments } from '../src/engine/assignments';
import { parseExportArguments, UsageError } from '../src/export/cli';
import { runExport, type ExportOptions } from '../src/export/run';
import { toBinary } from '../src/export/files';
import { ExternalSorter, sortLines } from '../src/export/sort';
import { startApi, type RunningApi } from './support/api';
import { fixtureDump, fixturePrefix, fixturesDir, freshPrefix, load, loadFixture, testConfig } from './support/fixture';

const run = promisify(execFile);

/** The rows of a gzip TSV file of the fixture, header first. */
async function tsv(file: string): Promise<string[][]> {
  const text = gunzipSync(await readFile(file)).toString('utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));
}

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The mapping files the fixture must give, computed straight from its reference table: for every
 * ordered pair of its sources, the (id, id) pairs of current assignments sharing a UCI, without
 * repeats, sorted by the UTF-8 bytes of the first id then of the second.
 */
async function expectedMappingFiles(): Promise<Map<string, string>> {
  const sourceIds = (await tsv(join(fixtureDump, 'source.tsv.gz'))).slice(1).map((row) => Number(row[0]));
  const byUci = new Map<string, Map<number, Set<string>>>();
  for (const [uci, source, id, assignment] of (await tsv(join(fixtureDump, 'reference.tsv.gz'))).slice(1)) {
    if (assignment !== '1') continue;
    if (!byUci.has(uci)) byUci.set(uci, new Map());
    const sources = byUci.get(uci)!;
    if (!sources.has(Number(source))) sources.set(Number(source), new Set());
    sources.get(Number(source))!.add(id);
  }
  const files = new Map<string, string>();
  for (const from of sourceIds) {
    for (const to of sourceIds) {
      if (from === to) continue;
      const pairs = new Map<string, [string, string]>();
      for (const sources of byUci.values()) {
        for (const a of sources.get(from) ?? []) for (const b of sources.get(to) ?? []) pairs.set(`${a}\t${b}`, [a, b]);
      }
      const rows = [...pairs.values()].sort((x, y) => byBytes(x[0], y[0]) || byBytes(x[1], y[1]));
      files.set(
        `wholeSourceMapping/src_id${from}/src${from}src${to}.txt.gz`,
        `From src:'${from}'\tTo src:'${to}'\n${rows.map(([a, b]) => `${a}\t${b}\n`).join('')}`,
      );
    }
  }
  return files;
}

/** Every mapping file under `folder`, as text, by its path relative to `folder`. */
async function mappingFiles(folder: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const root = join(folder, 'wholeSourceMapping');
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath ?? (entry as { path?: string }).path!, entry.name);
    files.set(relative(folder, path), gunzipSync(await readFile(path)).toString('utf8'));
  }
  return files;
}

/** What a prefix serves, through the engine's reads: sources, and per structure key its assignments. */
async function servedState(
  prefix: string,
  keys: string[],
): Promise<{ sources: SourceDocument[]; byKey: Record<string, unknown> }> {
  const engine = new Engine(testConfig(prefix));
  try {
    const sources = await allSources(engine);
    const assignments = new Map<string, string[]>();
    for (const [sourceId, index] of await currentReleaseIndices(engine)) {
      for await (const page of scanSourceAssignments(engine, index, sourceId)) {
        for (const assignment of page as AssignmentDocument[]) {
          const rows = assignments.get(assignment.standardInchiKey) ?? [];
          rows.push(`${assignment.sourceId}\t${assignment.compoundId}\t${assignment.assignment}\t${assignment.uci}`);
          assignments.set(assignment.standardInchiKey, rows);
        }
      }
    }
    const compounds = await compoundsByKey(engine, keys);
    const byKey: Record<string, unknown> = {};
    for (const key of keys) {
      const compound = compounds.get(key);
      byKey[key] = {
        uci: compound?.uci ?? null,
        inchi: compound?.standardInchi ?? null,
        assignments: (assignments.get(key) ?? []).sort(),
      };
    }
    return { sources, byKey };
  } finally {
    await engine.close();
  }
}

describe('exports (issue 7)', function () {
  this.timeout(300_000);
  let folder: string;

  before(async () => {
    folder = await mkdtemp(join(tmpdir(), 'chemxref-export-test-'));
  });

  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  async function exportOf(
    prefix: string,
    command: 'mappings' | 'dump',
    name: string,
    options: Partial<ExportOptions> = {},
  ) {
    const engine = new Engine(testConfig(prefix));
    try {
      const out = join(folder, name);
      const summary = await runExport(engine, command, { folder: out, progress: false, ...options });
      return { out, summary };
    } finally {
      await engine.close();
    }
  }

  it('every mapping file of the fixture equals the pairs computed from its reference table', async () => {
    const { out, summary } = await exportOf(await fixturePrefix(), 'mappings', 'mappings');
    const expected = await expectedMappingFiles();
    const written = await mappingFiles(out);
    expect([...written.keys()].sort()).to.deep.equal([...expected.keys()].sort());
    for (const [path, text] of expected) expect(written.get(path), path).to.equal(text);
    expect(summary.files).to.equal(42);
    expect(summary.rows).to.equal([...expected.values()].reduce((sum, text) => sum + text.split('\n').length - 2, 0));
    // Real overlaps: paracetamol is CHEMBL112 and NSC 3991.
    expect(written.get('wholeSourceMapping/src_id1/src1src101.txt.gz')).to.contain('CHEMBL112\t3991\n');
  });

  it('a pair of sources without a shared structure gets a file with the header only', async () => {
    const written = await mappingFiles(join(folder, 'mappings'));
    expect(written.get('wholeSourceMapping/src_id9/src9src104.txt.gz')).to.equal("From src:'9'\tTo src:'104'\n");
  });

  it('README.txt of a mapping export names every source release and the row count of every file', async () => {
    const readme = await readFile(join(folder, 'mappings', 'README.txt'), 'utf8');
    const engine = new Engine(testConfig(await fixturePrefix()));
    try {
      for (const index of (await currentReleaseIndices(engine)).values()) expect(readme).to.contain(index);
    } finally {
      await engine.close();
    }
    expect(readme).to.match(/wholeSourceMapping\/src_id1\/src1src101\.txt\.gz\s+80\b/);
    expect(readme).to.contain('UTF-8 bytes');
    expect(readme).to.match(/Written: \d{4}-\d\d-\d\dT/);
    expect(readme).to.contain('reference.tsv.gz'); // the file the releases were loaded from
  });

  it('--from and --to export only the files asked for', async () => {
    const { out, summary } = await exportOf(await fixturePrefix(), 'mappings', 'one-pair', { from: 101, to: 1 });
    const written = await mappingFiles(out);
    expect([...written.keys()]).to.deep.equal(['wholeSourceMapping/src_id101/src101src1.txt.gz']);
    expect(written.get('wholeSourceMapping/src_id101/src101src1.txt.gz')).to.equal(
      (await expectedMappingFiles()).get('wholeSourceMapping/src_id101/src101src1.txt.gz'),
    );
    expect(Object.keys(summary.releases).sort()).to.deep.equal(['1', '101']);
    const fromOnly = await exportOf(await fixturePrefix(), 'mappings', 'from-104', { from: 104 });
    expect([...(await mappingFiles(fromOnly.out)).keys()].sort()).to.have.length(6);
  });

  it(
    'round trip: a dump loaded under another prefix serves the same ' +
      'sources, structures and assignments for every fixture key',
    async () => {
      const original = await fixturePrefix();
      const { out, summary } = await exportOf(original, 'dump', 'dump');
      expect(summary.missingStructures).to.equal(0);
      const reference = await tsv(join(out, 'reference.tsv.gz'));
      expect(reference[0]).to.deep.equal(['UCI', 'SRC_ID', 'SRC_COMPOUND_ID', 'ASSIGMENT', 'AUX_SRC']);
      expect(reference.slice(1).some((row) => row[3] === '0')).to.equal(true);
      expect((await tsv(join(out, 'structure.tsv.gz')))[0]).to.deep.equal(['UCI', 'STANDARDINCHI', 'STANDARDINCHIKEY']);
      const fixtureColumns = (await tsv(join(fixtureDump, 'source.tsv.gz')))[0];
      expect((await tsv(join(out, 'source.tsv.gz')))[0].slice(0, fixtureColumns.length)).to.deep.equal(fixtureColumns);

      const copy = freshPrefix('export-round-trip');
      const loaded = await load(copy, ['dump', out]);
      expect(loaded.rowsRejected).to.equal(0);
      const keys = (await tsv(join(fixtureDump, 'structure.tsv.gz'))).slice(1).map((row) => row[2]);
      const [before, after] = [await servedState(original, keys), await servedState(copy, keys)];
      expect(after.sources).to.deep.equal(before.sources);
      expect(before.sources.every((source) => source.UCICount > 0)).to.equal(true);
      expect(after.byKey).to.deep.equal(before.byKey);

      // The v1 and legacy answers of both services, for every fixture key, and their source lists.
      const apis: RunningApi[] = [await startApi(testConfig(original)), await startApi(testConfig(copy))];
      try {
        const answers = async (api: RunningApi, key: string, i: number): Promise<unknown[]> => [
          (await api.post('/api/v1/compounds', { type: 'inchikey', compound: key })).body,
          (await api.get(`/rest/inchikey_all/${key}`)).body,
          (await api.get(`/rest/verbose_inchikey/${key}`)).body,
          // Connectivity answers are the slowest: every eighth key (108 of them) is enough to compare.
          i % 8 === 0 ? (await api.post('/api/v1/connectivity', { type: 'inchikey', compound: key })).body : null,
        ];
        for (const path of ['/api/v1/sources/', '/rest/src_ids/']) {
          expect((await apis[1].get(path)).body, path).to.deep.equal((await apis[0].get(path)).body);
        }
        // Eight keys at a time: the requests wait on the engine more than on this process.
        for (let start = 0; start < keys.length; start += 8) {
          await Promise.all(
            keys.slice(start, start + 8).map(async (key, j) => {
              const [first, second] = await Promise.all(apis.map((api) => answers(api, key, start + j)));
              expect(second, key).to.deep.equal(first);
            }),
          );
        }
        const ids = reference.slice(1, 40);
        for (const [, source, id] of ids) {
          const path = `/rest/src_compound_id_all/${encodeURIComponent(id)}/${source}`;
          expect((await apis[1].get(path)).body, path).to.deep.equal((await apis[0].get(path)).body);
        }
        expect((await apis[1].get('/rest/mapping/1/101')).body).to.deep.equal(
          (await apis[0].get('/rest/mapping/1/101')).body,
        );
      } finally {
        await Promise.all(apis.map((api) => api.stop()));
      }

      // And a dump of the copy is the same dump, byte for byte once unzipped.
      const again = await exportOf(copy, 'dump', 'dump-again');
      for (const table of ['source', 'structure', 'reference']) {
        expect(await tsv(join(again.out, `${table}.tsv.gz`)), table).to.deep.equal(
          await tsv(join(out, `${table}.tsv.gz`)),
        );
      }
    },
  );

  it(
    'auxiliary data (aux_src) survives a dump and its load: AUX_SRC ' + "follows UniChem's four reference columns",
    async () => {
      const prefix = await loadFixture(freshPrefix('export-aux'));
      const [header, ...rows] = (await readFile(join(fixturesDir, 'releases', 'bzr-release-2.tsv'), 'utf8'))
        .trim()
        .split('\n');
      const release = join(folder, 'bzr-release-aux.tsv');
      await writeFile(release, `${header}\taux_src\n${rows.map((row, i) => `${row}\tbzr:${i}`).join('\n')}\n`);
      await load(prefix, ['source', '104', release]);
      const { out } = await exportOf(prefix, 'dump', 'dump-aux');
      const reference = await tsv(join(out, 'reference.tsv.gz'));
      expect(reference[0]).to.deep.equal(['UCI', 'SRC_ID', 'SRC_COMPOUND_ID', 'ASSIGMENT', 'AUX_SRC']);
      expect(reference.filter((row) => row[1] === '104' && row[4] !== '')).to.have.length(rows.length);
      expect(reference.filter((row) => row[1] !== '104' && row[1] !== 'SRC_ID').every((row) => row[4] === '')).to.equal(
        true,
      );

      const copy = freshPrefix('export-aux-copy');
      expect((await load(copy, ['dump', out])).rowsRejected).to.equal(0);
      const auxOf = async (of: string): Promise<string[]> => {
        const engine = new Engine(testConfig(of));
        try {
          const result = await engine.client.search<AssignmentDocument>({
            index: engine.names.assignmentsOf(104),
            size: 1_000,
            query: { exists: { field: 'auxSrc' } },
          });
          return result.hits.hits
            .map((hit) => `${hit._source!.compoundId} ${hit._source!.assignment} ${hit._source!.auxSrc}`)
            .sort();
        } finally {
          await engine.close();
        }
      };
      const original = await auxOf(prefix);
      expect(original).to.have.length(rows.length);
      expect(await auxOf(copy)).to.deep.equal(original);
    },
  );

  describe('a reload of one source during an export', () => {
    let prefix: string;
    let releaseOneState: Map<string, string>;
    let releaseOne: string;

    before(async () => {
      prefix = await loadFixture(freshPrefix('export-reload'));
      releaseOneState = await mappingFiles((await exportOf(prefix, 'mappings', 'reload-before')).out);
      // Release 1 of bzr_names (104) as a source file, from the fixture's own tables, to reload back to it.
      const structures = new Map(
        (await tsv(join(fixtureDump, 'structure.tsv.gz'))).slice(1).map((row) => [row[0], row]),
      );
      const rows = (await tsv(join(fixtureDump, 'reference.tsv.gz')))
        .slice(1)
        .filter((row) => row[1] === '104' && row[3] === '1')
        .map((row) => `${row[2]}\t${structures.get(row[0])![1]}\t${structures.get(row[0])![2]}`);
      releaseOne = join(folder, 'bzr-release-1.tsv');
      await writeFile(releaseOne, `compound_id\tstandard_inchi\tstandard_inchikey\n${rows.join('\n')}\n`);
    });

    it('a release replaced while it is read is read again, wholly from the new release', async () => {
      const releaseTwo = join(fixturesDir, 'releases', 'bzr-release-2.tsv');
      let reloaded = false;
      const during = await exportOf(prefix, 'mappings', 'reload-during', {
        pageSize: 5,
        afterPage: async (sourceId, page) => {
          if (sourceId !== 104 || page !== 1 || reloaded) return;
          reloaded = true;
          await load(prefix, ['source', '104', releaseTwo]);
        },
      });
      expect(reloaded).to.equal(true);
      expect(during.summary.restarts).to.equal(1);
      const afterward = await exportOf(prefix, 'mappings', 'reload-after');
      expect(during.summary.releases).to.deep.equal(afterward.summary.releases);
      const duringFiles = await mappingFiles(during.out);
      expect(duringFiles).to.deep.equal(await mappingFiles(afterward.out));
      expect(duringFiles).not.to.deep.equal(releaseOneState);
      expect(await readFile(join(during.out, 'README.txt'), 'utf8')).to.contain(
        'source 104 was read again from its new release',
      );
    });

    it(
      'an export running while a source is reloaded writes the state before ' + 'or the state after, never a mix',
      async () => {
        const stateBefore = await mappingFiles((await exportOf(prefix, 'mappings', 'race-before')).out);
        const [race] = await Promise.all([
          exportOf(prefix, 'mappings', 'race', { pageSize: 10 }),
          load(prefix, ['source', '104', releaseOne]),
        ]);
        const stateAfter = await mappingFiles((await exportOf(prefix, 'mappings', 'race-after')).out);
        expect(stateAfter).to.deep.equal(releaseOneState); // back to release 1's current assignments
        expect(stateAfter).not.to.deep.equal(stateBefore);
        const written = await mappingFiles(race.out);
        const same = (state: Map<string, string>): boolean =>
          [...state].every(([path, text]) => written.get(path) === text) && written.size === state.size;
        expect(
          same(stateBefore) || same(stateAfter),
          'the export equals neither the state before nor the state after',
        ).to.equal(true);
      },
    );
  });

  describe('the external sort', () => {
    // Real ids of the fixture, plus prefixes of each other, repeats, and non-ASCII ids.
    const ids = [
      'CHEMBL112',
      'CHEMBL1',
      'CHEMBL11',
      'CHEMBL112',
      'aromatics/benzene',
      'Aromatics',
      'Ž-name',
      'zeta',
      'ß',
      '𝛼-pinene',
      'ﬀ',
      '',
      '3991',
      '39910',
    ];

    it('sorts in UTF-8 byte order, as Buffer.compare does', () => {
      const lines: string[] = [];
      for (const a of ids) for (const b of ids) lines.push(toBinary(`${a}\u0000${b}`));
      const expected = [...lines].sort((x, y) => Buffer.compare(Buffer.from(x, 'latin1'), Buffer.from(y, 'latin1')));
      expect(sortLines([...lines])).to.deep.equal(expected);
    });

    it('gives the same order through many runs merged in several passes', async () => {
      const work = await mkdtemp(join(folder, 'sort-'));
      const sorter = new ExternalSorter({ folder: work, maxBufferedLines: 7, fanIn: 3 });
      const lines: string[] = [];
      for (let i = 0; i < 500; i += 1)
        lines.push(toBinary(`${ids[(i * 7) % ids.length]}${(i * 7919) % 101}\u0000${ids[i % ids.length]}`));
      for (const line of lines) await sorter.add(line);
      const out: string[] = [];
      for await (const batch of sorter.sorted()) out.push(...batch);
      await sorter.dispose();
      expect(out).to.deep.equal(sortLines([...lines]));
      expect(await readdir(work)).to.deep.equal([]);
    });
  });

  describe('npm run export', () => {
    const cli = join(__dirname, '..', 'src', 'export', 'cli.ts');
    const tsx = join(__dirname, '..', 'node_modules', '.bin', 'tsx');

    it('prints one JSON summary line and exits 0', async () => {
      const env = { ...process.env, ES_INDEX_PREFIX: await fixturePrefix() };
      const { stdout } = await run(tsx, [cli, 'mappings', join(folder, 'cli'), '--from', '104', '--to', '1'], { env });
      const lines = stdout.trim().split('\n');
      expect(lines).to.have.length(1);
      const summary = JSON.parse(lines[0]);
      expect(summary).to.include({ command: 'mappings', status: 'done', files: 1, rows: 2 });
    });

    it('exits non-zero, with a failed summary, for a source that is not known', async () => {
      const env = { ...process.env, ES_INDEX_PREFIX: await fixturePrefix() };
      const failure = await run(tsx, [cli, 'mappings', join(folder, 'cli-unknown'), '--from', '999'], { env }).then(
        () => null,
        (error) => error,
      );
      expect(failure?.code).to.equal(2);
      expect(JSON.parse(failure.stdout.trim())).to.include({
        status: 'failed',
        error: '--from source 999 is not known',
      });
      expect(await readdir(join(folder, 'cli-unknown')).catch(() => [])).to.deep.equal([]);
    });

    it('rejects a wrong command line', () => {
      expect(() => parseExportArguments(['dump'])).to.throw('folder');
      expect(() => parseExportArguments(['mapping', 'x'])).to.throw('unknown command');
      expect(() => parseExportArguments(['dump', 'x', '--from', '1'])).to.throw('mappings only');
      expect(parseExportArguments(['mappings', 'x', '--from', '1', '--to', '22'])).to.deep.include({
        command: 'mappings',
        options: { folder: 'x', from: 1, to: 22 },
      });
      expect(() => parseExportArguments(['mappings', 'x', '--from', 'chembl'])).to.throw(
        UsageError,
        '--from needs a source id (a positive integer), got "chembl"',
      );
      expect(() => parseExportArguments(['changes', '104', '--since'])).to.throw(UsageError, '--since needs a value');
      expect(() => parseExportArguments(['changes', '104', '--since', ' '])).to.throw(UsageError, 'needs a load');
      expect(() => parseExportArguments(['dump', 'x', '--no-progres'])).to.throw(UsageError, 'unknown option');
      expect(parseExportArguments(['dump', 'x', '--no-progress'])).to.deep.equal({
        command: 'dump',
        options: { folder: 'x', progress: false },
      });
      expect(parseExportArguments(['changes', '104', 'out', '--since', 'L1'])).to.deep.equal({
        command: 'changes',
        options: { sourceId: 104, since: 'L1', folder: 'out' },
      });
    });
  });
});
