/**
 * The reference's canonical JSON for mental-poker transcripts: Python's
 * `json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` after its payload check,
 * written by the shared Python-style writer (ts/crypto/python-json.ts) under MP_TRANSCRIPT_JSON.
 *
 * - keys sorted by Unicode code point (Python's string order), not by UTF-16 unit as JS sorts;
 * - no spaces; non-ASCII written raw as UTF-8, U+2028/U+2029 and DEL included;
 * - `\"`, `\\`, the short escapes `\b \f \n \r \t`, every other control character as lowercase `\u00xx`;
 * - integers as plain decimal of any size. A 2048-bit value must arrive as a bigint: a number beyond
 *   ±(2^53 − 1) may already have been rounded, so it is refused rather than written wrong.
 *
 * The reference checks the whole payload before writing any of it, so a payload with several faults is
 * refused for the first one met by that check (floats, bytes/sets, non-string keys, unsupported types,
 * in document order); an unpaired surrogate is only met when writing, as in the reference, where UTF-8
 * encoding fails after the check.
 *
 * What JS cannot express is settled here as strictly as possible: a whole-valued double (Python's
 * `327654.0`) is indistinguishable from an integer and written as one; -0 can only come from a float and
 * is refused as one; `undefined` (which JSON.stringify would drop) is refused.
 */
import { Entries, parseJson, RawNumber, type JsonNode } from '../crypto/jcs.js';
import { pythonJson, type PythonJsonFault, type PythonJsonPolicy } from '../crypto/python-json.js';
import { MpError } from './errors.js';

/** A value the canonical JSON writes: objects are plain objects, integers numbers (safe) or bigints. */
export type JsonValue = null | boolean | number | bigint | string | readonly JsonValue[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

/** Deepest nesting of arrays and objects accepted (the reference's own limit is Python's recursion limit). */
export const MAX_JSON_DEPTH = 127;

const FLOAT = 'transcript payload must not contain float (non-deterministic)';
const BYTES = 'transcript payload must not contain bytes/set (non-JSON)';
const KEYS = 'transcript payload dict keys must be str';
const NOT_DICT = 'transcript payload must be a dict';

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function typeName(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v !== 'object' || v === null) return typeof v;
  const ctor = (v as { constructor?: { name?: unknown } }).constructor;
  return typeof ctor?.name === 'string' && ctor.name ? ctor.name : 'object';
}

function refusal(fault: PythonJsonFault): MpError {
  switch (fault.kind) {
    case 'float':
      return new MpError('MP_JSON_FLOAT', FLOAT);
    case 'unsafe-integer':
      return new MpError('MP_JSON_UNSAFE_INTEGER', `integer ${fault.value} is beyond 2^53 - 1 as a number; give it as a bigint`);
    case 'lone-surrogate':
      return new MpError('MP_JSON_LONE_SURROGATE', 'a string contains an unpaired UTF-16 surrogate, which UTF-8 cannot encode');
    case 'too-deep':
      return new MpError('MP_JSON_TOO_DEEP', `nesting deeper than ${MAX_JSON_DEPTH}`);
    case 'key-not-string':
      return new MpError('MP_JSON_KEY_NOT_STRING', KEYS);
    case 'bytes-or-set':
      return new MpError('MP_JSON_BYTES_OR_SET', BYTES);
    case 'unsupported':
      return new MpError('MP_JSON_UNSUPPORTED', `transcript payload unsupported type: ${typeName(fault.value)}`);
    default:
      // Not finite numbers are floats here, and this policy sets no size limits.
      return new MpError('MP_JSON_UNSUPPORTED', `transcript payload refused: ${fault.kind}`);
  }
}

/**
 * The reference's payload check (`_validate_payload`: floats, bytes/sets, non-string keys, unsupported
 * types, in document order) before its json.dumps, plus the refusals only JS needs. An unpaired
 * surrogate is refused last: the reference meets it only when UTF-8 encoding the written text.
 */
export const MP_TRANSCRIPT_JSON: PythonJsonPolicy = {
  floats: 'refused',
  negativeZero: 'float',
  integersBelow: 2 ** 53,
  rawNumbers: false,
  entries: false,
  loneSurrogates: 'refused-last',
  maxStringBytes: Infinity,
  depthCounts: 'containers',
  maxDepth: MAX_JSON_DEPTH - 1,
  maxItems: Infinity,
  mapKeys: 'checked',
  symbolKeys: 'refused',
  bytesAndSets: 'own-fault',
  memberOrder: 'insertion',
  refuse: refusal,
};

/** Canonical JSON text of any JSON value (not only an object), or MpError. */
export function canonicalJson(value: unknown): string {
  return pythonJson(value, MP_TRANSCRIPT_JSON);
}

/**
 * The canonical UTF-8 bytes of a transcript payload: an object (undefined stands for none and gives
 * `{}`), checked as the reference's `Transcript.append` does.
 */
export function canonicalPayload(payload: unknown): Uint8Array {
  const p = payload === undefined ? {} : payload;
  // The reference's payload is a dict; a Map is let through to the key check, as a dict with int keys is.
  if (typeof p !== 'object' || p === null || Array.isArray(p) || (!(p instanceof Map) && !isPlainObject(p))) {
    throw new MpError('MP_JSON_NOT_OBJECT', NOT_DICT);
  }
  return new TextEncoder().encode(canonicalJson(p));
}

/**
 * JSON text to the values above, as the reference's `json.loads` reads a peer's string: integers
 * exact (a bigint beyond ±(2^53 − 1)), object keys in their order. Stricter than Python where the
 * repo's strict parser is (ts/crypto/jcs.ts: duplicate keys, NaN, lone-surrogate escapes are refused,
 * CryptoError). A literal with a fraction or exponent becomes a number, which the canonical writer
 * refuses unless it is whole (JS cannot tell `1.0` from `1`).
 */
export function parseJsonExact(text: string): JsonValue {
  return fromNode(parseJson(text, { rawNumbers: true }));
}

function fromNode(n: JsonNode): JsonValue {
  if (n instanceof RawNumber) {
    if (!n.isInteger) return Number(n.text);
    const b = BigInt(n.text);
    return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
  }
  if (n instanceof Entries) {
    const o: Record<string, JsonValue> = {};
    // defineProperty, so that a key "__proto__" is an ordinary key.
    for (const [k, v] of n.entries) Object.defineProperty(o, k, { value: fromNode(v), enumerable: true, writable: true, configurable: true });
    return o;
  }
  if (Array.isArray(n)) return n.map(fromNode);
  return n as null | boolean | number | string;
}
