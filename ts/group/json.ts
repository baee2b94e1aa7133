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
import { compareCodePoints, hasLoneSurrogate } from '../mp/canonical.js';
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

const INTEGER = /^-?(0|[1-9][0-9]*)$/;

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function utf8Length(s: string): number {
  // Three bytes per UTF-16 unit at most, so short strings need no count.
  return s.length * 3 <= MAX_GROUP_STRING_BYTES ? 0 : utf8(s).length;
}

const SURROGATE = /[\ud800-\udfff]/;

function checkString(s: string): void {
  // The plain scan first: the lone-surrogate pattern (with its lookbehind) is the slow one.
  if (SURROGATE.test(s) && hasLoneSurrogate(s)) throw new GroupError('GROUP_JSON_LONE_SURROGATE', 'a string contains an unpaired UTF-16 surrogate, which UTF-8 cannot encode');
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

// Ordinary keys (no surrogate) compare the same by UTF-16 unit as by code point.
const byUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Texts of deep-frozen arrays and objects by identity, for a writer that meets the same frozen values
 * again and again (the leader: one state, and each member's view sharing most of it). A value is kept
 * only if it and everything below it were frozen when written, so it cannot have changed since.
 */
export type TextCache = WeakMap<object, CanonicalPart>;

let deepest = 0;
let cache: TextCache | null = null;
/** Whether everything written since the innermost open container was frozen (kept only with a cache). */
let frozen = true;

/**
 * The check and the writing in one walk, in the check's order (so a value with two faults reports the
 * one checkGroupJson reports): the text rtCanonical writes for a checked value, without building its tree.
 */
function write(v: unknown, depth: number): string {
  if (depth > MAX_GROUP_JSON_DEPTH) throw new GroupError('GROUP_JSON_TOO_DEEP', DEEP);
  if (depth > deepest) deepest = depth;
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      checkString(v);
      return JSON.stringify(v);
    case 'number':
      if (!Number.isInteger(v)) throw new GroupError('GROUP_JSON_FLOAT', FLOAT);
      if (!Number.isSafeInteger(v)) throw new GroupError('GROUP_JSON_UNSAFE_INTEGER', `integer ${v} is beyond 2^53 - 1 as a number; give it as a bigint`);
      return v === 0 ? '0' : String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object':
      break;
    default:
      throw new GroupError('GROUP_JSON_UNSUPPORTED', `unsupported JSON value type: ${typeof v}`);
  }
  if (cache === null) return container(v, depth);
  const hit = cache.get(v);
  if (hit !== undefined) {
    // Checked already where it was first written; deeper down, the one fault it can have is depth.
    if (depth + hit.height > MAX_GROUP_JSON_DEPTH) throw new GroupError('GROUP_JSON_TOO_DEEP', DEEP);
    if (depth + hit.height > deepest) deepest = depth + hit.height;
    return hit.text;
  }
  const [outerDeepest, outerFrozen] = [deepest, frozen];
  deepest = depth;
  frozen = true;
  const text = container(v, depth);
  const kept = frozen && Object.isFrozen(v);
  if (kept) cache.set(v, { text, height: deepest - depth });
  if (outerDeepest > deepest) deepest = outerDeepest;
  frozen = outerFrozen && kept;
  return text;
}

function container(v: object, depth: number): string {
  if (Array.isArray(v)) {
    if (v.length > MAX_GROUP_CONTAINER_ITEMS) throw new GroupError('GROUP_JSON_TOO_MANY_ITEMS', 'array exceeds the group protocol limit');
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i === 0 ? '' : ',') + write(v[i], depth + 1);
    return `${out}]`;
  }
  if (v instanceof RawNumber) {
    check(v, depth);
    return BigInt(v.text).toString();
  }
  if (v instanceof Map || !isPlainObject(v)) {
    check(v, depth);
    throw new GroupError('GROUP_JSON_UNSUPPORTED', 'unsupported JSON value type');
  }
  const o = v as Record<string, unknown>;
  if (Object.getOwnPropertySymbols(o).some((s) => Object.prototype.propertyIsEnumerable.call(o, s))) throw new GroupError('GROUP_JSON_KEY_NOT_STRING', 'JSON object keys must be strings');
  const keys = Object.keys(o);
  if (keys.length > MAX_GROUP_CONTAINER_ITEMS) throw new GroupError('GROUP_JSON_TOO_MANY_ITEMS', 'object exceeds the group protocol limit');
  if (keys.length === 0) return '{}';
  const texts = new Map<string, string>();
  let astral = false;
  for (const k of keys) {
    if (depth + 1 > MAX_GROUP_JSON_DEPTH) throw new GroupError('GROUP_JSON_TOO_DEEP', DEEP);
    if (SURROGATE.test(k)) {
      checkString(k);
      astral = true;
    } else if (k.length * 3 > MAX_GROUP_STRING_BYTES) checkString(k);
    texts.set(k, write(o[k], depth + 1));
  }
  keys.sort(astral ? compareCodePoints : byUnit);
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i === 0 ? '' : ','}${JSON.stringify(keys[i])}:${texts.get(keys[i]!)}`;
  return `${out}}`;
}

/** Group canonical JSON text of a value, or GroupError. */
export function groupCanonical(value: unknown): string {
  return cache === null ? write(value, 0) : canonicalPart(value).text;
}

/**
 * A value's canonical text with its height (how many levels below it the deepest value or key sits),
 * so that texts written once can be put together into a larger object (objectPart) with the same
 * depth check as writing that object whole.
 */
export interface CanonicalPart {
  readonly text: string;
  readonly height: number;
}

/** groupCanonical, with the height of the value; with a cache, frozen values already written are not written again. */
export function canonicalPart(value: unknown, texts?: TextCache): CanonicalPart {
  const saved = [deepest, cache, frozen] as const;
  deepest = 0;
  cache = texts ?? null;
  frozen = true;
  try {
    const text = write(value, 0);
    return { text, height: deepest };
  } finally {
    [deepest, cache, frozen] = saved;
  }
}

/**
 * The canonical text of an object whose values are already written: the same text, and the same
 * GROUP_JSON_TOO_DEEP refusal, as groupCanonical of the object itself. Keys are the caller's own
 * (well-formed, short).
 */
export function objectPart(parts: Record<string, CanonicalPart>, order?: SortedKeys): CanonicalPart {
  const keys = order && order.length === Object.keys(parts).length && order.every((k) => Object.hasOwn(parts, k)) ? order : Object.keys(parts).sort(compareCodePoints);
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

/** The number of UTF-8 bytes of well-formed text (no lone surrogate), without encoding it. */
export function utf8ByteLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c < 0xdc00) i++, (n += 2);
    else n += 2;
  }
  return n;
}

/** SHA-256 hex of a canonical text (groupJsonHash of the value it was written from). */
export function textHash(crypto: Crypto, text: string): string {
  return toHex(crypto.sha256(utf8(text)));
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
