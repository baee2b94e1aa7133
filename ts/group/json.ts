/**
 * The reference's group canonical JSON and json_hash (proto/group.py): Python's `json.dumps(sort_keys=True,
 * separators=(",", ":"), ensure_ascii=False)`, written by the shared Python-style writer
 * (ts/crypto/python-json.ts) under GROUP_JSON, which refuses what the reference's `_validate_json` does:
 * floats, values nested deeper than 16, arrays and objects over 1024 items, strings and keys over 64 KiB
 * of UTF-8, and non-string keys. A value it accepts comes out as the realtime canonical JSON writes it.
 *
 * Integers only: a JS number must be an integer; -0 is the integer 0 (JSON's `-0` is Python's int 0,
 * so a peer hashes it as `0`); beyond ±(2^53 − 1) it must be a bigint, since a number there may
 * already have been rounded. A float the lossless reader kept (RawNumber) is refused as a float.
 */
import type { Crypto } from '../crypto/backend.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import {
  checkPythonJson,
  pythonJson,
  pythonJsonPart,
  type JsonPart,
  type JsonTextCache,
  type PythonJsonFault,
  type PythonJsonPolicy,
} from '../crypto/python-json.js';
import { compareCodePoints } from '../crypto/unicode.js';
import { RealtimeError } from '../realtime/errors.js';
import { parseRealtimeJson } from '../realtime/json.js';
import { GroupError } from './errors.js';

export const MAX_GROUP_JSON_DEPTH = 16;
export const MAX_GROUP_CONTAINER_ITEMS = 1024;
export const MAX_GROUP_STRING_BYTES = 65536;

/** A value group canonical JSON writes. */
export type GroupJson = null | boolean | number | bigint | string | GroupJson[] | { [key: string]: GroupJson };
export type GroupObject = { [key: string]: GroupJson };

// The reference's texts, which a replica's refusal carries.
const FLOAT = 'floating-point values are not allowed in group state';
const DEEP = 'JSON nesting exceeds the group protocol limit';

function typeName(v: unknown): string {
  if (typeof v !== 'object' || v === null) return typeof v;
  if (v instanceof Map) return 'Map';
  return (v as { constructor?: { name?: string } }).constructor?.name ?? 'object';
}

function refusal(fault: PythonJsonFault): GroupError {
  switch (fault.kind) {
    case 'float':
      return new GroupError('GROUP_JSON_FLOAT', FLOAT);
    case 'unsafe-integer':
      return new GroupError('GROUP_JSON_UNSAFE_INTEGER', `integer ${fault.value} is beyond 2^53 - 1 as a number; give it as a bigint`);
    case 'lone-surrogate':
      return new GroupError('GROUP_JSON_LONE_SURROGATE', 'a string contains an unpaired UTF-16 surrogate, which UTF-8 cannot encode');
    case 'string-too-long':
      return new GroupError('GROUP_JSON_STRING_TOO_LONG', 'string exceeds the group protocol limit');
    case 'too-deep':
      return new GroupError('GROUP_JSON_TOO_DEEP', DEEP);
    case 'too-many-items':
      return new GroupError('GROUP_JSON_TOO_MANY_ITEMS', `${fault.container} exceeds the group protocol limit`);
    case 'key-not-string':
      return new GroupError('GROUP_JSON_KEY_NOT_STRING', 'JSON object keys must be strings');
    case 'unsupported':
      return new GroupError('GROUP_JSON_UNSUPPORTED', `unsupported JSON value type: ${typeName(fault.value)}`);
    default:
      // Non-finite numbers are floats here, and bytes and sets are objects of another type.
      return new GroupError('GROUP_JSON_UNSUPPORTED', `unsupported JSON value: ${fault.kind}`);
  }
}

/**
 * The reference's limits, checked in one walk with the writing, members in insertion order. Enumerable
 * symbol keys only are refused: a non-enumerable one (a reader's bookkeeping) is no part of the value.
 */
export const GROUP_JSON: PythonJsonPolicy = {
  floats: 'refused',
  negativeZero: 'zero',
  integersBelow: 2 ** 53,
  rawNumbers: true,
  entries: false,
  loneSurrogates: 'refused',
  maxStringBytes: MAX_GROUP_STRING_BYTES,
  depthCounts: 'values',
  maxDepth: MAX_GROUP_JSON_DEPTH,
  maxItems: MAX_GROUP_CONTAINER_ITEMS,
  mapKeys: 'checked',
  symbolKeys: 'enumerable-refused',
  bytesAndSets: 'unsupported',
  memberOrder: 'insertion',
  refuse: refusal,
};

/** Throws GroupError unless `value` is within the group protocol's limits (the reference's _validate_json). */
export function checkGroupJson(value: unknown): void {
  checkPythonJson(value, GROUP_JSON);
}

/**
 * A value's canonical text with its height (how many levels below it the deepest value or key sits),
 * so that texts written once can be put together into a larger object (objectPart) with the same
 * depth check as writing that object whole.
 */
export type CanonicalPart = JsonPart;

/** Texts of deep-frozen values written under GROUP_JSON, for a writer that meets the same frozen values again and again (the leader: one state, and each member's view sharing most of it). */
export type TextCache = JsonTextCache;

/** Group canonical JSON text of a value, or GroupError. */
export function groupCanonical(value: unknown): string {
  return pythonJson(value, GROUP_JSON);
}

/** groupCanonical, with the height of the value; with a cache, frozen values already written are not written again. */
export function canonicalPart(value: unknown, texts?: TextCache): CanonicalPart {
  return pythonJsonPart(value, GROUP_JSON, texts);
}

/**
 * The canonical text of an object whose values are already written: the same text, and the same
 * GROUP_JSON_TOO_DEEP refusal, as groupCanonical of the object itself. Keys are the caller's own
 * (well-formed, short).
 */
export function objectPart(parts: Record<string, CanonicalPart>, order?: SortedKeys): CanonicalPart {
  const keys =
    order && order.length === Object.keys(parts).length && order.every((k) => Object.hasOwn(parts, k)) ? order : Object.keys(parts).sort(compareCodePoints);
  if (keys.length === 0) return { text: '{}', height: 0 };
  let height = 0;
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const p = parts[keys[i]!]!;
    if (1 + p.height > MAX_GROUP_JSON_DEPTH) throw new GroupError('GROUP_JSON_TOO_DEEP', DEEP);
    if (p.height > height) height = p.height;
    out += `${i === 0 ? '' : ','}${JSON.stringify(keys[i])}:${p.text}`;
  }
  return { text: `${out}}`, height: height + 1 };
}

/** Keys in canonical order, for objectPart to skip sorting an object of a known shape. */
export type SortedKeys = readonly string[] & { readonly sorted: true };
export const sortedKeys = (keys: readonly string[]): SortedKeys => Object.assign([...keys].sort(compareCodePoints), { sorted: true as const });

/** SHA-256 hex of a canonical text (groupJsonHash of the value it was written from). */
export function textHash(crypto: Crypto, text: string): string {
  return textHashes(crypto, [text]).hashes[0]!;
}

const encoder = new TextEncoder();
/** Where texts are encoded to be hashed: one buffer, grown as needed, instead of an allocation per text. */
let scratch = new Uint8Array(1 << 16);

/** The scratch buffer, at least `n` bytes long, its first `keep` bytes kept. */
function room(n: number, keep: number): Uint8Array {
  if (scratch.length < n) {
    const grown = new Uint8Array(Math.max(n, scratch.length * 2));
    grown.set(scratch.subarray(0, keep));
    scratch = grown;
  }
  return scratch;
}

/** A text's length in UTF-8 bytes. */
export function utf8ByteLength(text: string): number {
  return encoder.encodeInto(text, room(text.length * 3, 0)).written;
}

/**
 * How many UTF-16 units every text starts with in common (never half a surrogate pair, so that the
 * shared part and each rest are UTF-8 on their own). Compared as whole slices, which the engine
 * compares at memory speed, and narrowed by halving where a text departs.
 */
export function sharedPrefixLength(texts: readonly string[]): number {
  const first = texts[0] ?? '';
  let n = first.length;
  for (let i = 1; i < texts.length && n > 0; i++) {
    const t = texts[i]!;
    if (t.length >= n && t.slice(0, n) === first.slice(0, n)) continue;
    let lo = 0;
    let hi = Math.min(n, t.length);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (t.slice(0, mid) === first.slice(0, mid)) lo = mid;
      else hi = mid - 1;
    }
    n = lo;
  }
  if (n > 0 && (first.charCodeAt(n - 1) & 0xfc00) === 0xd800) n--;
  return n;
}

/**
 * SHA-256 hex of each text, and its length in UTF-8 bytes. The texts a frame writes for its members
 * share most of their bytes (the same state, the same checkpoint), so what they share is encoded and
 * hashed once (sha256Shared) and each text's own rest after it.
 */
export function textHashes(crypto: Crypto, texts: readonly string[]): { hashes: string[]; lengths: number[] } {
  const shared = texts.length > 1 ? sharedPrefixLength(texts) : 0;
  const head = (texts[0] ?? '').slice(0, shared);
  const headBytes = encoder.encodeInto(head, room(head.length * 3, 0)).written;
  const restLengths = new Uint32Array(texts.length);
  let end = headBytes;
  texts.forEach((text, i) => {
    const rest = shared === 0 ? text : text.slice(shared);
    // Three bytes per UTF-16 unit at most, so the rest always fits.
    const buf = room(end + rest.length * 3, end);
    const n = encoder.encodeInto(rest, buf.subarray(end)).written;
    restLengths[i] = n;
    end += n;
  });
  const digests = crypto.sha256Shared(scratch.subarray(0, headBytes), scratch.subarray(headBytes, end), restLengths);
  const hashes: string[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    hashes.push(toHex(digests.subarray(32 * i, 32 * i + 32)));
    lengths.push(headBytes + restLengths[i]!);
  }
  return { hashes, lengths };
}

/** Its UTF-8 bytes (what is hashed, signed and measured). */
export function groupCanonicalBytes(value: unknown): Uint8Array {
  return utf8(groupCanonical(value));
}

/** The reference's json_hash: SHA-256 hex of the group canonical JSON. */
export function groupJsonHash(crypto: Crypto, value: unknown): string {
  return textHash(crypto, groupCanonical(value));
}

/**
 * JSON text as the reference's json.loads reads it (integers exact, bigint beyond 2^53; a float kept
 * as written, so that the group check refuses it). Only strict JSON: GroupError GROUP_JSON_SYNTAX otherwise.
 */
export function parseGroupJson(text: string): unknown {
  try {
    return parseRealtimeJson(text);
  } catch (e) {
    if (e instanceof RealtimeError) throw new GroupError('GROUP_JSON_SYNTAX', e.message);
    throw e;
  }
}
