/**
 * Token buckets, one per key (a public key or an address), kept in the database: every server process
 * on one PostgreSQL draws on the same bucket, so adding processes does not multiply anyone's allowance.
 *
 * A take is one statement: an upsert that refills the bucket for the time since its last take and takes
 * a token only if there is one (the row lock orders concurrent takes from any process), plus a read of
 * the level for Retry-After. The table is UNLOGGED: nothing in it is worth a WAL write, and after a crash
 * every bucket simply starts full.
 *
 * A refusal is remembered in this process until the bucket can hold a token again (other processes can
 * only take tokens, so it cannot refill sooner), so a flood from one key or address costs the database
 * one statement per refill interval, not one per request.
 */
import type { RateLimit } from './context.js';
import type { Db } from './db.js';

export const RATE_LIMIT_MIGRATION_SQL = `
CREATE UNLOGGED TABLE rate_buckets (
  bucket text PRIMARY KEY,
  tokens double precision NOT NULL,
  at bigint NOT NULL
);
`;

// $1 bucket, $2 burst, $3 tokens per second, $4 now (ms). The refilled level is written out twice
// because the WHERE of ON CONFLICT cannot name the SET's result.
const TAKE = `
WITH taken AS (
  INSERT INTO rate_buckets AS b (bucket, tokens, at) VALUES ($1, $2::float8 - 1, $4::bigint)
  ON CONFLICT (bucket) DO UPDATE
    SET tokens = LEAST($2::float8, b.tokens + GREATEST(0, $4::bigint - b.at) * $3::float8 / 1000) - 1, at = GREATEST(b.at, $4::bigint)
    WHERE LEAST($2::float8, b.tokens + GREATEST(0, $4::bigint - b.at) * $3::float8 / 1000) >= 1
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM taken) AS granted,
  (SELECT LEAST($2::float8, tokens + GREATEST(0, $4::bigint - at) * $3::float8 / 1000) FROM rate_buckets WHERE bucket = $1) AS level`;

/** Sweep buckets that have refilled completely (they hold nothing a missing row would not) every this many takes. */
const SWEEP_EVERY = 1000;
/** Longest key kept: an address comes from a header, which may be long. */
const MAX_KEY = 128;

export class RateLimiter {
  private readonly refusedUntil = new Map<string, number>();
  private takes = 0;

  /** `kind` keeps key and address buckets apart in the one table, e.g. 'key' or 'ip'. A burst is at least 1. */
  constructor(
    private readonly db: Db,
    private readonly limit: RateLimit,
    private readonly now: () => number,
    private readonly kind: string,
    /** Past this many remembered refusals, the expired ones are dropped. */
    private readonly maxRemembered = 10_000,
  ) {}

  /** 0 when the request may proceed (a token is taken), else the seconds until one is available. */
  async take(key: string): Promise<number> {
    const bucket = `${this.kind}:${key.slice(0, MAX_KEY)}`;
    const t = this.now();
    const until = this.refusedUntil.get(bucket);
    if (until !== undefined) {
      if (t < until) return Math.max(1, Math.ceil((until - t) / 1000));
      this.refusedUntil.delete(bucket);
    }
    const [row] = await this.db.query<{ granted: boolean; level: number | null }>(TAKE, [bucket, this.limit.burst, this.limit.perSecond, t]);
    if (++this.takes % SWEEP_EVERY === 0) await this.sweep(t);
    if (row?.granted === true) return 0;
    // The level read may be a moment old (another process took since): the wait is then too short, never too long.
    const waitMs = ((1 - Math.min(1, row?.level ?? 0)) / this.limit.perSecond) * 1000;
    this.remember(bucket, t + waitMs, t);
    return Math.max(1, Math.ceil(waitMs / 1000));
  }

  private remember(bucket: string, until: number, t: number): void {
    if (this.refusedUntil.size >= this.maxRemembered) {
      for (const [k, u] of this.refusedUntil) if (u <= t) this.refusedUntil.delete(k);
      if (this.refusedUntil.size >= this.maxRemembered) this.refusedUntil.clear();
    }
    this.refusedUntil.set(bucket, until);
  }

  private async sweep(t: number): Promise<void> {
    const fullAfterMs = (this.limit.burst / this.limit.perSecond) * 1000;
    await this.db.query('DELETE FROM rate_buckets WHERE starts_with(bucket, $1) AND at < $2', [`${this.kind}:`, Math.floor(t - fullAfterMs)]);
  }
}
