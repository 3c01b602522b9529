import { createServer, connect, type Server, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { compareLayers, parseStandardInchi } from '../src/chemistry';
import { readConfig } from '../src/config';
import type { LookupContext } from '../src/domain/lookup';
import { SourceCatalog } from '../src/domain/sources';
import { keySearch, parseCriteria } from '../src/api/legacy/connectivity';
import { findCompounds, searchConnectivity } from '../src/api/v1/responses';
import { Engine } from '../src/engine/client';
import { startApi, type RunningApi } from './support/api';
import { msearchesSent } from './support/engine';
import { sourceIds } from './fixtures/build-fixtures';
import { fixtureDump, fixturesDir, fixturePrefix, testConfig } from './support/fixture';

interface FixtureRow {
  source: string;
  id: string;
  inchi: string;
  key: string;
  tags: string[];
}

const fixture: FixtureRow[] = readFileSync(join(fixturesDir, 'molecules-fixture.tsv'), 'utf8')
  .split('\n')
  .slice(1)
  .filter(Boolean)
  .map((line) => {
    const [source, id, , inchi, key, tags] = line.split('\t');
    return { source, id, inchi, key, tags: tags ? tags.split(',') : [] };
  });
const obsolete = new Set(
  gunzipSync(readFileSync(join(fixtureDump, 'reference.tsv.gz')))
    .toString('utf8')
    .split('\n')
    .filter((line) => line.endsWith('\t0'))
    .map((line) => `${line.split('\t')[1]}:${line.split('\t')[2]}`),
);
const paracetamolKey = 'RZVAJINKPMORJF-UHFFFAOYSA-N';
const isCurrent = (row: FixtureRow): boolean => !obsolete.has(`${sourceIds[row.source]}:${row.id}`);

describe('API v1', function () {
  this.timeout(300_000);
  let api: RunningApi;
  let prefix: string;

  before(async () => {
    prefix = await fixturePrefix();
    api = await startApi(testConfig(prefix));
  });
  after(async () => {
    await api?.stop();
  });

  describe('POST /compounds', () => {
    it('sourceID lookup of ChEMBL CHEMBL112 (paracetamol) returns NCI/DTP 3991', async () => {
      const { status, body } = await api.post('/api/v1/compounds', {
        type: 'sourceID',
        compound: 'CHEMBL112',
        sourceID: 1,
      });
      expect(status).to.equal(200);
      expect(body.response).to.equal('Success');
      expect(body.totalCompounds).to.equal(1);
      const [compound] = body.compounds;
      expect(compound.standardInchiKey).to.equal('RZVAJINKPMORJF-UHFFFAOYSA-N');
      expect(compound.inchi.formula).to.equal('C8H9NO2');
      expect(
        compound.sources.map((s: { id: number; compoundId: string }) => `${s.id}:${s.compoundId}`),
      ).to.include.members(['1:CHEMBL112', '101:3991']);
      expect(compound.sources[0].url).to.equal('https://www.ebi.ac.uk/chembldb/compound/inspect/CHEMBL112');
    });

    it('sourceID lookup of NCI/DTP 3991 returns ChEMBL CHEMBL112, under /beta/api/v1 too', async () => {
      const { body } = await api.post('/beta/api/v1/compounds', {
        type: 'sourceID',
        compound: ' 3991 ',
        sourceID: 101,
      });
      expect(body.compounds[0].sources.map((s: { compoundId: string }) => s.compoundId)).to.include('CHEMBL112');
    });

    it('the same paracetamol by UCI, by InChI and by InChIKey', async () => {
      const byKey = (await api.post('/api/v1/compounds', { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' }))
        .body;
      const byInchi = (await api.post('/api/v1/compounds', { type: 'inchi', compound: byKey.compounds[0].inchi.inchi }))
        .body;
      const byUci = (await api.post('/api/v1/compounds', { type: 'uci', compound: String(byKey.compounds[0].uci) }))
        .body;
      expect(byInchi).to.deep.equal(byKey);
      expect(byUci).to.deep.equal(byKey);
    });

    it(
      'every cross-source key of the fixture returns all of its current ' + 'sources, sorted by source then id',
      async () => {
        const keys = [...new Set(fixture.filter((row) => row.tags.includes('xref')).map((row) => row.key))];
        expect(keys.length).to.be.above(150);
        for (const key of keys) {
          const { body } = await api.post('/api/v1/compounds', { type: 'inchikey', compound: key });
          const expected = fixture
            .filter((row) => row.key === key && isCurrent(row))
            .map((row) => `${sourceIds[row.source]}:${row.id}`)
            .sort((a, b) => Number(a.split(':')[0]) - Number(b.split(':')[0]) || (a < b ? -1 : 1));
          expect(
            body.compounds[0].sources.map((s: { id: number; compoundId: string }) => `${s.id}:${s.compoundId}`),
            key,
          ).to.deep.equal(expected);
        }
      },
    );

    it('PubChem 100976278, assigned to two structures, returns both, sorted by UCI', async () => {
      const { body } = await api.post('/api/v1/compounds', { type: 'sourceID', compound: '100976278', sourceID: 22 });
      expect(body.totalCompounds).to.equal(2);
      expect(body.compounds.map((c: { standardInchiKey: string }) => c.standardInchiKey).sort()).to.deep.equal([
        'FOXHEVJOMXBFNJ-OJDZSJEKSA-O',
        'PMPKIFXHVHQBCN-OJDZSJEKSA-P',
      ]);
      expect(body.compounds[0].uci).to.be.below(body.compounds[1].uci);
    });

    it('an obsolete id is not listed, and looking it up answers "Not found"', async () => {
      const [source, id] = [...obsolete][0].split(':');
      const row = fixture.find((r) => r.source === 'nci' && r.id === id)!;
      const { body } = await api.post('/api/v1/compounds', { type: 'inchikey', compound: row.key });
      expect(body.compounds[0].sources.map((s: { compoundId: string }) => s.compoundId)).to.not.include(id);
      const lookup = (await api.post('/api/v1/compounds', { type: 'sourceID', compound: id, sourceID: Number(source) }))
        .body;
      expect(lookup.response).to.equal('Not found');
    });

    it('an unknown id answers 200 with response "Not found"', async () => {
      const { status, body } = await api.post('/api/v1/compounds', {
        type: 'sourceID',
        compound: 'CHEMBL0',
        sourceID: 1,
      });
      expect(status).to.equal(200);
      expect(body).to.deep.include({ response: 'Not found', totalCompounds: 0, compounds: [], notFound: ['CHEMBL0'] });
      expect(body.error).to.match(/CHEMBL0/);
    });
  });

  describe('POST /connectivity', () => {
    const groups = new Map<string, FixtureRow[]>();
    for (const row of fixture.filter((r) => r.tags.includes('sameblock'))) {
      const block = row.key.slice(0, 14);
      groups.set(block, [...(groups.get(block) ?? []), row]);
    }

    it(
      `finds every member of each of the ${groups.size} same-skeleton groups ` +
        `(stereoisomers, isotopologues, protonation states) with the layer flags`,
      async () => {
        for (const [block, rows] of groups) {
          const query = rows[0];
          const { body } = await api.post('/api/v1/connectivity', { type: 'inchi', compound: query.inchi });
          expect(body.response, block).to.equal('Success');
          expect(body.searchedCompound.standardInchiKey).to.equal(query.key);
          const found = new Set(body.sources.map((s: { standardInchiKey: string }) => s.standardInchiKey));
          for (const member of rows.filter(isCurrent))
            expect(found.has(member.key), `${member.source} ${member.id} in ${block}`).to.equal(true);
          const queryLayers = parseStandardInchi(query.inchi).layers;
          for (const entry of body.sources) {
            expect(entry.typeOfSearch).to.equal('match');
            const hit = fixture.find((r) => r.key === entry.standardInchiKey) ?? { inchi: '' };
            if (!hit.inchi) continue;
            expect(entry.comparison, `${block}: ${entry.standardInchiKey}`).to.deep.equal(
              compareLayers(queryLayers, parseStandardInchi(hit.inchi).layers, false),
            );
            expect(entry.comparison).to.include({ formula: true, connectivity: true, HAtoms: true, charge: true });
          }
        }
      },
    );

    it(
      'L-isoleucine and its stereoisomers differ only in stereo flags, ' + 'ordered by the number of differences',
      async () => {
        const { body } = await api.post('/api/v1/connectivity', {
          type: 'sourceID',
          compound: 'amino_acids/L-isoleucine',
          sourceID: 103,
        });
        expect(body.searchedCompound.uci).to.be.a('number');
        const [first, ...others] = body.sources;
        expect(first.compoundId).to.equal('amino_acids/L-isoleucine');
        expect(Object.values(first.comparison).every((flag) => flag === true)).to.equal(true);
        const differences = body.sources.map(
          (s: { comparison: Record<string, boolean> }) => Object.values(s.comparison).filter((f) => f === false).length,
        );
        expect(differences).to.deep.equal([...differences].sort((a, b) => a - b));
        for (const other of others)
          expect(other.comparison).to.include({ formula: true, connectivity: true, isotope: true, protonation: true });
      },
    );

    it(
      'with searchComponents, the hydrochloride CHEMBL1511957 finds its free ' + 'base (CHEMBL1474977, NCI 4349)',
      async () => {
        const { body } = await api.post('/api/v1/connectivity', {
          type: 'sourceID',
          compound: 'CHEMBL1511957',
          sourceID: 1,
          searchComponents: true,
        });
        const base = body.sources.filter((s: { compoundId: string }) =>
          ['CHEMBL1474977', '4349'].includes(s.compoundId),
        );
        expect(base.map((s: { compoundId: string }) => s.compoundId).sort()).to.deep.equal(['4349', 'CHEMBL1474977']);
        for (const entry of base) {
          expect(entry.typeOfSearch).to.equal('componentIsResult');
          expect(entry.comparison.protonation).to.equal(null);
        }
        const order = body.sources.map((s: { typeOfSearch: string }) =>
          ['match', 'queryIsComponent', 'componentIsResult', 'componentMatch'].indexOf(s.typeOfSearch),
        );
        expect(order).to.deep.equal([...order].sort((a, b) => a - b));
      },
    );

    it('without searchComponents, the hydrochloride does not find its free base', async () => {
      const { body } = await api.post('/api/v1/connectivity', {
        type: 'sourceID',
        compound: 'CHEMBL1511957',
        sourceID: 1,
      });
      expect(body.sources.map((s: { compoundId: string }) => s.compoundId)).to.not.include('CHEMBL1474977');
    });

    it('the free base CHEMBL1474977 finds its hydrochloride as queryIsComponent', async () => {
      const { body } = await api.post('/api/v1/connectivity', {
        type: 'sourceID',
        compound: 'CHEMBL1474977',
        sourceID: 1,
        searchComponents: true,
      });
      const salt = body.sources.find((s: { compoundId: string }) => s.compoundId === 'CHEMBL1511957');
      expect(salt.typeOfSearch).to.equal('queryIsComponent');
      expect(salt.comparison.protonation).to.equal(null);
    });

    /**
     * The `_msearch` requests that `search` sends, and its answer, on a lookup context of its own (sources already
     * read).
     */
    async function engineRequestsOf(
      search: (context: LookupContext) => Promise<object>,
    ): Promise<{ msearches: Record<string, unknown>[][]; answer: object }> {
      const config = testConfig(prefix);
      const engine = new Engine(config);
      const context: LookupContext = { engine, config, sources: new SourceCatalog(engine, 60_000) };
      try {
        await context.sources.all();
        let answer: object = {};
        const msearches = await msearchesSent(engine, async () => {
          answer = await search(context);
        });
        return { msearches, answer };
      } finally {
        await engine.close();
      }
    }

    it(
      'a search by InChIKey asks the engine once: the key and the skeleton ' +
        'its first block names travel in one _msearch',
      async () => {
        const { msearches, answer } = await engineRequestsOf((context) =>
          searchConnectivity(context, { type: 'inchikey', compound: 'AGPKZVBTJJNPAG-WHFBIAKZSA-N' }),
        );
        expect(msearches).to.have.length(1);
        expect(JSON.stringify(msearches[0]))
          .to.include('"connectivityBlock":"AGPKZVBTJJNPAG"')
          .and.to.include('AGPKZVBTJJNPAG-WHFBIAKZSA-N');
        expect(answer).to.deep.equal(
          (await api.post('/api/v1/connectivity', { type: 'inchikey', compound: 'AGPKZVBTJJNPAG-WHFBIAKZSA-N' })).body,
        );
      },
    );

    it('a legacy key_search by a full key asks the engine once too, and answers as before', async () => {
      const { msearches, answer } = await engineRequestsOf((context) =>
        keySearch(context, 'AGPKZVBTJJNPAG-WHFBIAKZSA-N', parseCriteria({})),
      );
      expect(msearches).to.have.length(1);
      expect(answer).to.deep.equal((await api.get('/rest/key_search/AGPKZVBTJJNPAG-WHFBIAKZSA-N')).body);
      expect(Object.keys(answer)).to.deep.equal(['1']);
    });

    it(
      'with searchComponents, the hydrochloride CHEMBL1511957 by its key ' +
        'asks the engine four times whatever its components: key and skeleton, ' +
        'counts and components as structures, structures holding them, their assignments',
      async () => {
        const key = (await api.post('/api/v1/compounds', { type: 'sourceID', compound: 'CHEMBL1511957', sourceID: 1 }))
          .body.compounds[0].standardInchiKey;
        const { msearches, answer } = await engineRequestsOf((context) =>
          searchConnectivity(context, { type: 'inchikey', compound: key, searchComponents: true }),
        );
        expect(msearches).to.have.length(4);
        expect(answer).to.deep.equal(
          (await api.post('/api/v1/connectivity', { type: 'inchikey', compound: key, searchComponents: true })).body,
        );
        expect((answer as { sources: { compoundId: string }[] }).sources.map((s) => s.compoundId)).to.include(
          'CHEMBL1474977',
        );
      },
    );

    it("compounds by UCI asks the engine once: the UCI's assignments and its structure together", async () => {
      const uci = (await api.post('/api/v1/compounds', { type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 })).body
        .compounds[0].uci;
      const { msearches, answer } = await engineRequestsOf((context) =>
        findCompounds(context, { type: 'uci', compound: String(uci) }),
      );
      expect(msearches).to.have.length(1);
      expect(answer).to.deep.equal((await api.post('/api/v1/compounds', { type: 'uci', compound: String(uci) })).body);
    });

    it('an InChIKey that is not indexed matches on its first block, with no InChI for the query', async () => {
      const { body } = await api.post('/api/v1/connectivity', {
        type: 'inchikey',
        compound: 'AGPKZVBTJJNPAG-AAAAAAAASA-N',
      });
      expect(body.searchedCompound).to.deep.equal({
        uci: null,
        standardInchiKey: 'AGPKZVBTJJNPAG-AAAAAAAASA-N',
        inchi: null,
      });
      expect(body.sources.map((s: { compoundId: string }) => s.compoundId)).to.include('amino_acids/L-isoleucine');
    });

    it('a query InChI that is not indexed is searched all the same (searchedCompound.uci null)', async () => {
      // Isoleucine without its stereo layers: the skeleton is indexed (three stereoisomers), this form is not.
      const isoleucine = fixture.find((r) => r.id === 'amino_acids/L-isoleucine')!;
      const unindexed = isoleucine.inchi.replace(/\/t.*$/, '');
      const { body } = await api.post('/api/v1/connectivity', { type: 'inchi', compound: unindexed });
      expect(body.searchedCompound.uci).to.equal(null);
      expect(body.totalCompounds).to.be.at.least(3);
    });

    it('a sourceID assigned to two structures is a 400 naming their UCIs', async () => {
      const { status, body } = await api.post('/api/v1/connectivity', {
        type: 'sourceID',
        compound: '100976278',
        sourceID: 22,
      });
      expect(status).to.equal(400);
      expect(body.error).to.match(/UCIs \d+, \d+/);
    });

    it('the entry cap truncates the list but the totals count everything', async () => {
      const small = await startApi(testConfig(prefix, { CONNECTIVITY_MAX_ENTRIES: '2' }));
      try {
        const { body } = await small.post('/api/v1/connectivity', {
          type: 'sourceID',
          compound: 'amino_acids/L-isoleucine',
          sourceID: 103,
        });
        expect(body.truncated).to.equal(true);
        expect(body.sources).to.have.length(2);
        expect(body.totalSources).to.be.above(2);
      } finally {
        await small.stop();
      }
    });

    it('a small frequency cap lists hydrogen chloride in skippedComponents', async () => {
      const capped = await startApi(testConfig(prefix, { COMPONENT_FREQUENCY_CAP: '2' }));
      try {
        const { body } = await capped.post('/api/v1/connectivity', {
          type: 'sourceID',
          compound: 'CHEMBL1511957',
          sourceID: 1,
          searchComponents: true,
        });
        const hcl = body.skippedComponents.find(
          (c: { connectivityBlock: string }) => c.connectivityBlock === 'VEXZGXHMUGYJMC',
        );
        expect(hcl).to.include({ formula: 'ClH' });
        expect(hcl.structureCount).to.be.above(2);
        expect(body.sources.map((s: { compoundId: string }) => s.compoundId)).to.include('CHEMBL1474977');
      } finally {
        await capped.stop();
      }
    });
  });

  describe('sources and images', () => {
    it('GET /sources/ and /sources list the seven sources with their exact UCI counts', async () => {
      const withSlash = await api.get('/api/v1/sources/');
      const without = await api.get('/api/v1/sources');
      expect(withSlash.body).to.deep.equal(without.body);
      expect(withSlash.body.totalSources).to.equal(7);
      const chembl = withSlash.body.sources.find((s: { sourceID: number }) => s.sourceID === 1);
      expect(chembl).to.include({
        name: 'chembl',
        nameLabel: 'ChEMBL',
        UCICount: 367,
        srcReleaseNumber: 17,
        baseIdUrlAvailable: true,
      });
    });

    it('routes a request without compiling the path patterns again (patches/express-openapi-validator)', async () => {
      // The validator's route lookup compiled every route's pattern on every request (46 for GET
      // /api/v1/sources); `npm ci` applies the patch that compiles each once.
      await api.get('/api/v1/sources');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module object itself is patched
      const patterns = require('path-to-regexp') as { pathToRegexp: (...args: unknown[]) => unknown };
      const original = patterns.pathToRegexp;
      let compiled = 0;
      patterns.pathToRegexp = (...args: unknown[]) => {
        compiled += 1;
        return original(...args);
      };
      try {
        expect((await api.get('/api/v1/sources')).status).to.equal(200);
      } finally {
        patterns.pathToRegexp = original;
      }
      expect(compiled).to.equal(0);
    });

    it(
      'answers each request with its own path parameters while the route of ' + 'each path is remembered (patches/)',
      async () => {
        const names: string[] = [];
        for (const id of [1, 9, 1, 22, 9]) names.push((await api.get(`/api/v1/sources/${id}`)).body.sources[0].name);
        expect(names).to.deep.equal(['chembl', 'zinc', 'chembl', 'pubchem', 'zinc']);
        expect((await api.get('/api/v1/sources/x1')).status).to.equal(400);
        expect((await api.get('/api/v1/sources/x1')).status).to.equal(400);
      },
    );

    it('GET /sources/1 is ChEMBL; an unknown source is a 404', async () => {
      expect((await api.get('/api/v1/sources/1')).body.sources[0].name).to.equal('chembl');
      const unknown = await api.get('/api/v1/sources/999');
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.deep.equal({ response: 'Error', error: 'source 999 does not exist', errors: [] });
    });

    it('GET /images/{uci} draws paracetamol as SVG; an unknown UCI is a 404', async () => {
      const { body } = await api.post('/api/v1/compounds', {
        type: 'inchikey',
        compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N',
      });
      const image = await api.get(`/api/v1/images/${body.compounds[0].uci}`);
      expect(image.status).to.equal(200);
      expect(image.headers.get('content-type')).to.match(/^image\/svg\+xml/);
      expect(image.text).to.match(/<svg[\s\S]*<\/svg>/);
      expect((await api.get('/api/v1/images/99999999')).status).to.equal(404);
    });

    it('serves the OpenAPI document at both addresses, and CORS is open for GET and POST', async () => {
      const swagger = await api.get('/beta/api/v1/swagger.json');
      const openapi = await api.get('/api/v1/openapi.json');
      expect(swagger.body.openapi).to.match(/^3\./);
      expect(openapi.body).to.deep.equal(swagger.body);
      expect(
        (await api.get('/api/v1/sources', { origin: 'https://example.org' })).headers.get(
          'access-control-allow-origin',
        ),
      ).to.equal('*');
      const preflight = await fetch(`${api.url}/api/v1/compounds`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://example.org',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(preflight.headers.get('access-control-allow-methods')).to.match(/POST/);
    });

    it('/health answers while /ready checks the engine and the indices', async () => {
      const health = (await api.get('/health')).body as {
        status: string;
        engine: {
          status: string;
          nodes: number;
          indices: Record<string, { shards: number; replicas: number }>;
          disk: { enabled: boolean; watermarks: Record<string, string>; nodes: { totalBytes: number }[] };
        };
      };
      expect(health.status).to.equal('ok');
      expect(health.engine.status).to.equal('green');
      expect(health.engine.nodes).to.be.greaterThan(0);
      expect(Object.keys(health.engine.indices)).to.include.members([
        `${prefix}-compounds`,
        `${prefix}-assignments`,
        `${prefix}-assignments-1`,
      ]);
      expect(health.engine.indices[`${prefix}-compounds`]).to.include({ shards: 1, replicas: 0 });
      expect(health.engine.disk.enabled, 'the disk watermarks are on').to.equal(true);
      expect(health.engine.disk.watermarks).to.have.keys('low', 'high', 'flood_stage');
      expect(health.engine.disk.nodes[0].totalBytes).to.be.greaterThan(0);
      expect((await api.get('/ready')).body).to.deep.equal({ status: 'ready' });
    });
  });

  describe('InChIKeys in lower or mixed case', () => {
    const lower = paracetamolKey.toLowerCase();
    const mixed = 'RzVaJiNkPmOrJf-uHfFfAoYsA-n';

    it(
      'a lower- or mixed-case key of paracetamol finds UCI 614 as its ' + 'upper-case key, echoed in upper case',
      async () => {
        const upper = await api.post('/api/v1/compounds', { type: 'inchikey', compound: paracetamolKey });
        expect(upper.status).to.equal(200);
        expect(upper.body.compounds[0].uci).to.equal(614);
        for (const key of [lower, mixed, ` ${lower}\n`]) {
          const answer = await api.post('/api/v1/compounds', { type: 'inchikey', compound: key });
          expect(answer.status, key).to.equal(200);
          expect(answer.body, key).to.deep.equal(upper.body);
        }
      },
    );

    it(
      'a connectivity search by a lower-case key answers as by the ' + 'upper-case key, searched key in upper case',
      async () => {
        const search = (compound: string) =>
          api.post('/api/v1/connectivity', { type: 'inchikey', compound, searchComponents: true });
        const upper = await search(paracetamolKey);
        const answer = await search(lower);
        expect(answer.status).to.equal(200);
        expect(answer.body.searchedCompound.standardInchiKey).to.equal(paracetamolKey);
        expect(answer.body).to.deep.equal(upper.body);
      },
    );

    it('a lower-case key that no structure has is "Not found" with the upper-case key in notFound', async () => {
      const answer = await api.post('/api/v1/compounds', {
        type: 'inchikey',
        compound: 'aaaaaaaaaaaaaa-bbbbbbbbsa-n',
      });
      expect(answer.status).to.equal(200);
      expect(answer.body).to.include({ response: 'Not found' });
      expect(answer.body.notFound).to.deep.equal(['AAAAAAAAAAAAAA-BBBBBBBBSA-N']);
    });

    it('a lower-case key of another form is still refused: a non-standard key, a first block alone', async () => {
      for (const key of ['rzvajinkpmorjf-uhfffaoyna-n', 'rzvajinkpmorjf']) {
        const answer = await api.post('/api/v1/compounds', { type: 'inchikey', compound: key });
        expect(answer.status, key).to.equal(400);
        expect(answer.body.error, key).to.match(/not a Standard InChIKey/);
      }
    });
  });

  describe('errors, each in its documented shape', () => {
    const cases: [string, unknown, number, RegExp][] = [
      ['a body that is not JSON', '{"type": "inchikey",', 400, /not valid JSON/],
      [
        'an unknown field',
        { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N', colour: 'red' },
        400,
        /colour.*unknown field/,
      ],
      ['a missing field', { type: 'inchikey' }, 400, /"compound" is missing/],
      ['a wrong type', { type: 'uci', compound: true }, 400, /"compound" must be a string or a whole number/],
      [
        'a type outside the list',
        { type: 'formula', compound: 'C9H8O4' },
        400,
        /"type" must be one of uci, inchi, inchikey, sourceID, smiles, molfile, name$/,
      ],
      [
        'a malformed InChIKey',
        { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA' },
        400,
        /not a Standard InChIKey/,
      ],
      ['a UCI that is not a positive integer', { type: 'uci', compound: '-3' }, 400, /not a UCI/],
      [
        'a non-standard InChI',
        { type: 'inchi', compound: 'InChI=1/C5H5NO/c7-5-3-1-2-4-6-5/h1-4H,(H,6,7)/f/h6H' },
        400,
        /not a Standard InChI/,
      ],
      ['an InChI that does not parse', { type: 'inchi', compound: 'InChI=1S/C9H8O4/c1-6(10' }, 400, /InChI/],
      ['a sourceID lookup without sourceID', { type: 'sourceID', compound: 'CHEMBL112' }, 400, /needs "sourceID"/],
      [
        'an unknown source',
        { type: 'sourceID', compound: 'CHEMBL112', sourceID: 999 },
        404,
        /source 999 does not exist/,
      ],
      ['a body over BODY_LIMIT', { type: 'inchi', compound: `InChI=1S/${'C'.repeat(20_000)}` }, 413, /larger than/],
    ];
    for (const [what, body, status, message] of cases) {
      it(`${what}: ${status}`, async () => {
        const response = await api.post('/api/v1/compounds', body);
        expect(response.status).to.equal(status);
        expect(response.body.response).to.equal('Error');
        expect(response.body.error).to.match(message);
        expect(response.body.errors).to.be.an('array');
      });
    }

    it(
      'a key that is not a Standard InChIKey (too short, or non-standard) is ' +
        'worded the same by v1 and the legacy API',
      async () => {
        for (const key of ['RZVAJINKPMORJF-UHFFFAOYSA', 'RZVAJINKPMORJF-UHFFFAOYNA-N']) {
          const v1 = await api.post('/api/v1/compounds', { type: 'inchikey', compound: key });
          const legacy = await api.get(`/rest/inchikey/${key}`);
          expect([v1.status, legacy.status]).to.deep.equal([400, 400]);
          expect(v1.body.error).to.equal(
            `"${key}" is not a Standard InChIKey: it has the form ` +
              'XXXXXXXXXXXXXX-XXXXXXXXSA-X (14 letters, a hyphen, 8 letters and SA, a hyphen, 1 letter; ' +
              'lower case is read as upper case)',
          );
          expect(legacy.body.error).to.equal(v1.body.error);
        }
      },
    );

    it('an InChI longer than MAX_INCHI_LENGTH is a 400', async () => {
      const long = readFileSync(join(fixturesDir, 'rules', 'structure.tsv'), 'utf8')
        .split('\n')
        .find((l) => l.includes('inchi-too-long'))!
        .split('\t')[1];
      const roomy = await startApi(testConfig(prefix, { BODY_LIMIT: '64kb' }));
      try {
        const response = await roomy.post('/api/v1/compounds', { type: 'inchi', compound: long });
        expect(response.status).to.equal(400);
        expect(response.body.error).to.match(/4113 characters, more than the 4000/);
      } finally {
        await roomy.stop();
      }
    });

    it('an unknown path is a JSON 404, never HTML', async () => {
      const response = await api.get('/api/v1/nothing-here');
      expect(response.status).to.equal(404);
      expect(response.body).to.deep.include({ response: 'Error' });
    });
  });

  describe('when the engine goes away', () => {
    // A TCP relay between the service and the real engine: closing it is an outage for this
    // service alone, without stopping the node the other tests share.
    let relay: Server;
    let sockets: Socket[] = [];
    let relayPort = 0;
    const engine = new URL(readConfig().ES_URL);
    const openRelay = (port: number): Promise<void> =>
      new Promise((resolve) => {
        relay = createServer((client) => {
          const upstream = connect(Number(engine.port || 9200), engine.hostname);
          sockets.push(client, upstream);
          client.pipe(upstream).pipe(client);
          client.on('error', () => upstream.destroy());
          upstream.on('error', () => client.destroy());
        });
        relay.listen(port, '127.0.0.1', () => {
          relayPort = (relay.address() as { port: number }).port;
          resolve();
        });
      });
    const closeRelay = (): Promise<void> =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        sockets = [];
        relay.close(() => resolve());
      });

    it('answers 503 while the engine is unreachable and 200 again once it is back, without a restart', async () => {
      await openRelay(0);
      const relayed = await startApi(testConfig(prefix, { ES_URL: `http://127.0.0.1:${relayPort}` }));
      const query = { type: 'inchikey', compound: 'RZVAJINKPMORJF-UHFFFAOYSA-N' };
      try {
        expect((await relayed.post('/api/v1/compounds', query)).status).to.equal(200);
        await closeRelay();
        const down = await relayed.post('/api/v1/compounds', query);
        expect(down.status).to.equal(503);
        expect(down.body).to.deep.include({ response: 'Error' });
        expect(down.body.error).to.match(/unreachable/);
        expect((await relayed.get('/ready')).status).to.equal(503);
        expect((await relayed.get('/health')).status).to.equal(200);
        await openRelay(relayPort);
        let status = 0;
        for (let i = 0; i < 20 && status !== 200; i += 1) {
          status = (await relayed.post('/api/v1/compounds', query)).status;
          if (status !== 200) await new Promise((done) => setTimeout(done, 500));
        }
        expect(status).to.equal(200);
      } finally {
        await relayed.stop();
        await closeRelay().catch(() => undefined);
      }
    });
  });
});
