// Property tests of the number cases: a message's literal decides integer or float and its printed
// size, integers are exact at any size (bounds too), hooks get exact values, and a JS value is judged
// as the text JSON.stringify makes of it. Expected verdicts come from BigInt arithmetic and decimal
// string lengths, never from the validator's own helpers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MessageValidator, type Spec } from '../../ts/spec/index.js';

const RUNS = 1000;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A validator for one message "m" whose fields are given as spec JSON text (numbers as written). */
function validator(fieldsText: string): MessageValidator {
  const text = `{"name":"n","messages":[{"name":"m","direction":"both","fields":{"action":{"type":"enum","values":["m"],"required":true},${fieldsText}}}]}`;
  return new MessageValidator(JSON.parse(text) as Spec, { specText: text });
}
const abs = (n: bigint) => (n < 0n ? -n : n);
const wide = fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n });
const nearDoubles = fc.oneof(wide, fc.bigInt({ min: MAX_SAFE - 5n, max: MAX_SAFE + 5n }), fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }));

describe('integers by their literal', () => {
  const v = validator('"i":{"type":"integer"}');

  it('an integer literal of any size is accepted, and its exact value handed on (bigint beyond 2^53 - 1)', () => {
    fc.assert(
      fc.property(nearDoubles, (n) => {
        const r = v.checkText(`{"action":"m","i":${n}}`);
        expect(r.ok).toBe(true);
        if (r.ok) expect(r.value['i']).toBe(abs(n) <= MAX_SAFE ? Number(n) : n);
      }),
      { numRuns: RUNS },
    );
  });

  it('the same number written with a fraction or an exponent is a float, refused as FIELD_TYPE', () => {
    const spelling = fc.constantFrom('.0', 'e0', 'E+0', '.000e0', 'e-0', '.0E1');
    fc.assert(
      fc.property(wide, spelling, (n, s) => {
        const r = v.checkText(`{"action":"m","i":${n}${s}}`);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.errors.map((e) => [e.code, e.pointer])).toEqual([['FIELD_TYPE', '/i']]);
      }),
      { numRuns: RUNS },
    );
  });

  it('bounds are exact as the spec writes them, beyond doubles too', () => {
    fc.assert(
      fc.property(nearDoubles, nearDoubles, nearDoubles, (a, b, x) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const r = validator(`"i":{"type":"integer","min":${lo},"max":${hi}}`).checkText(`{"action":"m","i":${x}}`);
        expect(r.ok).toBe(lo <= x && x <= hi);
        if (!r.ok) expect(r.errors.map((e) => e.code)).toEqual(['FIELD_RANGE']);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('sizes as Python prints the numbers', () => {
  const digits = (n: bigint) => n.toString().length;

  it('a json field of integers is measured on their exact digits', () => {
    fc.assert(
      fc.property(fc.array(nearDoubles, { minLength: 1, maxLength: 8 }), fc.integer({ min: -1, max: 1 }), (xs, d) => {
        const size = 2 + xs.reduce((s, x) => s + digits(x), 0) + xs.length - 1;
        const r = validator(`"j":{"type":"json","max_total_bytes":${size + d}}`).checkText(`{"action":"m","j":[${xs.join(',')}]}`);
        expect(r.ok).toBe(d >= 0);
      }),
      { numRuns: RUNS },
    );
  });

  it('an integral float below 1e16 is measured as Python writes it, "<n>.0", whatever the literal', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }),
        fc.constantFrom('.0', '.00', 'e0', '.0e+0'),
        fc.integer({ min: -1, max: 1 }),
        (n, s, d) => {
          const size = `${n === 0n ? '0' : n}.0`.length;
          const r = validator(`"j":{"type":"json","max_total_bytes":${size + d}}`).checkText(`{"action":"m","j":${n}${s}}`);
          expect(r.ok).toBe(d >= 0);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("an integer array's total counts every digit of every element", () => {
    fc.assert(
      fc.property(fc.array(nearDoubles, { maxLength: 8 }), fc.integer({ min: -1, max: 1 }), (xs, d) => {
        const total = xs.reduce((s, x) => s + digits(x), 0);
        const r = validator(`"a":{"type":"array","items":{"type":"integer"},"max_total_bytes":${total + d}}`).checkText(`{"action":"m","a":[${xs.join(',')}]}`);
        expect(r.ok).toBe(d >= 0);
      }),
      { numRuns: RUNS },
    );
  });

  it('floats reach hooks as the double the literal denotes, integers as the exact integer', () => {
    const v = validator('"j":{"type":"json"}');
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), (x, exp) => {
        const literal = exp ? x.toExponential() : String(x);
        const r = v.checkText(`{"action":"m","j":[${literal}]}`);
        expect(r.ok).toBe(true);
        // String(x) of an integral double is an integer literal: exact, so a bigint beyond 2^53 - 1.
        const expected = /[.eE]/.test(literal) ? Number(literal) : Number.isSafeInteger(x) ? x + 0 : BigInt(literal);
        if (r.ok) expect((r.value['j'] as unknown[])[0]).toBe(expected);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('a JS value is judged as the text it will be sent as', () => {
  const v = validator(
    '"i":{"type":"integer","min":-1000000000000000000000000,"max":1000000000000000000000000},"a":{"type":"array","items":{"type":"integer"},"max_total_bytes":40},"j":{"type":"json","max_total_bytes":30}',
  );
  const num = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1e21, -1e21, 2 ** 60, 1e20, -0, 0.5, 1e300));

  it('check(value) and checkText(JSON.stringify(value)) agree', () => {
    fc.assert(
      fc.property(num, fc.array(num, { maxLength: 4 }), fc.array(num, { maxLength: 3 }), (i, a, j) => {
        const msg = { action: 'm', i, a, j };
        expect(v.check(msg).ok).toBe(v.checkText(JSON.stringify(msg)).ok);
      }),
      { numRuns: RUNS },
    );
  });
});
