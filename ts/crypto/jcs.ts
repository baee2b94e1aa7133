/**
 * RFC 8785 canonical JSON in pure TypeScript: the `js` backend's implementation, and the JS-value
 * front end both backends share. It mirrors crates/core/src/jcs.rs rule for rule:
 *
 * - before parsing, a text over MAX_INPUT_BYTES of UTF-8 is refused (JSON_TOO_LARGE), then one that
 *   is not well-formed UTF-16 (JSON_LONE_SURROGATE): the core receives text as UTF-8, which cannot
 *   carry an unpaired surrogate, as bytes that are not UTF-8 are refused before they are parsed;
 * - strict RFC 8259 syntax; I-JSON refusals: duplicate keys (compared after unescaping), escaped
 *   unpaired surrogates, numbers that are not finite doubles; nesting deeper than MAX_DEPTH;
 * - a text with several faults is refused for the first one met reading from the left, where an
 *   object's keys are checked for repeats at its closing `}` and a number is range-checked where the
 *   number grammar stops taking characters (serde_json's reading, which the core uses);
 * - keys sorted by UTF-16 code units (JavaScript's own string order);
 * - numbers as Number.prototype.toString, strings as JSON.stringify (which RFC 8785 adopts).
 *
 * Canonicalization writes UTF-8 straight into one growing buffer as it parses, with no tree: see
 * `canonicalBytes` for what that costs in memory.
 */
import { CryptoError } from './errors.js';
import { isWellFormed, utf8Length } from './unicode.js';

/** Deepest nesting of arrays/objects accepted, the same as the Rust core's. */
export const MAX_DEPTH = 127;

/** Longest JSON text accepted, in UTF-8 bytes, the same as the Rust core's (crates/core/src/jcs.rs). */
export const MAX_INPUT_BYTES = 64 << 20;

/** A parsed JSON value. Objects keep their entries in order; numbers are doubles or, with `rawNumbers`, their literal text. */
export type JsonNode = null | boolean | number | string | RawNumber | JsonNode[] | Entries;

/** An object as its entries, so that a key such as "__proto__" stays an ordinary key. */
export class Entries {
  constructor(readonly entries: [string, JsonNode][]) {}
}

/** A number literal kept as written (after validation), for consumers that must not round it. */
export class RawNumber {
  constructor(readonly text: string) {}
  /** Whether the literal is an integer (no fraction, no exponent), as Python's json reads it. */
  get isInteger(): boolean {
    return !/[.eE]/.test(this.text);
  }
}

function syntax(msg: string, at: number): CryptoError {
  return new CryptoError('JSON_SYNTAX', `${msg} at offset ${at}`);
}

function tooLarge(bytes: string): CryptoError {
  return new CryptoError('JSON_TOO_LARGE', `JSON text of ${bytes} bytes is over the ${MAX_INPUT_BYTES}-byte limit`);
}

/**
 * `text` itself if both backends may parse it: at most MAX_INPUT_BYTES of UTF-8, and well-formed
 * UTF-16. These are checked before any parsing, so that the wasm backend can check them before the
 * text is copied into WebAssembly memory.
 */
export function checkText(text: string): string {
  // A UTF-16 unit is at least one UTF-8 byte and at most three.
  if (text.length > MAX_INPUT_BYTES) throw tooLarge(`at least ${text.length}`);
  if (text.length > MAX_INPUT_BYTES / 3) {
    const bytes = utf8Length(text);
    if (bytes > MAX_INPUT_BYTES) throw tooLarge(String(bytes));
  }
  return wellFormed(text);
}

/** What the parser reports as it reads; one implementation builds a tree, the other writes canonical bytes. */
interface Sink {
  literal(v: null | boolean): void;
  number(text: string, value: number): void;
  string(s: string): void;
  arrayStart(): void;
  /** Between two elements of an array. */
  comma(): void;
  arrayEnd(): void;
  objectStart(): void;
  key(k: string): void;
  /** `order` lists the members in key order when they did not arrive in it. */
  objectEnd(order: number[] | undefined): void;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Record<string, number> = { '"': 0x22, '\\': 0x5c, '/': 0x2f, b: 0x08, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09 };
// The text is well-formed UTF-16 by now, so raw surrogates come in pairs and are copied as they are.
const PLAIN = /[^"\\\u0000-\u001f]*/y;

/**
 * The member order of an object with these keys, sorted by UTF-16 code units, or undefined if they
 * are already in it. A key that appears twice is refused here, when the object is complete.
 */
function keyOrder(keys: readonly string[]): number[] | undefined {
  let ascending = true;
  for (let i = 1; i < keys.length && ascending; i++) ascending = keys[i - 1]! < keys[i]!;
  if (ascending) return undefined;
  const order = keys.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
  for (let i = 1; i < order.length; i++) {
    const k = keys[order[i]!]!;
    if (k === keys[order[i - 1]!]) throw new CryptoError('JSON_DUPLICATE_KEY', `duplicate object key ${JSON.stringify(k)} (I-JSON forbids repeated keys)`);
  }
  return order;
}

class Parser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly sink: Sink,
    private readonly rawNumbers = false,
  ) {}

  parseDocument(): void {
    this.value(0);
    this.ws();
    if (this.i !== this.s.length) throw syntax('trailing characters', this.i);
  }

  private ws(): void {
    const s = this.s;
    let i = this.i;
    for (let c = s.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = s.charCodeAt(++i));
    this.i = i;
  }

  private value(depth: number): void {
    this.ws();
    const c = this.s[this.i];
    switch (c) {
      case '{':
        return this.object(depth + 1);
      case '[':
        return this.array(depth + 1);
      case '"':
        return this.sink.string(this.string());
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        throw syntax(c === undefined ? 'unexpected end of input' : `unexpected character ${JSON.stringify(c)}`, this.i);
    }
  }

  private literal(word: string, v: null | boolean): void {
    if (!this.s.startsWith(word, this.i)) throw syntax('invalid literal', this.i);
    this.i += word.length;
    this.sink.literal(v);
  }

  private number(): void {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) throw syntax('invalid number', this.i);
    const t = m[0];
    // Where the grammar would have gone on: a digit after a leading 0, a '.' or an exponent with no
    // digit after it. Anything else ends a complete number, which is range-checked before the
    // character after it is looked at.
    const next = this.s.charCodeAt(this.i + t.length);
    if ((next >= 0x30 && next <= 0x39) || (next === 0x2e && !/[.eE]/.test(t)) || ((next | 0x20) === 0x65 && !/[eE]/.test(t)))
      throw syntax('invalid number', this.i);
    this.i += t.length;
    const n = Number(t);
    // Raw integer literals are exact at any size; every other number must be a finite double.
    if (!Number.isFinite(n) && !(this.rawNumbers && !/[.eE]/.test(t))) throw new CryptoError('JSON_NUMBER_RANGE', `${t.slice(0, 40)} is not a finite double`);
    this.sink.number(t, n);
  }

  private string(): string {
    const s = this.s;
    this.i++; // opening quote
    let out = '';
    for (;;) {
      PLAIN.lastIndex = this.i;
      const run = PLAIN.exec(s)![0];
      out += run;
      this.i += run.length;
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return out;
      }
      if (Number.isNaN(c)) throw syntax('unterminated string', this.i);
      if (c < 0x20) throw syntax('unescaped control character in string', this.i);
      out += this.escape();
    }
  }

  /** The character of the escape at the cursor; an escaped high surrogate takes its low one along. */
  private escape(): string {
    const s = this.s;
    const e = s[this.i + 1];
    const simple = e === undefined ? undefined : ESCAPES[e];
    if (simple !== undefined) {
      this.i += 2;
      return String.fromCharCode(simple);
    }
    if (e !== 'u') throw syntax('invalid escape', this.i);
    const unit = this.hex4();
    if (unit >= 0xdc00 && unit <= 0xdfff) throw new CryptoError('JSON_LONE_SURROGATE', 'unpaired low surrogate in string');
    if (unit < 0xd800 || unit > 0xdbff) return String.fromCharCode(unit);
    // A high surrogate must be followed by `\u` and a low one. The end of the text on the way is a
    // syntax error (the string is unterminated); any other character, an unpaired surrogate.
    const lone = () => new CryptoError('JSON_LONE_SURROGATE', 'unpaired high surrogate in string');
    for (const want of '\\u') {
      if (this.i >= s.length) throw syntax('unterminated string', this.i);
      if (s[this.i] !== want) throw lone();
      this.i++;
    }
    this.i -= 2;
    const low = this.hex4();
    if (low < 0xdc00 || low > 0xdfff) throw lone();
    return String.fromCharCode(unit, low);
  }

  /** Consumes `\uXXXX` at the cursor and returns its code unit. */
  private hex4(): number {
    const h = this.s.slice(this.i + 2, this.i + 6);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) throw syntax('invalid \\u escape', this.i);
    this.i += 6;
    return parseInt(h, 16);
  }

  private array(depth: number): void {
    if (depth > MAX_DEPTH) throw new CryptoError('JSON_TOO_DEEP', `nesting deeper than ${MAX_DEPTH}`);
    this.i++;
    this.sink.arrayStart();
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return this.sink.arrayEnd();
    }
    for (;;) {
      this.value(depth);
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return this.sink.arrayEnd();
      if (c !== ',') throw syntax("expected ',' or ']'", this.i - 1);
      this.sink.comma();
    }
  }

  private object(depth: number): void {
    if (depth > MAX_DEPTH) throw new CryptoError('JSON_TOO_DEEP', `nesting deeper than ${MAX_DEPTH}`);
    this.i++;
    this.sink.objectStart();
    const keys: string[] = [];
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return this.sink.objectEnd(undefined);
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') throw syntax('expected a string key', this.i);
      const k = this.string();
      keys.push(k);
      this.sink.key(k);
      this.ws();
      if (this.s[this.i++] !== ':') throw syntax("expected ':'", this.i - 1);
      this.value(depth);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return this.sink.objectEnd(keyOrder(keys));
      if (c !== ',') throw syntax("expected ',' or '}'", this.i - 1);
    }
  }
}

/** Builds the tree parseJson returns. */
class TreeBuilder implements Sink {
  root: JsonNode = null;
  private readonly open: (JsonNode[] | { obj: Entries; key: string })[] = [];
  constructor(private readonly rawNumbers: boolean) {}

  private put(v: JsonNode): void {
    const top = this.open[this.open.length - 1];
    if (top === undefined) this.root = v;
    else if (Array.isArray(top)) top.push(v);
    else top.obj.entries.push([top.key, v]);
  }
  literal(v: null | boolean): void {
    this.put(v);
  }
  number(text: string, value: number): void {
    this.put(this.rawNumbers ? new RawNumber(text) : value);
  }
  string(s: string): void {
    this.put(s);
  }
  arrayStart(): void {
    const a: JsonNode[] = [];
    this.put(a);
    this.open.push(a);
  }
  comma(): void {}
  arrayEnd(): void {
    this.open.pop();
  }
  objectStart(): void {
    const obj = new Entries([]);
    this.put(obj);
    this.open.push({ obj, key: '' });
  }
  key(k: string): void {
    (this.open[this.open.length - 1] as { key: string }).key = k;
  }
  objectEnd(): void {
    this.open.pop();
  }
}

const encoder = new TextEncoder();
const SHORT_INTEGER = /^(?:0|-?[1-9][0-9]*)$/;

/** Writes the canonical form, as UTF-8, into one buffer that grows by doubling. */
class CanonicalWriter implements Sink {
  buf: Uint8Array;
  len = 0;
  /** Per open object: where its members start and end in `buf`. */
  private readonly open: { starts: number[]; ends: number[] }[] = [];

  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(capacity, 16));
  }

  private grow(need: number): void {
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + need));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  private byte(b: number): void {
    if (this.len === this.buf.length) this.grow(1);
    this.buf[this.len++] = b;
  }
  /** `s` as UTF-8; ASCII, the common case, without a call into the encoder. */
  private text(s: string): void {
    if (this.buf.length - this.len < s.length) this.grow(s.length);
    const buf = this.buf;
    let at = this.len;
    let i = 0;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[at++] = c;
    }
    this.len = at;
    while (i < s.length) {
      const r = encoder.encodeInto(i === 0 ? s : s.slice(i), this.buf.subarray(this.len));
      this.len += r.written;
      i += r.read;
      if (i < s.length) this.grow(Math.max(4, 3 * (s.length - i)));
    }
  }

  literal(v: null | boolean): void {
    this.text(String(v));
  }
  number(text: string, value: number): void {
    // ECMAScript Number::toString (-0 → "0"), which gives back an integer literal of up to 15 digits
    // without a leading minus zero as it is: most numbers take that shortcut.
    this.text(text.length <= 15 && SHORT_INTEGER.test(text) ? text : String(value));
  }
  string(s: string): void {
    this.text(JSON.stringify(s));
  }
  arrayStart(): void {
    this.byte(0x5b);
  }
  comma(): void {
    this.byte(0x2c);
  }
  arrayEnd(): void {
    this.byte(0x5d);
  }
  objectStart(): void {
    this.byte(0x7b);
    this.open.push({ starts: [], ends: [] });
  }
  key(k: string): void {
    const o = this.open[this.open.length - 1]!;
    if (o.starts.length > 0) {
      o.ends.push(this.len);
      this.byte(0x2c);
    }
    o.starts.push(this.len);
    this.string(k);
    this.byte(0x3a);
  }
  objectEnd(order: number[] | undefined): void {
    const o = this.open.pop()!;
    if (o.starts.length > 0) o.ends.push(this.len);
    if (order) {
      // Rewrite the members in key order from a copy of them.
      const region = o.starts[0]!;
      const old = this.buf.slice(region, this.len);
      let at = region;
      order.forEach((m, i) => {
        if (i > 0) this.buf[at++] = 0x2c;
        this.buf.set(old.subarray(o.starts[m]! - region, o.ends[m]! - region), at);
        at += o.ends[m]! - o.starts[m]!;
      });
    }
    this.byte(0x7d);
  }
}

/**
 * Strict parse (the refusals listed at the top of this file) into a tree that keeps object entries in
 * order and, with `rawNumbers`, number literals as written.
 */
export function parseJson(text: string, opts: { rawNumbers?: boolean } = {}): JsonNode {
  const tree = new TreeBuilder(opts.rawNumbers ?? false);
  new Parser(checkText(text), tree, opts.rawNumbers).parseDocument();
  return tree.root;
}

/**
 * The canonical UTF-8 bytes of JSON text. Memory, besides the text: the output buffer, allocated at
 * the text's length and grown by doubling only when the canonical form is longer (numbers such as
 * `1e20` print as 21 digits); per member of each object still open, its key and two offsets; and a
 * copy of an object whose keys are out of order while it is reordered. So `[0,0,…]` of N bytes needs
 * N bytes beside itself.
 */
export function canonicalBytes(text: string): Uint8Array {
  const w = new CanonicalWriter(checkText(text).length);
  new Parser(text, w).parseDocument();
  return w.len === w.buf.length ? w.buf : w.buf.slice(0, w.len);
}

/**
 * The bytes of the first member's value in a canonical object text when its name is `name` (written
 * as it is): from after `{"name":` to the first `,` or `}` outside strings and nested brackets. RFC
 * 8785 writes each member's value in its own canonical form, so these are that value's canonical bytes.
 */
export function firstMemberValue(canonical: Uint8Array, name: string): Uint8Array | undefined {
  const head = encoder.encode(`{"${name}":`);
  for (let i = 0; i < head.length; i++) if (canonical[i] !== head[i]) return undefined;
  let depth = 0;
  for (let i = head.length; i < canonical.length; i++) {
    const c = canonical[i];
    if (c === 0x22) {
      // a string: to its closing quote, stepping over escapes
      for (i++; i < canonical.length && canonical[i] !== 0x22; i++) if (canonical[i] === 0x5c) i++;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && depth > 0) depth--;
    else if ((c === 0x2c || c === 0x7d) && depth === 0) return canonical.subarray(head.length, i);
  }
  return undefined;
}

/**
 * JSON text for a JS value, as JSON.stringify writes it, but refusing what it would silently change:
 * NaN and ±Infinity (JSON.stringify writes null) and bigint (it throws a TypeError). Cycles and
 * over-deep values fail later, in canonicalization, with JSON_TOO_DEEP.
 */
export function stringifyStrict(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (_k, v: unknown) => {
      if (typeof v === 'number' && !Number.isFinite(v)) throw new CryptoError('JSON_NUMBER_RANGE', `${v} is not a finite number`);
      if (typeof v === 'bigint') throw new CryptoError('JSON_UNSUPPORTED_VALUE', 'bigint has no JSON form; convert it to a string or number');
      return v;
    });
  } catch (e) {
    if (e instanceof CryptoError) throw e;
    // JSON.stringify's own TypeError is a circular structure; a RangeError, a string too long for V8.
    if (e instanceof RangeError) throw new CryptoError('JSON_TOO_LARGE', `value cannot be serialized: ${e.message}`);
    throw new CryptoError('JSON_TOO_DEEP', `value cannot be serialized: ${(e as Error).message}`);
  }
  if (text === undefined) throw new CryptoError('JSON_UNSUPPORTED_VALUE', `a ${typeof value} has no JSON form`);
  return text;
}

/**
 * `text` itself if it is well-formed UTF-16, else JSON_LONE_SURROGATE. Strings are UTF-8 encoded on
 * their way into WASM or a hash, and the encoder would silently turn a lone surrogate into U+FFFD.
 */
export function wellFormed(text: string): string {
  if (!isWellFormed(text)) throw new CryptoError('JSON_LONE_SURROGATE', 'string contains an unpaired UTF-16 surrogate');
  return text;
}

/*
 * RFC 8785 text of plain JSON data, written straight from the value, for callers that only hash it
 * (agent-trade's body_hash): the backends' jcsValue serialises with a JSON.stringify replacer, then
 * parses that text again to sort it, which costs a measurable part of an envelope's verify. The text
 * is the one jcsValue gives for the same value: keys sorted by UTF-16 code units, strings and numbers
 * as JSON.stringify writes them. A value this does not vouch for answers undefined and goes to a
 * backend, which gives the result or the error: toJSON, class instances, non-finite numbers, bigint,
 * undefined members, holes, lone surrogates, deep nesting (and so cycles), huge texts.
 */

/** Deep enough for any agent-trade body, well under the backends' own limit of 127. */
const PLAIN_MAX_DEPTH = 64;

/** JSON.stringify writes a lone surrogate as this escape; the backends refuse it, so it is theirs to report. */
const ESCAPED_SURROGATE = /\\ud[89a-f]/;

function writePlain(v: unknown, depth: number): string | undefined {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : undefined;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (v === null) return 'null';
      if (depth >= PLAIN_MAX_DEPTH || typeof (v as { toJSON?: unknown }).toJSON === 'function') return undefined;
      const proto = Object.getPrototypeOf(v) as unknown;
      if (Array.isArray(v)) {
        if (proto !== Array.prototype) return undefined;
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          const item = writePlain(v[i], depth + 1);
          if (item === undefined) return undefined;
          out += i === 0 ? item : `,${item}`;
        }
        return `${out}]`;
      }
      if (proto !== Object.prototype && proto !== null) return undefined;
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o).sort();
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const item = writePlain(o[keys[i]!], depth + 1);
        if (item === undefined) return undefined;
        out += `${i === 0 ? '' : ','}${JSON.stringify(keys[i])}:${item}`;
      }
      return `${out}}`;
    }
    default:
      return undefined;
  }
}

/** The canonical (RFC 8785) text of `value`, or undefined when the backend must decide. */
export function plainCanonicalText(value: unknown): string | undefined {
  const text = writePlain(value, 0);
  return text === undefined || text.length > MAX_INPUT_BYTES / 3 || ESCAPED_SURROGATE.test(text) ? undefined : text;
}
