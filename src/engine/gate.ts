/**
 * At most `limit` tasks at once; the others wait their turn, first come first served. When
 * `maxWaiting` already wait, a task is refused at once with EngineUnavailable (a 503 with Retry-After).
 */
import { EngineUnavailable } from './errors';

export class Gate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly what: string,
    private readonly limit: number,
    private readonly maxWaiting = 1_024,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.limit) this.running += 1;
    else if (this.waiting.length >= this.maxWaiting) {
      throw Object.assign(
        new EngineUnavailable(
          `too many ${this.what} at once (${this.limit} running, ${this.waiting.length} waiting); try again shortly`,
        ),
        { retryAfter: 1 },
      );
    } else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot goes to the next in line, or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
