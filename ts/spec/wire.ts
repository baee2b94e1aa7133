/**
 * Messages as the wire carries them. A message's numbers are judged by their literal, as the
 * reference's Python reads them: `1`, `-0` and `123456789012345678901` are integers (exact at any
 * size), `1.0`, `1e2` and `1e-400` are floats. The lossless tree of the text (RawNumber) is projected
 * into two JS values:
 *
 * - the checked value, which the compiled validators see: integer literals as numbers when they are
 *   safe integers, else as bigint; float literals as WireFloat, which no integer, string or container
 *   check accepts;
 * - the exact value hooks receive: the same, but floats as plain numbers (the double Python reads).
 *   Integers beyond ±(2^53 − 1) stay bigint: that is the documented representation of an integer
 *   no double holds.
 *
 * Sizes are measured on what Python would print: str() for array elements and the sorted compact
 * json.dumps for `json` fields, from the exact values, never from a re-serialized double.
 */
import { CryptoError } from '../crypto/errors.js';
import { Entries, RawNumber, type JsonNode } from '../crypto/jcs.js';
import { utf8Length } from '../crypto/unicode.js';
import { pythonFloatRepr } from './protocol-id.js';

/** A non-integer number literal from the wire: the double Python's json reads for it. */
export class WireFloat {
  constructor(readonly value: number) {}
}

/**
 * Longest integer literal Python's json accepts: int() refuses more than 4300 digits by default
 * (sys.int_info.default_max_str_digits), which also keeps BigInt parsing from running quadratic.
 */
export const MAX_INTEGER_DIGITS = 4300;

const FLOAT_LITERAL = /[.eE]/;

function integerOf(text: string): number | bigint {
  const n = Number(text);
  if (Number.isSafeInteger(n)) return n === 0 ? 0 : n; // `-0` is Python's int 0
  if (text.length - (text[0] === '-' ? 1 : 0) > MAX_INTEGER_DIGITS)
    throw new CryptoError('JSON_NUMBER_RANGE', `an integer of ${text.length} digits is over the ${MAX_INTEGER_DIGITS}-digit limit of Python's json`);
  return BigInt(text);
}

function setMember(o: Record<string, unknown>, k: string, v: unknown): void {
  // A "__proto__" key is an ordinary member, as JSON.parse makes it.
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

/**
 * The JS value of a lossless tree: floats as WireFloat when `tagFloats` (for checking), else as
 * numbers (for hooks). Throws CryptoError JSON_NUMBER_RANGE for an integer Python would refuse.
 */
export function project(node: JsonNode, tagFloats: boolean): unknown {
  if (node instanceof RawNumber) {
    if (FLOAT_LITERAL.test(node.text)) return tagFloats ? new WireFloat(Number(node.text)) : Number(node.text);
    return integerOf(node.text);
  }
  if (node instanceof Entries) {
    const o: Record<string, unknown> = {};
    for (const [k, v] of node.entries) setMember(o, k, project(v, tagFloats));
    return o;
  }
  if (Array.isArray(node)) return node.map((v) => project(v, tagFloats));
  return node;
}

/** Whether a tree holds a float literal (then the checked and the exact value differ). */
export function hasFloat(node: JsonNode): boolean {
  if (node instanceof RawNumber) return FLOAT_LITERAL.test(node.text);
  if (node instanceof Entries) return node.entries.some(([, v]) => hasFloat(v));
  if (Array.isArray(node)) return node.some(hasFloat);
  return false;
}

/** Turns WireFloat back into numbers: the exact value of a checked value. */
export function untag(v: unknown): unknown {
  if (v instanceof WireFloat) return v.value;
  if (Array.isArray(v)) return v.map(untag);
  if (typeof v === 'object' && v !== null) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setMember(o, k, untag(x));
    return o;
  }
  return v;
}

/** The text Python prints for a number of a checked value (str() and json.dumps agree on numbers). */
function numberText(v: number | bigint | WireFloat): string {
  if (v instanceof WireFloat) return pythonFloatRepr(v.value);
  if (typeof v === 'bigint') return v.toString();
  // A JS number: what JSON.stringify writes, read back by Python.
  if (Number.isSafeInteger(v)) return String(v); // its digits; String(-0) is '0'
  if (Number.isInteger(v) && Math.abs(v) < 1e21) return Object.is(v, -0) ? '0' : BigInt(v).toString();
  return pythonFloatRepr(v);
}

/** UTF-8 length of Python's str() of an array element. */
export function pyStrLength(v: unknown): number {
  if (typeof v === 'string') return utf8Length(v);
  if (v === true) return 4; // True
  if (v === false) return 5; // False
  if (v === null) return 4; // None
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof WireFloat) return numberText(v).length;
  // A container is never a valid element (items are scalar), so the item check refuses it anyway.
  return pyJsonLength(v);
}

/** Printable ASCII other than `"` and `\`: a string of only these is written as itself between quotes. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7f]*$/;

/** UTF-8 length of a string as JSON text: the same escapes as Python for well-formed text. */
const jsonStringLength = (s: string): number => (PLAIN_ASCII.test(s) ? s.length + 2 : utf8Length(JSON.stringify(s)));

/**
 * UTF-8 length of json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":")). Key order
 * does not change the length. Throws for what Python cannot serialize finitely.
 */
export function pyJsonLength(v: unknown): number {
  // undefined: what JSON.stringify makes of it in an array (null); object members holding it are dropped.
  if (v === null || v === true || v === undefined) return 4;
  if (v === false) return 5;
  if (typeof v === 'string') return jsonStringLength(v);
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof WireFloat) return numberText(v).length;
  if (Array.isArray(v)) return v.reduce<number>((n, x) => n + pyJsonLength(x), 1 + Math.max(v.length, 1));
  if (typeof v === 'object') {
    const e = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    return e.reduce<number>((n, [k, x]) => n + jsonStringLength(k) + 1 + pyJsonLength(x), 1 + Math.max(e.length, 1));
  }
  throw new CryptoError('JSON_UNSUPPORTED_VALUE', `a ${typeof v} has no JSON form`);
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/**
 * A quick pass over JSON text that tells whether JSON.parse reads it exactly as the strict lossless
 * parser would: every number an integer literal of at most 15 digits other than `-0` (so the double
 * is the integer), no escaped surrogate, nesting within `maxDepth`. Returns the number of object
 * members the text holds, which the parsed value must match (a repeated key would leave one fewer),
 * or -1 when only the lossless parser can judge the text.
 */
export function plainMembers(s: string, maxDepth: number): number {
  let members = 0;
  let depth = 0;
  // The next backslash at or after where the last search began: searched again only once passed, so
  // a text without escapes is searched for them once, not once a string.
  let e = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: native searches, then escapes one by one only where there are any.
      for (i++; ;) {
        const q = s.indexOf('"', i);
        if (q < 0) return -1;
        if (e < i) {
          e = s.indexOf('\\', i);
          if (e < 0) e = Infinity;
        }
        if (e > q) {
          i = q;
          break;
        }
        // \uD800–\uDFFF: a surrogate escape, paired or not.
        if (s.charCodeAt(e + 1) === 0x75 && (s.charCodeAt(e + 2) | 0x20) === 0x64 && /[89a-fA-F]/.test(s[e + 3] ?? '')) return -1;
        i = e + 2;
      }
    } else if (c === 0x3a) members++;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return -1;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2d || isDigit(c)) {
      const start = c === 0x2d ? i + 1 : i;
      let j = start;
      while (isDigit(s.charCodeAt(j))) j++;
      const next = s.charCodeAt(j);
      if (j === start || j - start > 15 || next === 0x2e || next === 0x65 || next === 0x45) return -1;
      if (c === 0x2d && j - start === 1 && s.charCodeAt(start) === 0x30) return -1;
      i = j - 1;
    }
  }
  return members;
}

/** The number of object members in a parsed value. */
export function countMembers(v: unknown): number {
  if (Array.isArray(v)) return v.reduce<number>((n, x) => n + countMembers(x), 0);
  if (typeof v === 'object' && v !== null) {
    let n = 0;
    for (const k in v) n += 1 + countMembers((v as Record<string, unknown>)[k]);
    return n;
  }
  return 0;
}
