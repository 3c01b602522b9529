import { expect } from 'chai';
import { openApiDocument } from '../src/api/document';
import { startApi, type RunningApi } from './support/api';
import { fixturePrefix, testConfig } from './support/fixture';

/** POSTs a batch and reads its NDJSON lines. */
async function batch(
  api: RunningApi,
  body: string,
  contentType: string,
): Promise<{ status: number; lines: any[]; text: string; headers: Headers }> {
  const response = await fetch(`${api.url}/api/v1/batch`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
  const text = await response.text();
  const lines = response.headers.get('content-type')?.startsWith('application/x-ndjson')
    ? text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
  return { status: response.status, lines, text, headers: response.headers };
}

const mixed: Record<string, unknown>[] = [
  { id: 'key', type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' },
  { id: 'chembl', type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 },
  { id: 7, type: 'uci', compound: 229, sourceID: '' },
  { id: 'inchi', type: 'inchi', compound: 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)' },
  { id: 'isoleucine', op: 'connectivity', type: 'inchikey', compound: 'AGPKZVBTJJNPAG-WHFBIAKZSA-N' },
  { id: 'salt', op: 'connectivity', type: 'sourceID', compound: 'CHEMBL1511957', sourceID: 1, searchComponents: true },
  { id: 'smiles', type: 'smiles', compound: 'CC(=O)Nc1ccc(O)cc1' },
  { id: 'smiles connectivity', op: 'connectivity', type: 'smiles', compound: 'CC[C@H](C)[C@H](N)C(=O)O' },
  { id: 'bad smiles', type: 'smiles', compound: 'C1CC' },
  { id: 'not found', type: 'inchikey', compound: 'AAAAAAAAAAAAAA-BBBBBBBBSA-N' },
  { id: 'unknown source', type: 'sourceID', compound: 'CHEMBL112', sourceID: 99999 },
  { id: 'bad key', type: 'inchikey', compound: 'RZVAJINKPMORJF' },
  { id: 'bad inchi', type: 'inchi', compound: 'InChI=1S/C8H9NO2/c1-6(10' },
  { id: 'no type', compound: 'CHEMBL112' },
  { id: 'bad type', type: 'smarts', compound: 'CC' },
  { id: 'no sourceID', type: 'sourceID', compound: 'CHEMBL112' },
  { id: 'unknown field', type: 'uci', compound: '229', colour: 'blue' },
  { id: null, type: 'uci', compound: '0' },
  { type: 'inchikey', compound: '   ' },
];

describe('POST /api/v1/batch', function () {
  this.timeout(300_000);
  let api: RunningApi;

  before(async () => {
    api = await startApi(testConfig(await fixturePrefix(), { BATCH_MAX_QUERIES: '50', BATCH_CONCURRENCY: '4' }));
  });
  after(async () => {
    await api?.stop();
  });

  it('answers mixed queries line by line exactly as the single endpoints do', async () => {
    const { status, lines, headers } = await batch(api, JSON.stringify({ queries: mixed }), 'application/json');
    expect(status).to.equal(200);
    expect(headers.get('x-batch-queries')).to.equal(String(mixed.length));
    expect(lines.map((line) => line.index)).to.deep.equal(mixed.map((_query, i) => i));
    for (const [i, query] of mixed.entries()) {
      const { op, id, ...request } = query;
      const single = await api.post(`/api/v1/${op ?? 'compounds'}`, request);
      expect(lines[i], JSON.stringify(query)).to.deep.equal({
        index: i,
        ...(id === undefined ? {} : { id }),
        status: single.status,
        body: single.body,
      });
    }
    expect(lines.map((line) => line.status)).to.deep.equal([
      200, 200, 200, 200, 200, 200, 200, 200, 400, 200, 404, 400, 400, 400, 400, 400, 400, 400, 400,
    ]);
  });

  it('takes NDJSON, one query a line, and answers a line that is not JSON in its place', async () => {
    const body = [
      '{"id": 1, "type": "inchikey", "compound": "RZVAJINKPMORJF-UHFFFAOYSA-N"}',
      '',
      '{"type": "inchikey", "compound": ',
      '  ["a list"]',
      '{"op": "mapping", "type": "uci", "compound": "1"}',
      '{"id": {"no": 1}, "type": "uci", "compound": "1"}',
    ].join('\r\n');
    const { status, lines } = await batch(api, body, 'application/x-ndjson');
    expect(status).to.equal(200);
    expect(lines.map((line) => [line.index, line.status])).to.deep.equal([
      [0, 200],
      [1, 400],
      [2, 400],
      [3, 400],
      [4, 400],
    ]);
    expect(lines[0].id).to.equal(1);
    expect(lines[0].body.compounds[0].standardInchiKey).to.equal('RZVAJINKPMORJF-UHFFFAOYSA-N');
    expect(lines[1].body.error).to.match(/^query 1 is not valid JSON/);
    expect(lines[2].body.error).to.equal(
      'query 2 must be a JSON object, such as {"type": "inchikey", "compound": "..."}',
    );
    expect(lines[3].body.error).to.equal(
      '"op" is "mapping": it must be "compounds", "connectivity", "similarity" or "substructure"',
    );
    expect(lines[4].body.error).to.match(/"id" must be a string, a number, a boolean or null/);
  });

  it('refuses more queries than BATCH_MAX_QUERIES with a 413 before answering any', async () => {
    const queries = Array.from({ length: 51 }, () => ({ type: 'uci', compound: '1' }));
    for (const [body, type] of [
      [JSON.stringify({ queries }), 'application/json'],
      [queries.map((query) => JSON.stringify(query)).join('\n'), 'application/x-ndjson'],
    ]) {
      const { status, text } = await batch(api, body, type);
      expect(status).to.equal(413);
      expect(JSON.parse(text).error).to.match(/more than the 50 it may hold: send it in several batches, or as a job/);
    }
  });

  it('a batch of 10,001 queries gets 413 under the default BATCH_MAX_QUERIES, saying what to do', async () => {
    const defaults = await startApi(testConfig(await fixturePrefix()));
    try {
      const queries = Array.from({ length: 10_001 }, () => ({
        type: 'inchikey',
        compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N',
      }));
      const { status, text } = await batch(defaults, JSON.stringify({ queries }), 'application/json');
      expect([status, JSON.parse(text).error]).to.deep.equal([
        413,
        'the batch has 10001 queries, more than the 10000 it may hold: send it ' +
          'in several batches, or as a job (POST /api/v1/jobs)',
      ]);
      const ten = await batch(defaults, JSON.stringify({ queries: queries.slice(1) }), 'application/json');
      expect([ten.status, ten.lines.length, ten.lines[9_999].index]).to.deep.equal([200, 10_000, 9_999]);
    } finally {
      await defaults.stop();
    }
  });

  it(
    'refuses exactly the bodies its documented schema refuses: the ' + 'envelope checked, each query on its line',
    async () => {
      // Refused by the schema of the body (an object holding only a list "queries"): 400.
      const refused = ['[]', '{}', '{"queries": {}}', '{"queries": "CHEMBL112"}', '{"queries": [], "id": 1}', 'null'];
      for (const body of refused) {
        const answer = await batch(api, body, 'application/json');
        expect([answer.status, JSON.parse(answer.text).response], body).to.deep.equal([400, 'Error']);
      }
      // Admitted by it, whatever the queries are (any item, an empty list): 200, one line a query.
      const admitted = [
        ['{"queries": []}', 0],
        ['{"queries": [null, 1, "x", [], {}, {"type": "uci"}]}', 6],
      ] as const;
      for (const [body, count] of admitted) {
        const answer = await batch(api, body, 'application/json');
        expect([answer.status, answer.lines.length], body).to.deep.equal([200, count]);
      }
      // NDJSON is bytes, one query a line: any body is answered line by line.
      for (const [body, count] of [
        ['{}\n', 1],
        ['[]\n0\nnull\n', 3],
        ['not json', 1],
        ['', 0],
      ] as const) {
        const answer = await batch(api, body, 'application/x-ndjson');
        expect([answer.status, answer.lines.length], body).to.deep.equal([200, count]);
        expect(
          answer.lines.every((line) => line.status === 400),
          body,
        ).to.equal(true);
      }
      // Too many queries is a 413: BATCH_MAX_QUERIES is configured, not a bound of the schema (which would be a 400).
      const document = openApiDocument() as unknown as { components: { schemas: Record<string, any> } };
      expect(document.components.schemas.BatchRequest.properties.queries).to.not.have.property('maxItems');
    },
  );

  it('says what a batch body must be', async () => {
    expect(
      JSON.parse((await batch(api, '[{"type": "uci", "compound": "1"}]', 'application/json')).text).error,
    ).to.match(/^the body must be a JSON object with a list of queries/);
    expect(JSON.parse((await batch(api, '{"queries": [], "more": 1}', 'application/json')).text).error).to.match(
      /"more" is not part of this request/,
    );
    expect(JSON.parse((await batch(api, '{"queries": [', 'application/json')).text).error).to.match(
      /^the body is not valid JSON/,
    );
    const wrongType = await batch(api, 'CHEMBL112', 'text/plain');
    expect(wrongType.status).to.equal(415);
    expect(JSON.parse(wrongType.text).error).to.match(/NDJSON \(Content-Type: application\/x-ndjson/);
    const empty = await batch(api, '{"queries": []}', 'application/json');
    expect([empty.status, empty.text]).to.deep.equal([200, '']);
  });
});
