/**
 * The API and the pages agree on every UCI: `POST /api/v1/compounds` by UCI finds a structure exactly
 * when `/compound/{uci}` shows it, and where neither does they say the same why: a UCI never given,
 * or one whose ids every source has dropped (a release moved or dropped them all), which keeps its
 * number but answers no lookup.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { startApi, type RunningApi } from './support/api';
import { fixtureDump, fixturesDir, freshPrefix, load, loadFixture, testConfig } from './support/fixture';

/** The UCIs of the fixture dump's structure table. */
function fixtureUcis(): number[] {
  const rows = gunzipSync(readFileSync(join(fixtureDump, 'structure.tsv.gz')))
    .toString('utf8')
    .trim()
    .split('\n');
  return rows.slice(1).map((row) => Number(row.split('\t')[0]));
}

interface Verdict {
  uci: number;
  api: string;
  page: string;
}

describe('the API and the pages agree on every UCI', function () {
  this.timeout(600_000);
  let api: RunningApi;
  let medazepamUci: number;
  const verdicts: Verdict[] = [];

  before(async () => {
    const prefix = await loadFixture(freshPrefix('uci-agreement'));
    api = await startApi(testConfig(prefix));
    const medazepam = await api.post('/api/v1/compounds', { type: 'sourceID', compound: 'Medazepam', sourceID: 104 });
    medazepamUci = medazepam.body.compounds[0].uci;
    // The fixture's release 2 of the BZR names moves Medazepam, its structure's only id, elsewhere.
    await load(prefix, ['source', '104', join(fixturesDir, 'releases', 'bzr-release-2.tsv')]);
    const ucis = fixtureUcis();
    const highest = Math.max(...ucis);
    // Beyond the dump's own: the structures the release added, and UCIs never given.
    const walked = [...ucis, ...Array.from({ length: 20 }, (_, i) => highest + 1 + i)];
    const verdictOf = async (uci: number): Promise<Verdict> => {
      const [found, page] = await Promise.all([
        api.post('/api/v1/compounds', { type: 'uci', compound: String(uci) }),
        api.get(`/compound/${uci}`),
      ]);
      expect(found.status, `POST /compounds for UCI ${uci}`).to.equal(200);
      const apiVerdict =
        found.body.response === 'Success' ? `shows ${found.body.compounds[0].uci}` : (found.body.error as string);
      const pageVerdict =
        page.status === 200
          ? `shows ${/<h1>UCI (\d+)<\/h1>/.exec(page.text)?.[1]}`
          : `${page.status} ${/<p class="message" role="alert">([^<]*)/.exec(page.text)?.[1] ?? ''}`;
      return { uci, api: apiVerdict, page: pageVerdict };
    };
    for (let start = 0; start < walked.length; start += 8)
      verdicts.push(...(await Promise.all(walked.slice(start, start + 8).map(verdictOf))));
  });
  after(() => api?.stop());

  it('each UCI of the fixture, of its next release and beyond is shown by both, or by neither for the same reason', () => {
    const disagreeing = verdicts.filter(({ uci, api: found, page }) => {
      if (found.startsWith('shows ')) return page !== found;
      if (found === `no structure with UCI ${uci}`) return page !== `404 There is no structure with UCI ${uci}.`;
      if (found === `no source holds UCI ${uci} now: every id that named it is obsolete`)
        return !page.startsWith(`404 No source holds UCI ${uci} now: every id that named it is obsolete`);
      return true;
    });
    expect(disagreeing).to.deep.equal([]);
    // All three answers were walked: most UCIs shown, some released away, some never given.
    expect(verdicts.filter((v) => v.api.startsWith('shows ')).length).to.be.above(verdicts.length / 2);
    expect(verdicts.filter((v) => v.api.startsWith('no source holds')).length).to.be.above(0);
    expect(verdicts.filter((v) => v.api.startsWith('no structure with UCI')).length).to.be.above(0);
  });

  it('a UCI whose only id a release moved away is answered by neither, by UCI or key, both saying every id is obsolete, and its page lists them', async () => {
    const verdict = verdicts.find((v) => v.uci === medazepamUci)!;
    expect(verdict.api).to.equal(`no source holds UCI ${medazepamUci} now: every id that named it is obsolete`);
    const page = await api.get(`/compound/${medazepamUci}`);
    expect(page.status).to.equal(404);
    expect(page.text).to.match(
      /<tr class="obsolete">\s*<td><a href="\/sources\/104">[^<]*<\/a><\/td>\s*<td>[^<]*Medazepam/,
    );
    const searched = await api.get(`/search?q=${medazepamUci}`);
    expect(searched.status).to.equal(404);
    expect(searched.text).to.contain(`No source holds UCI ${medazepamUci} now`);
    expect((await api.get(`/api/v1/images/${medazepamUci}`)).status).to.equal(404);
    // The searches by UCI and by its InChIKey, and the search box given the key, say the same.
    const key = /InChIKey <code>([A-Z-]{27})<\/code>/.exec(page.text)![1];
    const why = `no source holds UCI ${medazepamUci} now: every id that named it is obsolete`;
    const answers = [
      ...['/api/v1/compounds', '/api/v1/connectivity', '/api/v1/similarity'].map((path) => ({ path, type: 'uci' })),
      // A connectivity search by key searches the skeleton, which no current structure has.
      ...['/api/v1/compounds', '/api/v1/similarity'].map((path) => ({ path, type: 'inchikey' })),
    ];
    for (const { path, type } of answers) {
      const answer = await api.post(path, { type, compound: type === 'uci' ? String(medazepamUci) : key });
      expect(answer.body, `${path} ${type}`).to.deep.include({ response: 'Not found', error: why });
    }
    const byKey = await api.get(`/search?q=${key}`);
    expect(byKey.status).to.equal(404);
    expect(byKey.text).to.contain(`No source holds UCI ${medazepamUci} now: every id that named it is obsolete`);
  });
});
