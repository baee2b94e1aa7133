/**
 * Where a mental-poker side's secret material comes from. The engine mode draws nothing itself: the
 * live driver backs this with the platform's CSPRNG (`randomSecrets`), tests back it with the values of
 * a recorded game so that a replay reproduces the recorded messages byte for byte. Everything handed
 * out here lives in memory only and is disclosed by the game itself (openings, witnesses) at its end.
 */
import type { Ot, RsaKey } from '../crypto/ot.js';
import { OT_NONCE_LEN } from '../crypto/ot.js';
import { PAD_LEN } from '../crypto/deck.js';

export interface MpSecrets {
  /** This side's RSA-2048 key for its OT table, fresh per game. */
  rsaKey(): Promise<RsaKey>;
  /**
   * The 32-byte key of one card of this side's layer: the Host's k_inner of id-A `index`, the Guest's
   * k_outer of the card it puts at id-B `index`.
   */
  cardKey(index: number): Uint8Array;
  /** The 12-byte nonce of this side's blob at `index` (blob_A of id-A, blob_B of id-B). */
  blobNonce(index: number): Uint8Array;
  /** The Host's 14 pad bytes after card `index` in its inner plaintext. */
  pad(index: number): Uint8Array;
  /** The 12-byte nonce of this side's sealed-table entry for `label`. */
  sealNonce(label: string): Uint8Array;
  /** The Guest's shuffle: entry j is the id-A index of the card placed at id-B j (a permutation of 0..n-1). */
  shuffle(n: number): number[];
  /** The Receiver's blinding value r for OT `otId` against modulus n: 256 bytes, a unit below n. */
  blinding(otId: string, n: Uint8Array): Uint8Array;
}

/** Uniform bytes from the platform (Node 20 and browsers both have Web Crypto). */
function osRandomBytes(n: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

/** A uniform integer in [0, bound) by rejection sampling over 32-bit draws. */
function uniform(randomBytes: (n: number) => Uint8Array, bound: number): number {
  const limit = Math.floor(0x1_0000_0000 / bound) * bound;
  for (;;) {
    // The source may hand out views of a larger buffer (a pool, a stream): read the view, not its buffer.
    const b = randomBytes(4);
    const x = new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(0);
    if (x < limit) return x % bound;
  }
}

/**
 * The live source: a fresh key from the backend, every other value from `randomBytes` (the session's
 * randomness; the platform CSPRNG by default), the shuffle a uniform Fisher–Yates.
 */
export function randomSecrets(ot: Pick<Ot, 'generateKey' | 'randomUnit'>, randomBytes: (n: number) => Uint8Array = osRandomBytes): MpSecrets {
  return {
    rsaKey: () => ot.generateKey(),
    cardKey: () => randomBytes(32),
    blobNonce: () => randomBytes(OT_NONCE_LEN),
    pad: () => randomBytes(PAD_LEN),
    sealNonce: () => randomBytes(OT_NONCE_LEN),
    shuffle(n) {
      const p = Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = uniform(randomBytes, i + 1);
        [p[i], p[j]] = [p[j]!, p[i]!];
      }
      return p;
    },
    blinding: (_otId, n) => ot.randomUnit(n),
  };
}
