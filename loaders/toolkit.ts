/**
 * Standard InChIs from SMILES and molfiles, computed by @rdkit/rdkit in a worker thread. A crash of
 * the WASM module (it can abort on huge molecules) kills only the worker: it is restarted, the batch
 * is retried one structure at a time, and the structure that crashes it is reported, not the load.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

export type ToolkitResult = { inchi: string } | { error: string };

export class StructureToolkit {
  private worker?: Worker;
  private nextId = 0;

  private start(): Worker {
    if (!this.worker) {
      this.worker = new Worker(join(__dirname, 'rdkit-worker.cjs'), { resourceLimits: { maxOldGenerationSizeMb: 512 } });
      this.worker.unref();
    }
    return this.worker;
  }

  private send(structures: string[]): Promise<ToolkitResult[]> {
    const worker = this.start();
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      const onMessage = (message: { id: number; results: ToolkitResult[] }): void => {
        if (message.id !== id) return;
        cleanup();
        resolve(message.results);
      };
      const onExit = (code: number): void => { cleanup(); this.worker = undefined; reject(new Error(`the structure toolkit stopped (exit ${code})`)); };
      const onError = (error: Error): void => { cleanup(); void worker.terminate(); this.worker = undefined; reject(error); };
      const cleanup = (): void => {
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        worker.off('error', onError);
      };
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      worker.on('error', onError);
      worker.postMessage({ id, structures });
    });
  }

  /** Standard InChIs for SMILES or molfiles, in order; a structure the toolkit cannot handle gets an error. */
  async inchis(structures: string[]): Promise<ToolkitResult[]> {
    try {
      return await this.send(structures);
    } catch {
      // Find the structure that brought the module down: one at a time, each on a fresh worker if needed.
      const results: ToolkitResult[] = [];
      for (const structure of structures) {
        try {
          results.push(...(await this.send([structure])));
        } catch (error) {
          results.push({ error: `the structure toolkit crashed on this structure (${(error as Error).message})` });
        }
      }
      return results;
    }
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
