import { InchiError } from './inchi-error';
import { connectivityBlockOfMainLayers } from './key-hash';
import { FullInchiLayers, InchiComponent, ParsedInchi, inchiFromLayers, mainLayersTail } from './layers';

// A hand-written, single-pass reader: loaders call it on every row, so it uses indexOf and
// charCodeAt instead of regular expressions (no backtracking, linear in the length of the InChI)
// and allocates little more than the layer strings it returns.

const STANDARD_PREFIX = 'InChI=1S/';

/**
 * More components than any real structure has (the 10-component mixture of the test data is
 * large); the limit keeps a count prefix such as `99999999H2O` from allocating millions.
 */
export const MAX_COMPONENTS = 1000;

// Layer kinds: the letter after '/' maps to a kind, and the kinds must strictly increase.
const enum Kind {
  Formula = 0,
  Connections,
  HAtoms,
  Charge,
  Protons,
  StereoDbond,
  StereoSp3,
  StereoSp3Inverted,
  StereoType,
  IsotopicAtoms,
  IsotopicH,
  IsotopicStereoDbond,
  IsotopicStereoSp3,
  IsotopicStereoSp3Inverted,
  IsotopicStereoType,
}

const LAYER_LABEL: readonly string[] = [
  'formula',
  '/c (connections)',
  '/h (hydrogen atoms)',
  '/q (charge)',
  '/p (protons)',
  '/b (double-bond stereo)',
  '/t (sp3 stereo)',
  '/m (sp3 inverted flag)',
  '/s (stereo type)',
  '/i (isotopic atoms)',
  'isotopic /h (exchangeable isotopic H)',
  'isotopic /b',
  'isotopic /t',
  'isotopic /m',
  'isotopic /s',
];

/** Characters each layer may contain, indexed by kind then char code (ASCII only). */
const ALLOWED: readonly Uint8Array[] = (() => {
  const table = (chars: string): Uint8Array => {
    const allowed = new Uint8Array(128);
    for (let i = 0; i < chars.length; i++) allowed[chars.charCodeAt(i)] = 1;
    return allowed;
  };
  const digits = '0123456789';
  const stereo = table(digits + '-+,?;*');
  const hydrogens = table(digits + 'H-,();*');
  const isotopicH = table(digits + 'HDT-,();*');
  const mFlags = table('01.');
  return [
    table(''), // the formula is read by its own routine
    table(digits + '-,();*'),
    hydrogens,
    table(digits + '+-;*'),
    table(digits + '+-'),
    stereo,
    stereo,
    mFlags,
    table(digits),
    table(digits + 'HDT+-,;*'),
    isotopicH,
    stereo,
    stereo,
    mFlags,
    table(digits),
  ];
})();

/** Parts of a per-component layer that may end with these characters; others mean truncation. */
const TERMINAL: readonly Uint8Array[] = (() => {
  const table = (chars: string): Uint8Array => {
    const allowed = new Uint8Array(128);
    for (let i = 0; i < chars.length; i++) allowed[chars.charCodeAt(i)] = 1;
    return allowed;
  };
  const digits = '0123456789';
  const stereo = table('-+?');
  const none = table('');
  return [
    none,
    table(digits + ')'),
    table(digits + 'H)'),
    table(digits),
    none,
    stereo,
    stereo,
    none,
    none,
    table(digits + 'HDT'),
    table(digits + 'HDT)'),
    stereo,
    stereo,
    none,
    none,
  ];
})();

function layerKind(letter: number, afterIsotopic: boolean): Kind | -1 {
  switch (letter) {
    case 99:
      return afterIsotopic ? -1 : Kind.Connections; // c
    case 104:
      return afterIsotopic ? Kind.IsotopicH : Kind.HAtoms; // h
    case 113:
      return afterIsotopic ? -1 : Kind.Charge; // q
    case 112:
      return afterIsotopic ? -1 : Kind.Protons; // p
    case 98:
      return afterIsotopic ? Kind.IsotopicStereoDbond : Kind.StereoDbond; // b
    case 116:
      return afterIsotopic ? Kind.IsotopicStereoSp3 : Kind.StereoSp3; // t
    case 109:
      return afterIsotopic ? Kind.IsotopicStereoSp3Inverted : Kind.StereoSp3Inverted; // m
    case 115:
      return afterIsotopic ? Kind.IsotopicStereoType : Kind.StereoType; // s
    case 105:
      return afterIsotopic ? -1 : Kind.IsotopicAtoms; // i
    default:
      return -1;
  }
}

function describeChar(code: number): string {
  return code > 32 && code < 127
    ? `'${String.fromCharCode(code)}'`
    : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Rejects what cannot start a Standard InChI, naming what it is instead when it can tell. */
function checkPrefix(inchi: string): void {
  if (inchi.startsWith(STANDARD_PREFIX)) return;
  if (inchi === '') throw new InchiError('empty InChI');
  if (inchi.startsWith('InChI=1/')) {
    throw new InchiError(
      'not a Standard InChI: InChI=1/ is a non-standard InChI (made with ' +
        'non-default options); a Standard InChI starts with InChI=1S/',
    );
  }
  if (inchi.startsWith('InChI=1B/')) {
    throw new InchiError(
      'not a Standard InChI: InChI=1B/ is an experimental (beta) InChI; a Standard InChI starts with InChI=1S/',
    );
  }
  if (inchi.startsWith('InChI=1S'))
    throw new InchiError("not a valid InChI: 'InChI=1S' must be followed by '/' and a formula");
  if (inchi.startsWith('InChI='))
    throw new InchiError('not a Standard InChI: only InChI version 1 Standard InChIs (InChI=1S/) are accepted');
  if (/^[A-Z]{14}-[A-Z]{10}-[A-Z]$/.test(inchi)) throw new InchiError('this is an InChIKey, not an InChI');
  if (inchi.slice(0, 6).toLowerCase() === 'inchi=')
    throw new InchiError('not a valid InChI: it must start with InChI= (case matters)');
  throw new InchiError('not an InChI: a Standard InChI starts with InChI=1S/');
}

/**
 * Reads the formula into its component formulas (count prefixes expanded into repeats of the
 * same formula). Element symbols are an upper-case letter and up to two lower-case ones, each
 * with an optional count.
 */
function readFormula(formula: string, out: string[]): void {
  const len = formula.length;
  let start = 0;
  while (start <= len) {
    let end = formula.indexOf('.', start);
    if (end < 0) end = len;
    let pos = start;
    let count = 0;
    while (pos < end) {
      const c = formula.charCodeAt(pos);
      if (c < 48 || c > 57) break;
      count = count * 10 + (c - 48);
      if (count > MAX_COMPONENTS) throw new InchiError(`not a valid InChI: more than ${MAX_COMPONENTS} components`);
      pos++;
    }
    if (pos === start) count = 1;
    else if (count === 0) throw new InchiError(`not a valid InChI: component count 0 in formula '${formula}'`);
    if (pos === end) {
      throw new InchiError(
        end === start
          ? `not a valid InChI: empty component in formula '${formula}'`
          : `not a valid InChI: count prefix without a formula in '${formula}'`,
      );
    }
    const elementsStart = pos;
    while (pos < end) {
      const c = formula.charCodeAt(pos);
      if (c < 65 || c > 90) {
        throw new InchiError(`not a valid InChI: unexpected character ${describeChar(c)} in formula '${formula}'`);
      }
      pos++;
      let lower = 0;
      while (pos < end) {
        const l = formula.charCodeAt(pos);
        if (l < 97 || l > 122) break;
        if (++lower > 2)
          throw new InchiError(`not a valid InChI: no element symbol has more than 3 letters (formula '${formula}')`);
        pos++;
      }
      while (pos < end) {
        const d = formula.charCodeAt(pos);
        if (d < 48 || d > 57) break;
        pos++;
      }
    }
    if (out.length + count > MAX_COMPONENTS)
      throw new InchiError(`not a valid InChI: more than ${MAX_COMPONENTS} components`);
    const part = formula.slice(elementsStart, end);
    for (let k = 0; k < count; k++) out.push(part);
    start = end + 1;
  }
}

/**
 * Checks a layer's characters, its parentheses and the end of each `;`-separated part
 * (a part ending in '-' or '(' is a truncated InChI).
 */
function checkLayerText(value: string, kind: Kind): void {
  const allowed = ALLOWED[kind];
  const terminal = TERMINAL[kind];
  const perComponent =
    kind !== Kind.Protons &&
    kind !== Kind.StereoType &&
    kind !== Kind.IsotopicStereoType &&
    kind !== Kind.StereoSp3Inverted &&
    kind !== Kind.IsotopicStereoSp3Inverted;
  let depth = 0;
  let previous = 59; // ';': the start of a part
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 128 || allowed[c] === 0) {
      throw new InchiError(`not a valid InChI: unexpected character ${describeChar(c)} in layer ${LAYER_LABEL[kind]}`);
    }
    if (c === 40) depth++;
    else if (c === 41) {
      if (--depth < 0) throw new InchiError(`not a valid InChI: unbalanced parentheses in layer ${LAYER_LABEL[kind]}`);
    } else if (c === 59) {
      if (depth !== 0) throw new InchiError(`not a valid InChI: unbalanced parentheses in layer ${LAYER_LABEL[kind]}`);
      if (previous !== 59 && previous !== 42 && terminal[previous] === 0) throw truncated(kind);
    }
    previous = c;
  }
  if (depth !== 0) throw new InchiError(`not a valid InChI: unbalanced parentheses in layer ${LAYER_LABEL[kind]}`);
  if (perComponent && previous !== 59 && previous !== 42 && terminal[previous] === 0) throw truncated(kind);
}

function truncated(kind: Kind): InchiError {
  return new InchiError(`not a valid InChI: layer ${LAYER_LABEL[kind]} is cut short (truncated InChI?)`);
}

/**
 * Splits a per-component layer on ';', expanding `n*` repeat prefixes, into exactly
 * `componentCount` parts (missing trailing parts are empty: nothing for those components).
 */
function splitComponents(value: string, componentCount: number, kind: Kind): string[] {
  const parts: string[] = new Array<string>(componentCount);
  const len = value.length;
  let filled = 0;
  let start = 0;
  while (start <= len) {
    let end = value.indexOf(';', start);
    if (end < 0) end = len;
    let pos = start;
    let repeats = 0;
    while (pos < end) {
      const c = value.charCodeAt(pos);
      if (c < 48 || c > 57) break;
      repeats = repeats * 10 + (c - 48);
      if (repeats > componentCount) break; // an atom number, or too many repeats: decided below
      pos++;
    }
    let part: string;
    if (pos > start && pos < end && value.charCodeAt(pos) === 42) {
      if (repeats === 0) throw new InchiError(`not a valid InChI: repeat count 0 in layer ${LAYER_LABEL[kind]}`);
      part = value.slice(pos + 1, end);
    } else {
      repeats = 1;
      part = start === 0 && end === len ? value : value.slice(start, end);
    }
    if (part.indexOf('*') >= 0) throw new InchiError(`not a valid InChI: misplaced '*' in layer ${LAYER_LABEL[kind]}`);
    if (filled + repeats > componentCount) {
      throw new InchiError(
        `not a valid InChI: layer ${LAYER_LABEL[kind]} describes more components than the formula (${componentCount})`,
      );
    }
    for (let k = 0; k < repeats; k++) parts[filled++] = part;
    start = end + 1;
  }
  while (filled < componentCount) parts[filled++] = '';
  return parts;
}

/** Every layer of an InChI, all empty: a structure's layers start from it. */
export function emptyLayers(): FullInchiLayers {
  return {
    formula: '',
    connections: '',
    hAtoms: '',
    charge: '',
    protons: '',
    stereoDbond: '',
    stereoSp3: '',
    stereoSp3Inverted: '',
    stereoType: '',
    isotopicAtoms: '',
    isotopicExchangeableH: '',
    isotopicStereoDbond: '',
    isotopicStereoSp3: '',
    isotopicStereoSp3Inverted: '',
    isotopicStereoType: '',
  };
}

function setLayer(layers: FullInchiLayers, kind: Kind, value: string): void {
  switch (kind) {
    case Kind.Connections:
      layers.connections = value;
      break;
    case Kind.HAtoms:
      layers.hAtoms = value;
      break;
    case Kind.Charge:
      layers.charge = value;
      break;
    case Kind.Protons:
      layers.protons = value;
      break;
    case Kind.StereoDbond:
      layers.stereoDbond = value;
      break;
    case Kind.StereoSp3:
      layers.stereoSp3 = value;
      break;
    case Kind.StereoSp3Inverted:
      layers.stereoSp3Inverted = value;
      break;
    case Kind.StereoType:
      layers.stereoType = value;
      break;
    case Kind.IsotopicAtoms:
      layers.isotopicAtoms = value;
      break;
    case Kind.IsotopicH:
      layers.isotopicExchangeableH = value;
      break;
    case Kind.IsotopicStereoDbond:
      layers.isotopicStereoDbond = value;
      break;
    case Kind.IsotopicStereoSp3:
      layers.isotopicStereoSp3 = value;
      break;
    case Kind.IsotopicStereoSp3Inverted:
      layers.isotopicStereoSp3Inverted = value;
      break;
    case Kind.IsotopicStereoType:
      layers.isotopicStereoType = value;
      break;
    default:
      break;
  }
}

/** Checks the layers whose whole value follows a fixed form (`/p`, `/s`, `/m`). */
function checkFixedForm(kind: Kind, value: string, componentCount: number): void {
  if (kind === Kind.StereoType || kind === Kind.IsotopicStereoType) {
    if (value === '1') return;
    if (value === '2')
      throw new InchiError('not a Standard InChI: relative stereo (/s2) is only found in non-standard InChIs');
    if (value === '3')
      throw new InchiError('not a Standard InChI: racemic stereo (/s3) is only found in non-standard InChIs');
    throw new InchiError(`not a valid InChI: stereo type /s${value} does not exist`);
  }
  if (kind === Kind.Protons) {
    const sign = value.charCodeAt(0);
    if (
      (sign !== 43 && sign !== 45) ||
      value.length < 2 ||
      value.charCodeAt(1) === 48 ||
      value.indexOf('+', 1) >= 0 ||
      value.indexOf('-', 1) >= 0
    ) {
      throw new InchiError(`not a valid InChI: /p${value} is not a number of protons such as /p+1 or /p-2`);
    }
    return;
  }
  if (kind === Kind.StereoSp3Inverted || kind === Kind.IsotopicStereoSp3Inverted) {
    if (value.length > componentCount) {
      throw new InchiError(
        `not a valid InChI: layer ${LAYER_LABEL[kind]} has more flags than the ` +
          `structure has components (${componentCount})`,
      );
    }
  }
}

/** Layers of the whole structure plus what the component split needs. */
interface ReadLayers {
  layers: FullInchiLayers;
  componentFormulas: string[];
}

function readLayers(inchi: string): ReadLayers {
  const layers = emptyLayers();
  const componentFormulas: string[] = [];
  const len = inchi.length;
  let start = STANDARD_PREFIX.length;
  if (start >= len) throw new InchiError('not a valid InChI: nothing after InChI=1S/');
  let end = inchi.indexOf('/', start);
  if (end < 0) end = len;
  let lastKind: Kind = Kind.Formula;
  let afterIsotopic = false;
  if (inchi.charCodeAt(start) === 112) {
    // A bare proton, InChI=1S/p+1: no formula, the /p layer comes first and has no slash.
    end = start - 1; // the '/' of the prefix: the loop below reads the 'p' segment
  } else {
    layers.formula = inchi.slice(start, end);
    readFormula(layers.formula, componentFormulas);
  }
  const componentCount = componentFormulas.length === 0 ? 1 : componentFormulas.length;
  while (end < len) {
    start = end + 1;
    end = inchi.indexOf('/', start);
    if (end < 0) end = len;
    if (start >= end) {
      throw new InchiError(
        start >= len ? "not a valid InChI: it ends with '/' (truncated InChI?)" : "not a valid InChI: empty layer '//'",
      );
    }
    const letter = inchi.charCodeAt(start);
    if (letter === 102)
      throw new InchiError('not a Standard InChI: a /f (fixed-H) layer is only found in non-standard InChIs');
    if (letter === 114)
      throw new InchiError(
        'not a Standard InChI: a /r (reconnected metals) layer is only found in non-standard InChIs',
      );
    const kind = layerKind(letter, afterIsotopic);
    if (kind === -1) {
      const name = `/${String.fromCharCode(letter)}`;
      throw new InchiError(
        afterIsotopic && letter >= 97 && letter <= 122
          ? `not a valid InChI: layer ${name} cannot follow the isotopic layer /i`
          : 'not a valid InChI: unknown layer ' +
              `${name.length === 2 && letter > 32 && letter < 127 ? name : describeChar(letter)}`,
      );
    }
    if (kind <= lastKind) {
      throw new InchiError(
        kind === lastKind
          ? `not a valid InChI: layer ${LAYER_LABEL[kind]} appears twice`
          : `not a valid InChI: layers out of order: ${LAYER_LABEL[kind]} cannot follow ${LAYER_LABEL[lastKind]}`,
      );
    }
    lastKind = kind;
    if (kind === Kind.IsotopicAtoms) afterIsotopic = true;
    const value = inchi.slice(start + 1, end);
    if (value === '' && kind !== Kind.IsotopicAtoms) {
      throw new InchiError(`not a valid InChI: layer ${LAYER_LABEL[kind]} is empty (truncated InChI?)`);
    }
    checkLayerText(value, kind);
    checkFixedForm(kind, value, componentCount);
    setLayer(layers, kind, value);
  }
  if (layers.formula === '' && layers.protons === '') throw new InchiError('not a valid InChI: no formula');
  if (layers.formula === '' && lastKind !== Kind.Protons)
    throw new InchiError('not a valid InChI: a structure without a formula can only be a bare proton (InChI=1S/p+1)');
  // `/i` alone says nothing: it is written only as the head of isotopic sublayers.
  if (afterIsotopic && layers.isotopicAtoms === '' && lastKind === Kind.IsotopicAtoms) {
    throw new InchiError('not a valid InChI: empty isotopic layer /i (truncated InChI?)');
  }
  return { layers, componentFormulas };
}

/** Block cache for components: water, HCl, Na+ ... recur in thousands of salts and hydrates. */
const componentBlockCache = new Map<string, string>();
const COMPONENT_BLOCK_CACHE_SIZE = 4096;

function componentConnectivityBlock(mainLayers: string): string {
  let block = componentBlockCache.get(mainLayers);
  if (block === undefined) {
    block = connectivityBlockOfMainLayers(mainLayers);
    if (componentBlockCache.size >= COMPONENT_BLOCK_CACHE_SIZE) componentBlockCache.clear();
    componentBlockCache.set(mainLayers, block);
  }
  return block;
}

/** The whole structure's layers without `/p`: a single-component structure's own component. */
function withoutProtons(layers: FullInchiLayers): FullInchiLayers {
  return { ...layers, protons: '' };
}

function inchiWithoutProtons(inchi: string, protons: string): string {
  if (protons === '') return inchi;
  const at = inchi.indexOf('/p' + protons);
  return inchi.slice(0, at) + inchi.slice(at + 2 + protons.length);
}

/**
 * Splits a multi-component structure. Each component gets the layers it would have alone:
 * its part of every `;`-separated layer, its `/m` character, and `/s` only when it has an
 * `/m` of its own (as in a single-component Standard InChI, where /s1 comes with /m).
 */
function splitIntoComponents(whole: FullInchiLayers, formulas: string[]): InchiComponent[] {
  const n = formulas.length;
  const split = (value: string, kind: Kind): string[] | null => (value === '' ? null : splitComponents(value, n, kind));
  const connections = split(whole.connections, Kind.Connections);
  const hAtoms = split(whole.hAtoms, Kind.HAtoms);
  const charge = split(whole.charge, Kind.Charge);
  const stereoDbond = split(whole.stereoDbond, Kind.StereoDbond);
  const stereoSp3 = split(whole.stereoSp3, Kind.StereoSp3);
  const isotopicAtoms = split(whole.isotopicAtoms, Kind.IsotopicAtoms);
  const isotopicH = split(whole.isotopicExchangeableH, Kind.IsotopicH);
  const isotopicStereoDbond = split(whole.isotopicStereoDbond, Kind.IsotopicStereoDbond);
  const isotopicStereoSp3 = split(whole.isotopicStereoSp3, Kind.IsotopicStereoSp3);
  const inverted = whole.stereoSp3Inverted;
  const isotopicInverted = whole.isotopicStereoSp3Inverted;
  const components: InchiComponent[] = new Array<InchiComponent>(n);
  for (let k = 0; k < n; k++) {
    const layers = emptyLayers();
    layers.formula = formulas[k];
    if (connections !== null) layers.connections = connections[k];
    if (hAtoms !== null) layers.hAtoms = hAtoms[k];
    if (charge !== null) layers.charge = charge[k];
    if (stereoDbond !== null) layers.stereoDbond = stereoDbond[k];
    if (stereoSp3 !== null) layers.stereoSp3 = stereoSp3[k];
    const flag = k < inverted.length ? inverted[k] : '.';
    if (flag !== '.') {
      layers.stereoSp3Inverted = flag;
      layers.stereoType = whole.stereoType;
    }
    if (isotopicAtoms !== null) layers.isotopicAtoms = isotopicAtoms[k];
    if (isotopicH !== null) layers.isotopicExchangeableH = isotopicH[k];
    if (isotopicStereoDbond !== null) layers.isotopicStereoDbond = isotopicStereoDbond[k];
    if (isotopicStereoSp3 !== null) layers.isotopicStereoSp3 = isotopicStereoSp3[k];
    const isotopicFlag = k < isotopicInverted.length ? isotopicInverted[k] : '.';
    if (isotopicFlag !== '.') {
      layers.isotopicStereoSp3Inverted = isotopicFlag;
      // The whole structure omits an isotopic /s equal to its /s; a component that has no
      // stereo type of its own outside the isotopic layer needs it back (ethanol-1-d).
      if (layers.stereoType === '') layers.isotopicStereoType = whole.isotopicStereoType || whole.stereoType;
    }
    const main = layers.formula + mainLayersTail(layers);
    components[k] = { inchi: inchiFromLayers(layers), layers, connectivityBlock: componentConnectivityBlock(main) };
  }
  return components;
}

function parse(inchi: string): ParsedInchi {
  checkPrefix(inchi);
  const { layers, componentFormulas } = readLayers(inchi);
  if (layers.formula === '') {
    // The bare proton: the reference library hashes 'p+1' as its main layer, and the proton
    // is its own single component.
    const block = connectivityBlockOfMainLayers('p' + layers.protons);
    return { inchi, layers, components: [{ inchi, layers, connectivityBlock: block }], connectivityBlock: block };
  }
  const connectivityBlock = connectivityBlockOfMainLayers(layers.formula + mainLayersTail(layers));
  let components: InchiComponent[];
  if (componentFormulas.length === 1) {
    // One component: its layers are the structure's own, without /p; no split, no second hash.
    for (const value of [
      layers.connections,
      layers.hAtoms,
      layers.charge,
      layers.stereoDbond,
      layers.stereoSp3,
      layers.isotopicAtoms,
      layers.isotopicExchangeableH,
      layers.isotopicStereoDbond,
      layers.isotopicStereoSp3,
    ]) {
      if (value.indexOf(';') >= 0 || value.indexOf('*') >= 0) {
        throw new InchiError(
          "not a valid InChI: a layer describes several components (';' or '*') but the formula has one",
        );
      }
    }
    components = [
      { inchi: inchiWithoutProtons(inchi, layers.protons), layers: withoutProtons(layers), connectivityBlock },
    ];
  } else {
    components = splitIntoComponents(layers, componentFormulas);
  }
  return { inchi, layers, components, connectivityBlock };
}

/**
 * Reads a Standard InChI into its layers and components, and computes the connectivity block
 * (first InChIKey block) of the whole structure and of each component.
 *
 * Accepts any string and throws only {@link InchiError}, whose message says why the string is
 * not a Standard InChI (non-standard `InChI=1/`, `/f` or `/r` layers, layers out of order,
 * truncated text, ...). Surrounding whitespace is ignored. Length limits are the caller's
 * (MAX_INCHI_LENGTH); the time taken is linear in the length.
 */
export function parseStandardInchi(inchi: string): ParsedInchi {
  if (typeof inchi !== 'string') throw new InchiError('an InChI must be given as text');
  const trimmed = inchi.trim();
  try {
    return parse(trimmed);
  } catch (error) {
    if (error instanceof InchiError) throw error;
    // Not expected to happen; it keeps the promise that nothing but an InchiError escapes.
    throw new InchiError('not a valid InChI: its layers cannot be read', { cause: error });
  }
}
