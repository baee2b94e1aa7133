/**
 * Token buckets, one per key (a public key or an IP), kept in this process's memory. Behind a load
 * balancer each process limits on its own, so the effective limit is per process; that bounds abuse
 * without a shared round trip on every request.
 */
import type { RateLimit } from './context.js';

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number,
    /** Past this many tracked keys, full buckets are dropped (they carry no state worth keeping). */
    private readonly maxKeys = 100_000,
  ) {}

  /** 0 when the request may proceed (a token is taken), else the seconds until one is available. */
  take(key: string): number {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.limit.burst, at: t };
    b.tokens = Math.min(this.limit.burst, b.tokens + ((t - b.at) / 1000) * this.limit.perSecond);
    b.at = t;
    this.buckets.set(key, b);
    if (this.buckets.size > this.maxKeys) this.sweep(t);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.limit.perSecond));
  }

  private sweep(t: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((t - b.at) / 1000) * this.limit.perSecond >= this.limit.burst) this.buckets.delete(k);
    }
  }
}
