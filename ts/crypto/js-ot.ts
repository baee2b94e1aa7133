/**
 * The pure-JS twin of crates/core/src/ot.rs, on BigInt, @noble/hashes and @noble/ciphers: same
 * results, same checks in the same order, same error codes. BigInt arithmetic is not constant-time;
 * the private operation (CRT, as the core's) blinds its input by a factor drawn from a per-key secret
 * and the input, and the wasm backend is the one to use for a Sender's key where timing matters.
 */
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, utf8 } from './encoding.js';
import { CryptoError, disposed } from './errors.js';
import {
  bigintToFixed as bytes,
  checkContextInput,
  checkCounter,
  checkKeyExponent,
  checkLength,
  fdhExhausted,
  gcd,
  intRange,
  invert,
  keyInvalid,
  modulusInvalid,
  notUnit,
  OT_NONCE_LEN,
  platformKeyParts,
  randomBytes,
  rsaPubExponent,
  rsaPubMalformed,
  rsaKeyPartsOf,
  rsaPubText,
  RSA_BYTES,
  RSA_E,
  type Ot,
  type RsaKey,
  type RsaKeyParts,
} from './ot.js';

const E = BigInt(RSA_E);
const HALF = RSA_BYTES / 2;
const MAGIC = utf8('aigenora.mp.v1');
const INFO = utf8('aigenora.mp.tokenkey.v1');

function big(b: Uint8Array): bigint {
  let hex = '';
  for (let i = 0; i < b.length; i++) hex += b[i]!.toString(16).padStart(2, '0');
  return hex === '' ? 0n : BigInt('0x' + hex);
}

function bitLength(x: bigint): number {
  return x === 0n ? 0 : x.toString(2).length;
}

function powMod(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n;
  let b = base % m;
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
  }
  return result;
}

/** A checked modulus: 256 bytes, 2048 bits, odd (the core's messages). */
function modulus(n: Uint8Array): bigint {
  if (n.length !== RSA_BYTES) throw modulusInvalid(`RSA modulus must be ${RSA_BYTES} bytes, got ${n.length}`);
  const v = big(n);
  const bits = bitLength(v);
  if (bits !== 2048) throw modulusInvalid(`RSA modulus must be 2048-bit, got ${bits}`);
  if ((v & 1n) === 0n) throw modulusInvalid('RSA modulus must be an odd integer > 1');
  return v;
}

function operand(what: 'x' | 'y' | 'r', b: Uint8Array, n: bigint): bigint {
  checkLength(what, b, RSA_BYTES);
  const v = big(b);
  if (v >= n) throw intRange(what);
  return v;
}

function unit(r: Uint8Array, n: bigint): bigint {
  const v = operand('r', r, n);
  if (v === 0n) throw intRange('r');
  if (gcd(v, n) !== 1n) throw notUnit();
  return v;
}

function mgf1(seed: Uint8Array): Uint8Array {
  const out = new Uint8Array(RSA_BYTES);
  for (let i = 0; i < RSA_BYTES / 32; i++) {
    out.set(sha256(concatBytes(seed, u32(i))), 32 * i);
  }
  return out;
}

function u32(x: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, x);
  return b;
}

function fdhCandidate(context: Uint8Array, counter: number): Uint8Array {
  checkCounter(counter);
  return mgf1(concatBytes(context, u32(counter)));
}

function fdh(n: bigint, context: Uint8Array): { h: bigint; counter: number } {
  for (let counter = 0; counter <= 0xffffffff; counter++) {
    const h = big(fdhCandidate(context, counter));
    if (h !== 0n && h < n && gcd(h, n) === 1n) return { h, counter };
  }
  throw fdhExhausted();
}

function tokenKey(token: Uint8Array, context: Uint8Array): Uint8Array {
  checkLength('token', token, RSA_BYTES);
  return hkdf(sha256, concatBytes(token, context), undefined, INFO, 32);
}

function sealPayload(key: Uint8Array, nonce: Uint8Array, payload: Uint8Array, context: Uint8Array): Uint8Array {
  checkLength('token key', key, 32);
  checkLength('sealed payload nonce', nonce, OT_NONCE_LEN);
  return concatBytes(nonce, chacha20poly1305(key, nonce, context).encrypt(payload));
}

function openPayload(key: Uint8Array, sealed: Uint8Array, context: Uint8Array): Uint8Array {
  checkLength('token key', key, 32);
  const failed = () => new CryptoError('AEAD_OPEN_FAILED', 'decryption failed: ciphertext, tag, nonce, key or associated data do not match');
  if (sealed.length < OT_NONCE_LEN + 16) throw failed();
  try {
    return chacha20poly1305(key, sealed.subarray(0, OT_NONCE_LEN), context).decrypt(sealed.subarray(OT_NONCE_LEN));
  } catch {
    throw failed();
  }
}

/** A value of any width if it is below n. */
function belowN(b: Uint8Array, n: bigint): bigint | undefined {
  const v = big(b);
  return v < n ? v : undefined;
}

const trimmed = (b: Uint8Array) => big(b);

interface KeyNumbers {
  n: bigint;
  d: bigint;
  p: bigint;
  q: bigint;
  dp: bigint;
  dq: bigint;
  qi: bigint;
}

/** The same checks as the core's import, in its order; OT_KEY_INVALID for any disagreement. */
function checkParts(parts: RsaKeyParts): KeyNumbers {
  checkKeyExponent(parts.e);
  const n = big(parts.n);
  if (bitLength(n) > 2048) throw keyInvalid('n is wider than 2048 bits');
  try {
    modulus(bytes(n));
  } catch (e) {
    throw keyInvalid((e as Error).message.replace(/^OT_MODULUS_INVALID: /, ''));
  }
  for (const k of ['d', 'p', 'q'] as const) if (bitLength(big(parts[k])) > 2048) throw keyInvalid(`${k} is wider than n`);
  const [d, p, q] = [big(parts.d), big(parts.p), big(parts.q)];
  const bad = (why: string) => keyInvalid(`the numbers do not make an RSA key: ${why}`);
  if (p < 2n || q < 2n || p === q || (p & 1n) === 0n || (q & 1n) === 0n) throw bad('invalid prime');
  if (p * q !== n) throw bad('invalid modulus');
  if (bitLength(p) > 1024 || bitLength(q) > 1024) throw bad('invalid prime');
  if (d >= n) throw bad('invalid exponent');
  if ((d * E) % (p - 1n) !== 1n || (d * E) % (q - 1n) !== 1n) throw bad('invalid exponent');
  const k: KeyNumbers = { n, d, p, q, dp: d % (p - 1n), dq: d % (q - 1n), qi: invert(q, p) ?? 0n };
  if (trimmed(parts.dp) !== k.dp) throw keyInvalid('dp does not match p, q and d');
  if (trimmed(parts.dq) !== k.dq) throw keyInvalid('dq does not match p, q and d');
  if (trimmed(parts.qi) !== k.qi) throw keyInvalid('qi does not match p, q and d');
  return k;
}

function jsKey(k: KeyNumbers): RsaKey {
  let secret: Uint8Array | undefined = randomBytes(32);
  const n = bytes(k.n);
  const live = () => {
    if (!secret) throw disposed();
    return secret;
  };
  /** A unit b drawn from SHA-256(secret ‖ x ‖ counter) expansions, and b⁻¹. */
  const blinding = (x: Uint8Array): [bigint, bigint] => {
    const seed = sha256(concatBytes(live(), x));
    for (let i = 0; i < 256; i++) {
      const b = big(mgf1(concatBytes(seed, u32(i))));
      const inv = b !== 0n && b < k.n ? invert(b, k.n) : undefined;
      if (inv !== undefined) return [b, inv];
    }
    throw keyInvalid('no blinding factor found');
  };
  const privateOp = (x: Uint8Array): Uint8Array => {
    // A disposed key is refused before its operand is read, as the core does.
    live();
    const c = operand('x', x, k.n);
    const [b, bInv] = blinding(x);
    const blinded = (c * powMod(b, E, k.n)) % k.n;
    const m1 = powMod(blinded % k.p, k.dp, k.p);
    const m2 = powMod(blinded % k.q, k.dq, k.q);
    const h = (((((m1 - m2) % k.p) + k.p) % k.p) * k.qi) % k.p;
    const y = m2 + h * k.q;
    if (powMod(y, E, k.n) !== blinded) throw keyInvalid('the private operation failed its check');
    return bytes((y * bInv) % k.n);
  };
  const token = (context: Uint8Array) => {
    live();
    return privateOp(bytes(fdh(k.n, context).h));
  };
  return {
    n,
    rsaPub: encodeRsaPub(n),
    privateOp,
    token,
    sealLabel(context, payload, nonce) {
      live();
      checkLength('sealed payload nonce', nonce, OT_NONCE_LEN);
      const t = token(context);
      return { token: t, sealed: sealPayload(tokenKey(t, context), nonce, payload, context) };
    },
    exportParts() {
      live();
      return {
        n: bytes(k.n),
        e: RSA_E,
        d: bytes(k.d),
        p: bytes(k.p, HALF),
        q: bytes(k.q, HALF),
        dp: bytes(k.dp, HALF),
        dq: bytes(k.dq, HALF),
        qi: bytes(k.qi, HALF),
      };
    },
    dispose() {
      secret?.fill(0);
      secret = undefined;
    },
  };
}

function importKey(parts: RsaKeyParts): RsaKey {
  const key = jsKey(checkParts(parts));
  try {
    key.privateOp(bytes(2n));
  } catch {
    throw keyInvalid('a trial private operation failed');
  }
  return key;
}

function encodeRsaPub(n: Uint8Array): string {
  modulus(n);
  let hex = '';
  for (let i = 0; i < n.length; i++) hex += n[i]!.toString(16).padStart(2, '0');
  return `{"e":65537,"n":"${hex}"}`;
}

/** Whether e is 65537, and e as the reference's message shows it (the core's rules). */
function exponent(e: unknown): [boolean, string] {
  if (typeof e === 'number') {
    if (!Number.isInteger(e)) throw rsaPubMalformed('rsa_pub e must be an integer');
    return [e === RSA_E, BigInt(e).toString()];
  }
  if (typeof e === 'string' && /^[0-9]+$/.test(e)) {
    const shown = e.replace(/^0+/, '') || '0';
    return [shown === '65537', shown];
  }
  throw rsaPubMalformed('rsa_pub e must be the number 65537 or the string "65537"');
}

function decodeRsaPub(wire: string | object): { e: typeof RSA_E; n: Uint8Array } {
  const text = rsaPubText(wire);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw rsaPubMalformed(`rsa_pub is not JSON: ${(e as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw rsaPubMalformed('rsa_pub must be a JSON object');
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length !== 2 || !keys.includes('e') || !keys.includes('n')) throw rsaPubMalformed('rsa_pub must have exactly the keys e and n');
  const [eOk, eShown] = exponent(o['e']);
  const nHex = o['n'];
  if (typeof nHex !== 'string' || !/^[0-9a-fA-F]+$/.test(nHex)) throw rsaPubMalformed('rsa_pub n must be a string of hex digits');
  if (!eOk) throw rsaPubExponent(eShown);
  const nv = BigInt('0x' + nHex);
  const bits = bitLength(nv);
  if (bits !== 2048) throw modulusInvalid(`RSA modulus must be 2048-bit, got ${bits}`);
  if ((nv & 1n) === 0n) throw modulusInvalid('RSA modulus must be an odd integer > 1');
  return { e: RSA_E, n: bytes(nv) };
}

// Miller–Rabin with random bases; 1024-bit candidates that survive trial division and 16 rounds are
// prime except with negligible probability.
const SMALL_PRIMES: bigint[] = [];
for (let i = 3; SMALL_PRIMES.length < 300; i += 2) if (SMALL_PRIMES.every((p) => BigInt(i) % p !== 0n)) SMALL_PRIMES.push(BigInt(i));

function probablePrime(c: bigint): boolean {
  for (const p of SMALL_PRIMES) if (c % p === 0n) return false;
  let d = c - 1n;
  let s = 0;
  while ((d & 1n) === 0n) {
    d >>= 1n;
    s++;
  }
  for (let round = 0; round < 16; round++) {
    const a = (big(randomBytes(HALF)) % (c - 3n)) + 2n;
    let x = powMod(a, d, c);
    if (x === 1n || x === c - 1n) continue;
    let witness = true;
    for (let i = 1; i < s && witness; i++) {
      x = (x * x) % c;
      if (x === c - 1n) witness = false;
    }
    if (witness) return false;
  }
  return true;
}

function randomPrime(): bigint {
  for (;;) {
    // Top two bits set, so that a product of two has exactly 2048 bits; odd.
    const c = big(randomBytes(HALF)) | (3n << 1022n) | 1n;
    if ((c - 1n) % E !== 0n && probablePrime(c)) return c;
  }
}

function generateJs(): RsaKey {
  for (;;) {
    const [p, q] = [randomPrime(), randomPrime()];
    if (p === q) continue;
    const parts = rsaKeyPartsOf(p, q);
    if (parts) return importKey(parts);
  }
}

export const jsOt: Ot = {
  context(c) {
    checkContextInput(c);
    const str = (s: string) => {
      const b = utf8(s);
      return concatBytes(u32(b.length), b);
    };
    return concatBytes(MAGIC, str(c.protocolId), str(c.sessionId), Uint8Array.of(c.senderRole, c.payloadType), str(c.label));
  },
  fdh(n, context) {
    const { h, counter } = fdh(modulus(n), context);
    return { h: bytes(h), counter };
  },
  fdhCandidate,
  async generateKey(options) {
    if (options?.via === 'backend') return generateJs();
    if (!globalThis.crypto?.subtle && options?.via !== 'platform') return generateJs();
    return importKey(await platformKeyParts());
  },
  importKey,
  tokenKey,
  sealPayload,
  openPayload,
  openSealed: (token, context, sealed) => openPayload(tokenKey(token, context), sealed, context),
  randomUnit(n) {
    const nv = modulus(n);
    for (let i = 0; i < 128; i++) {
      const r = randomBytes(RSA_BYTES);
      const v = big(r);
      if (v !== 0n && v < nv && gcd(v, nv) === 1n) return r;
    }
    throw notUnit();
  },
  blind(n, context, r) {
    const nv = modulus(n);
    const rv = unit(r, nv);
    return bytes((fdh(nv, context).h * powMod(rv, E, nv)) % nv);
  },
  unblind(n, y, r) {
    const nv = modulus(n);
    const yv = operand('y', y, nv);
    const rInv = invert(unit(r, nv), nv);
    if (rInv === undefined) throw notUnit();
    return bytes((yv * rInv) % nv);
  },
  checkWitness(n, context, z, r) {
    const nv = modulus(n);
    const { h } = fdh(nv, context);
    const rv = belowN(r, nv);
    if (rv === undefined || rv === 0n || gcd(rv, nv) !== 1n) return false;
    const zv = belowN(z, nv);
    return zv !== undefined && (h * powMod(rv, E, nv)) % nv === zv;
  },
  checkToken(n, context, token) {
    const nv = modulus(n);
    const t = belowN(token, nv);
    if (t === undefined || t === 0n) return false;
    return powMod(t, E, nv) === fdh(nv, context).h;
  },
  encodeRsaPub,
  decodeRsaPub,
};
