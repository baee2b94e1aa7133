// The wasm backend seals and opens through one scratch buffer in WASM memory that JavaScript writes the
// inputs into and reads the output from (crates/wasm, SCRATCH). What can go wrong with that is checked
// here, on the shipped module and on the nosimd one, against the js backend (@noble/ciphers): growth of
// the memory between calls (which detaches JavaScript's views), sizes around the block and tag
// boundaries, other WASM calls in between, and what a refused call leaves in the scratch, read from
// the memory itself.
import { describe, expect, it } from 'vitest';
import { getCrypto, type AeadCipher, type Crypto } from '../../ts/crypto/index.js';
import { CryptoError } from '../../ts/crypto/errors.js';
import { wasmBackend } from '../../ts/crypto/wasm-backend.js';
import { load, MODULES } from './wasm-modules.js';

const ref = getCrypto('js');
const CIPHERS = ['chacha20-poly1305', 'xchacha20-poly1305'] as const;
const nonceFor = (c: AeadCipher, fill: number) => new Uint8Array(c === 'chacha20-poly1305' ? 12 : 24).fill(fill);

/** Bytes no test input repeats by accident (an LCG of the seed), so finding them in memory means something. */
function distinct(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

function failure(f: () => unknown): CryptoError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CryptoError);
    return e as CryptoError;
  }
  throw new Error('expected a CryptoError');
}

const toBuf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

describe.each(Object.entries(MODULES))('%s module', (_name, dir) => {
  const w = load(dir);
  const wasm: Crypto = wasmBackend(w);
  const memory = w.wasm_memory();
  // The scratch's address without growing it (growing it from here would move it under the backend).
  const scratchAt = () => w.aead_scratch(0);

  it('agrees with the js backend at sizes around the block and tag boundaries, with and without aad', () => {
    for (const cipher of CIPHERS) {
      for (const len of [0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 1024, 65536 + 1]) {
        for (const aadLen of [0, 1, 13, 64]) {
          const key = distinct(32, len * 7 + aadLen + 1);
          const nonce = nonceFor(cipher, len & 0xff);
          const msg = distinct(len, len + 99);
          const aad = distinct(aadLen, aadLen + 5);
          const sealed = wasm.aeadSeal(cipher, key, nonce, msg, aad);
          expect(toBuf(sealed).equals(toBuf(ref.aeadSeal(cipher, key, nonce, msg, aad))), `${cipher} ${len} aad ${aadLen}`).toBe(true);
          expect(sealed.length).toBe(len + 16);
          expect(toBuf(wasm.aeadOpen(cipher, key, nonce, sealed, aad)).equals(toBuf(msg))).toBe(true);
        }
      }
    }
  });

  it('stays correct when the memory grows between calls, and earlier results are unaffected', () => {
    const cipher = 'chacha20-poly1305';
    const key = distinct(32, 1);
    const nonce = nonceFor(cipher, 1);
    const small = distinct(1024, 2);
    const first = wasm.aeadSeal(cipher, key, nonce, small);
    const firstCopy = first.slice();
    const before = memory.buffer;
    // Larger than the whole memory now, so the scratch cannot hold it without the memory growing.
    const big = distinct(Math.max(16 << 20, before.byteLength + 1), 3);
    const bigSealed = wasm.aeadSeal(cipher, key, nonce, big);
    expect(memory.buffer.byteLength).toBeGreaterThan(before.byteLength);
    expect(before.byteLength).toBe(0); // the old buffer was detached by the growth
    expect(toBuf(bigSealed).equals(toBuf(ref.aeadSeal(cipher, key, nonce, big)))).toBe(true);
    expect(toBuf(first).equals(toBuf(firstCopy))).toBe(true);
    expect(toBuf(wasm.aeadSeal(cipher, key, nonce, small)).equals(toBuf(first))).toBe(true);
    expect(toBuf(wasm.aeadOpen(cipher, key, nonce, first)).equals(toBuf(small))).toBe(true);
    expect(toBuf(wasm.aeadOpen(cipher, key, nonce, bigSealed)).equals(toBuf(big))).toBe(true);
  });

  it('stays correct with other WASM calls in between, some of which allocate and grow the memory', () => {
    const seed = distinct(32, 11);
    const pk = wasm.ed25519PublicKey(seed);
    let grown = 0;
    for (let round = 0; round < 24; round++) {
      const cipher = CIPHERS[round % 2]!;
      const key = distinct(32, round + 40);
      const nonce = nonceFor(cipher, round);
      const msg = distinct((round * 997) % 5000, round + 70);
      const aad = distinct(round % 20, round + 3);
      const sealed = wasm.aeadSeal(cipher, key, nonce, msg, aad);
      const size = memory.buffer.byteLength;
      // A hash of more than the memory's size: its argument is copied in by wasm-bindgen's malloc.
      const data = distinct(round === 11 ? size + 1 : 3000, round);
      expect(toBuf(wasm.sha256(data)).equals(toBuf(ref.sha256(data)))).toBe(true);
      if (memory.buffer.byteLength > size) grown++;
      const sig = wasm.ed25519Sign(seed, sealed);
      expect(wasm.ed25519Verify(pk, sealed, sig)).toBe(true);
      expect(toBuf(sealed).equals(toBuf(ref.aeadSeal(cipher, key, nonce, msg, aad)))).toBe(true);
      expect(toBuf(wasm.aeadOpen(cipher, key, nonce, sealed, aad)).equals(toBuf(msg))).toBe(true);
      expect(wasm.ed25519Verify(pk, msg, sig)).toBe(false);
    }
    expect(grown).toBeGreaterThan(0);
  });

  it('a tampered tag is the typed error of the js backend; the scratch keeps neither key nor plaintext; the next call works', () => {
    for (const cipher of CIPHERS) {
      const key = distinct(32, 500);
      const nonce = nonceFor(cipher, 9);
      const aad = distinct(7, 8);
      // A successful open first, so that its plaintext would be there to find had it been left behind.
      const earlier = distinct(1024, 600);
      expect(toBuf(wasm.aeadOpen(cipher, key, nonce, ref.aeadSeal(cipher, key, nonce, earlier, aad), aad)).equals(toBuf(earlier))).toBe(true);
      const opened = new Uint8Array(memory.buffer, scratchAt(), key.length + nonce.length + aad.length + earlier.length + 16);
      expect(toBuf(opened).indexOf(toBuf(earlier.subarray(0, 16))), 'plaintext left after a successful open').toBe(-1);
      expect(toBuf(opened).indexOf(toBuf(key)), 'key left after a successful open').toBe(-1);
      const plaintext = distinct(1024, 700);
      const sealed = ref.aeadSeal(cipher, key, nonce, plaintext, aad);
      sealed[sealed.length - 1]! ^= 0x01;

      const err = failure(() => wasm.aeadOpen(cipher, key, nonce, sealed, aad));
      const want = failure(() => ref.aeadOpen(cipher, key, nonce, sealed, aad));
      expect([err.code, err.message]).toEqual([want.code, want.message]);
      expect(err.code).toBe('AEAD_OPEN_FAILED');

      const at = scratchAt();
      const region = new Uint8Array(memory.buffer, at, key.length + nonce.length + aad.length + sealed.length + 16);
      expect(region.every((b) => b === 0)).toBe(true);
      for (const secret of [key, plaintext, earlier, plaintext.subarray(0, 32), earlier.subarray(0, 32)]) expect(toBuf(region).indexOf(toBuf(secret))).toBe(-1);

      sealed[sealed.length - 1]! ^= 0x01;
      expect(toBuf(wasm.aeadOpen(cipher, key, nonce, sealed, aad)).equals(toBuf(plaintext))).toBe(true);
    }
  });

  it('a seal zeroes the key in the scratch, and a refused seal leaves no plaintext', () => {
    const cipher = 'chacha20-poly1305';
    const key = distinct(32, 800);
    const nonce = nonceFor(cipher, 4);
    const plaintext = distinct(2048, 900);
    const sealed = wasm.aeadSeal(cipher, key, nonce, plaintext);
    const at = scratchAt();
    // The ciphertext is where the plaintext was (the output is copied out of the scratch)...
    expect(toBuf(new Uint8Array(memory.buffer, at + 32 + 12, sealed.length)).equals(toBuf(sealed))).toBe(true);
    // ...and the key before it is zero.
    expect(new Uint8Array(memory.buffer, at, 32).every((b) => b === 0)).toBe(true);

    for (const badKey of [key.subarray(0, 31), distinct(33, 800)]) {
      const err = failure(() => wasm.aeadSeal(cipher, badKey, nonce, plaintext));
      const want = failure(() => ref.aeadSeal(cipher, badKey, nonce, plaintext));
      expect([err.code, err.message]).toEqual(['BAD_LENGTH', want.message]);
      const region = new Uint8Array(memory.buffer, scratchAt(), badKey.length + nonce.length + plaintext.length + 16);
      expect(region.every((b) => b === 0)).toBe(true);
    }
    expect(toBuf(wasm.aeadSeal(cipher, key, nonce, plaintext)).equals(toBuf(sealed))).toBe(true);
  });

  it('refuses short and mis-sized inputs with the js backend codes, in its order (key, nonce, then the message)', () => {
    for (const cipher of CIPHERS) {
      const key = distinct(32, 1);
      const nonce = nonceFor(cipher, 2);
      for (const [k, n, sealed] of [
        [key, nonce, new Uint8Array(0)],
        [key, nonce, new Uint8Array(15)],
        [key, nonce, new Uint8Array(16)],
        [key.subarray(1), nonce, new Uint8Array(3)],
        [key, nonce.subarray(1), new Uint8Array(3)],
      ] as const) {
        const err = failure(() => wasm.aeadOpen(cipher, k, n, sealed));
        const want = failure(() => ref.aeadOpen(cipher, k, n, sealed));
        expect(err.code).toBe(want.code);
      }
      expect(toBuf(wasm.aeadOpen(cipher, key, nonce, ref.aeadSeal(cipher, key, nonce, new Uint8Array(0)))).length).toBe(0);
    }
  });
});
