import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Engine } from '../src/engine/client';
import { deleteJobs } from '../src/engine/jobs';
import { startApi, type RunningApi } from './support/api';
import { fixturePrefix, fixturesDir, testConfig } from './support/fixture';

const sourceIds: Record<string, number> = { chembl: 1, zinc: 9, pubchem: 22, nci: 101 };
const fixture = readFileSync(join(fixturesDir, 'molecules-fixture.tsv'), 'utf8')
  .split('\n')
  .slice(1)
  .filter(Boolean)
  .map((line) => {
    const [source, id, , , key] = line.split('\t');
    return { source, id, key };
  });

/** `count` queries cycling through the fixture: keys, source ids and now and then a bad key. */
function queries(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => {
    const row = fixture[i % fixture.length];
    if (i % 97 === 0) return { id: i, type: 'inchikey', compound: 'NOT-A-KEY' };
    if (i % 2 === 0 || !sourceIds[row.source]) return { id: i, type: 'inchikey', compound: row.key };
    return { id: i, type: 'sourceID', compound: row.id, sourceID: sourceIds[row.source] };
  });
}

async function submit(
  api: RunningApi,
  body: string,
  contentType = 'application/x-ndjson',
  query = '',
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${api.url}/api/v1/jobs${query}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

async function results(
  api: RunningApi,
  jobId: string,
  from?: number,
): Promise<{ status: number; lines: any[]; headers: Headers; text: string }> {
  const response = await fetch(`${api.url}/api/v1/jobs/${jobId}/results${from === undefined ? '' : `?from=${from}`}`);
  const text = await response.text();
  const lines =
    response.status === 200
      ? text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      : [];
  return { status: response.status, lines, headers: response.headers, text };
}

async function waitFor(
  api: RunningApi,
  jobId: string,
  until: (job: any) => boolean,
  timeoutMs = 240_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await api.get(`/api/v1/jobs/${jobId}`);
    if (until(body)) return body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} did not get there: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** How many jobs the engine holds under `prefix`. */
async function jobCount(prefix: string): Promise<number> {
  const engine = new Engine(testConfig(prefix));
  try {
    await engine.client.indices.refresh({ index: engine.names.jobs }, { ignore: [404] });
    const { count } = await engine.client.count({ index: engine.names.jobs }, { ignore: [404] });
    return count ?? 0;
  } finally {
    await engine.close();
  }
}

describe('jobs: /api/v1/jobs', function () {
  this.timeout(600_000);
  let prefix: string;
  let api: RunningApi | undefined;
  const submitted: string[] = [];

  before(async () => {
    prefix = await fixturePrefix();
  });
  afterEach(async () => {
    await api?.stop();
    api = undefined;
    // Jobs live under the shared fixture's prefix: none is left for other test files' services to run.
    const engine = new Engine(testConfig(prefix));
    try {
      await deleteJobs(engine, submitted.splice(0));
    } finally {
      await engine.close();
    }
  });

  it('a job of 30,000 queries (30 parts) completes across a restart of the API, and its results resume from a line', async () => {
    const config = testConfig(prefix, { JOB_CONCURRENCY: '32' });
    api = await startApi(config);
    const all = queries(30_000);
    const accepted = await submit(api, all.map((query) => JSON.stringify(query)).join('\n'));
    expect(accepted.status).to.equal(202);
    expect(accepted.body).to.include({ status: 'queued', total: 30_000 });
    expect(accepted.body.jobId).to.match(/^[0-9a-f]{32}$/);
    expect(accepted.headers.get('location')).to.equal(`/api/v1/jobs/${accepted.body.jobId}`);
    const { jobId } = accepted.body;
    submitted.push(jobId);

    // Under way: lookups still answer, and the job says how fast it goes.
    const running = await waitFor(api, jobId, (job) => job.done >= 2_000);
    expect(running.status).to.equal('running');
    const lookup = await api.post('/api/v1/compounds', { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' });
    expect(lookup.body.response).to.equal('Success');
    const partial = await results(api, jobId, 10);
    expect(partial.lines[0].index).to.equal(10);
    expect(partial.lines.length).to.equal(Number(partial.headers.get('x-job-done')) - 10);

    await api.stop();
    api = await startApi(config);
    const handedBack = (await api.get(`/api/v1/jobs/${jobId}`)).body;
    expect(handedBack.done).to.be.greaterThan(0).and.lessThan(30_000);
    const done = await waitFor(api, jobId, (job) => job.status === 'done');
    expect(done).to.include({ total: 30_000, done: 30_000, errors: Math.ceil(30_000 / 97) });
    expect(new Date(done.finished).getTime()).to.be.greaterThan(new Date(done.started).getTime());

    const whole = await results(api, jobId);
    expect(whole.headers.get('x-job-status')).to.equal('done');
    expect(whole.lines.map((line) => line.index)).to.deep.equal(all.map((_query, i) => i));
    expect(whole.lines.map((line) => line.id)).to.deep.equal(all.map((query) => query.id));
    // Line by line what the single endpoint answers (a sample).
    for (const i of [0, 1, 97, 1_999, 2_001, 17_777, 29_999]) {
      const { id, ...request } = all[i];
      const single = await api.post('/api/v1/compounds', request);
      expect(whole.lines[i], `line ${i}`).to.deep.equal({ index: i, id, status: single.status, body: single.body });
    }
    const tail = await results(api, jobId, 29_990);
    expect(tail.lines.map((line) => line.index)).to.deep.equal([
      29_990, 29_991, 29_992, 29_993, 29_994, 29_995, 29_996, 29_997, 29_998, 29_999,
    ]);
    expect(tail.text).to.equal(`${whole.text.split('\n').slice(29_990).join('\n')}`);
    expect((await results(api, jobId, 30_000)).text).to.equal('');
  });

  it('maps a plain list of ChEMBL ids, with its type and source as parameters', async () => {
    api = await startApi(testConfig(prefix));
    const accepted = await submit(
      api,
      'CHEMBL112\nCHEMBL0\n\n  CHEMBL1511957  \n',
      'text/plain; charset=utf-8',
      '?type=sourceID&sourceID=1',
    );
    expect(accepted.status).to.equal(202);
    submitted.push(accepted.body.jobId);
    const done = await waitFor(api, accepted.body.jobId, (job) => job.status === 'done');
    expect(done).to.include({ total: 3, done: 3, errors: 0 });
    const { lines } = await results(api, accepted.body.jobId);
    expect(lines.map((line) => [line.index, line.status, line.body.response])).to.deep.equal([
      [0, 200, 'Success'],
      [1, 200, 'Not found'],
      [2, 200, 'Success'],
    ]);
    expect(lines[0].body.compounds[0].standardInchiKey).to.equal('RZVAJINKPMORJF-UHFFFAOYSA-N');
  });

  it('maps a plain list of names, as typed; names with another op are refused whole', async () => {
    api = await startApi(testConfig(prefix));
    const accepted = await submit(api, 'diazepam\n  Nordazepam \nno such drug\n', 'text/plain', '?type=name');
    expect(accepted.status).to.equal(202);
    submitted.push(accepted.body.jobId);
    await waitFor(api, accepted.body.jobId, (job) => job.status === 'done');
    const { lines } = await results(api, accepted.body.jobId);
    expect(lines.map((line) => [line.status, line.body.response, line.body.names?.[0]?.name])).to.deep.equal([
      [200, 'Success', 'Diazepam'],
      [200, 'Success', 'Nordazepam'],
      [200, 'Not found', undefined],
    ]);
    const refused = await submit(api, 'diazepam\n', 'text/plain', '?type=name&op=connectivity');
    expect(refused.status).to.equal(400);
    expect(refused.body.error).to.equal('"type" name goes with "op" compounds: a name cannot be given to connectivity');
  });

  it('maps a plain list of SMARTS as substructure searches; SMARTS with another op is refused whole', async () => {
    api = await startApi(testConfig(prefix));
    const accepted = await submit(
      api,
      'c1ccc2ncccc2c1\n[#6]S(=O)(=O)[NX3]\n',
      'text/plain',
      '?type=smarts&op=substructure',
    );
    expect(accepted.status).to.equal(202);
    submitted.push(accepted.body.jobId);
    await waitFor(api, accepted.body.jobId, (job) => job.status === 'done');
    const { lines } = await results(api, accepted.body.jobId);
    expect(lines.map((line) => [line.status, line.body.complete, line.body.results.length > 0])).to.deep.equal([
      [200, true, true],
      [200, true, true],
    ]);
    const refused = await submit(api, 'c1ccccc1\n', 'text/plain', '?type=smarts');
    expect(refused.status).to.equal(400);
    expect(refused.body.error).to.match(/smarts goes with "op" substructure/);
  });

  it('the fifth job while four are queued or running gets 429, and a refused job leaves nothing', async () => {
    api = await startApi(testConfig(prefix, { JOB_CONCURRENCY: '1' }));
    const slow = queries(20_000)
      .map((query) => JSON.stringify({ ...query, op: 'connectivity' }))
      .join('\n');
    for (let i = 0; i < 4; i += 1) {
      const accepted = await submit(api, slow);
      expect(accepted.status).to.equal(202);
      submitted.push(accepted.body.jobId);
    }
    const fifth = await submit(api, slow);
    expect(fifth.status).to.equal(429);
    expect(fifth.headers.get('retry-after')).to.equal('60');
    expect(fifth.body.error).to.match(
      /^4 jobs are queued or running, the most this service takes at once \(JOB_MAX_ACTIVE 4\)/,
    );
    const statuses = await Promise.all(
      submitted.map(async (jobId) => (await api!.get(`/api/v1/jobs/${jobId}`)).body.status),
    );
    expect(statuses.filter((status) => status === 'running')).to.have.length(1);
    expect(statuses.filter((status) => status === 'queued')).to.have.length(3);
  });

  it('says what is wrong with a job, an unknown job and a line number', async () => {
    api = await startApi(testConfig(prefix, { JOB_MAX_QUERIES: '3' }));
    const refused = async (body: string, type: string, query = ''): Promise<[number, string]> => {
      const { status, body: answer } = await submit(api!, body, type, query);
      return [status, answer.error];
    };
    expect(await refused('1\n2\n3\n4', 'text/plain', '?type=uci')).to.deep.equal([
      413,
      'the job has more than the 3 queries a job may hold (JOB_MAX_QUERIES): split it into several jobs',
    ]);
    expect(await refused('CHEMBL112', 'text/plain')).to.deep.equal([
      400,
      'a list of compounds needs ?type=: what each line is, one of uci, inchi, inchikey, sourceID, smiles, molfile, ' +
        'smarts, name',
    ]);
    expect((await refused('CHEMBL112', 'text/plain', '?type=sourceID'))[1]).to.match(/needs \?sourceID=/);
    expect((await refused('CHEMBL112', 'text/plain', '?type=sourceID&sourceID=1&colour=blue'))[1]).to.match(
      /"colour" is not part of this request/,
    );
    const typed = await refused('{"type": "uci", "compound": "1"}', 'application/x-ndjson', '?type=formula');
    expect(typed[1]).to.match(/"type" must be one of uci/);
    expect(await refused('CHEMBL112', 'text/plain', '?type=sourceID&sourceID=2147483648')).to.deep.equal([
      400,
      '"sourceID" is "2147483648": it must be the id of a source, a whole number from 1 to 2147483647',
    ]);
    expect((await refused('{"queries": []}', 'application/json'))[0]).to.equal(415);
    expect((await api.get('/api/v1/jobs/0123456789abcdef0123456789abcdef')).status).to.equal(404);
    expect((await api.get('/api/v1/jobs/nothing/results')).status).to.equal(404);
    const accepted = await submit(api, '{"type": "uci", "compound": "1"}', 'application/x-ndjson');
    submitted.push(accepted.body.jobId);
    expect((await results(api, accepted.body.jobId, -1 as number)).status).to.equal(400);
  });

  it(
    'a list of ids of source 999, which does not exist, is refused at ' + 'submission with a 404, leaving no job',
    async () => {
      api = await startApi(testConfig(prefix));
      const before = await jobCount(prefix);
      for (const [body, type, query] of [
        ['CHEMBL112\nCHEMBL25\n', 'text/plain', '?type=sourceID&sourceID=999'],
        ['CHEMBL112\n', 'text/plain; charset=utf-8', '?type=sourceID&sourceID=2147483647&op=connectivity'],
        ['{"type": "sourceID", "compound": "CHEMBL112"}\n', 'application/x-ndjson', '?sourceID=999'],
      ]) {
        const answer = await submit(api, body, type, query);
        const error = `source ${/sourceID=(\d+)/.exec(query)![1]} does not exist`;
        expect([answer.status, answer.body], query).to.deep.equal([404, { response: 'Error', error, errors: [] }]);
      }
      expect(await jobCount(prefix)).to.equal(before);
    },
  );

  it('a job of no queries (an empty body, or blank lines) is done at once, with no result line', async () => {
    api = await startApi(testConfig(prefix));
    for (const [body, type, query] of [
      ['', 'application/x-ndjson', ''],
      ['\n \n', 'text/plain', '?type=inchikey'],
    ]) {
      const accepted = await submit(api, body, type, query);
      expect([accepted.status, accepted.body.total], JSON.stringify(body)).to.deep.equal([202, 0]);
      submitted.push(accepted.body.jobId);
      expect(await waitFor(api, accepted.body.jobId, (job) => job.status === 'done')).to.include({ total: 0, done: 0 });
      expect((await results(api, accepted.body.jobId)).text).to.equal('');
    }
  });

  it('paging past the last result line gets an empty page (200), as at the end', async () => {
    api = await startApi(testConfig(prefix));
    const query = '{"type": "inchikey", "compound": "RZVAJINKPMORJF-UHFFFAOYSA-N"}\n';
    const accepted = await submit(api, query, 'application/x-ndjson');
    submitted.push(accepted.body.jobId);
    await waitFor(api, accepted.body.jobId, (job) => job.status === 'done');
    const last = await results(api, accepted.body.jobId, 0);
    expect(last.lines.map((line) => [line.index, line.status])).to.deep.equal([[0, 200]]);
    for (const from of [1, 2, 9_999_999_999]) {
      const page = await results(api, accepted.body.jobId, from);
      const seen = [page.status, page.text, page.headers.get('x-job-status'), page.headers.get('x-job-total')];
      expect(seen, String(from)).to.deep.equal([200, '', 'done', '1']);
    }
  });

  it('searchComponents is read by connectivity searches only: lookups with it are answered as lookups', async () => {
    api = await startApi(testConfig(prefix));
    const list = (ids: string, query: string) => submit(api!, ids, 'text/plain', `?type=sourceID&sourceID=1&${query}`);
    const lookups = await list('CHEMBL112\n', 'op=compounds&searchComponents=true');
    const noOp = await list('CHEMBL112\n', 'searchComponents=false');
    const searches = await list('CHEMBL1511957\n', 'op=connectivity&searchComponents=true');
    for (const accepted of [lookups, noOp, searches]) {
      expect(accepted.status).to.equal(202);
      submitted.push(accepted.body.jobId);
    }
    const single = await api.post('/api/v1/compounds', { type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 });
    for (const accepted of [lookups, noOp]) {
      await waitFor(api, accepted.body.jobId, (job) => job.status === 'done');
      const { lines } = await results(api, accepted.body.jobId);
      expect(lines).to.deep.equal([{ index: 0, status: 200, body: single.body }]);
    }
    await waitFor(api, searches.body.jobId, (job) => job.status === 'done');
    const [search] = (await results(api, searches.body.jobId)).lines;
    const connectivity = await api.post('/api/v1/connectivity', {
      type: 'sourceID',
      compound: 'CHEMBL1511957',
      sourceID: 1,
      searchComponents: true,
    });
    expect(search).to.deep.equal({ index: 0, status: 200, body: connectivity.body });
    const relations = search.body.sources.map((entry: { typeOfSearch: string }) => entry.typeOfSearch);
    expect(relations).to.include('componentIsResult');
  });

  it('with NDJSON queries the parameters fill in what a query does not say itself', async () => {
    api = await startApi(testConfig(prefix));
    const body = [
      '{"id": "a", "compound": "CHEMBL112"}',
      '{"id": "b", "type": "inchikey", "compound": "RZVAJINKPMORJF-UHFFFAOYSA-N"}',
      '{"id": "c", "compound": "CHEMBL112", "op": "compounds"}',
      'not json',
    ].join('\n');
    const accepted = await submit(api, body, 'application/x-ndjson', '?type=sourceID&sourceID=1&op=connectivity');
    expect(accepted.status).to.equal(202);
    submitted.push(accepted.body.jobId);
    await waitFor(api, accepted.body.jobId, (job) => job.status === 'done');
    const { lines } = await results(api, accepted.body.jobId);
    const expected = [
      await api.post('/api/v1/connectivity', { type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 }),
      await api.post('/api/v1/connectivity', { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' }),
      await api.post('/api/v1/compounds', { type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 }),
    ];
    const answers = expected.map((single, index) => ({
      index,
      id: 'abc'[index],
      status: single.status,
      body: single.body,
    }));
    expect(lines.slice(0, 3)).to.deep.equal(answers);
    expect(lines[3].status).to.equal(400);
    expect(lines[3].body.error).to.match(/^query 3 is not valid JSON/);
  });

  it('JOBS_ENABLED=false turns every jobs path off', async () => {
    api = await startApi(testConfig(prefix, { JOBS_ENABLED: 'false' }));
    const { status, body } = await submit(api, 'CHEMBL112', 'text/plain', '?type=sourceID&sourceID=1');
    expect([status, body.error]).to.deep.equal([404, 'jobs are turned off on this service (JOBS_ENABLED=false)']);
    expect((await api.get('/api/v1/jobs/0123456789abcdef0123456789abcdef')).status).to.equal(404);
  });
});
