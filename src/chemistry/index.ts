// The chemistry core: Standard InChI layers, components, InChIKeys and layer comparison.
// Pure domain code: no I/O, no Express, no Elasticsearch.
export { InchiError } from './inchi-error';
export type { FullInchiLayers, InchiComponent, InchiLayers, ParsedInchi } from './layers';
export { RESPONSE_LAYER_NAMES, inchiFromLayers, responseLayers } from './layers';
export { MAX_COMPONENTS, emptyLayers, parseStandardInchi } from './parse';
export { connectivityBlockOf, inchiKeyOf, isStandardInchiKey } from './inchikey';
export type { Comparison } from './compare';
export { compareLayers, connectivityEqual, differenceCount } from './compare';
