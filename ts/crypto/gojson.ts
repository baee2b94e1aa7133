/**
 * Go `encoding/json` canonical form, as the rin.host/v2 reference computes its digests, and the strict
 * wire parser in front of it. It mirrors crates/core/src/gojson.rs rule for rule.
 *
 * Parsing (`parseWireJson`) accepts what the reference's `jsonwire.Validate` accepts and reports the
 * same class of fault first:
 * - a text over `maxBytes` of UTF-8 is JSON_SIZE before anything else (the reference bounds each
 *   raw document before validating it); then text that is not UTF-8 (bytes) or not well-formed UTF-16
 *   (a string: it cannot be encoded as UTF-8) is JSON_UTF8;
 * - then the grammar, exactly as Go's scanner (`json.Valid`): the first fault from the left is
 *   JSON_SYNTAX, JSON_TRAILING (anything but whitespace after the value) or JSON_DEPTH (more than
 *   `maxDepth` open arrays/objects; Go's limit is 10000);
 * - only a text free of those is judged for escaped surrogates that do not pair (JSON_SURROGATE), and
 *   only one free of those too for a repeated member name at any depth, compared after unescaping
 *   (JSON_DUPLICATE): the reference runs these checks in this order over the whole text.
 *
 * Numbers are never converted: a number is its lexeme, so `1.0`, `-0`, `1e400` survive byte for byte.
 *
 * Canonical form (`canonicalGoJson`) = `json.Marshal` of the value decoded with `UseNumber`: members
 * sorted by the UTF-8 bytes of their unescaped names (which is code point order, not JavaScript's
 * UTF-16 order), no whitespace, lexemes verbatim, and Go's string escaping (`goJsonString`).
 *
 * Parsing and writing use explicit stacks rather than recursion, so 10000 levels cannot overflow
 * the call stack.
 */
import { compareCodePoints, isWellFormed, utf8Length } from './unicode.js';

/** A JSON text written verbatim by goJsonEncode (already canonical / validated). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** start/end are UTF-16 offsets into `text`: text.slice(start,end) is the raw text of a sub-document. */
export type WireNode =
  | { kind: 'object'; members: Array<[name: string, value: WireNode]>; start: number; end: number }
  | { kind: 'array'; items: WireNode[]; start: number; end: number }
  | { kind: 'string'; value: string; start: number; end: number }
  | { kind: 'number'; lexeme: string; start: number; end: number }
  | { kind: 'bool'; value: boolean; start: number; end: number }
  | { kind: 'null'; start: number; end: number };

export const GO_JSON_ERROR_CODES = [
  'JSON_SYNTAX',
  'JSON_UTF8',
  'JSON_DUPLICATE',
  'JSON_SURROGATE',
  'JSON_TRAILING',
  'JSON_DEPTH',
  'JSON_SIZE',
  /** goJsonEncode only: a JS value with no Go JSON form (function, NaN, unsafe integer, Map, cycle…). */
  'JSON_VALUE',
] as const;
export type GoJsonErrorCode = (typeof GO_JSON_ERROR_CODES)[number];

/** The deepest nesting Go's scanner accepts (encoding/json maxNestingDepth). */
export const GO_MAX_DEPTH = 10000;
/**
 * Default size bound in UTF-8 bytes, the same as the Rust core's (8 MiB): the reference control
 * plane's largest request body, so no wire text is longer. The tree of a hostile text at the bound
 * (`[0,0,…]`) takes about 1 GiB of JS heap here and about 300 MiB of WebAssembly memory; callers with
 * smaller documents (arguments: 1 MiB, schemas: 64 KiB) pass their own `maxBytes`.
 */
export const GO_MAX_BYTES = 8 << 20;

/**
 * `message` is the reference's own wording for the fault class (`must be valid UTF-8 JSON`, `must contain
 * well-formed escaped Unicode`, `duplicate object name "x"`), so callers can prefix the field name and
 * match the reference's errors; `detail` says where and what exactly. `path` leads from the root to the
 * fault: member names and array indexes (for a duplicate, it ends with the repeated name).
 */
export class GoJsonError extends Error {
  override readonly name = 'GoJsonError';
  constructor(
    readonly code: GoJsonErrorCode,
    readonly path: Array<string | number>,
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
  }
}

export interface WireParseOptions {
  /** Largest text accepted, in UTF-8 bytes (default GO_MAX_BYTES). */
  maxBytes?: number;
  /** Deepest nesting accepted (default GO_MAX_DEPTH, Go's). */
  maxDepth?: number;
}

const INVALID_JSON = 'must be valid UTF-8 JSON';
const BAD_ESCAPE = 'must contain well-formed escaped Unicode';

/**
 * Code points Go's strconv.IsPrint refuses, beside the ASCII controls: C1 controls, spaces other than
 * U+0020, line and paragraph separators, format characters, private use and noncharacters. Go also
 * escapes unassigned code points, which need Unicode tables; those are written raw here (and in the
 * Rust core, which has no tables either), so both backends give the same message.
 */
const NON_PRINT: ReadonlyArray<readonly [number, number]> = [
  [0x7f, 0x9f],
  [0xa0, 0xa0],
  [0xad, 0xad],
  [0x600, 0x605],
  [0x61c, 0x61c],
  [0x6dd, 0x6dd],
  [0x70f, 0x70f],
  [0x890, 0x891],
  [0x8e2, 0x8e2],
  [0x1680, 0x1680],
  [0x180e, 0x180e],
  [0x2000, 0x200f],
  [0x2028, 0x202f],
  [0x205f, 0x2064],
  [0x2066, 0x206f],
  [0x3000, 0x3000],
  [0xe000, 0xf8ff],
  [0xfdd0, 0xfdef],
  [0xfeff, 0xfeff],
  [0xfff9, 0xfffb],
  [0x110bd, 0x110bd],
  [0x110cd, 0x110cd],
  [0x13430, 0x1343f],
  [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a],
  [0xe0001, 0xe0001],
  [0xe0020, 0xe007f],
  [0xf0000, 0x10ffff],
];

function goPrintable(c: number): boolean {
  if (c < 0x20) return false;
  if ((c & 0xfffe) === 0xfffe) return false; // U+xFFFE and U+xFFFF of every plane
  return !NON_PRINT.some(([lo, hi]) => c >= lo && c <= hi);
}

const QUOTE_SHORT: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 0x22: '\\"', 0x5c: '\\\\' };

/** Go's %q of a name (strconv.Quote), for the duplicate message; see NON_PRINT for the one difference. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    const short = QUOTE_SHORT[c];
    if (short !== undefined) out += short;
    else if (goPrintable(c)) out += ch;
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else if (c < 0x10000) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += '\\U' + c.toString(16).padStart(8, '0');
  }
  return out + '"';
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** An open array or object while parsing. */
interface Frame {
  node: Extract<WireNode, { kind: 'object' } | { kind: 'array' }>;
  /** Names seen so far (objects). */
  names?: Set<string>;
  /** The name whose value is being parsed (objects). */
  pending?: string;
}

const WS = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const DIGIT = (c: number) => c >= 0x30 && c <= 0x39;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

class Parser {
  private i = 0;
  private readonly stack: Frame[] = [];
  /** Faults the reference reports only when the whole text is grammatical, in its order. */
  private surrogate: GoJsonError | undefined;
  private duplicate: GoJsonError | undefined;

  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
  ) {}

  private path(): Array<string | number> {
    const p: Array<string | number> = [];
    const top = this.stack[this.stack.length - 1];
    for (const f of this.stack) {
      // A container is attached to its parent when it opens; a scalar only once read.
      if (f.node.kind === 'array') p.push(f === top ? f.node.items.length : f.node.items.length - 1);
      else if (f.pending !== undefined) p.push(f.pending);
    }
    return p;
  }

  private syntax(what: string, code: GoJsonErrorCode = 'JSON_SYNTAX'): GoJsonError {
    return new GoJsonError(code, this.path(), INVALID_JSON, `${what} at offset ${this.i}`);
  }

  private unexpected(context: string): GoJsonError {
    if (this.i >= this.s.length) return this.syntax(`unexpected end of JSON input ${context}`);
    return this.syntax(`invalid character ${JSON.stringify(this.s[this.i])} ${context}`);
  }

  private skipWs(): void {
    const s = this.s;
    while (this.i < s.length && WS(s.charCodeAt(this.i))) this.i++;
  }

  parse(): WireNode {
    const s = this.s;
    let root: WireNode | undefined;
    // Each turn parses one value (opening a container counts) then closes what it can.
    for (;;) {
      this.skipWs();
      const start = this.i;
      const c = s.charCodeAt(this.i);
      let value: WireNode | undefined;
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (this.stack.length >= this.maxDepth) throw this.syntax(`nesting deeper than ${this.maxDepth}`, 'JSON_DEPTH');
        this.i++;
        const node: Frame['node'] = c === 0x7b ? { kind: 'object', members: [], start, end: -1 } : { kind: 'array', items: [], start, end: -1 };
        this.attach(node);
        this.stack.push(c === 0x7b ? { node, names: new Set() } : { node });
        this.skipWs();
        const close = c === 0x7b ? 0x7d : 0x5d;
        if (s.charCodeAt(this.i) === close) {
          this.i++;
          node.end = this.i;
          this.stack.pop();
          value = node;
        } else if (c === 0x7b) {
          this.memberName();
          continue;
        } else continue;
      } else {
        value = this.scalar();
        this.attach(value);
      }
      if (this.stack.length === 0) {
        root = value;
        break;
      }
      // After a value inside containers: a comma (next member/item) or closing brackets.
      let done = false;
      for (;;) {
        this.skipWs();
        const top = this.stack[this.stack.length - 1]!;
        const isObj = top.node.kind === 'object';
        const d = s.charCodeAt(this.i);
        if (d === 0x2c /* , */) {
          this.i++;
          if (isObj) {
            top.pending = undefined;
            this.skipWs();
            this.memberName();
          }
          break;
        }
        if (d === (isObj ? 0x7d : 0x5d)) {
          this.i++;
          top.node.end = this.i;
          this.stack.pop();
          if (this.stack.length === 0) {
            root = top.node;
            done = true;
            break;
          }
          continue;
        }
        throw this.unexpected(isObj ? 'after object key:value pair' : 'after array element');
      }
      if (done) break;
    }
    this.skipWs();
    if (this.i < s.length) throw this.syntax(`invalid character ${JSON.stringify(s[this.i])} after top-level value`, 'JSON_TRAILING');
    if (this.surrogate) throw this.surrogate;
    if (this.duplicate) throw this.duplicate;
    if (root === undefined) throw this.syntax('no value'); // unreachable: the loop ends only with a root
    return root;
  }

  private attach(node: WireNode): void {
    const top = this.stack[this.stack.length - 1];
    if (!top) return;
    if (top.node.kind === 'array') top.node.items.push(node);
    else top.node.members.push([top.pending!, node]);
  }

  /** At a member name of the object on top: reads `"name" :` (whitespace after the colon is left). */
  private memberName(): void {
    const top = this.stack[this.stack.length - 1]!;
    if (this.s.charCodeAt(this.i) !== 0x22) throw this.unexpected('looking for beginning of object key string');
    const name = this.string();
    if (top.names!.has(name)) {
      if (!this.duplicate) {
        top.pending = name;
        const m = `duplicate object name ${goQuote(name)}`;
        this.duplicate = new GoJsonError('JSON_DUPLICATE', this.path(), m, `${m} at offset ${this.i}`);
      }
    } else top.names!.add(name);
    top.pending = name;
    this.skipWs();
    if (this.s.charCodeAt(this.i) !== 0x3a /* : */) throw this.unexpected('after object key');
    this.i++;
  }

  private scalar(): WireNode {
    const s = this.s;
    const start = this.i;
    const c = s.charCodeAt(this.i);
    if (c === 0x22) {
      const value = this.string();
      return { kind: 'string', value, start, end: this.i };
    }
    if (c === 0x2d || DIGIT(c)) {
      this.number();
      return { kind: 'number', lexeme: s.slice(start, this.i), start, end: this.i };
    }
    for (const [word, node] of LITERALS) {
      if (c === word.charCodeAt(0)) {
        for (let k = 0; k < word.length; k++, this.i++) {
          if (s.charCodeAt(this.i) !== word.charCodeAt(k)) throw this.unexpected(`in literal ${word} (expecting ${JSON.stringify(word[k])})`);
        }
        return { ...node, start, end: this.i } as WireNode;
      }
    }
    throw this.unexpected('looking for beginning of value');
  }

  private number(): void {
    const s = this.s;
    if (s.charCodeAt(this.i) === 0x2d) this.i++;
    const first = s.charCodeAt(this.i);
    if (first === 0x30) this.i++;
    else if (DIGIT(first)) while (DIGIT(s.charCodeAt(this.i))) this.i++;
    else throw this.unexpected('in numeric literal');
    if (s.charCodeAt(this.i) === 0x2e) {
      this.i++;
      if (!DIGIT(s.charCodeAt(this.i))) throw this.unexpected('after decimal point in numeric literal');
      while (DIGIT(s.charCodeAt(this.i))) this.i++;
    }
    const e = s.charCodeAt(this.i);
    if (e === 0x65 || e === 0x45) {
      this.i++;
      const sign = s.charCodeAt(this.i);
      if (sign === 0x2b || sign === 0x2d) this.i++;
      if (!DIGIT(s.charCodeAt(this.i))) throw this.unexpected('in exponent of numeric literal');
      while (DIGIT(s.charCodeAt(this.i))) this.i++;
    }
  }

  /** At a `"`: the unescaped string. An escaped surrogate that does not pair is recorded (the value gets U+FFFD, as Go's decoder gives). */
  private string(): string {
    const s = this.s;
    this.i++;
    let out = '';
    let runStart = this.i;
    for (;;) {
      if (this.i >= s.length) throw this.syntax('unexpected end of JSON input in string literal');
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        out += s.slice(runStart, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) throw this.syntax(`invalid character ${JSON.stringify(s[this.i])} in string literal`);
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      out += s.slice(runStart, this.i);
      const escStart = this.i;
      this.i++;
      const e = s.charCodeAt(this.i);
      const short = SHORT_ESCAPES[e];
      if (short !== undefined && this.i < s.length) {
        out += short;
        this.i++;
      } else if (e === 0x75 /* u */) {
        this.i++;
        const unit = this.hex4();
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // A high surrogate must be followed at once by an escaped low one.
          if (s.charCodeAt(this.i) === 0x5c && s.charCodeAt(this.i + 1) === 0x75) {
            const save = this.i;
            this.i += 2;
            const low = this.hex4();
            if (low >= 0xdc00 && low <= 0xdfff) out += String.fromCharCode(unit, low);
            else {
              this.badSurrogate(escStart);
              out += '\ufffd';
              this.i = save; // the second escape is read again on its own
            }
          } else {
            this.badSurrogate(escStart);
            out += '\ufffd';
          }
        } else if (unit >= 0xdc00 && unit <= 0xdfff) {
          this.badSurrogate(escStart);
          out += '\ufffd';
        } else out += String.fromCharCode(unit);
      } else throw this.unexpected('in string escape code');
      runStart = this.i;
    }
  }

  private hex4(): number {
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const h = hexValue(this.s.charCodeAt(this.i));
      if (h < 0) throw this.unexpected('in \\u hexadecimal character escape');
      v = v * 16 + h;
      this.i++;
    }
    return v;
  }

  private badSurrogate(at: number): void {
    if (!this.surrogate) {
      this.surrogate = new GoJsonError('JSON_SURROGATE', this.path(), BAD_ESCAPE, `unpaired escaped surrogate ${this.s.slice(at, at + 6)} at offset ${at}`);
    }
  }
}

const SHORT_ESCAPES: Record<number, string> = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' };
const LITERALS: Array<[string, { kind: 'bool'; value: boolean } | { kind: 'null' }]> = [
  ['true', { kind: 'bool', value: true }],
  ['false', { kind: 'bool', value: false }],
  ['null', { kind: 'null' }],
];

function tooLarge(bytes: number, maxBytes: number): GoJsonError {
  return new GoJsonError('JSON_SIZE', [], `must be at most ${maxBytes} bytes`, `JSON text of ${bytes} bytes is over the ${maxBytes}-byte limit`);
}

/**
 * `text` itself if it may be parsed: at most `maxBytes` of UTF-8 (JSON_SIZE), then well-formed UTF-16
 * (JSON_UTF8: a lone surrogate has no UTF-8 form, and an encoder would silently make it U+FFFD). The
 * wasm backend checks this before copying the text into WebAssembly memory.
 */
export function checkWireText(text: string, maxBytes: number = GO_MAX_BYTES): string {
  // A UTF-16 unit is one to three UTF-8 bytes: count only when it can matter.
  const bytes = text.length > maxBytes / 3 ? utf8Length(text) : text.length;
  if (bytes > maxBytes) throw tooLarge(bytes, maxBytes);
  if (!isWellFormed(text)) throw new GoJsonError('JSON_UTF8', [], INVALID_JSON, 'text contains an unpaired UTF-16 surrogate, which has no UTF-8 form');
  return text;
}

/** R1/R2: one value, no duplicate names at any depth (compared unescaped), paired \u surrogates. Never rounds numbers (lexemes kept). */
export function parseWireJson(text: string | Uint8Array, options: WireParseOptions = {}): { text: string; root: WireNode } {
  const maxBytes = options.maxBytes ?? GO_MAX_BYTES;
  const maxDepth = options.maxDepth ?? GO_MAX_DEPTH;
  let s: string;
  if (typeof text === 'string') s = checkWireText(text, maxBytes);
  else {
    if (text.length > maxBytes) throw tooLarge(text.length, maxBytes);
    try {
      s = strictUtf8.decode(text);
    } catch {
      throw new GoJsonError('JSON_UTF8', [], INVALID_JSON, 'text is not valid UTF-8');
    }
  }
  return { text: s, root: new Parser(s, maxDepth).parse() };
}

const ESCAPED = /["\\\u0000-\u001f<>&\u2028\u2029]/g;
const ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const NEEDS_ESCAPE = /["\\\u0000-\u001f<>&\u2028\u2029]/;

/** `s` quoted with Go's escaping; most strings need none, and testing first is much cheaper than replace. */
function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? '"' + s.replace(ESCAPED, escapeOne) + '"' : '"' + s + '"';
}

function escapeOne(ch: string): string {
  return ESCAPES[ch] ?? '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0');
}

/**
 * A string as Go's json.Marshal writes it (HTML-safe): `"` `\` and the short forms \b \f \n \r \t,
 * other U+0000–U+001F as \u00xx (lower-case hex), `<` `>` `&` as \u003c \u003e \u0026, U+2028/U+2029
 * escaped; everything else, DEL included, as itself. The string must be well-formed UTF-16
 * (JSON_UTF8 otherwise: Go would silently write U+FFFD).
 */
export function goJsonString(s: string): string {
  if (!isWellFormed(s)) throw new GoJsonError('JSON_UTF8', [], 'string contains an unpaired UTF-16 surrogate');
  return quote(s);
}

/** Orders strings by their UTF-8 bytes, as Go orders map keys: code-point order (JavaScript's `<` is UTF-16 order). */
export const compareUtf8: (a: string, b: string) => number = compareCodePoints;

/** Go's canonical text of a parsed tree. */
export function canonicalGoJsonNode(root: WireNode): string {
  const out: string[] = [];
  // Work items: a node to write, or a literal piece of text.
  const work: Array<WireNode | string> = [root];
  while (work.length > 0) {
    const item = work.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    switch (item.kind) {
      case 'string':
        out.push(quote(item.value));
        break;
      case 'number':
        out.push(item.lexeme);
        break;
      case 'bool':
        out.push(item.value ? 'true' : 'false');
        break;
      case 'null':
        out.push('null');
        break;
      case 'array': {
        out.push('[');
        work.push(']');
        for (let k = item.items.length - 1; k >= 0; k--) {
          work.push(item.items[k]!);
          if (k > 0) work.push(',');
        }
        break;
      }
      case 'object': {
        out.push('{');
        work.push('}');
        const members = item.members.slice().sort((a, b) => compareUtf8(a[0], b[0]));
        for (let k = members.length - 1; k >= 0; k--) {
          const [name, value] = members[k]!;
          work.push(value);
          work.push(quote(name) + ':');
          if (k > 0) work.push(',');
        }
        break;
      }
    }
  }
  return out.join('');
}

/** R9–R11: Go encoding/json canonical form of a JSON text: members sorted by UTF-8 bytes of the unescaped name, no whitespace, lexemes verbatim, Go escaping. */
export function canonicalGoJson(text: string, options?: WireParseOptions): string {
  return canonicalGoJsonNode(parseWireJson(text, options).root);
}

/** The canonical form as UTF-8 bytes (what the reference hashes). */
export function canonicalGoJsonBytes(text: string, options?: WireParseOptions): Uint8Array {
  return new TextEncoder().encode(canonicalGoJson(text, options));
}

const ENCODE_MAX_DEPTH = 1000;

function valueError(path: Array<string | number>, what: string): GoJsonError {
  return new GoJsonError('JSON_VALUE', path, `cannot encode ${what} as Go JSON`);
}

/**
 * Go encoding/json of a JS value: object members in insertion order (build objects in struct
 * declaration order; undefined members dropped), Go string escaping, RawJson verbatim.
 * Numbers: safe integers as decimal (-0 as 0, as a Go integer field writes it); other finite numbers as
 * Go writes a float64, which is JavaScript's shortest round-trip form (the same thresholds for
 * exponent form, 1e-6 and 1e21). bigint as its decimal. Refused (JSON_VALUE): NaN, ±Infinity,
 * integers beyond 2^53−1, functions, symbols, undefined array items, objects other than plain
 * objects and arrays, cycles; deeper than 1000 levels is JSON_DEPTH.
 */
export function goJsonEncode(value: unknown): string {
  try {
    return encodeFast(value, 0);
  } catch (e) {
    if (e !== UNENCODABLE) throw e;
  }
  // The fast writer found something to refuse: the careful one names the fault and its path.
  return encodeCareful(value);
}

const UNENCODABLE = new Error('unencodable');

/**
 * goJsonEncode's output for a value it accepts, written without tracking paths or open objects;
 * anything it would refuse (and anything that could be a cycle: nesting at the depth limit) throws
 * UNENCODABLE, so that the careful writer reports it. Digest payloads go through here many
 * thousands of times a second.
 */
function encodeFast(v: unknown, depth: number): string {
  switch (typeof v) {
    case 'string':
      return quoteWellFormed(v);
    case 'number':
      if (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v))) throw UNENCODABLE;
      return Object.is(v, -0) ? '0' : String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object': {
      if (v === null) return 'null';
      if (v instanceof RawJson) return v.text;
      if (depth >= ENCODE_MAX_DEPTH) throw UNENCODABLE;
      if (Array.isArray(v)) {
        let s = '[';
        for (let k = 0; k < v.length; k++) {
          const item: unknown = v[k];
          if (item === undefined) throw UNENCODABLE;
          s += (k > 0 ? ',' : '') + encodeFast(item, depth + 1);
        }
        return s + ']';
      }
      const proto = Object.getPrototypeOf(v) as unknown;
      if (proto !== Object.prototype && proto !== null) throw UNENCODABLE;
      const o = v as Record<string, unknown>;
      let s = '{';
      let first = true;
      for (const name of Object.keys(o)) {
        const member = o[name];
        if (member === undefined) continue;
        s += (first ? '' : ',') + quoteWellFormed(name) + ':' + encodeFast(member, depth + 1);
        first = false;
      }
      return s + '}';
    }
    default:
      throw UNENCODABLE;
  }
}

/**
 * `s` quoted as `quote` does, in one scan that also looks for lone surrogates (UNENCODABLE); for
 * the short strings of a payload a scan is several times cheaper than two regular expressions.
 */
function quoteWellFormed(s: string): string {
  let plain = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26 || c === 0x2028 || c === 0x2029) plain = false;
    else if (c >= 0xd800 && c <= 0xdfff) {
      if (c > 0xdbff || i + 1 >= s.length || (s.charCodeAt(i + 1) & 0xfc00) !== 0xdc00) throw UNENCODABLE;
      i++;
    }
  }
  return plain ? '"' + s + '"' : '"' + s.replace(ESCAPED, escapeOne) + '"';
}

function encodeCareful(value: unknown): string {
  const out: string[] = [];
  const path: Array<string | number> = [];
  const open = new Set<object>();
  const write = (v: unknown): void => {
    if (v === null) out.push('null');
    else if (typeof v === 'boolean') out.push(v ? 'true' : 'false');
    else if (typeof v === 'string') {
      if (!isWellFormed(v)) throw new GoJsonError('JSON_UTF8', path.slice(), 'string contains an unpaired UTF-16 surrogate');
      out.push(quote(v));
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw valueError(path.slice(), String(v));
      if (Number.isInteger(v) && !Number.isSafeInteger(v)) throw valueError(path.slice(), `the unsafe integer ${v}`);
      out.push(Object.is(v, -0) ? '0' : String(v));
    } else if (typeof v === 'bigint') out.push(v.toString());
    else if (v instanceof RawJson) out.push(v.text);
    else if (typeof v === 'object') {
      if (open.has(v)) throw valueError(path.slice(), 'a cyclic value');
      if (open.size >= ENCODE_MAX_DEPTH) throw new GoJsonError('JSON_DEPTH', path.slice(), `nesting deeper than ${ENCODE_MAX_DEPTH}`);
      open.add(v);
      if (Array.isArray(v)) {
        out.push('[');
        for (let k = 0; k < v.length; k++) {
          if (k > 0) out.push(',');
          path.push(k);
          if (v[k] === undefined) throw valueError(path.slice(), 'undefined');
          write(v[k]);
          path.pop();
        }
        out.push(']');
      } else {
        const proto = Object.getPrototypeOf(v) as unknown;
        if (proto !== Object.prototype && proto !== null) throw valueError(path.slice(), `a ${(v as object).constructor?.name ?? 'non-plain'} object`);
        out.push('{');
        let first = true;
        for (const [name, member] of Object.entries(v)) {
          if (member === undefined) continue;
          if (!first) out.push(',');
          first = false;
          path.push(name);
          if (!isWellFormed(name)) throw new GoJsonError('JSON_UTF8', path.slice(), 'member name contains an unpaired UTF-16 surrogate');
          out.push(quote(name) + ':');
          write(member);
          path.pop();
        }
        out.push('}');
      }
      open.delete(v);
    } else throw valueError(path.slice(), typeof v);
  };
  write(value);
  return out.join('');
}
