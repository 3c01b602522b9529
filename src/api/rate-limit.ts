/**
 * The optional per-client rate limit (RATE_LIMIT): each client (IP address; an IPv6 client by its
 * /64, which one host can hold whole) has a bucket of RATE_LIMIT cost units that refills evenly over
 * a minute. A request takes its operation's cost (`x-rate-cost` in the OpenAPI document: a lookup 1,
 * a connectivity search 5); an empty bucket answers 429 with Retry-After. Every counted answer says
 * where the client stands (RateLimit-* headers of the IETF draft, as the widely deployed
 * `RateLimit-Limit`, `-Remaining`, `-Reset` trio plus `RateLimit-Policy`).
 *
 * Written here rather than taken from a library: the common ones count requests, not costs, or keep
 * fixed windows that let a client spend twice its limit across a window's edge.
 */
import type { Request, RequestHandler } from 'express';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { HttpError } from './errors';

/** Where a client stands after asking to spend `cost`. */
export interface RateDecision {
  allowed: boolean;
  /** Units a minute. */
  limit: number;
  /** Whole units left. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until this request's cost is available (0 when allowed). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets of `perMinute` units, one per client. */
export class CostLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly sweeper: NodeJS.Timeout;

  /**
   * `maxClients`: past this many tracked clients the longest known are forgotten (they start again with a full bucket).
   */
  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly maxClients = 100_000,
  ) {
    this.perMs = perMinute / 60_000;
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** Spends `cost` units of `client`'s bucket if it holds them. A cost above the limit needs a full bucket. */
  take(client: string, cost: number): RateDecision {
    const now = this.now();
    let bucket = this.buckets.get(client);
    if (!bucket) {
      if (this.buckets.size >= this.maxClients) this.forgetOldest();
      bucket = { tokens: this.perMinute, at: now };
      this.buckets.set(client, bucket);
    }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    const price = Math.min(cost, this.perMinute);
    const allowed = bucket.tokens >= price;
    if (allowed) bucket.tokens -= price;
    return {
      allowed,
      limit: this.perMinute,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((this.perMinute - bucket.tokens) / this.perMs / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((price - bucket.tokens) / this.perMs / 1000)),
    };
  }

  /** Forgets the clients whose bucket has filled up again: a new bucket is the same. */
  sweep(): void {
    const now = this.now();
    for (const [client, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.perMinute) this.buckets.delete(client);
    }
  }

  private forgetOldest(): void {
    this.sweep();
    // Still full of busy clients: drop the tenth seen longest ago (a Map iterates in insertion order).
    if (this.buckets.size < this.maxClients) return;
    let drop = Math.ceil(this.maxClients / 10);
    for (const client of this.buckets.keys()) {
      if (drop-- <= 0) break;
      this.buckets.delete(client);
    }
  }

  get clients(): number {
    return this.buckets.size;
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/** The bucket a client address spends from: an IPv4 address, or the /64 of an IPv6 one. */
export function clientKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const address = ip.replace(/%.*$/, '');
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const [head, tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group || '0', 16).toString(16))
    .join(':')}::/64`;
}

/** The cost of each operation of the document (`x-rate-cost`, 1 when absent), by operationId. */
export function operationCosts(document: OpenAPIV3.DocumentV3): Map<string, number> {
  const costs = new Map<string, number>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      const { operationId, 'x-rate-cost': cost } = (operation ?? {}) as {
        operationId?: string;
        'x-rate-cost'?: unknown;
      };
      if (operationId) costs.set(operationId, typeof cost === 'number' && cost > 0 ? cost : 1);
    }
  }
  return costs;
}

/**
 * The middleware charging each request `cost(req)` units of its client's bucket: a fixed cost for
 * today's operations; an operation whose cost depends on the request (a batch endpoint: so much per
 * compound) passes a function of its body. Sets the RateLimit headers; throws a 429 when the
 * bucket does not hold the cost.
 */
export function rateLimit(limiter: CostLimiter, cost: (req: Request) => number): RequestHandler {
  const policy = `${limiter.perMinute};w=60`;
  return (req, res, next) => {
    const price = cost(req);
    const decision = limiter.take(clientKey(req.ip), price);
    res.set({
      'RateLimit-Policy': policy,
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetSeconds),
    });
    if (decision.allowed) {
      next();
      return;
    }
    next(
      new HttpError(
        429,
        `too many requests: this client may spend ${decision.limit} cost units ` +
          `a minute (RATE_LIMIT); this request costs ${price}, ` +
          `${decision.remaining} are left; try again in ${decision.retryAfterSeconds} s`,
        [],
        decision.retryAfterSeconds,
      ),
    );
  };
}
