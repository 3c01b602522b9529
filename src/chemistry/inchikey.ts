import { NO_STEREO_OR_ISOTOPE_BLOCK, protonationFlag, stereoIsotopeBlockOfMinorLayers } from './key-hash';
import { ParsedInchi, minorLayersText } from './layers';
import { parseStandardInchi } from './parse';

const STANDARD_INCHIKEY = /^[A-Z]{14}-[A-Z]{8}SA-[A-Z]$/;

/**
 * The Standard InChIKey of a Standard InChI (given as text or already parsed), computed with the
 * published IUPAC algorithm; equal to the InChI library's key. Text that is not a Standard InChI
 * throws {@link InchiError}.
 */
export function inchiKeyOf(parsed: ParsedInchi | string): string {
  const structure = typeof parsed === 'string' ? parseStandardInchi(parsed) : parsed;
  const minor = minorLayersText(structure.layers);
  const stereoIsotope = minor === '' ? NO_STEREO_OR_ISOTOPE_BLOCK : stereoIsotopeBlockOfMinorLayers(minor);
  // The reference library reads the bare proton's 'p+1' as its main layer, not as /p: flag N.
  const flag = structure.layers.formula === '' ? 'N' : protonationFlag(structure.layers.protons);
  return `${structure.connectivityBlock}-${stereoIsotope}SA-${flag}`;
}

/**
 * The first InChIKey block (14 letters) of a whole structure: what connectivity-equal structures
 * (stereoisomers, isotopologues, protonation states of one skeleton) have in common.
 */
export function connectivityBlockOf(parsed: ParsedInchi | string): string {
  return typeof parsed === 'string' ? parseStandardInchi(parsed).connectivityBlock : parsed.connectivityBlock;
}

/** True for a string of the form of a Standard InChIKey, `^[A-Z]{14}-[A-Z]{8}SA-[A-Z]$`. */
export function isStandardInchiKey(key: string): boolean {
  return typeof key === 'string' && STANDARD_INCHIKEY.test(key);
}
