/**
 * The document catalog and validators as data: search filters and ranking, the argument schemas, and
 * each validator on hand-written cases.
 */
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { capability, checkArgs, DOC_CAPABILITIES, searchCatalog } from '../../ts/aira/doc/catalog.js';
import { bracketDoc } from '../../ts/aira/doc/model.js';
import { checkValidatorArgs, evaluate } from '../../ts/aira/doc/validators.js';

const ids = (cs: ReadonlyArray<{ id: string }>): string[] => cs.map((c) => c.id);

describe('document catalog', () => {
  it('lists the six capabilities with their mode, effect class and risk', () => {
    expect(DOC_CAPABILITIES.map((c) => [c.id, c.mode, c.effectClass, c.risk])).toEqual([
      ['cap:doc.setParameter@1', 'authoring', 'reversible', 'low'],
      ['cap:doc.addParameter@1', 'authoring', 'reversible', 'low'],
      ['cap:doc.removeParameter@1', 'authoring', 'reversible', 'medium'],
      ['cap:doc.addAssertion@1', 'authoring', 'reversible', 'low'],
      ['cap:doc.removeAssertion@1', 'authoring', 'reversible', 'high'],
      ['cap:doc.inspect@1', 'query', 'read', 'low'],
    ]);
  });

  it('argument schemas are closed JSON Schema 2020-12 documents that a separate ajv compiles', () => {
    const ajv = new Ajv2020({ strict: false });
    for (const c of DOC_CAPABILITIES) {
      expect(c.inputSchema['additionalProperties'], c.id).toBe(false);
      expect(() => ajv.compile(c.inputSchema), c.id).not.toThrow();
    }
  });

  it('search filters by effect class and maximum risk, ranks by matched words, honours the limit', () => {
    expect(ids(searchCatalog({ effectClass: 'read' }))).toEqual(['cap:doc.inspect@1']);
    expect(ids(searchCatalog({ maxRisk: 'low' }))).toEqual(['cap:doc.setParameter@1', 'cap:doc.addParameter@1', 'cap:doc.addAssertion@1', 'cap:doc.inspect@1']);
    expect(ids(searchCatalog({ maxRisk: 'medium', query: 'remove' }))).toEqual(['cap:doc.removeParameter@1']);
    expect(ids(searchCatalog({ query: 'remove active assertion' }))[0]).toBe('cap:doc.removeAssertion@1');
    expect(searchCatalog({ limit: 2 })).toHaveLength(2);
    expect(searchCatalog({ query: 'teleport' })).toEqual([]);
    expect(capability('cap:doc.teleport@1')).toBeUndefined();
  });

  it('checkArgs refuses wrong types, extra members, reserved names, long strings and non-finite numbers', () => {
    const set = 'cap:doc.setParameter@1';
    expect(checkArgs(set, { name: 'width', value: 45 })).toBeNull();
    expect(checkArgs(set, { name: 'width', value: true })).toBeNull();
    for (const bad of [
      { name: 'width' },
      { name: 'width', value: 1, extra: 1 },
      { name: '9lives', value: 1 },
      { name: 'prototype', value: 1 },
      { name: 'w', value: 'x'.repeat(1001) },
      { name: 'w', value: Infinity },
      [],
      null,
      'width',
    ]) {
      expect(checkArgs(set, bad), JSON.stringify(bad)?.slice(0, 40)).not.toBeNull();
    }
    expect(checkArgs('cap:doc.addParameter@1', { name: 'depth', value: 1, unit: 'mm' })).toBeNull();
    expect(checkArgs('cap:doc.addParameter@1', { name: 'depth', value: 1, unit: '' })).not.toBeNull();
  });
});

describe('document validators', () => {
  const doc = bracketDoc();
  it.each([
    ['param.exists', { name: 'width' }, true],
    ['param.exists', { name: 'depth' }, false],
    ['param.range', { name: 'thickness', min: 2 }, true],
    ['param.range', { name: 'thickness', min: 3, max: 3 }, true],
    ['param.range', { name: 'thickness', min: 3.5 }, false],
    ['param.range', { name: 'hole_diameter', max: 5 }, false],
    ['param.range', { name: 'material', min: 0 }, false],
    ['param.equals', { name: 'width', value: 40 }, true],
    ['param.equals', { name: 'width', value: '40' }, false],
    ['param.equals', { name: 'material', value: 'aluminium' }, true],
    ['param.type', { name: 'material', type: 'string' }, true],
    ['param.type', { name: 'width', type: 'boolean' }, false],
  ] as const)('%s %j → %s', (validator, args, passed) => {
    expect(evaluate(doc, validator, args).passed).toBe(passed);
  });

  it('names the failure: out of range with expected bounds and the actual value', () => {
    expect(evaluate(doc, 'param.range', { name: 'thickness', min: 4 }).detail).toEqual({ code: 'OUT_OF_RANGE', expected: { min: 4 }, actual: 3 });
    expect(evaluate(doc, 'param.range', { name: 'material', max: 1 }).detail).toEqual({ code: 'PARAMETER_TYPE', expected: 'number', actual: 'aluminium' });
  });

  it('bad validator args are a code, not an exception', () => {
    expect(checkValidatorArgs('param.magic', {})?.code).toBe('VALIDATOR_UNKNOWN');
    expect(checkValidatorArgs('__proto__', {})?.code).toBe('VALIDATOR_UNKNOWN');
    expect(checkValidatorArgs('param.range', { name: 'w', min: Number.NaN })?.code).toBe('ARGS_INVALID');
    expect(checkValidatorArgs('param.type', { name: 'w', type: 'object' })?.code).toBe('ARGS_INVALID');
    expect(evaluate(doc, 'param.equals', { name: 'width' })).toEqual({ passed: false, detail: { code: 'ARGS_INVALID' } });
  });
});
