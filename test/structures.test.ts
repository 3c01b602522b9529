import { expect } from 'chai';
import initRDKitModule from '@rdkit/rdkit';
import { startApi, type RunningApi } from './support/api';
import { fixturePrefix, testConfig } from './support/fixture';

const paracetamol = {
  smiles: 'CC(=O)Nc1ccc(O)cc1',
  inchi: 'InChI=1S/C8H9NO2/c1-6(10)9-7-2-4-8(11)5-3-7/h2-5,11H,1H3,(H,9,10)',
  key: 'RZVAJINKPMORJF-UHFFFAOYSA-N',
};
// The fixture's L-isoleucine (chemical-structures amino_acids/L-isoleucine), as that collection writes it.
const isoleucine = {
  smiles: 'C(=O)([C@H]([C@H](CC)C)N)O',
  inchi: 'InChI=1S/C6H13NO2/c1-3-4(2)5(7)6(8)9/h4-5H,3,7H2,1-2H3,(H,8,9)/t4-,5-/m0/s1',
};

/**
 * C484: a 22 × 22 square lattice of carbons closed on itself into a torus, each atom bonded to four.
 * Every atom looks like every other, the hard case of the InChI's canonical numbering: RDKit takes
 * seconds over it.
 */
function toroidalCarbonNet(n: number): string {
  const atom = (i: number, j: number): number => (i % n) * n + (j % n);
  const bonds = new Set<string>();
  for (let i = 0; i < n; i += 1) {
    for (let j = 0; j < n; j += 1) {
      for (const other of [atom(i, j + 1), atom(i + 1, j)])
        bonds.add(`${Math.min(atom(i, j), other)}-${Math.max(atom(i, j), other)}`);
    }
  }
  // Atoms in order: a bond to the atom before is written as such, every other bond as a ring closure.
  const free = Array.from({ length: 99 }, (_, k) => 99 - k);
  const open = new Map<string, number>();
  const label = (ring: number): string => (ring > 9 ? `%${ring}` : String(ring));
  let smiles = '';
  for (let k = 0; k < n * n; k += 1) {
    smiles += k > 0 && !bonds.has(`${k - 1}-${k}`) ? '.C' : 'C';
    for (const bond of [...bonds].filter((b) => b.endsWith(`-${k}`) && open.has(b))) {
      smiles += label(open.get(bond)!);
      free.push(open.get(bond)!);
      open.delete(bond);
    }
    for (const bond of [...bonds].filter((b) => b.startsWith(`${k}-`) && b !== `${k}-${k + 1}`)) {
      const ring = free.pop()!;
      open.set(bond, ring);
      smiles += label(ring);
    }
  }
  return smiles;
}

describe('structures as input: SMILES and molfiles (docs/api.md)', function () {
  this.timeout(120_000);
  let api: RunningApi;
  let paracetamolMolfile: string;
  let paracetamolV3000: string;
  let prefix: string;

  before(async () => {
    prefix = await fixturePrefix();
    api = await startApi(testConfig(prefix));
    const rdkit = await initRDKitModule();
    const mol = rdkit.get_mol(paracetamol.smiles)!;
    paracetamolMolfile = mol.get_molblock();
    paracetamolV3000 = mol.get_v3Kmolblock();
    mol.delete();
  });
  after(async () => {
    await api?.stop();
  });

  const compounds = (body: object): Promise<{ status: number; body: any }> => api.post('/api/v1/compounds', body);
  const connectivity = (body: object): Promise<{ status: number; body: any }> => api.post('/api/v1/connectivity', body);

  describe('POST /compounds', () => {
    it('paracetamol by SMILES finds what its InChIKey finds, and says which InChI and key it computed', async () => {
      const byKey = await compounds({ type: 'inchikey', compound: paracetamol.key });
      const bySmiles = await compounds({ type: 'smiles', compound: ` ${paracetamol.smiles} `, sourceID: 0 });
      expect(bySmiles.status).to.equal(200);
      expect(byKey.body.compounds[0].sources.map((s: { compoundId: string }) => s.compoundId)).to.include.members([
        'CHEMBL112',
        '3991',
      ]);
      const { computed, ...rest } = bySmiles.body;
      expect(rest).to.deep.equal(byKey.body);
      expect(computed).to.deep.equal({ standardInchi: paracetamol.inchi, standardInchiKey: paracetamol.key });
    });

    it(
      'paracetamol by molfile (V2000, its first header line empty, and ' + 'V3000) finds what its InChIKey finds',
      async () => {
        expect(paracetamolMolfile.startsWith('\n')).to.equal(true);
        const byKey = await compounds({ type: 'inchikey', compound: paracetamol.key });
        for (const molfile of [paracetamolMolfile, paracetamolV3000]) {
          const byMolfile = await compounds({ type: 'molfile', compound: molfile });
          expect(byMolfile.status).to.equal(200);
          const { computed, ...rest } = byMolfile.body;
          expect(rest).to.deep.equal(byKey.body);
          expect(computed).to.deep.equal({ standardInchi: paracetamol.inchi, standardInchiKey: paracetamol.key });
        }
      },
    );

    it('a structure no source holds is "Not found", with the structure as sent and what was computed', async () => {
      // Cerotic acid (hexacosanoic acid): a real fatty acid, not in the fixture.
      const smiles = 'CCCCCCCCCCCCCCCCCCCCCCCCCC(=O)O';
      const { status, body } = await compounds({ type: 'smiles', compound: smiles });
      expect(status).to.equal(200);
      expect(body).to.deep.include({ response: 'Not found', totalCompounds: 0, compounds: [], notFound: [smiles] });
      expect(body.computed.standardInchi).to.match(/^InChI=1S\/C26H52O2\//);
      expect(body.computed.standardInchiKey).to.match(/^[A-Z]{14}-UHFFFAOYSA-N$/);
    });
  });

  describe('POST /connectivity', () => {
    it('L-isoleucine by SMILES finds what its InChI finds (its stereoisomers), with what was computed', async () => {
      const byInchi = await connectivity({ type: 'inchi', compound: isoleucine.inchi, searchComponents: true });
      const bySmiles = await connectivity({ type: 'smiles', compound: isoleucine.smiles, searchComponents: true });
      expect(bySmiles.status).to.equal(200);
      expect(byInchi.body.totalCompounds).to.be.at.least(3);
      const { computed, ...rest } = bySmiles.body;
      expect(rest).to.deep.equal(byInchi.body);
      expect(computed.standardInchi).to.equal(isoleucine.inchi);
      expect(computed.standardInchiKey).to.equal(byInchi.body.searchedCompound.standardInchiKey);
    });

    it('paracetamol by molfile finds what its InChI finds', async () => {
      const byInchi = await connectivity({ type: 'inchi', compound: paracetamol.inchi });
      const { computed, ...rest } = (await connectivity({ type: 'molfile', compound: paracetamolMolfile })).body;
      expect(rest).to.deep.equal(byInchi.body);
      expect(computed.standardInchiKey).to.equal(paracetamol.key);
    });
  });

  describe('structures that cannot be searched', () => {
    const refused: [string, object, number, RegExp][] = [
      [
        "a SMILES with an unclosed branch: 400 with RDKit's reason",
        { type: 'smiles', compound: 'CC(=O)Nc1ccc(O' },
        400,
        /^the SMILES could not be read: extra open parentheses .*position/,
      ],
      [
        "a SMILES with an unclosed ring: 400 with RDKit's reason",
        { type: 'smiles', compound: 'C1CC' },
        400,
        /^the SMILES could not be read: unclosed ring/,
      ],
      [
        'an aromatic ring RDKit cannot kekulize: 400',
        { type: 'smiles', compound: 'c1cccc1' },
        400,
        /^the SMILES could not be read: Can't kekulize/,
      ],
      [
        'a SMILES with a query atom (*): 422, no Standard InChI',
        { type: 'smiles', compound: 'CC(=O)Nc1ccc(*)cc1' },
        422,
        /^the SMILES was read, but it has no Standard InChI: it has a query atom/,
      ],
      [
        'an R-group in a SMILES ([*:1]): 422',
        { type: 'smiles', compound: 'CC(=O)Nc1ccc([*:1])cc1' },
        422,
        /no Standard InChI: it has a query atom/,
      ],
      [
        'a molfile without its M  END line: 400',
        { type: 'molfile', compound: 'CC(=O)Nc1ccc(O)cc1' },
        400,
        /^the molfile could not be read: a molfile ends with the line "M {2}END"/,
      ],
      [
        'a molfile sent as a SMILES: 400 naming the right type',
        { type: 'smiles', compound: '\n  x\n\n  0  0  0  0  0  0  0  0  0  0999 V2000\nM  END' },
        400,
        /SMILES is a single line/,
      ],
      [
        'a molfile of no atoms: 422',
        { type: 'molfile', compound: '\n  x\n\n  0  0  0  0  0  0  0  0  0  0999 V2000\nM  END' },
        422,
        /has no Standard InChI: it has no atoms/,
      ],
      [
        'a molfile of only whitespace: the blank-compound 400',
        { type: 'molfile', compound: ' \n\n ' },
        400,
        /^the compound is empty or only whitespace$/,
      ],
      ['a SMILES that is not a string: 400', { type: 'smiles', compound: 42 }, 400, /"compound" must be a string/],
      ['a SMILES query without its compound: 400', { type: 'smiles' }, 400, /the field "compound" is missing/],
      [
        'a 900-carbon chain, on which RDKit crashes: 422',
        { type: 'smiles', compound: 'C'.repeat(900) },
        422,
        /^the structure toolkit failed on this SMILES/,
      ],
    ];
    for (const [what, body, status, message] of refused) {
      it(what, async () => {
        for (const path of ['/api/v1/compounds', '/api/v1/connectivity']) {
          const response = await api.post(path, body);
          expect(response.status, path).to.equal(status);
          expect(response.body.response).to.equal('Error');
          expect(response.body.error, path).to.match(message);
        }
      });
    }

    it('after RDKit crashed on a structure, the next one is answered', async () => {
      expect((await compounds({ type: 'smiles', compound: 'C'.repeat(900) })).status).to.equal(422);
      expect((await compounds({ type: 'smiles', compound: paracetamol.smiles })).body.response).to.equal('Success');
    });

    it('a SMILES longer than MAX_STRUCTURE_LENGTH is a 400 saying so', async () => {
      const strict = await startApi(testConfig(prefix, { MAX_STRUCTURE_LENGTH: '100' }));
      try {
        const response = await strict.post('/api/v1/compounds', { type: 'smiles', compound: 'C'.repeat(101) });
        expect(response.status).to.equal(400);
        expect(response.body.error).to.equal(
          'the SMILES has 101 characters, more than the 100 this service accepts (MAX_STRUCTURE_LENGTH)',
        );
      } finally {
        await strict.stop();
      }
    });

    it(
      'a structure slower than STRUCTURE_TIMEOUT_MS is a 422 saying so, and ' + 'the next request is answered',
      async () => {
        const hurried = await startApi(testConfig(prefix, { STRUCTURE_TIMEOUT_MS: '1000' }));
        try {
          const slow = hurried.post('/api/v1/connectivity', { type: 'smiles', compound: toroidalCarbonNet(22) });
          // The toolkit works in a thread of its own: other requests are answered meanwhile.
          const meanwhile = hurried.post('/api/v1/compounds', { type: 'inchikey', compound: paracetamol.key });
          expect((await meanwhile).status).to.equal(200);
          const response = await slow;
          expect(response.status).to.equal(422);
          expect(response.body.error).to.equal(
            'the Standard InChI of this SMILES took longer than the 1000 ms this ' +
              'service gives a structure (STRUCTURE_TIMEOUT_MS)',
          );
          const next = await hurried.post('/api/v1/compounds', { type: 'smiles', compound: paracetamol.smiles });
          expect(next.status).to.equal(200);
          expect(next.body.computed.standardInchiKey).to.equal(paracetamol.key);
        } finally {
          await hurried.stop();
        }
      },
    );
  });
});
