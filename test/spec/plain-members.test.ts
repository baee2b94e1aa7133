// plainMembers (ts/spec/wire.ts) decides when checkText may read a message with JSON.parse: it must
// count exactly the members JSON.parse keeps, and give up (-1) on every text with a surrogate escape,
// a number JSON.parse could misread, or too deep a nesting, wherever in the text these are.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countMembers, plainMembers } from '../../ts/spec/wire.js';

const RUNS = Number(process.env['AIGENORA_FUZZ_RUNS'] ?? 300);

/** JSON values whose numbers are small integers and whose strings hold escapes and quotes. */
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.integer({ min: -1e9, max: 1e9 }),
    fc.string({ unit: fc.constantFrom('a', '"', '\\', '\\n', 'é', ':', '{', '1', '.') }),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: fc.constantFrom('k', '"', '\\', ':', 'x') }), tie('v'), { maxKeys: 4 }),
  ),
})).v;

describe('plainMembers', () => {
  it('counts the members JSON.parse keeps, escapes and quotes in strings notwithstanding', () => {
    fc.assert(
      fc.property(value, (v) => {
        const text = JSON.stringify(v);
        expect(plainMembers(text, 127)).toBe(countMembers(JSON.parse(text)));
      }),
      { numRuns: RUNS * 5 },
    );
  });

  it('gives up on a surrogate escape in any string, after strings with and without other escapes', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 5 }), fc.nat(), fc.constantFrom('\\ud800', '\\uDFFF', '\\ud83d\\ude00'), (vs, at, esc) => {
        const parts = vs.map((v) => JSON.stringify(v));
        const k = at % (parts.length + 1);
        parts.splice(k, 0, `"x${esc}y"`);
        expect(plainMembers(`[${parts.join(',')}]`, 127)).toBe(-1);
      }),
      { numRuns: RUNS * 5 },
    );
    expect(plainMembers('{"a":"\\n","b":"\\u00e9","c":"\\ud800"}', 127)).toBe(-1);
    expect(plainMembers('{"a":"\\n","b":"\\u00e9","c":"x"}', 127)).toBe(3);
  });

  it('counts the members of flat messages, spaced or with a key repeated, and gives up on their odd numbers', () => {
    const plain = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', ':', ',', '{', '}', '1', 'é', ' ', '\u2028') }),
      fc.integer({ min: -(2 ** 49), max: 2 ** 49 }),
      fc.constantFrom(true, false, null, 0, 123456789012345, -123456789012345),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: fc.constantFrom('k', ':', ',', '"', 'é') }), plain, { minKeys: 1, maxKeys: 8 }), (v) => {
        const text = JSON.stringify(v);
        expect(plainMembers(text, 127)).toBe(Object.keys(v).length);
        // Spaced out, the same count; with a key written twice, one more than JSON.parse keeps.
        expect(plainMembers(text.replace(/^\{/, '{ '), 127)).toBe(Object.keys(v).length);
        const again = `${JSON.stringify(Object.keys(v)[0])}:0,`;
        expect(plainMembers(`{${again}${text.slice(1)}`, 127)).toBe(Object.keys(v).length + 1);
      }),
      { numRuns: RUNS * 5 },
    );
    for (const n of ['-0', '1.0', '1e3', '2E1', '1234567890123456', '-1234567890123456', '01', '-', '1.'])
      expect([n, plainMembers(`{"a":"s","b":${n}}`, 127)]).toEqual([n, n === '01' ? 2 : -1]);
    expect(plainMembers('{"a":"s","b":-123456789012345}', 127)).toBe(2);
    expect(plainMembers('{"a":1}', 0)).toBe(-1);
    expect(plainMembers('{"a":"x\\"y","b":1}', 127)).toBe(2);
  });

  it('gives up on numbers JSON.parse could misread and on nesting past the limit', () => {
    for (const n of ['1.0', '1e3', '-0', '1234567890123456', '2E1']) expect([n, plainMembers(`{"a":"s","b":[1,${n}]}`, 127)]).toEqual([n, -1]);
    expect(plainMembers('{"a":123456789012345}', 127)).toBe(1);
    expect(plainMembers('[[[1]]]', 2)).toBe(-1);
    expect(plainMembers('[[[1]]]', 3)).toBe(0);
  });
});
