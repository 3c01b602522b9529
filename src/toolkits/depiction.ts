/**
 * SVG depictions of structures, drawn by indigo-ketcher in an isolated worker, as the tautomer
 * chemists draw (amides, lactams, pyridones, aminoazines: depict-worker.cjs, tautomer.cjs).
 */
import { join } from 'node:path';
import { IsolatedWorker } from './worker';

export class DepictionFailed extends Error {}

export class Depictor {
  private readonly worker = new IsolatedWorker<
    { inchi: string; molfile?: boolean },
    { svg: string } | { molfile: string } | { error: string }
  >(join(__dirname, 'depict-worker.cjs'), 20_000);

  /** The SVG of a Standard InChI; DepictionFailed when the toolkit cannot draw it (or crashes on it). */
  async svg(inchi: string): Promise<string> {
    return ((await this.run({ inchi })) as { svg: string }).svg;
  }

  /** The molecule a depiction of a Standard InChI draws, as a V2000 molfile laid out in 2D. */
  async molfile(inchi: string): Promise<string> {
    return ((await this.run({ inchi, molfile: true })) as { molfile: string }).molfile;
  }

  private async run(request: { inchi: string; molfile?: boolean }): Promise<object> {
    let result: { svg: string } | { molfile: string } | { error: string };
    try {
      result = await this.worker.run(request);
    } catch (error) {
      throw new DepictionFailed(`the structure could not be drawn: ${(error as Error).message}`);
    }
    if ('error' in result) throw new DepictionFailed(`the structure could not be drawn: ${result.error}`);
    return result;
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
