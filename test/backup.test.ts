/**
 * `npm run backup` and `npm run restore` (issue 60): a backup of every index of the prefix, restored
 * into an engine that lost them, gives back every answer of both API families byte for byte; a
 * restore over live indices answers 503 meanwhile, never a wrong answer; each command is safe to run
 * twice, and to kill and run again.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { defaultRepository, indicesOfPrefix } from '../src/engine/backups';
import { Engine } from '../src/engine/client';
import { startApi, type RunningApi } from './support/api';
import { answerOf, answersOf, apiQueries, differing, type Query } from './support/answers';
import { deleteIndicesByPrefix } from './support/engine';
import { fixtureDump, fixturesDir, freshPrefix, load, testConfig } from './support/fixture';
import { repoRoot, runToEnd, type Finished } from './support/run';

// The CLI in one process (node --import tsx), so that a kill reaches the command itself, not a launcher.
const node = process.execPath;
const cli = ['--import', 'tsx', join(repoRoot, 'src', 'backup', 'cli.ts')];

/** Every document of every index of the prefix (by index, sorted by id), and every alias. */
async function contentsOf(engine: Engine): Promise<{ documents: Record<string, unknown[]>; aliases: unknown }> {
  const documents: Record<string, unknown[]> = {};
  for (const index of await indicesOfPrefix(engine)) {
    const found = await engine.client.search({ index, size: 10_000, query: { match_all: {} } });
    documents[index] = found.hits.hits
      .map((hit) => ({ id: hit._id, source: hit._source }))
      .sort((a, b) => String(a.id).localeCompare(String(b.id)));
  }
  const aliases = await engine.client.indices.getAlias({ index: `${engine.names.prefix}-*` });
  delete (aliases as Record<string, unknown>)[engine.names.restoring];
  return { documents, aliases };
}

/** What a v1 or legacy error answer must look like: a 503 of its family, with Retry-After. */
function isFamily503(path: string, answer: { status: number; retryAfter: string | null; text: string }): boolean {
  if (answer.status !== 503 || !answer.retryAfter) return false;
  const body = JSON.parse(answer.text) as { response?: string; error?: string };
  return path.startsWith('/rest/')
    ? typeof body.error === 'string' && body.response === undefined
    : body.response === 'Error' && typeof body.error === 'string';
}

describe('backup and restore: npm run backup, npm run restore', function () {
  this.timeout(600_000);
  const prefix = freshPrefix('backup');
  const config = testConfig(prefix);
  const env = { ES_INDEX_PREFIX: prefix };
  let api: RunningApi;
  let engine: Engine;
  let queries: Query[];
  let expected: string[];
  let contents: Awaited<ReturnType<typeof contentsOf>>;
  let backup = '';

  const run = (command: 'backup' | 'restore', ...args: string[]): Promise<Finished> =>
    runToEnd(node, [...cli, command, ...args], env);
  const json = (finished: Finished): Record<string, any> => {
    expect(finished.code, finished.stderr).to.equal(0);
    return JSON.parse(finished.stdout.trim().split('\n').pop()!);
  };

  /**
   * While `work` runs, asks the API a v1 lookup and a legacy one over and over: each answer must be
   * the one known or a 503 of its family. Resolves with how many answers were 503 and what was wrong.
   * `onceRestoring`: answers are judged only once /health has said `restoring` (before, those of an engine already
   * wiped).
   */
  async function watched(
    work: Promise<Finished>,
    onceRestoring = false,
  ): Promise<{ finished: Finished; unavailable: number; wrong: string[] }> {
    const probes = [queries[0], queries.find((query) => query.path.startsWith('/rest/src_compound_id/'))!];
    const known = probes.map((probe) => expected[queries.indexOf(probe)]);
    let done = false;
    let unavailable = 0;
    const wrong: string[] = [];
    let judging = !onceRestoring;
    const asking = (async () => {
      while (!done) {
        judging ||= (await api.get('/health')).body.status === 'restoring';
        await Promise.all(
          probes.map(async (probe, i) => {
            const response = await fetch(
              `${api.url}${probe.path}`,
              probe.body === undefined
                ? {}
                : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(probe.body) },
            );
            const text = await response.text();
            const answer = `${response.status} ${response.headers.get('content-type')} ${text}`;
            if (answer === known[i] || !judging) return;
            if (
              isFamily503(probe.path, {
                status: response.status,
                retryAfter: response.headers.get('retry-after'),
                text,
              })
            )
              unavailable += 1;
            else wrong.push(`${probe.path}: ${answer.slice(0, 200)}`);
          }),
        );
        await sleep(50);
      }
    })();
    const finished = await work;
    done = true;
    await asking;
    return { finished, unavailable, wrong };
  }

  /** Once a restore has ended, the API answers again after its next read of the marker (each second). */
  async function restoreSeenEnded(): Promise<void> {
    for (let i = 0; i < 50 && (await api.get('/health')).body.status === 'restoring'; i += 1) await sleep(100);
  }

  before(async () => {
    await load(prefix, ['dump', fixtureDump], { fingerprints: true });
    // A reload with a row rejected, so the backup holds a rejects index and a changes record too.
    const release = join(tmpdir(), `backup-release-${Date.now()}.tsv`);
    writeFileSync(
      release,
      `${readFileSync(join(fixturesDir, 'releases', 'bzr-release-2.tsv'), 'utf8').trimEnd()}\nBroken\tInChI=1S/not-an-inchi\tNOTAKEY\n`,
    );
    await load(prefix, ['source', '104', release]);
    api = await startApi(config);
    engine = new Engine(config);
    // A finished job, whose state and results the backup holds.
    const submitted = await fetch(`${api.url}/api/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: apiQueries(fixtureDump, { every: 20, structureSearches: false })
        .filter((query) => query.path === '/api/v1/compounds')
        .map((query, id) => JSON.stringify({ id, ...(query.body as object) }))
        .join('\n'),
    });
    const { jobId } = (await submitted.json()) as { jobId: string };
    for (let state = ''; state !== 'done'; await sleep(200)) {
      state = ((await (await fetch(`${api.url}/api/v1/jobs/${jobId}`)).json()) as { status: string }).status;
      expect(state).to.not.equal('failed');
    }
    queries = [
      ...apiQueries(fixtureDump, { loads: true }),
      { path: '/api/v1/sources/104/loads' },
      { path: `/api/v1/jobs/${jobId}` },
      { path: `/api/v1/jobs/${jobId}/results` },
    ];
    expected = await answersOf(api.url, queries);
    contents = await contentsOf(engine);
  });

  after(async () => {
    await api?.stop();
    // This run's backups leave the repository.
    const mine = await engine.client.snapshot
      .get({ repository: defaultRepository, snapshot: `${prefix}-*`, ignore_unavailable: true })
      .catch(() => ({ snapshots: [] }));
    for (const snapshot of mine.snapshots ?? [])
      await engine.client.snapshot.delete({ repository: defaultRepository, snapshot: snapshot.snapshot });
    await engine?.close();
  });

  it('the fixture holds what a backup must keep: rejects, changes, fingerprints, a job, load records', () => {
    const indices = Object.keys(contents.documents);
    for (const part of ['-meta', '-fingerprints', '-changes', '-jobs', '-job-parts', '-rejects-load-'])
      expect(indices.some((index) => index.includes(part), part)).to.equal(true);
    expect(
      expected.filter((answer) => !answer.startsWith('200 ')),
      'every query answers 200',
    ).to.deep.equal([]);
  });

  it('npm run backup prints its name, size and time; run again it adds nothing; --list lists both', async () => {
    const first = await run('backup');
    const made = json(first);
    expect(made).to.include({
      status: 'done',
      repository: defaultRepository,
      indices: Object.keys(contents.documents).length,
    });
    expect(made.backup).to.match(new RegExp(`^${prefix}-\\d{8}-\\d{6}$`));
    expect(made.sizeBytes).to.be.greaterThan(0);
    expect(first.stderr).to.match(
      new RegExp(`backup ${made.backup}: [0-9.]+ [kM]B \\(.* new\\), \\d+ indices, [0-9.]+ s`),
    );
    const again = json(await run('backup'));
    expect(again.backup).to.not.equal(made.backup);
    expect(again.addedBytes, 'the second backup is incremental').to.be.lessThan(made.sizeBytes / 10);
    const listed = (await run('backup', '--list', '--json')).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(listed.map((b) => [b.name, b.state])).to.deep.equal([
      [made.backup, 'SUCCESS'],
      [again.backup, 'SUCCESS'],
    ]);
    expect(listed[0].indices).to.deep.equal(Object.keys(contents.documents));
    const table = await run('backup', '--list');
    expect(table.stdout.split('\n')[0]).to.match(/^name\s+date\s+size\s+indices\s+state$/);
    expect(table.stdout).to.include(made.backup);
    backup = made.backup;
  });

  it('backup, the indices wiped, restore: every answer of the v1 and legacy APIs and every document as before', async () => {
    await deleteIndicesByPrefix(config.ES_URL, prefix);
    const lost = await api.post('/api/v1/compounds', queries[0].body);
    expect(lost.status).to.equal(503);
    // A compound id of a source the API still knows: missing data, not an unknown id (404).
    await sleep(1_100);
    const legacy = queries.find((query) => query.path.startsWith('/rest/src_compound_id/'))!.path;
    const byId = await fetch(`${api.url}${legacy}`);
    const answer = { status: byId.status, retryAfter: byId.headers.get('retry-after'), text: await byId.text() };
    expect(isFamily503(legacy, answer), JSON.stringify(answer)).to.equal(true);
    // Until the API has read the restore's marker it answers as the wiped engine makes it (not judged here).
    const { finished, wrong } = await watched(run('restore', backup), true);
    expect(json(finished)).to.include({ restored: backup, status: 'done', replaced: 0 });
    expect(wrong, 'answers while restoring').to.deep.equal([]);
    await restoreSeenEnded();
    expect(differing(queries, expected, await answersOf(api.url, queries))).to.deep.equal([]);
    expect(await contentsOf(engine)).to.deep.equal(contents);
  });

  it('restore refuses an engine that holds the prefix without --replace, and changes nothing', async () => {
    const refused = await run('restore', backup);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/already holds \d+ indices of prefix .*: pass --replace/);
    const unknown = await run('restore', `${prefix}-nothing`);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('holds no backup named');
    expect(differing(queries, expected, await answersOf(api.url, queries))).to.deep.equal([]);
  });

  it('restore --replace while the API serves: 503 of each family meanwhile, never a wrong answer', async () => {
    let health = '';
    let ready = 0;
    const restoring = run('restore', backup, '--replace');
    const seen = (async () => {
      // /health says so once the API has read the marker.
      for (let i = 0; i < 100 && health !== 'restoring'; i += 1) {
        health = (await api.get('/health')).body.status;
        ready = (await api.get('/ready')).status;
        await sleep(100);
      }
    })();
    const { finished, unavailable, wrong } = await watched(restoring);
    await seen;
    expect(json(finished)).to.include({ restored: backup, status: 'done' });
    expect(wrong, 'answers while restoring').to.deep.equal([]);
    expect(unavailable, '503 answers while restoring').to.be.greaterThan(0);
    expect([health, ready]).to.deep.equal(['restoring', 503]);
    await restoreSeenEnded();
    expect((await api.get('/health')).body.status).to.equal('ok');
    expect(differing(queries, expected, await answersOf(api.url, queries))).to.deep.equal([]);
  });

  it('a restore killed midway leaves the API answering 503; run again, it ends the restore', async () => {
    const child = spawn(node, [...cli, 'restore', backup, '--replace'], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let said = '';
    child.stderr.on('data', (chunk: Buffer) => {
      said += chunk.toString();
    });
    const closed = once(child, 'close');
    while (!/deleting the \d+ indices/.test(said) && child.exitCode === null) await sleep(20);
    child.kill('SIGKILL');
    await closed;
    await sleep(1_500);
    const meanwhile = await answerOf(api.url, queries[0]);
    expect(meanwhile).to.match(/^503 /);
    expect(meanwhile).to.include('restored from the backup');
    const again = await run('restore', backup);
    expect(again.stderr).to.include('did not end: restoring anew');
    expect(json(again)).to.include({ restored: backup, status: 'done' });
    await restoreSeenEnded();
    expect(differing(queries, expected, await answersOf(api.url, queries))).to.deep.equal([]);
    expect(await contentsOf(engine)).to.deep.equal(contents);
  });

  it('a backup killed midway, run again, ends with whole backups only', async () => {
    const child = spawn(node, [...cli, 'backup'], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: 'ignore' });
    const closed = once(child, 'close');
    // Killed once the engine has started its snapshot (unless it has already ended it).
    let exited = false;
    void closed.then(() => (exited = true));
    for (;;) {
      const current = await engine.client.snapshot.get({ repository: defaultRepository, snapshot: '_current' });
      if (exited || current.snapshots?.some((snapshot) => snapshot.snapshot.startsWith(prefix))) break;
      await sleep(20);
    }
    child.kill('SIGKILL');
    await closed;
    json(await run('backup'));
    const listed = (await run('backup', '--list', '--json')).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { state: string });
    expect(listed.map((b) => b.state).filter((state) => state !== 'SUCCESS')).to.deep.equal([]);
  });
});
