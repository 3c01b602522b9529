import { hash } from 'node:crypto';

// The Standard InChIKey algorithm as published by IUPAC/InChI Trust (InChI Technical Manual,
// "InChIKey"): block 1 is 65 bits of SHA-256 over the main layers written as 14 letters, block 2
// is 37 bits of SHA-256 over the stereo and isotopic layers written as 8 letters, then 'S'
// (standard), 'A' (version 1) and a letter for /p. Bits become letters through a table of
// letter triplets (14 bits each) and doublets (9 bits each). The bit order below reproduces the
// reference library exactly, quirks included, because every published key depends on it.

const LETTER_A = 65;
const LETTER_E = 4;
const LETTER_T = 19;

/**
 * The 16,384 triplets (2^14) out of the 17,576 (26^3) possible: in alphabetical order, without
 * the 676 that start with 'E' (so no key has an 'E' where a float exponent could be read) and
 * without the first 516 that start with 'T' ("TAA" to "TTV").
 */
const TRIPLETS: readonly string[] = (() => {
  const triplets: string[] = [];
  for (let first = 0; first < 26; first++) {
    if (first === LETTER_E) continue;
    for (let rest = 0; rest < 676; rest++) {
      if (first === LETTER_T && rest <= 19 * 26 + 21) continue; // "TAA".."TTV"
      triplets.push(String.fromCharCode(LETTER_A + first, LETTER_A + ((rest / 26) | 0), LETTER_A + (rest % 26)));
    }
  }
  return triplets;
})();

/** The first 512 (2^9) doublets in alphabetical order, "AA" to "TR". */
const DOUBLETS: readonly string[] = (() => {
  const doublets: string[] = [];
  for (let n = 0; n < 512; n++) doublets.push(String.fromCharCode(LETTER_A + ((n / 26) | 0), LETTER_A + (n % 26)));
  return doublets;
})();

function sha256(text: string): Buffer {
  // crypto.hash (one call, no Hash object) is markedly faster than createHash for short strings.
  return hash('sha256', text, 'buffer');
}

// Each helper takes the bit slice that the reference library reads from the digest,
// low byte first (bits 0..13 are all of byte 0 and the low 6 bits of byte 1, and so on).
function triplet1(d: Buffer): string {
  return TRIPLETS[d[0] | ((d[1] & 0x3f) << 8)];
}
function triplet2(d: Buffer): string {
  return TRIPLETS[((d[1] & 0xc0) | (d[2] << 8) | ((d[3] & 0x0f) << 16)) >> 6];
}
function triplet3(d: Buffer): string {
  return TRIPLETS[((d[3] & 0xf0) | (d[4] << 8) | ((d[5] & 0x03) << 16)) >> 4];
}
function triplet4(d: Buffer): string {
  return TRIPLETS[((d[5] & 0xfc) | (d[6] << 8)) >> 2];
}
function doubletBits56to64(d: Buffer): string {
  return DOUBLETS[d[7] | ((d[8] & 0x01) << 8)];
}
function doubletBits28to36(d: Buffer): string {
  return DOUBLETS[((d[3] & 0xf0) | ((d[4] & 0x1f) << 8)) >> 4];
}

/**
 * First InChIKey block (14 letters) of the main layers: the text between `InChI=1S/` and the
 * first of `/p` or a stereo/isotopic layer, e.g. `C2H6O/c1-2-3/h3H,2H2,1H3`.
 */
export function connectivityBlockOfMainLayers(mainLayers: string): string {
  const d = sha256(mainLayers);
  return triplet1(d) + triplet2(d) + triplet3(d) + triplet4(d) + doubletBits56to64(d);
}

/** The second block's 8 letters for a structure with no stereo or isotopic layer. */
export const NO_STEREO_OR_ISOTOPE_BLOCK = 'UHFFFAOY';

/**
 * The 8 hashed letters of the second InChIKey block, from the stereo and isotopic layers as
 * written after `/p` (`/b2-1+`, `/t2-/m0/s1`, `/i1D` ...; '' when there are none).
 */
export function stereoIsotopeBlockOfMinorLayers(minorLayers: string): string {
  if (minorLayers === '') return NO_STEREO_OR_ISOTOPE_BLOCK;
  // The reference library hashes the minor layers written twice when they are shorter than
  // 255 characters (a leftover of an early buffer scheme, frozen into every published key).
  const hashed = minorLayers.length < 255 ? minorLayers + minorLayers : minorLayers;
  const d = sha256(hashed);
  return triplet1(d) + triplet2(d) + doubletBits28to36(d);
}

const PROTONS_ADDED = 'OPQRSTUVWXYZ';
const PROTONS_REMOVED = 'MLKJIHGFEDCB';

/**
 * The last letter of an InChIKey from the `/p` layer value: N none, O +1 ... Z +12,
 * M −1 ... B −12, A beyond ±12.
 */
export function protonationFlag(protons: string): string {
  if (protons === '') return 'N';
  const count = parseInt(protons, 10);
  if (!(count !== 0 && Number.isFinite(count))) return 'N';
  if (count > 12 || count < -12) return 'A';
  return count > 0 ? PROTONS_ADDED[count - 1] : PROTONS_REMOVED[-count - 1];
}
