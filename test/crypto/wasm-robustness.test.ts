// No input may panic the WASM instance: feed every kind of bad input to one instance, check each is a
// typed CryptoError (never a RuntimeError trap), then show the same instance still signs and verifies.
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { CryptoError, getCrypto, utf8 } from '../../ts/crypto/index.js';
import { loadWasmNode } from '../../ts/crypto/node.js';
import { wasmBackend, type WasmExports } from '../../ts/crypto/wasm-backend.js';

const wasm = loadWasmNode();
const seed = new Uint8Array(32).fill(7);
const pk = wasm.ed25519PublicKey(seed);
const msg = utf8('still alive');
const sig = wasm.ed25519Sign(seed, msg);

const sizes = [0, 1, 16, 31, 33, 63, 65, 1000];
const bytes = (n: number, fill = 0xff) => new Uint8Array(n).fill(fill);

function typed(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    expect(e, String(e)).toBeInstanceOf(CryptoError);
    return (e as CryptoError).code;
  }
}

describe('wasm instance under bad input', () => {
  it('returns typed errors for every malformed input kind', () => {
    for (const n of sizes) {
      expect(typed(() => wasm.ed25519Sign(bytes(n), msg))).toBe('BAD_LENGTH');
      expect(typed(() => wasm.ed25519PublicKey(bytes(n)))).toBe('BAD_LENGTH');
      if (n !== 32) expect(typed(() => wasm.ed25519Check(bytes(n), msg, sig))).toBe('BAD_LENGTH');
      if (n !== 64) expect(typed(() => wasm.ed25519Check(pk, msg, bytes(n)))).toBe('BAD_LENGTH');
      expect(wasm.ed25519Verify(bytes(n), msg, bytes(n))).toBe(false);
      expect(typed(() => wasm.aeadSeal('chacha20-poly1305', bytes(n), bytes(12), msg))).toBe('BAD_LENGTH');
      if (n !== 24) expect(typed(() => wasm.aeadOpen('xchacha20-poly1305', bytes(32), bytes(n), bytes(40)))).toBe('BAD_LENGTH');
      expect(typed(() => wasm.aeadOpen('chacha20-poly1305', bytes(32), bytes(12), bytes(n)))).toBe('AEAD_OPEN_FAILED');
      expect(typed(() => wasm.x25519SharedSecret(bytes(n), bytes(32, 9)))).toBe('BAD_LENGTH');
    }
    // Keys that decode to nothing, or to small-order points.
    expect(typed(() => wasm.ed25519Check(bytes(32, 0xff), msg, sig))).toBe('PUBLIC_KEY_INVALID');
    expect(typed(() => wasm.ed25519Check(bytes(32, 0), msg, sig))).toBe('SIGNATURE_INVALID');
    expect(typed(() => wasm.x25519SharedSecret(bytes(32, 1), bytes(32, 0)))).toBe('X25519_LOW_ORDER');
    // Verify-many with inconsistent buffers cannot be built through the TS wrapper; wrong-sized items are just false.
    expect(
      wasm.ed25519VerifyMany([
        { publicKey: bytes(3), message: msg, signature: bytes(5) },
        { publicKey: pk, message: msg, signature: sig },
      ]),
    ).toEqual([false, true]);
    // JSON: every refusal kind, plus inputs that stress the parser.
    for (const [text, code] of [
      ['{"a":1,"a":2}', 'JSON_DUPLICATE_KEY'],
      ['"\\ud800"', 'JSON_LONE_SURROGATE'],
      ['"\ud800"', 'JSON_LONE_SURROGATE'],
      ['1e400', 'JSON_NUMBER_RANGE'],
      ['['.repeat(100_000), 'JSON_TOO_DEEP'],
      ['{"a":'.repeat(100_000), 'JSON_TOO_DEEP'],
      ['', 'JSON_SYNTAX'],
      ['\u0000', 'JSON_SYNTAX'],
      ['"'.repeat(3), 'JSON_SYNTAX'],
      ['[1,2', 'JSON_SYNTAX'],
      ['-', 'JSON_SYNTAX'],
      ['1'.repeat(5000), 'JSON_NUMBER_RANGE'],
    ] as const) {
      expect(
        typed(() => wasm.jcs(text)),
        text.slice(0, 20),
      ).toBe(code);
    }
    const huge = { s: 'x'.repeat(4 << 20), a: Array.from({ length: 10_000 }, (_, i) => i / 7) };
    expect(wasm.jcsValueSha256(huge)).toEqual(getCrypto('js').jcsValueSha256(huge));
  });

  it('still verifies a good signature on the same instance afterwards', () => {
    expect(loadWasmNode()).toBe(wasm);
    expect(wasm.ed25519Verify(pk, msg, sig)).toBe(true);
    expect(wasm.ed25519Verify(pk, utf8('still alivE'), sig)).toBe(false);
    expect(wasm.ed25519Sign(seed, msg)).toEqual(sig);
  });
});

describe('box and proof-of-work refusals from the Rust core', () => {
  it('cross the boundary as typed errors, and the same instance seals, opens and signs afterwards', () => {
    const boxed = wasm.boxSeal(pk, msg);
    const tag = boxed.slice();
    tag[tag.length - 1]! ^= 1;
    const zero = boxed.slice();
    zero.fill(0, 5, 37);
    for (const [f, want] of [
      [() => wasm.boxOpen(seed, boxed.subarray(0, 64)), 'BOX_TOO_SHORT'],
      [() => wasm.boxOpen(seed, Uint8Array.of(0, ...boxed.subarray(1))), 'BOX_BAD_MAGIC'],
      [() => wasm.boxOpen(seed, zero), 'X25519_LOW_ORDER'],
      [() => wasm.boxOpen(seed, tag), 'AEAD_OPEN_FAILED'],
      [() => wasm.boxOpen(bytes(31), boxed), 'BAD_LENGTH'],
      [() => wasm.boxSeal(bytes(32, 0xff), msg), 'PUBLIC_KEY_INVALID'],
      [() => wasm.powCheck('n', 'k', 0, 5), 'POW_DIFFICULTY_RANGE'],
    ] as const) {
      expect(typed(f)).toBe(want);
    }
    for (const n of sizes) expect(typed(() => wasm.boxOpen(seed, bytes(n)))).toBe(n < 65 ? 'BOX_TOO_SHORT' : 'BOX_BAD_MAGIC');
    expect(loadWasmNode()).toBe(wasm);
    expect(wasm.boxOpen(seed, boxed)).toEqual(msg);
    expect(wasm.boxOpen(seed, wasm.boxSeal(pk, msg))).toEqual(msg);
    expect(wasm.ed25519Verify(pk, msg, sig)).toBe(true);
  });
});

describe('a trap in the WASM instance', () => {
  // A trap cannot be caused on purpose through the core (that is the point); one that escapes anyway,
  // such as the bindings failing to copy an argument into exhausted memory, is simulated here.
  const real = createRequire(import.meta.url)('../../bindings/node/aigenora_wasm.js') as WasmExports;
  const trapping = (): WasmExports => ({
    ...real,
    jcs_canonicalize: () => {
      throw new WebAssembly.RuntimeError('unreachable');
    },
  });

  it('is a typed WASM_TRAP, and the instance is not called again', () => {
    const w = trapping();
    const c = wasmBackend(w);
    expect(c.sha256(msg)).toEqual(wasm.sha256(msg));
    expect(typed(() => c.jcs('[0]'))).toBe('WASM_TRAP');
    let calls = 0;
    w.sha256 = (d) => (calls++, real.sha256(d));
    for (const f of [
      () => c.sha256(msg),
      () => c.ed25519Verify(pk, msg, sig),
      () => c.jcs('1'),
      () => c.ed25519Sign(seed, msg),
      () => c.verifyReveal('00', 'a', 'b'),
    ]) {
      expect(typed(f)).toBe('WASM_TRAP');
    }
    expect(calls).toBe(0);
  });

  it('leaves other instances alone', () => {
    expect(typed(() => wasmBackend(trapping()).jcs('1'))).toBe('WASM_TRAP');
    expect(wasm.jcs('1')).toEqual(utf8('1'));
  });
});
