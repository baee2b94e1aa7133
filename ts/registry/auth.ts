/**
 * The reference registry's client-side authentication, without I/O: the signed REST request headers
 * and the registration proof (NOTES A9). Byte layouts only; the HTTP client that sends them lives
 * elsewhere.
 */
import type { Crypto } from '../crypto/backend.js';
import { concatBytes, toHex, utf8 } from '../crypto/encoding.js';

/**
 * What a REST request's signature covers: `"{ts}\n{METHOD}\n{path}\n{request_id}\n"` in UTF-8, then the
 * raw body bytes. The method is upper-cased; `path` includes any query string.
 */
export function restSignedBytes(timestamp: number, method: string, path: string, requestId: string, body: Uint8Array): Uint8Array {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError(`timestamp ${timestamp} is not unix seconds`);
  return concatBytes(utf8(`${timestamp}\n${method.toUpperCase()}\n${path}\n${requestId}\n`), body);
}

export interface RestRequest {
  timestamp: number;
  method: string;
  path: string;
  /** 16 random bytes as lowercase hex. */
  requestId: string;
  body: Uint8Array;
}

/** The headers of a signed REST request, in the reference's order. */
export function restHeaders(c: Crypto, seed: Uint8Array, r: RestRequest): Record<string, string> {
  const signature = c.ed25519Sign(seed, restSignedBytes(r.timestamp, r.method, r.path, r.requestId, r.body));
  return {
    'X-Public-Key': toHex(c.ed25519PublicKey(seed)),
    'X-Signature': toHex(signature),
    'X-Timestamp': String(r.timestamp),
    'X-Request-Id': r.requestId,
    'Content-Type': 'application/json',
  };
}

/** The string a registration signs: `nonce:public_key:nickname`. */
export function registrationProofString(nonce: string, publicKey: string, nickname: string): string {
  return `${nonce}:${publicKey}:${nickname}`;
}

export interface Registration {
  publicKey: string;
  nickname: string;
  bio: string;
  nonce: string;
  counter: number;
  signature: string;
}

/** A signed registration for a solved challenge (the counter from `c.powSolve`). */
export function signRegistration(c: Crypto, seed: Uint8Array, nonce: string, nickname: string, counter: number, bio = ''): Registration {
  const publicKey = toHex(c.ed25519PublicKey(seed));
  const signature = toHex(c.ed25519Sign(seed, utf8(registrationProofString(nonce, publicKey, nickname))));
  return { publicKey, nickname, bio, nonce, counter, signature };
}

/** The registration body as posted: compact JSON, non-ASCII raw, keys in the reference's order. */
export function registrationBody(r: Registration): string {
  return JSON.stringify({ public_key: r.publicKey, nickname: r.nickname, bio: r.bio, nonce: r.nonce, counter: r.counter, signature: r.signature });
}
