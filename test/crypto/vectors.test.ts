// The project's own vectors (test-vectors/*.json), the same files cargo test reads, run against both
// backends. Expected values in those files come from independent implementations (see each file's
// `source`), never from this code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromHex, getCrypto, toHex, type Crypto } from '../../ts/crypto/index.js';
import { checks, errorCode, type VectorFile } from '../shared/vector-checks.js';

const vectors = (name: string) => {
  const doc = JSON.parse(readFileSync(new URL(`../../test-vectors/${name}`, import.meta.url), 'utf8'));
  expect(typeof doc.source).toBe('string');
  return (doc as VectorFile).cases;
};
const code = errorCode;

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c: Crypto = getCrypto(name);

  it('reports its name', () => expect(c.backend).toBe(name));

  for (const [file, check] of Object.entries(checks)) {
    it(file, () => check(c, vectors(file)));
  }

  it('ed25519VerifyMany gives each item the verdict its vector states', () => {
    const cases = vectors('ed25519.json').filter((v) => v.name !== 'short-seed-sign');
    const items = cases.map((v) => ({ publicKey: fromHex(v.public_key), message: fromHex(v.message), signature: fromHex(v.signature) }));
    expect(c.ed25519VerifyMany(items)).toEqual(cases.map((v) => v.valid));
    expect(cases.filter((v) => v.valid).length).toBeGreaterThan(3);
    expect(cases.filter((v) => !v.valid).length).toBeGreaterThan(3);
    expect(c.ed25519VerifyMany([])).toEqual([]);
  });

  it('commit refuses a lone surrogate instead of hashing U+FFFD', () => {
    expect(code(() => c.commit('\ud800', 'n'))).toBe('JSON_LONE_SURROGATE');
    expect(c.verifyReveal(c.commit('\ufffd', 'n'), '\ud800', 'n')).toBe(false);
  });

  it('jcs from JS values refuses what JSON.stringify would silently change', () => {
    expect(new TextDecoder().decode(c.jcsValue({ b: [undefined, -0, new Date(0)], a: undefined, ['__proto__']: 1 }))).toBe(
      '{"__proto__":1,"b":[null,0,"1970-01-01T00:00:00.000Z"]}',
    );
    expect(new TextDecoder().decode(c.jcsValue(JSON.parse('{"__proto__":1}')))).toBe('{"__proto__":1}');
    expect(code(() => c.jcsValue([NaN]))).toBe('JSON_NUMBER_RANGE');
    expect(code(() => c.jcsValue({ x: Infinity }))).toBe('JSON_NUMBER_RANGE');
    expect(code(() => c.jcsValue({ x: 1n }))).toBe('JSON_UNSUPPORTED_VALUE');
    expect(code(() => c.jcsValue(undefined))).toBe('JSON_UNSUPPORTED_VALUE');
    expect(code(() => c.jcsValue({ s: 'a\udc00' }))).toBe('JSON_LONE_SURROGATE');
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(code(() => c.jcsValue(cyclic))).toBe('JSON_TOO_DEEP');
    let deep: unknown = 1;
    for (let i = 0; i < 128; i++) deep = [deep];
    expect(code(() => c.jcsValue(deep))).toBe('JSON_TOO_DEEP');
    expect(toHex(c.jcsValueSha256({ b: 1, a: 'x' }))).toBe(toHex(c.sha256(new TextEncoder().encode('{"a":"x","b":1}'))));
  });

  it('jcs refuses raw lone surrogates in text', () => {
    expect(code(() => c.jcs('"\ud800"'))).toBe('JSON_LONE_SURROGATE');
    expect(code(() => c.jcs('{"\udc00":1}'))).toBe('JSON_LONE_SURROGATE');
    expect(new TextDecoder().decode(c.jcs('"\ud83d\ude00"'))).toBe('"😀"');
  });
});

describe.each(['wasm', 'js'])('%s backend key pairs', (name) => {
  const c: Crypto = getCrypto(name);
  it('sign exactly as ed25519Sign, and refuse use after dispose', () => {
    for (const v of vectors('ed25519.json').filter((v) => v.valid && v.seed)) {
      const kp = c.ed25519Keypair(fromHex(v.seed));
      expect(toHex(kp.publicKey)).toBe(v.public_key);
      expect(toHex(kp.sign(fromHex(v.message)))).toBe(v.signature);
      kp.dispose();
      expect(code(() => kp.sign(fromHex(v.message)))).toBe('KEY_DISPOSED');
      kp.dispose();
    }
    expect(code(() => c.ed25519Keypair(new Uint8Array(31)))).toBe('BAD_LENGTH');
  });

  it('signMany: each vector key signs the batch of every vector message as sign() does, in order', () => {
    const valid = vectors('ed25519.json').filter((v) => v.valid && v.seed);
    const messages = valid.map((v) => fromHex(v.message));
    expect(messages.some((m) => m.length === 0)).toBe(true);
    for (const v of valid) {
      const kp = c.ed25519Keypair(fromHex(v.seed));
      expect(kp.signMany([])).toEqual([]);
      expect(kp.signMany(messages).map(toHex)).toEqual(messages.map((m) => toHex(kp.sign(m))));
      expect(kp.signMany([fromHex(v.message)]).map(toHex)).toEqual([v.signature]);
      kp.dispose();
      expect(code(() => kp.signMany(messages))).toBe('KEY_DISPOSED');
    }
  });
});
