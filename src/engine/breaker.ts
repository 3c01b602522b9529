/**
 * The API's circuit breaker in front of the engine. After `threshold` requests in a row fail to
 * reach it (connection refused or reset, or no answer within the deadline), requests fail at once
 * with EngineUnavailable instead of each waiting for its own failure, and a background probe asks
 * the engine every `probeEveryMs` until it answers; then requests go through again.
 */
import { EngineUnavailable } from './errors';

export class Breaker {
  private failures = 0;
  private probe?: NodeJS.Timeout;

  constructor(
    private readonly ping: () => Promise<unknown>,
    private readonly threshold = 3,
    private readonly probeEveryMs = 1_000,
  ) {}

  get open(): boolean {
    return this.probe !== undefined;
  }

  /** Throws EngineUnavailable while the breaker is open. */
  check(): void {
    if (this.open) {
      throw Object.assign(new EngineUnavailable('the search engine is unreachable; try again shortly'), {
        retryAfter: Math.ceil(this.probeEveryMs / 1000),
      });
    }
  }

  /** The engine answered (any HTTP status). */
  succeeded(): void {
    this.failures = 0;
  }

  /** A request could not reach the engine. */
  failed(): void {
    this.failures += 1;
    if (this.failures < this.threshold || this.open) return;
    let probing = false;
    this.probe = setInterval(() => {
      if (probing) return;
      probing = true;
      this.ping()
        .then(
          () => this.close(),
          () => undefined,
        )
        .finally(() => {
          probing = false;
        });
    }, this.probeEveryMs);
    this.probe.unref();
  }

  /** Lets requests through again. */
  close(): void {
    clearInterval(this.probe);
    this.probe = undefined;
    this.failures = 0;
  }
}
