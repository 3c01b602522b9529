import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import initRDKitModule from '@rdkit/rdkit';
import { Depictor } from '../src/toolkits/depiction';
import { startApi, type RunningApi } from './support/api';
import { fixtureDump, fixturesDir, fixturePrefix, freshPrefix, loadFixture, testConfig } from './support/fixture';

/** The compound page's section of similar structures. */
function similarSection(page: string): string {
  const start = page.indexOf('<h2 id="similar">');
  expect(start, 'the page has a section of similar structures').to.be.above(-1);
  return page.slice(start, page.indexOf('</article>', start));
}

/** The UCIs a page's structure list links to, in order. */
function linkedUcis(text: string): number[] {
  return [...text.matchAll(/<li><a href="\/compound\/(\d+)"><img class="thumb" src="\/api\/v1\/images\/\1"/g)].map(
    ([, uci]) => Number(uci),
  );
}

const paracetamol = {
  key: 'RZVAJINKPMORJF-UHFFFAOYSA-N',
  inchi: 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)',
  uci: 614,
};

/** L-methyldopa, a chiral drug: ChEMBL's CHEMBL459. */
const methyldopa = {
  inchi: 'InChI=1S/C10H13NO4/c1-10(11,9(14)15)5-6-2-3-7(12)8(13)4-6/h2-4,12-13H,5,11H2,1H3,(H,14,15)/t10-/m0/s1',
  uci: 84,
};

describe('the web pages: search, compound, sources', function () {
  this.timeout(120_000);
  let api: RunningApi;
  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
  });
  after(() => api.stop());

  const get = async (path: string): Promise<{ status: number; text: string; type: string }> => {
    const answer = await api.get(path);
    return { status: answer.status, text: answer.text, type: answer.headers.get('content-type') ?? '' };
  };

  it(
    'a Standard InChIKey finds paracetamol: its identifiers, depiction and ' +
      'every source holding it, linked to their pages',
    async () => {
      const answer = await get(`/search?q=${paracetamol.key}`);
      expect(answer.status).to.equal(200);
      expect(answer.type).to.match(/^text\/html/);
      expect(answer.text).to.contain('Searched: a Standard InChIKey.');
      expect(answer.text).to.contain('<h1>UCI 614</h1>');
      expect(answer.text).to.contain(`<img class="large" src="/api/v1/images/614"`);
      expect(answer.text).to.contain(paracetamol.inchi);
      expect(answer.text).to.contain(
        '<a href="https://www.ebi.ac.uk/chembldb/compound/inspect/CHEMBL112" rel="noopener">CHEMBL112</a>',
      );
      expect(answer.text).to.contain('<a href="/sources/1">ChEMBL</a>');
      expect(answer.text).to.contain('3 current ids in 3 sources');
      expect(answer.text).to.contain('<link rel="canonical" href="/compound/614">');
    },
  );

  it("every page's footer, like the README, names the licence of each data source shipped", async () => {
    const licences = [
      'ChEMBL CC BY-SA 3.0',
      'ZINC',
      'PubChem and NCI/DTP public domain',
      'CAS Common Chemistry CC BY-NC 4.0',
      'chemical-structures BSD-style',
      'RDKit data BSD',
      '@datagrok/chem MIT',
      'chemicals 1.5.2 MIT',
    ];
    for (const path of ['/', '/sources', `/compound/${paracetamol.uci}`]) {
      const footer = /<footer>([\s\S]*?)<\/footer>/.exec((await get(path)).text)?.[1] ?? '';
      for (const licence of licences) expect(footer, path).to.contain(licence);
    }
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    for (const line of [
      'ChEMBL (source 1) | CC BY-SA 3.0',
      'ZINC (source 9)',
      'PubChem (source 22) | public domain',
      '(source 101) | public domain',
      'CAS Common Chemistry | CC BY-NC 4.0',
      'chemical-structures (source 103) | BSD-style',
      'source 104 | BSD',
      '@datagrok/chem',
      '`chemicals` 1.5.2, PubChem-derived: 139 approved drugs',
    ])
      expect(readme).to.contain(line);
  });

  it(
    'CHEMBL112 with ChEMBL picked, chembl:CHEMBL112, CHEMBL112 alone, the ' +
      'InChI, the SMILES and the UCI all open the same compound, each saying ' +
      'what it understood',
    async () => {
      const searches: [string, string][] = [
        ['/search?q=CHEMBL112&source=1', 'Searched: compound id CHEMBL112 in ChEMBL.'],
        ['/search?q=chembl%3ACHEMBL112', 'Searched: compound id CHEMBL112 in ChEMBL.'],
        ['/search?q=1%3ACHEMBL112', 'Searched: compound id CHEMBL112 in ChEMBL.'],
        ['/search?q=CHEMBL112', 'Searched: compound id or name CHEMBL112, in every source.'],
        [`/search?q=${encodeURIComponent(paracetamol.inchi)}`, 'Searched: a Standard InChI.'],
        ['/search?q=614', 'Searched: UCI 614 (pick a source to search 614 as a compound id).'],
        ['/search?q=%20rzvajinkpmorjf-uhfffaoysa-n%20', 'Searched: a Standard InChIKey.'],
        ['/search?q=RzVaJiNkPmOrJf-UhFfFaOySa-N', 'Searched: a Standard InChIKey.'],
        [
          '/search?q=CC(%3DO)Nc1ccc(O)cc1',
          'Searched: a SMILES, by the Standard InChIKey computed from it (RZVAJINKPMORJF-UHFFFAOYSA-N).',
        ],
      ];
      for (const [path, said] of searches) {
        const answer = await get(path);
        expect(answer.status, path).to.equal(200);
        expect(answer.text, path).to.contain(said);
        expect(answer.text, path).to.contain('<h1>UCI 614</h1>');
      }
    },
  );

  it('input it cannot use gets a clear message and the status that goes with it', async () => {
    const cases: [string, number, string][] = [
      ['/search?q=CC(%3DO)Nc1ccc(O', 400, 'the SMILES could not be read: extra open parentheses'],
      ['/search?q=CC(%3DO)Nc1ccc(*)cc1', 422, 'the SMILES was read, but it has no Standard InChI'],
      ['/search?q=InChI%3D1%2FC8H9NO2%2Fc1', 400, 'This is not a Standard InChI'],
      ['/search?q=RZVAJINKPMORJF-UHFFFAOYNA-N', 400, 'is a non-standard InChIKey'],
      ['/search?q=InChI%3D1S%2Fnonsense', 400, 'Cannot search this'],
      ['/search?q=', 400, 'Type a name, a Standard InChIKey'],
      ['/search?q=CHEMBL112&source=999', 400, 'There is no source 999.'],
      ['/search?q=CHEMBL112&source=abc', 400, '&quot;abc&quot; is not a source id.'],
      ['/search?q=NOSUCHID42', 404, 'No current compound id or name NOSUCHID42 in any source'],
      ['/compound/999999999', 404, 'There is no structure with UCI 999999999.'],
      ['/sources/999', 404, 'There is no source 999.'],
    ];
    for (const [path, status, text] of cases) {
      const answer = await get(path);
      expect(answer.status, path).to.equal(status);
      expect(answer.text, path).to.contain(text);
      expect(answer.text, path).to.contain('role="alert"');
    }
  });

  it(
    'an InChIKey no source holds says so and offers the search of its ' +
      'skeleton, which lists the structures sharing it',
    async () => {
      const missing = await get('/search?q=GZCGUPFRVQAUEE-AAAAAAAASA-N');
      expect(missing.status).to.equal(404);
      expect(missing.text).to.contain('There is no structure with InChIKey <code>GZCGUPFRVQAUEE-AAAAAAAASA-N</code>.');
      expect(missing.text).to.contain('<a href="/search?q=GZCGUPFRVQAUEE">Search its skeleton (GZCGUPFRVQAUEE)</a>');
      const skeleton = await get('/search?q=GZCGUPFRVQAUEE');
      expect(skeleton.status).to.equal(200);
      expect(skeleton.text).to.contain('9 structures of skeleton GZCGUPFRVQAUEE');
      expect(skeleton.text.match(/<a href="\/compound\/\d+">/g)).to.have.length(9);
    },
  );

  it(
    'a compound page groups the structures of its skeleton by relation, ' +
      'with what differs in words and a thumbnail',
    async () => {
      const answer = await get('/compound/229');
      expect(answer.status).to.equal(200);
      expect(answer.text).to.contain('<h3>Stereoisomers (8)</h3>');
      expect(answer.text).to.contain('differs in tetrahedral stereo');
      expect(answer.text).to.match(/<a href="\/compound\/230"><img class="thumb" src="\/api\/v1\/images\/230"/);
    },
  );

  it(
    'a compound page lists the other stored structures at Tanimoto 0.7 or more, best first, as the API ' +
      'finds them, each with its depiction, score and link; or says that none is',
    async () => {
      const similar = similarSection((await get('/compound/229')).text);
      const { body } = await api.post('/api/v1/similarity', { type: 'uci', compound: 229, threshold: 0.7, limit: 21 });
      const others = body.results.filter((result: { uci: number }) => result.uci !== 229).slice(0, 20);
      expect(linkedUcis(similar)).to.deep.equal(others.map((result: { uci: number }) => result.uci));
      expect(similar).to.contain(`best first: ${body.totalResults - 1} structures.`);
      // Its stereoisomers have its Morgan fingerprint (no chirality in it).
      expect(similar).to.match(
        /<a href="\/compound\/230"><img class="thumb" src="\/api\/v1\/images\/230"[^>]*><span>UCI 230<\/span><code>[A-Z-]+<\/code><\/a><span class="relation score">Tanimoto 1\.00<\/span>/,
      );
      const scores = [...similar.matchAll(/Tanimoto (\d\.\d\d)</g)].map(([, score]) => Number(score));
      expect(scores).to.have.length(others.length);
      expect(scores).to.deep.equal([...scores].sort((a, b) => b - a));
      expect(Math.min(...scores)).to.be.at.least(0.7);
      const alone = similarSection((await get('/compound/614')).text);
      expect(alone).to.contain('No other stored structure reaches a Tanimoto of 0.7 to this one.');
      // Under its heading, the form that searches them at another threshold.
      expect(alone).to.match(
        /^<h2 id="similar">Similar structures<\/h2>\n<form class="mode" action="\/search" method="get"><input type="hidden" name="q" value="614"><input type="hidden" name="mode" value="similar">/,
      );
    },
  );

  it('a compound page of a structure without a fingerprint yet says so', async () => {
    const bare = await startApi(testConfig(await loadFixture(freshPrefix('web-no-fingerprints'))));
    try {
      const answer = await bare.get('/compound/614');
      expect(answer.status).to.equal(200);
      expect(similarSection(answer.text)).to.contain('This structure has no fingerprint yet');
    } finally {
      await bare.stop();
    }
  });

  it(
    '/search offers, beside the structure found, its similar structures and, for a SMILES, the ' +
      'structures containing it; both list depictions and links, as the API finds them',
    async () => {
      const exact = await get('/search?q=CC(%3DO)Nc1ccc(O)cc1');
      expect(exact.text).to.contain('<input type="hidden" name="mode" value="similar">');
      expect(exact.text).to.contain('<input type="hidden" name="mode" value="substructure">');
      const byKey = await get(`/search?q=${paracetamol.key}`);
      expect(byKey.text).to.contain('<input type="hidden" name="mode" value="similar">');
      expect(byKey.text, 'a key is no substructure').to.not.contain('value="substructure"');

      const similar = await get('/search?q=CC(%3DO)Nc1ccc(OCC)cc1&mode=similar&threshold=0.4');
      expect(similar.status).to.equal(200);
      expect(similar.text).to.contain('is not stored; the stored structures like it');
      const { body } = await api.post('/api/v1/similarity', {
        type: 'smiles',
        compound: 'CC(=O)Nc1ccc(OCC)cc1',
        threshold: 0.4,
      });
      expect(linkedUcis(similar.text)).to.deep.equal(body.results.map((result: { uci: number }) => result.uci));
      const best = (Math.floor((body.results[0] as { tanimoto: number }).tanimoto * 100) / 100).toFixed(2);
      expect(similar.text).to.contain(`<span class="relation score">Tanimoto ${best}</span>`);
      expect(similar.text).to.contain('value="0.4" required>');

      const substructure = await get('/search?q=c1ccc2ncccc2c1&mode=substructure');
      expect(substructure.status).to.equal(200);
      const contained = await api.post('/api/v1/substructure', { type: 'smiles', compound: 'c1ccc2ncccc2c1' });
      expect(linkedUcis(substructure.text)).to.deep.equal(
        contained.body.results.map((result: { uci: number }) => result.uci),
      );
      expect(substructure.text).to.contain(`${contained.body.results.length} structures, by UCI.`);

      const smarts = await get('/search?q=CC(~O)~Nc1ccc(O)cc1');
      expect(smarts.text).to.contain('Searched: the stored structures containing the SMARTS');
      expect(linkedUcis(smarts.text)).to.include(paracetamol.uci);
    },
  );

  it("the structure searches refuse bad input with the API's message, and say when a search was cut", async () => {
    const cases: [string, number, string][] = [
      ['/search?q=614&mode=similar&threshold=0.2', 400, '&quot;0.2&quot; is not a threshold'],
      ['/search?q=614&mode=nearest', 400, '&quot;nearest&quot; is not a search'],
      ['/search?q=CC(%3DO)Nc1ccc(O&mode=similar', 400, 'the SMILES could not be read'],
      ['/search?q=RZVAJINKPMORJF&mode=similar', 400, 'names a skeleton, not one structure'],
      ['/search?q=GZCGUPFRVQAUEE-AAAAAAAASA-N&mode=similar', 404, 'no structure with InChIKey'],
      ['/search?q=CO&mode=substructure', 400, 'a substructure query needs at least 3'],
      ['/search?q=C1CC&mode=substructure', 400, 'the SMILES could not be read'],
      [`/search?q=${paracetamol.key}&mode=substructure`, 400, 'takes a SMILES or a SMARTS'],
      [`/search?q=${paracetamol.key}&as=smiles&mode=exact`, 400, 'the SMILES could not be read'],
      ['/search?q=CCO&as=inchi', 400, '&quot;inchi&quot; is not a reading'],
    ];
    for (const [path, status, text] of cases) {
      const answer = await get(path);
      expect(answer.status, path).to.equal(status);
      expect(answer.text, path).to.contain(text);
      expect(answer.text, path).to.contain('role="alert"');
    }
    const hurried = await startApi(testConfig(await fixturePrefix(), { SUBSTRUCTURE_TIMEOUT_MS: '1ms' }));
    try {
      // Ring-fusion carbons: few of the structures screened in hold one, so the search goes on past its first round.
      const cut = await hurried.get(`/search?q=${encodeURIComponent('[#6]~[#6]~[#6;R3]')}&mode=substructure`);
      expect(cut.status).to.equal(200);
      expect(cut.text).to.match(
        /The search stopped before the end: the search stopped after 1 ms \(SUBSTRUCTURE_TIMEOUT_MS\)/,
      );
    } finally {
      await hurried.stop();
    }
  });

  it(
    '/sources lists every source with its structures, release and last ' + 'load; /sources/{id} its load history',
    async () => {
      const list = await get('/sources');
      expect(list.status).to.equal(200);
      const names = ['ChEMBL', 'ZINC', 'PubChem', 'NCI/DTP', 'CAS RN', 'Chemical structures', 'BZR names'];
      for (const name of names) expect(list.text).to.contain(`>${name}</a>`);
      const chembl = await get('/sources/1');
      expect(chembl.status).to.equal(200);
      expect(chembl.text).to.contain('<h1>ChEMBL <small>(source 1)</small></h1>');
      expect(chembl.text).to.contain('<td>references</td><td>done</td>');
    },
  );

  it("/sources shows each source's own rows of the dump that loaded them all, not the dump's total", async () => {
    const table = gunzipSync(readFileSync(join(fixtureDump, 'reference.tsv.gz'))).toString('utf8');
    const rows = table.split('\n').slice(1).filter(Boolean);
    const own = new Map<string, number>();
    for (const row of rows) own.set(row.split('\t')[1], (own.get(row.split('\t')[1]) ?? 0) + 1);
    const list = await get('/sources');
    const cells = [...list.text.matchAll(/<td class="id">(\d+)<\/td>[\s\S]*?<\/tr>/g)].map(([row, id]) => [id, row]);
    expect(cells.map(([id]) => id)).to.deep.equal([...own.keys()].sort((a, b) => Number(a) - Number(b)));
    for (const [id, row] of cells) {
      const count = own.get(id)!.toLocaleString('en');
      const cell =
        `<td>\\d{4}-\\d\\d-\\d\\d, done: ${count} loaded <span ` +
        `class="shared">\\(references of 7 sources\\)</span></td>`;
      expect(row, `source ${id}`).to.match(new RegExp(cell));
    }
    expect(list.text, "no source has the dump's total").to.not.contain(`${rows.length.toLocaleString('en')} loaded`);
  });

  it(
    '/docs and /docs/ lead to the API docs at /api/docs/; other methods ' + 'and paths under /docs are refused',
    async () => {
      for (const path of ['/docs', '/docs/', '/docs?x=1']) {
        const answer = await fetch(`${api.url}${path}`, { redirect: 'manual' });
        expect([answer.status, answer.headers.get('location')], path).to.deep.equal([301, '/api/docs/']);
      }
      const docs = await fetch(`${api.url}/docs`);
      expect([docs.status, docs.url], 'followed').to.deep.equal([200, `${api.url}/api/docs/`]);
      expect(await docs.text()).to.contain('<title>chemxref API</title>');
      const posted = await fetch(`${api.url}/docs`, { method: 'POST' });
      expect([posted.status, posted.headers.get('allow')]).to.deep.equal([405, 'GET, HEAD, OPTIONS']);
      const other = await get('/docs/other');
      expect([other.status, JSON.parse(other.text).error]).to.deep.equal([404, 'there is no such path']);
    },
  );

  it(
    'escapes what it is given, serves its stylesheet and script from this ' + "origin under the API's security headers",
    async () => {
      const hostile = await get('/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E');
      expect(hostile.text).to.not.contain('<script>alert(1)</script>');
      expect(hostile.text).to.contain('&lt;script&gt;alert(1)&lt;/script&gt;');
      const home = await api.get('/');
      expect(home.headers.get('content-security-policy')).to.contain("script-src 'self'");
      expect(home.text).to.contain('<form class="search" action="/search" method="get" role="search">');
      expect((await get('/static/chemxref.css')).type).to.match(/^text\/css/);
      expect((await get('/static/chemxref.js')).type).to.match(/^text\/javascript/);
      expect((await get('/static/nothing.js')).status).to.equal(404);
    },
  );

  it(
    "the search page holds the structure editor's frame and its form; JSME's files are served here; only " +
      "the editor's frame may run JSME's inline code",
    async () => {
      const home = await api.get('/');
      expect(home.text).to.contain('<iframe class="editor" title="Structure editor (JSME)" hidden></iframe>');
      for (const mode of ['exact', 'similar', 'substructure'])
        expect(home.text).to.contain(`<button type="submit" name="mode" value="${mode}">`);
      expect(home.text).to.contain('<input type="hidden" name="as" value="smiles">');
      const policy = (answer: { headers: Headers }): string => answer.headers.get('content-security-policy') ?? '';
      expect(policy(home)).to.contain("script-src 'self';");
      expect(policy(home)).to.not.match(/unsafe-(inline|eval)/);
      const editor = await api.get('/editor');
      expect(editor.status).to.equal(200);
      expect(policy(editor)).to.contain("script-src 'self' 'unsafe-inline' 'unsafe-eval'");
      expect(policy(editor)).to.contain("connect-src 'none'");
      expect(editor.text).to.contain('<script src="/static/jsme/jsme.nocache.js"></script>');
      const loader = await get('/static/jsme/jsme.nocache.js');
      expect([loader.status, loader.type]).to.deep.equal([200, 'text/javascript; charset=utf-8']);
      expect(loader.text).to.match(/^function jsme\(\)/);
      expect((await get('/static/jsme/package.json')).status, "the package's other files are not served").to.equal(404);
      const answer = await fetch(`${api.url}/editor`, { method: 'POST' });
      expect(answer.status).to.equal(405);
    },
  );

  it(
    'under RATE_LIMIT a page that searches costs what a connectivity ' +
      'search does, and a client over its limit gets a 429 page with Retry-After',
    async () => {
      const limited = await startApi(testConfig(await fixturePrefix(), { RATE_LIMIT: '10' }));
      try {
        expect((await limited.get('/compound/614')).status).to.equal(200);
        const first = await limited.get('/search?q=CHEMBL112');
        expect(first.status).to.equal(200);
        expect(first.headers.get('ratelimit-remaining')).to.equal('0');
        const refused = await limited.get('/sources');
        expect(refused.status).to.equal(429);
        expect(refused.headers.get('content-type')).to.match(/^text\/html/);
        expect(Number(refused.headers.get('retry-after'))).to.be.above(0);
        expect(refused.text).to.contain('Too many searches');
        expect((await limited.get('/')).status, 'the search box itself is free').to.equal(200);
      } finally {
        await limited.stop();
      }
    },
  );

  it('under RATE_LIMIT a similarity page costs what the API charges for one (10), a substructure page 20', async () => {
    const limited = await startApi(testConfig(await fixturePrefix(), { RATE_LIMIT: '30' }));
    try {
      const similar = await limited.get('/search?q=614&mode=similar');
      expect([similar.status, similar.headers.get('ratelimit-remaining')]).to.deep.equal([200, '20']);
      const substructure = await limited.get('/search?q=c1ccc2ncccc2c1&mode=substructure');
      expect([substructure.status, substructure.headers.get('ratelimit-remaining')]).to.deep.equal([200, '0']);
      expect((await limited.get('/search?q=614')).status).to.equal(429);
    } finally {
      await limited.stop();
    }
  });
});

describe('depictions draw the molecule chemists draw', function () {
  this.timeout(60_000);
  const depictor = new Depictor();
  after(() => depictor.close());
  let rdkit: ReturnType<typeof initRDKitModule> | undefined;
  /** RDKit's canonical SMILES, hydrogens implicit. */
  const canonical = async (text: string): Promise<string> => {
    const mol = (await (rdkit ??= initRDKitModule())).get_mol(text)!;
    try {
      mol.remove_hs_in_place();
      return mol.get_smiles();
    } finally {
      mol.delete();
    }
  };

  /** Each structure of the fixture's molecules by source and id: its SMILES as deposited, and its Standard InChI. */
  const molecules = new Map(
    gunzipSync(readFileSync(join(fixturesDir, 'chemistry', 'molecules.tsv.gz')))
      .toString('utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.split('\t'))
      .map(([source, id, smiles, inchi]) => [`${source}:${id}`, { smiles, inchi }]),
  );

  it(
    'paracetamol as the amide, milrinone as a 2-pyridone, caprolactam and pentobarbital as lactams, uracil and ' +
      'guanine as lactams, a 4-aminoquinazoline as the amine, each as deposited; stereo kept',
    async () => {
      const deposited = [
        'nci:4977', // caprolactam
        'chembl:CHEMBL448', // pentobarbital
        'cas:78415-72-2', // milrinone
        'cs_name:drugs/N-4-hydroxyphenyl_acetamide', // paracetamol
        'cs_name:nucleobases/uracil',
        'cs_name:nucleobases/guanine',
        'chembl:CHEMBL1489182', // N-benzyl-6-(3-pyridyl)quinazolin-4-amine
        'chembl:CHEMBL1552984', // a chiral amide
      ];
      for (const name of deposited) {
        const { smiles, inchi } = molecules.get(name)!;
        expect(await canonical(await depictor.molfile(inchi)), name).to.equal(await canonical(smiles));
      }
      const drawn = await canonical(await depictor.molfile(paracetamol.inchi));
      expect(drawn).to.equal('CC(=O)Nc1ccc(O)cc1');
      expect(await canonical(molecules.get('chembl:CHEMBL1552984')!.smiles), 'stereo is compared').to.contain('@');
    },
  );

  it('a molecule whose E double bond Indigo refuses to read is drawn without that stereo, not left undrawn', async () => {
    // an azomethine imine of the 500k set: Indigo reads no "Unsupported cis-trans configuration" of an InChI
    const inchi = 'InChI=1S/C10H9ClN2O/c11-9-3-1-8(2-4-9)7-13-6-5-10(14)12-13/h1-4,7H,5-6H2/b13-7+';
    // its double bond drawn as either cis or trans: the layout's geometry is not the InChI's
    expect(await canonical(await depictor.molfile(inchi))).to.equal(await canonical('Clc1ccc(C=[N+]2CCC(=O)[N-]2)cc1'));
    expect(await depictor.svg(inchi)).to.match(/^<\?xml|<svg/);
  });

  /** The outlines of the letters an SVG of Indigo's draws (it holds no text: each letter is a path, defined once). */
  const letters = (svg: string): string[] =>
    [...svg.matchAll(/<g id="glyph-[^"]*">\s*<path d="([^"]*)"/g)].map(([, outline]) => outline).sort();

  it(
    'a chiral drug is drawn without a "Chiral" label: methyldopa (CHEMBL459) draws the letters of its atom ' +
      'labels alone, as methyldopa without stereo does; its SVG scales to any box (a viewBox of its own size)',
    async () => {
      const api = await startApi(testConfig(await fixturePrefix()));
      try {
        const image = await api.get(`/api/v1/images/${methyldopa.uci}`);
        expect(image.status).to.equal(200);
        const [, width, height, viewBox] = image.text.match(
          /<svg [^>]*width="(\d+)" height="(\d+)" viewBox="([^"]*)"/,
        )!;
        expect(viewBox).to.equal(`0 0 ${width} ${height}`);
        const drawn = letters(image.text);
        expect(drawn, 'the SVG draws letters (O, H, N, 2, C, 3)').to.have.length.above(4);
        const withoutStereo = methyldopa.inchi.replace(/\/t.*$/, '');
        expect(drawn).to.deep.equal(letters(await depictor.svg(withoutStereo)));
      } finally {
        await api.stop();
      }
    },
  );

  it('salts as chemists draw them: dequalinium chloride a dication with two chlorides, a penicillin a carboxylate', async () => {
    const salts = [
      {
        // dequalinium chloride (CHEMBL121663): the InChI library rebuilds a neutral bis(quinolin-4-imine) and two HCl
        drawn: 'Cc1cc(N)c2ccccc2[n+]1CCCCCCCCCC[n+]1c(C)cc(N)c2ccccc21.[Cl-].[Cl-]',
        inchi:
          'InChI=1S/C30H38N4.2ClH/c1-23-21-27(31)25-15-9-11-17-29(25)33(23)19-13-7-5-3-4-6-8-14-20-34-24(2)22-28' +
          '(32)26-16-10-12-18-30(26)34;;/h9-12,15-18,21-22,31-32H,3-8,13-14,19-20H2,1-2H3;2*1H',
      },
      {
        // phenethicillin potassium: the InChI library's has the acid and N=C([O-])
        drawn: '[K+].CC(Oc1ccccc1)C(=O)NC2[C@@H]3SC(C)(C)C(N3C2=O)C(=O)[O-]',
        inchi:
          'InChI=1S/C17H20N2O5S.K/c1-9(24-10-7-5-4-6-8-10)13(20)18-11-14(21)19-12(16(22)23)17(2,3)25-15(11)19;/' +
          'h4-9,11-12,15H,1-3H3,(H,18,20)(H,22,23);/q;+1/p-1/t9?,11?,12?,15-;/m0./s1',
      },
    ];
    for (const { drawn, inchi } of salts) {
      expect(await canonical(await depictor.molfile(inchi))).to.equal(await canonical(drawn));
    }
  });

  it('the API draws paracetamol as the molecule above', async () => {
    const api = await startApi(testConfig(await fixturePrefix()));
    try {
      const image = await api.get(`/api/v1/images/${paracetamol.uci}`);
      expect([image.status, image.headers.get('content-type')]).to.deep.equal([200, 'image/svg+xml; charset=utf-8']);
      expect(image.text).to.equal(await depictor.svg(paracetamol.inchi));
    } finally {
      await api.stop();
    }
  });
});
