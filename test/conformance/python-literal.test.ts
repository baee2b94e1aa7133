// The Python-literal reader (ts/conformance/python-literal.ts) that reads the receipt vectors'
// `payload_python`: every kind of literal it takes, a float kept a float however deep it sits, Python's
// rules for repeated keys, and a typed refusal of everything else. The expected values are what
// Python 3.11's ast.literal_eval (or, for inf and nan, repr) gives for the same text.
import { describe, expect, it } from 'vitest';
import { PyLiteralError, readPythonLiteral, type PyLiteralErrorCode, type PyValue } from '../../ts/conformance/python-literal.js';

const None: PyValue = { type: 'NoneType' };
const bool = (value: boolean): PyValue => ({ type: 'bool', value });
const int = (value: bigint | number): PyValue => ({ type: 'int', value: BigInt(value) });
const float = (value: number): PyValue => ({ type: 'float', value });
const str = (value: string): PyValue => ({ type: 'str', value });
const bytes = (...value: number[]): PyValue => ({ type: 'bytes', value: Uint8Array.from(value) });
const list = (...items: PyValue[]): PyValue => ({ type: 'list', items });
const tuple = (...items: PyValue[]): PyValue => ({ type: 'tuple', items });
const set = (...items: PyValue[]): PyValue => ({ type: 'set', items });
const dict = (...entries: [PyValue, PyValue][]): PyValue => ({ type: 'dict', entries });

function refusal(text: string): [PyLiteralErrorCode, number] | 'read' {
  try {
    readPythonLiteral(text);
    return 'read';
  } catch (e) {
    if (!(e instanceof PyLiteralError)) throw e;
    return [e.code, e.offset];
  }
}

describe('readPythonLiteral', () => {
  it('reads a float with a fractional part inside a dict, whole (the misread mp-receipt case)', () => {
    expect(readPythonLiteral("{'x': 12345.5}")).toEqual(dict([str('x'), float(12345.5)]));
    expect(readPythonLiteral("{'x': 327654.5}")).toEqual(dict([str('x'), float(327654.5)]));
  });

  it('keeps a float a float at any depth, a whole one too, and apart from the int of equal value', () => {
    expect(readPythonLiteral('[1.5]')).toEqual(list(float(1.5)));
    expect(readPythonLiteral("{'a': (1, 2.25)}")).toEqual(dict([str('a'), tuple(int(1), float(2.25))]));
    expect(readPythonLiteral("{'b': {1.0}}")).toEqual(dict([str('b'), set(float(1))]));
    expect(readPythonLiteral("{'a': [{'b': [327654.0]}]}")).toEqual(dict([str('a'), list(dict([str('b'), list(float(327654))]))]));
    expect(readPythonLiteral("{'k': [1, (2, {3: {4.5}}), b'']}")).toEqual(
      dict([str('k'), list(int(1), tuple(int(2), dict([int(3), set(float(4.5))])), bytes())]),
    );
    expect(readPythonLiteral('[1, 1.0]')).toEqual(list(int(1), float(1)));
  });

  it('reads None, True and False', () => {
    expect(readPythonLiteral('None')).toEqual(None);
    expect(readPythonLiteral('[True, False]')).toEqual(list(bool(true), bool(false)));
  });

  it('reads ints of any size and sign, with underscores and 0x / 0o / 0b', () => {
    const ints: [string, bigint][] = [
      ['0', 0n],
      ['-0', 0n],
      ['00', 0n],
      ['0_0', 0n],
      ['+7', 7n],
      ['- 7', -7n],
      ['123_456', 123456n],
      ['-12345678901234567890123456789', -12345678901234567890123456789n],
      ['0x_1F', 31n],
      ['0o17', 15n],
      ['0B101', 5n],
      [`${'9'.repeat(617)}`, BigInt('9'.repeat(617))],
    ];
    for (const [text, value] of ints) expect(readPythonLiteral(text), text).toEqual(int(value));
  });

  it("reads floats in every form, and repr's inf and nan", () => {
    const floats: [string, number][] = [
      ['1.5', 1.5],
      ['-0.0', -0],
      ['1.', 1],
      ['.5', 0.5],
      ['1e5', 1e5],
      ['1E-5', 1e-5],
      ['5.e3', 5000],
      ['01.5', 1.5],
      ['01e1', 10],
      ['1_0.2_5e1_0', 10.25e10],
      ['4.9e-324', 5e-324],
      ['1e400', Infinity],
      ['-1e400', -Infinity],
      ['inf', Infinity],
      ['-inf', -Infinity],
      ['nan', NaN],
    ];
    for (const [text, value] of floats) expect(readPythonLiteral(text), text).toEqual(float(value));
    expect(Object.is((readPythonLiteral('-0.0') as { value: number }).value, -0)).toBe(true);
  });

  it('reads str with both quotes, triple quotes, every escape, raw and u prefixes, and adjacent literals', () => {
    const strs: [string, string][] = [
      ["'a'", 'a'],
      ['"b"', 'b'],
      ["'\"'", '"'],
      ['"\'"', "'"],
      ["'''t\nq'''", 't\nq'],
      ['"""x"y"""', 'x"y'],
      ["'''a\r\nb'''", 'a\nb'],
      ["'\\x41\\u00e9\\U0001F600\\101\\777\\0'", 'Aé😀A\u01ff\0'],
      ["'\\\\\\'\\\"\\a\\b\\f\\n\\r\\t\\v'", '\\\'"\x07\b\f\n\r\t\v'],
      ["'\\q\\8'", '\\q\\8'],
      ["'\\ud800'", '\ud800'],
      ["'a\\\nb'", 'ab'],
      ["r'\\n\\''", "\\n\\'"],
      ["u'x'", 'x'],
      ["U'x'", 'x'],
      ["'é😀\u2028'", 'é😀\u2028'],
      ['\'a\' "b"', 'ab'],
      ["('a'\n 'b')", 'ab'],
    ];
    for (const [text, value] of strs) expect(readPythonLiteral(text), text).toEqual(str(value));
  });

  it('reads bytes with their escapes, in which \\u is no escape', () => {
    expect(readPythonLiteral("b'\\xd9\\xd9'")).toEqual(bytes(0xd9, 0xd9));
    expect(readPythonLiteral("b'\\x00\\xff\\777A\\u00e9'")).toEqual(bytes(0, 0xff, 0xff, 0x41, ...Array.from('\\u00e9', (c) => c.charCodeAt(0))));
    expect(readPythonLiteral(`b'\\'"'`)).toEqual(bytes(0x27, 0x22));
    expect(readPythonLiteral("Rb'\\x'")).toEqual(bytes(0x5c, 0x78));
    expect(readPythonLiteral("bR'a' B'b'")).toEqual(bytes(0x61, 0x62));
    expect(readPythonLiteral("b''")).toEqual(bytes());
  });

  it('reads lists, tuples (empty, 1-tuples, bare), dicts and sets (set() too), with trailing commas', () => {
    expect(readPythonLiteral('[]')).toEqual(list());
    expect(readPythonLiteral('[1,]')).toEqual(list(int(1)));
    expect(readPythonLiteral('()')).toEqual(tuple());
    expect(readPythonLiteral('(1,)')).toEqual(tuple(int(1)));
    expect(readPythonLiteral('(1)')).toEqual(int(1));
    expect(readPythonLiteral('((1, 2),)')).toEqual(tuple(tuple(int(1), int(2))));
    expect(readPythonLiteral('1, 2')).toEqual(tuple(int(1), int(2)));
    expect(readPythonLiteral(' 1 ,')).toEqual(tuple(int(1)));
    expect(readPythonLiteral('{}')).toEqual(dict());
    expect(readPythonLiteral('{1:2,}')).toEqual(dict([int(1), int(2)]));
    expect(readPythonLiteral("{(1, 'a'): [None], b'k': -1}")).toEqual(dict([tuple(int(1), str('a')), list(None)], [bytes(0x6b), int(-1)]));
    expect(readPythonLiteral('set()')).toEqual(set());
    expect(readPythonLiteral('{1, 2}')).toEqual(set(int(1), int(2)));
    expect(readPythonLiteral('{1,}')).toEqual(set(int(1)));
    expect(readPythonLiteral("{'x': {327654}}")).toEqual(dict([str('x'), set(int(327654))]));
    expect(readPythonLiteral("{'x': {327654: 'a'}}")).toEqual(dict([str('x'), dict([int(327654), str('a')])]));
    expect(readPythonLiteral("['327654']")).toEqual(list(str('327654')));
    expect(readPythonLiteral('\n[\n 1, # one\n 2,\n]\n')).toEqual(list(int(1), int(2)));
  });

  it("keeps Python's rule for equal keys and elements: first key and place, last value", () => {
    expect(readPythonLiteral("{1: 'a', True: 'b', 1.0: 'c', 2: 'd'}")).toEqual(dict([int(1), str('c')], [int(2), str('d')]));
    expect(readPythonLiteral("{'a': 1, 'b': 2, 'a': 3}")).toEqual(dict([str('a'), int(3)], [str('b'), int(2)]));
    expect(readPythonLiteral('{-0.0: 1, 0: 2}')).toEqual(dict([float(-0), int(2)]));
    expect(readPythonLiteral('{1, True, 1.0, (1,), (1.0,)}')).toEqual(set(int(1), tuple(int(1))));
    expect(readPythonLiteral('{nan, nan}')).toEqual(set(float(NaN), float(NaN)));
  });

  it('refuses what is not a literal, with a typed error and where', () => {
    const refused: [string, PyLiteralErrorCode, number][] = [
      ['', 'PY_LITERAL_SYNTAX', 0],
      ['01', 'PY_LITERAL_SYNTAX', 0],
      ['1__0', 'PY_LITERAL_SYNTAX', 0],
      ['[1_]', 'PY_LITERAL_SYNTAX', 1],
      ['1._5', 'PY_LITERAL_SYNTAX', 0],
      ['1e_5', 'PY_LITERAL_SYNTAX', 0],
      ['1.5.3', 'PY_LITERAL_SYNTAX', 3],
      ["{'x': 'abc}", 'PY_LITERAL_SYNTAX', 6],
      ["'a\nb'", 'PY_LITERAL_SYNTAX', 0],
      ["'\\x4'", 'PY_LITERAL_SYNTAX', 1],
      ["'\\U00110000'", 'PY_LITERAL_SYNTAX', 1],
      ["b'é'", 'PY_LITERAL_SYNTAX', 2],
      ["'a' b'b'", 'PY_LITERAL_SYNTAX', 4],
      ["ur'x'", 'PY_LITERAL_SYNTAX', 0],
      ['[1, 2', 'PY_LITERAL_SYNTAX', 5],
      ['[1 2]', 'PY_LITERAL_SYNTAX', 3],
      ['(,)', 'PY_LITERAL_SYNTAX', 1],
      ['{1: 2, 3}', 'PY_LITERAL_SYNTAX', 8],
      ['{1, 2: 3}', 'PY_LITERAL_SYNTAX', 5],
      ['1,\n2', 'PY_LITERAL_SYNTAX', 2],
      ["{'x': 1.5} x", 'PY_LITERAL_SYNTAX', 11],
      ['['.repeat(201) + ']'.repeat(201), 'PY_LITERAL_SYNTAX', 200],
      ['1j', 'PY_LITERAL_UNSUPPORTED', 0],
      ['1+2j', 'PY_LITERAL_UNSUPPORTED', 1],
      ['0.1+0.2', 'PY_LITERAL_UNSUPPORTED', 3],
      ['-True', 'PY_LITERAL_UNSUPPORTED', 0],
      ['--1', 'PY_LITERAL_UNSUPPORTED', 0],
      ["f'{x}'", 'PY_LITERAL_UNSUPPORTED', 0],
      ["'\\N{DIGIT ONE}'", 'PY_LITERAL_UNSUPPORTED', 1],
      ['...', 'PY_LITERAL_UNSUPPORTED', 0],
      ['x', 'PY_LITERAL_UNSUPPORTED', 0],
      ["{'x': frozenset({1})}", 'PY_LITERAL_UNSUPPORTED', 6],
      ["bytearray(b'a')", 'PY_LITERAL_UNSUPPORTED', 0],
      ['set([1])', 'PY_LITERAL_UNSUPPORTED', 0],
      ["float('nan')", 'PY_LITERAL_UNSUPPORTED', 0],
      ['{[1]: 2}', 'PY_LITERAL_UNHASHABLE', 1],
      ['{1, {2: 3}}', 'PY_LITERAL_UNHASHABLE', 4],
      ['{(1, set()): 2}', 'PY_LITERAL_UNHASHABLE', 1],
    ];
    for (const [text, code, offset] of refused) expect(refusal(text), JSON.stringify(text)).toEqual([code, offset]);
    expect(() => readPythonLiteral('{[1]: 2}')).toThrow("PY_LITERAL_UNHASHABLE at offset 1: unhashable type: 'list'");
  });
});
