/**
 * The reference's group canonical JSON and json_hash (proto/group.py): the realtime serialiser
 * (ts/realtime/json.ts: Python's json.dumps with sorted keys by code point, no spaces, raw UTF-8)
 * behind the group protocol's own check, which refuses floats, nesting deeper than 16, arrays and
 * objects over 1024 items, strings over 64 KiB of UTF-8 and non-string keys.
 *
 * Integers only: a JS number must be an integer; -0 is the integer 0 (JSON's `-0` is Python's int 0,
 * so a peer hashes it as `0`); beyond ±(2^53 − 1) it must be a bigint, since a number there may
 * already have been rounded. A float the lossless reader kept (RawNumber) is refused as a float.
 */
import type { Crypto } from '../crypto/backend.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { RawNumber } from '../crypto/jcs.js';
import { hasLoneSurrogate } from '../mp/canonical.js';
import { RealtimeError } from '../realtime/errors.js';
import { parseRealtimeJson, rtCanonical } from '../realtime/json.js';
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

const INTEGER = /^-?(0|[1-9][0-9]*)$/;

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function utf8Length(s: string): number {
  // Three bytes per UTF-16 unit at most, so short strings need no count.
  return s.length * 3 <= MAX_GROUP_STRING_BYTES ? 0 : utf8(s).length;
}

function checkString(s: string): void {
  if (hasLoneSurrogate(s)) throw new GroupError('GROUP_JSON_LONE_SURROGATE', 'a string contains an unpaired UTF-16 surrogate, which UTF-8 cannot encode');
  if (utf8Length(s) > MAX_GROUP_STRING_BYTES) throw new GroupError('GROUP_JSON_STRING_TOO_LONG', 'string exceeds the group protocol limit');
}

function check(v: unknown, depth: number): void {
  if (depth > MAX_GROUP_JSON_DEPTH) throw new GroupError('GROUP_JSON_TOO_DEEP', DEEP);
  if (v === null || typeof v === 'boolean' || typeof v === 'bigint') return;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new GroupError('GROUP_JSON_FLOAT', FLOAT);
    if (!Number.isSafeInteger(v)) throw new GroupError('GROUP_JSON_UNSAFE_INTEGER', `integer ${v} is beyond 2^53 - 1 as a number; give it as a bigint`);
    return;
  }
  if (typeof v === 'string') return checkString(v);
  if (v instanceof RawNumber) {
    // Only a decimal integer literal: anything else (a fraction, an exponent, NaN) is a float.
    if (!INTEGER.test(v.text)) throw new GroupError('GROUP_JSON_FLOAT', FLOAT);
    return;
  }
  if (typeof v !== 'object') throw new GroupError('GROUP_JSON_UNSUPPORTED', `unsupported JSON value type: ${typeof v}`);
  if (Array.isArray(v)) {
    if (v.length > MAX_GROUP_CONTAINER_ITEMS) throw new GroupError('GROUP_JSON_TOO_MANY_ITEMS', 'array exceeds the group protocol limit');
    for (const item of v) check(item, depth + 1);
    return;
  }
  if (v instanceof Map) {
    // The one JS mapping whose keys can be other than strings, as a Python dict's can.
    if (v.size > MAX_GROUP_CONTAINER_ITEMS) throw new GroupError('GROUP_JSON_TOO_MANY_ITEMS', 'object exceeds the group protocol limit');
    for (const k of v.keys()) if (typeof k !== 'string') throw new GroupError('GROUP_JSON_KEY_NOT_STRING', 'JSON object keys must be strings');
    throw new GroupError('GROUP_JSON_UNSUPPORTED', 'unsupported JSON value type: Map');
  }
  if (!isPlainObject(v)) throw new GroupError('GROUP_JSON_UNSUPPORTED', `unsupported JSON value type: ${(v as { constructor?: { name?: string } }).constructor?.name ?? 'object'}`);
  // Enumerable symbol keys only: a non-enumerable one (a reader's bookkeeping) is no part of the value.
  if (Object.getOwnPropertySymbols(v).some((s) => Object.prototype.propertyIsEnumerable.call(v, s))) throw new GroupError('GROUP_JSON_KEY_NOT_STRING', 'JSON object keys must be strings');
  const keys = Object.keys(v);
  if (keys.length > MAX_GROUP_CONTAINER_ITEMS) throw new GroupError('GROUP_JSON_TOO_MANY_ITEMS', 'object exceeds the group protocol limit');
  for (const k of keys) {
    check(k, depth + 1);
    check((v as Record<string, unknown>)[k], depth + 1);
  }
}

/** Throws GroupError unless `value` is within the group protocol's limits (the reference's _validate_json). */
export function checkGroupJson(value: unknown): void {
  check(value, 0);
}

/** Group canonical JSON text of a value, or GroupError. */
export function groupCanonical(value: unknown): string {
  check(value, 0);
  return rtCanonical(value);
}

/** Its UTF-8 bytes (what is hashed, signed and measured). */
export function groupCanonicalBytes(value: unknown): Uint8Array {
  return utf8(groupCanonical(value));
}

/** The reference's json_hash: SHA-256 hex of the group canonical JSON. */
export function groupJsonHash(crypto: Crypto, value: unknown): string {
  return toHex(crypto.sha256(groupCanonicalBytes(value)));
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
