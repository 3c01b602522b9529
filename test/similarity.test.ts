import { expect } from 'chai';
import { gunzipSync } from 'node:zlib';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi, type RunningApi } from './support/api';
import { fixtureDump, fixturePrefix, fixturesDir, freshPrefix, load, loadFixture, testConfig } from './support/fixture';
import { MoleculeToolkit, moleculeDerivation, type MoleculeData } from '../src/toolkits/molecules';
import { Engine, mappingOf } from '../src/engine/client';
import { ensureBaseIndices } from '../src/engine/schema';
import {
  lastFingerprintedUci,
  olderFingerprints,
  similarStructures,
  substructureCandidates,
  thresholdOf,
  writeFingerprints,
} from '../src/engine/fingerprints';
import type { Candidate, FingerprintDocument } from '../src/engine/fingerprints';
import { bodiesSent } from './support/engine';

const paracetamol = {
  uci: 614,
  key: 'RZVAJINKPMORJF-UHFFFAOYSA-N',
  smiles: 'CC(=O)Nc1ccc(O)cc1',
  inchi: 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)',
};

/** The structures of a structure table (`UCI, STANDARDINCHI, STANDARDINCHIKEY`, gzipped). */
function structureTable(file: string): { uci: number; inchi: string; key: string }[] {
  const table = gunzipSync(readFileSync(file)).toString('utf8');
  return table
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split('\t'))
    .map(([uci, inchi, key]) => ({ uci: Number(uci), inchi, key }));
}

/** The fixture's structures, as its structure table has them. */
function fixtureStructures(): { uci: number; inchi: string; key: string }[] {
  return structureTable(join(fixtureDump, 'structure.tsv.gz'));
}

describe('similarity and substructure search (docs/similarity.md)', function () {
  this.timeout(180_000);
  let api: RunningApi;
  const toolkit = new MoleculeToolkit(1);
  /** Every fixture structure's Morgan on-bits and molecule, computed here as the backfill computes them. */
  const reference = new Map<number, { morgan: Set<number>; molecule: string }>();

  before(async () => {
    api = await startApi(testConfig(await fixturePrefix()));
    const structures = fixtureStructures();
    const computed = await toolkit.fingerprints(structures.map((s) => s.inchi));
    computed.forEach((result, i) => {
      if (!('error' in result))
        reference.set(structures[i].uci, { morgan: new Set(result.morgan), molecule: result.molecule });
    });
  });
  after(async () => {
    await api?.stop();
    await toolkit.close();
  });

  const similarity = (body: object): Promise<{ status: number; body: any }> => api.post('/api/v1/similarity', body);
  const substructure = (body: object): Promise<{ status: number; body: any }> => api.post('/api/v1/substructure', body);

  /** Brute force: every fixture structure at or above `threshold`, best first, as [uci, tanimoto]. */
  function bruteForce(uci: number | Set<number>, threshold: number): [number, number][] {
    const query = typeof uci === 'number' ? reference.get(uci)!.morgan : uci;
    const hits: [number, number, number][] = [];
    for (const [other, { morgan }] of reference) {
      const shared = [...query].filter((bit) => morgan.has(bit)).length;
      const exact = shared / (query.size + morgan.size - shared);
      if (exact >= threshold) hits.push([other, Math.round(exact * 10_000) / 10_000, exact]);
    }
    return hits.sort((a, b) => b[2] - a[2] || a[0] - b[0]).map(([u, t]) => [u, t]);
  }

  describe('POST /similarity', () => {
    it('paracetamol by UCI finds itself first, at Tanimoto 1, with its ChEMBL record', async () => {
      const { status, body } = await similarity({ type: 'uci', compound: paracetamol.uci });
      expect(status).to.equal(200);
      expect(body.response).to.equal('Success');
      expect(body.threshold).to.equal(0.7);
      expect(body.searchedCompound).to.include({ uci: paracetamol.uci, standardInchiKey: paracetamol.key });
      expect(body.results[0]).to.include({ uci: paracetamol.uci, standardInchiKey: paracetamol.key, tanimoto: 1 });
      expect(body.results[0].sources.map((s: { compoundId: string }) => s.compoundId)).to.include('CHEMBL112');
    });

    it('answers 20 searches sent at once, one at a time with SIMILARITY_CONCURRENCY=1, as it answers each alone', async () => {
      const oneAtATime = await startApi(testConfig(await fixturePrefix(), { SIMILARITY_CONCURRENCY: '1' }));
      try {
        const queries = [...reference.keys()].filter((_, i) => i % 500 === 0).slice(0, 20);
        const body = (uci: number): object => ({ type: 'uci', compound: uci, threshold: 0.5 });
        const together = await Promise.all(queries.map((uci) => oneAtATime.post('/api/v1/similarity', body(uci))));
        for (const [i, uci] of queries.entries()) {
          expect(together[i].status).to.equal(200);
          expect(together[i].body).to.deep.equal((await similarity(body(uci))).body);
        }
      } finally {
        await oneAtATime.stop();
      }
    });

    it('answers exactly the brute-force Tanimoto hits, in order, at thresholds 0.3 to 0.9', async () => {
      const queries = [...reference.keys()].filter((_, i) => i % 97 === 0);
      for (const uci of queries) {
        for (const threshold of [0.3, 0.5, 0.7, 0.9]) {
          const { body } = await similarity({ type: 'uci', compound: uci, threshold, limit: 1000 });
          const expected = bruteForce(uci, threshold);
          expect(body.totalResults, `UCI ${uci} at ${threshold}: ${JSON.stringify(body)}`).to.equal(expected.length);
          expect(
            body.results.map((r: { uci: number; tanimoto: number }) => [r.uci, r.tanimoto]),
            `UCI ${uci} at ${threshold}`,
          ).to.deep.equal(expected);
        }
      }
    });

    it('cuts the results at limit and still counts them all', async () => {
      const expected = bruteForce(paracetamol.uci, 0.3);
      expect(expected.length).to.be.greaterThan(3);
      const { body } = await similarity({ type: 'inchikey', compound: paracetamol.key, threshold: 0.3, limit: 3 });
      expect(body.totalResults).to.equal(expected.length);
      expect(body.results.map((r: { uci: number }) => r.uci)).to.deep.equal(expected.slice(0, 3).map(([u]) => u));
    });

    it('a SMILES is searched as its Standard InChI, and says what was computed', async () => {
      const { body } = await similarity({ type: 'smiles', compound: paracetamol.smiles, threshold: 0.5 });
      expect(body.computed.standardInchiKey).to.equal(paracetamol.key);
      expect(body.searchedCompound.uci).to.equal(paracetamol.uci);
      expect(body.results.map((r: { uci: number }) => r.uci)).to.deep.equal(
        bruteForce(paracetamol.uci, 0.5).map(([u]) => u),
      );
    });

    it('a structure that is not stored is still searched; an unknown UCI or key is Not found', async () => {
      const { body: unstored } = await similarity({ type: 'smiles', compound: 'CCC(=O)Nc1ccc(O)cc1', threshold: 0.3 });
      expect(unstored.response).to.equal('Success');
      expect(unstored.searchedCompound.uci).to.equal(null);
      const [computed] = await toolkit.fingerprints([unstored.computed.standardInchi]);
      const expected = bruteForce(new Set((computed as { morgan: number[] }).morgan), 0.3);
      expect(expected.length).to.be.greaterThan(0);
      expect(unstored.results.map((r: { uci: number; tanimoto: number }) => [r.uci, r.tanimoto])).to.deep.equal(
        expected,
      );
      const { body: unknownUci } = await similarity({ type: 'uci', compound: 99_999_999 });
      expect(unknownUci).to.include({ response: 'Not found', error: 'no structure with UCI 99999999' });
      const { body: unknownKey } = await similarity({ type: 'inchikey', compound: 'AAAAAAAAAAAAAA-BBBBBBBBSA-N' });
      expect(unknownKey.response).to.equal('Not found');
    });

    it('counts and ranks as exactly when a group of popcounts holds more candidates than it reads back', async () => {
      // With one candidate read back, every group that finds two or more is searched again run by run.
      const engine = new Engine(testConfig(await fixturePrefix()));
      try {
        for (const uci of [...reference.keys()].filter((_, i) => i % 211 === 0)) {
          const morgan = [...reference.get(uci)!.morgan];
          for (const threshold of [0.3, 0.6]) {
            const { total, hits } = await similarStructures(engine, morgan, thresholdOf(threshold), 1000, 1);
            const expected = bruteForce(uci, threshold);
            expect(total, `UCI ${uci} at ${threshold}`).to.equal(expected.length);
            const found = new Set(hits.map((hit) => hit.uci));
            expect(
              expected.filter(([other]) => !found.has(other)),
              `UCI ${uci} at ${threshold}`,
            ).to.deep.equal([]);
          }
        }
      } finally {
        await engine.close();
      }
    });

    it('refuses a threshold below 0.3 or a limit over 1,000, saying which', async () => {
      const low = await similarity({ type: 'uci', compound: 1, threshold: 0.2 });
      expect(low.status).to.equal(400);
      expect(low.body.error).to.match(/threshold.*0\.3/);
      const many = await similarity({ type: 'uci', compound: 1, limit: 1001 });
      expect(many.status).to.equal(400);
      expect(many.body.error).to.match(/limit/);
    });
  });

  describe('POST /substructure', () => {
    async function bruteForceMatches(type: 'smiles' | 'smarts', text: string): Promise<number[]> {
      const ucis = [...reference.keys()].sort((a, b) => a - b);
      const matches = await toolkit.match(
        type,
        text,
        ucis.map((uci) => ({ uci, molecule: reference.get(uci)!.molecule })),
      );
      return ucis.filter((_, i) => matches[i]);
    }

    for (const [type, text] of [
      ['smiles', 'c1ccc2ncccc2c1'],
      ['smiles', 'C1CCNCC1'],
      ['smarts', '[#6]S(=O)(=O)[NX3]'],
      ['smarts', '[#6](~[#8])~[#7]'],
    ] as const) {
      it(`${type} ${text}: the matches with the lowest UCIs, as a match over every structure finds them`, async () => {
        const expected = await bruteForceMatches(type, text);
        expect(expected.length).to.be.greaterThan(0);
        const { status, body } = await substructure({ type, compound: text, limit: 20 });
        expect(status).to.equal(200);
        expect(body.complete).to.equal(true);
        expect(body.results.map((r: { uci: number }) => r.uci)).to.deep.equal(expected.slice(0, 20));
        expect(body.results[0].sources.length).to.be.greaterThan(0);
      });
    }

    it("paracetamol's own SMILES, an amide, finds paracetamol, stored as drawn and not as the InChI's iminol", async () => {
      const { body: itself } = await substructure({ type: 'smiles', compound: 'CC(=O)Nc1ccc(O)cc1', limit: 1000 });
      expect(itself.results.map((r: { uci: number }) => r.uci)).to.include(paracetamol.uci);
      const { body: anilide } = await substructure({ type: 'smarts', compound: '[CH3]C(=O)[NH]c1ccccc1', limit: 1000 });
      expect(anilide.results.map((r: { uci: number }) => r.uci)).to.include(paracetamol.uci);
      const { body: iminol } = await substructure({ type: 'smarts', compound: 'C(O)=Nc1ccccc1', limit: 1000 });
      expect(iminol.results.map((r: { uci: number }) => r.uci)).not.to.include(paracetamol.uci);
    });

    it('matches a structure whose molecule was computed again on its new molecule, not the one kept read', async () => {
      const keeping = new MoleculeToolkit(1, 60_000, 10);
      try {
        const [benzene, cyclohexane] = (await keeping.fingerprints([
          'InChI=1S/C6H6/c1-2-4-6-5-3-1/h1-6H',
          'InChI=1S/C6H12/c1-2-4-6-5-3-1/h1-6H2',
        ])) as MoleculeData[];
        const aromaticRing = async (molecule: string): Promise<boolean[]> =>
          keeping.match('smarts', 'c1ccccc1', [{ uci: 7, molecule }]);
        expect(await aromaticRing(benzene.molecule)).to.deep.equal([true]);
        expect(await aromaticRing(benzene.molecule)).to.deep.equal([true]);
        expect(await aromaticRing(cyclohexane.molecule)).to.deep.equal([false]);
      } finally {
        await keeping.close();
      }
    });

    it('refuses a query of fewer than 3 heavy atoms, and one RDKit cannot read, saying why', async () => {
      const small = await substructure({ type: 'smiles', compound: 'CO' });
      expect(small.status).to.equal(400);
      expect(small.body.error).to.equal(
        'the SMILES has 2 heavy atoms: a substructure query needs at least 3 to be selective',
      );
      const unreadable = await substructure({ type: 'smiles', compound: 'C1CC' });
      expect(unreadable.status).to.equal(400);
      expect(unreadable.body.error).to.match(/^the SMILES could not be read: .*unclosed ring/);
      const notMolfile = await substructure({ type: 'molfile', compound: 'CCO' });
      expect(notMolfile.body.error).to.match(/M {2}END/);
    });

    it('answers what it found, with complete false and the reason, when SUBSTRUCTURE_TIMEOUT_MS runs out', async () => {
      const hurried = await startApi(testConfig(await fixturePrefix(), { SUBSTRUCTURE_TIMEOUT_MS: '1ms' }));
      try {
        const { status, body } = await hurried.post('/api/v1/substructure', {
          type: 'smarts',
          compound: '[#6]~[#6]~[#6]',
          limit: 1000,
        });
        expect(status).to.equal(200);
        expect(body.complete).to.equal(false);
        expect(body.reason).to.match(/SUBSTRUCTURE_TIMEOUT_MS/);
      } finally {
        await hurried.stop();
      }
    });
  });

  describe('in a batch', () => {
    it('op similarity and op substructure lines answer as their endpoints do', async () => {
      const queries = [
        { op: 'similarity', type: 'uci', compound: paracetamol.uci, threshold: 0.5 },
        { op: 'substructure', type: 'smiles', compound: 'c1ccc2ncccc2c1', limit: 5 },
        { op: 'substructure', type: 'smiles', compound: 'CO' },
      ];
      const response = await fetch(`${api.url}/api/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ queries }),
      });
      expect(response.status).to.equal(200);
      const lines = (await response.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      const single = ({ op: _op, ...query }: { op: string }): object => query;
      expect(lines[0].body).to.deep.equal((await similarity(single(queries[0]))).body);
      expect(lines[1].body).to.deep.equal((await substructure(single(queries[1]))).body);
      expect(lines[2].status).to.equal(400);
    });

    it('answers every line of a batch of 600 similarity searches, which wait their turn', async () => {
      const ucis = [...reference.keys()].slice(0, 600);
      const queries = ucis.map((uci) => ({ op: 'similarity', type: 'uci', compound: uci, threshold: 0.9 }));
      const response = await fetch(`${api.url}/api/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ queries }),
      });
      const lines = (await response.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { status: number });
      expect(lines).to.have.length(600);
      expect(lines.filter((line) => line.status !== 200)).to.deep.equal([]);
    });
  });

  describe('fingerprints', () => {
    // The molecule of a structure is the one chemists draw (docs/similarity.md): these InChIs' fingerprints
    // are RDKit 2026.09's, in Python, of the molecule as drawn (Morgan radius 2, 2048 bits).
    const drawn = [
      {
        name: "paracetamol (an amide, not the InChI's iminol)",
        smiles: 'CC(=O)Nc1ccc(O)cc1',
        inchi: 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)',
        morgan: [
          191, 245, 530, 650, 745, 807, 843, 849, 1017, 1057, 1077, 1152, 1313, 1380, 1602, 1750, 1778, 1816, 1873,
          1917,
        ],
      },
      {
        name: 'phenethicillin potassium (a carboxylate and its amide, not N=C([O-]) and the acid)',
        smiles: '[K+].CC(Oc1ccccc1)C(=O)NC2[C@@H]3SC(C)(C)C(N3C2=O)C(=O)[O-]',
        inchi:
          'InChI=1S/C17H20N2O5S.K/c1-9(24-10-7-5-4-6-8-10)13(20)18-11-14(21)19-12(16(22)23)17(2,3)25-15(11)19;/' +
          'h4-9,11-12,15H,1-3H3,(H,18,20)(H,22,23);/q;+1/p-1/t9?,11?,12?,15-;/m0./s1',
        morgan: [
          1, 5, 18, 35, 130, 233, 283, 314, 322, 332, 387, 389, 562, 573, 650, 664, 673, 675, 695, 715, 753, 807, 935,
          968, 1019, 1057, 1060, 1080, 1088, 1149, 1150, 1152, 1199, 1205, 1226, 1269, 1274, 1279, 1369, 1380, 1435,
          1609, 1635, 1750, 1809, 1873, 1875, 1917, 1937, 1943,
        ],
      },
      {
        name: 'pirfenidone (a 2-pyridone)',
        smiles: 'CC1=CN(C(=O)C=C1)c1ccccc1',
        inchi: 'InChI=1S/C12H11NO/c1-10-7-8-12(14)13(9-10)11-5-3-2-4-6-11/h2-9H,1H3',
        morgan: [
          235, 246, 314, 389, 464, 564, 650, 925, 935, 1049, 1057, 1088, 1141, 1199, 1260, 1319, 1376, 1380, 1400, 1722,
          1750, 1823, 1825, 1873,
        ],
      },
      {
        name: 'ciprofloxacin (a 4-quinolone)',
        smiles: 'O=C(O)c1cn(C2CC2)c2cc(N3CCNCC3)c(F)cc2c1=O',
        inchi:
          'InChI=1S/C17H18FN3O3/c18-13-7-11-14(8-15(13)20-5-3-19-4-6-20)21(10-1-2-10)9-12(16(11)22)17(23)24/h7-' +
          '10,19H,1-6H2,(H,23,24)',
        morgan: [
          45, 164, 231, 305, 314, 326, 338, 389, 407, 453, 456, 464, 525, 577, 624, 650, 699, 713, 804, 807, 875, 880,
          926, 935, 974, 1019, 1047, 1114, 1140, 1277, 1295, 1308, 1325, 1332, 1357, 1380, 1480, 1516, 1729, 1840, 1873,
          1910, 1917, 1928, 1991, 2020,
        ],
      },
      {
        name: 'carbamazepine (a urea)',
        smiles: 'NC(=O)N1c2ccccc2C=Cc2ccccc21',
        inchi: 'InChI=1S/C15H12N2O/c16-15(18)17-13-7-3-1-5-11(13)9-10-12-6-2-4-8-14(12)17/h1-10H,(H2,16,18)',
        morgan: [
          140, 435, 461, 547, 650, 780, 807, 935, 1088, 1171, 1184, 1199, 1242, 1295, 1380, 1448, 1647, 1739, 1750,
          1873, 1917, 1920, 2043,
        ],
      },
      {
        name: 'cytosine (an aminopyrimidinone)',
        smiles: 'Nc1cc[nH]c(=O)n1',
        inchi: 'InChI=1S/C4H5N3O/c5-3-1-2-6-4(8)7-3/h1-2H,(H3,5,6,7,8)',
        morgan: [
          62, 255, 258, 314, 378, 424, 650, 711, 806, 1114, 1152, 1171, 1232, 1380, 1457, 1506, 1750, 1855, 1873, 1932,
        ],
      },
      {
        name: 'dequalinium chloride (two quinolinium cations and their chlorides)',
        smiles: 'Cc1cc(N)c2ccccc2[n+]1CCCCCCCCCC[n+]1c(C)cc(N)c2ccccc21.[Cl-].[Cl-]',
        inchi:
          'InChI=1S/C30H38N4.2ClH/c1-23-21-27(31)25-15-9-11-17-29(25)33(23)19-13-7-5-3-4-6-8-14-20-34-24(2)22-2' +
          '8(32)26-16-10-12-18-30(26)34;;/h9-12,15-18,21-22,31-32H,3-8,13-14,19-20H2,1-2H3;2*1H',
        morgan: [
          80, 286, 327, 343, 411, 463, 620, 663, 727, 875, 910, 957, 983, 1057, 1088, 1143, 1171, 1199, 1221, 1357,
          1380, 1417, 1457, 1520, 1573, 1679, 1722, 1750, 1866, 1873, 1911,
        ],
      },
      {
        name: 'pralidoxime chloride (a pyridinium oxime, not a nitroso dihydropyridine and HCl)',
        smiles: '[Cl-].C[n+]1ccccc1/C=N/O',
        inchi: 'InChI=1S/C7H8N2O.ClH/c1-9-5-3-2-4-7(9)6-8-10;/h2-6H,1H3;1H',
        morgan: [
          236, 343, 418, 463, 466, 481, 652, 673, 687, 694, 725, 807, 864, 1003, 1057, 1064, 1088, 1199, 1380, 1684,
          1750, 1751, 1866, 1873, 1915,
        ],
      },
      {
        name: 'a quinoxaline 1,4-dioxide (both N-oxides [n+][O-], not one N(+)=O)',
        smiles: 'Nc1c(C#N)[n+]([O-])c2cc(Cl)ccc2[n+]1[O-]',
        inchi: 'InChI=1S/C9H5ClN4O2/c10-5-1-2-6-7(3-5)13(15)8(4-11)9(12)14(6)16/h1-3H,12H2',
        morgan: [
          165, 216, 284, 343, 351, 463, 479, 561, 674, 691, 715, 748, 790, 801, 816, 848, 875, 1136, 1171, 1177, 1262,
          1314, 1353, 1380, 1384, 1457, 1683, 1750, 1842, 1873, 1882,
        ],
      },
      {
        name: 'a benzophenanthridinium methosulfate (the charge on its nitrogen, not on a methoxy oxygen)',
        smiles: 'COS(=O)(=O)[O-].COc1cc2ccc3c4cc5c(cc4c(OC)[n+](C)c3c2cc1OC)OCO5',
        inchi:
          'InChI=1S/C22H20NO5.CH4O4S/c1-23-21-13(6-5-12-7-17(24-2)18(25-3)8-14(12)21)15-9-19-20(28-11-27-19)10-' +
          '16(15)22(23)26-4;1-5-6(2,3)4/h5-10H,11H2,1-4H3;1H3,(H,2,3,4)/q+1;/p-1',
        morgan: [
          203, 249, 345, 350, 394, 430, 441, 463, 650, 656, 673, 679, 695, 715, 738, 836, 841, 875, 878, 908, 926, 1019,
          1024, 1040, 1057, 1084, 1121, 1142, 1245, 1309, 1349, 1357, 1380, 1440, 1476, 1536, 1648, 1733, 1750, 1800,
          1855, 1863, 1873, 1891, 1905, 1970, 2021, 2026,
        ],
      },
      {
        name: 'a protonated protoberberine (an isoquinolinium phenol, not a quinone methide)',
        smiles: 'COc1cc2c(CC[n+]3cc4c(OC)c(OC)ccc4cc23)cc1O',
        inchi:
          'InChI=1S/C20H19NO4/c1-23-18-5-4-12-8-16-14-10-19(24-2)17(22)9-13(14)6-7-21(16)11-15(12)20(18)25-3/h4-5' +
          ',8-11H,6-7H2,1-3H3/p+1',
        morgan: [
          27, 38, 39, 40, 94, 203, 249, 283, 332, 333, 350, 352, 463, 554, 613, 614, 695, 699, 735, 807, 836, 841, 875,
          926, 1046, 1057, 1232, 1236, 1357, 1380, 1429, 1474, 1536, 1599, 1602, 1607, 1738, 1750, 1764, 1815, 1855,
          1873, 1923, 1970,
        ],
      },
      {
        name: "sulfacetamide sodium (the amide's anion on its nitrogen)",
        smiles: 'CC(=O)[N-]S(=O)(=O)c1ccc(N)cc1.[Na+]',
        inchi: 'InChI=1S/C8H10N2O3S.Na/c1-6(11)10-14(12,13)8-4-2-7(9)3-5-8;/h2-5H,9H2,1H3,(H,10,11);/q;+1/p-1',
        morgan: [
          157, 319, 350, 650, 655, 715, 807, 888, 1017, 1057, 1168, 1171, 1213, 1300, 1380, 1457, 1476, 1514, 1520,
          1750, 1804, 1870, 1873, 1917, 1978, 1985,
        ],
      },
      {
        name: 'methotrexate (a diaminopteridine and its amide)',
        smiles: 'CN(Cc1cnc2nc(N)nc(N)c2n1)c1ccc(cc1)C(=O)N[C@@H](CCC(O)=O)C(O)=O',
        inchi:
          'InChI=1S/C20H22N8O5/c1-28(9-11-8-23-17-15(24-11)16(21)26-20(22)27-17)12-4-2-10(3-5-12)18(31)25-13(19' +
          '(32)33)6-7-14(29)30/h2-5,8,13H,6-7,9H2,1H3,(H,25,31)(H,29,30)(H,32,33)(H4,21,22,23,26,27)/t13-/m0/s1',
        morgan: [
          1, 23, 80, 97, 117, 321, 343, 378, 389, 409, 486, 507, 600, 611, 650, 724, 736, 739, 807, 881, 955, 960, 1057,
          1096, 1101, 1102, 1152, 1163, 1171, 1240, 1287, 1380, 1385, 1401, 1435, 1452, 1457, 1459, 1535, 1555, 1557,
          1564, 1578, 1624, 1665, 1671, 1697, 1701, 1724, 1737, 1750, 1844, 1855, 1873, 1917, 1959, 2021, 2035,
        ],
      },
      {
        name: 'a sulfoxide magnesium salt (the metal apart and without hydrogens, as the InChI writes it)',
        smiles: 'COc1ccc2c(c1)N=C([S+]([O-])Cc1ncc(C)c(OC)c1C)C2.COc1ccc2nc([S+]([O-])Cc3ncc(C)c(OC)c3C)[n-]c2c1.[Mg]',
        inchi:
          'InChI=1S/C18H20N2O3S.C17H18N3O3S.Mg/c1-11-9-19-16(12(2)18(11)23-4)10-24(21)17-7-13-5-6-14(22-3)8-15(13)' +
          '20-17;1-10-8-18-15(11(2)16(10)23-4)9-24(21)17-19-13-6-5-12(22-3)7-14(13)20-17;/h5-6,8-9H,7,10H2,1-4H3;' +
          '5-8H,9H2,1-4H3;/q;-1;',
        morgan: [
          80, 98, 252, 263, 282, 322, 333, 362, 378, 397, 418, 440, 488, 695, 715, 718, 752, 761, 781, 841, 875, 903,
          926, 927, 944, 961, 995, 1049, 1057, 1082, 1097, 1123, 1161, 1226, 1236, 1259, 1281, 1366, 1380, 1391, 1428,
          1452, 1518, 1535, 1536, 1564, 1599, 1685, 1722, 1746, 1750, 1842, 1855, 1858, 1873, 1897, 1922, 1972, 1975,
          1980, 2009,
        ],
      },
    ];
    for (const structure of drawn)
      it(`of ${structure.name} are RDKit's of ${structure.smiles}`, async () => {
        const [computed] = await toolkit.fingerprints([structure.inchi]);
        expect((computed as MoleculeData).morgan).to.deep.equal(structure.morgan);
      });

    // These are drawn as the InChI library draws them: lone atoms, hydrides and isotopes (RDKit's
    // MolFromInchi, Morgan radius 2).
    const asTheInchi = [
      {
        name: 'a tritium-labelled ligand (its tritium atoms kept)',
        inchi:
          'InChI=1S/C17H21NO2/c1-18-13-12-15(14-8-4-3-5-9-14)20-17-11-7-6-10-16(17)19-2' +
          '/h3-11,15,18H,12-13H2,1-2H3/i1T3',
        morgan: [
          1, 80, 140, 249, 296, 321, 389, 403, 538, 664, 667, 695, 739, 841, 887, 949, 1057, 1088, 1152, 1199, 1365,
          1372, 1380, 1410, 1488, 1536, 1581, 1642, 1695, 1750, 1761, 1873, 1970, 1995, 2038,
        ],
      },
      {
        name: 'tannic acid (122 atoms and 132 bonds: a molfile whose counts run together)',
        inchi:
          'InChI=1S/C76H52O46/c77-32-1-22(2-33(78)53(32)92)67(103)113-47-16-27(11-42(87)58(47)97)66(102)112-21-' +
          '52-63(119-72(108)28-12-43(88)59(98)48(17-28)114-68(104)23-3-34(79)54(93)35(80)4-23)64(120-73(109)29-' +
          '13-44(89)60(99)49(18-29)115-69(105)24-5-36(81)55(94)37(82)6-24)65(121-74(110)30-14-45(90)61(100)50(1' +
          '9-30)116-70(106)25-7-38(83)56(95)39(84)8-25)76(118-52)122-75(111)31-15-46(91)62(101)51(20-31)117-71(' +
          '107)26-9-40(85)57(96)41(86)10-26/h1-20,52,63-65,76-101H,21H2',
        morgan: [
          58, 80, 114, 125, 145, 147, 202, 212, 227, 310, 352, 428, 541, 610, 650, 656, 695, 729, 807, 814, 875, 956,
          1019, 1126, 1136, 1187, 1314, 1323, 1327, 1380, 1385, 1522, 1602, 1607, 1678, 1729, 1763, 1840, 1873, 1917,
          1921, 1950, 1970, 1977,
        ],
      },
      { name: 'calcium (a lone atom)', inchi: 'InChI=1S/Ca', morgan: [1438] },
      { name: 'borane (a hydride keeps its hydrogens)', inchi: 'InChI=1S/BH3/h1H3', morgan: [641] },
    ];
    for (const structure of asTheInchi)
      it(`of ${structure.name} are RDKit's from MolFromInchi`, async () => {
        const [computed] = await toolkit.fingerprints([structure.inchi]);
        expect((computed as MoleculeData).morgan).to.deep.equal(structure.morgan);
      });
  });

  describe('structures without fingerprints: no silent empty answers', () => {
    const prefix = freshPrefix('unsearchable');
    let loaded: RunningApi;
    before(async () => {
      loaded = await startApi(testConfig(prefix));
    });
    after(async () => {
      await loaded?.stop();
    });
    const rulesStructures = join(fixturesDir, 'rules', 'structure.tsv');
    /** Prop-1-en-2-ol, the one new structure the rules' structure table loads (UCI 9001, no source holds it yet). */
    const propenol = { uci: 9001, inchi: 'InChI=1S/C3H6O/c1-3(2)4/h4H,1H2,2H3' };
    /** A similarity search by InChI and a substructure search on the loaded API: their answers and their header. */
    async function searches(inchi: string): Promise<{ similar: any; substructure: any; headers: (string | null)[] }> {
      const similar = await loaded.post('/api/v1/similarity', { type: 'inchi', compound: inchi, threshold: 0.3 });
      const substructure = await loaded.post('/api/v1/substructure', { type: 'smiles', compound: 'c1ccc2ncccc2c1' });
      expect([similar.status, substructure.status]).to.deep.equal([200, 200]);
      return {
        similar: similar.body,
        substructure: substructure.body,
        headers: [similar, substructure].map((answer) => answer.headers.get('x-unsearchable-structures')),
      };
    }
    const ucisOf = (answer: { results: { uci: number }[] }): number[] => answer.results.map((result) => result.uci);

    it('a dump load computes the fingerprints of its structures: its summary says how many, and every search answers unsearchable 0', async () => {
      const summary = await load(prefix, ['dump', fixtureDump], { fingerprints: true });
      expect(summary).not.to.have.property('structuresWithoutFingerprints');
      expect(summary.fingerprints).to.include({ command: 'fingerprints', status: 'done', rowsLoaded: reference.size });
      const { similar, substructure, headers } = await searches(paracetamol.inchi);
      expect(similar.results[0]).to.include({ uci: paracetamol.uci, tanimoto: 1 });
      expect([similar.unsearchable, substructure.unsearchable, ...headers]).to.deep.equal([0, 0, '0', '0']);
    });

    it('a structures load with --no-fingerprints leaves its structures unsearchable, and every answer says how many', async () => {
      const summary = await load(prefix, ['structures', rulesStructures, '--no-fingerprints']);
      expect(summary).to.include({ structuresCreated: 1, structuresWithoutFingerprints: 1 });
      expect(summary).not.to.have.property('fingerprints');
      // The query's own fingerprint is computed, but the stored structure has none to be found by.
      const { similar, substructure, headers } = await searches(propenol.inchi);
      expect(ucisOf(similar)).not.to.include(propenol.uci);
      expect([similar.unsearchable, substructure.unsearchable, ...headers]).to.deep.equal([1, 1, '1', '1']);
    });

    it('npm run load -- fingerprints then makes them searchable: unsearchable 0', async () => {
      const summary = await load(prefix, ['fingerprints']);
      expect(summary).to.include({ rowsLoaded: 1, rowsRejected: 0 });
      const { similar, substructure, headers } = await searches(propenol.inchi);
      expect(similar.results[0]).to.include({ uci: propenol.uci, tanimoto: 1 });
      expect([similar.unsearchable, substructure.unsearchable, ...headers]).to.deep.equal([0, 0, '0', '0']);
    });

    it('a structures load computes the fingerprints of the structures it adds: a similarity search right after finds them', async () => {
      // Three real structures of the demo that the fixture does not hold, on new UCIs.
      const known = new Set(fixtureStructures().map((structure) => structure.key));
      const demo = structureTable(join(__dirname, '..', 'examples', 'demo', 'structure.tsv.gz'))
        .filter((structure) => !known.has(structure.key))
        .slice(0, 3);
      const file = join(mkdtempSync(join(tmpdir(), 'chemxref-new-structures-')), 'structure.tsv');
      const rows = demo.map((structure, i) => `${50_001 + i}\t${structure.inchi}\t${structure.key}`);
      writeFileSync(file, `UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n${rows.join('\n')}\n`);
      const summary = await load(prefix, ['structures', file], { fingerprints: true });
      expect(summary).to.include({ rowsLoaded: 3, structuresCreated: 3 });
      expect(summary).not.to.have.property('structuresWithoutFingerprints');
      expect(summary.fingerprints).to.include({ status: 'done', rowsLoaded: 3, rowsRejected: 0 });
      for (const [i, structure] of demo.entries()) {
        const { similar, headers } = await searches(structure.inchi);
        expect(similar.results[0], structure.key).to.include({ uci: 50_001 + i, tanimoto: 1 });
        expect([similar.unsearchable, headers[0]]).to.deep.equal([0, '0']);
      }
    });
  });

  describe('npm run load -- fingerprints', () => {
    it('computes the missing fingerprints and those an older chemxref made, leaves the index one segment, and a second run only tries again the structure it cannot rebuild', async () => {
      const prefix = await loadFixture(freshPrefix('fingerprints'));
      const engine = new Engine(testConfig(prefix));
      // Fingerprints an older chemxref wrote (no `derivation`, wrong bits), one of them of a structure
      // whose InChI (atom 3 of 2) the InChI library cannot rebuild.
      const unbuildable = { uci: 9_000_001, standardInchi: 'InChI=1S/C2H6/c1-3/h1-2H3' };
      const key = 'OTMSDBZUPAUEDD-UHFFFAOYSA-N';
      await engine.client.index({
        index: engine.names.compounds,
        id: String(unbuildable.uci),
        document: { ...unbuildable, standardInchiKey: key, connectivityBlock: key.slice(0, 14) },
      });
      const rebuilt = [...reference.keys()].slice(0, 3);
      for (const uci of [...rebuilt, unbuildable.uci]) {
        const document = {
          uci,
          standardInchiKey: `KEY${uci}`,
          popcount: 3,
          morgan: [1, 2, 3],
          pattern: [],
          molecule: '',
        };
        await engine.client.index({ index: engine.names.fingerprints, id: String(uci), document });
      }
      await engine.client.indices.refresh({ index: [engine.names.compounds, engine.names.fingerprints] });

      const first = await load(prefix, ['fingerprints']);
      expect(first.status).to.equal('done');
      expect(first.olderFingerprints).to.equal(4);
      expect(first.rowsRejected).to.equal(1);
      expect(Number(first.rowsLoaded) + Number(first.rowsRejected)).to.equal(fixtureStructures().length + 1);
      expect(first.rowsLoaded).to.equal(reference.size);
      const { docs } = await engine.client.mget<FingerprintDocument>({
        index: engine.names.fingerprints,
        ids: [...rebuilt, unbuildable.uci].map(String),
      });
      expect(docs.map((doc) => ('found' in doc && doc.found ? doc._source!.derivation : null))).to.deep.equal([
        ...rebuilt.map(() => moleculeDerivation),
        null,
      ]);
      expect(docs.slice(0, 3).map((doc) => 'found' in doc && new Set(doc._source!.morgan))).to.deep.equal(
        rebuilt.map((uci) => reference.get(uci)!.morgan),
      );
      // A run that wrote the whole index leaves it one segment, which similarity searches faster.
      expect(first.mergedIntoOneSegment).to.equal(true);
      const segments = await engine.client.cat.segments({ index: engine.names.fingerprints, format: 'json' });
      await engine.close();
      expect(segments).to.have.length(1);
      const second = await load(prefix, ['fingerprints']);
      // Only the structure it cannot rebuild, the last UCI, has no fingerprint, and is tried again.
      expect(second).to.include({ rowsRead: 1, rowsLoaded: 0, rowsRejected: 1 });
      expect(second).not.to.have.property('mergedIntoOneSegment');
      expect(second).not.to.have.property('olderFingerprints');
    });
  });

  describe('the candidates of a substructure search', () => {
    it('come once each, in UCI order, over dense and sparse runs of UCIs, each read a window of them', async () => {
      const engine = new Engine(testConfig(freshPrefix('candidate-windows')));
      try {
        await ensureBaseIndices(engine);
        // Candidates hold pattern bit 7: UCIs 1–2,500, then one in 5,000 up to 300,000, then 300,001–301,500.
        // Every 7th UCI of the dense runs holds bit 8 only, and is no candidate.
        const ucis = [
          ...Array.from({ length: 2_500 }, (_, i) => i + 1),
          ...Array.from({ length: 60 }, (_, i) => 5_000 * (i + 1)),
          ...Array.from({ length: 1_500 }, (_, i) => 300_001 + i),
        ];
        const candidate = (uci: number): boolean => uci % 5_000 === 0 || uci % 7 !== 0;
        const documents: FingerprintDocument[] = ucis.map((uci) => ({
          uci,
          standardInchiKey: `KEY${uci}`,
          popcount: (uci * 37) % 90,
          derivation: moleculeDerivation,
          morgan: [],
          pattern: candidate(uci) ? [7, 9] : [8, 9],
          molecule: Buffer.from(String(uci)).toString('base64'),
        }));
        for (let start = 0; start < documents.length; start += 1_000)
          await writeFingerprints(engine, documents.slice(start, start + 1_000));
        await engine.client.indices.refresh({ index: engine.names.fingerprints });

        const found: number[] = [];
        const searches = await bodiesSent(engine, '/_search', async () => {
          for await (const page of substructureCandidates(engine, [7, 9], 100)) {
            expect(page.length).to.be.at.most(100);
            found.push(...page.map((c) => c.uci));
          }
        });
        expect(found).to.deep.equal(ucis.filter(candidate));
        // Full pages, and a few windows to cross the sparse run (and the read of the last UCI).
        expect(searches.length).to.be.at.most(Math.ceil(found.length / 100) + 12);
        const [first] = (await substructureCandidates(engine, [7, 9], 100).next()).value as Candidate[];
        expect(first).to.deep.equal({ uci: 1, standardInchiKey: 'KEY1', molecule: documents[0].molecule });
      } finally {
        await engine.client.indices.delete({ index: `${engine.names.prefix}-*` }, { ignore: [404] });
        await engine.close();
      }
    });

    it('are read from _source in an index made before molecules were doc values and pattern a text, which a load gives derivations', async () => {
      const engine = new Engine(testConfig(freshPrefix('candidates-in-source')));
      try {
        const { settings, mappings } = mappingOf('fingerprints');
        const before = Object.entries(mappings.properties!).filter(([name]) => name !== 'derivation');
        const properties = {
          ...Object.fromEntries(before),
          molecule: { type: 'binary' as const },
          pattern: { type: 'keyword' as const, index_options: 'docs' as const, doc_values: false },
        };
        const older = { ...mappings, _source: { excludes: ['pattern'] }, properties };
        await engine.client.indices.create({ index: engine.names.fingerprints, settings, mappings: older });
        const molecule = reference.get(paracetamol.uci)!.molecule;
        const document = { uci: 614, standardInchiKey: paracetamol.key, popcount: 1, morgan: ['1'], pattern: [7] };
        await engine.client.index({ index: engine.names.fingerprints, document: { ...document, molecule } });
        await engine.client.indices.refresh({ index: engine.names.fingerprints });
        const pages: Candidate[][] = [];
        for await (const page of substructureCandidates(engine, [7], 100)) pages.push(page);
        expect(pages.flat()).to.deep.equal([{ uci: 614, standardInchiKey: paracetamol.key, molecule }]);
        expect(await toolkit.match('smiles', 'c1ccccc1', [{ uci: 614, molecule }])).to.deep.equal([true]);
        // A load gives the older index the `derivation` of newer fingerprints; its own count as older.
        await ensureBaseIndices(engine);
        await writeFingerprints(engine, [
          { ...document, uci: 615, derivation: moleculeDerivation, morgan: [1], molecule },
        ]);
        await engine.client.indices.refresh({ index: engine.names.fingerprints });
        expect(await olderFingerprints(engine, moleculeDerivation)).to.equal(1);
        expect(await lastFingerprintedUci(engine, moleculeDerivation)).to.equal(615);
        // It wrote the pattern as the older index's keyword values, which a search finds as before.
        const written: Candidate[][] = [];
        for await (const page of substructureCandidates(engine, [7], 100)) written.push(page);
        expect(written.flat().map((candidate) => candidate.uci)).to.deep.equal([614, 615]);
      } finally {
        await engine.client.indices.delete({ index: `${engine.names.prefix}-*` }, { ignore: [404] });
        await engine.close();
      }
    });
  });

  describe('substructure queries and the tautomers of their groups (docs/similarity.md, Tautomers)', () => {
    const ucisFound = async (type: 'smiles' | 'smarts', compound: string): Promise<number[]> => {
      const { status, body } = await substructure({ type, compound, limit: 1000 });
      expect(status, JSON.stringify(body)).to.equal(200);
      expect(body.complete).to.equal(true);
      return body.results.map((r: { uci: number }) => r.uci);
    };
    /** Every fixture structure one of the SMARTS matches, taken literally, by UCI. */
    async function matchingAny(smarts: string[]): Promise<number[]> {
      const ucis = [...reference.keys()].sort((a, b) => a - b);
      const molecules = ucis.map((uci) => ({ uci, molecule: reference.get(uci)!.molecule }));
      const matches = await Promise.all(smarts.map((text) => toolkit.match('smarts', text, molecules)));
      return ucis.filter((_, i) => matches.some((m) => m[i]));
    }
    // Milrinone (CAS 78415-72-2), a 2-pyridone: Cc1[nH]c(=O)c(C#N)cc1-c1ccncc1.
    const milrinone = 519;
    // Lansoprazole (CHEMBL480), a sulfoxide.
    const lansoprazole = 409;

    it('a SMILES drawn as a 2-hydroxypyridine, N#Cc1cccnc1O, finds milrinone, stored as its 2-pyridone', async () => {
      expect(await ucisFound('smarts', 'O=c1[nH]cccc1C#N')).to.include(milrinone);
      expect(await ucisFound('smarts', '[OH]c1ncccc1C#N')).not.to.include(milrinone);
      expect(await ucisFound('smiles', 'N#Cc1cccnc1O')).to.include(milrinone);
      // A methoxy has no hydrogen to move: the 2-methoxypyridine is not the pyridone.
      expect(await ucisFound('smiles', 'N#Cc1cccnc1OC')).not.to.include(milrinone);
    });

    it('paracetamol drawn as an iminol, CC(O)=Nc1ccc(O)cc1, finds paracetamol, stored as the amide', async () => {
      expect(await ucisFound('smiles', 'CC(O)=Nc1ccc(O)cc1')).to.include(paracetamol.uci);
    });

    it('an iminol finds exactly the structures holding it as drawn or as the amide with an N–H', async () => {
      const expected = await matchingAny([
        '[#6]-[#6](-[#8])=[#7]-[#6]1:[#6]:[#6]:[#6]:[#6]:[#6]:1',
        '[#6]-[#6](=[#8])-[#7;!H0]-[#6]1:[#6]:[#6]:[#6]:[#6]:[#6]:1',
      ]);
      expect(expected).to.include(paracetamol.uci);
      expect(await ucisFound('smiles', 'CC(O)=Nc1ccccc1')).to.deep.equal(expected);
      // A tertiary anilide has no N–H: its amide has no iminol.
      const tertiary = await matchingAny(['[#6]-[#6](=[#8])-[#7;H0](-[#6])-[#6]1:[#6]:[#6]:[#6]:[#6]:[#6]:1']);
      expect(tertiary.filter((uci) => !expected.includes(uci))).not.to.deep.equal([]);
    });

    it('a sulfoxide drawn S=O finds lansoprazole, stored as [S+][O-], and drawn [S+][O-] too', async () => {
      expect(await ucisFound('smarts', '[#6][S+]([O-])c1nc2ccccc2[nH]1')).to.include(lansoprazole);
      expect(await ucisFound('smiles', 'CS(=O)c1nc2ccccc2[nH]1')).to.include(lansoprazole);
      expect(await ucisFound('smiles', 'C[S+]([O-])c1nc2ccccc2[nH]1')).to.include(lansoprazole);
    });

    it('a SMARTS is matched literally, with no tautomer', async () => {
      expect(await ucisFound('smarts', 'N#Cc1cccnc1O')).not.to.include(milrinone);
      expect(await ucisFound('smarts', 'CC(O)=Nc1ccc(O)cc1')).not.to.include(paracetamol.uci);
      expect(await ucisFound('smarts', 'CS(=O)c1nc2ccccc2[nH]1')).not.to.include(lansoprazole);
    });
  });
});
