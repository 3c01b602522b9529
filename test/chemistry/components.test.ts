import { expect } from 'chai';
import { InchiComponent, inchiKeyOf, parseStandardInchi } from '../../src/chemistry';
import { inchiCase } from './fixtures';

/** `formula connectivityBlock` of each component, the way a chemist checks a split by eye. */
function split(caseName: string): string[] {
  return parseStandardInchi(inchiCase(caseName).inchi).components.map(
    (c: InchiComponent) => `${c.layers.formula} ${c.connectivityBlock}`,
  );
}

// Connectivity blocks of the ions and small molecules, as the InChI library gives them to the
// molecules on their own: HCl VEXZGXHMUGYJMC-UHFFFAOYSA-N, Na+ FKNQFGJONOIPTF-UHFFFAOYSA-N,
// water XLYOFNOQVPJJNP-UHFFFAOYSA-N, ammonia QGZKDVFQNNGYKY-UHFFFAOYSA-N, Ca2+ BHPQYMZQTOCNFJ,
// Cu2+ JPVYNHNXODAKFH, sulfuric acid QAOWNCQODCNURD, Pt2+ HRGDZIGMBDGFTC, metformin XZWYZXLIPXDOLR.
const HCL = 'ClH VEXZGXHMUGYJMC';
const SODIUM = 'Na FKNQFGJONOIPTF';
const WATER = 'H2O XLYOFNOQVPJJNP';
const AMMONIA = 'H3N QGZKDVFQNNGYKY';

describe('chemistry: salts, hydrates and mixtures split into the molecules they are made of', () => {
  it('sodium chloride is HCl and Na+; /p-1 stays with the salt', () => {
    expect(split('sodium_chloride')).to.deep.equal([HCL, SODIUM]);
    const salt = parseStandardInchi(inchiCase('sodium_chloride').inchi);
    expect(salt.layers.protons).to.equal('-1');
    expect(salt.components.map((c) => c.inchi)).to.deep.equal(['InChI=1S/ClH/h1H', 'InChI=1S/Na/q+1']);
    expect(salt.components.every((c) => c.layers.protons === '')).to.equal(true);
  });

  it('calcium chloride (Ca.2ClH, /h;2*1H) is Ca2+ and two HCl', () => {
    expect(split('calcium_chloride')).to.deep.equal(['Ca BHPQYMZQTOCNFJ', HCL, HCL]);
    const components = parseStandardInchi(inchiCase('calcium_chloride').inchi).components;
    expect(components.map((c) => c.inchi)).to.deep.equal(['InChI=1S/Ca/q+2', 'InChI=1S/ClH/h1H', 'InChI=1S/ClH/h1H']);
  });

  it('metformin hydrochloride is metformin and HCl', () => {
    expect(split('metformin_HCl')).to.deep.equal(['C4H11N5 XZWYZXLIPXDOLR', HCL]);
    expect(parseStandardInchi(inchiCase('metformin_HCl').inchi).components[0].inchi).to.equal(
      'InChI=1S/C4H11N5/c1-9(2)4(7)8-3(5)6/h1-2H3,(H5,5,6,7,8)',
    );
  });

  it('copper sulfate pentahydrate (5H2O, 5*1H2) is Cu2+, sulfuric acid and five waters', () => {
    expect(split('copper_sulfate_pentahydrate')).to.deep.equal([
      'Cu JPVYNHNXODAKFH',
      'H2O4S QAOWNCQODCNURD',
      WATER,
      WATER,
      WATER,
      WATER,
      WATER,
    ]);
    expect(parseStandardInchi(inchiCase('copper_sulfate_pentahydrate').inchi).components[1].inchi).to.equal(
      'InChI=1S/H2O4S/c1-5(2,3)4/h(H2,1,2,3,4)',
    );
  });

  it('cisplatin is two HCl, two ammonia and Pt2+ (the metal is disconnected in Standard InChI)', () => {
    expect(split('cisplatin')).to.deep.equal([HCL, HCL, AMMONIA, AMMONIA, 'Pt HRGDZIGMBDGFTC']);
  });

  it('the octasodium salt CHEMBL1253351 is one C41H32N6O29S8 acid and eight Na+', () => {
    const components = split('chembl:CHEMBL1253351');
    expect(components).to.have.length(9);
    expect(components[0]).to.equal('C41H32N6O29S8 FXAIVMYRMNONEG');
    expect(components.slice(1)).to.deep.equal(new Array(8).fill(SODIUM));
  });

  it(
    'the 10-component aminoglycoside mixture (PubChem 134687631) splits ' + 'into its 10 molecules, stereo included',
    () => {
      const mixture = parseStandardInchi(inchiCase('pubchem:134687631').inchi);
      expect(mixture.inchi).to.have.length(1865);
      expect(split('pubchem:134687631')).to.deep.equal([
        'C21H41N5O12 VDGAVKNERSZOPW',
        'C21H41N5O11 XZNUGFQTQHRASN',
        'C19H38N6O11 XCSTZNJIQFIVPE',
        // 3C19H38N6O10: three isomers with one formula, different connections, one /t (3*...)
        'C19H38N6O10 BXUDMXDCTTUXLQ',
        'C19H38N6O10 ACQKFHZCTOKZKP',
        'C19H38N6O10 YPPFEJHOHNPKLT',
        'C18H37N5O10 SKKLOUVUUNMCJE',
        'C18H37N5O9 NLVFBUXFDBBNBW',
        'C18H36N4O11 MOWMHIINUAQFMU',
        'C18H36N4O10 RTOAPJRCIZBHKA',
      ]);
      // /m1100000000/s1: one flag per component; each component keeps its own flag and /s1.
      expect(mixture.components.map((c) => c.layers.stereoSp3Inverted).join('')).to.equal('1100000000');
      expect(mixture.components.every((c) => c.layers.stereoType === '1')).to.equal(true);
      const isomers = mixture.components.slice(3, 6);
      expect(new Set(isomers.map((c) => c.layers.stereoSp3)).size).to.equal(1);
      expect(new Set(isomers.map((c) => c.layers.connections)).size).to.equal(3);
      for (const component of mixture.components) {
        expect(component.inchi).to.match(/^InChI=1S\/C\d+H\d+N\dO\d+\/c[^;]*\/h[^;]*\/t[^;]*\/m[01]\/s1$/);
      }
    },
  );

  it('the sodium salt of a chiral drug (CHEMBL1592257, /t10-;/m0./s1) keeps the stereo on the drug only', () => {
    const salt = parseStandardInchi(
      'InChI=1S/C17H13ClN2O4.Na/c1-10(17(21)22)23-12-3-5-13(6-4-12)24-16-9-19-14-7-2-11(18)8-15(14)20-16;/h2-10H,1H3,(H,21,22);/q;+1/p-1/t10-;/m0./s1',
    );
    expect(salt.components.map((c) => c.inchi)).to.deep.equal([
      'InChI=1S/C17H13ClN2O4/c1-10(17(21)22)23-12-3-5-13(6-4-12)24-16-9-19-14-7-2-11(18)8-15(14)20-16/h2-10H,1H3,(H,21,22)/t10-/m0/s1',
      'InChI=1S/Na/q+1',
    ]);
  });

  it('potassium iodide-125 (PubChem 23711814, /i1-2;) keeps the isotope label on the iodide', () => {
    const salt = parseStandardInchi('InChI=1S/HI.K/h1H;/q;+1/p-1/i1-2;');
    expect(salt.components.map((c) => c.inchi)).to.deep.equal(['InChI=1S/HI/h1H/i1-2', 'InChI=1S/K/q+1']);
    expect(salt.components[0].layers.isotopicAtoms).to.equal('1-2');
    expect(salt.components[1].layers.isotopicAtoms).to.equal('');
  });

  it(
    'a labelled 3-component mixture (PubChem 90417624, ' +
      '/t;;9-/m..1/s1/i;24+2;17+1) gives each component its own stereo and label',
    () => {
      const inchi =
        'InChI=1S/C23H21N3O4.C22H30N2O3.C14H21N3O3/c1-26-18-13-20(16-7-3-2-4-8-16)30-21(18)14-19(26)23(28)24-11-10-15-6-5-9-17(12-15)22(27)25-29;1-2-3-8-24(19-6-4-18(5-7-19)20(25)23-27)21(26)22-12-15-9-16(13-22)11-17(10-15)14-22;1-9(15-13(19)16-14(2,3)4)10-5-7-11(8-6-10)12(18)17-20/h2-9,12-14,29H,10-11H2,1H3,(H,24,28)(H,25,27);4-7,15-17,27H,2-3,8-14H2,1H3,(H,23,25);5-9,20H,1-4H3,(H,17,18)(H2,15,16,19)/t;;9-/m..1/s1/i;24+2;17+1';
      const mixture = parseStandardInchi(inchi);
      expect(inchiKeyOf(mixture)).to.equal('BTELADPZFARDOO-BOCUCPHYSA-N');
      const [first, second, third] = mixture.components;
      expect(first.inchi).to.not.match(/\/[tmsi]/);
      expect(second.inchi).to.match(/\/h[^/]+\/i24\+2$/);
      expect(third.inchi).to.match(/\/t9-\/m1\/s1\/i17\+1$/);
    },
  );

  it('a single molecule (aspirin) is one component equal to itself', () => {
    const aspirin = parseStandardInchi(inchiCase('aspirin').inchi);
    expect(aspirin.components).to.have.length(1);
    expect(aspirin.components[0].inchi).to.equal(aspirin.inchi);
    expect(aspirin.components[0].connectivityBlock).to.equal('BSYNRYMUTXBXSQ');
  });

  it('methylamine hydrochloride written in either component order is the same InChI and split', () => {
    expect(split('methylamine_HCl')).to.deep.equal(split('methylamine_HCl_reordered'));
    expect(split('methylamine_HCl')).to.deep.equal(['CH5N BAVYZALUXZFZLV', HCL]);
  });
});
