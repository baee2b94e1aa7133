/**
 * The reference's realtime canonical JSON (`json.dumps(sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False, allow_nan=False)`) and json_hash (SHA-256 hex of its UTF-8), written by the
 * same serialiser as protocol_id (ts/spec/protocol-id.ts: keys by code point, exact integers, floats
 * in Python's repr). This module only turns a JS value into that serialiser's tree, refusing what
 * JSON cannot carry.
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
import { hasLoneSurrogate } from '../mp/canonical.js';
import { pythonFloatRepr, pythonJson } from '../spec/protocol-id.js';
import { RealtimeError } from './errors.js';

/** Deepest nesting of arrays and objects accepted (the reference's own limit is Python's recursion limit). */
export const MAX_RT_DEPTH = 127;

/** Python's message for NaN or infinity under allow_nan=False. */
export const NOT_FINITE = 'Out of range float values are not JSON compliant';

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function text(s: string): string {
  if (hasLoneSurrogate(s)) throw new RealtimeError('RT_JSON_LONE_SURROGATE', 'a string contains an unpaired UTF-16 surrogate, which UTF-8 cannot encode');
  return s;
}

function numberNode(n: number): RawNumber {
  if (!Number.isFinite(n)) throw new RealtimeError('RT_JSON_NOT_FINITE', NOT_FINITE);
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return new RawNumber(BigInt(n).toString());
  return new RawNumber(pythonFloatRepr(n));
}

function toNode(v: unknown, depth: number): JsonNode {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'string') return text(v);
  if (typeof v === 'number') return numberNode(v);
  if (typeof v === 'bigint') return new RawNumber(v.toString());
  if (v instanceof RawNumber) {
    if (!v.isInteger && !Number.isFinite(Number(v.text))) throw new RealtimeError('RT_JSON_NOT_FINITE', NOT_FINITE);
    return v;
  }
  if (typeof v !== 'object') throw new RealtimeError('RT_JSON_UNSUPPORTED', `${typeof v} is not JSON`);
  if (depth >= MAX_RT_DEPTH) throw new RealtimeError('RT_JSON_TOO_DEEP', `nesting deeper than ${MAX_RT_DEPTH}`);
  if (Array.isArray(v)) return v.map((x) => toNode(x, depth + 1));
  if (v instanceof Entries) return new Entries(v.entries.map(([k, x]) => [text(k), toNode(x, depth + 1)]));
  if (!isPlainObject(v)) throw new RealtimeError('RT_JSON_UNSUPPORTED', `${(v as { constructor?: { name?: string } }).constructor?.name ?? 'object'} is not JSON`);
  const o = v as Record<string, unknown>;
  return new Entries(Object.keys(o).map((k) => [text(k), toNode(o[k], depth + 1)]));
}

/** Canonical JSON text of a value (plain JS values, bigints, and the lossless reader's RawNumbers). */
export function rtCanonical(value: unknown): string {
  return pythonJson(toNode(value, 0) as JsonNode & Record<string, unknown>);
}

/** The reference's json_hash: SHA-256 hex of the canonical JSON's UTF-8 bytes. */
export function rtJsonHash(crypto: Crypto, value: unknown): string {
  return toHex(crypto.sha256(utf8(rtCanonical(value))));
}

function fromNode(n: JsonNode): unknown {
  if (n instanceof RawNumber) {
    if (!n.isInteger) return n;
    const x = Number(n.text);
    return Number.isSafeInteger(x) ? (x === 0 ? 0 : x) : BigInt(n.text);
  }
  if (n instanceof Entries) {
    const o: Record<string, unknown> = {};
    // defineProperty, so that a key "__proto__" is an ordinary key.
    for (const [k, v] of n.entries) Object.defineProperty(o, k, { value: fromNode(v), enumerable: true, writable: true, configurable: true });
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
    for (const k of Object.keys(v)) Object.defineProperty(o, k, { value: plainValue((v as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
    return o;
  }
  return v;
}
