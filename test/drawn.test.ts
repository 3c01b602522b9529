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

  it("96 % of the stored molecules' Morgan fingerprints are RDKit's of the drawn SMILES (the InChI's rebuild: 67 %)", () => {
    const equal = sample.filter((row) => row.stored.morgan.join() === row.drawnMorgan.join()).length;
    expect(equal / sample.length).to.be.at.least(0.96);
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
    [
      'a 4,7-dihydro-[1,2,4]triazolo[1,5-a]pyrimidine keeps its triazole aromatic, the NH on the other ring',
      'CC1=C(C(c2ccccc2)n3nc(nc3N1)c4ccncc4)C(=O)N',
      'InChI=1S/C18H16N6O/c1-11-14(16(19)25)15(12-5-3-2-4-6-12)24-18(21-11)22-17(23-24)13-7-9-20-10-8-13/h2-10,' +
        '15H,1H3,(H2,19,25)(H,21,22,23)',
    ],
    [
      "an N-sulfonyl amidine's double bond is on the sulfonyl's nitrogen (diazoxide, CHEMBL181)",
      'CC1=NS(=O)(=O)c2cc(Cl)ccc2N1',
      'InChI=1S/C8H7ClN2O2S/c1-5-10-7-3-2-6(9)4-8(7)14(12,13)11-5/h2-4H,1H3,(H,10,11)',
    ],
    [
      "an N-aryl amidine's NH is on the aryl's nitrogen",
      'Cl.Cc1cccc(NC(=N)c2oc(cc2)c3ccc(Cl)cc3)c1',
      'InChI=1S/C18H15ClN2O.ClH/c1-12-3-2-4-15(11-12)21-18(20)17-10-9-16(22-17)13-5-7-14(19)8-6-13;/h2-11H,1H3,' +
        '(H2,20,21);1H',
    ],
    [
      'an N-substituted amidoxime is drawn RNH-C(=N-OH)R (the stored molecule has no stereo)',
      'ON=C(NCC1CCCCC1)c2ccc(Oc3ccc(F)cc3)nc2',
      'InChI=1S/C19H22FN3O2/c20-16-7-9-17(10-8-16)25-18-11-6-15(13-21-18)19(23-24)22-12-14-4-2-1-3-5-14/h6-11,' +
        '13-14,24H,1-5,12H2,(H,22,23)',
    ],
    [
      "a neonicotinoid's nitroguanidine is the N-nitroimine, its double bond out of the imidazoline ring",
      '[O-][N+](=O)N=C1NCCN1Cc2cnc(Cl)c(c2)C(F)(F)F',
      'InChI=1S/C10H9ClF3N5O2/c11-8-7(10(12,13)14)3-6(4-16-8)5-18-2-1-15-9(18)17-19(20)21/h3-4H,1-2,5H2,(H,15,17)',
    ],
    [
      'a 5-substituted benzimidazole is a 1H-benzimidazole with its substituent across from the NH',
      'CCCCSc1nc2cc(OC)ccc2[nH]1',
      'InChI=1S/C12H16N2OS/c1-3-4-7-16-12-13-10-6-5-9(15-2)8-11(10)14-12/h5-6,8H,3-4,7H2,1-2H3,(H,13,14)',
    ],
    [
      "a 4-substituted benzimidazole's NH is away from the substituent",
      'Cc1cccc2[nH]c(nc12)C3=C(NCC(O)c4cccc(Cl)c4)C=CNC3=O',
      'InChI=1S/C21H19ClN4O2/c1-12-4-2-7-16-19(12)26-20(25-16)18-15(8-9-23-21(18)28)24-11-17(27)13-5-3-6-14(22)' +
        '10-13/h2-10,17,27H,11H2,1H3,(H,25,26)(H2,23,24,28)',
    ],
    [
      'a tetrazole is a 1H-tetrazole (losartan, CHEMBL191)',
      'CCCCc1nc(Cl)c(CO)n1Cc2ccc(cc2)c3ccccc3c4nnn[nH]4',
      'InChI=1S/C22H23ClN6O/c1-2-3-8-20-24-21(23)19(14-30)29(20)13-15-9-11-16(12-10-15)17-6-4-5-7-18(17)22-25-27-' +
        '28-26-22/h4-7,9-12,30H,2-3,8,13-14H2,1H3,(H,25,26,27,28)',
    ],
    [
      "a 3-alkylthio-1,2,4-triazole's NH is next to the sulfur's carbon rather than the methyl's",
      'Cc1n[nH]c(SCc2cccc(Oc3ccccc3)c2)n1',
      'InChI=1S/C16H15N3OS/c1-12-17-16(19-18-12)21-11-13-6-5-9-15(10-13)20-14-7-3-2-4-8-14/h2-10H,11H2,1H3,' +
        '(H,17,18,19)',
    ],
    [
      'a quinolin-2(1H)-one is drawn as the quinolin-2-ol',
      'Cc1ccc2cc(CCNC(=O)c3oc(Br)cc3)c(O)nc2c1',
      'InChI=1S/C17H15BrN2O3/c1-10-2-3-11-9-12(16(21)20-13(11)8-10)6-7-19-17(22)14-4-5-15(18)23-14/h2-5,8-9H,' +
        '6-7H2,1H3,(H,19,22)(H,20,21)',
    ],
    [
      'a quinolin-2(1H)-one with a 3-carboxamide keeps its lactam (a 500k set molecule)',
      'COc1ccc2C=C(C(=O)NCCF)C(=O)Nc2c1OC',
      'InChI=1S/C14H15FN2O4/c1-20-10-4-3-8-7-9(13(18)16-6-5-15)14(19)17-11(8)12(10)21-2/h3-4,7H,5-6H2,1-2H3,' +
        '(H,16,18)(H,17,19)',
    ],
    [
      'the bare carbostyril keeps its lactam (brexpiprazole)',
      'O=C1C=Cc2ccc(OCCCCN3CCN(CC3)c4cccc5sccc45)cc2N1',
      'InChI=1S/C25H27N3O2S/c29-25-9-7-19-6-8-20(18-22(19)26-25)30-16-2-1-11-27-12-14-28(15-13-27)23-4-3-5-24-' +
        '21(23)10-17-31-24/h3-10,17-18H,1-2,11-16H2,(H,26,29)',
    ],
    [
      'an amidoxime is drawn H2N-C(=N-OH)R',
      'COc1cccc(C(N)=NO)c1',
      'InChI=1S/C8H10N2O2/c1-12-7-4-2-3-6(5-7)8(9)10-11/h2-5,11H,1H3,(H2,9,10)',
    ],
    [
      'a 4-ureidobenzoate beside a quaternary ammonium is aromatic, not a quinoid enol and imine (a 500k set molecule)',
      'CC(C)OC(=O)c1ccc(NC(=O)NC(Cc2ccc(O)cc2)C(=O)N(CC[N+](C)(C)C)Cc3ccccc3)cc1',
      'InChI=1S/C32H40N4O5/c1-23(2)41-31(39)26-13-15-27(16-14-26)33-32(40)34-29(21-24-11-17-28(37)18-12-24)30(38)' +
        '35(19-20-36(3,4)5)22-25-9-7-6-8-10-25/h6-18,23,29H,19-22H2,1-5H3,(H2-,33,34,37,39,40)/p+1',
    ],
    [
      'a sulfoximine is charged on its oxide, not on its nitrogen (a 500k set molecule)',
      'CCCCCCCCCCCCC[S+](=N)(C)[O-]',
      'InChI=1S/C14H31NOS/c1-3-4-5-6-7-8-9-10-11-12-13-14-17(2,15)16/h3-14H2,1-2H3,(H-,15,16)',
    ],
    [
      "a phenacylpyridinium's amide and ketone are neutral, not an amide anion and a protonated ketone (a 500k set molecule)",
      'Clc1ccc(cc1)C(=O)C[n+]2ccc(cc2)C(=O)NCc3ccccc3',
      'InChI=1S/C21H17ClN2O2/c22-19-8-6-17(7-9-19)20(25)15-24-12-10-18(11-13-24)21(26)23-14-16-4-2-1-3-5-16/h1-13H,' +
        '14-15H2/p+1',
    ],
    [
      'a cyclophane of two 4-aminoquinoliniums is drawn as the dication and its iodides, not bis-imines and HI',
      '[I-].[I-].C1CC[n+]2ccc(NCCOCCNc3cc[n+](CC1)c4ccccc34)c5ccccc25',
      'InChI=1S/C27H30N4O.2HI/c1-6-16-30-18-12-24(22-8-2-4-10-26(22)30)28-14-20-32-21-15-29-25-13-19-31(17-7-1)27-' +
        '11-5-3-9-23(25)27;;/h2-5,8-13,18-19H,1,6-7,14-17,20-21H2;2*1H',
    ],
    [
      "a pyridinium acylhydrazone chloride's hydrazide is an amide, not an iminol (a 500k set molecule)",
      '[Cl-].Brc1ccc(C=NNC(=O)c2cc[n+](Cc3ccccc3)cc2)cc1',
      'InChI=1S/C20H16BrN3O.ClH/c21-19-8-6-16(7-9-19)14-22-23-20(25)18-10-12-24(13-11-18)15-17-4-2-1-3-5-17;' +
        '/h1-14H,15H2;1H',
    ],
    [
      'a cyclophane of two 4-aminoquinoliniums with its trifluoroacetates is the dication, not bis-imines and the acid',
      '[O-]C(=O)C(F)(F)F.[O-]C(=O)C(F)(F)F.FC(F)(F)c1ccc2c(c1)c3NCCCCCNc4cc[n+](CCCCC[n+]2cc3)c5ccc(cc45)C(F)(F)F',
      'InChI=1S/C30H30F6N4.2C2HF3O2/c31-29(32,33)21-7-9-27-23(19-21)25-11-17-39(27)15-5-2-6-16-40-18-12-26(38-14-' +
        '4-1-3-13-37-25)24-20-22(30(34,35)36)8-10-28(24)40;2*3-2(4,5)1(6)7/h7-12,17-20H,1-6,13-16H2;2*(H,6,7)',
    ],
    [
      'a 4-hydroxyphenacyl imidazolium is a phenol and a ketone, not a quinone methide enol (a 500k set molecule)',
      'Cc1[n+](CC(=O)c2ccc(O)cc2)ccn1C(c3oc4ccccc4c3)c5ccccc5',
      'InChI=1S/C27H22N2O3/c1-19-28(18-24(31)20-11-13-23(30)14-12-20)15-16-29(19)27(21-7-3-2-4-8-21)26-17-22-9-5-' +
        '6-10-25(22)32-26/h2-17,27H,18H2,1H3/p+1',
    ],
    [
      "a phosphonium's 2-amino-1,4-naphthoquinone is neutral, not an amine anion and a protonated ketone",
      'Fc1ccc(cc1)[P+](CCCCCCCCCCNC2=CC(=O)c3ccccc3C2=O)(c4ccc(F)cc4)c5ccc(F)cc5',
      'InChI=1S/C38H37F3NO2P/c39-28-13-19-31(20-14-28)45(32-21-15-29(40)16-22-32,33-23-17-30(41)18-24-33)26-10-6-4-' +
        '2-1-3-5-9-25-42-36-27-37(43)34-11-7-8-12-35(34)38(36)44/h7-8,11-24,27H,1-6,9-10,25-26H2/p+1',
    ],
    [
      'a 2-alkylthio-pyrimidin-4(3H)-one is drawn as the pyrimidin-4-ol',
      'Cc1cc(O)nc(SCC(=O)Nc2nc3CCCCc3s2)n1',
      'InChI=1S/C14H16N4O2S2/c1-8-6-11(19)17-13(15-8)21-7-12(20)18-14-16-9-4-2-3-5-10(9)22-14/h6H,2-5,7H2,1H3,' +
        '(H,15,17,19)(H,16,18,20)',
    ],
    [
      'a 2-aryl-quinazolinone is the quinazolin-4(3H)-one, its NH next to the carbonyl',
      'COc1ccc(cc1)C2=Nc3cc(OC)c(OC)cc3C(=O)N2',
      'InChI=1S/C17H16N2O4/c1-21-11-6-4-10(5-7-11)16-18-13-9-15(23-3)14(22-2)8-12(13)17(20)19-16/h4-9H,1-3H3,' +
        '(H,18,19,20)',
    ],
    [
      'a quinolin-4(1H)-one with a 3-ester is drawn as the quinolin-4-ol',
      'CCOC(=O)C1=CN=C2C=CC=CC2=C1O',
      'InChI=1S/C12H11NO3/c1-2-16-12(15)9-7-13-10-6-4-3-5-8(10)11(9)14/h3-7H,2H2,1H3,(H,13,14)',
    ],
    [
      'a 2-amino-6-methylpyrimidin-4(3H)-one is drawn as the pyrimidin-4-ol',
      'COc1ccc(Nc2nc(C)cc(O)n2)cc1',
      'InChI=1S/C12H13N3O2/c1-8-7-11(16)15-12(13-8)14-9-3-5-10(17-2)6-4-9/h3-7H,1-2H3,(H2,13,14,15,16)',
    ],
    [
      '6-mercaptopurine is drawn as purine-6-thiol',
      'SC1=C2N=CNC2=NC=N1',
      'InChI=1S/C5H4N4S/c10-5-3-4(7-1-6-3)8-2-9-5/h1-2H,(H2,6,7,8,9,10)',
    ],
    [
      'a lactam fused on both sides (an oxazolo[4,5-c]quinolin-4(5H)-one) keeps its NH',
      'O=C1Nc2ccccc2c3oc(nc13)c4ccccc4',
      'InChI=1S/C16H10N2O2/c19-15-13-14(11-8-4-5-9-12(11)17-15)20-16(18-13)10-6-2-1-3-7-10/h1-9H,(H,17,19)',
    ],
    [
      "a pyridinium's amide is an amide, though the InChI's /p+1 leaves its hydrogen no mobile group",
      'COc1ccccc1CNC(=O)C[n+]2ccccc2',
      'InChI=1S/C15H16N2O2/c1-19-14-8-4-3-7-13(14)11-16-15(18)12-17-9-5-2-6-10-17/h2-10H,11-12H2,1H3/p+1',
    ],
    [
      'a quinoxaline 1,4-dioxide keeps both N-oxides',
      'Nc1c(C#N)[n+]([O-])c2cc(Cl)ccc2[n+]1[O-]',
      'InChI=1S/C9H5ClN4O2/c10-5-1-2-6-7(3-5)13(15)8(4-11)9(12)14(6)16/h1-3H,12H2',
    ],
    [
      'a 4-(dimethylamino)pyridinium is the pyridinium, not the iminium',
      'CN(C)c1cc[n+](CC(=O)Nc2cc(ccc2Cl)C(F)(F)F)cc1',
      'InChI=1S/C16H15ClF3N3O/c1-22(2)12-5-7-23(8-6-12)10-15(24)21-14-9-11(16(18,19)20)3-4-13(14)17/h3-9H,10H2,' +
        '1-2H3/p+1',
    ],
    [
      "a 2-iminobenzimidazoline's hydrobromide is the neutral imine and HBr",
      'Br.CCCCN1C(=N)N(CC(=O)c2occc2)c3ccccc13',
      'InChI=1S/C17H19N3O2.BrH/c1-2-3-10-19-13-7-4-5-8-14(13)20(17(19)18)12-15(21)16-9-6-11-22-16;/h4-9,11,18H,' +
        '2-3,10,12H2,1H3;1H',
    ],
    [
      'a pyridinium aldoxime (an obidoxime-like bis-pyridinium) is drawn as the oxime, not as a nitrosomethylene',
      '[Br-].[Br-].NC(=O)c1cc[n+](Cc2ccc(C[n+]3ccccc3C=NO)cc2)cc1',
      'InChI=1S/C20H18N4O2.2BrH/c21-20(25)18-8-11-23(12-9-18)14-16-4-6-17(7-5-16)15-24-10-2-1-3-19(24)13-22-26;;' +
        '/h1-13H,14-15H2,(H-,21,25);2*1H',
    ],
    [
      "a quaternary ammonium iodide's amide is the amide, the iodide its anion",
      '[I-].CCCCCCCCCCCCCC(=O)NCCC[N+](C)(C)C',
      'InChI=1S/C20H42N2O.HI/c1-5-6-7-8-9-10-11-12-13-14-15-17-20(23)21-18-16-19-22(2,3)4;/h5-19H2,1-4H3;1H',
    ],
    [
      "an isoquinolinium is charged on its nitrogen, not on a methoxy group's oxygen",
      'COc1ccc(cc1)[n+]2c(C)cc3cc(OC)cc(OC)c3c2C',
      'InChI=1S/C20H22NO3/c1-13-10-15-11-18(23-4)12-19(24-5)20(15)14(2)21(13)16-6-8-17(22-3)9-7-16/h6-12H,1-5H3/q+1',
    ],
    [
      "a quaternary ammonium's indole keeps its NH, not an indolide with a protonated triazole",
      'C[N+](C)(CCO)Cc1cn(CCCCn2c3ccccc3c4ccc5c(C=O)c[nH]c5c24)nn1',
      'InChI=1S/C26H30N6O2/c1-32(2,13-14-33)17-20-16-30(29-28-20)11-5-6-12-31-24-8-4-3-7-22(24)23-10-9-21-19(18-34)' +
        '15-27-25(21)26(23)31/h3-4,7-10,15-16,18,33H,5-6,11-14,17H2,1-2H3/p+1',
    ],
    [
      'an alpha-diazo sulfone is the diazo compound, not a diazonium enolate',
      'CC(=O)CCC(=O)C(=[N+]=[N-])S(=O)(=O)c1ccccc1',
      'InChI=1S/C12H12N2O4S/c1-9(15)7-8-11(16)12(14-13)19(17,18)10-5-3-2-4-6-10/h2-6H,7-8H2,1H3',
    ],
    [
      "a quaternary ammonium bromide's amides stay neutral, the bromide its anion",
      '[Br-].C[N+](C)(CCCCNC(=O)Cc1ccc(OCc2ccccc2)cc1)CCNC(=O)c3nc(Cl)c(N)nc3N',
      'InChI=1S/C28H36ClN7O3.BrH/c1-36(2,17-15-33-28(38)24-26(30)35-27(31)25(29)34-24)16-7-6-14-32-23(37)18-20-10-' +
        '12-22(13-11-20)39-19-21-8-4-3-5-9-21;/h3-5,8-13H,6-7,14-19H2,1-2H3,(H5-,30,31,32,33,35,37,38);1H',
    ],
    [
      "a styryl quinolinium's charge is on its ring nitrogen, not on the dimethylamino's",
      'CN(C)C1=CC=C(C=C1)C=CC2=C3C=CC=CC3=[N+](C)C=C2',
      'InChI=1S/C20H21N2/c1-21(2)18-12-9-16(10-13-18)8-11-17-14-15-22(3)20-7-5-4-6-19(17)20/h4-15H,1-3H3/q+1',
    ],
    [
      "an N-aryl isoquinolinium has its charge on the nitrogen, not on a methoxy's oxygen (a 500k set molecule)",
      'CCCCc1ccc(cc1)[n+]2c(C)cc3cc(OC)cc(OC)c3c2C',
      'InChI=1S/C23H28NO2/c1-6-7-8-18-9-11-20(12-10-18)24-16(2)13-19-14-21(25-4)15-22(26-5)23(19)17(24)3/h9-15H,' +
        '6-8H2,1-5H3/q+1',
    ],
    [
      'pralidoxime chloride is a pyridinium oxime and a chloride',
      '[Cl-].C[n+]1ccccc1C=NO',
      'InChI=1S/C7H8N2O.ClH/c1-9-5-3-2-4-7(9)6-8-10;/h2-6H,1H3;1H',
    ],
    [
      "asoxime (HI-6), whose rebuild protonates the oxime's ring nitrogen, is a pyridinium oxime and a pyridinium amide",
      'NC(=O)c1cc[n+](COC[n+]2ccccc2C=NO)cc1',
      'InChI=1S/C14H14N4O3/c15-14(19)12-4-7-17(8-5-12)10-21-11-18-6-2-1-3-13(18)9-16-20/h1-9H,10-11H2,(H-,15,19)/p+2',
    ],
    [
      'an O-acyl amidoxime is the amide oxime, H2N–C(=N–OC(=O)R)R (a 500k set molecule)',
      'NC(=NOC(=O)c1cccc(c1)[N+](=O)[O-])c2cccnc2',
      'InChI=1S/C13H10N4O4/c14-12(10-4-2-6-15-8-10)16-21-13(18)9-3-1-5-11(7-9)17(19)20/h1-8H,(H2,14,16)',
    ],
    [
      'a 1-methylimidazo[1,2-a]pyridinium has its charge on the methylated nitrogen (a 500k set molecule)',
      'CCNC(=N)NN=Cc1ccc(cc1)c2cn3ccccc3[n+]2C',
      'InChI=1S/C18H21N6/c1-3-20-18(19)22-21-12-14-7-9-15(10-8-14)16-13-24-11-5-4-6-17(24)23(16)2/h4-13H,3H2,1-2H3,' +
        '(H3,19,20,22)/q+1/b21-12+',
    ],
    [
      'a 2-iminobenzimidazoline hydrobromide is the imine and HBr, as drawn',
      'Br.CCCCN1C(=N)N(CC(=O)c2occc2)c3ccccc13',
      'InChI=1S/C17H19N3O2.BrH/c1-2-3-10-19-13-7-4-5-8-14(13)20(17(19)18)12-15(21)16-9-6-11-22-16;/h4-9,11,18H,2-3,' +
        '10,12H2,1H3;1H',
    ],
    [
      'molsidomine (a sydnone imine) has its anion on the exocyclic nitrogen, not on the ring (CHEMBL1329455)',
      'CCOC(=O)[N-]c1on[n+](c1)N2CCOCC2',
      'InChI=1S/C9H14N4O4/c1-2-16-9(14)10-8-7-13(11-17-8)12-3-5-15-6-4-12/h7H,2-6H2,1H3',
    ],
    [
      'a 3-aryl-sydnone has its anion on the exocyclic oxygen (a 500k set molecule)',
      'Cc1ccc(cc1)[n+]2noc([O-])c2CN3CCN(CC3)c4cccc(Cl)c4Cl',
      'InChI=1S/C20H20Cl2N4O2/c1-14-5-7-15(8-6-14)26-18(20(27)28-23-26)13-24-9-11-25(12-10-24)17-4-2-3-16(21)19(1' +
        '7)22/h2-8H,9-13H2,1H3',
    ],
    [
      'a pyridinium on a fused triazole: the charge where both rings are aromatic (a 500k set molecule)',
      'Clc1ccc(cc1Cl)C(=O)C[n+]2ccc(cc2)c3nnc4CCCn34',
      'InChI=1S/C18H15Cl2N4O/c19-14-4-3-13(10-15(14)20)16(25)11-23-8-5-12(6-9-23)18-22-21-17-2-1-7-24(17)18/h3-6,' +
        '8-10H,1-2,7,11H2/q+1',
    ],
    [
      'salacinol, whose sulfate the rebuild gives a sulfur of seven bonds, has a molecule: the sulfonium and its sulfate',
      'OCC1C(O)C(O)C[S+]1CC(O)COS(=O)(=O)[O-]',
      'InChI=1S/C8H16O8S2/c9-1-7-8(12)6(11)4-17(7)3-5(10)2-16-18(13,14)15/h5-12H,1-4H2/t5-,6-,7-,8+,17?/m1/s1',
    ],
    [
      "a hydroxylamine's N-oxide, which the rebuild gives a neutral nitrogen of four bonds, has a molecule",
      'CC1CCC(C(C)C)CC12CC(NC(=O)CCCCC1CCSS1)CC(C)(C)[NH+]2[O-]',
      'InChI=1S/C24H44N2O2S2/c1-17(2)19-11-10-18(3)24(14-19)16-20(15-23(4,5)26(24)28)25-22(27)9-7-6-8-21-12-13-' +
        '29-30-21/h17-21,26H,6-16H2,1-5H3,(H,25,27)/t18-,19-,20?,21?,24+/m1/s1',
    ],
    [
      'losartan potassium, whose tetrazolide the rebuild gives a nitrogen of four bonds, has a molecule',
      'CCCCc1nc(Cl)c(CO)n1Cc1ccc(-c2ccccc2-c2nn[n-]n2)cc1.[K+]',
      'InChI=1S/C22H22ClN6O.K/c1-2-3-8-20-24-21(23)19(14-30)29(20)13-15-9-11-16(12-10-15)17-6-4-5-7-18(17)22-25-27-' +
        '28-26-22;/h4-7,9-12,30H,2-3,8,13-14H2,1H3;/q-1;+1',
    ],
    [
      'a tellurium dichloride, whose chlorine the rebuild triple-bonds, has a molecule (a 500k set molecule)',
      'CCCC[Te](Cl)(Cl)c1ccccc1COC',
      'InChI=1S/C12H18Cl2OTe/c1-3-4-9-16(13,14)12-8-6-5-7-11(12)10-15-2/h5-8H,3-4,9-10H2,1-2H3',
    ],
    [
      'an azomethine imine whose E double bond Indigo refuses to read has a molecule, without that stereo (a 500k set molecule)',
      'Clc1ccc(C=[N+]2CCC(=O)[N-]2)cc1',
      'InChI=1S/C10H9ClN2O/c11-9-3-1-8(2-4-9)7-13-6-5-10(14)12-13/h1-4,7H,5-6H2/b13-7+',
    ],
    [
      'a trimethylhydrazinium, which the rebuild gives a nitrogen of five bonds, has a molecule',
      'CC(=O)N[N+](C)(C)C',
      'InChI=1S/C5H12N2O/c1-5(8)6-7(2,3)4/h1-4H3/p+1',
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

  it('a cation drawn on either nitrogen of an imidazolium finds it (1-butyl-3-methylimidazolium); a SMARTS only as written', async () => {
    const [stored] = await toolkit.fingerprints(['InChI=1S/C8H15N2/c1-3-4-5-10-7-6-9(2)8-10/h6-8H,3-5H2,1-2H3/q+1']);
    const molecules = [{ uci: 1, molecule: (stored as MoleculeData).molecule }];
    const found = async (type: 'smiles' | 'smarts', text: string) => (await toolkit.match(type, text, molecules))[0];
    expect(await found('smiles', 'CCCCn1cc[n+](C)c1')).to.equal(true);
    expect(await found('smiles', 'CCCC[n+]1ccn(C)c1')).to.equal(true);
    const literal = [await found('smarts', 'CCCCn1cc[n+](C)c1'), await found('smarts', 'CCCC[n+]1ccn(C)c1')];
    expect(literal.filter(Boolean)).to.have.length(1);
  });
});
