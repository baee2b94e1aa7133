// The rin authority's acceptance validators on hand-made observations (no daemon).
import { describe, expect, it } from 'vitest';
import { evaluateRinAssertion, rinCapabilityId, rinEffectClass } from '../../ts/aira/rin/index.js';
import type { AcceptanceAssertion } from '../../ts/aira/schema.js';

const state = {
  payload: { step: 4, boat: { name: 'Gull', berth: 'dock', cargo: 3, 'a/b': 1, 'c~d': 2 }, fleet: [{ actor_id: 'gull' }, { actor_id: 'tern' }] },
  facts: [
    { fact_id: 'hull', value: 90 },
    { fact_id: 'berth', value: 'dock' },
  ],
};
const check = (validator: string, args: Record<string, unknown>) => evaluateRinAssertion({ id: 'a', text: '', validator, args } as AcceptanceAssertion, state);

describe('rin acceptance validators', () => {
  it('payload.equals follows RFC 6901 pointers, arrays and escapes included', () => {
    expect(check('payload.equals', { pointer: '/boat/cargo', value: 3 })).toEqual({ assertion: 'a', passed: true, detail: { actual: 3 } });
    expect(check('payload.equals', { pointer: '/fleet/1/actor_id', value: 'tern' }).passed).toBe(true);
    expect(check('payload.equals', { pointer: '/boat/a~1b', value: 1 }).passed).toBe(true);
    expect(check('payload.equals', { pointer: '/boat/c~0d', value: 2 }).passed).toBe(true);
    expect(check('payload.equals', { pointer: '/fleet/0', value: { actor_id: 'gull' } }).passed).toBe(true);
    expect(check('payload.equals', { pointer: '/boat/cargo', value: '3' })).toMatchObject({ passed: false, detail: { actual: 3 } });
    for (const pointer of ['/fleet/2', '/fleet/01', '/boat/__proto__', '/boat/toString', 'boat', '/nothing/here']) {
      expect(check('payload.equals', { pointer, value: null }).passed, pointer).toBe(false);
    }
  });

  it('payload.range needs a number between the bounds given', () => {
    expect(check('payload.range', { pointer: '/boat/cargo', min: 3, max: 3 }).passed).toBe(true);
    expect(check('payload.range', { pointer: '/boat/cargo', min: 4 }).passed).toBe(false);
    expect(check('payload.range', { pointer: '/boat/cargo', max: 2 }).passed).toBe(false);
    expect(check('payload.range', { pointer: '/boat/berth', min: 0 }).passed).toBe(false);
    expect(check('payload.range', { pointer: '/boat/cargo' }).passed).toBe(false);
    expect(check('payload.range', { pointer: '/boat/cargo', min: '1' }).passed).toBe(false);
  });

  it('fact.equals names a fact; unknown validators and malformed args fail, never throw', () => {
    expect(check('fact.equals', { fact: 'hull', value: 90 }).passed).toBe(true);
    expect(check('fact.equals', { fact: 'hull', value: 100 }).passed).toBe(false);
    expect(check('fact.equals', { fact: 'cargo', value: 3 }).passed).toBe(false);
    expect(check('fact.equals', { value: 3 }).passed).toBe(false);
    expect(check('payload.equals', { pointer: '/boat/cargo' }).passed).toBe(false);
    expect(check('payload.equals', { pointer: 7, value: 3 }).passed).toBe(false);
    expect(check('param.equals', { name: 'x', value: 1 })).toMatchObject({ passed: false, detail: { why: 'unknown validator param.equals' } });
  });
});

describe('rin capability ids and effect classes', () => {
  it('names a capability by its major version, and refuses ids Aira cannot carry', () => {
    expect(rinCapabilityId('harbor.load-cargo', '1.0.0')).toBe('cap:harbor.load-cargo@1');
    expect(rinCapabilityId('harbor.sail', '12.3.4-beta.1')).toBe('cap:harbor.sail@12');
    expect(rinCapabilityId('bad id', '1.0.0')).toBeUndefined();
    expect(rinCapabilityId('x'.repeat(200), '1.0.0')).toBeUndefined();
  });

  it('is irreversible when any effect is, when the risk is critical, or when nothing is declared', () => {
    const low = { kind: 'k.k', operation: 'update', ownership: 'actor', scope: 's.s', reversible: true, risk: 'low' } as const;
    expect(rinEffectClass([low], 'low')).toBe('reversible');
    expect(rinEffectClass([low, { ...low, reversible: false }], 'low')).toBe('irreversible');
    expect(rinEffectClass([{ ...low, risk: 'critical' }], 'low')).toBe('irreversible');
    expect(rinEffectClass([low], 'critical')).toBe('irreversible');
    expect(rinEffectClass(null, 'low')).toBe('irreversible');
  });
});
