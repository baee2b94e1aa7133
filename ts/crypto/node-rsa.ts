/**
 * The wasm backend with mental poker's RSA exponentiations run by OpenSSL through node:crypto: the
 * private operation x^d mod n (`privateDecrypt`, raw RSA with no padding, which OpenSSL computes with
 * CRT, blinding and a check of the result by the public operation, as the core does) and the public one
 * x^e mod n (`publicEncrypt`, no padding) of the post-game checks, checkToken and checkWitness. It is
 * the same arithmetic on the same numbers, so every output is byte-identical to the core's, and every
 * refusal is the core's own: the operands are checked with its messages, and a modulus is first
 * accepted by the core (then kept, with its OpenSSL key). The rest (FDH, blind and unblind, whose
 * inversion and gcd BigInt does no faster than the core, the AEAD, key import and its checks) stays on
 * the wrapped backend.
 *
 * Node only: the Node entry (index.ts) wires it in; the browser entry (browser.ts) never imports it
 * and keeps the WASM path.
 */
import { constants, createPrivateKey, createPublicKey, privateDecrypt, publicEncrypt, type KeyObject } from 'node:crypto';
import type { Crypto } from './backend.js';
import { toBase64Url } from './encoding.js';
import { disposed } from './errors.js';
import { checkLength, intRange, OT_NONCE_LEN, RSA_BYTES, type Ot, type RsaKey, type RsaKeyParts } from './ot.js';

const EMPTY = new Uint8Array(0);
const RAW = constants.RSA_NO_PADDING;
/** Moduli kept with their OpenSSL keys: a game uses two. */
const MODULI_KEPT = 16;

/** `c` with its OT arithmetic in OpenSSL; every other member is `c`'s own. */
export function withNodeRsa(c: Crypto): Crypto {
  const base = c.ot;
  const moduli = new Map<string, Modulus>();
  /** The modulus as OpenSSL's key and a bigint, or the core's refusal of it. */
  const modulus = (n: Uint8Array): Modulus => {
    // A trapped WASM instance makes every method of the backend throw WASM_TRAP first (backend.ts).
    c.sha256(EMPTY);
    const id = Buffer.from(n.buffer, n.byteOffset, n.length).toString('hex');
    let m = moduli.get(id);
    if (!m) {
      base.encodeRsaPub(n);
      m = { n: big(n), key: createPublicKey({ key: { kty: 'RSA', n: jwkInt(n), e: 'AQAB' }, format: 'jwk' }) };
      if (moduli.size >= MODULI_KEPT) moduli.delete(moduli.keys().next().value!);
      moduli.set(id, m);
    }
    return m;
  };
  const ot: Ot = {
    ...base,
    importKey: (parts) => nodeKey(c, base.importKey(parts)),
    generateKey: async (options) => nodeKey(c, await base.generateKey(options)),
    checkWitness(n, context, z, r) {
      const m = modulus(n);
      const h = big(base.fdh(n, context).h);
      const [zv, rv] = [big(z), big(r)];
      if (rv === 0n || rv >= m.n || zv >= m.n) return false;
      return (h * powE(m, rv)) % m.n === zv && gcd(rv, m.n) === 1n;
    },
    checkToken(n, context, token) {
      const m = modulus(n);
      const t = big(token);
      if (t === 0n || t >= m.n) return false;
      return powE(m, t) === big(base.fdh(n, context).h);
    },
  };
  return { ...c, ot };
}

interface Modulus {
  n: bigint;
  key: KeyObject;
}

/** A big-endian integer of any width. */
function big(b: Uint8Array): bigint {
  return b.length === 0 ? 0n : BigInt(`0x${Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex')}`);
}

/** x (below n) as 256 big-endian bytes. */
function bytes(x: bigint): Uint8Array {
  return new Uint8Array(Buffer.from(x.toString(16).padStart(2 * RSA_BYTES, '0'), 'hex'));
}

/** x^e mod n by OpenSSL, for 0 ≤ x < n. */
function powE(m: Modulus, x: bigint): bigint {
  return big(publicEncrypt({ key: m.key, padding: RAW }, bytes(x)));
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
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
function nodeKey(c: Crypto, inner: RsaKey): RsaKey {
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
    return privateOp(c.ot.fdh(n, context).h);
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
