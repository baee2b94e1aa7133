// The AGBX1 offline box and the registration proof of work on both backends: every case of the
// reference's box and pow vectors, read in place from ../shared/conformance (a missing file fails,
// unless AIGENORA_SKIP_CORPORA=1 asks to skip it, which vitest then reports as skipped), altered vectors
// that the checks must refuse, and the refusals of each function.
import fc from 'fast-check';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { CryptoError, fromHex, getCrypto, toHex, utf8, type Crypto } from '../../ts/crypto/index.js';
import { checkBoxVectors, checkPowVectors } from '../../ts/conformance/box-pow.js';
import { registrationBody, restSignedBytes, signRegistration } from '../../ts/registry/auth.js';
import { errorCode as code } from '../shared/vector-checks.js';

const dir = new URL('../../../shared/conformance/aigenora-reference/', import.meta.url);
const BOX = new URL('aigenora-box-vectors.json', dir);
const POW = new URL('aigenora-pow-vectors.json', dir);
const skip = ![
  needShared('conformance/aigenora-reference/aigenora-box-vectors.json', "the reference's box vectors"),
  needShared('conformance/aigenora-reference/aigenora-pow-vectors.json', "the reference's pow vectors"),
].every(Boolean);

function load(url: URL) {
  if (!existsSync(url)) throw new Error(`${url.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
  return JSON.parse(readFileSync(url, 'utf8'));
}

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c: Crypto = getCrypto(name);
  const seed = new Uint8Array(32).fill(7);
  const pk = c.ed25519PublicKey(seed);

  it.skipIf(skip)('passes every case of aigenora-box-vectors.json and refuses every tampered copy', () => {
    expect(checkBoxVectors(c, load(BOX))).toEqual({ convert: 8, seal: 5, decrypt_only: 1 });
  });

  it.skipIf(skip)('passes every case of aigenora-pow-vectors.json', () => {
    expect(checkPowVectors(c, load(POW))).toEqual({ pow: 6 });
  });

  it.skipIf(skip)('the checks fail on altered vectors', () => {
    const box = load(BOX);
    const seal = box.cases.find((v: { kind: string }) => v.kind === 'seal');
    const flipped = seal.ciphertext.slice(0, -2) + (seal.ciphertext.endsWith('00') ? '01' : '00');
    expect(() => checkBoxVectors(c, { ...box, cases: [{ ...seal, ciphertext: flipped }] })).toThrow(/ciphertext/);
    // A tampered copy said to be refused for its tag but refused for its magic is a wrong verdict.
    const t = seal.tampered.find((x: { name: string }) => x.name === 'flip_magic');
    const wrong = { ...t, expect: { ok: false, error: 'InvalidTag', message: '' } };
    expect(() => checkBoxVectors(c, { ...box, cases: [{ ...seal, tampered: [wrong] }] })).toThrow(/flip_magic: got "BOX_BAD_MAGIC", want "AEAD_OPEN_FAILED"/);
    const pow = load(POW);
    const p = pow.cases.find((v: { difficulty: number }) => v.difficulty === 1);
    expect(() => checkPowVectors(c, { ...pow, cases: [{ ...p, solution: { ...p.solution, counter: p.solution.counter + 1 } }] })).toThrow(/counter/);
    expect(() => checkPowVectors(c, { ...pow, cases: [{ ...p, rest_auth: { ...p.rest_auth, method: 'get' } }] })).toThrow(/signed bytes/);
  });

  it('seals with a fresh ephemeral key and nonce each time, and opens only with the right seed', () => {
    const a = c.boxSeal(pk, utf8('hi'));
    const b = c.boxSeal(pk, utf8('hi'));
    expect(a.length).toBe(65 + 2);
    expect(a.subarray(5, 49)).not.toEqual(b.subarray(5, 49));
    expect(c.boxOpen(seed, a)).toEqual(utf8('hi'));
    expect(c.boxOpen(seed, b)).toEqual(utf8('hi'));
    expect(code(() => c.boxOpen(new Uint8Array(32).fill(8), a))).toBe('AEAD_OPEN_FAILED');
  });

  it('refuses with typed codes: length, then magic, then the key, then the tag', () => {
    const boxed = c.boxSeal(pk, new Uint8Array(0));
    expect(code(() => c.boxOpen(seed.subarray(1), boxed))).toBe('BAD_LENGTH');
    expect(code(() => c.boxOpen(seed, new Uint8Array(0)))).toBe('BOX_TOO_SHORT');
    expect(code(() => c.boxOpen(seed, boxed.subarray(0, 64)))).toBe('BOX_TOO_SHORT');
    expect(c.boxOpen(seed, boxed)).toEqual(new Uint8Array(0));
    expect(code(() => c.boxOpen(seed, Uint8Array.of(0x42, ...boxed.subarray(1))))).toBe('BOX_BAD_MAGIC');
    const version = boxed.slice();
    version[4] = 0x32; // AGBX2
    expect(code(() => c.boxOpen(seed, version))).toBe('BOX_BAD_MAGIC');
    const zero = boxed.slice();
    zero.fill(0, 5, 37);
    expect(code(() => c.boxOpen(seed, zero))).toBe('X25519_LOW_ORDER');
    const tag = boxed.slice();
    tag[64]! ^= 1;
    expect(code(() => c.boxOpen(seed, tag))).toBe('AEAD_OPEN_FAILED');
  });

  it('refuses recipient keys that are not canonical Ed25519 points, and the neutral point at X25519', () => {
    const yIsP = new Uint8Array(32).fill(0xff);
    yIsP[0] = 0xed;
    yIsP[31] = 0x7f;
    expect(code(() => c.ed25519PublicToX25519(yIsP))).toBe('PUBLIC_KEY_INVALID');
    expect(code(() => c.boxSeal(yIsP, utf8('x')))).toBe('PUBLIC_KEY_INVALID');
    expect(code(() => c.boxSeal(pk.subarray(1), utf8('x')))).toBe('BAD_LENGTH');
    const neutral = new Uint8Array(32);
    neutral[0] = 1;
    expect([...c.ed25519PublicToX25519(neutral)]).toEqual(new Array(32).fill(0));
    expect(code(() => c.boxSeal(neutral, utf8('x')))).toBe('X25519_LOW_ORDER');
    expect(code(() => c.boxSealWith(pk, utf8('x'), new Uint8Array(32), new Uint8Array(11)))).toBe('BAD_LENGTH');
    expect(code(() => c.boxSealWith(pk, utf8('x'), new Uint8Array(31), new Uint8Array(12)))).toBe('BAD_LENGTH');
  });

  it('bounds the proof of work and checks its arguments', () => {
    expect(c.powSolve('n', 'k', 0)).toBe(0);
    expect(code(() => c.powSolve('n', 'k', 5))).toBe('POW_DIFFICULTY_RANGE');
    expect(code(() => c.powSolve('n', 'k', 1.5))).toBe('POW_DIFFICULTY_RANGE');
    expect(code(() => c.powSolve('n', 'k', -1))).toBe('POW_DIFFICULTY_RANGE');
    expect(code(() => c.powCheck('n', 'k', -1, 1))).toBe('POW_COUNTER_INVALID');
    expect(code(() => c.powCheck('n', 'k', 2 ** 53, 1))).toBe('POW_COUNTER_INVALID');
    expect(code(() => c.powCheck('n', 'k', 0, 9))).toBe('POW_DIFFICULTY_RANGE');
    expect(code(() => c.powSolve('\ud800', 'k', 1))).toBe('JSON_LONE_SURROGATE');
    const counter = c.powSolve('nonce', 'key', 1);
    expect(c.powCheck('nonce', 'key', counter, 1)).toBe(true);
    expect(c.sha256(utf8(`noncekey${counter}`))[0]).toBe(0);
    for (let i = 0; i < counter; i++) expect(c.powCheck('nonce', 'key', i, 1)).toBe(false);
  });

  it('signs a registration that verifies, over the body it posts', () => {
    const r = signRegistration(c, seed, 'abc', 'Zoë', 3);
    expect(c.ed25519Verify(pk, utf8(`abc:${r.publicKey}:Zoë`), Uint8Array.from(Buffer.from(r.signature, 'hex')))).toBe(true);
    expect(registrationBody(r)).toContain('"nickname":"Zoë","bio":"","nonce":"abc","counter":3');
    expect(() => restSignedBytes(1.5, 'get', '/', 'x', new Uint8Array(0))).toThrow(RangeError);
  });
});

describe('the two backends', () => {
  it('seal to each other byte for byte and open each other', () => {
    const [w, j] = [getCrypto('wasm'), getCrypto('js')];
    for (let i = 0; i < 20; i++) {
      const seed = new Uint8Array(32).fill(i);
      const eph = new Uint8Array(32).fill(100 + i);
      const nonce = new Uint8Array(12).fill(200 - i);
      const msg = new Uint8Array(i * 13).fill(i);
      const pk = w.ed25519PublicKey(seed);
      const a = w.boxSealWith(pk, msg, eph, nonce);
      expect(j.boxSealWith(pk, msg, eph, nonce)).toEqual(a);
      expect(j.boxOpen(seed, a)).toEqual(msg);
      expect(w.boxOpen(seed, j.boxSeal(pk, msg))).toEqual(msg);
      expect(j.powSolve(`n${i}`, 'k', 1)).toBe(w.powSolve(`n${i}`, 'k', 1));
    }
  });
});

describe('the two backends on generated input', () => {
  const [w, j] = [getCrypto('wasm'), getCrypto('js')];
  function outcome(f: () => unknown): string {
    try {
      const r = f();
      return r instanceof Uint8Array ? toHex(r) : JSON.stringify(r);
    } catch (e) {
      if (e instanceof CryptoError) return e.code;
      throw new Error(`untyped ${String(e)}`);
    }
  }
  const same = (f: (c: Crypto) => unknown) => expect(outcome(() => f(j))).toBe(outcome(() => f(w)));
  // Encodings at the edges of the policy: y = 0, y = 1 and y = p - 1 with and without the sign bit, y = p, all ones.
  const edges = [
    '00'.repeat(32),
    `01${'00'.repeat(31)}`,
    `01${'00'.repeat(30)}80`,
    `ec${'ff'.repeat(30)}7f`,
    `ec${'ff'.repeat(30)}ff`,
    `ed${'ff'.repeat(30)}7f`,
    'ff'.repeat(32),
  ].map(fromHex);
  const key = fc.oneof(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.constantFrom(...edges), fc.uint8Array({ maxLength: 40 }));
  const boxed = fc.oneof(
    fc.uint8Array({ maxLength: 120 }),
    fc.uint8Array({ minLength: 60, maxLength: 120 }).map((b) => Uint8Array.from([0x41, 0x47, 0x42, 0x58, 0x31, ...b])),
  );

  it('give the same bytes or the same code for every key, box and proof-of-work argument', () => {
    fc.assert(
      fc.property(key, key, boxed, fc.uint8Array({ maxLength: 12 }), fc.string({ maxLength: 8 }), fc.integer({ min: -1, max: 6 }), (a, b, x, n, s, d) => {
        same((c) => c.ed25519PublicToX25519(a));
        same((c) => c.ed25519SeedToX25519(a));
        same((c) => c.boxSealWith(a, x, b, n.length === 12 ? n : new Uint8Array(12)));
        same((c) => c.boxSealWith(a, x, b, n));
        same((c) => c.boxOpen(a, x));
        same((c) => c.powCheck(s, toHex(a), Math.abs(d) * 1000, d));
        same((c) => c.powSolve(s, 'k', d > 1 ? 1 : d));
      }),
      { numRuns: 300 },
    );
  });
});
