/**
 * Signature and public-key bytes from their base64url spellings, as verification needs them: a
 * spelling fromBase64Url refuses (not unpadded base64url, or spare bits set) gives no bytes, which
 * never verify. One pass over the text instead of fromBase64Url's atob/btoa round trip, which costs
 * an envelope a few microseconds, and each key decoded once rather than once an envelope.
 */

const NO_BYTES = new Uint8Array(0);

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The 6-bit value of each character code below 128, or -1. */
const SEXTET = Int8Array.from({ length: 128 }, (_, c) => ALPHABET.indexOf(String.fromCharCode(c)));

/** The bytes fromBase64Url gives for `text`, or no bytes where it throws (or `text` is not a string). */
export function decodeOrEmpty(text: unknown): Uint8Array {
  if (typeof text !== 'string' || text.length % 4 === 1) return NO_BYTES;
  const out = new Uint8Array((text.length * 3) >> 2);
  let acc = 0;
  let bits = 0;
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? SEXTET[c]! : -1;
    if (v < 0) return NO_BYTES;
    acc = ((acc << 6) | v) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = acc >> bits;
    }
  }
  // The bits left over are the spare bits of the last character.
  return (acc & ((1 << bits) - 1)) === 0 ? out : NO_BYTES;
}

// The same few keys come back envelope after envelope. Kept by spelling (not by key map, which the
// caller may change between calls); only 32-byte keys, and cleared when full, so that it stays small
// whatever the key maps hold.
const KEY_CACHE_SIZE = 1024;
const decodedKeys = new Map<string, Uint8Array>();

/** A public key's bytes; what a key map read from a file holds may be anything, and only text decodes. */
export function publicKeyBytes(text: unknown): Uint8Array {
  if (typeof text !== 'string') return NO_BYTES;
  let bytes = decodedKeys.get(text);
  if (bytes === undefined) {
    bytes = decodeOrEmpty(text);
    if (bytes.length === 32) {
      if (decodedKeys.size >= KEY_CACHE_SIZE) decodedKeys.clear();
      decodedKeys.set(text, bytes);
    }
  }
  return bytes;
}
