/**
 * The requests real UniChem clients send, replayed as they send them (bioservices 1.16.0,
 * chembl_webresource_client 0.10.9, small wrappers), and the answers they read.
 */
import { expect } from 'chai';
import { startApi, type RunningApi } from './support/api';
import { fixturePrefix, testConfig } from './support/fixture';

type Json = any;

const paracetamol = { key: 'RZVAJINKPMORJF-UHFFFAOYSA-N', uci: 614, chembl: 'CHEMBL112', nsc: '3991' };
const glucoseBlock = 'GZCGUPFRVQAUEE';
// NSC 4587 (source 101) is obsolete on UCI 72, whose current NSC id is 4586.
const obsoleteNsc = { id: '4587', current: '4586', uci: 72, key: 'CAYMSCGTKZIVTN-UHFFFAOYSA-N' };

describe('requests real UniChem clients send', function () {
  this.timeout(300_000);
  let api: RunningApi;

  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
  });
  after(async () => {
    await api?.stop();
  });

  const send = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; headers: Headers; text: string; body: Json }> => {
    const response = await fetch(`${api.url}${path}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
    });
    const text = await response.text();
    let parsed: Json;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  };

  describe('v1: a sourceID that does not apply is ignored, a UCI may be a number', () => {
    const ucisOf = (body: Json): number[] => body.compounds.map((c: Json) => c.uci);

    it('bioservices get_compounds by InChIKey sends "sourceID": "" and gets paracetamol', async () => {
      const { status, body } = await api.post('/api/v1/compounds', {
        type: 'inchikey',
        compound: paracetamol.key,
        sourceID: '',
      });
      expect(status).to.equal(200);
      expect(ucisOf(body)).to.deep.equal([paracetamol.uci]);
    });

    it('"sourceID": 0, null, "" or a string with type uci or inchi are ignored too', async () => {
      for (const sourceID of [0, null, '', 'chembl', -1, 1.5]) {
        const byUci = await api.post('/api/v1/compounds', { type: 'uci', compound: String(paracetamol.uci), sourceID });
        expect(byUci.status, `sourceID ${JSON.stringify(sourceID)}`).to.equal(200);
        expect(ucisOf(byUci.body)).to.deep.equal([paracetamol.uci]);
      }
      const byInchi = await api.post('/api/v1/compounds', {
        type: 'inchi',
        compound: 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)',
        sourceID: 0,
      });
      expect(ucisOf(byInchi.body)).to.deep.equal([paracetamol.uci]);
    });

    it('bioservices get_connectivity sends "sourceID": "" and gets the skeleton\'s structures', async () => {
      const { status, body } = await api.post('/api/v1/connectivity', {
        type: 'inchikey',
        compound: paracetamol.key,
        sourceID: '',
      });
      expect(status).to.equal(200);
      expect(body.response).to.equal('Success');
      expect(body.searchedCompound.uci).to.equal(paracetamol.uci);
    });

    it('a UCI as a JSON number works like the string', async () => {
      const asNumber = await api.post('/api/v1/compounds', { type: 'uci', compound: paracetamol.uci });
      const asString = await api.post('/api/v1/compounds', { type: 'uci', compound: String(paracetamol.uci) });
      expect(asNumber.status).to.equal(200);
      expect(asNumber.body).to.deep.equal(asString.body);
      const connectivity = await api.post('/api/v1/connectivity', {
        type: 'uci',
        compound: paracetamol.uci,
        sourceID: 0,
      });
      expect(connectivity.body).to.deep.equal(
        (await api.post('/api/v1/connectivity', { type: 'uci', compound: String(paracetamol.uci) })).body,
      );
    });

    it("a type sent as a list (R's jsonlite without auto_unbox) is a 400 that says so", async () => {
      const { status, body } = await api.post('/api/v1/compounds', { type: ['inchikey'], compound: [paracetamol.key] });
      expect(status).to.equal(400);
      expect(body.error).to.equal(
        '"type" is ["inchikey"]: it must be a string, one of uci, inchi, inchikey, sourceID, smiles, molfile, name',
      );
    });

    it('with type sourceID, sourceID is still required and checked', async () => {
      for (const [sourceID, message] of [
        [undefined, /needs "sourceID"/],
        ['', /"sourceID" is "": it must be integer/],
        [0, /"sourceID" is 0: it must be >= 1/],
        [null, /"sourceID" is null: it must be integer/],
      ] as const) {
        const { status, body } = await api.post('/api/v1/compounds', {
          type: 'sourceID',
          compound: paracetamol.chembl,
          ...(sourceID === undefined ? {} : { sourceID }),
        });
        expect(status, `sourceID ${JSON.stringify(sourceID)}`).to.equal(400);
        expect(body.error).to.match(message);
      }
    });

    it(
      'a UCI of 0, a negative or fractional number, or a number as an ' + 'InChIKey is a 400 naming the problem',
      async () => {
        for (const [body, message] of [
          [{ type: 'uci', compound: '0' }, /"0" is not a UCI/],
          [{ type: 'uci', compound: 0 }, /"0" is not a UCI/],
          [{ type: 'uci', compound: -3 }, /"-3" is not a UCI/],
          [{ type: 'uci', compound: 1.5 }, /"1.5" is not a UCI/],
          [{ type: 'inchikey', compound: 614 }, /"compound" must be a string/],
        ] as const) {
          const answer = await api.post('/api/v1/compounds', body);
          expect(answer.status, JSON.stringify(body)).to.equal(400);
          expect(answer.body.error).to.match(message);
        }
      },
    );
  });

  describe('v1 path parameters', () => {
    it('a UCI or source id beyond its range, or not in decimal digits, is a 400, never an engine error', async () => {
      for (const path of [
        '/api/v1/images/98167096845182664704',
        '/api/v1/images/9007199254740993',
        '/api/v1/images/0x266',
        '/api/v1/images/614.0',
        '/api/v1/sources/1e0',
        '/api/v1/sources/0x1',
        '/api/v1/sources/2147483648',
      ]) {
        const { status, body } = await send('GET', path);
        expect(status, path).to.equal(400);
        expect(body.response).to.equal('Error');
      }
    });
  });

  describe('legacy: 200 with an empty list for what exists with nothing to give, 404 for what does not exist', () => {
    it(
      "chembl_webresource_client's src_compound_id_all_obsolete for a " +
        'current id with no obsolete assignment: 200 []',
      async () => {
        const { status, body } = await send('GET', `/rest/src_compound_id_all_obsolete/${paracetamol.nsc}/101`);
        expect(status).to.equal(200);
        expect(body).to.deep.equal([]);
        expect((await send('GET', `/rest/src_compound_id_all_obsolete/${paracetamol.nsc}/101/1`)).body).to.deep.equal(
          [],
        );
      },
    );

    it(
      'an obsolete id: empty lists where only current assignments count, its ' + 'rows where obsolete ones do',
      async () => {
        for (const path of [
          `src_compound_id/${obsoleteNsc.id}/101`,
          `src_compound_id/${obsoleteNsc.id}/101/1`,
          `src_compound_id_all/${obsoleteNsc.id}/101`,
          `src_compound_id_url/${obsoleteNsc.id}/101/1`,
          `structure/${obsoleteNsc.id}/101`,
        ]) {
          expect(await send('GET', `/rest/${path}`), path).to.deep.include({ status: 200, body: [] });
        }
        expect((await send('GET', `/rest/orphanIdSource/${obsoleteNsc.id}`)).body).to.deep.equal([]);
        expect((await send('GET', `/rest/orphanIdMap/${obsoleteNsc.id}`)).body).to.deep.equal({});
        expect((await send('GET', `/rest/cpd_search/${obsoleteNsc.id}/101`)).body).to.deep.equal({});
        expect((await send('GET', `/rest/structure_all/${obsoleteNsc.id}/101`)).body).to.deep.equal([
          {
            standardinchi:
              'InChI=1S/C20H20O6/c1-24-17-6-10(3-4-15(17)21)19-12-8-16(22)18(25-2)7-11(12)5-13-14(19)9-26-20(13)23/h3-4,6-8,13-14,19,21-22H,5,9H2,1-2H3',
            standardinchikey: obsoleteNsc.key,
            assignment: '0',
          },
        ]);
        expect((await send('GET', `/rest/src_compound_id_all_obsolete/${obsoleteNsc.id}/101/101`)).body).to.deep.equal([
          { src_compound_id: obsoleteNsc.current, assignment: '1', UCI: String(obsoleteNsc.uci) },
          { src_compound_id: obsoleteNsc.id, assignment: '0', UCI: String(obsoleteNsc.uci) },
        ]);
      },
    );

    it('an id never assigned, a key of no structure or an unknown source: 404 on every route', async () => {
      const missing = [
        'src_compound_id/NSC0/101',
        'src_compound_id/NSC0/101/1',
        'src_compound_id_all/NSC0/101',
        'src_compound_id_all_obsolete/NSC0/101',
        'src_compound_id_all_obsolete/NSC0/101/1',
        'src_compound_id_url/NSC0/101/1',
        'structure/NSC0/101',
        'structure_all/NSC0/101',
        'orphanIdSource/NSC0',
        'orphanIdMap/NSC0',
        'cpd_search/NSC0/101',
        'inchikey/AAAAAAAAAAAAAA-BBBBBBBBSA-N',
        'inchikey_all/AAAAAAAAAAAAAA-BBBBBBBBSA-N',
        'verbose_inchikey/AAAAAAAAAAAAAA-BBBBBBBBSA-N',
        'inchi/AAAAAAAAAAAAAA-BBBBBBBBSA-N',
        'key_search/AAAAAAAAAAAAAA',
        'sources/999',
        'mapping/1/999',
        'mappingaux/999',
        `src_compound_id_all_obsolete/${paracetamol.nsc}/999`,
      ];
      for (const path of missing) {
        const { status, body } = await send('GET', `/rest/${path}`);
        expect(status, path).to.equal(404);
        expect(Object.keys(body)).to.deep.equal(['error']);
      }
    });
  });

  describe('legacy: nested connectivity output has the fields UniChem 1 documents', () => {
    const sourceFields = [
      'src_id',
      'name',
      'name_long',
      'name_label',
      'description',
      'src_url',
      'base_id_url',
      'base_id_url_available',
      'aux_for_url',
      'Full Query InChIKey',
      'Full Query InChI',
      'src_matches',
    ];
    const matchFields = [
      'src_compound_id',
      'aux_src',
      'assignment',
      'label',
      'B',
      'CpdId_InChIKey',
      'Full_CpdId_InChI',
      'match_compare',
    ];
    const compareFields = ['C', 'Matching_Query_InChI', 'Matching_CpdId_InChI', 'b', 'i', 'm', 'p', 's', 't'];

    it('for every B, C, F and G (A all sources, H=0): the same fields, nested the same way', async () => {
      let checked = 0;
      for (const B of [0, 1])
        for (const C of [0, 1, 2, 3, 4])
          for (const F of [0, 1])
            for (const G of [0, 1]) {
              const path = `/rest/key_search/${paracetamol.key}/0/${B}/${C}/0/0/${F}/${G}/0`;
              const { status, body } = await send('GET', path);
              if (status === 404) continue;
              expect(status, path).to.equal(200);
              for (const source of body['1']) {
                expect(Object.keys(source), path).to.deep.equal(sourceFields);
                expect(source['Full Query InChIKey']).to.equal(paracetamol.key);
                expect(source['Full Query InChI']).to.equal(
                  'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)',
                );
                for (const match of source.src_matches) {
                  expect(Object.keys(match), path).to.deep.equal(matchFields);
                  expect(match.B).to.equal(String(B));
                  for (const compare of match.match_compare) {
                    expect(Object.keys(compare), path).to.deep.equal(compareFields);
                    if (C < 4) expect(compare.C).to.equal(String(C));
                  }
                  checked += 1;
                }
              }
            }
      expect(checked).to.be.greaterThan(20);
    });

    it(
      'a 14-letter first-block query gives those 14 letters as "Full Query ' +
        'InChIKey"; cpd_search the key of the id\'s structure',
      async () => {
        const byBlock = (await send('GET', `/rest/key_search/${glucoseBlock}`)).body;
        expect(byBlock['1'].every((source: Json) => source['Full Query InChIKey'] === glucoseBlock)).to.equal(true);
        expect(byBlock['1'][0]['Full Query InChI']).to.equal(
          'InChI=1S/C6H12O6/c7-1-3(9)5(11)6(12)4(10)2-8/h1,3-6,8-12H,2H2',
        );
        const byId = (await send('GET', `/rest/cpd_search/${paracetamol.chembl}/1`)).body;
        expect(byId['1'].every((source: Json) => source['Full Query InChIKey'] === paracetamol.key)).to.equal(true);
      },
    );
  });

  describe('paths from a base URL with a trailing slash', () => {
    it('//api/v1/sources, //rest/src_ids/ and //api/v1/compounds reach their routes', async () => {
      expect((await send('GET', '//api/v1/sources')).body).to.deep.equal((await send('GET', '/api/v1/sources')).body);
      expect((await send('GET', '//beta//api/v1/sources/1')).status).to.equal(200);
      expect((await send('GET', '//rest/src_ids/')).body).to.deep.equal((await send('GET', '/rest/src_ids/')).body);
      expect((await send('GET', `/legacy//rest//inchikey/${paracetamol.key}`)).status).to.equal(200);
      const posted = await send('POST', '//api/v1/compounds', { type: 'inchikey', compound: paracetamol.key });
      expect(posted.status).to.equal(200);
      expect(posted.body.compounds[0].uci).to.equal(paracetamol.uci);
    });
  });

  describe('HTTP methods', () => {
    it("a method a path does not take is a 405 with Allow, in the API family's error shape", async () => {
      const v1 = await send('DELETE', '/api/v1/compounds');
      expect(v1.status).to.equal(405);
      expect(v1.headers.get('allow')).to.equal('OPTIONS, POST');
      expect(v1.body).to.deep.include({ response: 'Error' });
      const get = await send('GET', '/api/v1/connectivity');
      expect(get.status).to.equal(405);
      expect(get.headers.get('allow')).to.equal('OPTIONS, POST');
      const put = await send('PUT', '/api/v1/sources/1', {});
      expect(put.status).to.equal(405);
      expect(put.headers.get('allow')).to.equal('GET, HEAD, OPTIONS');
      const legacy = await send('POST', `/rest/inchikey/${paracetamol.key}`);
      expect(legacy.status).to.equal(405);
      expect(legacy.headers.get('allow')).to.equal('GET, HEAD, OPTIONS');
      expect(Object.keys(legacy.body)).to.deep.equal(['error']);
    });

    it('HEAD answers every GET route with its GET status and headers, without a body', async () => {
      for (const path of [
        '/api/v1/sources',
        '/beta/api/v1/sources/1',
        `/api/v1/images/${paracetamol.uci}`,
        '/health',
        '/ready',
        '/api/v1/openapi.json',
        '/',
        `/rest/inchikey/${paracetamol.key}`,
        '/legacy/rest/src_ids/',
        '/rest/release',
        '/rest/mapping/1/101',
        `/rest/key_search/${paracetamol.key}/0/0/0/0/0/0/0/1`,
      ]) {
        const [head, get] = [await send('HEAD', path), await send('GET', path)];
        expect(head.status, path).to.equal(get.status);
        expect(head.status, path).to.equal(200);
        expect(head.text, path).to.equal('');
        expect(head.headers.get('content-type'), path).to.equal(get.headers.get('content-type'));
      }
      expect((await send('HEAD', '/api/v1/sources/999')).status).to.equal(404);
    });

    it('OPTIONS answers with Allow (and CORS)', async () => {
      const v1 = await send('OPTIONS', '/api/v1/compounds');
      expect(v1.status).to.equal(204);
      expect(v1.headers.get('allow')).to.equal('OPTIONS, POST');
      const legacy = await send('OPTIONS', `/rest/inchi/${paracetamol.key}`);
      expect(legacy.headers.get('allow')).to.equal('GET, HEAD, OPTIONS');
      expect(legacy.headers.get('access-control-allow-methods')).to.match(/GET/);
    });
  });
});
