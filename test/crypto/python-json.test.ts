// The one Python-style JSON writer under each of its policies, against Python's own json.dumps:
// test-vectors/python-json.json (written by scripts/vectors/gen_python_json.py with Python's json
// module) holds JSON texts with what json.dumps(sort_keys=True, ensure_ascii=False, separators=(",",
// ":"), allow_nan=False) makes of them, and JS numbers with what it writes for them as a float and as
// an int. Each use reads a text with its own reader, as it does on the wire, and must write Python's
// text or refuse what its policy refuses; a JS number must come out as the float or the int its policy
// takes it for.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Entries, parseJson, RawNumber } from '../../ts/crypto/jcs.js';
import { PROTOCOL_ID_JSON } from '../../ts/crypto/pyjson.js';
import { pythonJson, type PythonJsonPolicy } from '../../ts/crypto/python-json.js';
import { GROUP_JSON, parseGroupJson } from '../../ts/group/json.js';
import { MP_TRANSCRIPT_JSON, parseJsonExact } from '../../ts/mp/canonical.js';
import { parseRealtimeJson, REALTIME_JSON } from '../../ts/realtime/json.js';

interface TextCase {
  name: string;
  json: string;
  floats: string[];
  python?: string;
  error?: string;
}
interface DoubleCase {
  double: string;
  as_float?: string;
  as_int?: string;
  error?: string;
}
const vectors = JSON.parse(readFileSync(new URL('../../test-vectors/python-json.json', import.meta.url), 'utf8')) as {
  texts: TextCase[];
  doubles: DoubleCase[];
};

type Outcome = { text: string } | { code: string; message?: string };

function outcome(f: () => string, withMessage = false): Outcome {
  try {
    return { text: f() };
  } catch (e) {
    const { code, message } = e as { code?: unknown; message: string };
    if (typeof code !== 'string') throw e;
    return withMessage ? { code, message } : { code };
  }
}

describe('each policy writes what Python json.dumps writes', () => {
  it('has vectors', () => {
    expect(vectors.texts.length).toBeGreaterThan(15);
    expect(vectors.doubles.length).toBeGreaterThan(20);
  });

  for (const c of vectors.texts) {
    it(`text: ${c.name}`, () => {
      const pid = (): string => pythonJson(parseJson(c.json, { rawNumbers: true }), PROTOCOL_ID_JSON);
      const rt = (): string => pythonJson(parseRealtimeJson(c.json), REALTIME_JSON);
      const group = (): string => pythonJson(parseGroupJson(c.json), GROUP_JSON);
      const mp = (): string => pythonJson(parseJsonExact(c.json), MP_TRANSCRIPT_JSON);
      if (c.python === undefined) {
        // A float out of range, which Python reads as an infinity and then cannot write: the strict
        // readers refuse it already (the writers' own refusal is checked with the JS numbers below).
        expect([pid, rt, group, mp].map((f) => outcome(f))).toEqual([
          { code: 'JSON_NUMBER_RANGE' },
          { code: 'RT_JSON_SYNTAX' },
          { code: 'GROUP_JSON_SYNTAX' },
          { code: 'JSON_NUMBER_RANGE' },
        ]);
        return;
      }
      const python = { text: c.python };
      expect(outcome(pid)).toEqual(python);
      expect(outcome(rt)).toEqual(python);
      // group: the reference validates before it writes, and refuses every float.
      expect(outcome(group)).toEqual(c.floats.length ? { code: 'GROUP_JSON_FLOAT' } : python);
      // mental poker: a float literal reaches the writer as a JS number; one with a fraction, or -0, is
      // refused as a float. A whole one is an integer there (JS cannot tell 1.0 from 1), which Python
      // would write as a float, so such a text is not compared.
      if (c.floats.length === 0) expect(outcome(mp)).toEqual(python);
      else if (c.floats.some((f) => !Number.isInteger(Number(f)) || Object.is(Number(f), -0))) expect(outcome(mp)).toEqual({ code: 'MP_JSON_FLOAT' });
    });
  }

  for (const c of vectors.doubles) {
    it(`JS number ${c.double}`, () => {
      const x = Number(c.double);
      const whole = Number.isInteger(x);
      const asInt = { text: c.as_int };
      const asFloat = { text: c.as_float };

      // protocol_id: a whole double is Python's int of its exact value; -0 is the float -0.0.
      const pid = !Number.isFinite(x) ? { code: 'JSON_NUMBER_RANGE' } : whole && !Object.is(x, -0) ? asInt : asFloat;
      expect(outcome(() => pythonJson(x, PROTOCOL_ID_JSON))).toEqual(pid);

      // realtime: what JSON.stringify sends and Python reads back: an int below 1e21 (-0 is 0), else a float.
      const rt = !Number.isFinite(x) ? { code: 'RT_JSON_NOT_FINITE', message: c.error } : whole && Math.abs(x) < 1e21 ? asInt : asFloat;
      expect(outcome(() => pythonJson(x, REALTIME_JSON), !Number.isFinite(x))).toEqual(rt);

      // group: integers only (-0 is 0); one beyond 2^53 - 1 may have been rounded already.
      const group = !whole ? { code: 'GROUP_JSON_FLOAT' } : Number.isSafeInteger(x) ? asInt : { code: 'GROUP_JSON_UNSAFE_INTEGER' };
      expect(outcome(() => pythonJson(x, GROUP_JSON))).toEqual(group);

      // mental poker: integers only, and -0 can only have come from a float.
      const mp = !whole || Object.is(x, -0) ? { code: 'MP_JSON_FLOAT' } : Number.isSafeInteger(x) ? asInt : { code: 'MP_JSON_UNSAFE_INTEGER' };
      expect(outcome(() => pythonJson(x, MP_TRANSCRIPT_JSON))).toEqual(mp);
    });
  }
});

describe('what the policies refuse, and in which order', () => {
  const nest = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : [nest(depth - 1, leaf)]);
  const deep17 = `${'['.repeat(17)}1${']'.repeat(17)}`;
  const policies: [string, PythonJsonPolicy][] = [
    ['protocol_id', PROTOCOL_ID_JSON],
    ['realtime', REALTIME_JSON],
    ['group', GROUP_JSON],
    ['mp', MP_TRANSCRIPT_JSON],
  ];
  // One row a value: what protocol_id, realtime, group and mp make of it (a text, or an error code).
  const rows: [string, unknown, [string, string, string, string]][] = [
    ['a bigint', { n: 2n ** 64n }, ['{"n":18446744073709551616}', '{"n":18446744073709551616}', '{"n":18446744073709551616}', '{"n":18446744073709551616}']],
    ['an unpaired surrogate', ['\ud800'], ['["\\ud800"]', 'RT_JSON_LONE_SURROGATE', 'GROUP_JSON_LONE_SURROGATE', 'MP_JSON_LONE_SURROGATE']],
    [
      'an unpaired surrogate before a float',
      { a: '\ud800', b: 1.5 },
      ['{"a":"\\ud800","b":1.5}', 'RT_JSON_LONE_SURROGATE', 'GROUP_JSON_LONE_SURROGATE', 'MP_JSON_FLOAT'],
    ],
    ['undefined', { a: undefined }, ['JSON_UNSUPPORTED_VALUE', 'RT_JSON_UNSUPPORTED', 'GROUP_JSON_UNSUPPORTED', 'MP_JSON_UNSUPPORTED']],
    ['a Set', [new Set([1])], ['JSON_UNSUPPORTED_VALUE', 'RT_JSON_UNSUPPORTED', 'GROUP_JSON_UNSUPPORTED', 'MP_JSON_BYTES_OR_SET']],
    ['a Map with a number key', [new Map([[1, 2]])], ['JSON_UNSUPPORTED_VALUE', 'RT_JSON_UNSUPPORTED', 'GROUP_JSON_KEY_NOT_STRING', 'MP_JSON_KEY_NOT_STRING']],
    ['an enumerable symbol key', { [Symbol('s')]: 1, a: 1 }, ['{"a":1}', '{"a":1}', 'GROUP_JSON_KEY_NOT_STRING', 'MP_JSON_KEY_NOT_STRING']],
    ['a value 17 levels deep', nest(17, 1), [deep17, deep17, 'GROUP_JSON_TOO_DEEP', deep17]],
    ['128 nested arrays', nest(128, 1), [`${'['.repeat(128)}1${']'.repeat(128)}`, 'RT_JSON_TOO_DEEP', 'GROUP_JSON_TOO_DEEP', 'MP_JSON_TOO_DEEP']],
    [
      '1025 items',
      new Array(1025).fill(0),
      [
        `[${new Array(1025).fill(0).join(',')}]`,
        `[${new Array(1025).fill(0).join(',')}]`,
        'GROUP_JSON_TOO_MANY_ITEMS',
        `[${new Array(1025).fill(0).join(',')}]`,
      ],
    ],
    [
      'a string over 64 KiB of UTF-8',
      ['é'.repeat(32769)],
      [`["${'é'.repeat(32769)}"]`, `["${'é'.repeat(32769)}"]`, 'GROUP_JSON_STRING_TOO_LONG', `["${'é'.repeat(32769)}"]`],
    ],
    [
      'a parsed tree',
      new Entries([
        ['b', new RawNumber('1.0')],
        ['a', 1],
      ]),
      ['{"a":1,"b":1.0}', '{"a":1,"b":1.0}', 'GROUP_JSON_UNSUPPORTED', 'MP_JSON_UNSUPPORTED'],
    ],
    ['a whole double of 1e21', [1e21], ['[1000000000000000000000]', '[1e+21]', 'GROUP_JSON_UNSAFE_INTEGER', 'MP_JSON_UNSAFE_INTEGER']],
  ];
  for (const [name, value, want] of rows) {
    it(name, () => {
      policies.forEach(([policyName, policy], i) => {
        const got = outcome(() => pythonJson(value, policy));
        expect(got, policyName).toEqual(/^[A-Z_]+$/.test(want[i]!) ? { code: want[i] } : { text: want[i] });
      });
    });
  }

  it("protocol_id meets an object's members in sorted order, the others in insertion order", () => {
    const v = { b: NaN, a: -Infinity };
    expect(outcome(() => pythonJson(v, PROTOCOL_ID_JSON), true)).toEqual({
      code: 'JSON_NUMBER_RANGE',
      message: 'JSON_NUMBER_RANGE: -Infinity has no JSON form',
    });
    const undefinedFirst = { b: undefined, a: NaN };
    expect(outcome(() => pythonJson(undefinedFirst, REALTIME_JSON))).toEqual({ code: 'RT_JSON_UNSUPPORTED' });
    expect(outcome(() => pythonJson(undefinedFirst, GROUP_JSON))).toEqual({ code: 'GROUP_JSON_UNSUPPORTED' });
    expect(outcome(() => pythonJson(undefinedFirst, MP_TRANSCRIPT_JSON))).toEqual({ code: 'MP_JSON_UNSUPPORTED' });
  });
});
