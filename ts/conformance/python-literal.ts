/**
 * A reader of Python literals, for vector fields that hold a Python value as the reference's `repr`
 * wrote it (the mp-receipt `payload_python`). The value keeps what JSON and JS lose and the reference's
 * checks depend on: int versus float (`1.0` is a float), tuple versus list, set, bytes, and dict keys
 * of any hashable type in their insertion order.
 *
 * What is read is what `ast.literal_eval` reads, less complex numbers, Ellipsis and `\N{…}` escapes,
 * plus `inf` and `nan` (not literals, but what `repr` writes for those floats):
 * - None, True, False;
 * - int: decimal (no leading zeros, as Python refuses them), 0x / 0o / 0b, `_` between digits, any size;
 * - float: `1.5`, `1.`, `.5`, exponents, `_` between digits, `inf` and `nan`; overflow gives inf as in Python;
 * - a `+` or `-` before a number (once, as `ast.literal_eval` allows);
 * - str and bytes: '…', "…", triple quotes, prefixes r u b br rb in any case, the escapes of Python 3.11
 *   (an unknown escape keeps its backslash; an octal escape in bytes keeps its low 8 bits, as 3.11 did),
 *   adjacent literals concatenated;
 * - list, tuple (`()`, `(1,)`, and a bare `1, 2` at the top), dict, set (`{1, 2}`, `set()`), trailing commas,
 *   with Python's rule for repeated keys and elements (`{1: 'a', True: 'b'}` is `{1: 'b'}`).
 * Anything else is refused with a PyLiteralError rather than read approximately. No npm package reads
 * Python literals: the Python parsers there build a whole AST (antlr) and leave the evaluation to the caller.
 */

export const PY_LITERAL_ERROR_CODES = [
  /** Not valid Python as written: an unterminated string, a malformed number or escape, a missing bracket. */
  'PY_LITERAL_SYNTAX',
  /** Valid Python, but not a literal read here: a name, a call other than `set()`, an operator, complex, f-string, Ellipsis, `\N{…}`. */
  'PY_LITERAL_UNSUPPORTED',
  /** A list, dict or set as a dict key or set element: Python's TypeError "unhashable type". */
  'PY_LITERAL_UNHASHABLE',
] as const;

export type PyLiteralErrorCode = (typeof PY_LITERAL_ERROR_CODES)[number];

export class PyLiteralError extends Error {
  override readonly name = 'PyLiteralError';
  constructor(
    readonly code: PyLiteralErrorCode,
    /** Where in the text (UTF-16 units from 0). */
    readonly offset: number,
    readonly detail: string,
  ) {
    super(`${code} at offset ${offset}: ${detail}`);
  }
}

/** A Python value, tagged with its Python type's `__name__` (what the reference's messages name). */
export type PyValue =
  | { readonly type: 'NoneType' }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'str'; readonly value: string }
  | { readonly type: 'bytes'; readonly value: Uint8Array }
  | { readonly type: 'list' | 'tuple' | 'set'; readonly items: readonly PyValue[] }
  | { readonly type: 'dict'; readonly entries: readonly (readonly [PyValue, PyValue])[] };

/** Python 3.11's tokenizer refuses brackets nested deeper than this ("too many nested parentheses"). */
const MAX_NESTING = 200;

const DIGITS = '[0-9](?:_?[0-9])*';
const HEX = /0[xX](?:_?[0-9a-fA-F])+/y;
const OCT = /0[oO](?:_?[0-7])+/y;
const BIN = /0[bB](?:_?[01])+/y;
const FLOAT = new RegExp(`(?:(?:${DIGITS})?\\.${DIGITS}|${DIGITS}\\.)(?:[eE][+-]?${DIGITS})?|${DIGITS}[eE][+-]?${DIGITS}`, 'y');
// Python refuses leading zeros in a decimal integer other than 0 itself (`00` and `0_0` are 0).
const DECIMAL = /0(?:_?0)*|[1-9](?:_?[0-9])*/y;
const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const NAME_CHAR = /[A-Za-z0-9_]/;
const STRING_PREFIXES = new Set(['', 'r', 'u', 'b', 'br', 'rb']);
const F_STRING_PREFIXES = new Set(['f', 'rf', 'fr']);
const OPERATOR_CHARS = '+-*/%@&|^<>=!~';

const SIMPLE_ESCAPES: Record<string, number> = { '\\': 0x5c, "'": 0x27, '"': 0x22, a: 0x07, b: 0x08, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

/** Reads one Python literal (the whole text, whitespace and comments around it allowed). */
export function readPythonLiteral(text: string): PyValue {
  return new Reader(text).top();
}

class Reader {
  private pos = 0;
  private nesting = 0;

  constructor(private readonly text: string) {}

  top(): PyValue {
    this.space(true);
    const v = this.valueList(() => this.atEnd());
    this.space(true);
    if (this.pos < this.text.length) this.unexpected('the end of the text');
    return v;
  }

  /** Whether only blanks, newlines and comments are left (a top-level `1,` may end with a newline). */
  private atEnd(): boolean {
    const save = this.pos;
    this.space(true);
    const end = this.pos >= this.text.length;
    this.pos = save;
    return end;
  }

  private fail(code: PyLiteralErrorCode, detail: string, at = this.pos): never {
    throw new PyLiteralError(code, at, detail);
  }

  private unexpected(wanted: string): never {
    if (this.pos >= this.text.length) this.fail('PY_LITERAL_SYNTAX', `the text ends where ${wanted} should be`);
    const c = this.text[this.pos]!;
    // An operator or a call after a value is an expression Python would evaluate, not a malformed literal.
    if (OPERATOR_CHARS.includes(c) || c === '(' || c === '[')
      this.fail('PY_LITERAL_UNSUPPORTED', `${JSON.stringify(c)} where ${wanted} should be: only literals are read, not expressions`);
    this.fail('PY_LITERAL_SYNTAX', `${JSON.stringify(c)} where ${wanted} should be`);
  }

  private peek(): string | undefined {
    return this.text[this.pos];
  }

  /**
   * Skips blanks, comments and backslash line joins. Outside brackets a newline ends a Python
   * statement, so it is allowed only before or after the whole literal (`lines`).
   */
  private space(lines = this.nesting > 0): void {
    for (;;) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\f' || (lines && (c === '\n' || c === '\r'))) this.pos++;
      else if (c === '\\' && (this.text[this.pos + 1] === '\n' || this.text[this.pos + 1] === '\r')) {
        this.pos += this.text.startsWith('\r\n', this.pos + 1) ? 3 : 2;
      } else if (c === '#') {
        while (this.pos < this.text.length && this.peek() !== '\n' && this.peek() !== '\r') this.pos++;
      } else return;
    }
  }

  /** `a, b, …` up to `atEnd`: one value, or a tuple if there is a comma (the top level and inside `(…)`). */
  private valueList(atEnd: () => boolean): PyValue {
    const first = this.value();
    this.space();
    if (this.peek() !== ',') return first;
    const items = [first];
    for (;;) {
      this.pos++; // the comma
      this.space();
      if (atEnd()) break;
      items.push(this.value());
      this.space();
      if (this.peek() !== ',') break;
    }
    return { type: 'tuple', items };
  }

  private value(): PyValue {
    const start = this.pos;
    const c = this.peek();
    if (c === undefined) this.unexpected('a value');
    if (c === '[' || c === '(' || c === '{') return this.container(c);
    if (c === '-' || c === '+') return this.signed();
    if (c === "'" || c === '"') return this.strings();
    if ((c >= '0' && c <= '9') || (c === '.' && /[0-9]/.test(this.text[this.pos + 1] ?? ''))) return this.number();
    if (c === '.' && this.text.startsWith('...', this.pos)) this.fail('PY_LITERAL_UNSUPPORTED', 'Ellipsis is not read');
    NAME.lastIndex = this.pos;
    const m = NAME.exec(this.text);
    if (!m) this.unexpected('a value');
    const name = m[0];
    const after = this.text[this.pos + name.length];
    if (after === "'" || after === '"') {
      const prefix = name.toLowerCase();
      if (STRING_PREFIXES.has(prefix)) return this.strings();
      if (F_STRING_PREFIXES.has(prefix)) this.fail('PY_LITERAL_UNSUPPORTED', 'an f-string is an expression, not a literal');
      this.fail('PY_LITERAL_SYNTAX', `${name} is not a string prefix`);
    }
    this.pos += name.length;
    switch (name) {
      case 'None':
        return { type: 'NoneType' };
      case 'True':
        return { type: 'bool', value: true };
      case 'False':
        return { type: 'bool', value: false };
      // Not Python literals, but how repr writes these floats (and so how a vector file holds them).
      case 'inf':
        return { type: 'float', value: Infinity };
      case 'nan':
        return { type: 'float', value: NaN };
      case 'set': {
        // The empty set has no literal; repr writes `set()`, which ast.literal_eval also reads.
        this.space();
        if (this.peek() === '(') {
          this.pos++;
          this.space(true);
          if (this.peek() === ')') {
            this.pos++;
            return { type: 'set', items: [] };
          }
        }
        this.fail('PY_LITERAL_UNSUPPORTED', 'of set, only the call set() (the empty set) is read', start);
      }
      default:
        this.fail('PY_LITERAL_UNSUPPORTED', `the name ${name} is not a literal`, start);
    }
  }

  /** A sign applies to a number only (as ast.literal_eval allows, once), including repr's inf and nan. */
  private signed(): PyValue {
    const start = this.pos;
    const negative = this.peek() === '-';
    this.pos++;
    this.space();
    const c = this.peek() ?? '';
    let v: PyValue;
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(this.text[this.pos + 1] ?? ''))) v = this.number();
    else if (/^(?:inf|nan)(?![A-Za-z0-9_])/.test(this.text.slice(this.pos, this.pos + 4))) v = this.value();
    else this.fail('PY_LITERAL_UNSUPPORTED', 'a sign is read only before a number', start);
    if (!negative) return v;
    if (v.type === 'int') return { type: 'int', value: -v.value };
    if (v.type === 'float') return { type: 'float', value: -v.value };
    /* c8 ignore next */
    throw new Error('unreachable: a number reads as int or float');
  }

  private number(): PyValue {
    const start = this.pos;
    const match = (re: RegExp) => {
      re.lastIndex = this.pos;
      return re.exec(this.text)?.[0];
    };
    let v: PyValue;
    const radix = match(HEX) ?? match(OCT) ?? match(BIN);
    const float = radix === undefined ? match(FLOAT) : undefined;
    if (radix !== undefined) {
      v = { type: 'int', value: BigInt(radix.replace(/_/g, '')) };
      this.pos += radix.length;
    } else if (float !== undefined) {
      // Number() rounds correctly, as Python's float() does, and overflows to Infinity as Python does.
      v = { type: 'float', value: Number(float.replace(/_/g, '')) };
      this.pos += float.length;
    } else {
      const digits = match(DECIMAL)!;
      this.pos += digits.length;
      if (/[0-9]/.test(this.peek() ?? '')) this.fail('PY_LITERAL_SYNTAX', 'leading zeros in a decimal integer (Python refuses them)', start);
      v = { type: 'int', value: BigInt(digits.replace(/_/g, '')) };
    }
    const next = this.peek() ?? '';
    if (next === 'j' || next === 'J') this.fail('PY_LITERAL_UNSUPPORTED', 'complex numbers are not read', start);
    if (NAME_CHAR.test(next)) this.fail('PY_LITERAL_SYNTAX', `a malformed number ${JSON.stringify(this.text.slice(start, this.pos + 1))}`, start);
    return v;
  }

  /** One string or bytes literal, then any adjacent ones, concatenated as Python's parser does. */
  private strings(): PyValue {
    const first = this.stringLiteral();
    const pieces: (string | number[])[] = [first];
    for (;;) {
      const save = this.pos;
      this.space();
      if (!this.atStringStart()) {
        this.pos = save;
        break;
      }
      const at = this.pos;
      const next = this.stringLiteral();
      if (typeof next !== typeof first) this.fail('PY_LITERAL_SYNTAX', 'bytes and str literals cannot be concatenated', at);
      pieces.push(next);
    }
    if (typeof first === 'string') return { type: 'str', value: pieces.join('') };
    return { type: 'bytes', value: Uint8Array.from((pieces as number[][]).flat()) };
  }

  private atStringStart(): boolean {
    const c = this.peek();
    if (c === "'" || c === '"') return true;
    NAME.lastIndex = this.pos;
    const m = NAME.exec(this.text);
    if (!m) return false;
    const after = this.text[this.pos + m[0].length];
    return (after === "'" || after === '"') && (STRING_PREFIXES.has(m[0].toLowerCase()) || F_STRING_PREFIXES.has(m[0].toLowerCase()));
  }

  /** One literal: a JS string for str, the byte values for bytes. */
  private stringLiteral(): string | number[] {
    const start = this.pos;
    let prefix = '';
    while (this.peek() !== "'" && this.peek() !== '"') prefix += this.text[this.pos++]!.toLowerCase();
    if (F_STRING_PREFIXES.has(prefix)) this.fail('PY_LITERAL_UNSUPPORTED', 'an f-string is an expression, not a literal', start);
    const raw = prefix.includes('r');
    const bytes = prefix.includes('b');
    const quote = this.peek()!;
    const triple = this.text.startsWith(quote.repeat(3), this.pos);
    this.pos += triple ? 3 : 1;
    const units: number[] = []; // UTF-16 units of a str, byte values of bytes
    const addText = (s: string, at: number) => {
      for (let i = 0; i < s.length; i++) {
        const u = s.charCodeAt(i);
        if (bytes && u > 0x7f) this.fail('PY_LITERAL_SYNTAX', 'bytes can only contain ASCII literal characters', at);
        units.push(u);
      }
    };
    for (;;) {
      const at = this.pos;
      const c = this.peek();
      if (c === undefined) this.fail('PY_LITERAL_SYNTAX', 'an unterminated string', start);
      if (c === quote && (!triple || this.text.startsWith(quote.repeat(3), this.pos))) {
        this.pos += triple ? 3 : 1;
        break;
      }
      if (c === '\n' || c === '\r') {
        if (!triple) this.fail('PY_LITERAL_SYNTAX', 'an unterminated string (a newline in a single-quoted string)', start);
        // Python reads source newlines \r\n and \r as \n.
        this.pos += this.text.startsWith('\r\n', this.pos) ? 2 : 1;
        units.push(0x0a);
        continue;
      }
      if (c !== '\\') {
        addText(c, at);
        this.pos++;
        continue;
      }
      const e = this.text[this.pos + 1];
      if (e === undefined) this.fail('PY_LITERAL_SYNTAX', 'an unterminated string', start);
      if (raw) {
        // A raw string keeps the backslash and the character after it (which then cannot end the string).
        if (e === '\r' || e === '\n') {
          this.pos += this.text.startsWith('\r\n', this.pos + 1) ? 3 : 2;
          units.push(0x5c, 0x0a);
        } else {
          addText(`\\${e}`, at);
          this.pos += 2;
        }
        continue;
      }
      this.pos += 2;
      if (e === '\n' || e === '\r') {
        if (e === '\r' && this.peek() === '\n') this.pos++;
        continue; // a backslash before a newline joins the lines
      }
      const simple = SIMPLE_ESCAPES[e];
      if (simple !== undefined) {
        units.push(simple);
      } else if (/[0-7]/.test(e)) {
        let digits = e;
        while (digits.length < 3 && /[0-7]/.test(this.peek() ?? '')) digits += this.text[this.pos++]!;
        const n = parseInt(digits, 8);
        units.push(bytes ? n & 0xff : n);
      } else if (e === 'x' || (!bytes && (e === 'u' || e === 'U'))) {
        const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = this.text.slice(this.pos, this.pos + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) this.fail('PY_LITERAL_SYNTAX', `a truncated \\${e} escape`, at);
        const n = parseInt(hex, 16);
        if (n > 0x10ffff) this.fail('PY_LITERAL_SYNTAX', `\\${e}${hex} is beyond U+10FFFF`, at);
        this.pos += len;
        const s = String.fromCodePoint(n);
        for (let i = 0; i < s.length; i++) units.push(s.charCodeAt(i));
      } else if (!bytes && e === 'N') {
        this.fail('PY_LITERAL_UNSUPPORTED', '\\N{…} escapes need the Unicode name table (repr never writes them)', at);
      } else {
        // Python keeps an unknown escape as written (with a warning); in bytes that includes \u, \U and \N.
        addText(`\\${e}`, at);
      }
    }
    if (bytes) return units;
    let s = '';
    for (let i = 0; i < units.length; i += 8192) s += String.fromCharCode(...units.slice(i, i + 8192));
    return s;
  }

  private container(open: '[' | '(' | '{'): PyValue {
    const start = this.pos;
    if (++this.nesting > MAX_NESTING) this.fail('PY_LITERAL_SYNTAX', `brackets nested deeper than ${MAX_NESTING}`);
    this.pos++;
    this.space();
    const close = open === '[' ? ']' : open === '(' ? ')' : '}';
    const closeHere = () => this.peek() === close;
    let v: PyValue;
    if (closeHere()) {
      v = open === '[' ? { type: 'list', items: [] } : open === '(' ? { type: 'tuple', items: [] } : { type: 'dict', entries: [] };
    } else if (open === '(') {
      // `(x)` is x itself; `(x,)` and `(x, y)` are tuples.
      v = this.valueList(closeHere);
    } else if (open === '[') {
      const items: PyValue[] = [];
      for (;;) {
        items.push(this.value());
        this.space();
        if (this.peek() !== ',') break;
        this.pos++;
        this.space();
        if (closeHere()) break;
      }
      v = { type: 'list', items };
    } else {
      v = this.braces(closeHere);
    }
    this.space();
    if (!closeHere()) this.unexpected(`',' or '${close}' (closing the '${open}' at offset ${start})`);
    this.pos++;
    this.nesting--;
    return v;
  }

  /** `{k: v, …}` or `{x, …}` (not empty): the first item says which. */
  private braces(closeHere: () => boolean): PyValue {
    let at = this.pos;
    let item = this.value();
    this.space();
    const isDict = this.peek() === ':';
    const keys = new Map<string, number>();
    const entries: [PyValue, PyValue][] = [];
    const items: PyValue[] = [];
    for (;;) {
      const key = hashKey(item, at);
      if (isDict) {
        if (this.peek() !== ':') this.unexpected("':'");
        this.pos++;
        this.space();
        const value = this.value();
        // A repeated key keeps its first key object and place, and takes the last value (dict(zip(keys, values))).
        const seen = key === null ? undefined : keys.get(key);
        if (seen === undefined) {
          if (key !== null) keys.set(key, entries.length);
          entries.push([item, value]);
        } else entries[seen] = [entries[seen]![0], value];
      } else if (key === null || !keys.has(key)) {
        // A set keeps the first of equal elements.
        if (key !== null) keys.set(key, items.length);
        items.push(item);
      }
      this.space();
      if (this.peek() !== ',') break;
      this.pos++;
      this.space();
      if (closeHere()) break;
      at = this.pos;
      item = this.value();
      this.space();
    }
    return isDict ? { type: 'dict', entries } : { type: 'set', items };
  }
}

/**
 * A string equal for values that Python's `==` and `hash` make equal, for the repeated-key rule: True, 1
 * and 1.0 are one key, -0.0 and 0 too. null for a value equal to nothing else: a nan (nan != nan, and
 * each literal is a new object), or a tuple holding one.
 */
function hashKey(v: PyValue, at: number): string | null {
  switch (v.type) {
    case 'NoneType':
      return 'None';
    case 'bool':
      return v.value ? 'n1' : 'n0';
    case 'int':
      return `n${v.value}`;
    case 'float':
      if (Number.isNaN(v.value)) return null;
      return Number.isInteger(v.value) ? `n${BigInt(v.value)}` : `f${v.value}`;
    case 'str':
      return `s${JSON.stringify(v.value)}`;
    case 'bytes':
      return `b${Array.from(v.value, (b) => b.toString(16).padStart(2, '0')).join('')}`;
    case 'tuple': {
      // Every element is hashed (an unhashable one is refused) before equality is looked at.
      const keys = v.items.map((x) => hashKey(x, at));
      return keys.includes(null) ? null : `t(${keys.join(',')})`;
    }
    default:
      throw new PyLiteralError('PY_LITERAL_UNHASHABLE', at, `unhashable type: '${v.type}'`);
  }
}
