/** Building the compound document of a structure from its parsed Standard InChI. */
import type { ParsedInchi } from '../chemistry';
import type { CompoundDocument } from '../engine/documents';

/** The compounds-index document of one structure; components are kept only when there are several. */
export function compoundDocument(
  uci: number,
  standardInchiKey: string,
  parsed: ParsedInchi,
  loadId?: string,
): CompoundDocument {
  const document: CompoundDocument = {
    uci,
    standardInchiKey,
    connectivityBlock: standardInchiKey.slice(0, 14),
    standardInchi: parsed.inchi,
    layers: parsed.layers,
    componentCount: parsed.components.length,
  };
  if (parsed.components.length > 1) {
    document.components = parsed.components.map((component) => ({
      connectivityBlock: component.connectivityBlock,
      standardInchi: component.inchi,
      formula: component.layers.formula,
    }));
  }
  if (loadId) document.loadId = loadId;
  return document;
}
