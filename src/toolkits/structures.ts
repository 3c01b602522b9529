/** Standard InChIs of SMILES and molfiles for the API, computed by @rdkit/rdkit in an isolated worker. */
import { join } from 'node:path';
import { InvalidQuery, UnprocessableStructure } from '../domain/errors';
import type { StructureReader, StructureType } from '../domain/lookup';
import { structureNames } from '../domain/structures';
import { IsolatedWorker, WorkerCrashed, WorkerTimedOut } from './worker';

type Answer = { inchi: string } | { unreadable: string } | { noInchi: string };

/** The time a new worker gets to load RDKit's WASM module, which is not counted in a structure's time. */
const startupMs = 30_000;

export class StructureConverter implements StructureReader {
  private readonly worker: IsolatedWorker<{ type: StructureType; text: string }, Answer>;

  /** `timeoutMs`: STRUCTURE_TIMEOUT_MS; a structure slower than this has its worker replaced. */
  constructor(private readonly timeoutMs: number) {
    this.worker = new IsolatedWorker(join(__dirname, 'rdkit-worker.cjs'), timeoutMs, startupMs);
  }

  /**
   * The Standard InChI RDKit computes for a SMILES or molfile. InvalidQuery (400) with RDKit's reason
   * when it cannot read it; UnprocessableStructure (422) when it has none, or RDKit is too slow or
   * fails on it.
   */
  async standardInchi(type: StructureType, text: string): Promise<string> {
    const name = structureNames[type];
    let answer: Answer;
    try {
      answer = await this.worker.run({ type, text });
    } catch (error) {
      if (error instanceof WorkerTimedOut)
        throw new UnprocessableStructure(
          `the Standard InChI of this ${name} took longer than the ` +
            `${this.timeoutMs} ms this service gives a structure (STRUCTURE_TIMEOUT_MS)`,
        );
      if (error instanceof WorkerCrashed)
        throw new UnprocessableStructure(
          `the structure toolkit failed on this ${name} (${error.message}); very large structures can make it fail`,
        );
      throw error;
    }
    if ('unreadable' in answer) throw new InvalidQuery(`the ${name} could not be read: ${answer.unreadable}`);
    if ('noInchi' in answer)
      throw new UnprocessableStructure(`the ${name} was read, but it has no Standard InChI: ${answer.noInchi}`);
    return answer.inchi;
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
