/**
 * The group protocol's JSON delta (the reference's proto/json_delta.py): `makeDelta(before, after)`
 * lists `set` / `remove` / `splice` operations that `applyDelta` replays, the same operations the
 * reference makes — objects key by key in code-point order (removed keys, then common ones, then new
 * ones), arrays as one splice around their common prefix and suffix, or as the drop-and-append pair of
 * a sliding window — and more than MAX_DELTA_OPS operations or a path deeper than MAX_DELTA_PATH_DEPTH
 * become one `set` of the root.
 *
 * One deliberate difference: equality here is JSON equality. The reference compares with Python's
 * `==`, under which `1 == True` and `0 == False`, so a value turning from `1` into `true` yields no
 * operation, the replayed state keeps `1`, and its hash no longer matches the sender's (its own replica
 * then refuses the frame). Here a number never equals a boolean, so applyDelta(before, makeDelta(before,
 * after)) has the canonical JSON of `after`, always. -0 and 0 are one JSON value (both are written `0`).
 *
 * applyDelta refuses what the reference refuses, with its texts, and never changes its arguments.
 */
import { RawNumber } from '../crypto/jcs.js';
import { compareCodePoints } from '../crypto/unicode.js';
import { GroupError } from './errors.js';
import type { GroupJson } from './json.js';

export const MAX_DELTA_OPS = 1024;
export const MAX_DELTA_PATH_DEPTH = 32;

export type PathToken = string | number;
export type DeltaOp =
  | { op: 'set'; path: PathToken[]; value: GroupJson }
  | { op: 'remove'; path: PathToken[] }
  | { op: 'splice'; path: PathToken[]; index: number; delete: number; items: GroupJson[] };

type Obj = Record<string, unknown>;

const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

function isObject(v: unknown): v is Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A key set on an object as an ordinary property, "__proto__" included. */
function put(o: Obj, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function clone<T>(v: T): T {
  if (Array.isArray(v)) return v.map(clone) as T;
  if (isObject(v)) {
    const o: Obj = {};
    // Assignment is an ordinary own property for every key but "__proto__", which would set the prototype.
    for (const k of Object.keys(v)) {
      if (k === '__proto__') put(o, k, clone(v[k]));
      else o[k] = clone(v[k]);
    }
    return o as T;
  }
  return v;
}

function numberText(v: number | bigint | RawNumber): string {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v).toString() : String(v);
  return /^-?(0|[1-9][0-9]*)$/.test(v.text) ? BigInt(v.text).toString() : v.text;
}

const isNumber = (v: unknown): v is number | bigint | RawNumber => typeof v === 'number' || typeof v === 'bigint' || v instanceof RawNumber;

/**
 * A caller's shortcut for comparing two arrays or objects (true or false), or undefined when it does
 * not know: the leader knows the canonical texts of its frozen values, and equal texts are equal JSON.
 */
export type EqualityHint = (a: object, b: object) => boolean | undefined;

/**
 * The operations found between two arrays or objects at a path, for a caller that diffs many values
 * sharing parts (the leader: every member's view holds parts of the same state): each pair is diffed
 * once, and the deltas that meet it again share its operations.
 */
export type DeltaMemo = WeakMap<object, Map<object, { path: PathToken[]; ops: DeltaOp[] }>>;

let hint: EqualityHint | null = null;
let memo: DeltaMemo | null = null;

/** JSON equality: same kind and same value; a boolean never equals a number. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (hint !== null && typeof a === 'object' && typeof b === 'object' && a !== null && b !== null) {
    const known = hint(a, b);
    if (known !== undefined) return known;
  }
  if (isNumber(a) || isNumber(b)) {
    if (typeof a === 'number' && typeof b === 'number') return false; // a === b failed; NaN equals nothing
    return isNumber(a) && isNumber(b) && numberText(a) === numberText(b);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) if (!own(b, k) || !jsonEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/**
 * The operations that turn `before` into `after`; `same` may answer some comparisons of arrays and
 * objects, and `known` holds (and gains) the operations of pairs diffed before.
 */
export function makeDelta(before: GroupJson, after: GroupJson, same?: EqualityHint, known?: DeltaMemo): DeltaOp[] {
  return boundedDelta(diffAt(before, after, [], same, known), after);
}

/**
 * The operations makeDelta finds between `before` and `after` at `path` (in the values they are part
 * of), before its bound: for a caller that diffs a value member by member and bounds the whole
 * (boundedDelta) itself.
 */
export function diffAt(before: unknown, after: unknown, path: PathToken[], same?: EqualityHint, known?: DeltaMemo): DeltaOp[] {
  const ops: DeltaOp[] = [];
  const outer = [hint, memo] as const;
  hint = same ?? null;
  memo = known ?? null;
  try {
    diff(before, after, path, ops);
  } finally {
    [hint, memo] = outer;
  }
  return ops;
}

/** The operations of a whole delta to `after`, or one `set` of the root when they are too many or reach too deep. */
export function boundedDelta(ops: DeltaOp[], after: GroupJson): DeltaOp[] {
  if (ops.length > MAX_DELTA_OPS || ops.some((o) => o.path.length > MAX_DELTA_PATH_DEPTH)) return [{ op: 'set', path: [], value: clone(after) }];
  return ops;
}

/** A copy of a JSON value (what a `set` operation carries). */
export const copyJson = <T>(v: T): T => clone(v);

function diff(before: unknown, after: unknown, path: PathToken[], ops: DeltaOp[]): void {
  // The same value (the leader's views share the state's objects) is equal JSON, with nothing to diff or remember.
  if (before === after) return;
  if (memo === null || typeof before !== 'object' || typeof after !== 'object' || before === null || after === null) return diffPair(before, after, path, ops);
  const found = memo.get(before)?.get(after);
  if (found !== undefined && found.path.length === path.length && found.path.every((t, i) => t === path[i])) {
    for (const op of found.ops) ops.push(op);
    return;
  }
  const start = ops.length;
  diffPair(before, after, path, ops);
  let byAfter = memo.get(before);
  if (byAfter === undefined) memo.set(before, (byAfter = new Map()));
  byAfter.set(after, { path: [...path], ops: ops.slice(start) });
}

function diffPair(before: unknown, after: unknown, path: PathToken[], ops: DeltaOp[]): void {
  if (jsonEqual(before, after)) return;
  if (isObject(before) && isObject(after)) {
    const keys = Object.keys(before).sort(compareCodePoints);
    for (const k of keys) if (!own(after, k)) ops.push({ op: 'remove', path: [...path, k] });
    for (const k of keys) if (own(after, k)) diff(before[k], after[k], [...path, k], ops);
    const added = Object.keys(after).filter((k) => !own(before, k));
    for (const k of added.sort(compareCodePoints)) ops.push({ op: 'set', path: [...path, k], value: clone(after[k]) as GroupJson });
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) return diffList(before, after, path, ops);
  ops.push({ op: 'set', path: [...path], value: clone(after) as GroupJson });
}

function diffList(before: unknown[], after: unknown[], path: PathToken[], ops: DeltaOp[]): void {
  const splice = (index: number, del: number, items: unknown[]): void => {
    ops.push({ op: 'splice', path: [...path], index, delete: del, items: clone(items) as GroupJson[] });
  };
  let prefix = 0;
  const limit = Math.min(before.length, after.length);
  while (prefix < limit && jsonEqual(before[prefix], after[prefix])) prefix++;
  let suffix = 0;
  while (suffix < before.length - prefix && suffix < after.length - prefix && jsonEqual(before[before.length - suffix - 1], after[after.length - suffix - 1]))
    suffix++;
  if (prefix || suffix) return splice(prefix, before.length - suffix - prefix, after.slice(prefix, after.length - suffix));
  // A bounded history that slid: drop its expired head, then append the new tail.
  for (let drop = 1; drop < before.length; drop++) {
    const overlap = before.length - drop;
    if (overlap > after.length) continue;
    let same = true;
    for (let i = 0; same && i < overlap; i++) same = jsonEqual(before[drop + i], after[i]);
    if (!same) continue;
    splice(0, drop, []);
    if (overlap < after.length) splice(overlap, 0, after.slice(overlap));
    return;
  }
  splice(0, before.length, after);
}

const fail = (code: ConstructorParameters<typeof GroupError>[0], message: string): never => {
  throw new GroupError(code, message);
};

function hasExactly(op: Obj, keys: readonly string[]): boolean {
  const have = Object.keys(op);
  return have.length === keys.length && keys.every((k) => own(op, k));
}

/** A non-negative integer as Python's `int` (not bool) sees one, or undefined. */
function index(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

function checkPath(v: unknown): PathToken[] {
  if (!Array.isArray(v) || v.length > MAX_DELTA_PATH_DEPTH) fail('DELTA_PATH_INVALID', 'JSON delta path is invalid');
  return (v as unknown[]).map((t) => {
    if (typeof t === 'string') return t;
    const i = index(t);
    if (i === undefined || i < 0) return fail('DELTA_PATH_TOKEN', 'JSON delta path token is invalid');
    return i === 0 ? 0 : i;
  });
}

function resolve(root: unknown, path: PathToken[]): unknown {
  let cur = root;
  for (const t of path) {
    if (isObject(cur) && typeof t === 'string') {
      if (!own(cur, t)) fail('DELTA_PATH_MISSING', 'JSON delta path does not exist');
      cur = cur[t];
    } else if (Array.isArray(cur) && typeof t === 'number') {
      if (t >= cur.length) fail('DELTA_PATH_OUT_OF_BOUNDS', 'JSON delta array path is out of bounds');
      cur = cur[t];
    } else fail('DELTA_PATH_TYPE', 'JSON delta path type mismatch');
  }
  return cur;
}

/** `before` with `ops` applied (a new value), or GroupError with the reference's text. */
export function applyDelta(before: unknown, ops: unknown): GroupJson {
  if (!Array.isArray(ops)) fail('DELTA_NOT_ARRAY', 'JSON delta must be an array');
  const list = ops as unknown[];
  if (list.length > MAX_DELTA_OPS) fail('DELTA_TOO_MANY_OPS', 'JSON delta has too many operations');
  let result = clone(before);
  for (const op of list) {
    if (!isObject(op)) return fail('DELTA_OP_NOT_OBJECT', 'JSON delta operation must be an object');
    const path = checkPath(op['path']);
    if (op['op'] === 'set') {
      if (!hasExactly(op, ['op', 'path', 'value'])) fail('DELTA_SET_FIELDS', 'set operation has unknown fields');
      const value = clone(op['value']);
      if (path.length === 0) {
        result = value;
        continue;
      }
      const parent = resolve(result, path.slice(0, -1));
      const t = path[path.length - 1]!;
      if (isObject(parent) && typeof t === 'string') put(parent, t, value);
      else if (Array.isArray(parent) && typeof t === 'number' && t < parent.length) parent[t] = value;
      else fail('DELTA_SET_TARGET', 'JSON delta set target is invalid');
    } else if (op['op'] === 'remove') {
      if (!hasExactly(op, ['op', 'path']) || path.length === 0) fail('DELTA_REMOVE_INVALID', 'remove operation is invalid');
      const parent = resolve(result, path.slice(0, -1));
      const t = path[path.length - 1]!;
      if (isObject(parent) && typeof t === 'string' && own(parent, t)) delete parent[t];
      else if (Array.isArray(parent) && typeof t === 'number' && t < parent.length) parent.splice(t, 1);
      else fail('DELTA_REMOVE_TARGET', 'JSON delta remove target is invalid');
    } else if (op['op'] === 'splice') {
      if (!hasExactly(op, ['op', 'path', 'index', 'delete', 'items'])) fail('DELTA_SPLICE_FIELDS', 'splice operation has unknown fields');
      const target = resolve(result, path);
      if (!Array.isArray(target)) return fail('DELTA_SPLICE_TARGET', 'splice target must be an array');
      const at = index(op['index']);
      const del = index(op['delete']);
      const items = op['items'];
      if (at === undefined || del === undefined || at < 0 || at > target.length || del < 0 || del > target.length - at || !Array.isArray(items)) {
        fail('DELTA_SPLICE_BOUNDS', 'splice bounds are invalid');
      }
      const next = [...target.slice(0, at), ...clone(items as unknown[]), ...target.slice(at! + del!)];
      target.length = 0;
      for (const x of next) target.push(x);
    } else fail('DELTA_OP_UNKNOWN', 'unsupported JSON delta operation');
  }
  return result as GroupJson;
}
