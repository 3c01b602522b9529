/**
 * Names: a chemist finds a drug by its name (aspirin, Aspirin, acetylsalicylic acid) through
 * POST /api/v1/compounds `type: name` and the search box, in the sources whose compound ids are
 * names: the demo's drug names (105) and BZR names (104), and a source of names a curator loads.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { startApi, type RunningApi } from './support/api';
import { fixtureDump, freshPrefix, load, testConfig } from './support/fixture';
import { repoRoot } from './support/run';

const aspirin = {
  key: 'BSYNRYMUTXBXSQ-UHFFFAOYSA-N',
  smiles: 'CC(=O)Oc1ccccc1C(=O)O',
  pubchem: '2244',
  cas: '50-78-2',
};

interface Source {
  id: number;
  shortName: string;
  compoundId: string;
}

interface Compound {
  uci: number;
  standardInchiKey: string;
  sources: Source[];
}

describe('names: a drug found by its name', function () {
  this.timeout(300_000);
  let api: RunningApi;
  let aspirinUci = 0;

  before(async () => {
    // The demo's own data: the approved drugs are in it with their real ids and names.
    const prefix = freshPrefix('names-demo');
    await load(prefix, ['dump', join(repoRoot, 'examples', 'demo')]);
    api = await startApi(testConfig(prefix));
    const byKey = await api.post('/api/v1/compounds', { type: 'inchikey', compound: aspirin.key });
    aspirinUci = byKey.body.compounds[0].uci;
  });
  after(() => api?.stop());

  it('aspirin, Aspirin and "  acetylsalicylic   acid " name aspirin, with its PubChem CID and CAS RN', async () => {
    for (const name of ['aspirin', 'Aspirin', '  acetylsalicylic   acid ']) {
      const answer = await api.post('/api/v1/compounds', { type: 'name', compound: name });
      expect(answer.status, name).to.equal(200);
      expect(answer.body.response, name).to.equal('Success');
      const compounds = answer.body.compounds as Compound[];
      expect(compounds.map((c) => c.standardInchiKey)).to.deep.equal([aspirin.key]);
      const ids = compounds[0].sources.map((s) => `${s.shortName}:${s.compoundId}`);
      expect(ids).to.include.members([
        `pubchem:${aspirin.pubchem}`,
        `cas_rn:${aspirin.cas}`,
        'drug_names:aspirin',
        'drug_names:acetylsalicylic acid',
      ]);
      expect(answer.body.names, name).to.have.length(1);
      expect(answer.body.names[0]).to.include({ uci: aspirinUci, id: 105, shortName: 'drug_names' });
    }
  });

  it('aspirin by its InChIKey and by its SMILES is the structure its name finds', async () => {
    for (const query of [
      { type: 'inchikey', compound: aspirin.key },
      { type: 'smiles', compound: aspirin.smiles },
    ]) {
      const answer = await api.post('/api/v1/compounds', query);
      expect(answer.body.response, query.type).to.equal('Success');
      expect(answer.body.compounds.map((c: Compound) => c.uci)).to.deep.equal([aspirinUci]);
    }
  });

  it('an unknown name is "Not found", saying which sources of names were searched', async () => {
    const answer = await api.post('/api/v1/compounds', { type: 'name', compound: 'no such drug' });
    expect(answer.status).to.equal(200);
    expect(answer.body).to.deep.include({ response: 'Not found', totalCompounds: 0, notFound: ['no such drug'] });
    expect(answer.body.error).to.equal('no structure named "no such drug" (in bzr_names (104), drug_names (105))');
  });

  it('a blank name is a 400', async () => {
    const answer = await api.post('/api/v1/compounds', { type: 'name', compound: '   ' });
    expect(answer.status).to.equal(400);
  });

  it('lorazepam, a name two sources give two structures, answers both, each with the source that named it', async () => {
    const answer = await api.post('/api/v1/compounds', { type: 'name', compound: 'LORAZEPAM' });
    expect(answer.body.totalCompounds).to.equal(2);
    const keys = (answer.body.compounds as Compound[]).map((c) => c.standardInchiKey);
    // The (S) enantiomer of RDKit's benzodiazepine set, and PubChem's lorazepam without stereo.
    expect(keys).to.have.members(['DIWRORZWFLOCLC-HNNXBMFYSA-N', 'DIWRORZWFLOCLC-UHFFFAOYSA-N']);
    const byUci = new Map((answer.body.compounds as Compound[]).map((c) => [c.uci, c.standardInchiKey]));
    const names = (answer.body.names as { uci: number; shortName: string; name: string }[]).map(
      (n) => `${byUci.get(n.uci)} ${n.shortName} ${n.name}`,
    );
    expect(names).to.have.members([
      'DIWRORZWFLOCLC-HNNXBMFYSA-N bzr_names Lorazepam',
      'DIWRORZWFLOCLC-UHFFFAOYSA-N drug_names lorazepam',
    ]);
  });

  it('a batch answers a name query as /compounds does', async () => {
    const response = await fetch(`${api.url}/api/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queries: [{ type: 'name', compound: 'Ibuprofen' }] }),
    });
    expect(response.status).to.equal(200);
    const [line] = (await response.text())
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text));
    expect(line.status).to.equal(200);
    expect(line.body.compounds.map((c: Compound) => c.standardInchiKey)).to.deep.equal(['HEFNNWSXXWATRW-UHFFFAOYSA-N']);
  });

  it('the search box finds aspirin by aspirin, Aspirin, acetylsalicylic acid, its key and its SMILES', async () => {
    const searches: [string, string][] = [
      ['aspirin', 'Searched: compound id or name aspirin, in every source.'],
      ['Aspirin', 'Searched: compound id or name Aspirin, in every source.'],
      ['  acetylsalicylic   acid ', 'Searched: compound id or name acetylsalicylic   acid, in every source.'],
      [aspirin.key, 'Searched: a Standard InChIKey.'],
      [aspirin.smiles, 'Searched: a SMILES, by the Standard InChIKey computed from it'],
    ];
    for (const [q, said] of searches) {
      const answer = await api.get(`/search?q=${encodeURIComponent(q)}`);
      expect(answer.status, q).to.equal(200);
      expect(answer.text, q).to.contain(`<h1>UCI ${aspirinUci}</h1>`);
      expect(answer.text, q).to.contain(said);
      expect(answer.text, q).to.contain(aspirin.key);
    }
  });

  it('the search box finds paracetamol by name, with Drug names picked too', async () => {
    for (const path of ['/search?q=paracetamol', '/search?q=Paracetamol&source=105']) {
      const answer = await api.get(path);
      expect(answer.status, path).to.equal(200);
      expect(answer.text, path).to.contain('RZVAJINKPMORJF-UHFFFAOYSA-N');
    }
  });

  it('the search box finds Ro05-2181, a BZR name that reads as a SMILES RDKit cannot read, by name', async () => {
    const answer = await api.get('/search?q=Ro05-2181');
    expect(answer.status).to.equal(200);
    expect(answer.text).to.contain('Searched: compound id or name Ro05-2181, in every source.');
    expect(answer.text).to.match(/<h1>UCI \d+<\/h1>/);
  });

  it('the search box lists both lorazepams, each with the source that named it', async () => {
    const answer = await api.get('/search?q=lorazepam');
    expect(answer.status).to.equal(200);
    expect(answer.text).to.contain('lorazepam: 2 structures');
    expect(answer.text).to.contain('Lorazepam in BZR names');
    expect(answer.text).to.contain('>in Drug names<');
  });

  it('the search box says an unknown name is not found', async () => {
    const answer = await api.get('/search?q=no+such+drug');
    expect(answer.status).to.equal(404);
    expect(answer.text).to.contain('No current compound id or name no such drug in any source');
  });
});

describe('names: a source of names a curator loads', function () {
  this.timeout(300_000);
  const prefix = freshPrefix('names-curator');
  const folder = mkdtempSync(join(tmpdir(), 'chemxref-names-'));
  let api: RunningApi;

  before(async () => {
    await load(prefix, ['dump', fixtureDump]);
    writeFileSync(
      join(folder, 'sources.tsv'),
      'src_id\tname\tname_label\tids_are_names\n106\tmy_names\tMy names\t1\n107\tmy_codes\tMy codes\t0\n',
    );
    const sources = await load(prefix, ['sources', join(folder, 'sources.tsv')]);
    expect(sources.rowsLoaded).to.equal(2);
    api = await startApi(testConfig(prefix));
  });
  after(() => api?.stop());

  it('ids with spaces load, each run of spaces kept as one; a name on two structures; an empty id is rejected', async () => {
    writeFileSync(
      join(folder, 'names.tsv'),
      [
        'compound_id\tsmiles',
        'acetylsalicylic  acid\tCC(=O)Oc1ccccc1C(=O)O',
        'Aspirin\tCC(=O)Oc1ccccc1C(=O)O',
        'salicylate\tOC(=O)c1ccccc1O',
        'salicylate\tOC(=O)c1ccccc1[O-]',
        'salicylic acid\tOC(=O)c1ccccc1O',
        '\tCCO',
        '',
      ].join('\n'),
    );
    const summary = await load(prefix, ['source', '106', join(folder, 'names.tsv')]);
    expect(summary.rowsLoaded).to.equal(5);
    expect(summary.rejectedByReason).to.deep.equal({ 'no-compound-id': 1 });

    const source = await api.get('/api/v1/sources/106');
    expect(source.body.sources[0]).to.include({ name: 'my_names', idsAreNames: true });
    const codes = await api.get('/api/v1/sources/107');
    expect(codes.body.sources[0]).to.not.have.property('idsAreNames');

    const byName = await api.post('/api/v1/compounds', { type: 'name', compound: 'ACETYLSALICYLIC ACID' });
    expect(byName.body.compounds.map((c: Compound) => c.standardInchiKey)).to.deep.equal([aspirin.key]);
    expect(byName.body.names[0]).to.include({ id: 106, shortName: 'my_names', name: 'acetylsalicylic acid' });
    // The id as the source keeps it: one space.
    const byId = await api.post('/api/v1/compounds', {
      type: 'sourceID',
      compound: 'acetylsalicylic acid',
      sourceID: 106,
    });
    expect(byId.body.response).to.equal('Success');

    const both = await api.post('/api/v1/compounds', { type: 'name', compound: 'Salicylate' });
    expect(both.body.totalCompounds).to.equal(2);
    expect(both.body.names.map((n: { id: number; name: string }) => `${n.id} ${n.name}`)).to.deep.equal([
      '106 salicylate',
      '106 salicylate',
    ]);
  });

  it('a source not marked as names is not searched by name, and keeps its ids as written', async () => {
    writeFileSync(join(folder, 'codes.tsv'), 'compound_id\tsmiles\nCODE  7\tCCO\n');
    const summary = await load(prefix, ['source', '107', join(folder, 'codes.tsv')]);
    expect(summary.rowsLoaded).to.equal(1);
    const byName = await api.post('/api/v1/compounds', { type: 'name', compound: 'code 7' });
    expect(byName.body.response).to.equal('Not found');
    const byId = await api.post('/api/v1/compounds', { type: 'sourceID', compound: 'CODE  7', sourceID: 107 });
    expect(byId.body.response).to.equal('Success');
  });

  it('a source table without the column leaves the mark as it was', async () => {
    writeFileSync(join(folder, 'again.tsv'), 'src_id\tname\tname_label\n106\tmy_names\tMy names, renamed\n');
    await load(prefix, ['sources', join(folder, 'again.tsv')]);
    // The API reads the sources again every few seconds.
    let source = await api.get('/api/v1/sources/106');
    for (let tries = 0; tries < 20 && source.body.sources[0].nameLabel !== 'My names, renamed'; tries += 1) {
      await sleep(500);
      source = await api.get('/api/v1/sources/106');
    }
    expect(source.body.sources[0]).to.include({ nameLabel: 'My names, renamed', idsAreNames: true });
  });
});
