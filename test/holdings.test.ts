/**
 * What `npm run demo` and `npm start` say when they start: what the indices hold, and the structures
 * with no fingerprint, which no similarity or substructure search finds, with the reason their load
 * recorded.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { fingerprintlessLine, holdingsLine, holdingsOf } from '../src/domain/holdings';
import { Engine } from '../src/engine/client';
import { freshPrefix, load, testConfig } from './support/fixture';

/** A structure table of real structures of the demo (examples/demo/structure.tsv.gz). */
function structureTable(rows: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'chemxref-holdings-')), 'structure.tsv');
  writeFileSync(file, `UCI\tSTANDARDINCHI\tSTANDARDINCHIKEY\n${rows.join('\n')}\n`);
  return file;
}

const paracetamol = 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)\tRZVAJINKPMORJF-UHFFFAOYSA-N';
// Nitro groups written as N(=O)OH, a nitrogen with four bonds: RDKit refuses the molecule.
const nitrobenzeneAsDrawn = 'InChI=1S/C6H6NO2/c8-7(9)6-4-2-1-3-5-6/h1-5H,(H,8,9)\tLFDPCUJFCNVNCS-UHFFFAOYSA-N';
const nitromethaneAsDrawn = 'InChI=1S/CH4NO2/c1-2(3)4/h1H3,(H,3,4)\tZMOQDGVSXWNDBB-UHFFFAOYSA-N';
const butylammoniumHexafluorosilicate =
  'InChI=1S/C8H19N.F6Si/c1-3-5-7-9-8-6-4-2;1-7(2,3,4,5)6/h9H,3-8H2,1-2H3;\tXYOARLCEDZCISA-UHFFFAOYSA-N';
const aspirin = 'InChI=1S/C9H8O4/c1-6(10)13-8-5-3-2-4-7(8)9(11)12/h2-5H,1H3,(H,11,12)\tBSYNRYMUTXBXSQ-UHFFFAOYSA-N';

const rdkitRefused = 'RDKit could not read the molecule Indigo rebuilt from the InChI';

describe('what the service says it holds when it starts', function () {
  this.timeout(300_000);

  it(
    'counts the structures without a fingerprint, says why as their load recorded it, and names those no ' +
      'load tried',
    async () => {
      const prefix = freshPrefix('holdings');
      const engine = new Engine(testConfig(prefix));
      try {
        await load(
          prefix,
          [
            'structures',
            structureTable([paracetamol, nitrobenzeneAsDrawn, nitromethaneAsDrawn].map((row, i) => `${i + 1}\t${row}`)),
          ],
          { fingerprints: true },
        );
        let holdings = await holdingsOf(engine);
        expect(holdings).to.deep.include({ structures: 3, currentAssignments: 0, withoutFingerprint: 2 });
        expect(fingerprintlessLine(holdings)).to.equal(
          `2 structures have no fingerprint (${rdkitRefused}): similarity and substructure searches cannot find them.`,
        );
        expect(holdingsLine(holdings)).to.equal('It holds 3 structures and 0 current assignments in 0 sources.');

        // Two more, loaded without their fingerprints: one RDKit refuses too, one it reads.
        await load(prefix, [
          'structures',
          structureTable([butylammoniumHexafluorosilicate, aspirin].map((row, i) => `${i + 4}\t${row}`)),
          '--no-fingerprints',
        ]);
        holdings = await holdingsOf(engine);
        expect(fingerprintlessLine(holdings)).to.equal(
          `4 structures have no fingerprint (2: ${rdkitRefused}; 2: not computed yet, or their reason is no longer ` +
            'kept: `npm run load -- fingerprints` computes them): similarity and substructure searches cannot find them.',
        );

        await load(prefix, ['fingerprints']);
        holdings = await holdingsOf(engine);
        expect(fingerprintlessLine(holdings)).to.equal(
          `3 structures have no fingerprint (${rdkitRefused}): similarity and substructure searches cannot find them.`,
        );
      } finally {
        await engine.close();
      }
    },
  );

  it('says nothing of fingerprints when every structure has one', async () => {
    const prefix = freshPrefix('holdings-all');
    const engine = new Engine(testConfig(prefix));
    try {
      await load(prefix, ['structures', structureTable([`1\t${paracetamol}`, `2\t${aspirin}`])], {
        fingerprints: true,
      });
      const holdings = await holdingsOf(engine);
      expect(holdings.withoutFingerprint).to.equal(0);
      expect(fingerprintlessLine(holdings)).to.equal(undefined);
      expect(
        fingerprintlessLine({ ...holdings, withoutFingerprint: 1, withoutFingerprintReasons: new Map([['why', 1]]) }),
      ).to.equal('1 structure has no fingerprint (why): similarity and substructure searches cannot find it.');
    } finally {
      await engine.close();
    }
  });
});
