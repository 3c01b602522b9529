/**
 * Structures as input (docs/api.md): a SMILES or a molfile stands for the structure of its Standard
 * InChI, computed by the structure toolkit; the lookup then runs as for that InChI, and the answer
 * says what was computed.
 */
import { inchiKeyOf, type ParsedInchi } from '../chemistry';
import { InvalidQuery, UnprocessableStructure } from './errors';
import {
  parseQueryInchi,
  structureTypes,
  type CompoundQuery,
  type IdentifierQuery,
  type LookupContext,
  type StructureType,
} from './lookup';

/** What the service computed from a SMILES or molfile, added to the answer as `computed`. */
export interface Computed {
  standardInchi: string;
  standardInchiKey: string;
}

/** A structure type as a chemist names it, for messages. */
export const structureNames: Record<StructureType, string> = { smiles: 'SMILES', molfile: 'molfile' };

export function isStructureType(type: string): type is StructureType {
  return (structureTypes as readonly string[]).includes(type);
}

/**
 * A structure's text as it is read: a SMILES trimmed, a molfile only at its end (its first lines
 * are its header, and the first of them may be empty).
 */
export function structureText(type: StructureType, text: string): string {
  return type === 'molfile' ? text.trimEnd() : text.trim();
}

/**
 * The Standard InChI and InChIKey of a SMILES or molfile. InvalidQuery (400) when it is blank, longer
 * than MAX_STRUCTURE_LENGTH or cannot be read; UnprocessableStructure (422) when it has no Standard
 * InChI the service can search, or the toolkit is too slow or fails on it.
 */
export async function computeStandardInchi(
  context: LookupContext,
  type: StructureType,
  sent: string,
): Promise<Computed & { parsed: ParsedInchi }> {
  const text = structureText(type, sent);
  const name = structureNames[type];
  if (text.trim() === '') throw new InvalidQuery('the compound is empty or only whitespace');
  const most = context.config.MAX_STRUCTURE_LENGTH;
  if (text.length > most)
    throw new InvalidQuery(
      `the ${name} has ${text.length} characters, more than the ${most} this service accepts (MAX_STRUCTURE_LENGTH)`,
    );
  if (!context.structures) throw new Error('this lookup context has no structure toolkit');
  const standardInchi = await context.structures.standardInchi(type, text);
  let parsed: ParsedInchi;
  try {
    parsed = parseQueryInchi(standardInchi, context.config.MAX_INCHI_LENGTH);
  } catch (error) {
    if (error instanceof InvalidQuery)
      throw new UnprocessableStructure(
        `the Standard InChI computed from the ${name} cannot be searched: ${error.message}`,
      );
    throw error;
  }
  return { standardInchi, standardInchiKey: inchiKeyOf(parsed), parsed };
}

/**
 * The identifier query a query stands for: itself, or for a SMILES or molfile an `inchi` query of
 * its computed Standard InChI, with what was computed. Every endpoint that answers a CompoundQuery
 * goes through here, so each accepts structures alike.
 */
export async function asIdentifierQuery<Q extends CompoundQuery>(
  context: LookupContext,
  query: Q,
): Promise<{ query: Q & IdentifierQuery; computed?: Computed }> {
  if (!isStructureType(query.type)) return { query: query as Q & IdentifierQuery };
  const { standardInchi, standardInchiKey } = await computeStandardInchi(context, query.type, query.compound);
  return { query: { ...query, type: 'inchi', compound: standardInchi }, computed: { standardInchi, standardInchiKey } };
}
