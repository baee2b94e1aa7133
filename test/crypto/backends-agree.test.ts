// Differential check of the two backends on pseudo-random inputs the fixed vectors do not cover:
// they must produce the same bytes, the same verdicts and the same error codes. (Canonical JSON has
// its own property-based tests in jcs-fuzz.test.ts.)
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CryptoError, fromHex, getCrypto, toHex, type Crypto } from '../../ts/crypto/index.js';

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
  if (pick === 2)
    return String.fromCodePoint(...Array.from({ length: r.int(6) }, () => [0x1f, 0x22, 0x5c, 0x41, 0xe9, 0x2028, 0xe000, 0xffff, 0x1f600][r.int(9)]!));
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
      for (const [cipher, n] of [
        ['chacha20-poly1305', 12],
        ['xchacha20-poly1305', 24],
      ] as const) {
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

describe('wasm and js backends agree on every result and error code', () => {
  const RUNS = Number(process.env['AIGENORA_FUZZ_RUNS'] ?? 1000);
  let tried = 0;
  afterAll(() => console.log(`backends-agree fuzz: ${tried} inputs, 0 failures`));

  // Encodings that sit on the edges of the policies: zero, all ones, the identity and other
  // small-order Ed25519 points, non-canonical y, small-order X25519 u-coordinates.
  const edges = [
    '00'.repeat(32),
    'ff'.repeat(32),
    `01${'00'.repeat(31)}`,
    `ec${'ff'.repeat(30)}7f`,
    `ed${'ff'.repeat(30)}7f`,
    'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
    'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800',
    '5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157',
  ].map(fromHex);
  const sized = fc.constantFrom(0, 1, 12, 16, 24, 31, 32, 33, 63, 64, 65).chain((n) => fc.uint8Array({ minLength: n, maxLength: n }));
  const bytes = fc.oneof(
    sized,
    fc.uint8Array({ maxLength: 80 }),
    fc.constantFrom(...edges),
    fc.constantFrom(...edges).map((e) => Uint8Array.from([...e, ...e])),
  );
  const cipher = fc.constantFrom('chacha20-poly1305', 'xchacha20-poly1305') as fc.Arbitrary<'chacha20-poly1305' | 'xchacha20-poly1305'>;

  function outcome(f: () => unknown): string {
    try {
      const r = f();
      return r instanceof Uint8Array ? toHex(r) : JSON.stringify(r);
    } catch (e) {
      if (e instanceof CryptoError) return e.code;
      throw new Error(`untyped ${String(e)}`);
    }
  }
  const same = (f: (c: Crypto) => unknown) => {
    tried++;
    expect(outcome(() => f(js))).toBe(outcome(() => f(wasm)));
  };

  it('for inputs of any length and edge encodings', () => {
    fc.assert(
      fc.property(bytes, bytes, bytes, bytes, cipher, (a, b, d, e, ci) => {
        same((c) => c.ed25519PublicKey(a));
        same((c) => c.ed25519Sign(a, b));
        same((c) => c.ed25519Keypair(a).sign(b));
        same((c) => c.ed25519Verify(a, b, d));
        same((c) => c.ed25519Check(a, b, d));
        same((c) =>
          c.ed25519VerifyMany([
            { publicKey: a, message: b, signature: d },
            { publicKey: d, message: e, signature: a },
          ]),
        );
        same((c) => c.aeadSeal(ci, a, b, d, e));
        same((c) => c.aeadOpen(ci, a, b, d, e));
        same((c) => c.x25519PublicKey(a));
        same((c) => c.x25519SharedSecret(a, b));
      }),
      { numRuns: RUNS },
    );
  });

  it('for signatures near a valid one, under keys near a valid one', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 100 }),
        fc.array(fc.tuple(fc.nat(95), fc.integer({ min: 1, max: 255 })), { maxLength: 2 }),
        (seed, msg, flips) => {
          const pk = wasm.ed25519PublicKey(seed);
          const both = Uint8Array.from([...pk, ...wasm.ed25519Sign(seed, msg)]);
          for (const [at, x] of flips) both[at]! ^= x;
          same((c) => c.ed25519Check(both.subarray(0, 32), msg, both.subarray(32)));
          same((c) => c.ed25519VerifyMany([{ publicKey: both.subarray(0, 32), message: msg, signature: both.subarray(32) }]));
        },
      ),
      // A full verification in JS takes about a millisecond.
      { numRuns: Math.ceil(RUNS / 4) },
    );
  });

  it('for sealed messages with a byte changed', () => {
    fc.assert(
      fc.property(
        cipher,
        fc.uint8Array({ maxLength: 200 }),
        fc.uint8Array({ maxLength: 20 }),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        (ci, pt, aad, at, x) => {
          const key = new Uint8Array(32).fill(3);
          const nonce = new Uint8Array(ci === 'chacha20-poly1305' ? 12 : 24).fill(5);
          const sealed = wasm.aeadSeal(ci, key, nonce, pt, aad);
          sealed[at % sealed.length]! ^= x;
          same((c) => c.aeadOpen(ci, key, nonce, sealed, aad));
        },
      ),
      { numRuns: RUNS },
    );
  });
});
