import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { createApp } from '../src/app';
import { wholeSourcePaging } from '../src/engine/legacy';
import { EngineUnavailable } from '../src/engine/errors';
import { startServer } from '../src/server';
import { fixtureDump, fixturePrefix, fixturesDir, freshPrefix, load, loadFixture, testConfig } from './support/fixture';

type Json = any;

function table(file: string): Record<string, string>[] {
  const text = file.endsWith('.gz') ? gunzipSync(readFileSync(file)).toString('utf8') : readFileSync(file, 'utf8');
  const [header, ...lines] = text.split('\n').filter(Boolean);
  const columns = header.split('\t').map((c) => c.toLowerCase());
  return lines.map((line) => Object.fromEntries(line.split('\t').map((value, i) => [columns[i], value])));
}

interface Answer {
  status: number;
  type: string;
  text: string;
  body: Json;
}

function client(url: string): (path: string, init?: RequestInit) => Promise<Answer> {
  return async (path, init) => {
    const response = await fetch(url + path, init);
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    return {
      status: response.status,
      type,
      text,
      body: type.startsWith('application/json') ? JSON.parse(text) : undefined,
    };
  };
}

const paracetamol = {
  key: 'RZVAJINKPMORJF-UHFFFAOYSA-N',
  uci: 614,
  inchi: 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)',
};
const hydrochloride = {
  key: 'RBGWCEWDAHDPEH-FYZYNONXSA-N',
  uci: 567,
  racemate: 568,
  freeBases: [366, 367],
  freeBaseKey: 'KTHVBAZBLKXIHZ-UHFFFAOYSA-N',
};
const glucoseBlock = 'GZCGUPFRVQAUEE';

/** The entries of an H=0 answer as flat records, in answer order. */
function flatten(nested: Json[]): Record<string, string | null>[] {
  return nested.flatMap((source: Json) =>
    source.src_matches.map((match: Json) => ({
      src_compound_id: match.src_compound_id,
      src_id: source.src_id,
      aux_src: match.aux_src,
      assignment: match.assignment,
      label: match.label,
      B: match.B,
      Full_CpdId_InChI: match.Full_CpdId_InChI,
      CpdId_InChIKey: match.CpdId_InChIKey,
      // C (the component mapping) sits in match_compare, as UniChem 1 documents it.
      ...Object.fromEntries(Object.entries(match.match_compare[0])),
    })),
  );
}

/** The rows of an H=1 answer as records keyed by the header. */
function rowsOf(tableAnswer: Json[][]): Record<string, string | null>[] {
  const [header, ...rows] = tableAnswer;
  return rows.map((row) => Object.fromEntries(header.map((name: string, i: number) => [name, row[i]])));
}

/** UTF-8 byte order, the engine's order of keyword values. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Resolves once `condition` holds (checked every 20 ms); fails after 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 10_000) throw new Error(`still waiting for ${what}`);
    await sleep(20);
  }
}

/** Runs `body` with whole-source reads in pages of `size` assignments. */
async function withPageSize<T>(size: number, body: () => Promise<T>): Promise<T> {
  const before = wholeSourcePaging.pageSize;
  wholeSourcePaging.pageSize = size;
  try {
    return await body();
  } finally {
    wholeSourcePaging.pageSize = before;
  }
}

/**
 * The API on `prefix` with its engine client watched: searches in a point in time are counted (and
 * can be slowed, or made to fail at the n-th), and points in time opened and closed are counted.
 */
async function watchedApi(prefix: string): Promise<{
  url: string;
  pitSearches: number;
  opened: number;
  closed: number;
  slowMs: number;
  failAt?: number;
  stop: () => Promise<void>;
}> {
  const { app, context, close } = createApp(testConfig(prefix));
  const client = context.engine.client;
  const search = client.search.bind(client);
  const openPointInTime = client.openPointInTime.bind(client);
  const closePointInTime = client.closePointInTime.bind(client);
  const server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const watched = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pitSearches: 0,
    opened: 0,
    closed: 0,
    slowMs: 0,
    failAt: undefined as number | undefined,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await close();
    },
  };
  client.search = (async (params: Json, options: Json) => {
    if (!params?.pit) return search(params, options);
    watched.pitSearches += 1;
    if (watched.pitSearches === watched.failAt)
      throw new EngineUnavailable('the search engine is unreachable; try again shortly');
    const result = await search(params, options);
    if (watched.slowMs > 0) await sleep(watched.slowMs);
    return result;
  }) as typeof client.search;
  client.openPointInTime = (async (params: Json, options: Json) => {
    const result = await openPointInTime(params, options);
    if (result.id) watched.opened += 1;
    return result;
  }) as typeof client.openPointInTime;
  client.closePointInTime = (async (params: Json, options: Json) => {
    watched.closed += 1;
    return closePointInTime(params, options);
  }) as typeof client.closePointInTime;
  return watched;
}

describe('legacy API (UniChem 1 REST, issue 6)', function () {
  this.timeout(300_000);
  const references = table(join(fixtureDump, 'reference.tsv.gz'));
  const structures = table(join(fixtureDump, 'structure.tsv.gz'));
  const keyOfUci = new Map(structures.map((s) => [Number(s.uci), s.standardinchikey]));
  const stops: (() => Promise<void>)[] = [];
  let get: (path: string, init?: RequestInit) => Promise<Answer>;
  let url: string;

  before(async () => {
    const server = await startServer(testConfig(await fixturePrefix()), { validateResponses: true }, 0);
    stops.push(server.stop);
    url = server.url;
    get = client(server.url);
  });
  after(async () => {
    await Promise.all(stops.map((stop) => stop()));
  });

  describe('paracetamol', () => {
    it('inchikey lists its current ids, as strings, the same as the v1 API', async () => {
      const legacy = await get(`/legacy/rest/inchikey/${paracetamol.key}`);
      expect(legacy.status).to.equal(200);
      expect(legacy.body).to.deep.equal([
        { src_id: '1', src_compound_id: 'CHEMBL112' },
        { src_id: '101', src_compound_id: '3991' },
        { src_id: '103', src_compound_id: 'drugs/N-4-hydroxyphenyl_acetamide' },
      ]);
      const v1 = await get('/api/v1/compounds', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'inchikey', compound: paracetamol.key }),
      });
      expect(legacy.body).to.deep.equal(
        v1.body.compounds[0].sources.map((s: Json) => ({ src_id: String(s.id), src_compound_id: s.compoundId })),
      );
    });

    it('a key in lower or mixed case answers as the upper-case key on every route that takes a key', async () => {
      const lower = paracetamol.key.toLowerCase();
      const mixed = 'rZvAjInKpMoRjF-UhFfFaOySa-N';
      const routes = [
        '/rest/inchikey/',
        '/legacy/rest/inchikey_all/',
        '/rest/verbose_inchikey/',
        '/rest/inchi/',
        '/rest/key_search/',
      ];
      for (const route of routes) {
        const upper = await get(`${route}${paracetamol.key}`);
        expect(upper.status, route).to.equal(200);
        for (const key of [lower, mixed]) {
          const answer = await get(`${route}${key}`);
          expect(answer.status, `${route}${key}`).to.equal(200);
          expect(answer.text, `${route}${key}`).to.equal(upper.text);
        }
      }
      const block = await get(`/rest/key_search/${glucoseBlock.toLowerCase()}/0/0/0/0/0/0/0/1`);
      expect(block.text).to.equal((await get(`/rest/key_search/${glucoseBlock}/0/0/0/0/0/0/0/1`)).text);
      const missing = await get('/rest/inchikey/aaaaaaaaaaaaaa-bbbbbbbbsa-n');
      expect([missing.status, missing.body.error]).to.deep.equal([
        404,
        `no structure with InChIKey ${'A'.repeat(14)}-BBBBBBBBSA-N`,
      ]);
    });

    it('verbose_inchikey gives each source with its metadata and ids', async () => {
      const { status, body } = await get(`/rest/verbose_inchikey/${paracetamol.key}`);
      expect(status).to.equal(200);
      expect(body.map((s: Json) => [s.src_id, s.name, s.src_compound_id])).to.deep.equal([
        ['1', 'chembl', ['CHEMBL112']],
        ['101', 'nci_dtp', ['3991']],
        ['103', 'chem_structures', ['drugs/N-4-hydroxyphenyl_acetamide']],
      ]);
      expect(body[0]).to.include({
        name_label: 'ChEMBL',
        base_id_url: 'https://www.ebi.ac.uk/chembldb/compound/inspect/',
        base_id_url_available: '1',
        aux_for_url: '0',
      });
      expect(body[1]).to.include({ base_id_url: null, base_id_url_available: '0' });
      expect(Object.keys(body[0])).to.deep.equal([
        'src_id',
        'name',
        'name_long',
        'name_label',
        'description',
        'src_url',
        'base_id_url',
        'base_id_url_available',
        'aux_for_url',
        'src_compound_id',
      ]);
    });

    it('src_compound_id/CHEMBL112/1 returns NSC 3991 and every other current id, the query included', async () => {
      const { status, body } = await get('/legacy/rest/src_compound_id/CHEMBL112/1');
      expect(status).to.equal(200);
      expect(body).to.deep.equal((await get(`/legacy/rest/inchikey/${paracetamol.key}`)).body);
    });

    it('src_compound_id/CHEMBL112/1/101 returns NSC 3991 only', async () => {
      const { status, body } = await get('/legacy/rest/src_compound_id/CHEMBL112/1/101');
      expect(status).to.equal(200);
      expect(body).to.deep.equal([{ src_compound_id: '3991' }]);
    });

    it('structure and inchi give the Standard InChI and key of the v1 API', async () => {
      const v1 = await get('/api/v1/compounds', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ type: 'sourceID', compound: 'CHEMBL112', sourceID: 1 }),
      });
      const structure = await get('/legacy/rest/structure/CHEMBL112/1');
      expect(structure.body).to.deep.equal([
        { standardinchi: v1.body.compounds[0].inchi.inchi, standardinchikey: v1.body.compounds[0].standardInchiKey },
      ]);
      expect(structure.body[0].standardinchi).to.equal(paracetamol.inchi);
      const all = await get('/legacy/rest/structure_all/CHEMBL112/1');
      expect(all.body).to.deep.equal([
        { standardinchi: paracetamol.inchi, standardinchikey: paracetamol.key, assignment: '1' },
      ]);
      const inchi = await get(`/legacy/rest/inchi/${paracetamol.key}`);
      expect(inchi.body).to.deep.equal([{ standardinchi: v1.body.compounds[0].inchi.inchi }]);
    });

    it('an id with a "/" (source 103) works percent-encoded, under /legacy/rest and /rest', async () => {
      for (const prefix of ['/legacy/rest', '/rest']) {
        const { status, body } = await get(`${prefix}/src_compound_id/drugs%2FN-4-hydroxyphenyl_acetamide/103`);
        expect(status, prefix).to.equal(200);
        expect(body).to.deep.include({ src_id: '1', src_compound_id: 'CHEMBL112' });
        expect(body).to.deep.include({ src_id: '103', src_compound_id: 'drugs/N-4-hydroxyphenyl_acetamide' });
      }
      const structure = await get('/legacy/rest/structure/drugs%2FN-4-hydroxyphenyl_acetamide/103');
      expect(structure.body[0].standardinchikey).to.equal(paracetamol.key);
      const url = await get('/legacy/rest/src_compound_id_url/drugs%2FN-4-hydroxyphenyl_acetamide/103/1');
      expect(url.body).to.deep.equal([{ url: 'https://www.ebi.ac.uk/chembldb/compound/inspect/CHEMBL112' }]);
    });

    it('orphanIdSource and orphanIdMap find CHEMBL112 without its source', async () => {
      expect((await get('/rest/orphanIdSource/CHEMBL112')).body).to.deep.equal([{ src_id: '1' }]);
      const map = await get('/rest/orphanIdMap/CHEMBL112');
      expect(map.body).to.deep.equal({
        1: [
          { src_id: '1', src_compound_id: 'CHEMBL112', UCI: String(paracetamol.uci) },
          { src_id: '101', src_compound_id: '3991', UCI: String(paracetamol.uci) },
          { src_id: '103', src_compound_id: 'drugs/N-4-hydroxyphenyl_acetamide', UCI: String(paracetamol.uci) },
        ],
      });
      expect((await get('/rest/orphanIdMap/CHEMBL112/101')).body).to.deep.equal({
        1: [{ src_id: '101', src_compound_id: '3991', UCI: String(paracetamol.uci) }],
      });
    });
  });

  it('mapping between ChEMBL and NCI/DTP equals the fixture, pair for pair', async () => {
    const current = references.filter((r) => r.assigment === '1');
    const nciByUci = new Map<string, string[]>();
    for (const r of current.filter((x) => x.src_id === '101'))
      nciByUci.set(r.uci, [...(nciByUci.get(r.uci) ?? []), r.src_compound_id]);
    const expected = current
      .filter((r) => r.src_id === '1')
      .flatMap((r) => (nciByUci.get(r.uci) ?? []).map((nsc) => `${r.src_compound_id}\t${nsc}`));
    const { status, body } = await get('/legacy/rest/mapping/1/101');
    expect(status).to.equal(200);
    expect(expected.length).to.be.above(50);
    expect(body.map((pair: Json) => `${pair['1']}\t${pair['101']}`).sort()).to.deep.equal(expected.sort());
    expect(Object.keys(body[0])).to.deep.equal(['1', '101']);
  });

  describe('whole-source answers, streamed (issue 22)', () => {
    /**
     * The mapping in the order it is answered: by `src` id (UTF-8 byte order), then UCI, then `to_src` id; a pair once.
     */
    const expectedMapping = (src: string, toSrc: string): Record<string, string>[] => {
      const current = references.filter((r) => r.assigment === '1');
      const from = current
        .filter((r) => r.src_id === src)
        .sort((a, b) => byBytes(a.src_compound_id, b.src_compound_id) || Number(a.uci) - Number(b.uci));
      const toIdsByUci = new Map<string, string[]>();
      for (const r of current.filter((x) => x.src_id === toSrc))
        toIdsByUci.set(r.uci, [...(toIdsByUci.get(r.uci) ?? []), r.src_compound_id]);
      const pairs: Record<string, string>[] = [];
      let id: string | undefined;
      let paired = new Set<string>();
      for (const r of from) {
        if (r.src_compound_id !== id) [id, paired] = [r.src_compound_id, new Set()];
        for (const toId of (toIdsByUci.get(r.uci) ?? []).sort(byBytes)) {
          if (paired.has(toId)) continue;
          paired.add(toId);
          pairs.push({ [src]: r.src_compound_id, [toSrc]: toId });
        }
      }
      return pairs;
    };
    const variants: [string, RequestInit | undefined, string][] = [
      ['json', undefined, ''],
      ['xml', { headers: { Accept: 'text/xml' } }, ''],
      ['jsonp', undefined, '?callback=cb'],
    ];
    const paths = [
      '/rest/mapping/1/101',
      '/rest/mapping/101/1',
      '/rest/mapping/22/22',
      '/rest/mapping/22/1',
      '/rest/mapping/104/103',
      '/legacy/rest/mapping/102/104',
      '/rest/mappingaux/1',
    ];
    const bodies = async (list: string[]): Promise<Map<string, { status: number; type: string; text: string }>> => {
      const found = new Map<string, { status: number; type: string; text: string }>();
      for (const path of list) {
        for (const [name, init, query] of variants) {
          const { status, type, text } = await get(path + query, init);
          found.set(`${path} ${name}`, { status, type, text });
        }
      }
      return found;
    };

    it('mapping/1/101 gives every current pair, by ChEMBL id, then UCI, then NSC number', async () => {
      const { status, body } = await get('/rest/mapping/1/101');
      expect(status).to.equal(200);
      expect(body).to.deep.equal(expectedMapping('1', '101'));
      expect((await get('/rest/mapping/104/103')).body).to.deep.equal(expectedMapping('104', '103'));
      // 100976278 of source 22 is on two structures (863, 864): mapped to its own source it pairs with itself through
      // both, and is given once.
      const self = await get('/rest/mapping/22/22');
      expect(self.body).to.deep.equal(expectedMapping('22', '22'));
      expect(self.body.filter((pair: Json) => pair['22'] === '100976278')).to.have.length(1);
    });

    it('pages of 1 and of 7 assignments give the same bytes as one page, in JSON, XML and JSONP', async () => {
      const whole = await bodies(paths);
      expect(whole.get('/rest/mapping/1/101 json')!.status).to.equal(200);
      expect(JSON.parse(whole.get('/rest/mapping/1/101 json')!.text).length).to.be.above(50);
      for (const [size, list] of [
        [7, paths],
        [1, paths.filter((path) => !path.includes('/1/101') && !path.includes('/101/1'))],
      ] as const) {
        const paged = await withPageSize(size, () => bodies(list));
        for (const [key, answer] of paged) expect(answer, `${key} in pages of ${size}`).to.deep.equal(whole.get(key));
      }
      expect(whole.get('/rest/mapping/22/22 xml')!.text).to.match(
        /^<\?xml version="1.0" encoding="UTF-8"\?>\n<opt><data><data key="22">100913612<\/data><\/data>/,
      );
      expect(whole.get('/rest/mapping/1/101 jsonp')!.text).to.equal(
        `/**/ cb(${whole.get('/rest/mapping/1/101 json')!.text});`,
      );
      expect(whole.get('/rest/mappingaux/1 xml')!.text).to.equal(
        '<?xml version="1.0" encoding="UTF-8"?>\n<opt></opt>\n',
      );
    });

    it('the errors of a mapping come before its first byte, in the requested format', async () => {
      const xml = await get('/rest/mapping/1/999', { headers: { Accept: 'text/xml' } });
      expect(xml.status).to.equal(404);
      expect(xml.text).to.equal(
        '<?xml version="1.0" encoding="UTF-8"?>\n<opt><error>source 999 does not exist</error></opt>\n',
      );
      const jsonp = await get('/rest/mappingaux/0?callback=cb');
      expect(jsonp.status).to.equal(400);
      expect(jsonp.text).to.match(/^\/\*\*\/ cb\(\{"error":"\\"0\\" is not a source id/);
    });

    it('HEAD of a mapping answers its status and type without a body', async () => {
      const head = await fetch(`${url}/rest/mapping/1/101`, { method: 'HEAD' });
      expect(head.status).to.equal(200);
      expect(head.headers.get('content-type')).to.match(/^application\/json/);
      expect(await head.text()).to.equal('');
    });

    describe('on an engine client that is watched', () => {
      let api: Awaited<ReturnType<typeof watchedApi>>;
      before(async () => {
        api = await watchedApi(await fixturePrefix());
      });
      after(async () => {
        await api.stop();
      });
      afterEach(() => {
        api.slowMs = 0;
        api.failAt = undefined;
      });

      it('a client that leaves mid-answer makes the server stop reading and close its points in time', async () => {
        await withPageSize(1, async () => {
          // Whole, this answer takes at least 734 searches (367 pages of ChEMBL and a join for each), some 15 s at 20
          // ms each.
          api.slowMs = 20;
          const opened = api.opened;
          const leaving = new AbortController();
          const response = await fetch(`${api.url}/rest/mapping/1/101`, { signal: leaving.signal });
          expect(response.status).to.equal(200);
          const reader = response.body!.getReader();
          expect((await reader.read()).done).to.equal(false);
          leaving.abort();
          await until(() => api.opened === opened + 2 && api.closed === api.opened, 'both points in time to be closed');
          const searches = api.pitSearches;
          expect(searches).to.be.below(100);
          await sleep(300);
          expect(api.pitSearches, 'searches after the client left').to.equal(searches);
        });
      });

      it(
        'an engine failure after the first byte cuts the answer short; before ' + 'it, it is a 503 in the legacy shape',
        async () => {
          await withPageSize(1, async () => {
            api.failAt = api.pitSearches + 30;
            api.slowMs = 5;
            const opened = api.opened;
            const response = await fetch(`${api.url}/rest/mapping/1/101`);
            expect(response.status).to.equal(200);
            let cut: unknown;
            const text = await response.text().catch((error: unknown) => {
              cut = error;
              return '';
            });
            expect(cut, `a complete answer of ${text.length} characters`).to.be.an('error');
            await until(
              () => api.closed === api.opened && api.opened === opened + 2,
              'the points in time to be closed',
            );

            api.failAt = api.pitSearches + 1;
            const refused = await fetch(`${api.url}/rest/mapping/1/101`, { headers: { Accept: 'text/xml' } });
            expect(refused.status).to.equal(503);
            expect(await refused.text()).to.contain(
              '<opt><error>the search engine is unreachable; try again shortly</error></opt>',
            );
            await until(() => api.closed === api.opened, 'the points in time to be closed');
          });
        },
      );
    });
  });

  it('src_ids, sources, release and mappingaux describe the fixture', async () => {
    expect((await get('/rest/src_ids/')).body).to.deep.equal(
      ['1', '9', '22', '101', '102', '103', '104'].map((src_id) => ({ src_id })),
    );
    expect((await get('/rest/src_ids')).status).to.equal(200);
    const [chembl] = (await get('/rest/sources/1')).body;
    expect(chembl).to.include({
      src_id: '1',
      name: 'chembl',
      name_label: 'ChEMBL',
      src_release_number: '17',
      base_id_url_available: '1',
    });
    const release = (await get('/rest/release')).body;
    expect(release).to.include({
      source_count: '7',
      structure_count: String(structures.length),
      xref_count: String(references.length),
      xref_count_current: String(references.filter((r) => r.assigment === '1').length),
      xref_count_obsolete: '6',
    });
    expect(Number(release.release)).to.be.above(0);
    expect(release.date).to.match(/^\d{4}-\d{2}-\d{2}T/);
    expect((await get('/rest/mappingaux/1')).body).to.deep.equal([]);
  });

  it('the _all forms show the obsolete NCI ids of the fixture with assignment "0"', async () => {
    const obsolete = references.find((r) => r.src_id === '101' && r.assigment === '0')!;
    const sibling = references.find((r) => r.src_id === '101' && r.assigment === '1' && r.uci === obsolete.uci)!;
    const key = keyOfUci.get(Number(obsolete.uci))!;
    expect((await get(`/rest/inchikey/${key}`)).body).to.not.deep.include({
      src_id: '101',
      src_compound_id: obsolete.src_compound_id,
    });
    expect((await get(`/rest/inchikey_all/${key}`)).body).to.deep.include({
      src_id: '101',
      src_compound_id: obsolete.src_compound_id,
      assignment: '0',
    });
    expect((await get(`/rest/src_compound_id_all/${sibling.src_compound_id}/101/101`)).body).to.deep.equal(
      [
        { src_compound_id: sibling.src_compound_id, assignment: '1' },
        { src_compound_id: obsolete.src_compound_id, assignment: '0' },
      ].sort((a, b) => (a.src_compound_id < b.src_compound_id ? -1 : 1)),
    );
    expect((await get(`/rest/structure_all/${obsolete.src_compound_id}/101`)).body).to.deep.equal([
      {
        standardinchi: structures.find((s) => s.uci === obsolete.uci)!.standardinchi,
        standardinchikey: key,
        assignment: '0',
      },
    ]);
    // The id exists, only not as a current one: nothing to give, not "does not exist".
    expect(await get(`/rest/structure/${obsolete.src_compound_id}/101`)).to.deep.include({ status: 200, body: [] });
  });

  describe('connectivity search', () => {
    const search = async (path: string): Promise<Json> => {
      const answer = await get(path);
      expect(answer.status, `${path}: ${answer.text}`).to.equal(200);
      return answer.body;
    };
    const ucisOf = (nested: Json[]): number[] =>
      [
        ...new Set(
          flatten(nested)
            .map((e) => structures.find((s) => s.standardinchikey === e.CpdId_InChIKey)!.uci)
            .map(Number),
        ),
      ].sort((a, b) => a - b);

    it('key_search on a stereoisomer group (C=0) finds every stereoisomer, with "0"/"1" layer flags', async () => {
      const group = structures.filter((s) => s.standardinchikey.startsWith(glucoseBlock));
      expect(group).to.have.length(9);
      const query = group.find((s) => s.standardinchikey.endsWith('-UHFFFAOYSA-N'))!;
      const body = await search(`/rest/key_search/${query.standardinchikey}/0/0/0`);
      expect(Object.keys(body)).to.deep.equal(['1']);
      expect(ucisOf(body['1'])).to.deep.equal(group.map((s) => Number(s.uci)).sort((a, b) => a - b));
      const entries = flatten(body['1']);
      expect(
        entries.every((e) => e.C === '0' && e.p === '0' && e.Matching_Query_InChI === query.standardinchi),
      ).to.equal(true);
      const self = entries.find((e) => e.CpdId_InChIKey === query.standardinchikey)!;
      expect([self.b, self.i, self.m, self.p, self.s, self.t]).to.deep.equal(['0', '0', '0', '0', '0', '0']);
      const stereo = entries.find((e) => e.CpdId_InChIKey !== query.standardinchikey)!;
      expect(stereo.t).to.equal('1');
      // Left-off criteria are 0.
      expect(await search(`/legacy/rest/key_search/${query.standardinchikey}`)).to.deep.equal(body);
      expect(await search(`/legacy/rest/key_search/${query.standardinchikey}/0/0/0/0/0/0/0/0`)).to.deep.equal(body);
    });

    it('key_search with a 14-letter block compares against the connectivity layers only', async () => {
      const body = await search(`/rest/key_search/${glucoseBlock}`);
      const entries = flatten(body['1']);
      expect(entries[0].Matching_Query_InChI).to.equal('InChI=1S/C6H12O6/c7-1-3(9)5(11)6(12)4(10)2-8/h1,3-6,8-12H,2H2');
      expect(ucisOf(body['1'])).to.have.length(9);
      const table = rowsOf((await search(`/rest/key_search/${glucoseBlock}/0/0/0/0/0/0/0/1`))['1']);
      expect(table.every((row) => row.Query_InChIKey === 'GZCGUPFRVQAUEE-UHFFFAOYSA-N')).to.equal(true);
      // B=1: the first two blocks, so only the structure without stereo.
      expect(ucisOf((await search(`/rest/key_search/${glucoseBlock}/0/1`))['1'])).to.deep.equal([237]);
    });

    it('key_search on a hydrochloride with each C value gives each relation', async () => {
      const byC = async (c: number): Promise<Record<string, string | null>[]> =>
        flatten((await search(`/rest/key_search/${hydrochloride.key}/0/0/${c}`))['1']);
      const c0 = await byC(0);
      expect(ucisOf((await search(`/rest/key_search/${hydrochloride.key}/0/0/0`))['1'])).to.deep.equal([
        hydrochloride.uci,
        hydrochloride.racemate,
      ]);
      expect(c0.every((e) => e.C === '0')).to.equal(true);
      // The query has two components: no "query is a component" relation.
      expect(await byC(1)).to.deep.equal([]);
      const c2 = await byC(2);
      expect(ucisOf((await search(`/rest/key_search/${hydrochloride.key}/0/0/2`))['1'])).to.deep.equal(
        hydrochloride.freeBases,
      );
      expect(c2.every((e) => e.C === '2' && e.p === null)).to.equal(true);
      const c3 = await byC(3);
      expect(c3.every((e) => e.C === '3' && e.p === null)).to.equal(true);
      expect(c3.map((e) => e.CpdId_InChIKey)).to.include('GQWNECFJGBQMBO-UHFFFAOYSA-N');
      const c4 = await byC(4);
      const relationOf = new Map(c4.map((e) => [e.CpdId_InChIKey, e.C]));
      expect(relationOf.get(keyOfUci.get(hydrochloride.racemate)!)).to.equal('0');
      expect(relationOf.get(hydrochloride.freeBaseKey)).to.equal('2');
      expect(relationOf.get('GQWNECFJGBQMBO-UHFFFAOYSA-N')).to.equal('3');
      expect(new Set(c4.map((e) => e.CpdId_InChIKey))).to.deep.equal(
        new Set([...c0, ...c2, ...c3].map((e) => e.CpdId_InChIKey)),
      );
      // From the free base, the hydrochlorides are "query is a component of the hit".
      const fromBase = flatten((await search(`/rest/key_search/${hydrochloride.freeBaseKey}/0/0/1`))['1']);
      expect([...new Set(fromBase.map((e) => e.CpdId_InChIKey))].sort()).to.deep.equal(
        [keyOfUci.get(hydrochloride.uci), keyOfUci.get(hydrochloride.racemate)].sort(),
      );
      expect(fromBase.every((e) => e.C === '1' && e.p === null)).to.equal(true);
    });

    it('H=0 and H=1 carry the same matches', async () => {
      const inchiOfKey = (key: string): string => structures.find((x) => x.standardinchikey === key)!.standardinchi;
      for (const [path, queryKey] of [
        [`/rest/key_search/${hydrochloride.key}/0/0/4`, hydrochloride.key],
        ['/rest/cpd_search/CHEMBL1511957/1/0/0/4', keyOfUci.get(hydrochloride.racemate)!],
      ]) {
        const nested = flatten((await search(`${path}/0/0/0/0/0`))['1']);
        const rows = rowsOf((await search(`${path}/0/0/0/0/1`))['1']);
        expect(rows.length).to.be.above(3);
        // The table keeps the search's order; the nested form groups it by source.
        const canonical = (list: object[]): string[] => list.map((x) => JSON.stringify(x)).sort();
        expect(canonical(rows.map(({ Full_Query_InChI: _q, Query_InChIKey: _k, ...row }) => row))).to.deep.equal(
          canonical(
            nested.map((e) => ({
              src_compound_id: e.src_compound_id,
              src_id: e.src_id,
              aux_src: e.aux_src,
              assignment: e.assignment,
              label: e.label,
              C: e.C,
              Full_CpdId_InChI: e.Full_CpdId_InChI,
              Matching_Query_InChI: e.Matching_Query_InChI,
              Matching_CpdId_InChI: e.Matching_CpdId_InChI,
              p: e.p,
              b: e.b,
              t: e.t,
              m: e.m,
              s: e.s,
              i: e.i,
              CpdId_InChIKey: e.CpdId_InChIKey,
            })),
          ),
        );
        expect(
          rows.every((row) => row.Query_InChIKey === queryKey && row.Full_Query_InChI === inchiOfKey(queryKey)),
        ).to.equal(true);
      }
      const header = (await search(`/rest/key_search/${hydrochloride.key}/0/0/0/0/0/0/0/1`))['1'][0];
      expect(header).to.deep.equal([
        'src_compound_id',
        'src_id',
        'aux_src',
        'assignment',
        'label',
        'C',
        'Full_Query_InChI',
        'Full_CpdId_InChI',
        'Matching_Query_InChI',
        'Matching_CpdId_InChI',
        'p',
        'b',
        't',
        'm',
        's',
        'i',
        'Query_InChIKey',
        'CpdId_InChIKey',
      ]);
    });

    it('F=0 labels hydrogen chloride in a hydrochloride; F=1 labels nothing', async () => {
      const labelled = flatten((await search(`/rest/key_search/${hydrochloride.key}/0/0/3/0/0/0`))['1']);
      const throughHcl = labelled.filter((e) => e.Matching_CpdId_InChI === 'InChI=1S/ClH/h1H');
      expect(throughHcl.length).to.be.above(5);
      expect(throughHcl.every((e) => e.label === 'HCl')).to.equal(true);
      expect(
        labelled.filter((e) => e.Matching_CpdId_InChI !== 'InChI=1S/ClH/h1H').every((e) => e.label === ''),
      ).to.equal(true);
      const unlabelled = flatten((await search(`/rest/key_search/${hydrochloride.key}/0/0/3/0/0/1`))['1']);
      expect(unlabelled.map((e) => e.label)).to.deep.equal(labelled.map(() => ''));
    });

    it('D and E limit component expansion', async () => {
      // HCl is in more than 2 structures of the fixture: a frequency block of 2 keeps it from being searched.
      const capped = flatten((await search(`/rest/key_search/${hydrochloride.key}/0/0/3/2`))['1']);
      expect(capped.some((e) => e.Matching_CpdId_InChI === 'InChI=1S/ClH/h1H')).to.equal(false);
      expect(capped.map((e) => e.CpdId_InChIKey)).to.include(keyOfUci.get(hydrochloride.racemate));
      // An InChI length block of 20 characters drops HCl ("InChI=1S/ClH/h1H", 16) only.
      const long = flatten((await search(`/rest/key_search/${hydrochloride.key}/0/0/3/0/20`))['1']);
      expect(long.map((e) => e.CpdId_InChIKey).sort()).to.deep.equal(capped.map((e) => e.CpdId_InChIKey).sort());
    });

    it('A restricts the matches to one source', async () => {
      const all = flatten((await search(`/rest/key_search/${glucoseBlock}/0`))['1']);
      const only = await search(`/rest/key_search/${glucoseBlock}/103`);
      expect(only['1'].map((s: Json) => s.src_id)).to.deep.equal(['103']);
      expect(flatten(only['1'])).to.deep.equal(all.filter((e) => e.src_id === '103'));
      expect(all.some((e) => e.src_id !== '103')).to.equal(true);
    });

    it('G=1 adds obsolete ids', async () => {
      const obsolete = references.find((r) => r.src_id === '101' && r.assigment === '0')!;
      const key = keyOfUci.get(Number(obsolete.uci))!;
      const current = flatten((await search(`/rest/key_search/${key}/101/0/0/0/0/0/0`))['1']);
      expect(current.map((e) => e.src_compound_id)).to.not.include(obsolete.src_compound_id);
      const withObsolete = flatten((await search(`/rest/key_search/${key}/101/0/0/0/0/0/1`))['1']);
      expect(withObsolete.find((e) => e.src_compound_id === obsolete.src_compound_id)).to.include({
        assignment: '0',
        C: '0',
      });
      expect(withObsolete.length).to.equal(current.length + 1);
    });

    it('cpd_search numbers each structure an id stands for', async () => {
      const one = await search('/rest/cpd_search/CHEMBL112/1');
      expect(flatten(one['1']).map((e) => e.src_compound_id)).to.include.members(['CHEMBL112', '3991']);
      const two = await search('/rest/cpd_search/100976278/22');
      expect(Object.keys(two)).to.deep.equal(['1', '2']);
      const queried = [two['1'], two['2']].map((result) =>
        flatten(result)
          .filter((e) => e.src_compound_id === '100976278')
          .map((e) => e.CpdId_InChIKey),
      );
      expect(queried.flat().sort()).to.deep.equal(['FOXHEVJOMXBFNJ-OJDZSJEKSA-O', 'PMPKIFXHVHQBCN-OJDZSJEKSA-P']);
      expect(queried.every((keys) => keys.length === 1)).to.equal(true);
    });
  });

  describe('formats', () => {
    it("XML for Accept: text/xml, in UniChem 1's <opt><data/></opt> form", async () => {
      const { status, type, text } = await get('/legacy/rest/src_compound_id/CHEMBL112/1/101', {
        headers: { Accept: 'text/xml' },
      });
      expect(status).to.equal(200);
      expect(type).to.match(/^text\/xml/);
      expect(text).to.contain('<opt><data src_compound_id="3991"/></opt>');
      const nested = await get(`/rest/verbose_inchikey/${paracetamol.key}`, { headers: { Accept: 'text/xml' } });
      expect(nested.text).to.contain('<src_compound_id>drugs/N-4-hydroxyphenyl_acetamide</src_compound_id>');
      const search = await get(`/rest/key_search/${glucoseBlock}/103`, { headers: { Accept: 'text/xml' } });
      expect(search.text).to.match(
        /<opt><data key="1" src_id="103" [^>]*><data key="Full Query InChIKey">GZCGUPFRVQAUEE<\/data><data key="Full Query InChI">InChI=1S\/C6H12O6\/[^<]+<\/data><src_matches src_compound_id="carbohydrates\/[^"]+"/,
      );
    });

    it('JSONP for ?callback=name, as application/javascript', async () => {
      const { status, type, text } = await get(`/rest/inchi/${paracetamol.key}?callback=handleInchi`);
      expect(status).to.equal(200);
      expect(type).to.match(/^application\/javascript/);
      expect(text).to.equal(`/**/ handleInchi(${JSON.stringify([{ standardinchi: paracetamol.inchi }])});`);
    });
  });

  describe('errors', () => {
    const expectError = async (path: string, status: number, pattern: RegExp, init?: RequestInit): Promise<void> => {
      const answer = await get(path, init);
      expect(answer.status, `${path}: ${answer.text}`).to.equal(status);
      expect(answer.type).to.match(/^application\/json/);
      expect(Object.keys(answer.body)).to.deep.equal(['error']);
      expect(answer.body.error).to.match(pattern);
    };

    it('400 for an unknown method or a wrong number of segments, 405 for another HTTP method', async () => {
      await expectError('/legacy/rest/no_such_method/CHEMBL112', 400, /"no_such_method" is not a method.*inchikey/);
      await expectError('/rest/', 400, /no method given/);
      await expectError(
        `/rest/inchikey/${paracetamol.key}/1`,
        400,
        /wrong number of segments for inchikey.*inchikey\/\{key\}/,
      );
      await expectError('/rest/src_compound_id/CHEMBL112', 400, /wrong number of segments for src_compound_id/);
      await expectError(
        '/rest/src_compound_id/drugs/N-4-hydroxyphenyl_acetamide/103/1/2',
        400,
        /wrong number of segments/,
      );
      await expectError(
        `/rest/key_search/${paracetamol.key}/0/0/0/0/0/0/0/0/0`,
        400,
        /wrong number of segments for key_search/,
      );
      // Repeated slashes are one: mapping//101 is mapping/101, a segment short.
      await expectError('/rest/mapping//101', 400, /wrong number of segments for mapping/);
      await expectError(`/rest/inchikey/${paracetamol.key}`, 405, /POST is not a method.*GET, HEAD, OPTIONS/, {
        method: 'POST',
      });
      await expectError('/rest/no_such_method/1', 405, /GET \(and HEAD\) only/, { method: 'DELETE' });
    });

    it(
      '400 for a malformed InChIKey or source id, an out-of-range criterion, ' + 'a callback that is not an identifier',
      async () => {
        await expectError('/rest/inchikey/RZVAJINKPMORJF-UHFFFAOYSA', 400, /not a Standard InChIKey/);
        await expectError('/rest/inchi/RZVAJINKPMORJF-UHFFFAOYNA-N', 400, /not a Standard InChIKey/);
        await expectError('/rest/key_search/RZVAJINKPMOR', 400, /neither a Standard InChIKey .* nor its first block/);
        await expectError('/rest/src_compound_id/CHEMBL112/chembl', 400, /not a source id/);
        for (const [criteria, name] of [
          ['0/2', 'B'],
          ['0/0/5', 'C'],
          ['0/0/0/501', 'D'],
          ['0/0/0/0/2001', 'E'],
          ['0/0/0/0/0/2', 'F'],
          ['0/0/0/0/0/0/2', 'G'],
          ['0/0/0/0/0/0/0/2', 'H'],
          ['-1', 'A'],
          ['0/x', 'B'],
        ]) {
          await expectError(`/rest/key_search/${paracetamol.key}/${criteria}`, 400, new RegExp(`criterion ${name}`));
        }
        await expectError('/rest/cpd_search/CHEMBL112/1/0/0/7', 400, /criterion C/);
        for (const callback of ['alert(1)', 'a.b', '1abc', 'x%3Balert(1)%2F%2F', '']) {
          await expectError(`/rest/inchi/${paracetamol.key}?callback=${callback}`, 400, /callback/);
        }
      },
    );

    it('404 when the key, id or source does not exist', async () => {
      await expectError('/rest/inchikey/AAAAAAAAAAAAAA-BBBBBBBBSA-N', 404, /no structure with InChIKey/);
      await expectError('/rest/inchi/AAAAAAAAAAAAAA-BBBBBBBBSA-N', 404, /no structure/);
      await expectError('/rest/key_search/AAAAAAAAAAAAAA', 404, /no structure with the first InChIKey block/);
      await expectError('/rest/key_search/AAAAAAAAAAAAAA-BBBBBBBBSA-N/0/0/4', 404, /no structure with InChIKey/);
      await expectError('/rest/src_compound_id/CHEMBL0/1', 404, /no compound "CHEMBL0" in source 1/);
      await expectError('/rest/src_compound_id/CHEMBL112/999', 404, /source 999 does not exist/);
      await expectError('/rest/src_compound_id/CHEMBL112/1/999', 404, /source 999 does not exist/);
      await expectError('/rest/mapping/1/999', 404, /source 999/);
      await expectError('/rest/sources/999', 404, /source 999/);
      await expectError('/rest/orphanIdSource/CHEMBL0', 404, /no source holds/);
      await expectError('/rest/cpd_search/CHEMBL0/1', 404, /no compound "CHEMBL0" in source 1/);
      await expectError(`/rest/key_search/${paracetamol.key}/999`, 404, /source 999/);
      // Ten digits are a well-formed source id, but none over 2147483647 can be a source's.
      await expectError('/rest/src_compound_id/CHEMBL112/2147483648', 404, /^source 2147483648 does not exist/);
      await expectError('/rest/src_compound_id/CHEMBL112/1/9999999999', 404, /^source 9999999999 does not exist/);
      await expectError('/legacy/rest/mapping/9999999999/1', 404, /^source 9999999999 does not exist/);
      await expectError('/rest/sources/4294967296', 404, /^source 4294967296 does not exist/);
      await expectError('/rest/src_compound_id_all_obsolete/CHEMBL0/1', 404, /no compound "CHEMBL0" in source 1/);
    });

    it('errors follow the requested format: XML and JSONP', async () => {
      const xml = await get('/rest/inchikey/AAAAAAAAAAAAAA-BBBBBBBBSA-N', { headers: { Accept: 'text/xml' } });
      expect(xml.status).to.equal(404);
      expect(xml.text).to.contain('<opt><error>no structure with InChIKey AAAAAAAAAAAAAA-BBBBBBBBSA-N</error></opt>');
      const unknown = await get('/rest/bogus', { headers: { Accept: 'text/xml' } });
      expect(unknown.status).to.equal(400);
      expect(unknown.text).to.match(/<opt><error>&quot;bogus&quot; is not a method/);
      const jsonp = await get('/rest/sources/999?callback=cb');
      expect(jsonp.status).to.equal(404);
      expect(jsonp.text).to.equal('/**/ cb({"error":"source 999 does not exist"});');
    });

    it('503 with {"error"} when the engine is unreachable', async () => {
      const down = await startServer(testConfig(await fixturePrefix(), { ES_URL: 'http://127.0.0.1:9' }), {}, 0);
      try {
        const answer = await client(down.url)(`/rest/inchikey/${paracetamol.key}`);
        expect(answer.status).to.equal(503);
        expect(answer.body).to.deep.equal({ error: 'the search engine is unreachable; try again shortly' });
      } finally {
        await down.stop();
      }
    });
  });

  it('the OpenAPI document lists the legacy paths under /legacy and /', async () => {
    const { body } = await get('/api/v1/openapi.json');
    for (const path of [
      '/rest/inchikey/{key}',
      '/rest/src_compound_id/{id}/{src}/{to_src}',
      '/rest/mapping/{src}/{to_src}',
      '/rest/key_search/{key}/{A}/{B}/{C}/{D}/{E}/{F}/{G}/{H}',
      '/rest/cpd_search/{id}/{src}',
    ]) {
      expect(body.paths[path], path).to.be.an('object');
      expect(body.paths[path].servers.map((s: Json) => s.url)).to.deep.equal(['/legacy', '/']);
    }
  });

  describe('after a reload of bzr_names (104) that removed an id', () => {
    const expected = JSON.parse(readFileSync(join(fixturesDir, 'releases', 'expected.json'), 'utf8'));
    const removed = expected.removed[0] as string;
    const removedUci = references.find((r) => r.src_id === '104' && r.src_compound_id === removed)!.uci;
    const diazepamUci = references.find((r) => r.src_id === '104' && r.src_compound_id === 'Diazepam')!.uci;
    let reloaded: (path: string, init?: RequestInit) => Promise<Answer>;

    before(async () => {
      const prefix = await loadFixture(freshPrefix('legacy-reload'));
      // Release 2 of bzr_names, without Diazepam: an id removed from a structure that keeps another
      // current id (drugs/diazepam in source 103), beside the three ids release 2 removes itself.
      const folder = mkdtempSync(join(tmpdir(), 'chemxref-legacy-'));
      const release = join(folder, 'bzr-release-2-without-diazepam.tsv');
      const lines = readFileSync(join(fixturesDir, 'releases', 'bzr-release-2.tsv'), 'utf8').split('\n');
      // With auxiliary data on the ids from A to L, for mappingaux.
      const kept = lines.filter((line) => line !== '' && !line.startsWith('Diazepam\t'));
      writeFileSync(
        release,
        [
          `${kept[0]}\taux_src`,
          ...kept
            .slice(1)
            .map((line) => `${line}\t${/^[A-L]/.test(line) ? `bzr:${line.split('\t')[0].toLowerCase()}` : ''}`),
        ].join('\n'),
      );
      await load(prefix, ['source', '104', release]);
      const server = await startServer(testConfig(prefix), { validateResponses: true }, 0);
      stops.push(server.stop);
      reloaded = client(server.url);
    });

    it(
      'src_compound_id_all, queried with another current id of the ' +
        'structure, lists the removed id with assignment "0"',
      async () => {
        const { status, body } = await reloaded('/legacy/rest/src_compound_id_all/drugs%2Fdiazepam/103');
        expect(status).to.equal(200);
        expect(body).to.deep.include({ src_id: '104', src_compound_id: 'Diazepam', assignment: '0' });
        expect(body).to.deep.include({ src_id: '103', src_compound_id: 'drugs/diazepam', assignment: '1' });
        // Medazepam was re-pointed to this structure by the release.
        expect(body).to.deep.include({ src_id: '104', src_compound_id: 'Medazepam', assignment: '1' });
        expect((await reloaded('/legacy/rest/src_compound_id_all/drugs%2Fdiazepam/103/104')).body).to.deep.equal([
          { src_compound_id: 'Diazepam', assignment: '0' },
          { src_compound_id: 'Medazepam', assignment: '1' },
        ]);
      },
    );

    it('src_compound_id does not list it', async () => {
      const { body } = await reloaded('/legacy/rest/src_compound_id/drugs%2Fdiazepam/103');
      expect(body).to.deep.equal([
        { src_id: '103', src_compound_id: 'drugs/diazepam' },
        { src_id: '104', src_compound_id: 'Medazepam' },
      ]);
      // Both ids are obsolete now: they exist, with no current structure to map from.
      expect(await reloaded('/legacy/rest/src_compound_id/Diazepam/104')).to.deep.include({ status: 200, body: [] });
      expect(await reloaded(`/legacy/rest/src_compound_id/${removed}/104`)).to.deep.include({ status: 200, body: [] });
    });

    it('src_compound_id_all_obsolete on the removed id gives its UCI and key', async () => {
      expect((await reloaded('/legacy/rest/src_compound_id_all_obsolete/Diazepam/104/104')).body).to.deep.equal([
        { src_compound_id: 'Diazepam', assignment: '0', UCI: diazepamUci },
        { src_compound_id: 'Medazepam', assignment: '1', UCI: diazepamUci },
      ]);
      const all = (await reloaded('/legacy/rest/src_compound_id_all_obsolete/Diazepam/104')).body;
      expect(all).to.deep.include({
        src_id: '103',
        src_compound_id: 'drugs/diazepam',
        assignment: '1',
        InChIKey: keyOfUci.get(Number(diazepamUci)),
      });
      expect((await reloaded(`/legacy/rest/src_compound_id_all_obsolete/${removed}/104/104`)).body).to.deep.equal([
        { src_compound_id: removed, assignment: '0', UCI: removedUci },
      ]);
      for (const id of expected.removed) {
        expect(
          (await reloaded(`/rest/src_compound_id_all_obsolete/${id}/104`)).body.map((x: Json) => x.assignment),
          id,
        ).to.deep.equal(['0']);
      }
    });

    it('mappingaux lists the current ids with auxiliary data, with it, by id, the same in pages of 2', async () => {
      const lines = readFileSync(join(fixturesDir, 'releases', 'bzr-release-2.tsv'), 'utf8')
        .split('\n')
        .slice(1)
        .filter(Boolean);
      const expectedRows = lines
        .map((line) => line.split('\t')[0])
        .filter((id) => id !== 'Diazepam' && /^[A-L]/.test(id))
        .sort(byBytes)
        .map((id) => ({ src_compound_id: id, 'auxiliary data': `bzr:${id.toLowerCase()}` }));
      expect(expectedRows.length).to.be.above(5);
      const whole = await reloaded('/rest/mappingaux/104');
      expect(whole.body).to.deep.equal(expectedRows);
      expect((await withPageSize(2, () => reloaded('/rest/mappingaux/104'))).text).to.equal(whole.text);
      const xml = await withPageSize(2, () => reloaded('/rest/mappingaux/104', { headers: { Accept: 'text/xml' } }));
      expect(xml.text).to.contain(
        `<opt><data src_compound_id="${expectedRows[0].src_compound_id}"><data ` +
          `key="auxiliary data">${expectedRows[0]['auxiliary data']}</data></data>`,
      );
    });

    it('key_search with G=1 finds the removed id, G=0 does not', async () => {
      const key = keyOfUci.get(Number(removedUci))!;
      expect((await reloaded(`/rest/key_search/${key}`)).status).to.equal(404);
      const withObsolete = flatten((await reloaded(`/rest/key_search/${key}/104/0/0/0/0/0/1`)).body['1']);
      expect(withObsolete.map((e) => [e.src_compound_id, e.assignment])).to.deep.equal([[removed, '0']]);
    });
  });
});
