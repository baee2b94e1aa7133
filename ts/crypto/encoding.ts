/** Byte encodings used across the protocols: lowercase hex, base64url without padding, UTF-8. */

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** Each byte's two hex digits, as ASCII codes. */
const HEX_CODES = Uint8Array.from({ length: 512 }, (_, i) => HEX[i >> 1]!.charCodeAt(i & 1));
const latin1 = new TextDecoder('latin1');
/**
 * From this many bytes (a signature) one decoding is as fast as joining pairs, 1.5x faster at 1 KiB,
 * and its string is flat, where a joined one is flattened again by whoever reads it: the group leader's
 * frames/s rose by about 5% with its signatures on this path. Shorter inputs join pairs (4x faster at 4 bytes).
 */
const DECODE_FROM = 64;
let hexScratch = new Uint8Array(0);

export function toHex(bytes: Uint8Array): string {
  const n = bytes.length;
  if (n < DECODE_FROM) {
    let s = '';
    for (let i = 0; i < n; i++) s += HEX[bytes[i]!];
    return s;
  }
  // Many hashes at once (a group frame's 33 digests): the digits as ASCII, decoded into one flat string.
  const out = 2 * n <= 1 << 16 ? (hexScratch.length >= 2 * n ? hexScratch : (hexScratch = new Uint8Array(1 << 16))) : new Uint8Array(2 * n);
  for (let i = 0; i < n; i++) {
    out[2 * i] = HEX_CODES[2 * bytes[i]!]!;
    out[2 * i + 1] = HEX_CODES[2 * bytes[i]! + 1]!;
  }
  return latin1.decode(out.subarray(0, 2 * n));
}

/** The value of each hex digit (either case) by its character code, -1 for every other code below 128. */
const NIBBLE = Int8Array.from({ length: 128 }, (_, c) => '0123456789abcdef'.indexOf(String.fromCharCode(c).toLowerCase()));

/**
 * Hex digits, in either case, as bytes; a TypeError for an odd length or any other character. Read
 * through a table: the regular expression and parseInt of each pair cost a session about 2 µs per
 * signature decoded, twice a frame.
 */
export function fromHex(hex: string): Uint8Array {
  const n = hex.length;
  if (n % 2 !== 0) throw notHex(hex);
  const out = new Uint8Array(n >> 1);
  for (let i = 0; i < n; i += 2) {
    const a = hex.charCodeAt(i);
    const b = hex.charCodeAt(i + 1);
    const hi = a < 128 ? NIBBLE[a]! : -1;
    const lo = b < 128 ? NIBBLE[b]! : -1;
    if ((hi | lo) < 0) throw notHex(hex);
    out[i >> 1] = (hi << 4) | lo;
  }
  return out;
}

const notHex = (hex: string) => new TypeError(`not a hex string: ${hex.slice(0, 16)}…`);

// btoa/atob exist in Node and in browsers, so these work in both without Buffer.
export function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]!);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Strict: unpadded base64url in its one canonical spelling. The spare low bits of the last character
 * must be zero, or two different strings would decode to the same key or signature.
 */
export function fromBase64Url(s: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) throw new TypeError('not base64url without padding');
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  if (toBase64Url(out) !== s) throw new TypeError('not the canonical base64url spelling (spare bits set)');
  return out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Short texts are encoded into views of a shared 16 KiB slab, as Node's Buffer pool does: `encode`
 * makes a fresh ArrayBuffer, and an ArrayBuffer of any size costs V8 most of a microsecond (a backing
 * store outside its heap), against a few tens of nanoseconds for a view. A view is never handed out
 * twice, so the bytes stay the caller's; only its `.buffer` is shared, so read it with `byteOffset`
 * and `byteLength`, and never transfer it.
 */
const SLAB_BYTES = 1 << 14;
/** Longer texts get their own buffer: the slab is for the many short ones (signing inputs, lines). */
const POOLED_MAX_CHARS = 1024;
let slab = new Uint8Array(SLAB_BYTES);
let slabUsed = 0;

export function utf8(s: string): Uint8Array {
  const n = s.length;
  if (n > POOLED_MAX_CHARS) return encoder.encode(s);
  // At most 3 bytes a UTF-16 unit.
  if (SLAB_BYTES - slabUsed < 3 * n) {
    slab = new Uint8Array(SLAB_BYTES);
    slabUsed = 0;
  }
  const at = slabUsed;
  const { written } = encoder.encodeInto(s, at === 0 ? slab : slab.subarray(at));
  // Views start 8-byte aligned, as fresh buffers do, for readers that build wider views on them.
  slabUsed = (at + written + 7) & ~7;
  return new Uint8Array(slab.buffer, at, written);
}

export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
