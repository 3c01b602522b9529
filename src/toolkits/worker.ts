/**
 * A WASM toolkit (RDKit, Indigo) in a worker thread of its own. The modules can abort or hang on
 * huge molecules; that kills or stalls only the worker, which is then replaced, so one bad
 * structure never takes the service or a load down.
 */
import { Worker } from 'node:worker_threads';

export class WorkerCrashed extends Error {}

/** The worker did not answer within its time and was replaced. */
export class WorkerTimedOut extends WorkerCrashed {}

/** The toolkit did not load: no structure can be the cause. */
export class WorkerDidNotStart extends WorkerCrashed {}

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
  constructor(
    private readonly script: string,
    private readonly timeoutMs = 30_000,
    private readonly startupMs = 0,
    private readonly workerData?: () => unknown,
  ) {}

  private start(): Worker {
    if (!this.worker) {
      const worker = new Worker(this.script, {
        resourceLimits: { maxOldGenerationSizeMb: 512 },
        workerData: this.workerData?.(),
      });
      worker.unref();
      this.worker = worker;
      this.ready = this.startupMs > 0 ? this.readiness(worker) : Promise.resolve();
    }
    return this.worker;
  }

  /**
   * Resolves when `worker` says it is ready; rejects, and drops it, when it dies first or takes longer than startupMs.
   */
  private async readiness(worker: Worker): Promise<void> {
    await this.answer(
      worker,
      (message) => ((message as { ready?: boolean } | null)?.ready ? true : undefined),
      this.startupMs,
      `the toolkit did not start within ${this.startupMs} ms`,
      ' while starting',
    ).catch((error: Error) => {
      throw new WorkerDidNotStart(error.message);
    });
  }

  /**
   * The first message of `worker` that `pick` takes (anything but undefined), within `ms`; rejects,
   * and drops the worker, when it dies first (WorkerCrashed) or takes longer (WorkerTimedOut).
   * `during` says, in the errors, what the worker was doing.
   */
  private answer<T>(
    worker: Worker,
    pick: (message: unknown) => T | undefined,
    ms: number,
    tooSlow: string,
    during = '',
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        this.kill(worker);
        reject(new WorkerTimedOut(tooSlow));
      }, ms);
      const onMessage = (message: unknown): void => {
        const picked = pick(message);
        if (picked === undefined) return;
        cleanup();
        resolve(picked);
      };
      const onExit = (code: number): void => {
        cleanup();
        if (this.worker === worker) this.worker = undefined;
        reject(new WorkerCrashed(`the toolkit stopped${during} (exit ${code})`));
      };
      const onError = (error: Error): void => {
        cleanup();
        this.kill(worker);
        reject(new WorkerCrashed(`the toolkit crashed${during}: ${error.message}`));
      };
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
    const answered = this.answer(
      worker,
      (message) => {
        const reply = message as { id?: number; result: Result } | null;
        return reply?.id === id ? { result: reply.result } : undefined;
      },
      this.timeoutMs,
      `the toolkit took longer than ${this.timeoutMs} ms`,
    );
    worker.postMessage({ id, request });
    return (await answered).result;
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
