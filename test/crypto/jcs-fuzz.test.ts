// Property-based tests of canonical JSON on both backends, against an independent oracle: the
// `canonicalize` npm package (on the value JSON.parse reads) for what is accepted and its bytes,
// JSON.parse for what is not JSON, and for refusals the one fault each text was built with. Runs per
// property scale with AIGENORA_FUZZ_RUNS (default 1000; the hardening run used more).
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CryptoError, getCrypto, toHex, utf8, type Crypto } from '../../ts/crypto/index.js';
import { isWellFormed } from '../../ts/crypto/unicode.js';

const backends: Crypto[] = [getCrypto('wasm'), getCrypto('js')];
const RUNS = Number(process.env['AIGENORA_FUZZ_RUNS'] ?? 1000);
const oracle = canonicalize as unknown as (v: unknown) => string;
const tried: Record<string, number> = {};
afterAll(() =>
  console.log(
    `jcs fuzz: ${Object.entries(tried)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')} inputs, 0 failures`,
  ),
);

// ---- values, and the many texts that spell each of them

type Value = null | boolean | number | string | Value[] | { entries: [string, Value][] } | Fault;
/** A piece of text that makes the document wrong in one known way. */
class Fault {
  constructor(readonly text: string) {}
}

const special = fc.constantFrom(
  '"',
  '\\',
  '/',
  '\u0000',
  '\b',
  '\t',
  '\n',
  '\f',
  '\r',
  '\u001f',
  ' ',
  '\u007f',
  '\u2028',
  'é',
  '\ue000',
  '\uffff',
  '😀',
  '𝄞',
  'a',
  'z',
  'A',
);
const str = fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: special, maxLength: 8 }));
const num = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -0, 1e21, 1e20, 1e-7, 1e-6, 5e-324, 2 ** 53, 2 ** 53 + 2, 2 ** 64, 1.7976931348623157e308, 0.1 + 0.2, 333333333.3333333),
);
const { value } = fc.letrec<{ value: Value; array: Value[]; object: { entries: [string, Value][] } }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(null), fc.boolean(), num, str, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.uniqueArray(fc.tuple(str, tie('value')), { selector: ([k]) => k, maxLength: 5 }).map((entries) => ({ entries })),
}));

/** The JS value, with every key an own property (a key "__proto__" included). */
function toJs(v: Value): unknown {
  if (Array.isArray(v)) return v.map(toJs);
  if (v instanceof Fault) throw new Error('a fault has no value');
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v.entries) Object.defineProperty(o, k, { value: toJs(x), enumerable: true, writable: true, configurable: true });
    return o;
  }
  return v;
}

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return (n: number) => ((s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6b43a9b5) >>> 0), s % n);
}
type Rng = ReturnType<typeof rng>;

const pick = <T>(r: Rng, xs: readonly T[]): T => xs[r(xs.length)]!;
const hex4 = (r: Rng, u: number) => {
  const h = u.toString(16).padStart(4, '0');
  return `\\u${r(2) ? h : h.toUpperCase()}`;
};

/** Any one of the texts JSON allows for the number n: other exponents, trailing zeros, all the digits. */
function numberText(r: Rng, n: number): string {
  const forms = [String(n), n.toExponential(), n.toExponential().toUpperCase().replace('E+', 'E')];
  if (Number.isInteger(n)) forms.push(`${Object.is(n, -0) ? '-' : ''}${BigInt(n)}`);
  const s = pick(r, forms);
  const zeros = s.includes('.') ? s.replace(/([0-9])(e|E|$)/, '$1000$2') : s.replace(/^(-?[0-9]+)/, '$1.000');
  return r(4) ? s : zeros;
}

/** The string s spelt with random escapes: \uXXXX in either case, short forms, escaped pairs. */
function stringText(r: Rng, s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    const short = ({ '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' } as Record<string, string>)[ch];
    const mustEscape = c < 0x20 || ch === '"' || ch === '\\';
    if (!mustEscape && r(3)) out += ch;
    else if (short && r(2)) out += short;
    else if (c > 0xffff) out += hex4(r, ch.charCodeAt(0)) + hex4(r, ch.charCodeAt(1));
    else out += hex4(r, c);
  }
  return `${out}"`;
}

function text(r: Rng, v: Value): string {
  const ws = () => (r(4) ? '' : Array.from({ length: 1 + r(3) }, () => pick(r, [' ', '\t', '\n', '\r'])).join(''));
  const go = (v: Value): string => {
    if (v instanceof Fault) return v.text;
    if (v === null || typeof v === 'boolean') return String(v);
    if (typeof v === 'number') return numberText(r, v);
    if (typeof v === 'string') return stringText(r, v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => go(x) + ws()).join(`,${ws()}`)}]`;
    return `{${ws()}${v.entries.map(([k, x]) => `${stringText(r, k)}${ws()}:${ws()}${go(x)}${ws()}`).join(`,${ws()}`)}}`;
  };
  return ws() + go(v) + ws();
}

function outcome(c: Crypto, f: () => Uint8Array): string {
  try {
    return toHex(f());
  } catch (e) {
    if (e instanceof CryptoError) return e.code;
    throw new Error(`${c.backend}: untyped ${String(e)}`);
  }
}

/** Both backends' outcomes, which must be the same. */
function agreed(t: string): string {
  const [a, b] = backends.map((c) => outcome(c, () => c.jcs(t)));
  expect(b, `backends disagree on ${JSON.stringify(t)}`).toBe(a);
  return a!;
}

// ---- faults: each turns a valid value into a text with exactly one known fault

/** Replaces one node of v, chosen by r among those `fits` accepts, with what `make` returns; or undefined. */
function replaceOne(r: Rng, v: Value, fits: (x: Value) => boolean, make: (x: Value) => Value): Value | undefined {
  const spots: Value[] = [];
  const walk = (x: Value) => {
    if (fits(x)) spots.push(x);
    if (Array.isArray(x)) x.forEach(walk);
    else if (x !== null && typeof x === 'object' && !(x instanceof Fault)) x.entries.forEach(([, y]) => walk(y));
  };
  walk(v);
  if (spots.length === 0) return undefined;
  const target = pick(r, spots);
  const rebuild = (x: Value): Value => {
    if (x === target) return make(x);
    if (Array.isArray(x)) return x.map(rebuild);
    if (x !== null && typeof x === 'object' && !(x instanceof Fault)) return { entries: x.entries.map(([k, y]) => [k, rebuild(y)] as [string, Value]) };
    return x;
  };
  return rebuild(v);
}

const isObject = (x: Value): x is { entries: [string, Value][] } => x !== null && typeof x === 'object' && !Array.isArray(x) && !(x instanceof Fault);

const FAULTS = {
  JSON_DUPLICATE_KEY(r: Rng, v: Value): Value {
    const dup = (o: Value): Value => {
      const e = (o as { entries: [string, Value][] }).entries;
      const [k] = pick(r, e);
      const at = r(e.length + 1);
      return { entries: [...e.slice(0, at), [k, pick(r, [null, 1, 'x'])] as [string, Value], ...e.slice(at)] };
    };
    return (
      replaceOne(r, v, (x) => isObject(x) && x.entries.length > 0, dup) ?? {
        entries: [
          ['k', v],
          ['k', null],
        ],
      }
    );
  },
  JSON_LONE_SURROGATE(r: Rng, v: Value): Value {
    const lone = (x: Value) => {
      const s = typeof x === 'string' ? [...x] : [];
      const at = r(s.length + 1);
      const unit = r(2) ? 0xd800 + r(0x400) : 0xdc00 + r(0x400);
      return new Fault(stringText(r, s.slice(0, at).join('')).slice(0, -1) + hex4(r, unit) + stringText(r, s.slice(at).join('')).slice(1));
    };
    return replaceOne(r, v, (x) => typeof x === 'string', lone) ?? [v, lone('')];
  },
  JSON_NUMBER_RANGE(r: Rng, v: Value): Value {
    const big = () => new Fault(pick(r, ['1e400', '-1e309', '9'.repeat(400), '-1.7976931348623159e308', '1E+99999', `${'1'.repeat(310)}.5`, '0.1e310']));
    return replaceOne(r, v, (x) => typeof x === 'number', big) ?? [big(), v];
  },
  JSON_TOO_DEEP(r: Rng, v: Value): Value {
    let x = v;
    for (let i = 0; i < 128; i++) x = r(2) ? [x] : { entries: [['d', x]] };
    return x;
  },
  JSON_SYNTAX(r: Rng, v: Value): Value {
    const bad = () =>
      new Fault(
        pick(r, [
          '@',
          'nul',
          'tru',
          '+1',
          '01',
          '1.',
          '.5',
          '1e',
          '-',
          "'x'",
          '"\u0001"',
          '"\\x"',
          '"\\u12g4"',
          'NaN',
          'Infinity',
          '[1,]',
          '{"a"}',
          '{"a":1,}',
          '{1:1}',
          '[1 2]',
          '[',
          '{',
        ]),
      );
    return replaceOne(r, v, (x) => !Array.isArray(x) && !isObject(x), bad) ?? [bad()];
  },
};

// ---- the properties

describe('canonical JSON, property-based, both backends and an independent oracle', () => {
  it('every spelling of a value canonicalizes to the bytes the canonicalize package gives for it', () => {
    fc.assert(
      fc.property(value, fc.integer(), (v, seed) => {
        tried['spellings'] = (tried['spellings'] ?? 0) + 1;
        const want = toHex(utf8(oracle(toJs(v))));
        const t = text(rng(seed), v);
        expect(agreed(t), t).toBe(want);
        for (const c of backends) expect(toHex(c.jcsValue(toJs(v)))).toBe(want);
      }),
      { numRuns: RUNS },
    );
  });

  it("a text with exactly one fault is refused with that fault's code", () => {
    const kinds = Object.keys(FAULTS) as (keyof typeof FAULTS)[];
    fc.assert(
      fc.property(value, fc.constantFrom(...kinds), fc.integer(), (v, kind, seed) => {
        tried['one-fault'] = (tried['one-fault'] ?? 0) + 1;
        const r = rng(seed);
        const t = text(r, FAULTS[kind](r, v));
        expect(agreed(t), t).toBe(kind);
      }),
      { numRuns: RUNS },
    );
  });

  it('any edit of a text: the backends agree, refuse what JSON.parse refuses, and otherwise match the oracle', () => {
    const pieces = [
      '"',
      '\\',
      '\\u',
      'd800',
      'dc00',
      '\ud800',
      '\udc00',
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"a"',
      '1e400',
      '.',
      'e',
      '-',
      '0',
      '1',
      '\u0000',
      ' ',
      'null',
      '\\n',
      '+',
      'E',
      '"a":1,',
    ];
    const edit = fc.tuple(fc.nat(), fc.nat(3), fc.constantFrom(...pieces));
    fc.assert(
      fc.property(value, fc.integer(), fc.array(edit, { minLength: 1, maxLength: 4 }), (v, seed, edits) => {
        tried['edits'] = (tried['edits'] ?? 0) + 1;
        let t = text(rng(seed), v);
        for (const [at0, op, piece] of edits) {
          const at = at0 % (t.length + 1);
          t =
            op === 0
              ? t.slice(0, at) + piece
              : op === 1
                ? t.slice(0, at) + t.slice(at + 1)
                : op === 2
                  ? t.slice(0, at) + piece + t.slice(at)
                  : t.slice(0, at) + t.slice(at).replace(/[0-9]/, piece);
        }
        const got = agreed(t);
        // A raw unpaired surrogate is refused before parsing, even where JSON.parse would pair it with an escape.
        if (!isWellFormed(t)) {
          expect(got, JSON.stringify(t)).toBe('JSON_LONE_SURROGATE');
          return;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(t);
        } catch {
          expect(got, `JSON.parse refuses ${JSON.stringify(t)}`).toMatch(/^[A-Z_]+$/);
          return;
        }
        let want: string;
        try {
          want = toHex(utf8(oracle(parsed)));
        } catch {
          // The oracle refuses a lone surrogate or a number out of range: so must both backends, with
          // that code or that of an I-JSON fault met before it (JSON.parse accepted the syntax).
          expect(got).toMatch(/^JSON_(LONE_SURROGATE|NUMBER_RANGE|DUPLICATE_KEY|TOO_DEEP)$/);
          return;
        }
        // JSON.parse silently keeps the last of repeated keys and has no depth limit; otherwise the bytes must match.
        if (!/^JSON_(DUPLICATE_KEY|TOO_DEEP)$/.test(got)) expect(got, JSON.stringify(t)).toBe(want);
      }),
      { numRuns: RUNS * 5 },
    );
  });

  it('a raw unpaired surrogate anywhere in the text is refused before parsing', () => {
    fc.assert(
      fc.property(value, fc.integer(), fc.nat(), fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff'), (v, seed, at0, s) => {
        const t = text(rng(seed), v);
        const at = at0 % (t.length + 1);
        const u = t.slice(0, at) + s + t.slice(at);
        fc.pre(!isWellFormed(u)); // next to the other half of a pair, it completes it
        tried['raw-surrogate'] = (tried['raw-surrogate'] ?? 0) + 1;

        expect(agreed(u), u).toBe('JSON_LONE_SURROGATE');
      }),
      { numRuns: RUNS },
    );
  });
});

describe('canonical JSON, cases the probes found', () => {
  it('a raw surrogate next to an escaped one is refused by both backends', () => {
    for (const t of ['"\ud800\\udc00"', '"\\ud800\udc00"', '{"\ud83d\\ude00":1}', '["\\ud83d\ude00"]']) expect(agreed(t), t).toBe('JSON_LONE_SURROGATE');
    expect(agreed('"\ud83d\ude00"')).toBe(toHex(utf8('"😀"')));
  });

  it('over MAX_INPUT_BYTES is refused before reading, on both backends and from values', () => {
    const limit = 64 << 20;
    expect(agreed(' '.repeat(limit + 1))).toBe('JSON_TOO_LARGE');
    expect(agreed(`"${'é'.repeat(limit / 2)}"`)).toBe('JSON_TOO_LARGE'); // 2 bytes a character in UTF-8
    expect(agreed(`[${' '.repeat(limit - 2)}]`)).toBe(toHex(utf8('[]')));
    for (const c of backends) expect(outcome(c, () => c.jcsValue({ s: 'x'.repeat(limit) }))).toBe('JSON_TOO_LARGE');
  });
});
