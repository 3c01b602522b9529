/**
 * The layers of a Standard InChI, named as chemxref's API names them (docs/data-model.md).
 * Each value is the layer text without its `/x` prefix, '' when the layer is absent.
 */
export interface InchiLayers {
  /** Molecular formula, `.`-separated per component, with count prefixes (`2ClH`). */
  formula: string;
  /** `/c` connection table. */
  connections: string;
  /** `/h` hydrogen atoms, mobile-H groups included (`(H,11,12)`). */
  hAtoms: string;
  /** `/q` charge. */
  charge: string;
  /** `/p` protons added or removed (whole structure only). */
  protons: string;
  /** `/b` double-bond stereo. */
  stereoDbond: string;
  /** `/t` sp3 stereo. */
  stereoSp3: string;
  /** `/m` sp3 inverted flag, one character per component (`0`, `1` or `.`). */
  stereoSp3Inverted: string;
  /** `/s` stereo type (`1`, absolute, is the only value a Standard InChI may hold). */
  stereoType: string;
  /** `/i` isotopic atoms. */
  isotopicAtoms: string;
  /** The `/h` that follows `/i`: exchangeable isotopic hydrogen (`D2`). */
  isotopicExchangeableH: string;
}

/**
 * All layers, including the isotopic stereo layers that may follow `/i`
 * (ethanol-1-d is chiral only through its deuterium: `/i2D/t2-/m0/s1`).
 * API responses use only the 11 fields of {@link InchiLayers}.
 */
export interface FullInchiLayers extends InchiLayers {
  /** `/b` after `/i`. */
  isotopicStereoDbond: string;
  /** `/t` after `/i`. */
  isotopicStereoSp3: string;
  /** `/m` after `/i`. */
  isotopicStereoSp3Inverted: string;
  /** `/s` after `/i`. */
  isotopicStereoType: string;
}

/** One component of a (possibly multi-component) structure. */
export interface InchiComponent {
  /** The Standard InChI this component would have on its own (without the whole structure's `/p`). */
  inchi: string;
  /** Its layers; `protons` is always '' because `/p` belongs to the whole structure. */
  layers: FullInchiLayers;
  /** First block (14 letters) of the component's InChIKey: its connectivity key. */
  connectivityBlock: string;
}

/** A Standard InChI read into layers and components. */
export interface ParsedInchi {
  /** The input, trimmed. */
  inchi: string;
  /** Layers of the whole structure. */
  layers: FullInchiLayers;
  /** Components in InChI order, count prefixes expanded; always at least one. */
  components: InchiComponent[];
  /** First block of the whole structure's InChIKey. */
  connectivityBlock: string;
}

/** The 11 layer names of API responses, in InChI order. */
export const RESPONSE_LAYER_NAMES: readonly (keyof InchiLayers)[] = [
  'formula',
  'connections',
  'hAtoms',
  'charge',
  'protons',
  'stereoDbond',
  'stereoSp3',
  'stereoSp3Inverted',
  'stereoType',
  'isotopicAtoms',
  'isotopicExchangeableH',
];

/**
 * The 11 response layers of a structure or component (docs/api.md `inchi` object without `inchi`),
 * dropping the isotopic stereo layers the API does not show.
 */
export function responseLayers(layers: FullInchiLayers): InchiLayers {
  return {
    formula: layers.formula,
    connections: layers.connections,
    hAtoms: layers.hAtoms,
    charge: layers.charge,
    protons: layers.protons,
    stereoDbond: layers.stereoDbond,
    stereoSp3: layers.stereoSp3,
    stereoSp3Inverted: layers.stereoSp3Inverted,
    stereoType: layers.stereoType,
    isotopicAtoms: layers.isotopicAtoms,
    isotopicExchangeableH: layers.isotopicExchangeableH,
  };
}

/**
 * Writes layers back as a Standard InChI string, in the published layer order.
 * `inchiFromLayers(parseStandardInchi(x).layers) === x` for every Standard InChI x.
 */
export function inchiFromLayers(layers: FullInchiLayers): string {
  // A bare proton (`InChI=1S/p+1`) has no formula, and then no slash before its first layer.
  let text = 'InChI=1S/' + layers.formula + mainLayersTail(layers);
  if (layers.protons !== '') text += (layers.formula === '' ? 'p' : '/p') + layers.protons;
  return text + minorLayersText(layers);
}

/** `/c`, `/h` and `/q` as written after the formula. */
export function mainLayersTail(layers: InchiLayers): string {
  let text = '';
  if (layers.connections !== '') text += '/c' + layers.connections;
  if (layers.hAtoms !== '') text += '/h' + layers.hAtoms;
  if (layers.charge !== '') text += '/q' + layers.charge;
  return text;
}

/**
 * The stereo and isotopic layers as written after `/p`: exactly the text that the second block
 * of the InChIKey hashes ('' when there is none).
 */
export function minorLayersText(layers: FullInchiLayers): string {
  let text = '';
  if (layers.stereoDbond !== '') text += '/b' + layers.stereoDbond;
  if (layers.stereoSp3 !== '') text += '/t' + layers.stereoSp3;
  if (layers.stereoSp3Inverted !== '') text += '/m' + layers.stereoSp3Inverted;
  if (layers.stereoType !== '') text += '/s' + layers.stereoType;
  if (
    layers.isotopicAtoms !== '' ||
    layers.isotopicExchangeableH !== '' ||
    layers.isotopicStereoDbond !== '' ||
    layers.isotopicStereoSp3 !== '' ||
    layers.isotopicStereoSp3Inverted !== '' ||
    layers.isotopicStereoType !== ''
  ) {
    // `/i` is written even when empty if an isotopic sublayer follows it (heavy water: `/i/hD2`).
    text += '/i' + layers.isotopicAtoms;
    if (layers.isotopicExchangeableH !== '') text += '/h' + layers.isotopicExchangeableH;
    if (layers.isotopicStereoDbond !== '') text += '/b' + layers.isotopicStereoDbond;
    if (layers.isotopicStereoSp3 !== '') text += '/t' + layers.isotopicStereoSp3;
    if (layers.isotopicStereoSp3Inverted !== '') text += '/m' + layers.isotopicStereoSp3Inverted;
    if (layers.isotopicStereoType !== '') text += '/s' + layers.isotopicStereoType;
  }
  return text;
}
