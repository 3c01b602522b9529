// Real molecules for the chemistry tests, copied from the shared data set
// (test/fixtures/chemistry/README.md says where they come from).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

const FIXTURES = join(__dirname, '..', 'fixtures', 'chemistry');

export interface Molecule {
  source: string;
  id: string;
  smiles: string;
  standardInchi: string;
  standardInchiKey: string;
}

export interface InchiCase {
  name: string;
  /** 'std', 'std-real', 'std-large' (Standard InChIs) or 'nonstd'. */
  kind: string;
  inchi: string;
  inchiKey: string;
  note: string;
}

let molecules: Molecule[] | undefined;
let cases: InchiCase[] | undefined;

function tsvRows(text: string): string[][] {
  return text
    .split('\n')
    .slice(1)
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));
}

/** The 28,657 molecules of molecules.tsv.gz (ChEMBL, NCI/DTP, PubChem, ZINC, named structures). */
export function allMolecules(): Molecule[] {
  molecules ??= tsvRows(gunzipSync(readFileSync(join(FIXTURES, 'molecules.tsv.gz'))).toString('utf8')).map(
    ([source, id, smiles, standardInchi, standardInchiKey]) => ({
      source,
      id,
      smiles,
      standardInchi,
      standardInchiKey,
    }),
  );
  return molecules;
}

/** The 62 hand-picked hard cases of inchi-cases.tsv. */
export function inchiCases(): InchiCase[] {
  cases ??= tsvRows(readFileSync(join(FIXTURES, 'inchi-cases.tsv'), 'utf8')).map(
    ([name, kind, , inchi, inchiKey, , note]) => ({ name, kind, inchi, inchiKey, note }),
  );
  return cases;
}

/** The case of that name (the first one when a name has two rows, e.g. pubchem:100976278). */
export function inchiCase(name: string): InchiCase {
  const found = inchiCases().find((c) => c.name === name);
  if (found === undefined) throw new Error(`no case ${name} in inchi-cases.tsv`);
  return found;
}
