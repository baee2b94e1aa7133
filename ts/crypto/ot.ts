/**
 * Blind-RSA token oblivious transfer for mental poker. Both backends implement `Ot`
 * (crates/core/src/ot.rs through WASM, and its twin js-ot.ts on BigInt and @noble/*) with the same
 * results and error codes.
 *
 * The Sender holds a per-game RSA-2048 key (e = 65537). For each label it computes
 * h = FDH(context), token = h^d mod n, key = HKDF(I2OSP(token, 256) ‖ context) and publishes
 * sealed = nonce ‖ ChaCha20-Poly1305(key, payload, AAD = context). The Receiver fetches one label's
 * payload without revealing which: z = h·r^e mod n, the Sender answers y = z^d mod n, and
 * token = y·r⁻¹ mod n. After the game the tokens and the witnesses (ot_id, label, r) are disclosed and
 * checked by `checkToken` / `openSealed` / `checkWitness`.
 *
 * Big integers are big-endian Uint8Arrays. Operands of operations (n, z, y, r, token) are exactly 256
 * bytes (BAD_LENGTH otherwise), the width of the wire's 512 hex characters (`intToHex` / `intFromHex`
 * convert). The two
 * verdict functions, `checkToken` and `checkWitness`, take any length and answer false for a value out
 * of range, as the reference does. A modulus must be 256 bytes with its top bit set and odd
 * (OT_MODULUS_INVALID). Nothing here draws randomness except `generateKey`, `randomUnit` and the
 * blinding secret a key gets when it is made or imported; nonces and r are the caller's.
 */
import { fromBase64Url } from './encoding.js';
import { badLength, CryptoError } from './errors.js';
import { wellFormed } from './jcs.js';

/** Bytes of a 2048-bit integer on the wire and at this interface. */
export const RSA_BYTES = 256;
export const RSA_E = 65537;
export const OT_NONCE_LEN = 12;
/** Sender role byte of the context: the Host's tables use 1, the Guest's 2. */
export const ROLE_HOST = 1;
export const ROLE_GUEST = 2;
/** Payload type byte of the context: k_inner (the Host's per-card key) 1, k_outer (the Guest's) 2. */
export const PAYLOAD_K_INNER = 1;
export const PAYLOAD_K_OUTER = 2;
export type SenderRole = typeof ROLE_HOST | typeof ROLE_GUEST;
export type PayloadType = typeof PAYLOAD_K_INNER | typeof PAYLOAD_K_OUTER;

/**
 * What the context binds. protocolId is what the reference puts there: the spec's `name`
 * ("Crazy Eights"), not its protocol_id hash. Strings must be well-formed UTF-16
 * (JSON_LONE_SURROGATE); role and type must be 1 or 2 (OT_CONTEXT_INVALID).
 */
export interface OtContextInput {
  protocolId: string;
  sessionId: string;
  senderRole: SenderRole;
  payloadType: PayloadType;
  label: string;
}

/** A decoded `rsa_pub`: e is always 65537; n is 256 bytes, 2048 bits, odd. */
export interface RsaPublicKey {
  readonly e: typeof RSA_E;
  readonly n: Uint8Array;
}

/**
 * The numbers of an RSA private key under their JWK names, big-endian, any length (leading zeros
 * allowed). dp = d mod (p−1), dq = d mod (q−1), qi = q⁻¹ mod p. Secret: never log or send.
 */
export interface RsaKeyParts {
  n: Uint8Array;
  e: typeof RSA_E;
  d: Uint8Array;
  p: Uint8Array;
  q: Uint8Array;
  dp: Uint8Array;
  dq: Uint8Array;
  qi: Uint8Array;
}

/**
 * A Sender's RSA-2048 private key. In the wasm backend it lives in WASM memory until `dispose`, which
 * wipes it; after that every method throws KEY_DISPOSED.
 */
export interface RsaKey {
  /** The modulus, 256 bytes. */
  readonly n: Uint8Array;
  /** The wire `rsa_pub` string, `{"e":65537,"n":"<512 lowercase hex>"}`. */
  readonly rsaPub: string;
  /**
   * x^d mod n through CRT, the input blinded by a secret factor drawn from a per-key secret (the
   * result is x^d mod n whatever the factor). x must be 256 bytes and below n (OT_INT_RANGE). The
   * Sender's answer y to a request z, and a label's token from its h. In the wasm backend the
   * operation is constant-time as written (crates/core/src/ot/crt.rs says what is and is not); the js
   * twin's BigInt arithmetic is not.
   */
  privateOp(x: Uint8Array): Uint8Array;
  /** A label's token: FDH(context)^d mod n. */
  token(context: Uint8Array): Uint8Array;
  /** One sealed-table entry in one call: the token and nonce ‖ AEAD(tokenKey(token, context), payload, AAD = context). */
  sealLabel(context: Uint8Array, payload: Uint8Array, nonce: Uint8Array): { token: Uint8Array; sealed: Uint8Array };
  /** The key's numbers (each n-, d- or p-sized big-endian, zero-padded). Secret. */
  exportParts(): RsaKeyParts;
  dispose(): void;
}

export interface Ot {
  /**
   * `aigenora.mp.v1` ‖ u32be(len) protocolId ‖ u32be(len) sessionId ‖ role byte ‖ type byte ‖ u32be(len)
   * label, strings in UTF-8.
   */
  context(input: OtContextInput): Uint8Array;
  /**
   * Full-domain hash into Z_n*: the first candidate (counter = 0, 1, …) with 0 < h < n and
   * gcd(h, n) = 1, and that counter.
   */
  fdh(n: Uint8Array, context: Uint8Array): { h: Uint8Array; counter: number };
  /** Candidate `counter` of the FDH: MGF1-SHA256(context ‖ u32be(counter), 256 bytes), before any check. */
  fdhCandidate(context: Uint8Array, counter: number): Uint8Array;

  /**
   * A fresh RSA-2048 key, e = 65537, made by the platform (WebCrypto: OpenSSL in Node, the browser's
   * own) and imported. The platform's generator measured as fast as or faster than a WASM one, which
   * would also have added about 37 KiB of gzipped WASM, so the wasm backend has none:
   * `{ via: 'backend' }` is OT_KEYGEN_FAILED there. The js twin keeps a BigInt generator (about 0.5 s a key here)
   * for a platform without WebCrypto, where it is also the default. OT_KEYGEN_FAILED when the chosen
   * generator is unavailable or fails.
   */
  generateKey(options?: { via?: 'platform' | 'backend' }): Promise<RsaKey>;
  /**
   * A key from its numbers. OT_KEY_INVALID unless e = 65537, n is a valid modulus, p·q = n and
   * dp, dq, qi, d agree with p and q (a trial x^(de) = x is made).
   */
  importKey(parts: RsaKeyParts): RsaKey;

  /** HKDF-SHA256 (no salt, info `aigenora.mp.tokenkey.v1`, 32 bytes) of token(256 bytes) ‖ context. */
  tokenKey(token: Uint8Array, context: Uint8Array): Uint8Array;
  /** nonce(12) ‖ ChaCha20-Poly1305(tokenKey, payload, AAD = context). tokenKey 32 bytes. */
  sealPayload(tokenKey: Uint8Array, nonce: Uint8Array, payload: Uint8Array, context: Uint8Array): Uint8Array;
  /** The payload, or AEAD_OPEN_FAILED (also for sealed bytes too short to hold a nonce and a tag). */
  openPayload(tokenKey: Uint8Array, sealed: Uint8Array, context: Uint8Array): Uint8Array;
  /** openPayload(tokenKey(token, context), sealed, context): the audit's and the Receiver's opening. */
  openSealed(token: Uint8Array, context: Uint8Array, sealed: Uint8Array): Uint8Array;

  /** A uniform r with 1 ≤ r < n and gcd(r, n) = 1 (the Receiver's blinding value), from the platform's CSPRNG. */
  randomUnit(n: Uint8Array): Uint8Array;
  /** The request z = FDH(context)·r^e mod n. r: 256 bytes, 1 ≤ r < n (OT_INT_RANGE), gcd(r, n) = 1 (OT_NOT_UNIT). */
  blind(n: Uint8Array, context: Uint8Array, r: Uint8Array): Uint8Array;
  /** token = y·r⁻¹ mod n. y: 256 bytes below n (OT_INT_RANGE); r as for blind. */
  unblind(n: Uint8Array, y: Uint8Array, r: Uint8Array): Uint8Array;

  /**
   * Witness check: 1 ≤ r < n, gcd(r, n) = 1 and z == FDH(context)·r^e mod n. z and r of any length
   * (big-endian, leading zeros allowed); out of range is false.
   */
  checkWitness(n: Uint8Array, context: Uint8Array, z: Uint8Array, r: Uint8Array): boolean;
  /** Token check: 1 ≤ token < n and token^e ≡ FDH(context) mod n. token of any length. */
  checkToken(n: Uint8Array, context: Uint8Array, token: Uint8Array): boolean;

  /** The wire `rsa_pub` JSON string for a valid modulus. */
  encodeRsaPub(n: Uint8Array): string;
  /**
   * The wire `rsa_pub` (the JSON string, or the object already parsed, as the transcript holds it).
   * Accepted as the reference does: e as the number 65537 (65537.0 too) or the string "65537"; n as
   * hex of either case, padded or not. Refused, where the reference is looser: other keys, other
   * spellings of e, and n with anything but hex digits (OT_RSA_PUB_MALFORMED). Then, in the
   * reference's order: e ≠ 65537 (OT_RSA_PUB_EXPONENT), n not exactly 2048 bits, or even
   * (OT_MODULUS_INVALID), with the reference's messages.
   */
  decodeRsaPub(wire: string | object): RsaPublicKey;
}

/** x as `width` big-endian bytes; the caller has checked that x fits. */
export function bigintToFixed(x: bigint, width: number = RSA_BYTES): Uint8Array {
  const hex = x.toString(16).padStart(2 * width, '0');
  // toString(16) writes 0-9 and a-f only.
  const digit = (i: number) => {
    const c = hex.charCodeAt(i);
    return c <= 57 ? c - 48 : c - 87;
  };
  const out = new Uint8Array(width);
  for (let i = 0; i < width; i++) out[i] = (digit(2 * i) << 4) | digit(2 * i + 1);
  return out;
}

export function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** a⁻¹ mod m, or undefined when gcd(a, m) ≠ 1. */
export function invert(a: bigint, m: bigint): bigint | undefined {
  let [r0, r1, s0, s1] = [a % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return r0 === 1n ? ((s0 % m) + m) % m : undefined;
}

/**
 * The numbers of the RSA key (e = 65537) of two distinct primes: d = e⁻¹ mod lcm(p − 1, q − 1) and its
 * CRT numbers, zero-padded big-endian; undefined when e has no inverse modulo that lcm. The generators
 * (the js twin's and the Node path's) check their own conditions on p, q and d around it.
 */
export function rsaKeyPartsOf(p: bigint, q: bigint): RsaKeyParts | undefined {
  const lambda = ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
  const d = invert(BigInt(RSA_E), lambda);
  if (d === undefined) return undefined;
  const half = RSA_BYTES / 2;
  return {
    n: bigintToFixed(p * q),
    e: RSA_E,
    d: bigintToFixed(d),
    p: bigintToFixed(p, half),
    q: bigintToFixed(q, half),
    dp: bigintToFixed(d % (p - 1n), half),
    dq: bigintToFixed(d % (q - 1n), half),
    qi: bigintToFixed(invert(q, p) ?? 0n, half),
  };
}

/** 512 lowercase hex characters of a 256-byte integer, as the wire writes z, y, r and tokens. */
export function intToHex(x: Uint8Array): string {
  if (x.length !== RSA_BYTES) throw intEncoding(`an integer at this interface is ${RSA_BYTES} bytes, got ${x.length}`);
  let s = '';
  for (let i = 0; i < x.length; i++) s += x[i]!.toString(16).padStart(2, '0');
  return s;
}

/**
 * 256 bytes from hex of either case, 1 to 512 digits (shorter is zero-padded on the left). The wire
 * writes exactly 512 lowercase digits; `isWireInt` says whether a text is in that form.
 */
export function intFromHex(hex: string): Uint8Array {
  if (!/^[0-9a-fA-F]{1,512}$/.test(hex)) throw intEncoding(`not 1 to 512 hex digits (${hex.length} characters)`);
  const padded = hex.padStart(2 * RSA_BYTES, '0');
  const out = new Uint8Array(RSA_BYTES);
  for (let i = 0; i < RSA_BYTES; i++) out[i] = parseInt(padded.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/**
 * Hex digits of either case, any count from 1 on, as big-endian bytes of their own width: for the
 * verdict functions (checkToken, checkWitness), which take any width and judge a value beyond n false,
 * as the reference does with a disclosed token or r of more than 512 digits.
 */
export function wideIntFromHex(hex: string): Uint8Array {
  if (!/^[0-9a-fA-F]+$/.test(hex)) throw intEncoding(`not hex digits (${hex.length} characters)`);
  const even = hex.length % 2 === 1 ? `0${hex}` : hex;
  const out = new Uint8Array(even.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(even.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function isWireInt(hex: string): boolean {
  return /^[0-9a-f]{512}$/.test(hex);
}

export const intEncoding = (m: string) => new CryptoError('OT_INT_ENCODING', m);
export const contextInvalid = (m: string) => new CryptoError('OT_CONTEXT_INVALID', m);
export const modulusInvalid = (m: string) => new CryptoError('OT_MODULUS_INVALID', m);
export const intRange = (what: string) =>
  new CryptoError('OT_INT_RANGE', `${what} must be a ${RSA_BYTES}-byte integer below n${what === 'r' ? ' and at least 1' : ''}`);
export const notUnit = () => new CryptoError('OT_NOT_UNIT', 'r shares a factor with n');
export const keyInvalid = (m: string) => new CryptoError('OT_KEY_INVALID', m);
export const keygenFailed = (m: string) => new CryptoError('OT_KEYGEN_FAILED', m);
export const rsaPubMalformed = (m: string) => new CryptoError('OT_RSA_PUB_MALFORMED', m);
export const rsaPubExponent = (e: string) => new CryptoError('OT_RSA_PUB_EXPONENT', `RSA public exponent must be 65537, got ${e}`);
export const fdhExhausted = () => new CryptoError('OT_FDH_EXHAUSTED', 'no FDH candidate below n in 2^32 tries');

/** Refuses what the context cannot carry, before any backend sees it (a WASM u8 would wrap). */
export function checkContextInput(c: OtContextInput): void {
  wellFormed(c.protocolId);
  wellFormed(c.sessionId);
  wellFormed(c.label);
  if (c.senderRole !== ROLE_HOST && c.senderRole !== ROLE_GUEST) throw contextInvalid('sender role must be 1 or 2');
  if (c.payloadType !== PAYLOAD_K_INNER && c.payloadType !== PAYLOAD_K_OUTER) throw contextInvalid('payload type must be 1 or 2');
}

export function checkCounter(counter: number): void {
  if (!Number.isInteger(counter) || counter < 0 || counter > 0xffffffff) {
    throw new CryptoError('OT_INT_RANGE', 'an FDH counter must be an integer in 0..2^32-1');
  }
}

export function checkKeyExponent(e: number): void {
  if (e !== RSA_E) throw keyInvalid(`e must be 65537, got ${String(e)}`);
}

export function checkLength(what: string, bytes: Uint8Array, want: number): void {
  if (bytes.length !== want) throw badLength(what, want, bytes.length);
}

/** The rsa_pub as JSON text: a string as it is, an object as JSON.stringify writes it. */
export function rsaPubText(wire: string | object): string {
  if (typeof wire === 'string') return wire;
  let text: string | undefined;
  try {
    text = JSON.stringify(wire);
  } catch (e) {
    throw rsaPubMalformed(`rsa_pub cannot be written as JSON: ${(e as Error).message}`);
  }
  if (text === undefined) throw rsaPubMalformed('rsa_pub must be a JSON object');
  return text;
}

/** 32 bytes from the platform's CSPRNG. */
export function randomBytes(n: number): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

/**
 * A fresh RSA-2048 key (e = 65537) from WebCrypto, as numbers: Node and browsers export p, q, d, dp,
 * dq and qi in the JWK of an extractable RSA-PSS key.
 */
export async function platformKeyParts(): Promise<RsaKeyParts> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw keygenFailed('this platform has no WebCrypto');
  let jwk: JsonWebKey;
  try {
    const pair = await subtle.generateKey({ name: 'RSA-PSS', modulusLength: 2048, publicExponent: Uint8Array.of(1, 0, 1), hash: 'SHA-256' }, true, [
      'sign',
      'verify',
    ]);
    jwk = await subtle.exportKey('jwk', pair.privateKey);
  } catch (e) {
    throw keygenFailed(`WebCrypto: ${(e as Error).message}`);
  }
  const num = (k: 'n' | 'd' | 'p' | 'q' | 'dp' | 'dq' | 'qi') => {
    const v = jwk[k];
    if (typeof v !== 'string') throw keygenFailed(`WebCrypto's JWK has no ${k}`);
    return fromBase64Url(v);
  };
  if (jwk.e !== 'AQAB') throw keygenFailed(`WebCrypto made e = ${String(jwk.e)}`);
  return { n: num('n'), e: RSA_E, d: num('d'), p: num('p'), q: num('q'), dp: num('dp'), dq: num('dq'), qi: num('qi') };
}
