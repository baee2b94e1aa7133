// Differential check of the two backends on pseudo-random inputs the fixed vectors do not cover:
// they must produce the same bytes and the same verdicts.
import { describe, expect, it } from 'vitest';
import { getCrypto, toHex } from '../../ts/crypto/index.js';

const wasm = getCrypto('wasm');
const js = getCrypto('js');

// A small deterministic generator, so that a failure reproduces.
function rng(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0), s);
  return {
    bytes: (n: number) => Uint8Array.from({ length: n }, () => next() & 0xff),
    int: (n: number) => next() % n,
  };
}

function randomValue(r: ReturnType<typeof rng>, depth: number): unknown {
  const pick = r.int(depth > 3 ? 4 : 6);
  if (pick === 0) return r.int(2) === 0;
  if (pick === 1) return [0, -0, 1e21, 1e-7, 5e-324, 2 ** 53 + 2, 0.1 + 0.2, -1.5e300][r.int(8)]! * (r.int(2) ? 1 : -1);
  if (pick === 2) return String.fromCodePoint(...Array.from({ length: r.int(6) }, () => [0x1f, 0x22, 0x5c, 0x41, 0xe9, 0x2028, 0xe000, 0xffff, 0x1f600][r.int(9)]!));
  if (pick === 3) return null;
  if (pick === 4) return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = r.int(5); i > 0; i--) o[randomValue(r, 99) as string as never] = randomValue(r, depth + 1);
  return o;
}

describe('wasm and js backends agree', () => {
  it('on Ed25519 keys, signatures and verdicts (including corrupted signatures)', () => {
    const r = rng(1);
    for (let i = 0; i < 60; i++) {
      const seed = r.bytes(32);
      const msg = r.bytes(r.int(300));
      const pk = wasm.ed25519PublicKey(seed);
      expect(toHex(js.ed25519PublicKey(seed))).toBe(toHex(pk));
      const sig = wasm.ed25519Sign(seed, msg);
      expect(toHex(js.ed25519Sign(seed, msg))).toBe(toHex(sig));
      const bad = sig.slice();
      bad[r.int(64)]! ^= 1 << r.int(8);
      for (const s of [sig, bad]) expect(js.ed25519Verify(pk, msg, s)).toBe(wasm.ed25519Verify(pk, msg, s));
    }
  });

  it('on AEAD and X25519', () => {
    const r = rng(2);
    for (let i = 0; i < 40; i++) {
      const [key, pt, aad] = [r.bytes(32), r.bytes(r.int(2000)), r.bytes(r.int(40))];
      for (const [cipher, n] of [['chacha20-poly1305', 12], ['xchacha20-poly1305', 24]] as const) {
        const nonce = r.bytes(n);
        const sealed = wasm.aeadSeal(cipher, key, nonce, pt, aad);
        expect(toHex(js.aeadSeal(cipher, key, nonce, pt, aad))).toBe(toHex(sealed));
        expect(toHex(js.aeadOpen(cipher, key, nonce, sealed, aad))).toBe(toHex(pt));
      }
      const [a, b] = [r.bytes(32), r.bytes(32)];
      const shared = wasm.x25519SharedSecret(a, wasm.x25519PublicKey(b));
      expect(toHex(js.x25519SharedSecret(b, js.x25519PublicKey(a)))).toBe(toHex(shared));
    }
  });

  it('on canonical JSON of random documents, from values and from text', () => {
    const r = rng(3);
    for (let i = 0; i < 300; i++) {
      const v = randomValue(r, 0);
      const text = JSON.stringify(v, null, r.int(3));
      expect(toHex(js.jcsValue(v))).toBe(toHex(wasm.jcsValue(v)));
      expect(toHex(js.jcs(text))).toBe(toHex(wasm.jcs(text)));
      expect(toHex(wasm.jcs(text))).toBe(toHex(wasm.jcsValue(v)));
    }
  });
});
