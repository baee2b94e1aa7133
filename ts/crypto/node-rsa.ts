/**
 * The wasm backend with mental poker's RSA exponentiations run by OpenSSL through node:crypto: the
 * private operation x^d mod n (`privateDecrypt`, raw RSA with no padding, which OpenSSL computes with
 * CRT, blinding and a check of the result by the public operation, as the core does) and the public one
 * x^e mod n (`publicEncrypt`, no padding) of the post-game checks, checkToken and checkWitness. It is
 * the same arithmetic on the same numbers, so every output is byte-identical to the core's, and every
 * refusal is the core's own: the operands are checked with its messages, and a modulus is first
 * accepted by the core (then kept, with its OpenSSL key). Key generation is OpenSSL's too (two primes
 * drawn at once, `nodeKeyParts`), and FDH results are kept per (n, context). The rest (FDH itself, blind
 * and unblind, whose inversion and gcd BigInt does no faster than the core, the AEAD, key import and its
 * checks) stays on the wrapped backend.
 *
 * Node only: the Node entry (index.ts) wires it in; the browser entry (browser.ts) never imports it
 * and keeps the WASM path.
 */
import { constants, createPrivateKey, createPublicKey, generatePrime, privateDecrypt, publicEncrypt, type KeyObject } from 'node:crypto';
import type { Crypto } from './backend.js';
import { toBase64Url } from './encoding.js';
import { disposed } from './errors.js';
import {
  bigintToFixed as bytes,
  checkLength,
  gcd,
  intRange,
  keygenFailed,
  OT_NONCE_LEN,
  rsaKeyPartsOf,
  RSA_BYTES,
  RSA_E,
  type Ot,
  type RsaKey,
  type RsaKeyParts,
} from './ot.js';

const EMPTY = new Uint8Array(0);
const RAW = constants.RSA_NO_PADDING;
/** Moduli kept with their OpenSSL keys: a game uses two. */
const MODULI_KEPT = 16;
/**
 * FDH results kept: a game asks for each of its 104 labels' h about three times (the seal, the peer's
 * token check, the witnesses, the audit), and each costs a coprimality test of 2048-bit numbers.
 */
const FDH_KEPT = 1024;

/** `c` with its OT arithmetic in OpenSSL; every other member is `c`'s own. */
export function withNodeRsa(c: Crypto): Crypto {
  const base = c.ot;
  const moduli = new Map<string, Modulus>();
  /** The modulus as OpenSSL's key and a bigint, or the core's refusal of it. */
  const modulus = (n: Uint8Array): Modulus => {
    // A trapped WASM instance makes every method of the backend throw WASM_TRAP first (backend.ts).
    c.sha256(EMPTY);
    const id = hex(n);
    let m = moduli.get(id);
    if (!m) {
      base.encodeRsaPub(n);
      m = { n: big(n), key: createPublicKey({ key: { kty: 'RSA', n: jwkInt(n), e: 'AQAB' }, format: 'jwk' }) };
      if (moduli.size >= MODULI_KEPT) moduli.delete(moduli.keys().next().value!);
      moduli.set(id, m);
    }
    return m;
  };
  // FDH is a function of (n, context) alone, so a result is kept and handed out as a copy.
  const fdhs = new Map<string, { h: Uint8Array; counter: number }>();
  const fdh: Ot['fdh'] = (n, context) => {
    const id = `${hex(n)}.${hex(context)}`;
    let r = fdhs.get(id);
    if (!r) {
      r = base.fdh(n, context);
      if (fdhs.size >= FDH_KEPT) fdhs.delete(fdhs.keys().next().value!);
      fdhs.set(id, r);
    }
    return { h: r.h.slice(), counter: r.counter };
  };
  const ot: Ot = {
    ...base,
    fdh,
    importKey: (parts) => nodeKey(c, fdh, base.importKey(parts)),
    // The platform's key is OpenSSL's two primes drawn at once; `via: 'backend'` is the wrapped
    // backend's answer (the wasm one has no generator of its own).
    generateKey: async (options) => nodeKey(c, fdh, options?.via === 'backend' ? await base.generateKey(options) : base.importKey(await nodeKeyParts())),
    checkWitness(n, context, z, r) {
      const m = modulus(n);
      const h = big(fdh(n, context).h);
      const [zv, rv] = [big(z), big(r)];
      if (rv === 0n || rv >= m.n || zv >= m.n) return false;
      return (h * powE(m, rv)) % m.n === zv && gcd(rv, m.n) === 1n;
    },
    checkToken(n, context, token) {
      const m = modulus(n);
      const t = big(token);
      if (t === 0n || t >= m.n) return false;
      return powE(m, t) === big(fdh(n, context).h);
    },
  };
  return { ...c, ot };
}

interface Modulus {
  n: bigint;
  key: KeyObject;
}

function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
}

/** A big-endian integer of any width. */
function big(b: Uint8Array): bigint {
  return b.length === 0 ? 0n : BigInt(`0x${hex(b)}`);
}

const prime1024 = (): Promise<bigint> =>
  new Promise((resolve, reject) => generatePrime(1024, { bigint: true }, (e, p) => (e ? reject(e) : resolve(p as bigint))));

/**
 * An RSA-2048 key with e = 65537 made from two 1024-bit primes that OpenSSL draws at the same time on
 * two of libuv's threads (its probable primes with the top two bits set, so n has 2048 bits): about a
 * third of the time of OpenSSL's own RSA key generation here, which draws them one after the other
 * with the extra checks of its FIPS method. The FIPS 186-5 conditions that matter are checked here:
 * gcd(e, p − 1) = gcd(e, q − 1) = 1, |p − q| > 2^924, d > 2^1024 with d = e⁻¹ mod lcm(p − 1, q − 1).
 */
export async function nodeKeyParts(): Promise<RsaKeyParts> {
  const e = BigInt(RSA_E);
  for (let tries = 0; tries < 8; tries++) {
    let p: bigint, q: bigint;
    try {
      [p, q] = await Promise.all([prime1024(), prime1024()]);
    } catch (err) {
      throw keygenFailed(`OpenSSL: ${(err as Error).message}`);
    }
    if (p < q) [p, q] = [q, p];
    if ((p * q) >> 2047n !== 1n || p - q <= 1n << 924n || (p - 1n) % e === 0n || (q - 1n) % e === 0n) continue;
    const parts = rsaKeyPartsOf(p, q);
    if (parts && big(parts.d) > 1n << 1024n) return parts;
  }
  throw keygenFailed('OpenSSL gave no usable pair of primes in 8 draws');
}

/** x^e mod n by OpenSSL, for 0 ≤ x < n. */
function powE(m: Modulus, x: bigint): bigint {
  return big(publicEncrypt({ key: m.key, padding: RAW }, bytes(x)));
}

/** Minimal big-endian octets, as a JWK's Base64urlUInt wants them. */
function jwkInt(b: Uint8Array): string {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return toBase64Url(b.subarray(i));
}

function openSslKey(p: RsaKeyParts): KeyObject {
  const { n, d, p: pp, q, dp, dq, qi } = p;
  const jwk = { kty: 'RSA', e: 'AQAB', n: jwkInt(n), d: jwkInt(d), p: jwkInt(pp), q: jwkInt(q), dp: jwkInt(dp), dq: jwkInt(dq), qi: jwkInt(qi) };
  return createPrivateKey({ key: jwk, format: 'jwk' });
}

/** Big-endian compare of two 256-byte integers: a < b. */
function below(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < RSA_BYTES; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/**
 * `inner` (already imported and checked by the backend, which keeps n, rsa_pub, the numbers and
 * disposal) with the private operation in OpenSSL. The OpenSSL key is made once, here, from a JWK.
 */
function nodeKey(c: Crypto, fdh: Ot['fdh'], inner: RsaKey): RsaKey {
  let key: KeyObject | undefined;
  const parts = inner.exportParts();
  try {
    key = openSslKey(parts);
  } catch {
    // A key the core accepted and OpenSSL does not: the core's own operation gives the same results.
    return inner;
  } finally {
    for (const v of Object.values(parts)) if (v instanceof Uint8Array) v.fill(0);
  }
  const n = inner.n;
  const live = (): KeyObject => {
    // A trapped WASM instance makes every method of the backend throw WASM_TRAP, before KEY_DISPOSED
    // (backend.ts); the operation below does not run on the instance, so this call does.
    c.sha256(EMPTY);
    if (!key) throw disposed();
    return key;
  };
  const privateOp = (x: Uint8Array): Uint8Array => {
    const k = live();
    checkLength('x', x, RSA_BYTES);
    if (!below(x, n)) throw intRange('x');
    return new Uint8Array(privateDecrypt({ key: k, padding: RAW }, x));
  };
  const token = (context: Uint8Array): Uint8Array => {
    live();
    return privateOp(fdh(n, context).h);
  };
  return {
    n,
    rsaPub: inner.rsaPub,
    privateOp,
    token,
    sealLabel(context, payload, nonce) {
      live();
      checkLength('sealed payload nonce', nonce, OT_NONCE_LEN);
      const t = token(context);
      const tk = c.ot.tokenKey(t, context);
      try {
        return { token: t, sealed: c.ot.sealPayload(tk, nonce, payload, context) };
      } finally {
        tk.fill(0);
      }
    },
    exportParts: () => inner.exportParts(),
    dispose() {
      // node:crypto cannot wipe OpenSSL's copy: it is freed when the KeyObject is collected.
      key = undefined;
      inner.dispose();
    },
  };
}
