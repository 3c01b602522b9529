import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { Engine } from '../src/engine/client';
import { compoundsByKey } from '../src/engine/compounds';
import type { AssignmentDocument } from '../src/engine/documents';
import { startDumpServer, type DumpServer } from './support/dump-server';
import { freshPrefix, testConfig } from './support/fixture';
import { repoRoot, runToEnd, type Finished } from './support/run';

const demo = join(repoRoot, 'examples', 'demo');
const tables = ['source.tsv.gz', 'structure.tsv.gz', 'reference.tsv.gz'];

interface FileReport {
  file: string;
  action: string;
  bytes: number;
  size?: number;
  checks?: Record<string, string> | string;
  error?: string;
}
interface Summary {
  command: string;
  status: string;
  files: FileReport[];
  changed: number;
  checksums: string[] | string;
  load?: Record<string, unknown> | string;
  error?: string;
}

/** Runs `npm run sync -- <args>` as a user would; resolves with its exit code, output and summary line. */
async function sync(args: string[], env: Record<string, string> = {}): Promise<Finished & { summary?: Summary }> {
  const cli = join(repoRoot, 'src', 'sync', 'cli.ts');
  const result = await runToEnd(process.execPath, ['--require', require.resolve('tsx/cjs'), cli, ...args], env);
  const lines = result.stdout.trim().split('\n').filter(Boolean);
  expect(lines.length, `one summary line on stdout\n${result.stdout}\n${result.stderr}`).to.be.at.most(1);
  return { ...result, summary: lines.length === 1 ? (JSON.parse(lines[0]) as Summary) : undefined };
}

/** A folder serving the demo dump's three tables, as EBI's table_dumps folder serves UniChem's. */
function demoFolder(): string {
  const root = mkdtempSync(join(tmpdir(), 'sync-server-'));
  for (const table of tables) copyFileSync(join(demo, table), join(root, table));
  return root;
}

const md5 = (file: string): string => createHash('md5').update(readFileSync(file)).digest('hex');
const byFile = (summary: Summary | undefined): Record<string, FileReport> =>
  Object.fromEntries((summary?.files ?? []).map((report) => [report.file, report]));

describe('npm run sync', function () {
  this.timeout(120_000);
  const servers: DumpServer[] = [];
  const engines: Engine[] = [];
  const serve = async (root: string): Promise<DumpServer> => {
    const server = await startDumpServer(root);
    servers.push(server);
    return server;
  };
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await Promise.all(engines.map((engine) => engine.close()));
  });

  it('downloads the three tables into a new folder, equal to the server’s, and reports every check passed', async () => {
    const root = demoFolder();
    const server = await serve(root);
    const to = join(mkdtempSync(join(tmpdir(), 'sync-')), 'dump');
    const result = await sync(['--base-url', server.url, '--to', to]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.summary).to.include({ command: 'sync', status: 'done', changed: 3, checksums: 'none published' });
    for (const table of tables) {
      const report = byFile(result.summary)[table];
      expect(report, table).to.include({ action: 'downloaded', size: statSync(join(root, table)).size });
      expect(report.bytes).to.equal(report.size);
      expect(report.checks).to.deep.include({ gzip: 'passed', header: 'passed', checksum: 'none published' });
      expect(md5(join(to, table)), table).to.equal(md5(join(root, table)));
      expect(result.stderr).to.include(`sync: ${table}: downloaded`);
    }
    expect(result.stderr).to.include('no checksum published');
    expect(readdirSync(to).sort()).to.deep.equal(['.sync.json', ...tables].sort());
  });

  it('checks each table against the md5sums.txt the server publishes beside it', async () => {
    const root = demoFolder();
    writeFileSync(join(root, 'md5sums.txt'), tables.map((table) => `${md5(join(root, table))}  ${table}\n`).join(''));
    const server = await serve(root);
    const to = mkdtempSync(join(tmpdir(), 'sync-'));
    const result = await sync(['--base-url', server.url, '--to', to]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.summary?.checksums).to.deep.equal(['md5sums.txt']);
    for (const table of tables)
      expect((byFile(result.summary)[table].checks as Record<string, string>).checksum).to.equal(
        'md5 passed (md5sums.txt)',
      );
  });

  it('resumes a download cut in the middle with a Range request, and ends with the server’s file', async () => {
    const root = demoFolder();
    const server = await serve(root);
    const to = mkdtempSync(join(tmpdir(), 'sync-'));
    const whole = statSync(join(root, 'structure.tsv.gz')).size;
    server.cutAfter.set('structure.tsv.gz', 600_000);

    const cut = await sync(['--base-url', server.url, '--to', to]);
    expect(cut.code, cut.stderr).to.equal(1);
    expect(cut.stderr).to.match(/structure\.tsv\.gz: the download broke off after \d+ of .*the next run resumes it/);
    expect(cut.summary).to.include({ status: 'failed' });
    const kept = statSync(join(to, 'structure.tsv.gz.part')).size;
    expect(kept).to.be.above(0).and.below(whole);
    expect(existsSync(join(to, 'structure.tsv.gz')), 'no half file under the real name').to.equal(false);
    expect(existsSync(join(to, 'source.tsv.gz')), 'nothing moved into place while a table is missing').to.equal(false);

    server.cutAfter.clear();
    const resumed = await sync(['--base-url', server.url, '--to', to]);
    expect(resumed.code, resumed.stderr).to.equal(0);
    const structure = byFile(resumed.summary)['structure.tsv.gz'];
    expect(structure).to.include({ action: 'resumed', bytes: whole - kept, size: whole });
    const etag = `"${md5(join(root, 'structure.tsv.gz'))}"`;
    expect(server.requests.filter((request) => request.file === 'structure.tsv.gz').at(-1)).to.include({
      range: `bytes=${kept}-`,
      ifRange: etag,
      status: 206,
    });
    expect(md5(join(to, 'structure.tsv.gz'))).to.equal(md5(join(root, 'structure.tsv.gz')));
    expect(existsSync(join(to, 'structure.tsv.gz.part'))).to.equal(false);
    // source.tsv.gz was whole after the first run: the second one only asked whether it still is.
    expect(byFile(resumed.summary)['source.tsv.gz']).to.include({ action: 'resumed', bytes: 0 });
  });

  it('starts a kept download again from zero when the file changed on the server meanwhile', async () => {
    const root = demoFolder();
    const server = await serve(root);
    const to = mkdtempSync(join(tmpdir(), 'sync-'));
    server.cutAfter.set('reference.tsv.gz', 50_000);
    expect((await sync(['--base-url', server.url, '--to', to])).code).to.equal(1);
    server.cutAfter.clear();
    const text = gunzipSync(readFileSync(join(root, 'reference.tsv.gz'))).toString('utf8');
    writeFileSync(join(root, 'reference.tsv.gz'), gzipSync(text.split('\n').slice(0, -50).join('\n') + '\n'));

    const result = await sync(['--base-url', server.url, '--to', to]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.include('reference.tsv.gz: changed on the server since the kept download');
    expect(byFile(result.summary)['reference.tsv.gz']).to.include({ action: 'downloaded' });
    expect(md5(join(to, 'reference.tsv.gz'))).to.equal(md5(join(root, 'reference.tsv.gz')));
  });

  it('refuses a truncated gzip file: exit 1 naming it, nothing moved into place, and with --load nothing loaded', async () => {
    const root = demoFolder();
    const server = await serve(root);
    server.truncated.add('reference.tsv.gz');
    const to = mkdtempSync(join(tmpdir(), 'sync-'));
    const prefix = freshPrefix('sync-refused');
    const result = await sync(['--base-url', server.url, '--to', to, '--load'], { ES_INDEX_PREFIX: prefix });
    expect(result.code, result.stderr).to.equal(1);
    expect(result.stderr).to.match(/sync failed: reference\.tsv\.gz failed the gzip check: .*; nothing was loaded/);
    expect(result.summary).to.include({ status: 'failed', load: 'not started: a file failed' });
    expect(byFile(result.summary)['reference.tsv.gz']).to.include({ action: 'refused' });
    for (const table of tables) expect(existsSync(join(to, table)), table).to.equal(false);
    expect(existsSync(join(to, 'reference.tsv.gz.part')), 'the corrupt download is deleted').to.equal(false);
    const engine = new Engine(testConfig(prefix));
    engines.push(engine);
    const indices = await engine.client.indices.get({ index: `${prefix}*`, expand_wildcards: 'all' });
    expect(Object.keys(indices), 'no index of the test prefix').to.deep.equal([]);

    // Once the server has a whole file again, the next run fetches only that one.
    server.truncated.clear();
    const again = await sync(['--base-url', server.url, '--to', to]);
    expect(again.code, again.stderr).to.equal(0);
    expect(byFile(again.summary)['reference.tsv.gz']).to.include({ action: 'downloaded' });
    expect(byFile(again.summary)['structure.tsv.gz']).to.include({ action: 'resumed', bytes: 0 });
  });

  it('refuses a table whose md5 is not the one published, naming the file and the checksum check', async () => {
    const root = demoFolder();
    writeFileSync(join(root, 'source.tsv.gz.md5'), `${'0'.repeat(32)}  source.tsv.gz\n`);
    const server = await serve(root);
    const to = mkdtempSync(join(tmpdir(), 'sync-'));
    const result = await sync(['--base-url', server.url, '--to', to]);
    expect(result.code, result.stderr).to.equal(1);
    expect(result.stderr).to.match(
      /source\.tsv\.gz failed the checksum check: its md5 is [0-9a-f]{32}, source\.tsv\.gz\.md5/,
    );
    expect(result.summary?.checksums).to.deep.equal(['source.tsv.gz.md5']);
    expect(existsSync(join(to, 'source.tsv.gz'))).to.equal(false);
    expect(existsSync(join(to, 'source.tsv.gz.part'))).to.equal(false);
  });

  it('a second run downloads nothing (304) and says unchanged; a changed file on the server is the only one fetched again', async () => {
    const root = demoFolder();
    const server = await serve(root);
    const to = mkdtempSync(join(tmpdir(), 'sync-'));
    expect((await sync(['--base-url', server.url, '--to', to])).code).to.equal(0);

    const asked = server.requests.length;
    const second = await sync(['--base-url', server.url, '--to', to]);
    expect(second.code, second.stderr).to.equal(0);
    expect(second.summary).to.include({ status: 'done', changed: 0 });
    for (const table of tables) {
      expect(byFile(second.summary)[table]).to.include({ action: 'unchanged', bytes: 0 });
      expect(second.stderr).to.include(`sync: ${table}: unchanged on the server (304), kept`);
      const request = server.requests.slice(asked).find((seen) => seen.file === table);
      expect(request, table).to.include({ status: 304, ifNoneMatch: `"${md5(join(root, table))}"` });
    }

    const text = gunzipSync(readFileSync(join(root, 'source.tsv.gz'))).toString('utf8');
    writeFileSync(
      join(root, 'source.tsv.gz'),
      gzipSync(text.replace('A database of bioactive', 'A database of active')),
    );
    const third = await sync(['--base-url', server.url, '--to', to]);
    expect(third.code, third.stderr).to.equal(0);
    expect(third.summary).to.include({ changed: 1 });
    expect(byFile(third.summary)['source.tsv.gz']).to.include({ action: 'downloaded' });
    expect(byFile(third.summary)['structure.tsv.gz']).to.include({ action: 'unchanged', bytes: 0 });
    expect(byFile(third.summary)['reference.tsv.gz']).to.include({ action: 'unchanged', bytes: 0 });
    expect(md5(join(to, 'source.tsv.gz'))).to.equal(md5(join(root, 'source.tsv.gz')));
  });

  it('--load loads the synced dump: CHEMBL3612928 is served on UCI 1; run again unchanged, it loads nothing', async () => {
    const root = demoFolder();
    const server = await serve(root);
    const to = mkdtempSync(join(tmpdir(), 'sync-'));
    const prefix = freshPrefix('sync-load');
    const env = { ES_INDEX_PREFIX: prefix };
    // --no-fingerprints, passed to the load: the demo's 28,437 fingerprints would take a minute or more.
    const result = await sync(
      ['--base-url', server.url, '--to', to, '--load', '--no-fingerprints', '--no-progress'],
      env,
    );
    expect(result.code, result.stderr).to.equal(0);
    const load = result.summary?.load as Record<string, unknown>;
    expect(load).to.include({ command: 'dump', status: 'done', rowsRejected: 0 });
    const references = gunzipSync(readFileSync(join(root, 'reference.tsv.gz'))).toString('utf8');
    expect(load.rowsRead).to.be.above(references.trim().split('\n').length - 1);
    const structures = gunzipSync(readFileSync(join(root, 'structure.tsv.gz'))).toString('utf8');
    expect(load.structuresWithoutFingerprints).to.equal(structures.trim().split('\n').length - 1);
    expect(load).not.to.have.property('fingerprints');

    const engine = new Engine(testConfig(prefix));
    engines.push(engine);
    const found = await engine.client.search<AssignmentDocument>({
      index: engine.names.assignmentsOf(1),
      query: { term: { compoundId: 'CHEMBL3612928' } },
    });
    expect(found.hits.hits.map((hit) => hit._source!.uci)).to.deep.equal([1]);
    const compounds = await compoundsByKey(engine, ['QZUKGDYPSXQBSQ-XEDFETBMSA-N']);
    expect(compounds.get('QZUKGDYPSXQBSQ-XEDFETBMSA-N')?.uci).to.equal(1);

    const again = await sync(['--base-url', server.url, '--to', to, '--load'], env);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.summary).to.include({ changed: 0, load: 'skipped: unchanged since the last load' });
    expect(again.stderr).to.include('nothing to load');
  });

  it('a command line it cannot run is a usage error: exit 2 with the message and the usage', async () => {
    for (const [args, message] of [
      [[], '--to is missing'],
      [['--to', 'x', '--force-load'], '--force-load goes with --load'],
      [['--to', 'x', '--no-fingerprints'], '--no-fingerprints goes with --load'],
      [['--to', 'x', '--base-url', 'ftp://ftp.ebi.ac.uk/pub'], '--base-url must be an http(s) URL'],
      [['--to', 'x', 'extra'], 'unexpected argument "extra"'],
    ] as const) {
      const result = await sync([...args]);
      expect(result.code, args.join(' ')).to.equal(2);
      expect(result.stderr).to.include(message).and.include('usage: npm run sync -- --to <folder> [options]');
      expect(result.stdout).to.equal('');
    }
  });
});
