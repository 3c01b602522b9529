import { FullInchiLayers } from './layers';

/**
 * Per-layer equality of a matched structure (or its matching component) with the query
 * (or its matching component): the `comparison` object of docs/api.md, with UniChem's names.
 */
export interface Comparison {
  formula: boolean;
  connectivity: boolean;
  HAtoms: boolean;
  charge: boolean;
  /** null for component relations: `/p` belongs to a whole structure, not to a component. */
  protonation: boolean | null;
  stereoDbond: boolean;
  stereoSp3: boolean;
  stereoSp3Inverted: boolean;
  stereoType: boolean;
  isotope: boolean;
  isotopicExchangeableH: boolean;
}

/**
 * Compares two structures, or two components, layer by layer. Stereo flags take the isotopic
 * stereo layers into account, so the two enantiomers of ethanol-1-d (chiral only through the
 * deuterium) differ in `stereoSp3Inverted`. `protonation` is null when `componentRelation`.
 */
export function compareLayers(query: FullInchiLayers, hit: FullInchiLayers, componentRelation: boolean): Comparison {
  return {
    formula: query.formula === hit.formula,
    connectivity: query.connections === hit.connections,
    HAtoms: query.hAtoms === hit.hAtoms,
    charge: query.charge === hit.charge,
    protonation: componentRelation ? null : query.protons === hit.protons,
    stereoDbond: query.stereoDbond === hit.stereoDbond && query.isotopicStereoDbond === hit.isotopicStereoDbond,
    stereoSp3: query.stereoSp3 === hit.stereoSp3 && query.isotopicStereoSp3 === hit.isotopicStereoSp3,
    stereoSp3Inverted:
      query.stereoSp3Inverted === hit.stereoSp3Inverted &&
      query.isotopicStereoSp3Inverted === hit.isotopicStereoSp3Inverted,
    stereoType: query.stereoType === hit.stereoType && query.isotopicStereoType === hit.isotopicStereoType,
    isotope: query.isotopicAtoms === hit.isotopicAtoms,
    isotopicExchangeableH: query.isotopicExchangeableH === hit.isotopicExchangeableH,
  };
}

/**
 * True when two structures (or components) share formula, `/c`, `/h` and `/q`, i.e. the
 * first InChIKey block: stereoisomers, isotopologues and protonation states of one skeleton.
 */
export function connectivityEqual(a: FullInchiLayers, b: FullInchiLayers): boolean {
  return a.formula === b.formula && a.connections === b.connections && a.hAtoms === b.hAtoms && a.charge === b.charge;
}

/** Number of layers that differ (`false`); a null `protonation` counts as equal (docs/api.md order). */
export function differenceCount(comparison: Comparison): number {
  let count = 0;
  for (const value of Object.values(comparison)) if (value === false) count++;
  return count;
}
