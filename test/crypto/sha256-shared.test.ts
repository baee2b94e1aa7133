// sha256Shared on both backends against node:crypto's SHA-256 of each whole text: prefixes and rests
// around SHA-256's 64-byte block (the copied state carries a partial block), empty ones, many rests;
// lengths that do not add up to the rests are BAD_LENGTH with the same message, and the instance
// still answers after one.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CryptoError, getCrypto } from '../../ts/crypto/index.js';

const sha = (b: Uint8Array) => new Uint8Array(createHash('sha256').update(b).digest());
const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) & 0xff);
const join = (parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

describe.each(['wasm', 'js'] as const)('sha256Shared on the %s backend', (name) => {
  const c = getCrypto(name);

  it('is the SHA-256 of prefix ‖ rest for each rest, whatever the lengths', () => {
    for (const p of [0, 1, 55, 63, 64, 65, 119, 128, 1000]) {
      const prefix = bytes(p, p);
      const rests = [0, 1, 8, 56, 63, 64, 65, 200].map((n, i) => bytes(n, i + p));
      const got = c.sha256Shared(prefix, join(rests), Uint32Array.from(rests.map((r) => r.length)));
      expect(got.length).toBe(32 * rests.length);
      rests.forEach((r, i) => expect(got.subarray(32 * i, 32 * i + 32), `prefix ${p}, rest ${r.length}`).toEqual(sha(join([prefix, r]))));
    }
    expect(c.sha256Shared(bytes(10, 1), new Uint8Array(0), new Uint32Array(0))).toEqual(new Uint8Array(0));
  });

  it('refuses lengths that do not add up to the rests, the same way on both backends', () => {
    const rests = bytes(10, 3);
    const codes = [
      [3, 4],
      [3, 4, 5],
      [10, 0, 1],
    ].map((l) => {
      try {
        c.sha256Shared(bytes(5, 1), rests, Uint32Array.from(l));
        return 'accepted';
      } catch (e) {
        expect(e).toBeInstanceOf(CryptoError);
        return (e as CryptoError).message;
      }
    });
    expect(codes).toEqual([
      'BAD_LENGTH: the rests must be 10 bytes, got 7',
      'BAD_LENGTH: the rests must be 10 bytes, got 12',
      'BAD_LENGTH: the rests must be 10 bytes, got 11',
    ]);
    expect(c.sha256Shared(new Uint8Array(0), rests, Uint32Array.of(10))).toEqual(sha(rests));
  });
});
