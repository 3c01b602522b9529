/**
 * A WASM toolkit (RDKit, Indigo) in a worker thread of its own. The modules can abort or hang on
 * huge molecules; that kills or stalls only the worker, which is then replaced, so one bad
 * structure never takes the service or a load down.
 */
import { Worker } from 'node:worker_threads';

export class WorkerCrashed extends Error {}

/** The worker did not answer within its time and was replaced. */
export class WorkerTimedOut extends WorkerCrashed {}

export class IsolatedWorker<Request, Result> {
  private worker?: Worker;
  private ready: Promise<void> = Promise.resolve();
  private nextId = 0;
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * `script`: a plain .cjs worker answering `{id, request}` with `{id, result}`. With `startupMs`, the
   * worker says `{ready: true}` once its toolkit is loaded, within that time, and a request's
   * `timeoutMs` counts from then: loading the toolkit is not counted against a short timeout.
   */
  constructor(private readonly script: string, private readonly timeoutMs = 30_000, private readonly startupMs = 0) {}

  private start(): Worker {
    if (!this.worker) {
      const worker = new Worker(this.script, { resourceLimits: { maxOldGenerationSizeMb: 512 } });
      worker.unref();
      this.worker = worker;
      this.ready = this.startupMs > 0 ? this.readiness(worker) : Promise.resolve();
    }
    return this.worker;
  }

  /** Resolves when `worker` says it is ready; rejects, and drops it, when it dies first or takes longer than startupMs. */
  private readiness(worker: Worker): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { cleanup(); this.kill(worker); reject(new WorkerTimedOut(`the toolkit did not start within ${this.startupMs} ms`)); }, this.startupMs);
      const onMessage = (message: { ready?: boolean }): void => { if (message?.ready) { cleanup(); resolve(); } };
      const onExit = (code: number): void => { cleanup(); if (this.worker === worker) this.worker = undefined; reject(new WorkerCrashed(`the toolkit stopped while starting (exit ${code})`)); };
      const onError = (error: Error): void => { cleanup(); this.kill(worker); reject(new WorkerCrashed(`the toolkit crashed while starting: ${error.message}`)); };
      const cleanup = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        worker.off('error', onError);
      };
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      worker.on('error', onError);
    });
  }

  private kill(worker: Worker): void {
    if (this.worker === worker) this.worker = undefined;
    void worker.terminate();
  }

  private async once(request: Request): Promise<Result> {
    const worker = this.start();
    await this.ready;
    const id = (this.nextId += 1);
    return new Promise<Result>((resolve, reject) => {
      const timer = setTimeout(() => { cleanup(); this.kill(worker); reject(new WorkerTimedOut(`the toolkit took longer than ${this.timeoutMs} ms`)); }, this.timeoutMs);
      const onMessage = (message: { id: number; result: Result }): void => {
        if (message.id !== id) return;
        cleanup();
        resolve(message.result);
      };
      const onExit = (code: number): void => { cleanup(); if (this.worker === worker) this.worker = undefined; reject(new WorkerCrashed(`the toolkit stopped (exit ${code})`)); };
      const onError = (error: Error): void => { cleanup(); this.kill(worker); reject(new WorkerCrashed(`the toolkit crashed: ${error.message}`)); };
      const cleanup = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        worker.off('error', onError);
      };
      worker.on('message', onMessage);
      worker.on('exit', onExit);
      worker.on('error', onError);
      worker.postMessage({ id, request });
    });
  }

  /** Sends one request; requests run one at a time. Rejects with WorkerCrashed when the worker dies. */
  run(request: Request): Promise<Result> {
    const result = this.queue.then(() => this.once(request));
    this.queue = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
