// Group canonical JSON is written in one walk (check and text together). Random values must come out
// exactly as the two-step path writes them (checkGroupJson, then the realtime serialiser's tree and
// pythonJson), faults included (same code, same text); and the accepted ones as Python's own
// json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False) writes them.
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { need } from '../shared/require.js';
import { RawNumber } from '../../ts/crypto/jcs.js';
import { GroupError } from '../../ts/group/errors.js';
import { utf8 } from '../../ts/crypto/encoding.js';
import { utf8Length } from '../../ts/crypto/unicode.js';
import { canonicalPart, checkGroupJson, groupCanonical, MAX_GROUP_JSON_DEPTH, objectPart } from '../../ts/group/json.js';
import { rtCanonical } from '../../ts/realtime/json.js';

type Outcome = { text: string } | { code: string; message: string };

function outcome(f: () => string): Outcome {
  try {
    return { text: f() };
  } catch (e) {
    if (e instanceof GroupError) return { code: e.code, message: e.message };
    throw e;
  }
}
const twoStep = (v: unknown) => outcome(() => (checkGroupJson(v), rtCanonical(v)));
const oneWalk = (v: unknown) => outcome(() => groupCanonical(v));

// Keys that sort differently by UTF-16 unit and by code point, escapes, __proto__, lone surrogates.
const key = fc.oneof(
  fc.constantFrom('a', 'b', 'B', '', '__proto__', '\uff61', '\u{1F600}', '\ud800', 'a\udc00', '"', '\\', '\n', '\u0000', 'é', 'ab', 'a\u{10000}'),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.string({ unit: 'binary', maxLength: 3 }),
);
const scalar = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -0,
    1,
    -1,
    1.5,
    NaN,
    Infinity,
    2 ** 53,
    -(2 ** 53 - 1),
    2n ** 70n,
    -5n,
    new RawNumber('12'),
    new RawNumber('-0'),
    new RawNumber('1.0'),
    new RawNumber('1e3'),
  ),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.bigInt(),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  key,
);
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', maxDepth: 6 },
    scalar,
    fc.array(tie('v'), { maxLength: 5 }),
    fc.dictionary(key, tie('v'), { maxKeys: 5 }).map((entries) => {
      // defineProperty, so that "__proto__" is an own key, as the lossless reader makes it.
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(entries)) Object.defineProperty(o, k, { value: x, enumerable: true, writable: true, configurable: true });
      return o;
    }),
  ),
})).v;

const nest = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : depth % 2 ? [nest(depth - 1, leaf)] : { k: nest(depth - 1, leaf) });

describe('group canonical JSON: one walk = check + tree + pythonJson', () => {
  it('random values: the same text, or the same fault', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(oneWalk(v)).toEqual(twoStep(v));
      }),
      { numRuns: 3000 },
    );
  });

  it("an object put together from its values' texts is the object's text, or the same fault", () => {
    const deep = fc.integer({ min: 0, max: MAX_GROUP_JSON_DEPTH + 1 }).map((d) => nest(d, 1));
    const field = fc.oneof(value, deep);
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('view', 'view_delta', 'checkpoint', 'a', 'b\u00e9', 'Z'), field, { maxKeys: 6 }), (o) => {
        const parts: Record<string, ReturnType<typeof canonicalPart>> = {};
        for (const [k, v] of Object.entries(o)) {
          if (!('text' in oneWalk(v))) return; // each value is written (and refused) on its own first
          parts[k] = canonicalPart(v);
          expect(parts[k]!.text).toBe(groupCanonical(v));
        }
        expect(outcome(() => objectPart(parts).text)).toEqual(oneWalk(o));
      }),
      { numRuns: 2000 },
    );
  });

  it('counts UTF-8 bytes as the encoder does', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), (s) => utf8Length(s) === utf8(s).length));
  });

  it('the limits and the odd values: depth, sizes, keys, types', () => {
    const big = 'x'.repeat(65537);
    const cases: unknown[] = [
      nest(MAX_GROUP_JSON_DEPTH, 1),
      nest(MAX_GROUP_JSON_DEPTH + 1, 1),
      nest(MAX_GROUP_JSON_DEPTH, {}),
      nest(MAX_GROUP_JSON_DEPTH - 1, { k: 1 }),
      nest(MAX_GROUP_JSON_DEPTH, { k: 1 }),
      new Array(1024).fill(0),
      new Array(1025).fill(0),
      Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`k${i}`, i])),
      'é'.repeat(32768),
      'é'.repeat(32769),
      big,
      { [big]: 1 },
      { a: 1.5, b: nest(20, 1) },
      { b: 1.5, a: nest(20, 1) },
      new Map([[1, 2]]),
      new Map([['a', 2]]),
      new Date(0),
      () => 1,
      undefined,
      Symbol('s'),
      { [Symbol('s')]: 1 },
      [undefined],
      { a: undefined },
      Object.create(null),
      Object.assign(Object.create(null), { b: 1, a: [2] }),
      [new RawNumber('007')],
      { z: new RawNumber('-12345678901234567890') },
    ];
    for (const v of cases) expect(oneWalk(v)).toEqual(twoStep(v));
  });
});

describe('group canonical JSON against Python json.dumps', () => {
  const available = need('python3 (the json.dumps oracle)', () => spawnSync('python3', ['-c', 'print(1)'], { encoding: 'utf8' }).status === 0, {
    how: 'install python3 (>= 3.10)',
  });
  it.skipIf(!available)('random accepted values are written as Python writes them', () => {
    const samples = fc.sample(value, { numRuns: 1500, seed: 7 });
    const accepted = samples
      .map((v) => oneWalk(v))
      .filter((o): o is { text: string } => 'text' in o)
      .map((o) => o.text);
    expect(accepted.length).toBeGreaterThan(300);
    // Python reads each text back and writes it again: a fixed point iff ours is its canonical form.
    const script =
      'import json,sys\nfor line in sys.stdin.read().split("\\n")[:-1]:\n  v=json.loads(line)\n  sys.stdout.write(json.dumps(v,sort_keys=True,separators=(",",":"),ensure_ascii=False)+"\\n")\n';
    const r = spawnSync('python3', ['-c', script], {
      input: accepted.map((t) => `${t}\n`).join(''),
      encoding: 'utf8',
      maxBuffer: 1 << 26,
      env: { ...process.env, PYTHONIOENCODING: 'utf-8' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n').slice(0, -1)).toEqual(accepted);
  });
});
