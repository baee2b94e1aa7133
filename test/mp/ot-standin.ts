/**
 * A test-only Blind-RSA OT on BigInt, standing in for `crypto.ot` of a backend that does not have it
 * yet, so the engine mode can be exercised meanwhile. Suites name it in their titles; it is not either
 * backend, and a pass with it says nothing about them.
 */
import { generateKeyPairSync } from 'node:crypto';
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { CryptoError } from '../../ts/crypto/errors.js';
import type { Crypto } from '../../ts/crypto/backend.js';
import type { Ot, OtContextInput, RsaKey, RsaKeyParts } from '../../ts/crypto/ot.js';

const te = new TextEncoder();
const b2n = (b: Uint8Array) => BigInt(`0x0${Buffer.from(b).toString('hex')}`);
const n2b = (x: bigint, w = 256) => Uint8Array.from(Buffer.from(x.toString(16).padStart(2 * w, '0'), 'hex'));
const gcd = (a: bigint, b: bigint): bigint => {
  while (b) [a, b] = [b, a % b];
  return a;
};
const pow = (b: bigint, e: bigint, m: bigint) => {
  let r = 1n;
  b %= m;
  while (e) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
};
const inv = (a: bigint, m: bigint) => {
  let [r0, r1, s0, s1] = [m, a % m, 0n, 1n];
  while (r1) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  return ((s0 % m) + m) % m;
};
const u32 = (n: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
};
const cat = (...p: Uint8Array[]) => {
  const o = new Uint8Array(p.reduce((s, x) => s + x.length, 0));
  let i = 0;
  for (const x of p) {
    o.set(x, i);
    i += x.length;
  }
  return o;
};
const aeadFail = () => new CryptoError('AEAD_OPEN_FAILED', 'decryption failed');

function fdh(n: Uint8Array, ctx: Uint8Array) {
  const N = b2n(n);
  for (let c = 0; ; c++) {
    let out = new Uint8Array(0);
    for (let k = 0; out.length < 256; k++) out = cat(out, sha256(cat(ctx, u32(c), u32(k))));
    const h = b2n(out.subarray(0, 256));
    if (h > 0n && h < N && gcd(h, N) === 1n) return { h: n2b(h), counter: c };
  }
}
const tokenKey = (t: Uint8Array, ctx: Uint8Array) => hkdf(sha256, cat(t, ctx), undefined, te.encode('aigenora.mp.tokenkey.v1'), 32);
const sealPayload = (k: Uint8Array, nonce: Uint8Array, p: Uint8Array, ctx: Uint8Array) => cat(nonce, chacha20poly1305(k, nonce, ctx).encrypt(p));
const openPayload = (k: Uint8Array, sealed: Uint8Array, ctx: Uint8Array) => {
  if (sealed.length < 28) throw aeadFail();
  try {
    return chacha20poly1305(k, sealed.subarray(0, 12), ctx).decrypt(sealed.subarray(12));
  } catch {
    throw aeadFail();
  }
};
const encodeRsaPub = (n: Uint8Array) => `{"e":65537,"n":"${Buffer.from(n).toString('hex')}"}`;

function importKey(parts: RsaKeyParts): RsaKey {
  const [N, D, P, Q] = [b2n(parts.n), b2n(parts.d), b2n(parts.p), b2n(parts.q)];
  const n = n2b(N);
  const [dp, dq, qi] = [D % (P - 1n), D % (Q - 1n), inv(Q, P)];
  const privateOp = (x: Uint8Array) => {
    const X = b2n(x);
    if (x.length !== 256 || X >= N) throw new CryptoError('OT_INT_RANGE', 'x out of range');
    const m1 = pow(X, dp, P);
    const m2 = pow(X, dq, Q);
    return n2b(m2 + Q * ((((m1 - m2) % P) + P) * qi % P));
  };
  const token = (ctx: Uint8Array) => privateOp(fdh(n, ctx).h);
  return {
    n,
    rsaPub: encodeRsaPub(n),
    privateOp,
    token,
    sealLabel(ctx, payload, nonce) {
      const t = token(ctx);
      return { token: t, sealed: sealPayload(tokenKey(t, ctx), nonce, payload, ctx) };
    },
    exportParts: () => parts,
    dispose() {},
  };
}

export const standinOt: Ot = {
  context(i: OtContextInput) {
    const [p, s, l] = [te.encode(i.protocolId), te.encode(i.sessionId), te.encode(i.label)];
    return cat(te.encode('aigenora.mp.v1'), u32(p.length), p, u32(s.length), s, Uint8Array.of(i.senderRole, i.payloadType), u32(l.length), l);
  },
  fdh,
  fdhCandidate: () => {
    throw new Error('not in the stand-in');
  },
  async generateKey() {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 });
    const j = privateKey.export({ format: 'jwk' });
    const b = (s: string | undefined) => Uint8Array.from(Buffer.from(s!, 'base64url'));
    return importKey({ n: b(j.n), e: 65537, d: b(j.d), p: b(j.p), q: b(j.q), dp: b(j.dp), dq: b(j.dq), qi: b(j.qi) });
  },
  importKey,
  tokenKey,
  sealPayload,
  openPayload,
  openSealed: (t, ctx, sealed) => openPayload(tokenKey(t, ctx), sealed, ctx),
  randomUnit(n) {
    const N = b2n(n);
    for (;;) {
      const r = b2n(globalThis.crypto.getRandomValues(new Uint8Array(256))) % N;
      if (r > 0n && gcd(r, N) === 1n) return n2b(r);
    }
  },
  blind: (n, ctx, r) => {
    const N = b2n(n);
    return n2b((b2n(fdh(n, ctx).h) * pow(b2n(r), 65537n, N)) % N);
  },
  unblind: (n, y, r) => {
    const N = b2n(n);
    if (b2n(y) >= N) throw new CryptoError('OT_INT_RANGE', 'y out of range');
    return n2b((b2n(y) * inv(b2n(r), N)) % N);
  },
  checkWitness(n, ctx, z, r) {
    const [N, R] = [b2n(n), b2n(r)];
    if (R < 1n || R >= N || gcd(R, N) !== 1n) return false;
    return b2n(z) === (b2n(fdh(n, ctx).h) * pow(R, 65537n, N)) % N;
  },
  checkToken(n, ctx, t) {
    const [N, T] = [b2n(n), b2n(t)];
    if (T < 1n || T >= N) return false;
    return pow(T, 65537n, N) === b2n(fdh(n, ctx).h);
  },
  encodeRsaPub,
  decodeRsaPub(w) {
    const o = (typeof w === 'string' ? JSON.parse(w) : w) as { e: unknown; n: string };
    if (o.e !== 65537) throw new CryptoError('OT_RSA_PUB_EXPONENT', 'e');
    const n = n2b(BigInt(`0x${o.n}`));
    if (!(n[0]! & 0x80) || !(n[255]! & 1)) throw new CryptoError('OT_MODULUS_INVALID', 'n');
    return { e: 65537, n };
  },
};

/** The backend with its own `ot` when it has one, else with the stand-in; `standin` says which. */
export function withOt(c: Crypto): { crypto: Crypto & { ot: Ot }; standin: boolean } {
  const own = (c as { ot?: Ot }).ot;
  return own ? { crypto: c as Crypto & { ot: Ot }, standin: false } : { crypto: Object.assign(Object.create(c) as Crypto, { ot: standinOt }) as Crypto & { ot: Ot }, standin: true };
}
