import { expect } from 'chai';
import { Comparison, compareLayers, connectivityEqual, differenceCount, parseStandardInchi } from '../../src/chemistry';
import { inchiCase } from './fixtures';

const layersOf = (name: string) => parseStandardInchi(inchiCase(name).inchi).layers;

/** The names of the flags that are false: what the user sees as "differs". */
function differing(comparison: Comparison): string[] {
  return Object.entries(comparison)
    .filter(([, same]) => same === false)
    .map(([name]) => name)
    .sort();
}

describe('chemistry: comparing structures layer by layer', () => {
  it('L-, D- and DL-alanine are connectivity-equal and differ only in stereo flags', () => {
    const l = layersOf('L-alanine');
    const d = layersOf('D-alanine');
    const dl = layersOf('DL-alanine');
    expect(connectivityEqual(l, d)).to.equal(true);
    expect(connectivityEqual(l, dl)).to.equal(true);
    // L /t2-/m0/s1 vs D /t2-/m1/s1: the same centre, inverted.
    expect(differing(compareLayers(l, d, false))).to.deep.equal(['stereoSp3Inverted']);
    // DL has no stereo layers at all.
    expect(differing(compareLayers(l, dl, false))).to.deep.equal(['stereoSp3', 'stereoSp3Inverted', 'stereoType']);
    expect(differing(compareLayers(dl, d, false))).to.deep.equal(['stereoSp3', 'stereoSp3Inverted', 'stereoType']);
  });

  it('acetate and acetic acid differ only in protonation', () => {
    const acetate = layersOf('acetate');
    const acid = layersOf('acetic_acid');
    expect(connectivityEqual(acetate, acid)).to.equal(true);
    expect(differing(compareLayers(acetate, acid, false))).to.deep.equal(['protonation']);
  });

  it('chloroform and chloroform-d differ only in isotope', () => {
    const chloroform = layersOf('chloroform');
    const deuterated = layersOf('chloroform-d');
    expect(connectivityEqual(chloroform, deuterated)).to.equal(true);
    expect(differing(compareLayers(chloroform, deuterated, false))).to.deep.equal(['isotope']);
  });

  it('the two enantiomers of ethanol-1-d (chiral only through D) differ only in the sp3 inverted flag', () => {
    const r = layersOf('ethanol-1-d_[C@H]');
    const s = layersOf('ethanol-1-d_[C@@H]');
    expect(connectivityEqual(r, s)).to.equal(true);
    expect(r.stereoSp3).to.equal('');
    expect(r.isotopicStereoSp3).to.equal('2-');
    expect(differing(compareLayers(r, s, false))).to.deep.equal(['stereoSp3Inverted']);
    // Against plain ethanol: the label and the stereo it creates.
    expect(differing(compareLayers(r, layersOf('ethanol'), false))).to.deep.equal([
      'isotope',
      'stereoSp3',
      'stereoSp3Inverted',
      'stereoType',
    ]);
  });

  it('fumaric and maleic acid differ only in stereoDbond', () => {
    const fumaric = layersOf('fumaric_acid');
    const maleic = layersOf('maleic_acid');
    expect(connectivityEqual(fumaric, maleic)).to.equal(true);
    expect(differing(compareLayers(fumaric, maleic, false))).to.deep.equal(['stereoDbond']);
  });

  it('a structure compared with itself is equal in every layer', () => {
    const aspirin = layersOf('aspirin');
    expect(Object.values(compareLayers(aspirin, aspirin, false)).every((same) => same === true)).to.equal(true);
  });

  it('a component relation has protonation null: heavy water against the water of copper sulfate pentahydrate', () => {
    const water = parseStandardInchi(inchiCase('copper_sulfate_pentahydrate').inchi).components[2].layers;
    const comparison = compareLayers(layersOf('heavy_water'), water, true);
    expect(comparison.protonation).to.equal(null);
    expect(differing(comparison)).to.deep.equal(['isotopicExchangeableH']);
    expect(differenceCount(comparison)).to.equal(1);
  });

  it('acetone and its enol prop-1-en-2-ol are not connectivity-equal (Standard InChI keeps them apart)', () => {
    expect(connectivityEqual(layersOf('acetone'), layersOf('prop-1-en-2-ol'))).to.equal(false);
    expect(differing(compareLayers(layersOf('acetone'), layersOf('prop-1-en-2-ol'), false))).to.deep.equal(['HAtoms']);
  });

  it('2-pyridone and 2-hydroxypyridine, one Standard InChI, are equal in every layer', () => {
    expect(differing(compareLayers(layersOf('2-pyridone'), layersOf('2-hydroxypyridine'), false))).to.deep.equal([]);
  });
});
