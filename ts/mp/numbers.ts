/** Conversions the audit needs between wire hex, bigints and big-endian bytes, and Python's str repr. */
import { MpError } from './errors.js';

/** A non-negative integer from hex digits of either case, of any length (the reference's `int(s, 16)` on wire text). */
export function hexToBigint(hex: string, what: string): bigint {
  if (typeof hex !== 'string' || !/^[0-9a-fA-F]+$/.test(hex)) throw new MpError('MP_AUDIT_INPUT', `${what} is not hex digits`);
  return BigInt(`0x${hex}`);
}

/** Each ASCII code's hex digit value, or -1. */
const NIBBLE = Int8Array.from({ length: 128 }, (_, c) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1));
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Bytes of even-length hex of either case (the reference's `bytes.fromhex`, without its tolerance of spaces). */
export function hexToBytes(hex: string): Uint8Array | null {
  if (typeof hex !== 'string' || hex.length % 2 !== 0) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = NIBBLE[hex.charCodeAt(2 * i)] ?? -1;
    const lo = NIBBLE[hex.charCodeAt(2 * i + 1)] ?? -1;
    if ((hi | lo) < 0) return null;
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** Minimal big-endian bytes of a non-negative integer (one zero byte for 0). */
export function bigintToBytes(x: bigint): Uint8Array {
  if (x < 0n) throw new RangeError('negative integer');
  let hex = x.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return hexToBytes(hex)!;
}

export function bytesToBigint(b: Uint8Array): bigint {
  let hex = '0';
  for (const x of b) hex += HEX[x]!;
  return BigInt(`0x${hex}`);
}

const NOT_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

/** Python's `repr` of a str, as the reference's audit messages quote ids. */
export function pyRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === q) out += `\\${q}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch !== ' ' && NOT_PRINTABLE.test(ch)) {
      out +=
        cp < 0x100
          ? `\\x${cp.toString(16).padStart(2, '0')}`
          : cp < 0x10000
            ? `\\u${cp.toString(16).padStart(4, '0')}`
            : `\\U${cp.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + q;
}

/** Python's `repr` of a list of str. */
export function pyReprList(items: readonly string[]): string {
  return `[${items.map(pyRepr).join(', ')}]`;
}
