// spec.json validation: the reference's built-ins and templates are valid; a corpus of broken specs
// (one per rule) is refused with the right code and pointer; all problems are reported together.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { checkSpecText, validateOptions, validateSpec, type Spec } from '../../ts/spec/index.js';

const REF = new URL('../../../shared/reference/aigenora/src/aigenora/protocols/', import.meta.url);
const haveRef = needShared('reference/aigenora/src/aigenora/protocols', "the reference's built-in specs and templates");
const fixtures = JSON.parse(readFileSync(new URL('fixtures/broken-specs.json', import.meta.url), 'utf8'));

function applySet(doc: unknown, ops: [string, unknown][]): unknown {
  let root = structuredClone(doc);
  for (const [ptr, value] of ops) {
    if (ptr === '') {
      root = value;
      continue;
    }
    const keys = ptr.slice(1).split('/');
    let at = root as Record<string, unknown>;
    for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
    const last = keys.at(-1)!;
    if (value && typeof value === 'object' && '$delete' in value) delete at[last];
    else at[last] = value;
  }
  return root;
}

const errorsOf = (spec: unknown) => validateSpec(spec).filter((i) => i.severity === 'error');

describe('spec validation', () => {
  it('accepts the fixture base without any issue', () => {
    expect(validateSpec(fixtures.base)).toEqual([]);
  });

  type Broken = { name: string; set: [string, unknown][]; code: string; pointer: string };
  it.each((fixtures.cases as Broken[]).map((c): [string, Broken] => [c.name, c]))('refuses %s', (_name, c) => {
    const { set, code, pointer } = c;
    const errors = errorsOf(applySet(fixtures.base, set));
    expect(errors.map((e) => [e.code, e.pointer])).toContainEqual([code, pointer]);
    for (const e of errors) expect(e.message.length).toBeGreaterThan(10);
  });

  it('reports every problem of a spec at once', () => {
    const errors = errorsOf(
      applySet(fixtures.base, [
        ['/name', ''],
        ['/messages/4/direction', 'up'],
        ['/timing/mode', 'x'],
        ['/flow/mode', 'y'],
      ]),
    );
    expect(new Set(errors.map((e) => e.code))).toEqual(new Set(['SPEC_NAME_MISSING', 'MESSAGE_DIRECTION_INVALID', 'TIMING_INVALID', 'FLOW_MODE_UNKNOWN']));
  });

  it('warns, without failing, about unknown keys and messages that cannot be matched', () => {
    const issues = validateSpec(
      applySet(fixtures.base, [
        ['/pricing_hint', 'free'],
        ['/messages/4/fields/action', { type: 'text' }],
      ]),
    );
    expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
    expect(issues.map((i) => i.code)).toEqual(['SPEC_KEY_UNKNOWN', 'MESSAGE_NO_ACTION']);
  });

  it('treats a missing spec_version as 1.0 and lets protocol hash accept an unknown one with a warning', () => {
    const noVersion = applySet(fixtures.base, [['/spec_version', { $delete: true }]]);
    expect(errorsOf(noVersion)).toEqual([]);
    const v2 = applySet(fixtures.base, [['/spec_version', '2.0']]);
    expect(validateSpec(v2, { allowUnknownVersion: true }).map((i) => [i.severity, i.code])).toEqual([['warning', 'SPEC_VERSION_UNSUPPORTED']]);
  });

  it('refuses spec text that is not strict JSON', () => {
    const r = checkSpecText(getCrypto(), '{"name":"a","name":"b","messages":[]}');
    expect(r.ok).toBe(false);
    expect(r.issues[0]!.code).toBe('SPEC_JSON_INVALID');
  });

  it.skipIf(!haveRef)('accepts every reference built-in and template', () => {
    let n = 0;
    for (const a of readdirSync(REF).filter((d) => /^[0-9a-f]{8}$/.test(d)))
      for (const b of readdirSync(new URL(`${a}/`, REF))) {
        const r = checkSpecText(getCrypto(), readFileSync(new URL(`${a}/${b}/spec.json`, REF), 'utf8'));
        expect(r.issues, `${a}/${b}`).toEqual([]);
        n++;
      }
    for (const t of readdirSync(new URL('templates/', REF)).filter((f) => f.endsWith('.json'))) {
      expect(validateSpec(JSON.parse(readFileSync(new URL(`templates/${t}`, REF), 'utf8'))), t).toEqual([]);
      n++;
    }
    expect(n).toBe(27);
  });
});

describe('options against parameters', () => {
  const spec = fixtures.base as Spec;
  const balance = { warrior: { hp: 100, skill: { dmg: 5 } } };
  it('accepts declared options in range, and flags undeclared ones as metadata', () => {
    const r = validateOptions(spec, { best_of: 5, balance, price: '3 EUR' });
    expect(r.issues.filter((i) => i.severity === 'error')).toEqual([]);
    expect(r.undeclared).toEqual(['price']);
  });
  it.each([
    [{ best_of: 0 }, 'OPTION_INVALID', '/best_of'],
    [{ best_of: '3' }, 'OPTION_INVALID', '/best_of'],
    [{ balance: { warrior: { hp: 100 } } }, 'OPTION_TABLE_INVALID', '/balance/warrior/skill'],
    [{ balance: { warrior: { ...balance.warrior, mana: 3 } } }, 'OPTION_TABLE_INVALID', '/balance/warrior/mana'],
    [{ balance: { warrior: { hp: 1000, skill: { dmg: 5 } } } }, 'OPTION_TABLE_INVALID', '/balance/warrior/hp'],
    [{ balance: { warrior: { hp: 10, skill: { dmg: true } } } }, 'OPTION_TABLE_INVALID', '/balance/warrior/skill/dmg'],
    [[1], 'OPTIONS_NOT_OBJECT', ''],
  ])('refuses %j', (options, code, pointer) => {
    expect(validateOptions(spec, options).issues.map((i) => [i.code, i.pointer])).toContainEqual([code, pointer]);
  });
});
