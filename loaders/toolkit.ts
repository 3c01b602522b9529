/**
 * Standard InChIs of the SMILES and molfiles of a source file, computed by the API's own RDKit worker
 * (src/toolkits/structures.ts), one structure at a time: a structure it cannot read, or has no
 * Standard InChI for, is rejected with the reason the API would give; a crash of the WASM module
 * replaces the worker and rejects only the structure that caused it.
 */
import { InvalidQuery, UnprocessableStructure } from '../src/domain/errors';
import type { StructureType } from '../src/domain/lookup';
import { StructureConverter } from '../src/toolkits/structures';

export interface DrawnStructure {
  type: StructureType;
  text: string;
}
export type ToolkitResult = { inchi: string } | { error: string };

/** A load gives a structure far longer than the API does (STRUCTURE_TIMEOUT_MS): loads are not interactive. */
const loadTimeoutMs = 120_000;

export class StructureToolkit {
  private readonly converter = new StructureConverter(loadTimeoutMs);

  /** Standard InChIs of `structures`, in order; a structure the toolkit cannot handle gets an error. */
  async inchis(structures: DrawnStructure[]): Promise<ToolkitResult[]> {
    const results: ToolkitResult[] = [];
    for (const { type, text } of structures) {
      try {
        results.push({ inchi: await this.converter.standardInchi(type, text) });
      } catch (error) {
        if (!(error instanceof InvalidQuery || error instanceof UnprocessableStructure)) throw error;
        results.push({ error: error.message });
      }
    }
    return results;
  }

  close(): Promise<void> {
    return this.converter.close();
  }
}
