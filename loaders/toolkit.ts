/**
 * Standard InChIs from SMILES and molfiles, computed by @rdkit/rdkit in an isolated worker. A crash
 * of the WASM module (it can abort on huge molecules) kills only the worker: the batch is retried
 * one structure at a time, and the structure that crashes it is reported, not the load.
 */
import { join } from 'node:path';
import { IsolatedWorker } from '../src/isolated/worker';

export type ToolkitResult = { inchi: string } | { error: string };

export class StructureToolkit {
  private readonly worker = new IsolatedWorker<string[], ToolkitResult[]>(join(__dirname, 'rdkit-worker.cjs'), 120_000);

  /** Standard InChIs for SMILES or molfiles, in order; a structure the toolkit cannot handle gets an error. */
  async inchis(structures: string[]): Promise<ToolkitResult[]> {
    try {
      return await this.worker.run(structures);
    } catch {
      const results: ToolkitResult[] = [];
      for (const structure of structures) {
        try {
          results.push(...(await this.worker.run([structure])));
        } catch (error) {
          results.push({ error: `the structure toolkit crashed on this structure (${(error as Error).message})` });
        }
      }
      return results;
    }
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
