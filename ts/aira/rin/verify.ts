/**
 * The acceptance validators of the rin authority, evaluated on one observation: the observation is all
 * a controller may know of a world, so every assertion is about it. Pointers are RFC 6901 JSON pointers
 * into the observation's payload; facts are named by their fact_id.
 */
import type { AcceptanceAssertion } from '../schema.js';

export const RIN_VALIDATORS = ['payload.equals', 'payload.range', 'fact.equals'] as const;

export interface ObservedState {
  readonly payload: unknown;
  readonly facts: ReadonlyArray<{ readonly fact_id: string; readonly value: unknown }>;
}

export interface AssertionOutcome {
  readonly assertion: string;
  readonly passed: boolean;
  readonly detail?: unknown;
}

const MISSING = Symbol('missing');

/** The value at an RFC 6901 pointer, or MISSING. Own members only, so `/__proto__` finds nothing. */
export function atPointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return MISSING;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) >= node.length) return MISSING;
      node = node[Number(key)];
    } else if (node !== null && typeof node === 'object' && Object.hasOwn(node, key)) {
      node = (node as Record<string, unknown>)[key];
    } else {
      return MISSING;
    }
  }
  return node;
}

export const isMissing = (v: unknown): boolean => v === MISSING;

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return sameJson(ka, kb) && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

const fail = (assertion: string, why: string, actual?: unknown): AssertionOutcome => ({
  assertion,
  passed: false,
  detail: actual === undefined ? { why } : { why, actual },
});

/** One assertion on one observation; an unknown validator or malformed args fail it, never throw. */
export function evaluateAssertion(a: AcceptanceAssertion, state: ObservedState): AssertionOutcome {
  const args = a.args;
  switch (a.validator) {
    case 'payload.equals':
    case 'payload.range': {
      const pointer = args['pointer'];
      if (typeof pointer !== 'string') return fail(a.id, 'args.pointer must be a JSON pointer string');
      const actual = atPointer(state.payload, pointer);
      if (actual === MISSING) return fail(a.id, `nothing at ${pointer}`);
      if (a.validator === 'payload.equals') {
        if (!Object.hasOwn(args, 'value')) return fail(a.id, 'args.value is required');
        return sameJson(actual, args['value']) ? { assertion: a.id, passed: true, detail: { actual } } : fail(a.id, `${pointer} differs`, actual);
      }
      const min = args['min'];
      const max = args['max'];
      if ((min !== undefined && typeof min !== 'number') || (max !== undefined && typeof max !== 'number') || (min === undefined && max === undefined)) {
        return fail(a.id, 'args.min and/or args.max must be numbers');
      }
      if (typeof actual !== 'number') return fail(a.id, `${pointer} is not a number`, actual);
      if (min !== undefined && actual < min) return fail(a.id, `${pointer} is below ${min}`, actual);
      if (max !== undefined && actual > max) return fail(a.id, `${pointer} is above ${max}`, actual);
      return { assertion: a.id, passed: true, detail: { actual } };
    }
    case 'fact.equals': {
      const id = args['fact'];
      if (typeof id !== 'string') return fail(a.id, 'args.fact must name a fact_id');
      if (!Object.hasOwn(args, 'value')) return fail(a.id, 'args.value is required');
      const fact = state.facts.find((f) => f.fact_id === id);
      if (!fact) return fail(a.id, `no fact ${id}`);
      return sameJson(fact.value, args['value'])
        ? { assertion: a.id, passed: true, detail: { actual: fact.value } }
        : fail(a.id, `fact ${id} differs`, fact.value);
    }
    default:
      return fail(a.id, `unknown validator ${a.validator}`);
  }
}
