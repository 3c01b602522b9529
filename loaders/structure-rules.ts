/** The loading rules of docs/data-model.md for one structure: an InChI and/or an InChIKey from a row. */
import { InchiError, inchiKeyOf, isStandardInchiKey, parseStandardInchi, type ParsedInchi } from '../src/chemistry';
import { Reject } from './reject';

/** Parses a UCI column: a positive integer or a Reject. */
export function parseUci(value: string | undefined): number {
  if (!value || !/^[0-9]{1,15}$/.test(value) || Number(value) < 1)
    throw new Reject('bad-uci', `UCI "${value ?? ''}" is not a positive integer`);
  return Number(value);
}

/** A structure that passed the rules; `parsed` is null when only a key was given (it must already be known). */
export interface CheckedStructure {
  parsed: ParsedInchi | null;
  standardInchiKey: string;
}

/** Applies the loading rules to an InChI and a key as given in a row; throws Reject on a broken rule. */
export function checkStructure(
  inchi: string | undefined,
  key: string | undefined,
  maxInchiLength: number,
): CheckedStructure {
  const givenKey =
    key
      ?.trim()
      .toUpperCase()
      .replace(/^INCHIKEY=/, '') || undefined;
  const givenInchi = inchi?.trim() || undefined;
  if (!givenInchi) {
    if (!givenKey) throw new Reject('no-structure', 'the row has no Standard InChI and no InChIKey');
    if (!isStandardInchiKey(givenKey)) throw new Reject('bad-inchikey', `"${givenKey}" is not a Standard InChIKey`);
    return { parsed: null, standardInchiKey: givenKey };
  }
  if (givenInchi.length > maxInchiLength) {
    throw new Reject(
      'inchi-too-long',
      `the InChI has ${givenInchi.length} characters, more than MAX_INCHI_LENGTH (${maxInchiLength})`,
    );
  }
  let parsed: ParsedInchi;
  try {
    parsed = parseStandardInchi(givenInchi);
  } catch (error) {
    if (!(error instanceof InchiError)) throw error;
    const nonStandard = /standard/i.test(error.message);
    throw new Reject(nonStandard ? 'non-standard-inchi' : 'invalid-inchi', error.message);
  }
  const computed = inchiKeyOf(parsed);
  if (givenKey && givenKey !== computed) {
    throw new Reject(
      'inchi-key-mismatch',
      `the InChI and the InChIKey disagree: the InChI's key is ${computed}, the row says ${givenKey}`,
    );
  }
  return { parsed, standardInchiKey: computed };
}
