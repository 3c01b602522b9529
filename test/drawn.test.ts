import { expect } from 'chai';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import initRDKitModule from '@rdkit/rdkit';
import { fixturesDir } from './support/fixture';
import { MoleculeToolkit, type MoleculeData } from '../src/toolkits/molecules';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain CommonJS, for the workers
const { tautomerAlternatives } = require('../src/toolkits/query-tautomers.cjs') as {
  tautomerAlternatives: (rdkit: unknown, query: unknown) => { smarts: string }[];
};

/**
 * The molecule every structure is searched as is the one its sources drew (docs/similarity.md), on
 * every 12th of the real molecules of test/fixtures/chemistry (2,389), each as its source drew it: no
 * engine, the toolkit the searches use, RDKit's reading of the drawn SMILES as the reference.
 */
describe('structures are searched as chemists draw them (the shared molecules)', function () {
  this.timeout(600_000);
  const toolkit = new MoleculeToolkit(2);
  const metal = /\[(Li|Na|K|Mg|Ca|Sr|Ba|Al|Zn|Fe|Cu|Co|Ni|Mn|Cr|Pt|Pd|Ag|Au|Hg|Sn|Bi|Sb|Gd|Ti|Zr|V|Mo|W)\b/;
  /** The sample: each drawn SMILES, its stored molecule's fingerprints and binary form, and its drawn Morgan bits. */
  const sample: { smiles: string; stored: MoleculeData; drawnMorgan: number[] }[] = [];
  let rdkit: Awaited<ReturnType<typeof initRDKitModule>>;
  const morganParameters = JSON.stringify({ radius: 2, nBits: 2048 });
  const onBits = (bits: string): number[] => [...bits].flatMap((bit, i) => (bit === '1' ? [i] : []));

  before(async () => {
    rdkit = await initRDKitModule();
    const rows = gunzipSync(readFileSync(join(fixturesDir, 'chemistry', 'molecules.tsv.gz')))
      .toString('utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split('\t'))
      .filter((_, i) => i % 12 === 0);
    // Metals, which the Standard InChI disconnects, and SMILES whose Standard InChI is another are apart.
    const kept = rows.flatMap(([, , smiles, inchi]) => {
      if (metal.test(smiles)) return [];
      const mol = rdkit.get_mol(smiles);
      if (!mol) return [];
      try {
        return mol.get_inchi() === inchi
          ? [{ smiles, inchi, drawnMorgan: onBits(mol.get_morgan_fp(morganParameters)) }]
          : [];
      } finally {
        mol.delete();
      }
    });
    const stored = await toolkit.fingerprints(kept.map((row) => row.inchi));
    kept.forEach((row, i) => {
      if (!('error' in stored[i])) sample.push({ ...row, stored: stored[i] as MoleculeData });
    });
  });
  after(() => toolkit.close());

  /** Which of the sample's stored molecules contain a SMILES query, with the searches' tolerance. */
  const hits = (query: string, indices = sample.map((_, i) => i)): Promise<boolean[]> =>
    toolkit.match(
      'smiles',
      query,
      indices.map((i) => ({ uci: i, molecule: sample[i].stored.molecule })),
    );

  it('more than 2,200 of the 2,389 molecules are compared (metals and other InChIs apart)', () => {
    expect(sample.length).to.be.greaterThan(2_200);
  });

  it("95 % of the stored molecules' Morgan fingerprints are RDKit's of the drawn SMILES (the InChI's rebuild: 67 %)", () => {
    const equal = sample.filter((row) => row.stored.morgan.join() === row.drawnMorgan.join()).length;
    expect(equal / sample.length).to.be.at.least(0.95);
  });

  it('each drawn SMILES, as a substructure query, finds its own structure for 99 % of them', async () => {
    let found = 0;
    for (const [i, row] of sample.entries()) if ((await hits(row.smiles, [i]))[0]) found += 1;
    expect(found / sample.length).to.be.at.least(0.99);
  });

  // A group is drawn in a structure when its drawn molecule holds it or, where it is a mobile-hydrogen
  // group, its other tautomer: the tolerance the searches apply (a 2-pyridone pattern also finds the
  // 2-hydroxypyridines some sources draw, which are stored as pyridones, as most draw them).
  const groups: [string, string][] = [
    ['an amide', 'C(=O)N'],
    ['a secondary anilide', 'O=C(C)Nc1ccccc1'],
    ['a urea', 'NC(=O)N'],
    ['a lactam', 'O=C1CCCN1'],
    ['a 2-pyridone', 'O=c1cccc[nH]1'],
    ['a carbamate', 'NC(=O)O'],
    ['an imide', 'O=CNC=O'],
    ['a sulfonamide', 'NS(=O)=O'],
  ];
  for (const [name, pattern] of groups)
    it(`${name}, ${pattern}, finds the structures drawn with it: recall and precision 99 %`, async () => {
      const query = rdkit.get_mol(pattern)!;
      const queries = [query, ...tautomerAlternatives(rdkit, query).map(({ smarts }) => rdkit.get_qmol(smarts)!)];
      const drawn = sample.map((row) => {
        const mol = rdkit.get_mol(row.smiles)!;
        try {
          return queries.some((q) => mol.get_substruct_match(q) !== '{}');
        } finally {
          mol.delete();
        }
      });
      for (const q of queries) q.delete();
      const found = await hits(pattern);
      const both = found.filter((hit, i) => hit && drawn[i]).length;
      const recall = both / drawn.filter(Boolean).length;
      const precision = both / found.filter(Boolean).length;
      expect(drawn.filter(Boolean).length, 'drawn with it').to.be.greaterThan(10);
      expect({ recall: recall >= 0.99, precision: precision >= 0.99 }, `${recall} / ${precision}`).to.deep.equal({
        recall: true,
        precision: true,
      });
    });

  // Each rule of drawn.cjs on a real molecule of the fixture, as its source drew it (stereo aside).
  const rules: [rule: string, drawn: string, inchi: string][] = [
    [
      'an indazole is a 1H-indazole (6-nitroindazole, CHEMBL54277)',
      '[O-][N+](=O)c1ccc2cn[nH]c2c1',
      'InChI=1S/C7H5N3O2/c11-10(12)6-2-1-5-4-8-9-7(5)3-6/h1-4H,(H,8,9)',
    ],
    [
      "a 2-pyridone is the lactam, whichever way Indigo's Kekulé structure runs (amrinone, CHEMBL12856)",
      'NC1=CC(=CNC1=O)c2ccncc2',
      'InChI=1S/C10H9N3O/c11-9-5-8(6-13-10(9)14)7-1-3-12-4-2-7/h1-6H,11H2,(H,13,14)',
    ],
    [
      'a 1,2,4-triazole-3-thiol is drawn with its SH (CHEMBL1723921)',
      'Cn1c(S)nnc1CNS(=O)(=O)c2ccc(Cl)cc2',
      'InChI=1S/C10H11ClN4O2S2/c1-15-9(13-14-10(15)18)6-12-19(16,17)8-4-2-7(11)3-5-8/h2-5,12H,6H2,1H3,(H,14,18)',
    ],
    [
      "a cation's proton is on its alkylamine, not on an aminopyrimidine's imine (ZINC03815228)",
      'C[NH+](C)CCNc1ncc2c(n1)c(ncn2)Nc1cccc(c1)Br',
      'InChI=1S/C16H18BrN7/c1-24(2)7-6-18-16-19-9-13-14(23-16)15(21-10-20-13)22-12-5-3-4-11(17)8-12/h3-5,8-10H,6-7H2,' +
        '1-2H3,(H,18,19,23)(H,20,21,22)/p+1',
    ],
  ];
  for (const [rule, smiles, inchi] of rules)
    it(`${rule}: ${smiles}`, async () => {
      const [stored] = await toolkit.fingerprints([inchi]);
      const mol = rdkit.get_mol_from_uint8array(Buffer.from((stored as MoleculeData).molecule, 'base64'))!;
      const drawn = rdkit.get_mol(smiles)!;
      try {
        expect(mol.get_smiles()).to.equal(drawn.get_smiles());
      } finally {
        mol.delete();
        drawn.delete();
      }
    });
});
