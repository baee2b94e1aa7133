/**
 * RFC 8785 canonical JSON in pure TypeScript: the `js` backend's implementation, and the JS-value
 * front end both backends share. It mirrors crates/core/src/jcs.rs rule for rule:
 *
 * - strict RFC 8259 syntax; I-JSON refusals: duplicate keys (compared after unescaping), unpaired
 *   surrogates (raw or escaped), numbers that are not finite doubles; nesting deeper than MAX_DEPTH;
 * - keys sorted by UTF-16 code units (JavaScript's own string order);
 * - numbers as Number.prototype.toString, strings as JSON.stringify (which RFC 8785 adopts).
 */
import { CryptoError } from './errors.js';

/** Deepest nesting of arrays/objects accepted, the same as the Rust core's. */
export const MAX_DEPTH = 127;

/** A parsed JSON value. Objects keep their entries in order; numbers are doubles or, with `rawNumbers`, their literal text. */
export type JsonNode = null | boolean | number | string | RawNumber | JsonNode[] | Entries;
type Node = JsonNode;

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

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES: Record<string, number> = { '"': 0x22, '\\': 0x5c, '/': 0x2f, b: 0x08, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09 };
const PLAIN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;

class Parser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly rawNumbers = false,
  ) {}

  parseDocument(): Node {
    const v = this.value(0);
    this.ws();
    if (this.i !== this.s.length) throw syntax('trailing characters', this.i);
    return v;
  }

  private ws(): void {
    while (this.i < this.s.length && WS.has(this.s.charCodeAt(this.i))) this.i++;
  }

  private value(depth: number): Node {
    this.ws();
    const c = this.s[this.i];
    switch (c) {
      case '{':
        return this.object(depth + 1);
      case '[':
        return this.array(depth + 1);
      case '"':
        return this.string();
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

  private literal<T extends Node>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) throw syntax('invalid literal', this.i);
    this.i += word.length;
    return v;
  }

  private number(): number | RawNumber {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) throw syntax('invalid number', this.i);
    const next = this.s[this.i + m[0].length];
    if (next !== undefined && /[0-9.eE+-]/.test(next)) throw syntax('invalid number', this.i);
    this.i += m[0].length;
    // Raw integer literals are exact at any size; every other number must be a finite double.
    if (this.rawNumbers && !/[.eE]/.test(m[0])) return new RawNumber(m[0]);
    const n = Number(m[0]);
    if (!Number.isFinite(n)) throw new CryptoError('JSON_NUMBER_RANGE', `${m[0].slice(0, 40)} is not a finite double`);
    return this.rawNumbers ? new RawNumber(m[0]) : n;
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
      const unit = this.unit();
      if (unit >= 0xdc00 && unit <= 0xdfff) throw new CryptoError('JSON_LONE_SURROGATE', 'unpaired low surrogate in string');
      if (unit < 0xd800 || unit > 0xdbff) {
        out += String.fromCharCode(unit);
        continue;
      }
      // A high surrogate must be followed by a low one, written raw or as an escape.
      const next = s.charCodeAt(this.i);
      let low = -1;
      if (next >= 0xdc00 && next <= 0xdfff) {
        low = next;
        this.i++;
      } else if (s.startsWith('\\u', this.i)) {
        const v = this.hex4(this.i + 2);
        if (v >= 0xdc00 && v <= 0xdfff) {
          low = v;
          this.i += 6;
        }
      }
      if (low < 0) throw new CryptoError('JSON_LONE_SURROGATE', 'unpaired high surrogate in string');
      out += String.fromCharCode(unit, low);
    }
  }

  /** Consumes one UTF-16 code unit of a string body, raw (a surrogate) or as an escape. */
  private unit(): number {
    const s = this.s;
    const c = s.charCodeAt(this.i);
    if (c !== 0x5c) {
      this.i++;
      return c;
    }
    const e = s[this.i + 1];
    const simple = e === undefined ? undefined : ESCAPES[e];
    if (simple !== undefined) {
      this.i += 2;
      return simple;
    }
    if (e !== 'u') throw syntax('invalid escape', this.i);
    const v = this.hex4(this.i + 2);
    this.i += 6;
    return v;
  }

  private hex4(at: number): number {
    const h = this.s.slice(at, at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) throw syntax('invalid \\u escape', at);
    return parseInt(h, 16);
  }

  private array(depth: number): Node[] {
    if (depth > MAX_DEPTH) throw new CryptoError('JSON_TOO_DEEP', `nesting deeper than ${MAX_DEPTH}`);
    this.i++;
    const out: Node[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') throw syntax("expected ',' or ']'", this.i - 1);
    }
  }

  private object(depth: number): Entries {
    if (depth > MAX_DEPTH) throw new CryptoError('JSON_TOO_DEEP', `nesting deeper than ${MAX_DEPTH}`);
    this.i++;
    const entries: [string, Node][] = [];
    const seen = new Set<string>();
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return new Entries(entries);
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') throw syntax('expected a string key', this.i);
      const k = this.string();
      if (seen.has(k)) throw new CryptoError('JSON_DUPLICATE_KEY', `duplicate object key ${JSON.stringify(k)} (I-JSON forbids repeated keys)`);
      seen.add(k);
      this.ws();
      if (this.s[this.i++] !== ':') throw syntax("expected ':'", this.i - 1);
      entries.push([k, this.value(depth)]);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return new Entries(entries);
      if (c !== ',') throw syntax("expected ',' or '}'", this.i - 1);
    }
  }
}

/**
 * Strict parse (the refusals listed at the top of this file) into a tree that keeps object entries in
 * order and, with `rawNumbers`, number literals as written.
 */
export function parseJson(text: string, opts: { rawNumbers?: boolean } = {}): JsonNode {
  return new Parser(text, opts.rawNumbers).parseDocument();
}

function write(node: Node, out: string[]): void {
  if (node instanceof RawNumber) out.push(String(Number(node.text)));
  else if (node === null || typeof node === 'boolean') out.push(String(node));
  else if (typeof node === 'number') out.push(String(node)); // ECMAScript Number::toString; -0 → "0"
  else if (typeof node === 'string') out.push(JSON.stringify(node));
  else if (Array.isArray(node)) {
    out.push('[');
    node.forEach((v, i) => {
      if (i > 0) out.push(',');
      write(v, out);
    });
    out.push(']');
  } else {
    // Default sort compares UTF-16 code units, exactly RFC 8785 §3.2.3.
    const sorted = node.entries.slice().sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    out.push('{');
    sorted.forEach(([k, v], i) => {
      if (i > 0) out.push(',');
      out.push(JSON.stringify(k), ':');
      write(v, out);
    });
    out.push('}');
  }
}

/** The canonical form of JSON text, as a string (its UTF-8 bytes are the canonical bytes). */
export function canonicalizeText(text: string): string {
  const out: string[] = [];
  write(new Parser(text).parseDocument(), out);
  return out.join('');
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
    // JSON.stringify's own TypeError is a circular structure.
    throw new CryptoError('JSON_TOO_DEEP', `value cannot be serialized: ${(e as Error).message}`);
  }
  if (text === undefined) throw new CryptoError('JSON_UNSUPPORTED_VALUE', `a ${typeof value} has no JSON form`);
  return text;
}

/**
 * Whether a JS string is well-formed UTF-16. Text crossing into WASM is UTF-8 encoded, and the encoder
 * would silently replace a lone surrogate with U+FFFD, so the wasm backend checks first.
 */
export function isWellFormed(s: string): boolean {
  // String.prototype.isWellFormed is in Node 20 and current browsers; the regex covers older engines.
  const f = (s as { isWellFormed?: () => boolean }).isWellFormed;
  return f ? f.call(s) : !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/**
 * `text` itself if it is well-formed UTF-16, else JSON_LONE_SURROGATE. Strings are UTF-8 encoded on
 * their way into WASM or a hash, and the encoder would silently turn a lone surrogate into U+FFFD.
 */
export function wellFormed(text: string): string {
  if (!isWellFormed(text)) throw new CryptoError('JSON_LONE_SURROGATE', 'string contains an unpaired UTF-16 surrogate');
  return text;
}
