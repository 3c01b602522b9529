import { expect } from 'chai';
import { InchiError, inchiFromLayers, inchiKeyOf, isStandardInchiKey, parseStandardInchi } from '../../src/chemistry';
import { inchiCase, inchiCases } from './fixtures';

/** The InchiError thrown for `inchi`, failing the test when it parses or throws anything else. */
function rejection(inchi: string): InchiError {
  try {
    parseStandardInchi(inchi);
  } catch (error) {
    expect(error).to.be.instanceOf(InchiError);
    return error as InchiError;
  }
  expect.fail(`${inchi} was accepted as a Standard InChI`);
}

describe('chemistry: the 62 hard cases of inchi-cases.tsv', () => {
  it('holds 55 Standard InChIs and 7 non-standard ones', () => {
    expect(inchiCases()).to.have.length(62);
    expect(inchiCases().filter((c) => c.kind !== 'nonstd')).to.have.length(55);
  });

  for (const c of inchiCases().filter((x) => x.kind !== 'nonstd')) {
    it(`${c.name} (${c.note.slice(0, 60)}) parses and gives ${c.inchiKey}`, () => {
      const parsed = parseStandardInchi(c.inchi);
      expect(inchiKeyOf(parsed)).to.equal(c.inchiKey);
      expect(inchiFromLayers(parsed.layers)).to.equal(c.inchi);
      expect(parsed.components.length).to.be.at.least(1);
    });
  }

  for (const c of inchiCases().filter((x) => x.kind === 'nonstd')) {
    it(`${c.name} (${c.note.slice(0, 60)}) is rejected as not a Standard InChI`, () => {
      expect(rejection(c.inchi).message).to.match(/^not a Standard InChI: InChI=1\/ is a non-standard InChI/);
    });
  }
});

describe('chemistry: what is not a Standard InChI is rejected with a reason', () => {
  // The non-standard rows with their prefix turned into InChI=1S/: the layers that only a
  // non-standard InChI can hold must still be refused.
  const asIfStandard = (name: string): string => inchiCase(name).inchi.replace('InChI=1/', 'InChI=1S/');

  it('a fixed-H /f layer (2-pyridone) is refused', () => {
    expect(rejection(asIfStandard('2-pyridone FixedH')).message).to.equal(
      'not a Standard InChI: a /f (fixed-H) layer is only found in non-standard InChIs',
    );
  });

  it('a reconnected-metal /r layer (cisplatin) is refused', () => {
    expect(rejection(asIfStandard('cisplatin RecMet')).message).to.match(
      /\/r \(reconnected metals\) layer is only found in non-standard/,
    );
  });

  it('relative (/s2) and racemic (/s3) stereo of L-alanine are refused', () => {
    expect(rejection(asIfStandard('L-alanine SRel')).message).to.match(/relative stereo \(\/s2\)/);
    expect(rejection(asIfStandard('L-alanine SRac')).message).to.match(/racemic stereo \(\/s3\)/);
  });

  it('an experimental InChI=1B/ aspirin is refused', () => {
    expect(rejection(inchiCase('aspirin').inchi.replace('InChI=1S/', 'InChI=1B/')).message).to.match(
      /^not a Standard InChI: InChI=1B\/ is an experimental/,
    );
  });

  it('L-alanine with /m before /t (layers out of order) is refused', () => {
    const swapped = 'InChI=1S/C3H7NO2/c1-2(4)3(5)6/h2H,4H2,1H3,(H,5,6)/m0/t2-/s1';
    expect(rejection(swapped).message).to.equal(
      'not a valid InChI: layers out of order: /t (sp3 stereo) cannot follow /m (sp3 inverted flag)',
    );
  });

  it('a layer given twice is refused', () => {
    expect(rejection('InChI=1S/C2H6O/c1-2-3/c1-2-3/h3H,2H2,1H3').message).to.match(
      /layer \/c \(connections\) appears twice/,
    );
  });

  it('an InChIKey, an empty string, SMILES and text are refused, each with its reason', () => {
    expect(rejection('LFQSCWFLJHTTHZ-UHFFFAOYSA-N').message).to.equal('this is an InChIKey, not an InChI');
    expect(rejection('   ').message).to.equal('empty InChI');
    expect(rejection('CCO').message).to.match(/^not an InChI/);
    expect(rejection('inchi=1S/C2H6O/c1-2-3/h3H,2H2,1H3').message).to.match(/case matters/);
    expect(rejection('InChI=1S/').message).to.match(/nothing after InChI=1S\//);
  });

  it('ethanol cut short in the middle of a layer is refused as truncated', () => {
    expect(rejection('InChI=1S/C2H6O/c1-2-').message).to.match(/cut short/);
    expect(rejection('InChI=1S/C2H6O/c1-2-3/').message).to.match(/ends with '\/'/);
    expect(rejection('InChI=1S/C9H8O4/c1-6(10)13-8-5-3-2-4-7(8)9(11)12/h2-5H,1H3,(H,11').message).to.match(
      /unbalanced parentheses/,
    );
  });

  it('a structure whose layers describe more components than its formula is refused', () => {
    expect(rejection('InChI=1S/ClH.Na/h1H;;/q;+1/p-1').message).to.match(
      /describes more components than the formula \(2\)/,
    );
    expect(rejection('InChI=1S/Ca.2ClH/h;3*1H/q+2;;/p-2').message).to.match(/more components/);
  });

  it('a count prefix large enough to exhaust memory is refused', () => {
    expect(rejection('InChI=1S/99999999H2O/h99999999*1H2').message).to.match(/more than 1000 components/);
  });

  it('surrounding whitespace is ignored: the trimmed InChI is kept', () => {
    const parsed = parseStandardInchi(`  ${inchiCase('ethanol').inchi}\n`);
    expect(parsed.inchi).to.equal(inchiCase('ethanol').inchi);
  });

  it('a value that is not a string is refused with an InchiError', () => {
    expect(() => parseStandardInchi(undefined as unknown as string)).to.throw(InchiError, /must be given as text/);
    expect(() => parseStandardInchi(42 as unknown as string)).to.throw(InchiError);
  });
});

describe('chemistry: any string gives a parse or an InchiError, never another exception', () => {
  // A small deterministic generator, so that a failure can be replayed.
  let seed = 20240503;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const ALPHABET = 'InChI=1S/CHNOPSClBrNa0123456789-+,;.*()/cbhtmsqpifr?D T\u00e9\u0000';

  /** Parses and returns true, or returns false on an InchiError; anything else fails the test. */
  const parsesOrRefuses = (text: string): boolean => {
    try {
      parseStandardInchi(text);
      return true;
    } catch (error) {
      expect(error, JSON.stringify(text)).to.be.instanceOf(InchiError);
      // An error with a cause came from the safety net: a case the reader does not handle itself.
      expect((error as InchiError).cause, JSON.stringify(text)).to.equal(undefined);
      return false;
    }
  };

  it('every prefix of every hard case, and of the 10-component mixture, parses or is refused', () => {
    for (const c of inchiCases()) {
      for (let end = 0; end <= c.inchi.length; end++) parsesOrRefuses(c.inchi.slice(0, end));
    }
  });

  it('20,000 random edits of real InChIs (insert, delete, replace, swap layers) parse or are refused', () => {
    const sources = inchiCases().map((c) => c.inchi);
    let refused = 0;
    for (let n = 0; n < 20000; n++) {
      let text = pick(sources);
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (text.length + 1));
        const operation = Math.floor(random() * 4);
        if (operation === 0) text = text.slice(0, at) + pick([...ALPHABET]) + text.slice(at);
        else if (operation === 1) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 5));
        else if (operation === 2) text = text.slice(0, at) + pick([...ALPHABET]) + text.slice(at + 1);
        else {
          const layers = text.split('/');
          const i = 1 + Math.floor(random() * (layers.length - 1));
          const j = 1 + Math.floor(random() * (layers.length - 1));
          [layers[i], layers[j]] = [layers[j], layers[i]];
          text = layers.join('/');
        }
      }
      if (!parsesOrRefuses(text)) refused++;
    }
    expect(refused).to.be.greaterThan(5000);
  });

  it('5,000 random strings over the InChI alphabet parse or are refused', () => {
    for (let n = 0; n < 5000; n++) {
      let text = random() < 0.8 ? 'InChI=1S/' : '';
      const length = Math.floor(random() * 60);
      for (let k = 0; k < length; k++) text += pick([...ALPHABET]);
      parsesOrRefuses(text);
    }
  });

  it('the 4,113-character InChI parses, and a 400,000-character one is read or refused without trouble', () => {
    const large = inchiCase('datagrok500k:dg84321');
    expect(large.inchi).to.have.length(4113);
    expect(inchiKeyOf(parseStandardInchi(large.inchi))).to.equal(large.inchiKey);
    parsesOrRefuses(large.inchi.repeat(100));
    parsesOrRefuses(`InChI=1S/C2H6O/c${'1-'.repeat(200000)}3`);
  });
});

describe('chemistry: InChIKey form', () => {
  it("accepts ethanol's key and refuses non-standard, lower-case and truncated keys", () => {
    expect(isStandardInchiKey('LFQSCWFLJHTTHZ-UHFFFAOYSA-N')).to.equal(true);
    expect(isStandardInchiKey(inchiCase('2-pyridone FixedH').inchiKey)).to.equal(false); // ...NA-N
    expect(isStandardInchiKey('lfqscwfljhtthz-uhfffaoysa-n')).to.equal(false);
    expect(isStandardInchiKey('LFQSCWFLJHTTHZ-UHFFFAOYSA')).to.equal(false);
    expect(isStandardInchiKey('LFQSCWFLJHTTHZ')).to.equal(false);
  });

  it('the protonation letter follows /p: acetate -M, ammonium -O, calcium chloride -L', () => {
    expect(inchiKeyOf(inchiCase('acetate').inchi)).to.match(/-M$/);
    expect(inchiKeyOf(inchiCase('ammonium').inchi)).to.match(/-O$/);
    expect(inchiKeyOf(inchiCase('calcium_chloride').inchi)).to.match(/-L$/);
    expect(inchiKeyOf(inchiCase('pubchem:100976278').inchi)).to.equal('PMPKIFXHVHQBCN-OJDZSJEKSA-P');
  });

  it('the bare proton H+ (InChI=1S/p+1) gets its published key GPRLSGONYQIRFK-UHFFFAOYSA-N', () => {
    const proton = parseStandardInchi('InChI=1S/p+1');
    expect(inchiKeyOf(proton)).to.equal('GPRLSGONYQIRFK-UHFFFAOYSA-N');
    expect(proton.components).to.have.length(1);
    expect(inchiFromLayers(proton.layers)).to.equal('InChI=1S/p+1');
  });
});
