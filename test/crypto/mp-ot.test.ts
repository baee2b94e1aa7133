// The Blind-RSA token OT (ts/crypto/ot.ts) on both backends: every case of the reference's OT vectors,
// read in place from ../shared/conformance, then typed errors for bad input and agreement of the two
// backends on fresh keys. A missing file fails, unless AIGENORA_SKIP_CORPORA=1 asks to skip it, which
// vitest then reports as skipped.
import * as nodeCrypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto, type Crypto } from '../../ts/crypto/index.js';
import { intFromHex, intToHex, isWireInt, wideIntFromHex, type OtContextInput, type RsaKey } from '../../ts/crypto/ot.js';
import { checkOtVectors } from '../../ts/conformance/mp-ot.js';
import { errorCode as code } from '../shared/vector-checks.js';

const CORPUS = new URL('../../../shared/conformance/aigenora-reference/aigenora-mp-ot-vectors.json', import.meta.url);
const skip = !needShared('conformance/aigenora-reference/aigenora-mp-ot-vectors.json', "the reference's mental-poker OT vectors");
const doc = skip ? undefined : JSON.parse(readFileSync(CORPUS, 'utf8'));

const wide = (h: string) => Uint8Array.from(Buffer.from(h.length % 2 ? `0${h}` : h, 'hex'));
const input: OtContextInput = { protocolId: 'Crazy Eights', sessionId: 'mp-session', senderRole: 1, payloadType: 1, label: 'h-0' };

/** One of the vectors' keys, imported into a backend. */
function vectorKey(c: Crypto, i = 0): RsaKey {
  const s = doc.rsa_sets[i];
  return c.ot.importKey({ n: wide(s.n), e: 65537, d: wide(s.d), p: wide(s.p), q: wide(s.q), dp: wide(s.dmp1), dq: wide(s.dmq1), qi: wide(s.iqmp) });
}

function int(x: bigint): Uint8Array {
  return intFromHex(x.toString(16));
}

/** x^e mod m, square-and-multiply: the plain textbook operation, no CRT. */
function powMod(x: bigint, e: bigint, m: bigint): bigint {
  let [r, b] = [1n, x % m];
  for (; e > 0n; e >>= 1n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
  }
  return r;
}

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c: Crypto = getCrypto(name);
  const ot = c.ot;

  it.skipIf(skip)('passes every case of aigenora-mp-ot-vectors.json', () => {
    if (!doc) {
      throw new Error(`${CORPUS.pathname} is absent, so nothing can be checked; put the corpora there or set AIGENORA_SKIP_CORPORA=1 to skip`);
    }
    expect(checkOtVectors(c, doc)).toEqual({ label: 13, rsa_pub_decode: 2 });
  });

  it.skipIf(skip)('refuses bad operands with typed errors, and the checks answer false for any width', () => {
    const key = vectorKey(c);
    const n = key.n;
    const nv = BigInt(`0x${intToHex(n)}`);
    const ctx = ot.context(input);
    const [p, q] = [BigInt(`0x${doc.rsa_sets[0].p}`), BigInt(`0x${doc.rsa_sets[0].q}`)];
    const one = int(1n);
    // Moduli.
    expect(code(() => ot.fdh(n.subarray(1), ctx))).toBe('OT_MODULUS_INVALID');
    expect(code(() => ot.fdh(int(nv - 1n), ctx))).toBe('OT_MODULUS_INVALID');
    expect(code(() => ot.blind(int(nv >> 1n), ctx, one))).toBe('OT_MODULUS_INVALID');
    expect(code(() => ot.encodeRsaPub(new Uint8Array(256)))).toBe('OT_MODULUS_INVALID');
    // Operands: 256 bytes, below n; r at least 1 and a unit.
    expect(code(() => key.privateOp(n))).toBe('OT_INT_RANGE');
    expect(code(() => key.privateOp(one.subarray(1)))).toBe('BAD_LENGTH');
    expect(code(() => ot.blind(n, ctx, int(0n)))).toBe('OT_INT_RANGE');
    expect(code(() => ot.blind(n, ctx, n))).toBe('OT_INT_RANGE');
    expect(code(() => ot.blind(n, ctx, int(p)))).toBe('OT_NOT_UNIT');
    expect(code(() => ot.unblind(n, n, one))).toBe('OT_INT_RANGE');
    expect(code(() => ot.unblind(n, one, int(q * 3n)))).toBe('OT_NOT_UNIT');
    expect(code(() => ot.tokenKey(new Uint8Array(255), ctx))).toBe('BAD_LENGTH');
    expect(code(() => ot.sealPayload(new Uint8Array(31), new Uint8Array(12), one, ctx))).toBe('BAD_LENGTH');
    expect(code(() => ot.sealPayload(new Uint8Array(32), new Uint8Array(11), one, ctx))).toBe('BAD_LENGTH');
    expect(code(() => key.sealLabel(ctx, one, new Uint8Array(13)))).toBe('BAD_LENGTH');
    expect(code(() => ot.openPayload(new Uint8Array(32), new Uint8Array(27), ctx))).toBe('AEAD_OPEN_FAILED');
    expect(code(() => ot.openSealed(one, ctx, new Uint8Array(0)))).toBe('AEAD_OPEN_FAILED');
    expect(code(() => ot.fdhCandidate(ctx, -1))).toBe('OT_INT_RANGE');
    expect(code(() => ot.fdhCandidate(ctx, 2 ** 32))).toBe('OT_INT_RANGE');
    expect(code(() => ot.fdhCandidate(ctx, 0.5))).toBe('OT_INT_RANGE');
    // Context: roles and types 1 or 2 (a WASM u8 would have wrapped 257 to 1), no lone surrogates.
    expect(code(() => ot.context({ ...input, senderRole: 257 as 1 }))).toBe('OT_CONTEXT_INVALID');
    expect(code(() => ot.context({ ...input, payloadType: 0 as 1 }))).toBe('OT_CONTEXT_INVALID');
    expect(code(() => ot.context({ ...input, label: '\ud800' }))).toBe('JSON_LONE_SURROGATE');
    // Checks never throw for a bad value, only for a bad modulus.
    expect(ot.checkWitness(n, ctx, new Uint8Array(0), new Uint8Array(0))).toBe(false);
    expect(ot.checkWitness(n, ctx, new Uint8Array(600).fill(1), one)).toBe(false);
    expect(ot.checkToken(n, ctx, new Uint8Array(300).fill(255))).toBe(false);
    expect(ot.checkToken(n, ctx, new Uint8Array(0))).toBe(false);
    // r = 1 makes z = h, a valid witness; leading zeros do not change a value.
    const { h } = ot.fdh(n, ctx);
    expect(ot.checkWitness(n, ctx, h, Uint8Array.of(0, 0, 1))).toBe(true);
    expect(ot.checkToken(n, ctx, new Uint8Array([0, 0, ...key.token(ctx)]))).toBe(true);
    key.dispose();
    expect(code(() => key.privateOp(one))).toBe('KEY_DISPOSED');
    expect(code(() => key.exportParts())).toBe('KEY_DISPOSED');
    key.dispose();
  });

  it.skipIf(skip)('imports a key only when every number agrees', () => {
    const s = doc.rsa_sets[0];
    const good = { n: wide(s.n), e: 65537 as const, d: wide(s.d), p: wide(s.p), q: wide(s.q), dp: wide(s.dmp1), dq: wide(s.dmq1), qi: wide(s.iqmp) };
    const imp = (over: Partial<typeof good> | { e: number }) => ot.importKey({ ...good, ...over } as typeof good);
    const k = imp({});
    expect(intToHex(k.n)).toBe(s.n);
    const parts = k.exportParts();
    expect([parts.n.length, parts.d.length, parts.p.length, parts.qi.length]).toEqual([256, 256, 128, 128]);
    expect(intToHex(ot.importKey(parts).token(ot.context(input)))).toBe(intToHex(k.token(ot.context(input))));
    k.dispose();
    expect(code(() => imp({ e: 3 }))).toBe('OT_KEY_INVALID');
    expect(code(() => imp({ dp: good.dq }))).toBe('OT_KEY_INVALID');
    expect(code(() => imp({ qi: good.dp }))).toBe('OT_KEY_INVALID');
    expect(code(() => imp({ p: good.q, q: good.p }))).toBe('OT_KEY_INVALID');
    expect(code(() => imp({ q: good.p }))).toBe('OT_KEY_INVALID');
    expect(code(() => imp({ d: wide(s.dmp1) }))).toBe('OT_KEY_INVALID');
    expect(code(() => imp({ n: new Uint8Array(257).fill(1) }))).toBe('OT_KEY_INVALID');
    expect(code(() => imp({ n: wide(doc.rsa_sets[1].n) }))).toBe('OT_KEY_INVALID');
  });

  it.skipIf(skip)('decodes rsa_pub as the reference does, and no more loosely', () => {
    const n = doc.rsa_sets[0].n as string;
    const ok = (w: string | object) => intToHex(ot.decodeRsaPub(w).n);
    expect(ok(`{"e":65537,"n":"${n}"}`)).toBe(n);
    expect(ok({ n, e: 65537 })).toBe(n);
    for (const e of ['65537.0', '6.5537e4', '"065537"', '"65537"']) expect(ok(`{"n":"${n}","e":${e}}`), e).toBe(n);
    expect(ok(`{"e":65537,"n":"0000${n.toUpperCase()}"}`)).toBe(n);
    // A repeated key: the last one counts, as in the reference's json.loads.
    expect(ok(`{"e":3,"e":65537,"n":"${n}"}`)).toBe(n);
    expect(code(() => ot.decodeRsaPub(`{"e":65537,"n":"${n}","e":3}`))).toBe('OT_RSA_PUB_EXPONENT');
    for (const [w, want] of [
      ['not json', 'OT_RSA_PUB_MALFORMED'],
      ['[]', 'OT_RSA_PUB_MALFORMED'],
      ['null', 'OT_RSA_PUB_MALFORMED'],
      ['{"e":65537}', 'OT_RSA_PUB_MALFORMED'],
      [`{"e":65537,"n":"${n}","x":1}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":"0x10001","n":"${n}"}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":" 65537","n":"${n}"}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":true,"n":"${n}"}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":65537.5,"n":"${n}"}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":1e400,"n":"${n}"}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":65537,"n":"0x${n}"}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":65537,"n":"${n} "}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":65537,"n":""}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":65537,"n":12345}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":65537,"n":"\\ud800"}`, 'OT_RSA_PUB_MALFORMED'],
      [`{"e":-3,"n":"${n}"}`, 'OT_RSA_PUB_EXPONENT'],
      [`{"e":"3","n":"${n}"}`, 'OT_RSA_PUB_EXPONENT'],
      [`{"e":65537,"n":"0"}`, 'OT_MODULUS_INVALID'],
      [`{"e":65537,"n":"${n.slice(0, -1)}0"}`, 'OT_MODULUS_INVALID'],
    ] as const) {
      expect(
        code(() => ot.decodeRsaPub(w)),
        w.slice(0, 60),
      ).toBe(want);
    }
    expect(code(() => ot.decodeRsaPub({ e: 65537n, n }))).toBe('OT_RSA_PUB_MALFORMED');
    // e is checked before n's size, as in the reference.
    expect(() => ot.decodeRsaPub(`{"e":3,"n":"1"}`)).toThrow('OT_RSA_PUB_EXPONENT: RSA public exponent must be 65537, got 3');
  });

  it('runs a whole OT on a fresh key, and refuses what belongs to another label', async () => {
    const key = await ot.generateKey();
    const n = ot.decodeRsaPub(key.rsaPub).n;
    expect(n).toEqual(key.n);
    const ctx = ot.context({ ...input, senderRole: 2, payloadType: 2, label: 'g-7' });
    const other = ot.context({ ...input, senderRole: 2, payloadType: 2, label: 'g-8' });
    const payload = crypto.getRandomValues(new Uint8Array(32));
    const { token, sealed } = key.sealLabel(ctx, payload, crypto.getRandomValues(new Uint8Array(12)));
    const r = ot.randomUnit(n);
    const z = ot.blind(n, ctx, r);
    const t = ot.unblind(n, key.privateOp(z), r);
    expect(t).toEqual(token);
    expect(ot.openSealed(t, ctx, sealed)).toEqual(payload);
    expect([ot.checkToken(n, ctx, t), ot.checkWitness(n, ctx, z, r)]).toEqual([true, true]);
    expect([ot.checkToken(n, other, t), ot.checkWitness(n, other, z, r)]).toEqual([false, false]);
    expect(code(() => ot.openSealed(t, other, sealed))).toBe('AEAD_OPEN_FAILED');
    key.dispose();
  });
});

describe('wasm and js OT', () => {
  const [w, j] = [getCrypto('wasm'), getCrypto('js')];

  it("agree on every operation for fresh keys from both generators, each importing the other's key", async () => {
    for (const [maker, via] of [
      [w, 'platform'],
      [j, 'platform'],
      [j, 'backend'],
    ] as const) {
      const made = await maker.ot.generateKey({ via });
      const parts = made.exportParts();
      const [kw, kj] = [w.ot.importKey(parts), j.ot.importKey(parts)];
      expect(kj.n).toEqual(kw.n);
      expect(kj.rsaPub).toBe(kw.rsaPub);
      const n = kw.n;
      for (let i = 0; i < 3; i++) {
        const c = { protocolId: `P${i}`, sessionId: 'ß-session', senderRole: (1 + (i % 2)) as 1 | 2, payloadType: 2 as const, label: `g-${i}` };
        const ctx = w.ot.context(c);
        expect(j.ot.context(c)).toEqual(ctx);
        expect(j.ot.fdh(n, ctx)).toEqual(w.ot.fdh(n, ctx));
        const payload = crypto.getRandomValues(new Uint8Array(32));
        const nonce = crypto.getRandomValues(new Uint8Array(12));
        const a = kw.sealLabel(ctx, payload, nonce);
        expect(kj.sealLabel(ctx, payload, nonce)).toEqual(a);
        expect(made.token(ctx)).toEqual(a.token);
        expect(j.ot.tokenKey(a.token, ctx)).toEqual(w.ot.tokenKey(a.token, ctx));
        const r = j.ot.randomUnit(n);
        const z = w.ot.blind(n, ctx, r);
        expect(j.ot.blind(n, ctx, r)).toEqual(z);
        const y = kw.privateOp(z);
        expect(kj.privateOp(z)).toEqual(y);
        expect(j.ot.unblind(n, y, r)).toEqual(w.ot.unblind(n, y, r));
        const bad = z.slice();
        bad[255]! ^= 1;
        for (const zz of [z, bad]) expect(j.ot.checkWitness(n, ctx, zz, r)).toBe(w.ot.checkWitness(n, ctx, zz, r));
        const forged = a.token.slice();
        forged[10]! ^= 4;
        for (const t of [a.token, forged]) expect(j.ot.checkToken(n, ctx, t)).toBe(w.ot.checkToken(n, ctx, t));
      }
      for (const k of [made, kw, kj]) k.dispose();
    }
  });

  it('the wasm backend has no key generator of its own', async () => {
    await expect(w.ot.generateKey({ via: 'backend' })).rejects.toThrow(/^OT_KEYGEN_FAILED: /);
  });

  it("the private operation equals c^d mod n by BigInt and node:crypto's raw RSA on fresh keys", async () => {
    const big = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
    const b64u = (b: Uint8Array) => Buffer.from(b).toString('base64url');
    for (let k = 0; k < 2; k++) {
      const made = await w.ot.generateKey();
      const parts = made.exportParts();
      const kj = j.ot.importKey(parts);
      const nodeKey = nodeCrypto.createPrivateKey({
        key: {
          kty: 'RSA',
          n: b64u(parts.n),
          e: 'AQAB',
          d: b64u(parts.d),
          p: b64u(parts.p),
          q: b64u(parts.q),
          dp: b64u(parts.dp),
          dq: b64u(parts.dq),
          qi: b64u(parts.qi),
        },
        format: 'jwk',
      });
      const [n, d] = [big(parts.n), big(parts.d)];
      // Edge values, then random ones below n; more than one blinding pair serves (32 operations).
      const xs = [0n, 1n, 2n, n - 1n, n - 2n, big(parts.p), big(parts.q)];
      for (let i = 0; i < 30; i++) xs.push(big(crypto.getRandomValues(new Uint8Array(256))) % n);
      for (const x of xs) {
        const xb = int(x);
        const y = made.privateOp(xb);
        expect(intToHex(y), x.toString(16).slice(0, 16)).toBe(intToHex(int(powMod(x, d, n))));
        expect(y).toEqual(kj.privateOp(xb));
        expect(y).toEqual(new Uint8Array(nodeCrypto.privateDecrypt({ key: nodeKey, padding: nodeCrypto.constants.RSA_NO_PADDING }, xb)));
      }
      made.dispose();
      kj.dispose();
    }
  });

  it('wire integers: 512 lowercase hex both ways', () => {
    const x = intFromHex('abc');
    expect(x.length).toBe(256);
    expect(intToHex(x)).toBe('abc'.padStart(512, '0'));
    expect(isWireInt(intToHex(x))).toBe(true);
    expect(isWireInt('ABC'.padStart(512, '0'))).toBe(false);
    for (const bad of ['', 'xyz', '1'.repeat(513), '0x1'])
      expect(
        code(() => intFromHex(bad)),
        bad.slice(0, 8),
      ).toBe('OT_INT_ENCODING');
    expect(code(() => intToHex(new Uint8Array(255)))).toBe('OT_INT_ENCODING');
    expect([...wideIntFromHex('1' + '0'.repeat(512))]).toEqual([1, ...new Array(256).fill(0)]);
    expect([...wideIntFromHex('abc')]).toEqual([0x0a, 0xbc]);
    for (const bad of ['', '0x1', ' 1', '1_0'])
      expect(
        code(() => wideIntFromHex(bad)),
        bad,
      ).toBe('OT_INT_ENCODING');
  });

  it('the WASM instance keeps working after each kind of error', () => {
    const ot = w.ot;
    const n = intFromHex('f'.repeat(512));
    const ctx = ot.context(input);
    for (const f of [
      () => ot.fdh(new Uint8Array(3), ctx),
      () => ot.blind(n, ctx, new Uint8Array(256)),
      () => ot.decodeRsaPub('{'),
      () => ot.openSealed(new Uint8Array(256), ctx, new Uint8Array(40)),
      () => ot.importKey({ n, e: 65537, d: n, p: n, q: n, dp: n, dq: n, qi: n }),
    ]) {
      expect(code(f)).toMatch(/^(OT_|AEAD_)/);
      const { h } = ot.fdh(n, ctx);
      expect(ot.checkWitness(n, ctx, h, Uint8Array.of(1))).toBe(true);
    }
  });
});
