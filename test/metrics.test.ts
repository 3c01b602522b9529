import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { startApi, type RunningApi } from './support/api';
import { fixtureDump, fixturePrefix, testConfig } from './support/fixture';

/** The value of one series of a Prometheus text exposition (0 when absent). */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, wanted]) => present[key] === wanted)) return Number(match[3]);
  }
  return 0;
}

describe('GET /metrics (Prometheus)', function () {
  this.timeout(120_000);
  let api: RunningApi;
  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
  });
  after(async () => {
    await api.stop();
  });

  const scrape = async (): Promise<string> => {
    const response = await api.get('/metrics');
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return response.text;
  };

  it('counts lookups by route template, method and status, with their latency', async () => {
    const before = await scrape();
    const route = { route: '/api/v1/compounds', method: 'POST', status: '200' };
    for (let i = 0; i < 3; i += 1)
      expect(
        (await api.post('/api/v1/compounds', { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' })).status,
      ).to.equal(200);
    expect((await api.get('/rest/src_compound_id/CHEMBL112/1')).status).to.equal(200);
    expect((await api.get('/api/v1/nothing-here')).status).to.equal(404);
    const after = await scrape();
    expect(
      value(after, 'chemxref_http_requests_total', route) - value(before, 'chemxref_http_requests_total', route),
    ).to.equal(3);
    expect(
      value(after, 'chemxref_http_request_duration_seconds_count', route) -
        value(before, 'chemxref_http_request_duration_seconds_count', route),
    ).to.equal(3);
    expect(
      value(after, 'chemxref_http_requests_total', {
        route: '/rest/src_compound_id/:id/:src',
        method: 'GET',
        status: '200',
      }),
    ).to.be.at.least(1);
    expect(
      value(after, 'chemxref_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }),
    ).to.be.at.least(1);
    // The scrape that produced `after` is itself in flight while it is answered.
    expect(value(after, 'chemxref_http_requests_in_flight')).to.equal(1);
  });

  it('times the engine requests by operation and counts the searches each _msearch carries', async () => {
    const before = await scrape();
    await Promise.all(
      ['RZVAJINKPMORJF-UHFFFAOYSA-N', 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N'].map((compound) =>
        api.post('/api/v1/compounds', { type: 'inchikey', compound }),
      ),
    );
    const after = await scrape();
    expect(value(after, 'chemxref_engine_request_duration_seconds_count', { operation: 'msearch' })).to.be.above(
      value(before, 'chemxref_engine_request_duration_seconds_count', { operation: 'msearch' }),
    );
    expect(value(after, 'chemxref_engine_msearch_searches_sum')).to.be.above(
      value(before, 'chemxref_engine_msearch_searches_sum'),
    );
    expect(value(after, 'chemxref_engine_request_errors_total', { operation: 'msearch' })).to.equal(0);
  });

  it(
    "reports the process (CPU, memory, event loop) and each source's last " + 'load, read from the load records',
    async () => {
      const text = await scrape();
      expect(value(text, 'process_cpu_seconds_total')).to.be.above(0);
      expect(value(text, 'process_resident_memory_bytes')).to.be.above(0);
      expect(text).to.match(/^nodejs_eventloop_lag_p99_seconds /m);
      expect(value(text, 'chemxref_source_last_load_read')).to.equal(1);
      const chembl = { source_id: '1', source: 'chembl' };
      // The fixture's dump: its reference table replaced every source, ChEMBL among them.
      expect(value(text, 'chemxref_source_last_load_status', { ...chembl, status: 'done' })).to.equal(1);
      // Its own rows of the dump, not the dump's total repeated on every source.
      const references = gunzipSync(readFileSync(join(fixtureDump, 'reference.tsv.gz'))).toString('utf8');
      const chemblRows = references.split('\n').filter((row) => row.split('\t')[1] === '1').length;
      expect(value(text, 'chemxref_source_last_load_rows_loaded', chembl)).to.equal(chemblRows);
      expect(value(text, 'chemxref_source_last_load_rows_rejected', chembl)).to.equal(0);
      const age = value(text, 'chemxref_source_last_load_age_seconds', chembl);
      expect(age).to.be.at.least(0).and.below(3600);
      expect(value(text, 'chemxref_source_last_load_end_timestamp_seconds', chembl)).to.be.closeTo(
        Date.now() / 1000 - age,
        60,
      );
    },
  );
});
