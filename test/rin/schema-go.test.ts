// Capability schemas judged as the reference's Go library judges them (issue 33 item 7): numbers as
// exact decimals of their lexemes, regular expressions in Go's RE2, references without a scheme under
// the opaque `urn:` base as Go resolves them. The expected verdicts are the reference's (host.NewSchema
// and Schema.ValidateInstance of ../shared/reference/rin-src); test/interop/rin-schema-go.test.ts
// compares them live.
import { describe, expect, it } from 'vitest';
import { compareDecimal, decimalKey, isIntegerDecimal, isMultipleOf, parseDecimal } from '../../ts/rin/decimal.js';
import { RinError } from '../../ts/rin/errors.js';
import { newSchema, validateAgainstSchema } from '../../ts/rin/schema.js';
import type { Schema } from '../../ts/rin/types.js';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const closed = (properties: string, extra = ''): string =>
  `{"$schema":"${DIALECT}","type":"object","additionalProperties":false,"properties":{${properties}}${extra}}`;

/** The refusal `check` throws: always a RinError `invalid`. */
function refusal(check: () => unknown): RinError {
  try {
    check();
  } catch (e) {
    expect(e).toBeInstanceOf(RinError);
    expect((e as RinError).code).toBe('invalid');
    return e as RinError;
  }
  throw new Error('expected a refusal');
}

/** For each instance, whether the schema accepts it (a refusal must be on `instance`). */
function accepts(schema: Schema, instances: string[]): boolean[] {
  return instances.map((text) => {
    try {
      validateAgainstSchema(schema, text);
      return true;
    } catch (e) {
      expect([e instanceof RinError, (e as RinError).field]).toEqual([true, 'instance']);
      return false;
    }
  });
}

const numbers = (keyword: string, lexeme: string, instances: string[]): boolean[] =>
  accepts(
    newSchema(closed(`"n":{"${keyword}":${lexeme}}`)),
    instances.map((l) => `{"n":${l}}`),
  );

describe('exact decimals of JSON number lexemes (big.Rat)', () => {
  const d = parseDecimal;

  it('orders and equates values, never floats', () => {
    expect(compareDecimal(d('8.0000000000000001'), d('8'))).toBe(1);
    expect(compareDecimal(d('7.9999999999999999'), d('8'))).toBe(-1);
    expect(compareDecimal(d('80e-1'), d('8'))).toBe(0);
    expect(compareDecimal(d('-0'), d('0.0e5'))).toBe(0);
    expect(compareDecimal(d('9007199254740993'), d('9007199254740992'))).toBe(1);
    expect(compareDecimal(d('-1e400'), d('-1e399'))).toBe(-1);
    expect(compareDecimal(d('1e-400'), d('0'))).toBe(1);
    // A huge power of ten against a small number: decided by the leading digit's place.
    expect(compareDecimal(d('1e999999'), d('8'))).toBe(1);
    expect(decimalKey(d('1'))).toBe(decimalKey(d('1.0')));
    expect(decimalKey(d('1e0'))).toBe(decimalKey(d('10e-1')));
    expect(decimalKey(d('0.1'))).not.toBe(decimalKey(d('0.10000000000000001')));
  });

  it('divides exactly', () => {
    expect(isMultipleOf(d('19.99'), d('0.01'))).toBe(true);
    expect(isMultipleOf(d('0.07'), d('0.01'))).toBe(true);
    expect(isMultipleOf(d('1.005'), d('0.01'))).toBe(false);
    expect(isMultipleOf(d('0.3'), d('0.1'))).toBe(true);
    expect(isMultipleOf(d('0.15'), d('0.1'))).toBe(false);
    expect(isMultipleOf(d('4.5'), d('1.5'))).toBe(true);
    expect(isMultipleOf(d('2.25'), d('1.5'))).toBe(false);
    expect(isMultipleOf(d('1e400'), d('0.01'))).toBe(true);
    expect(isMultipleOf(d('-0'), d('7'))).toBe(true);
    expect(isMultipleOf(d('3e-399'), d('1e-400'))).toBe(true);
  });

  it('knows integers and the lexemes big.Rat refuses', () => {
    expect(['1.0', '1e400', '1.5e1', '-0', '0e-7'].map((t) => isIntegerDecimal(d(t)))).toEqual([true, true, true, true, true]);
    expect(['1.0000000000000001', '9007199254740993.5', '1e-400', '1e1000001'].map((t) => isIntegerDecimal(d(t)))).toEqual([false, false, false, false]);
    // ratconv.go: a scale beyond 10^±1e6 (fraction digits counted in), or an exponent beyond int64 even for zero.
    const lexemes = ['1e1000000', '1e-1000000', '1.5e1000001', '1.5e-999999', '0e9223372036854775807', '1e1000001', '1.5e-1000000', '0e9223372036854775808'];
    expect(lexemes.map((t) => d(t).exact)).toEqual([true, true, true, true, true, false, false, false]);
    // Equal to nothing, not even itself (the reference's equals).
    expect(decimalKey(d('1e1000001'))).not.toBe(decimalKey(d('1e1000001')));
  });

  it('agrees with exact fractions on random lexemes', () => {
    // Each lexeme as numerator / 10^k, compared by cross-multiplication.
    const fraction = (t: string): [bigint, bigint] => {
      const [, sign, int, frac = '', exp = '0'] = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(t)!;
      const scale = Number(exp) - frac.length;
      const n = BigInt(`${sign}${int}${frac}`);
      return scale >= 0 ? [n * 10n ** BigInt(scale), 1n] : [n, 10n ** BigInt(-scale)];
    };
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const lexeme = (): string => {
      const int = next(3) === 0 ? '0' : String(1 + next(9)) + '0123456789'.slice(0, next(8));
      const frac = next(2) ? `.${String(next(10 ** 6)).padStart(1 + next(6), '0')}` : '';
      const exp = next(2) ? `e${next(41) - 20}` : '';
      return `${next(3) ? '' : '-'}${int}${frac}${exp}`;
    };
    for (let i = 0; i < 2000; i++) {
      const a = lexeme();
      const b = lexeme();
      const [an, ad] = fraction(a);
      const [bn, bd] = fraction(b);
      const cross = an * bd - bn * ad;
      expect([a, b, compareDecimal(d(a), d(b))]).toEqual([a, b, cross === 0n ? 0 : cross < 0n ? -1 : 1]);
      expect([a, b, decimalKey(d(a)) === decimalKey(d(b))]).toEqual([a, b, cross === 0n]);
      if (bn > 0n) expect([a, b, isMultipleOf(d(a), d(b))]).toEqual([a, b, (an * bd) % (bn * ad) === 0n]);
      expect([a, isIntegerDecimal(d(a))]).toEqual([a, an % ad === 0n]);
    }
  });
});

describe('schema numbers are compared on their lexemes', () => {
  it('bounds', () => {
    expect(numbers('maximum', '8', ['8', '8.0000000000000001', '7.9999999999999999', '80e-1', '1e400'])).toEqual([true, false, true, true, false]);
    expect(numbers('minimum', '8', ['7.9999999999999999', '8'])).toEqual([false, true]);
    expect(numbers('exclusiveMaximum', '0.3', ['0.30000000000000001', '0.29999999999999999', '0.3'])).toEqual([false, true, false]);
    expect(numbers('exclusiveMinimum', '0', ['1e-400', '0', '-0'])).toEqual([true, false, false]);
    expect(numbers('maximum', '9007199254740992', ['9007199254740993', '9007199254740992'])).toEqual([false, true]);
    // The bound's own lexeme counts too: 1.0000000000000001 is a float 1.
    expect(numbers('maximum', '1.0000000000000001', ['1.0000000000000001', '1.00000000000000011'])).toEqual([true, false]);
  });

  it('multipleOf', () => {
    expect(numbers('multipleOf', '0.01', ['19.99', '0.07', '1.005', '1e400'])).toEqual([true, true, false, true]);
    expect(numbers('multipleOf', '0.1', ['0.3', '0.7', '0.15'])).toEqual([true, true, false]);
    // 1e-400 is a float 0, which the meta-schema's exclusiveMinimum 0 would refuse.
    expect(numbers('multipleOf', '1e-400', ['1', '1.5e-400'])).toEqual([true, false]);
  });

  it('integer, const, enum and uniqueItems', () => {
    expect(numbers('type', '"integer"', ['1.0', '1e400', '1.0000000000000001', '9007199254740993.5'])).toEqual([true, true, false, false]);
    expect(numbers('const', '0.1', ['1e-1', '0.10000000000000001'])).toEqual([true, false]);
    expect(numbers('enum', '[1,9007199254740993]', ['1.0', '9007199254740992', '9007199254740993'])).toEqual([true, false, true]);
    expect(numbers('const', '{"a":[1,2.50]}', ['{"a":[1.0,2.5]}', '{"a":[1,2.5000000000000001]}'])).toEqual([true, false]);
    const unique = newSchema(closed('"a":{"type":"array","uniqueItems":true}'));
    expect(
      accepts(unique, ['{"a":[1,1.0]}', '{"a":[0.1,0.10000000000000001]}', '{"a":[{"x":1},{"x":1e0}]}', '{"a":[9007199254740992,9007199254740993]}']),
    ).toEqual([false, true, false, true]);
  });

  it('refuses, typed, a number big.Rat cannot hold where the reference would panic on it', () => {
    // 1e-1000001 is a float 0, well under 8: the reference panics (big.Rat refuses the lexeme).
    const schema = newSchema(closed('"n":{"maximum":8}'));
    for (const n of ['1e-1000001', '1e1000001']) expect(refusal(() => validateAgainstSchema(schema, `{"n":${n}}`)).field).toBe('instance');
    expect(accepts(schema, ['{"n":0e1000001}'])).toEqual([true]);
  });
});

describe("schema patterns are Go's regular expressions (RE2)", () => {
  const pattern = (p: string): Schema => newSchema(closed(`"s":{"type":"string","pattern":${JSON.stringify(p)}}`));
  const strings = (p: string, texts: string[]): boolean[] =>
    accepts(
      pattern(p),
      texts.map((t) => `{"s":${JSON.stringify(t)}}`),
    );

  it('refuses what RE2 refuses, with its message', () => {
    for (const p of ['^(?=a)a$', '^(?!b)a', '(?<=a)b', '(?<!x)y', '^(a)\\1$', '\\cA', '^\\u0041$', 'a{1001}']) {
      const e = refusal(() => pattern(p));
      expect([p, e.field, e.message.startsWith('schema.document: does not compile: error parsing regexp: ')]).toEqual([p, 'schema.document', true]);
    }
    expect(refusal(() => newSchema(closed('', ',"patternProperties":{"^(?=x)":{}}'))).field).toBe('schema.document');
  });

  it("takes RE2's syntax", () => {
    expect(strings('^(?i)abc$', ['ABC', 'abd'])).toEqual([true, false]);
    expect(strings('^(?P<n>a+)$', ['aa', 'b'])).toEqual([true, false]);
    expect(strings('^a\\z', ['a', 'a\n'])).toEqual([true, false]);
    expect(strings('^[[:alpha:]]+$', ['abc', 'ab1'])).toEqual([true, false]);
    expect(strings('^\\x{41}\\x{1F600}$', ['A😀'])).toEqual([true]);
    expect(strings('^\\Qa.b\\E$', ['a.b', 'axb'])).toEqual([true, false]);
    expect(strings('^\\pL\\p{Greek}$', ['éα'])).toEqual([true]);
    expect(strings('^[\\d-z]$', ['-'])).toEqual([true]);
    expect(accepts(newSchema(closed('', ',"patternProperties":{"^(?i)x$":{"type":"string"}}')), ['{"X":"a"}', '{"X":1}'])).toEqual([true, false]);
  });

  it('matches as RE2 does: `.` takes \\r and U+2028, `\\s` only ASCII space', () => {
    expect(strings('^.$', ['\n', '\r', '\u2028', '😀'])).toEqual([false, true, true, true]);
    expect(strings('^\\s$', ['\u00a0', '\u000b', '\u2003', '\ufeff', '\t', '\f'])).toEqual([false, false, false, false, true, true]);
    expect(strings('^\\w$', ['é'])).toEqual([false]);
  });
});

describe('references without a scheme, under the urn: base', () => {
  it('name the document itself, as Go resolves them', () => {
    const self = newSchema(closed('"r":{"$ref":"other.json"}'));
    expect(accepts(self, ['{}', '{"r":{}}', '{"r":1}', '{"r":{"x":1}}'])).toEqual([true, true, false, false]);
    const pointer = newSchema(closed('"r":{"$ref":"other.json#/$defs/x"}', ',"$defs":{"x":{"type":"string"}}'));
    expect(accepts(pointer, ['{"r":"a"}', '{"r":1}'])).toEqual([true, false]);
    const rooted = newSchema(closed('"r":{"$ref":"https://schemas.test/s"}', ',"$id":"https://schemas.test/s"'));
    expect(accepts(rooted, ['{"r":{}}', '{"r":1}'])).toEqual([true, false]);
  });

  it("a missing target, a subschema claiming the document's id, a remote resource: typed refusals; no document harms the compiler", () => {
    for (const document of [
      closed('"r":{"$ref":"other.json#/$defs/none"}'),
      closed('"r":{"$id":"sub.json","type":"string"}'),
      closed('"r":{"$ref":"https://schemas.test/remote.json"}'),
    ]) {
      const e = refusal(() => newSchema(document));
      expect([e.field, e.message.startsWith('schema.document: does not compile: '), e.message.includes('URN without nid')]).toEqual([
        'schema.document',
        true,
        false,
      ]);
    }
    // A document claiming the meta-schema's id that fails to compile leaves the compiler whole.
    const claimed = (properties: string) => newSchema(closed(properties, `,"$id":"${DIALECT}"`));
    expect(refusal(() => claimed('"a":{"pattern":"(?=a)"}')).field).toBe('schema.document');
    expect(accepts(claimed('"a":{"type":"string"}'), ['{"a":"x"}', '{"a":1}'])).toEqual([true, false]);
    expect(accepts(newSchema(closed('"a":{"type":"string"}')), ['{"a":"x"}'])).toEqual([true]);
    // A subschema's $id stays in its document.
    newSchema(closed('"r":{"$id":"https://schemas.test/a","type":"string"}'));
    expect(refusal(() => newSchema(closed('"q":{"$ref":"https://schemas.test/a"}'))).field).toBe('schema.document');
  });
});
