import { expect } from 'chai';
import { ParsedInchi, inchiFromLayers, inchiKeyOf, parseStandardInchi } from '../../src/chemistry';
import { allMolecules } from './fixtures';

// Every molecule of the shared data set, through the loaders' path: parse, split, key.
describe('chemistry: the 28,657 real molecules of molecules.tsv.gz', () => {
  let parsed: ParsedInchi[];

  before(() => {
    parsed = allMolecules().map((m) => parseStandardInchi(m.standardInchi));
  });

  it('every molecule parses as a Standard InChI and its computed InChIKey equals the published key', () => {
    const molecules = allMolecules();
    expect(molecules).to.have.length(28657);
    const mismatches: string[] = [];
    molecules.forEach((m, i) => {
      const key = inchiKeyOf(parsed[i]);
      if (key !== m.standardInchiKey) mismatches.push(`${m.source}:${m.id} ${key} != ${m.standardInchiKey}`);
    });
    expect(mismatches).to.deep.equal([]);
  });

  it('the InChIKey computed from the InChI text equals the one computed from the parsed InChI', () => {
    const molecules = allMolecules();
    for (let i = 0; i < molecules.length; i += 97) {
      expect(inchiKeyOf(molecules[i].standardInchi)).to.equal(molecules[i].standardInchiKey);
    }
  });

  it('writing the layers back gives the very same InChI, for every molecule', () => {
    const differ = parsed.filter((p) => inchiFromLayers(p.layers) !== p.inchi).map((p) => p.inchi);
    expect(differ).to.deep.equal([]);
  });

  it('a single-component molecule is its own only component, without /p, with the same first key block', () => {
    let singles = 0;
    const wrong: string[] = [];
    parsed.forEach((p, i) => {
      if (p.layers.formula.includes('.') || /^\d/.test(p.layers.formula)) return;
      singles++;
      const [component] = p.components;
      if (
        p.components.length !== 1 ||
        component.connectivityBlock !== allMolecules()[i].standardInchiKey.slice(0, 14) ||
        component.layers.protons !== '' ||
        component.inchi !== p.inchi.replace(/\/p[+-]\d+/, '') ||
        inchiFromLayers(component.layers) !== component.inchi
      )
        wrong.push(p.inchi);
    });
    expect(wrong).to.deep.equal([]);
    expect(singles).to.be.greaterThan(27000);
  });

  it('every component of a salt, hydrate or mixture is itself a Standard InChI with that connectivity key', () => {
    let components = 0;
    for (const p of parsed) {
      if (p.components.length === 1) continue;
      for (const component of p.components) {
        components++;
        const alone = parseStandardInchi(component.inchi);
        expect(alone.components, component.inchi).to.have.length(1);
        expect(alone.connectivityBlock, component.inchi).to.equal(component.connectivityBlock);
        expect(alone.inchi).to.equal(component.inchi);
      }
    }
    expect(components).to.be.greaterThan(2000);
  });

  it('a component of a salt has the connectivity key of the same molecule indexed on its own (698 pairs)', () => {
    // Standalone molecules by their main layers, with the key the InChI library gave them.
    const standalone = new Map<string, string>();
    parsed.forEach((p, i) => {
      if (p.components.length !== 1) return;
      const l = p.layers;
      standalone.set(`${l.formula}/c${l.connections}/h${l.hAtoms}/q${l.charge}`, allMolecules()[i].standardInchiKey);
    });
    const mismatches: string[] = [];
    let pairs = 0;
    let sameStructure = 0;
    const standaloneInchis = new Map<string, string>();
    parsed.forEach((p, i) => {
      if (p.components.length === 1) standaloneInchis.set(p.components[0].inchi, allMolecules()[i].standardInchiKey);
    });
    for (const p of parsed) {
      if (p.components.length === 1) continue;
      for (const component of p.components) {
        const l = component.layers;
        const key = standalone.get(`${l.formula}/c${l.connections}/h${l.hAtoms}/q${l.charge}`);
        if (key !== undefined) {
          pairs++;
          if (key.slice(0, 14) !== component.connectivityBlock)
            mismatches.push(`${component.inchi} ${component.connectivityBlock} != ${key}`);
        }
        // Where the component (stereo and isotopes included) is a molecule of the file, the
        // rebuilt InChI must be that molecule's InChI: same first and second key blocks.
        const fullKey = standaloneInchis.get(component.inchi);
        if (fullKey !== undefined) {
          sameStructure++;
          expect(inchiKeyOf(component.inchi).slice(0, 25)).to.equal(fullKey.slice(0, 25));
        }
      }
    }
    expect(mismatches).to.deep.equal([]);
    expect(pairs).to.equal(698);
    expect(sameStructure).to.be.greaterThan(600);
  });

  it('no computed InChIKey has an E where the key format forbids one', () => {
    const wrong = parsed.map((p) => inchiKeyOf(p)).filter((key) => [0, 3, 6, 9, 15, 18].some((at) => key[at] === 'E'));
    expect(wrong).to.deep.equal([]);
  });
});
