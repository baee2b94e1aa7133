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
import { compareCodePoints, isWellFormed, utf8Length } from '../crypto/unicode.js';
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

/**
 * An object written member by member: its keys in canonical order, each one's value text and height in
 * that order, and the whole text. `keys` is empty when the object was written whole (a shape the
 * member-by-member writer leaves to the walk); objects written one after another with the same keys
 * mostly share one `keys` array.
 */
export interface WrittenObject {
  readonly keys: readonly string[];
  /** `"key":` of each key, in that order. */
  readonly prefixes: readonly string[];
  readonly values: readonly string[];
  readonly heights: readonly number[];
  readonly part: CanonicalPart;
}

/** `"key":` for keys already checked, by key. */
const keyTexts = new Map<string, string>();
/**
 * The last few objects' keys (as inserted), their canonical order and the keys in that order: a writer
 * of many objects of a few shapes sorts once per shape, and objects of one shape share one `sorted`.
 */
interface Shape {
  keys: readonly string[];
  order: readonly number[];
  sorted: readonly string[];
  /** keyText of each key, in canonical order; undefined if a key is one the walk refuses. */
  prefixes: readonly string[] | undefined;
}
const shapes: Shape[] = [];

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function shapeOf(keys: readonly string[]): Shape {
  for (let i = 0; i < shapes.length; i++) if (sameKeys(keys, shapes[i]!.keys)) return shapes[i]!;
  const order = keys.map((_, i) => i).sort((a, b) => compareCodePoints(keys[a]!, keys[b]!));
  const sorted = Object.freeze(order.map((i) => keys[i]!));
  const prefixes = sorted.map(keyText);
  const shape = { keys, order, sorted, prefixes: prefixes.every((t) => t !== undefined) ? Object.freeze(prefixes as string[]) : undefined };
  if (shapes.length >= 8) shapes.pop();
  shapes.unshift(shape);
  return shape;
}

/** The text before a member's value, or undefined for a key the walk would refuse (unpaired surrogate, too long). */
function keyText(k: string): string | undefined {
  let t = keyTexts.get(k);
  if (t === undefined) {
    if (!isWellFormed(k) || (k.length * 3 > MAX_GROUP_STRING_BYTES && utf8Length(k) > MAX_GROUP_STRING_BYTES)) return undefined;
    if (keyTexts.size >= 4096) keyTexts.clear();
    t = `${JSON.stringify(k)}:`;
    keyTexts.set(k, t);
  }
  return t;
}

/**
 * canonicalPart of a plain object, written member by member (each value with the cache), so that the
 * caller can tell which members many such objects share. Same text and same refusal as canonicalPart
 * of the object: what the member-by-member writer does not take, or would refuse, is written whole by
 * the walk, which meets the first fault as it would.
 */
export function objectParts(value: object, texts?: TextCache): WrittenObject {
  const proto = Object.getPrototypeOf(value);
  if ((proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(value).length === 0) {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o);
    const written = keys.length <= MAX_GROUP_CONTAINER_ITEMS ? membersOf(o, keys, texts) : undefined;
    if (written !== undefined) return written;
  }
  return { keys: [], prefixes: [], values: [], heights: [], part: canonicalPart(value, texts) };
}

function membersOf(o: Record<string, unknown>, keys: readonly string[], texts: TextCache | undefined): WrittenObject | undefined {
  const n = keys.length;
  if (n === 0) return { keys: [], prefixes: [], values: [], heights: [], part: { text: '{}', height: 0 } };
  const { order, sorted: sortedKeys, prefixes } = shapeOf(keys);
  if (prefixes === undefined) return undefined;
  const valueTexts = new Array<string>(n);
  const heights = new Array<number>(n);
  // In insertion order, as the walk meets them.
  for (let i = 0; i < n; i++) {
    const x = o[keys[i]!];
    let text = plainText(x, texts, 1);
    let height = plainHeight;
    if (text === undefined) {
      let p: CanonicalPart;
      try {
        p = canonicalPart(x, texts);
      } catch (e) {
        if (e instanceof GroupError) return undefined;
        throw e;
      }
      text = p.text;
      height = p.height;
    }
    if (1 + height > MAX_GROUP_JSON_DEPTH) return undefined;
    valueTexts[i] = text;
    heights[i] = height;
  }
  const values = new Array<string>(n);
  const sortedHeights = new Array<number>(n);
  let height = 0;
  for (let j = 0; j < n; j++) {
    const i = order[j]!;
    values[j] = valueTexts[i]!;
    sortedHeights[j] = heights[i]!;
    if (heights[i]! > height) height = heights[i]!;
  }
  return { keys: sortedKeys, prefixes, values, heights: sortedHeights, part: new MembersPart(prefixes, values, height + 1) };
}

/**
 * The text of an object written member by member, put together when first read: a caller that needs
 * only the members' texts (a view sent as a delta, hashed from its members) never makes it.
 */
class MembersPart implements CanonicalPart {
  private whole: string | undefined;
  constructor(
    private readonly prefixes: readonly string[],
    private readonly values: readonly string[],
    readonly height: number,
  ) {}

  get text(): string {
    if (this.whole === undefined) {
      let text = '{';
      for (let j = 0; j < this.prefixes.length; j++) text += `${j === 0 ? '' : ','}${this.prefixes[j]!}${this.values[j]!}`;
      this.whole = `${text}}`;
    }
    return this.whole;
  }
}

const EMPTY_OBJECT: CanonicalPart = { text: '{}', height: 0 };

/**
 * canonicalPart of a value about to be frozen whole, with the arrays and objects written anew (not
 * found in the cache) and their texts: once the value is frozen, the caller may keep those texts, and
 * the next writer of the value finds it written. `fresh` is empty when the value was left to the walk.
 */
export function freshPart(value: unknown, texts: TextCache): { part: CanonicalPart; fresh: [object, CanonicalPart][] } {
  const fresh: [object, CanonicalPart][] = [];
  const text = plainText(value, texts, 0, fresh);
  return text === undefined ? { part: canonicalPart(value, texts), fresh: [] } : { part: { text, height: plainHeight }, fresh };
}

/** The height of the value plainText last wrote. */
let plainHeight = 0;

/**
 * The text the walk writes for a value at `depth`, for what the walk would write as it is: a string,
 * a safe integer, a boolean, null, a value whose text the cache holds, and plain arrays and objects of
 * those; undefined for anything else (the caller leaves that to the walk, which also meets its faults).
 * The value's height is left in plainHeight.
 */
function plainText(x: unknown, texts: TextCache | undefined, depth: number, fresh?: [object, CanonicalPart][]): string | undefined {
  plainHeight = 0;
  switch (typeof x) {
    case 'string':
      return isWellFormed(x) && (x.length * 3 <= MAX_GROUP_STRING_BYTES || utf8Length(x) <= MAX_GROUP_STRING_BYTES) ? JSON.stringify(x) : undefined;
    case 'number':
      return Number.isSafeInteger(x) ? String(x) : undefined;
    case 'boolean':
      return x ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (x === null) return 'null';
  const hit = texts?.get(x);
  if (hit !== undefined) {
    plainHeight = hit.height;
    return hit.text;
  }
  if (depth >= MAX_GROUP_JSON_DEPTH) return undefined;
  const proto = Object.getPrototypeOf(x);
  let height = 0;
  if (proto === Array.prototype) {
    const a = x as unknown[];
    if (a.length > MAX_GROUP_CONTAINER_ITEMS) return undefined;
    let text = '[';
    for (let i = 0; i < a.length; i++) {
      const t = plainText(a[i], texts, depth + 1, fresh);
      if (t === undefined) return undefined;
      if (plainHeight + 1 > height) height = plainHeight + 1;
      text += i === 0 ? t : `,${t}`;
    }
    plainHeight = height;
    text += ']';
    fresh?.push([a, { text, height }]);
    return text;
  }
  if ((proto !== Object.prototype && proto !== null) || Object.getOwnPropertySymbols(x).length > 0) return undefined;
  const o = x as Record<string, unknown>;
  const keys = Object.keys(o);
  const n = keys.length;
  if (n > MAX_GROUP_CONTAINER_ITEMS) return undefined;
  if (n === 0) {
    fresh?.push([o, EMPTY_OBJECT]);
    return '{}';
  }
  const { order, prefixes } = shapeOf(keys);
  if (prefixes === undefined) return undefined;
  const values = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const t = plainText(o[keys[i]!], texts, depth + 1, fresh);
    if (t === undefined) return undefined;
    if (plainHeight + 1 > height) height = plainHeight + 1;
    values[i] = t;
  }
  let text = '{';
  for (let j = 0; j < n; j++) text += `${j === 0 ? '' : ','}${prefixes[j]!}${values[order[j]!]!}`;
  plainHeight = height;
  text += '}';
  fresh?.push([o, { text, height }]);
  return text;
}

/**
 * The texts of objects written member by member, as one head they all start with (the members they
 * share, by key and text, in canonical order, and what the next member's texts share) and each one's
 * tail after it: head + tails[i] is objects[i]'s text. The head never ends in half a surrogate pair.
 */
export function sharedMembers(objects: readonly WrittenObject[]): { head: string; tails: string[] } {
  const first = objects[0];
  if (first === undefined) return { head: '', tails: [] };
  let shared = objects.some((o) => o.keys.length === 0) ? 0 : first.keys.length;
  for (let i = 1; i < objects.length && shared > 0; i++) {
    const o = objects[i]!;
    let j = 0;
    while (j < shared && j < o.keys.length && o.keys[j] === first.keys[j] && o.values[j] === first.values[j]) j++;
    shared = j;
  }
  // Every tail starts with a member, or every tail is the closing brace.
  if (shared > 0 && objects.some((o) => o.keys.length === shared) && objects.some((o) => o.keys.length > shared)) shared--;
  if (shared === 0) return { head: '', tails: objects.map((o) => o.part.text) };
  let head = '{';
  for (let j = 0; j < shared; j++) head += `${j === 0 ? '' : ','}${first.prefixes[j]!}${first.values[j]!}`;
  if (first.keys.length === shared) return { head, tails: objects.map(() => '}') };
  // The first member they do not all share still starts alike in most (a view's `vote` differs in the
  // viewer's own ballot): what its texts share joins the head, found on those short texts alone.
  const firsts = objects.map((o) => `${o.prefixes[shared]!}${o.values[shared]!}`);
  const more = sharedPrefixLength(firsts);
  const tails = objects.map((o, i) => {
    let tail = firsts[i]!.slice(more);
    for (let j = shared + 1; j < o.keys.length; j++) tail += `,${o.prefixes[j]!}${o.values[j]!}`;
    return `${tail}}`;
  });
  return { head: `${head},${firsts[0]!.slice(0, more)}`, tails };
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
  return restHashes(crypto, (texts[0] ?? '').slice(0, shared), shared === 0 ? texts : texts.map((t) => t.slice(shared)));
}

/**
 * textHashes of the texts `head + tails[i]`, a head that the caller knows they share (written once and
 * put in front of each) and what the tails share at their start hashed once (unless `alike` is false:
 * the caller knows they share little), without putting the texts together. The head must not end in
 * half a surrogate pair.
 */
export function headHashes(crypto: Crypto, head: string, tails: readonly string[], alike = true): { hashes: string[]; lengths: number[] } {
  const shared = alike && tails.length > 1 ? sharedPrefixLength(tails) : 0;
  if (shared === 0) return restHashes(crypto, head, tails);
  return restHashes(
    crypto,
    head + tails[0]!.slice(0, shared),
    tails.map((t) => t.slice(shared)),
  );
}

function restHashes(crypto: Crypto, head: string, rests: readonly string[]): { hashes: string[]; lengths: number[] } {
  const headBytes = encoder.encodeInto(head, room(head.length * 3, 0)).written;
  const restLengths = new Uint32Array(rests.length);
  let end = headBytes;
  for (let i = 0; i < rests.length; i++) {
    const rest = rests[i]!;
    // Three bytes per UTF-16 unit at most, so the rest always fits.
    const buf = room(end + rest.length * 3, end);
    const n = encoder.encodeInto(rest, buf.subarray(end)).written;
    restLengths[i] = n;
    end += n;
  }
  const digests = crypto.sha256Shared(scratch.subarray(0, headBytes), scratch.subarray(headBytes, end), restLengths);
  const hashes: string[] = [];
  const lengths: number[] = [];
  // All digests in one decoding; each hash is a slice of it.
  const hex = toHex(digests.subarray(0, 32 * rests.length));
  for (let i = 0; i < rests.length; i++) {
    hashes.push(hex.slice(64 * i, 64 * i + 64));
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
