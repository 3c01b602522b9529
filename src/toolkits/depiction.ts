/** SVG depictions of structures, drawn by indigo-ketcher in an isolated worker. */
import { join } from 'node:path';
import { IsolatedWorker } from './worker';

export class DepictionFailed extends Error {}

export class Depictor {
  private readonly worker = new IsolatedWorker<{ inchi: string }, { svg: string } | { error: string }>(
    join(__dirname, 'depict-worker.cjs'),
    20_000,
  );

  /** The SVG of a Standard InChI; DepictionFailed when the toolkit cannot draw it (or crashes on it). */
  async svg(inchi: string): Promise<string> {
    let result: { svg: string } | { error: string };
    try {
      result = await this.worker.run({ inchi });
    } catch (error) {
      throw new DepictionFailed(`the structure could not be drawn: ${(error as Error).message}`);
    }
    if ('error' in result) throw new DepictionFailed(`the structure could not be drawn: ${result.error}`);
    return result.svg;
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}
