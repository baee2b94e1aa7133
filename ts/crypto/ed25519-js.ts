/**
 * Strict Ed25519 verification for the pure-JS twin, on @noble/curves' point arithmetic, with the same
 * per-key cache as the Rust core (crates/core/src/ed25519/cache.rs).
 *
 * noble's own `ed25519.verify(..., { zip215: false })` rejects non-canonical encodings, S >= L and
 * small-order A, but it uses the cofactored equation and lets small-order R through, so it accepts
 * speccheck cases 2, 4 and 5. `check` below applies the project's strict policy itself with noble's
 * point arithmetic: small-order R is refused and the equation is checked without the cofactor.
 *
 * The cache: a session verifies thousands of signatures under the same few peer keys. Every key seen
 * recently keeps its decoded point and whether it has small order ({@link CACHE_ENTRIES} of them,
 * first in first out); a key used {@link BUILD_AFTER_USES} times gets noble's window table
 * (`Point#precompute`, keyed by the point object, which is why the cache holds the decoded points),
 * for at most {@link CACHE_TABLES} keys, least recently used evicted. Keys used once never build a
 * table and never evict one. Variable time, which is sound only because verification handles public
 * data.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToNumberLE } from '@noble/curves/utils.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { concatBytes, toHex } from './encoding.js';
import { badLength, CryptoError } from './errors.js';

const Point = ed25519.Point;
type EdPoint = InstanceType<typeof Point>;
const L = Point.Fn.ORDER;

/** Keys remembered with their decoded point (a few hundred bytes each). */
export const CACHE_ENTRIES = 256;
/** Keys holding a window table, one per participant of the largest group a spec may declare. */
export const CACHE_TABLES = 32;
/** Uses of a key (counting the current one) at which its table is built, as in the Rust core. */
export const BUILD_AFTER_USES = 4;
/**
 * Window of noble's per-key table. Measured in one run (Node 20, CPU time): a repeated key verifies
 * about 2.2x faster than uncached with W = 4, 2.5x with W = 6, 2.9x with W = 8; building took 45, 45
 * and 120 ms. W = 6 holds about 300 KiB of V8 heap per key, so a full cache of
 * {@link CACHE_TABLES} keys is about 9.5 MiB.
 */
const TABLE_WINDOW = 6;

function len(what: string, bytes: Uint8Array, want: number): void {
  if (bytes.length !== want) throw badLength(what, want, bytes.length);
}

/** A canonical point encoding (zip215=false: y < p, and x = 0 with the sign bit set is refused). */
export function decode(bytes: Uint8Array): EdPoint | undefined {
  try {
    return Point.fromBytes(bytes, false);
  } catch {
    return undefined;
  }
}

interface Known {
  readonly A: EdPoint;
  readonly weak: boolean;
  uses: number;
}

/** Bounded per-key cache; the exported functions below use one process-wide instance. */
export class VerifyCache {
  private readonly ring = new Map<string, Known>();
  private readonly hot = new Map<string, Known>();
  constructor(
    readonly entries: number = CACHE_ENTRIES,
    readonly tables: number = CACHE_TABLES,
  ) {}

  /** The key's decoded point, or undefined for an encoding that is not a canonical point. */
  known(publicKey: Uint8Array): Known | undefined {
    const id = toHex(publicKey);
    const h = this.hot.get(id);
    if (h) {
      // Map order is the recency order: move to the end.
      this.hot.delete(id);
      this.hot.set(id, h);
      return h;
    }
    const r = this.ring.get(id);
    if (r) {
      r.uses++;
      if (!r.weak && this.tables > 0 && r.uses >= BUILD_AFTER_USES) {
        this.ring.delete(id);
        if (this.hot.size >= this.tables) {
          const lru = this.hot.keys().next().value;
          if (lru !== undefined) {
            // Drop the table with the entry: noble keeps tables in a WeakMap keyed by the point.
            this.hot.delete(lru);
          }
        }
        r.A.precompute(TABLE_WINDOW, false);
        this.hot.set(id, r);
      }
      return r;
    }
    const A = decode(publicKey);
    if (!A) return undefined;
    const k: Known = { A, weak: A.isSmallOrder(), uses: 1 };
    if (this.entries > 0) {
      if (this.ring.size >= this.entries) {
        const oldest = this.ring.keys().next().value;
        if (oldest !== undefined) this.ring.delete(oldest);
      }
      this.ring.set(id, k);
    }
    return k;
  }

  hasTable(publicKey: Uint8Array): boolean {
    return this.hot.has(toHex(publicKey));
  }

  get size(): { entries: number; tables: number } {
    return { entries: this.ring.size, tables: this.hot.size };
  }

  clear(): void {
    this.ring.clear();
    this.hot.clear();
  }

  check(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void {
    len('Ed25519 public key', publicKey, 32);
    len('Ed25519 signature', signature, 64);
    const known = this.known(publicKey);
    if (!known) throw new CryptoError('PUBLIC_KEY_INVALID', 'public key is not a canonical Ed25519 point encoding');
    checkWith(known, publicKey, message, signature);
  }

  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    try {
      this.check(publicKey, message, signature);
      return true;
    } catch {
      return false;
    }
  }
}

function checkWith(known: Known, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void {
  const invalid = () => new CryptoError('SIGNATURE_INVALID', 'signature does not verify (strict Ed25519)');
  const rBytes = signature.subarray(0, 32);
  const R = decode(rBytes);
  const s = bytesToNumberLE(signature.subarray(32));
  if (!R || s >= L || known.weak || R.isSmallOrder()) throw invalid();
  const k = Point.Fn.create(bytesToNumberLE(sha512(concatBytes(rBytes, publicKey, message))));
  // Cofactorless: [S]B == R + [k]A exactly, not after multiplying both sides by 8.
  const SB = s === 0n ? Point.ZERO : Point.BASE.multiplyUnsafe(s);
  if (!SB.equals(R.add(known.A.multiplyUnsafe(k)))) throw invalid();
}

/** The process-wide cache behind {@link check} and {@link verify}. */
export const verifyCache = new VerifyCache();

/** Strict verification; throws SIGNATURE_INVALID, PUBLIC_KEY_INVALID or BAD_LENGTH. */
export function check(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void {
  verifyCache.check(publicKey, message, signature);
}

export function verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return verifyCache.verify(publicKey, message, signature);
}

/** {@link check} without the cache: the reference the cached path is tested against. */
export function checkUncached(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void {
  len('Ed25519 public key', publicKey, 32);
  len('Ed25519 signature', signature, 64);
  const A = decode(publicKey);
  if (!A) throw new CryptoError('PUBLIC_KEY_INVALID', 'public key is not a canonical Ed25519 point encoding');
  checkWith({ A, weak: A.isSmallOrder(), uses: 0 }, publicKey, message, signature);
}
