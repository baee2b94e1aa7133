/**
 * The reference's realtime canonical JSON (`json.dumps(sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False, allow_nan=False)`) and json_hash (SHA-256 hex of its UTF-8), written by the shared
 * Python-style writer (ts/crypto/python-json.ts: keys by code point, exact integers, floats in Python's
 * repr) under REALTIME_JSON, which refuses what JSON cannot carry. A JS value is written as the tree the
 * reference would have read, without building that tree (a realtime state is written several times a tick).
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
import { pythonJson, type PythonJsonFault, type PythonJsonPolicy } from '../crypto/python-json.js';
import { RealtimeError } from './errors.js';

/** Deepest nesting of arrays and objects accepted (the reference's own limit is Python's recursion limit). */
export const MAX_RT_DEPTH = 127;

/** Python's message for NaN or infinity under allow_nan=False. */
export const NOT_FINITE = 'Out of range float values are not JSON compliant';

function refusal(fault: PythonJsonFault): RealtimeError {
  switch (fault.kind) {
    case 'not-finite':
      return new RealtimeError('RT_JSON_NOT_FINITE', NOT_FINITE);
    case 'lone-surrogate':
      return new RealtimeError('RT_JSON_LONE_SURROGATE', 'a string contains an unpaired UTF-16 surrogate, which UTF-8 cannot encode');
    case 'too-deep':
      return new RealtimeError('RT_JSON_TOO_DEEP', `nesting deeper than ${MAX_RT_DEPTH}`);
    case 'unsupported': {
      const v = fault.value;
      const type = typeof v === 'object' && v !== null ? ((v as { constructor?: { name?: string } }).constructor?.name ?? 'object') : typeof v;
      return new RealtimeError('RT_JSON_UNSUPPORTED', `${type} is not JSON`);
    }
    default:
      // Floats are written and no size limits are set here: nothing else is refused.
      return new RealtimeError('RT_JSON_UNSUPPORTED', `refused: ${fault.kind}`);
  }
}

/**
 * The checks in the order the reference's tree builder made them (depth first, members in insertion
 * order), so that a value with two faults reports the same one.
 */
export const REALTIME_JSON: PythonJsonPolicy = {
  floats: 'repr',
  negativeZero: 'zero',
  integersBelow: 1e21,
  rawNumbers: true,
  entries: true,
  loneSurrogates: 'refused',
  maxStringBytes: Infinity,
  depthCounts: 'containers',
  maxDepth: MAX_RT_DEPTH - 1,
  maxItems: Infinity,
  mapKeys: 'ignored',
  symbolKeys: 'ignored',
  bytesAndSets: 'unsupported',
  memberOrder: 'insertion',
  refuse: refusal,
};

/** Canonical JSON text of a value (plain JS values, bigints, and the lossless reader's RawNumbers). */
export function rtCanonical(value: unknown): string {
  return pythonJson(value, REALTIME_JSON);
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
