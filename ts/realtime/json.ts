/**
 * The reference's realtime canonical JSON (`json.dumps(sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False, allow_nan=False)`) and json_hash (SHA-256 hex of its UTF-8), written by the
 * same serialiser as protocol_id (ts/spec/protocol-id.ts: keys by code point, exact integers, floats
 * in Python's repr). This module writes a JS value as that serialiser writes its tree, refusing what
 * JSON cannot carry, without building the tree (a realtime state is written several times a tick).
 *
 * JS has one number type, so a number is written as JSON.stringify would send it and Python would read
 * it back: an integer below 1e21 as an integer (so -0 is `0`), anything else as a float. A host
 * therefore hashes exactly what its peer re-reads from the wire. A float the peer wrote as `1.0`
 * survives only through the lossless reader below (`parseRealtimeJson`), which keeps it as a RawNumber.
 */
import type { Crypto } from '../crypto/backend.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { CryptoError } from '../crypto/errors.js';
import { Entries, parseJson, RawNumber, type JsonNode } from '../crypto/jcs.js';
import { codePointCompare } from '../crypto/pyjson.js';
import { hasLoneSurrogate } from '../mp/canonical.js';
import { pythonFloatRepr } from '../spec/protocol-id.js';
import { RealtimeError } from './errors.js';

/** Deepest nesting of arrays and objects accepted (the reference's own limit is Python's recursion limit). */
export const MAX_RT_DEPTH = 127;

/** Python's message for NaN or infinity under allow_nan=False. */
export const NOT_FINITE = 'Out of range float values are not JSON compliant';

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const SURROGATE = /[\ud800-\udfff]/;

function text(s: string): string {
  // The plain scan first: the lone-surrogate pattern is the slower one, and only a surrogate can be lone.
  if (SURROGATE.test(s) && hasLoneSurrogate(s)) throw new RealtimeError('RT_JSON_LONE_SURROGATE', 'a string contains an unpaired UTF-16 surrogate, which UTF-8 cannot encode');
  return s;
}

// Keys without a surrogate compare the same by UTF-16 unit as by code point.
const byUnit = (a: [string, string], b: [string, string]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
const byCodePoint = (a: [string, string], b: [string, string]): number => codePointCompare(a[0], b[0]);

/**
 * The serialiser's text of a value in one walk, without building its tree: the checks in the order the
 * tree's builder made them (depth first, members in insertion order), so a value with two faults reports
 * the same one, and each value's text as pythonJson writes its node (an integer below 1e21 as its
 * digits, anything else as Python's float repr, members sorted by code point).
 */
function write(v: unknown, depth: number): string {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'string') return JSON.stringify(text(v)); // the same escapes as Python for well-formed text
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new RealtimeError('RT_JSON_NOT_FINITE', NOT_FINITE);
    if (Number.isSafeInteger(v)) return String(v); // its digits; -0 is '0'
    if (Number.isInteger(v) && Math.abs(v) < 1e21) return BigInt(v).toString();
    return pythonFloatRepr(v);
  }
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof RawNumber) {
    if (!v.isInteger && !Number.isFinite(Number(v.text))) throw new RealtimeError('RT_JSON_NOT_FINITE', NOT_FINITE);
    return v.isInteger ? BigInt(v.text).toString() : pythonFloatRepr(Number(v.text));
  }
  if (typeof v !== 'object') throw new RealtimeError('RT_JSON_UNSUPPORTED', `${typeof v} is not JSON`);
  if (depth >= MAX_RT_DEPTH) throw new RealtimeError('RT_JSON_TOO_DEEP', `nesting deeper than ${MAX_RT_DEPTH}`);
  if (Array.isArray(v)) return `[${v.map((x) => write(x, depth + 1)).join(',')}]`;
  let members: [string, string][];
  if (v instanceof Entries) members = v.entries.map(([k, x]) => [text(k), write(x, depth + 1)]);
  else {
    if (!isPlainObject(v)) throw new RealtimeError('RT_JSON_UNSUPPORTED', `${(v as { constructor?: { name?: string } }).constructor?.name ?? 'object'} is not JSON`);
    const o = v as Record<string, unknown>;
    members = Object.keys(o).map((k) => [text(k), write(o[k], depth + 1)]);
  }
  members.sort(members.some(([k]) => SURROGATE.test(k)) ? byCodePoint : byUnit);
  return `{${members.map(([k, x]) => `${JSON.stringify(k)}:${x}`).join(',')}}`;
}

/** Canonical JSON text of a value (plain JS values, bigints, and the lossless reader's RawNumbers). */
export function rtCanonical(value: unknown): string {
  return write(value, 0);
}

/** The reference's json_hash: SHA-256 hex of the canonical JSON's UTF-8 bytes. */
export function rtJsonHash(crypto: Crypto, value: unknown): string {
  return toHex(crypto.sha256(utf8(rtCanonical(value))));
}

/** o[k] = v as an own data member, "__proto__" too (defineProperty only there: plain assignment is the fast way to the same member). */
function setMember(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

function fromNode(n: JsonNode): unknown {
  if (n instanceof RawNumber) {
    if (!n.isInteger) return n;
    const x = Number(n.text);
    return Number.isSafeInteger(x) ? (x === 0 ? 0 : x) : BigInt(n.text);
  }
  if (n instanceof Entries) {
    const o: Record<string, unknown> = {};
    for (const [k, v] of n.entries) setMember(o, k, fromNode(v));
    return o;
  }
  if (Array.isArray(n)) return n.map(fromNode);
  return n;
}

/**
 * JSON text as the reference's json.loads reads it, so that hashes over it come out as the sender's:
 * integers exact (bigint beyond ±(2^53 − 1)), float literals kept as RawNumber (`1.0` stays `1.0`).
 * Strict: duplicate keys, lone-surrogate escapes and NaN are refused (RT_JSON_SYNTAX).
 */
export function parseRealtimeJson(json: string): unknown {
  try {
    return fromNode(parseJson(json, { rawNumbers: true }));
  } catch (e) {
    if (e instanceof CryptoError) throw new RealtimeError('RT_JSON_SYNTAX', e.message);
    throw e;
  }
}

/** A lossless value as hooks take it: float literals as the double Python reads. */
export function plainValue(v: unknown): unknown {
  if (v instanceof RawNumber) return Number(v.text);
  if (Array.isArray(v)) return v.map(plainValue);
  if (typeof v === 'object' && v !== null) {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v)) setMember(o, k, plainValue((v as Record<string, unknown>)[k]));
    return o;
  }
  return v;
}
