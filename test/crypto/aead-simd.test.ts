// The AEAD has two code paths: four ChaCha20 blocks in WebAssembly SIMD lanes (the shipped module,
// built with +simd128) and the same algorithm on plain integers (the nosimd module, for runtimes
// without SIMD; built by `bash scripts/build-wasm.sh --no-simd`, not shipped). Both run the RFC 8439
// and Wycheproof vectors, read in place from ../shared/conformance (a missing corpus fails, unless
// AIGENORA_SKIP_CORPORA=1 asks to skip it), and a decoder of the code section checks that the shipped
// module really contains SIMD instructions and the nosimd one none.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { fromHex, toHex, type AeadCipher, type Crypto } from '../../ts/crypto/index.js';
import { CryptoError } from '../../ts/crypto/errors.js';
import { wasmBackend } from '../../ts/crypto/wasm-backend.js';
import { load, MODULES } from './wasm-modules.js';

const root = new URL('../../', import.meta.url);
const wasmBytes = (dir: URL) => new Uint8Array(readFileSync(new URL('aigenora_wasm_bg.wasm', dir)));

const corpus = new URL('../shared/conformance/', root);
const skip = !needShared('conformance', 'the RFC 8439 and Wycheproof AEAD vectors');
function readCorpus(rel: string): any {
  const url = new URL(rel, corpus);
  if (!existsSync(url)) throw new Error(`${url.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
  return JSON.parse(readFileSync(url, 'utf8'));
}

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof CryptoError) return e.code;
    throw e;
  }
  return 'OK';
}

function checkWycheproof(c: Crypto, rel: string, cipher: AeadCipher, count: number) {
  const doc = readCorpus(rel);
  let n = 0;
  for (const g of doc.testGroups) {
    for (const t of g.tests) {
      const [key, iv, aad, msg] = [t.key, t.iv, t.aad, t.msg].map(fromHex) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
      const sealed = fromHex(t.ct + t.tag);
      const lengthsOk = key.length === 32 && iv.length === (cipher === 'chacha20-poly1305' ? 12 : 24);
      if (t.result === 'valid') {
        expect(toHex(c.aeadSeal(cipher, key, iv, msg, aad)), `tcId ${t.tcId}`).toBe(t.ct + t.tag);
        expect(toHex(c.aeadOpen(cipher, key, iv, sealed, aad)), `tcId ${t.tcId}`).toBe(t.msg);
      } else {
        expect(
          codeOf(() => c.aeadOpen(cipher, key, iv, sealed, aad)),
          `tcId ${t.tcId}`,
        ).toBe(lengthsOk ? 'AEAD_OPEN_FAILED' : 'BAD_LENGTH');
      }
      n++;
    }
  }
  expect(n).toBe(count);
}

describe.each(Object.entries(MODULES))('%s module', (name, dir) => {
  it.skipIf(skip)('RFC 8439 §2.8.2 and A.5', () => {
    const c = wasmBackend(load(dir));
    const doc = readCorpus('rfc8439/chacha20_poly1305_aead.json');
    expect(doc.tests.length).toBe(2);
    for (const t of doc.tests) {
      const f = (k: string) => fromHex(t[k]);
      expect(toHex(c.aeadSeal('chacha20-poly1305', f('key'), f('nonce'), f('plaintext'), f('aad')))).toBe(t.ciphertext + t.tag);
      expect(toHex(c.aeadOpen('chacha20-poly1305', f('key'), f('nonce'), fromHex(t.ciphertext + t.tag), f('aad')))).toBe(t.plaintext);
    }
  });

  it.skipIf(skip)('Wycheproof ChaCha20-Poly1305 and XChaCha20-Poly1305', () => {
    const c = wasmBackend(load(dir));
    checkWycheproof(c, 'wycheproof/testvectors_v1/chacha20_poly1305_test.json', 'chacha20-poly1305', 325);
    checkWycheproof(c, 'wycheproof/testvectors_v1/xchacha20_poly1305_test.json', 'xchacha20-poly1305', 315);
  });

  it('agrees with the other module on every length to 600 and at 64 KiB', () => {
    const mine = wasmBackend(load(dir));
    const other = wasmBackend(load(name === 'simd' ? MODULES.nosimd : MODULES.simd));
    const key = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 1);
    for (const cipher of ['chacha20-poly1305', 'xchacha20-poly1305'] as const) {
      const nonce = new Uint8Array(cipher === 'chacha20-poly1305' ? 12 : 24).fill(5);
      for (const len of [...Array(601).keys(), 65535, 65536, 65537]) {
        const msg = Uint8Array.from({ length: len }, (_, i) => (i * 131 + len) & 0xff);
        const aad = msg.subarray(0, len % 37);
        const sealed = mine.aeadSeal(cipher, key, nonce, msg, aad);
        expect(toHex(sealed), `${cipher} ${len}`).toBe(toHex(other.aeadSeal(cipher, key, nonce, msg, aad)));
        expect(toHex(other.aeadOpen(cipher, key, nonce, sealed, aad))).toBe(toHex(msg));
      }
    }
  });
});

/** Whether a function body uses a SIMD instruction (prefix 0xfd) or a v128 local. */
type Scan = { functions: number; simd: boolean };

/**
 * Walks every instruction of every function body in the code section, knowing each opcode's
 * immediates (MVP, sign extension, saturating conversions, bulk memory, reference types, tail calls,
 * multi-value block types). An opcode it does not know throws, and each body must end exactly at its
 * declared size, so a scan cannot pass by skipping bytes it misread.
 */
function scanCode(bytes: Uint8Array): Scan {
  let p = 0;
  const byte = () => {
    if (p >= bytes.length) throw new Error('unexpected end of module');
    return bytes[p++]!;
  };
  const uleb = () => {
    let result = 0,
      shift = 0,
      b: number;
    do {
      b = byte();
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return result;
  };
  const skipLeb = () => {
    while (byte() & 0x80);
  };
  expect([...bytes.subarray(0, 8)]).toEqual([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  p = 8;
  while (p < bytes.length) {
    const id = byte();
    const size = uleb();
    const end = p + size;
    if (id !== 10) {
      p = end;
      continue;
    }
    const count = uleb();
    let simd = false;
    for (let f = 0; f < count; f++) {
      const bodyEnd = uleb() + p;
      const groups = uleb();
      for (let g = 0; g < groups; g++) {
        uleb();
        if (byte() === 0x7b) simd = true;
      }
      while (p < bodyEnd) {
        const op = byte();
        if (op === 0xfd) return { functions: f + 1, simd: true };
        if (op === 0x02 || op === 0x03 || op === 0x04) {
          const bt = bytes[p]!;
          if (bt === 0x40 || (bt >= 0x6f && bt <= 0x7f)) p++;
          else skipLeb();
        } else if (op === 0x0c || op === 0x0d || op === 0x10 || op === 0x12 || (op >= 0x20 && op <= 0x26) || op === 0xd2 || op === 0x3f || op === 0x40) {
          uleb();
        } else if (op === 0x0e) {
          const n = uleb();
          for (let i = 0; i <= n; i++) uleb();
        } else if (op === 0x11 || op === 0x13) {
          uleb();
          uleb();
        } else if (op === 0x1c) {
          const n = uleb();
          for (let i = 0; i < n; i++) if (byte() === 0x7b) simd = true;
        } else if (op >= 0x28 && op <= 0x3e) {
          uleb();
          uleb();
        } else if (op === 0x41 || op === 0x42) {
          skipLeb();
        } else if (op === 0x43) {
          p += 4;
        } else if (op === 0x44) {
          p += 8;
        } else if (op === 0xd0) {
          p++;
        } else if (op === 0xfc) {
          const sub = uleb();
          if (sub <= 7) continue;
          else if (sub === 8 || sub === 10 || sub === 12 || sub === 14) (uleb(), uleb());
          else if (sub <= 17) uleb();
          else throw new Error(`unknown 0xfc ${sub} at ${p}`);
        } else if (!(op <= 0x01 || op === 0x05 || op === 0x0b || op === 0x0f || op === 0x1a || op === 0x1b || (op >= 0x45 && op <= 0xc4) || op === 0xd1)) {
          throw new Error(`unknown opcode 0x${op.toString(16)} at ${p - 1}`);
        }
      }
      if (p !== bodyEnd) throw new Error(`function ${f} body overran its size`);
    }
    if (p !== end) throw new Error('code section size mismatch');
    return { functions: count, simd };
  }
  throw new Error('no code section');
}

describe('SIMD in the modules', () => {
  it('the shipped module uses SIMD instructions', () => {
    expect(scanCode(wasmBytes(MODULES.simd)).simd).toBe(true);
  });

  it('the nosimd module has none, in any of its functions', () => {
    const scan = scanCode(wasmBytes(MODULES.nosimd));
    expect(scan.simd).toBe(false);
    expect(scan.functions).toBeGreaterThan(500);
  });

  it('the decoder sees a SIMD instruction in a minimal module and none in its scalar twin', () => {
    // (func (result i32) v128.const 0 i32x4.extract_lane 0) vs (func (result i32) i32.const 0)
    const mod = (body: number[]) =>
      Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7f, 3, 2, 1, 0, 10, body.length + 3, 1, body.length + 1, 0, ...body]);
    const simd = mod([0xfd, 0x0c, ...new Array(16).fill(0), 0xfd, 0x1b, 0, 0x0b]);
    const scalar = mod([0x41, 0, 0x0b]);
    expect(WebAssembly.validate(simd)).toBe(true);
    expect(WebAssembly.validate(scalar)).toBe(true);
    expect(scanCode(simd).simd).toBe(true);
    expect(scanCode(scalar)).toEqual({ functions: 1, simd: false });
  });
});
