/**
 * The one writer of Python-style JSON: `json.dumps(value, sort_keys=True, ensure_ascii=False,
 * separators=(",", ":"))`, which protocol_id, mental-poker transcripts, realtime and group hashes all
 * use. Keys sort by code point (not UTF-16 unit), non-ASCII is written raw, and strings get the escapes
 * JSON.stringify gives well-formed text (the same as Python's). Integers are exact at any size (bigint,
 * or a RawNumber literal kept as written); a float prints as Python's repr.
 *
 * What differs between uses is a PythonJsonPolicy, each kept next to its use: what a JS number means
 * (JS has one number type where Python has int and float), which values are refused, with which fault,
 * in which order, and with which error. A value with several faults is refused for the first one met,
 * walking members in the order the policy names; the writer keeps no state between calls.
 */
import { CryptoError } from './errors.js';
import { Entries, RawNumber } from './jcs.js';
import { compareCodePoints, isWellFormed, utf8Length } from './unicode.js';

/** Python's repr() of a finite double: shortest round-trip digits, fixed for 1e-4 <= |x| < 1e16. */
export function pythonFloatRepr(x: number): string {
  if (!Number.isFinite(x)) throw new CryptoError('JSON_NUMBER_RANGE', `${x} has no JSON form`);
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expText] = x.toExponential().split('e') as [string, string];
  const sign = mant.startsWith('-') ? '-' : '';
  const digits = mant.replace('-', '').replace('.', '');
  const k = Number(expText);
  if (k >= -4 && k < 16) {
    if (k >= 0) {
      const int = digits.slice(0, k + 1).padEnd(k + 1, '0');
      return `${sign}${int}.${digits.slice(k + 1) || '0'}`;
    }
    return `${sign}0.${'0'.repeat(-k - 1)}${digits}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${k < 0 ? '-' : '+'}${String(Math.abs(k)).padStart(2, '0')}`;
}

/** Why a value was refused; the policy turns it into its own error. */
export type PythonJsonFault =
  /** A float where floats are refused (a fraction, NaN, an infinity, a float literal, or -0 as a float). */
  | { readonly kind: 'float' }
  /** NaN or an infinity where floats are written: JSON has no form for it. */
  | { readonly kind: 'not-finite'; readonly value: number }
  /** A whole JS number beyond ±(2^53 − 1) where floats are refused: it may already have been rounded. */
  | { readonly kind: 'unsafe-integer'; readonly value: number }
  | { readonly kind: 'lone-surrogate' }
  | { readonly kind: 'string-too-long' }
  | { readonly kind: 'too-deep' }
  | { readonly kind: 'too-many-items'; readonly container: 'array' | 'object' }
  | { readonly kind: 'key-not-string' }
  | { readonly kind: 'bytes-or-set' }
  /** Anything else JSON cannot carry: undefined, a function, a symbol, a Map, an object of a class. */
  | { readonly kind: 'unsupported'; readonly value: unknown };

/** How one use of the writer reads JS values and what it refuses. */
export interface PythonJsonPolicy {
  /** A JS number that is not whole (NaN and the infinities included): written as Python's float repr, or refused ('float'). */
  readonly floats: 'repr' | 'refused';
  /** -0: the float -0.0 (written or refused with the floats), or the integer 0 that JSON.stringify sends. */
  readonly negativeZero: 'float' | 'zero';
  /**
   * A whole JS number below this magnitude is an integer; at or above it, a float where floats are
   * written, else refused ('unsafe-integer').
   */
  readonly integersBelow: number;
  /** Whether a RawNumber (a literal kept as written) is a number; otherwise it is an object of another type. */
  readonly rawNumbers: boolean;
  /** Whether an Entries (an object as its entries) is an object; otherwise it is an object of another type. */
  readonly entries: boolean;
  /**
   * An unpaired surrogate in a string or key: escaped (`\udxxx`, as JSON.stringify writes it), refused
   * where it is met, or refused only once the rest of the value has passed (where UTF-8 encoding of the
   * whole text is what fails).
   */
  readonly loneSurrogates: 'escaped' | 'refused' | 'refused-last';
  /** Longest string or key, in UTF-8 bytes ('string-too-long'). */
  readonly maxStringBytes: number;
  /** What the depth limit counts: every value (the root at 0, a key at its value's depth), or only arrays and objects. */
  readonly depthCounts: 'values' | 'containers';
  /** Deepest level a counted value may sit at ('too-deep'). */
  readonly maxDepth: number;
  /** Most items of an array or members of an object or Map ('too-many-items'). */
  readonly maxItems: number;
  /** A Map: refused as unsupported outright, or first for a key that is not a string ('key-not-string'), as for a Python dict. */
  readonly mapKeys: 'ignored' | 'checked';
  /** Symbol keys of a plain object: ignored, refused ('key-not-string') when enumerable, or refused whenever present. */
  readonly symbolKeys: 'ignored' | 'enumerable-refused' | 'refused';
  /** A Set, ArrayBuffer or typed array: its own fault ('bytes-or-set', met before depth), or an unsupported object. */
  readonly bytesAndSets: 'own-fault' | 'unsupported';
  /** The order an object's members are checked in: as inserted, or sorted (as json.dumps meets them while writing). */
  readonly memberOrder: 'insertion' | 'sorted';
  /** The error to throw for a fault. */
  readonly refuse: (fault: PythonJsonFault) => Error;
}

/** A value's text with its height: how many counted levels below it the deepest one sits. */
export interface JsonPart {
  readonly text: string;
  readonly height: number;
}

/**
 * Texts of deep-frozen arrays and objects by identity, written under one policy: a writer that meets
 * the same frozen values again and again writes them once. A value is kept only if it and everything
 * below it were frozen when written, so it cannot have changed since.
 */
export type JsonTextCache = WeakMap<object, JsonPart>;

const FLOAT: PythonJsonFault = { kind: 'float' };
const LONE: PythonJsonFault = { kind: 'lone-surrogate' };
const TOO_LONG: PythonJsonFault = { kind: 'string-too-long' };
const TOO_DEEP: PythonJsonFault = { kind: 'too-deep' };
const TOO_MANY_ITEMS: PythonJsonFault = { kind: 'too-many-items', container: 'array' };
const TOO_MANY_MEMBERS: PythonJsonFault = { kind: 'too-many-items', container: 'object' };
const KEY_NOT_STRING: PythonJsonFault = { kind: 'key-not-string' };
const BYTES_OR_SET: PythonJsonFault = { kind: 'bytes-or-set' };

/** A decimal integer literal: where floats are refused, anything else a RawNumber holds is one. */
const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/;

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const byCodePoint = (a: readonly [string, string], b: readonly [string, string]): number => compareCodePoints(a[0], b[0]);

/** One call's walk: the state it keeps lives and dies with the call. */
class Walk {
  /** The deepest counted level met so far (a part's height is measured from it). */
  private deepest = 0;
  /** Whether everything written since the innermost open container was frozen (kept only with a cache). */
  private frozen = true;
  /** Whether an unpaired surrogate was met where the policy refuses it last. */
  private lone = false;

  constructor(
    private readonly p: PythonJsonPolicy,
    /** Whether text is written; a check only walks. */
    private readonly emit: boolean,
    private readonly cache: JsonTextCache | null,
  ) {}

  root(v: unknown): JsonPart {
    const text = this.value(v, 0);
    if (this.lone) throw this.p.refuse(LONE);
    return { text, height: this.deepest };
  }

  private value(v: unknown, depth: number): string {
    if (this.p.depthCounts === 'values') this.reach(depth);
    switch (typeof v) {
      case 'string':
        this.checkString(v);
        return this.emit ? JSON.stringify(v) : '';
      case 'number':
        return this.number(v);
      case 'boolean':
        return v ? 'true' : 'false';
      case 'bigint':
        return this.emit ? v.toString() : '';
      case 'object':
        return v === null ? 'null' : this.object(v, depth);
      default:
        throw this.p.refuse({ kind: 'unsupported', value: v });
    }
  }

  /** Meets a counted value at `depth`: refused past the limit, else the deepest so far. */
  private reach(depth: number): void {
    if (depth > this.p.maxDepth) throw this.p.refuse(TOO_DEEP);
    if (depth > this.deepest) this.deepest = depth;
  }

  private checkString(s: string): void {
    const p = this.p;
    if (p.loneSurrogates !== 'escaped' && !isWellFormed(s)) {
      if (p.loneSurrogates === 'refused') throw p.refuse(LONE);
      this.lone = true;
    }
    // Three bytes per UTF-16 unit at most, so short strings need no count.
    if (s.length * 3 > p.maxStringBytes && utf8Length(s) > p.maxStringBytes) throw p.refuse(TOO_LONG);
  }

  private number(v: number): string {
    const p = this.p;
    if (Number.isInteger(v) && !(v === 0 && p.negativeZero === 'float' && Object.is(v, -0))) {
      if (Math.abs(v) < p.integersBelow) return this.emit ? (Number.isSafeInteger(v) ? String(v) : BigInt(v).toString()) : '';
      if (p.floats === 'refused') throw p.refuse({ kind: 'unsafe-integer', value: v });
    } else {
      if (p.floats === 'refused') throw p.refuse(FLOAT);
      if (!Number.isFinite(v)) throw p.refuse({ kind: 'not-finite', value: v });
    }
    return this.emit ? pythonFloatRepr(v) : '';
  }

  private rawNumber(v: RawNumber): string {
    const p = this.p;
    // An object too: a container holding one that is not frozen may change, so its text is not kept.
    if (!Object.isFrozen(v)) this.frozen = false;
    if (p.floats === 'refused') {
      if (!INTEGER_LITERAL.test(v.text)) throw p.refuse(FLOAT);
      return this.emit ? BigInt(v.text).toString() : '';
    }
    if (v.isInteger) return this.emit ? BigInt(v.text).toString() : '';
    const x = Number(v.text);
    if (!Number.isFinite(x)) throw p.refuse({ kind: 'not-finite', value: x });
    return this.emit ? pythonFloatRepr(x) : '';
  }

  private object(v: object, depth: number): string {
    if (v instanceof RawNumber && this.p.rawNumbers) return this.rawNumber(v);
    const cache = this.cache;
    if (cache === null) return this.container(v, depth);
    const hit = cache.get(v);
    if (hit !== undefined) {
      // Checked already where it was first written; deeper down, the one fault it can have is depth.
      this.reach(depth + hit.height);
      return hit.text;
    }
    const outerDeepest = this.deepest;
    const outerFrozen = this.frozen;
    this.deepest = depth;
    this.frozen = true;
    const text = this.container(v, depth);
    const kept = this.frozen && !this.lone && Object.isFrozen(v);
    if (kept) cache.set(v, { text, height: this.deepest - depth });
    if (outerDeepest > this.deepest) this.deepest = outerDeepest;
    this.frozen = outerFrozen && kept;
    return text;
  }

  private container(v: object, depth: number): string {
    const p = this.p;
    if (p.bytesAndSets === 'own-fault' && (v instanceof Set || v instanceof ArrayBuffer || ArrayBuffer.isView(v))) throw p.refuse(BYTES_OR_SET);
    if (p.depthCounts === 'containers') this.reach(depth);
    if (Array.isArray(v)) {
      if (v.length > p.maxItems) throw p.refuse(TOO_MANY_ITEMS);
      let out = '[';
      for (let i = 0; i < v.length; i++) {
        const text = this.value(v[i], depth + 1);
        if (this.emit) out += i === 0 ? text : `,${text}`;
      }
      return this.emit ? `${out}]` : '';
    }
    if (v instanceof Entries && p.entries) {
      const entries = p.memberOrder === 'sorted' ? [...v.entries].sort((a, b) => compareCodePoints(a[0], b[0])) : v.entries;
      const members: [string, string][] = [];
      for (const [k, x] of entries) {
        const text = this.member(k, x, depth);
        if (this.emit) members.push([k, text]);
      }
      return this.close(members);
    }
    if (v instanceof Map) {
      if (v.size > p.maxItems) throw p.refuse(TOO_MANY_MEMBERS);
      if (p.mapKeys === 'checked') for (const k of v.keys()) if (typeof k !== 'string') throw p.refuse(KEY_NOT_STRING);
      throw p.refuse({ kind: 'unsupported', value: v });
    }
    if (!isPlainObject(v)) throw p.refuse({ kind: 'unsupported', value: v });
    if (p.symbolKeys !== 'ignored') {
      const symbols = Object.getOwnPropertySymbols(v);
      if (p.symbolKeys === 'refused' ? symbols.length > 0 : symbols.some((s) => Object.prototype.propertyIsEnumerable.call(v, s)))
        throw p.refuse(KEY_NOT_STRING);
    }
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length > p.maxItems) throw p.refuse(TOO_MANY_MEMBERS);
    if (p.memberOrder === 'sorted') keys.sort(compareCodePoints);
    const members: [string, string][] = [];
    for (const k of keys) {
      const text = this.member(k, o[k], depth);
      if (this.emit) members.push([k, text]);
    }
    return this.close(members);
  }

  /** One member's value text, its key checked first. */
  private member(k: string, v: unknown, depth: number): string {
    if (this.p.depthCounts === 'values') this.reach(depth + 1);
    this.checkString(k);
    return this.value(v, depth + 1);
  }

  private close(members: [string, string][]): string {
    if (!this.emit) return '';
    if (this.p.memberOrder === 'insertion') members.sort(byCodePoint);
    let out = '{';
    for (let i = 0; i < members.length; i++) out += `${i === 0 ? '' : ','}${JSON.stringify(members[i]![0])}:${members[i]![1]}`;
    return `${out}}`;
  }
}

/** Python-style JSON text of a value under a policy, or the policy's error for its first fault. */
export function pythonJson(value: unknown, policy: PythonJsonPolicy): string {
  return new Walk(policy, true, null).root(value).text;
}

/** pythonJson with the value's height; with a cache, frozen values already written are not written again. */
export function pythonJsonPart(value: unknown, policy: PythonJsonPolicy, cache?: JsonTextCache): JsonPart {
  return new Walk(policy, true, cache ?? null).root(value);
}

/** Throws what pythonJson would throw for the value, without writing its text. */
export function checkPythonJson(value: unknown, policy: PythonJsonPolicy): void {
  new Walk(policy, false, null).root(value);
}
