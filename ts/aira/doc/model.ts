/**
 * The typed JSON model `aira.doc/1`: named parameters (a number, string or boolean, with an optional
 * unit) and active assertions that name a validator. Small on purpose: it is the built-in authority's
 * model, enough to run a whole Aira task (propose, preview, validate, commit, publish, revert) without
 * a CAD kernel.
 *
 * Names are checked twice: here (a stored or seeded document must parse) and in the capabilities'
 * argument schemas (catalog.ts). `__proto__`, `constructor` and `prototype` are refused as names so a
 * document can be built with ordinary object members.
 */
import { z } from 'zod';
import type { AcceptanceAssertion, IntentFrame } from '../schema.js';

export const DOC_SCHEMA = 'aira.doc/1';

export const RESERVED_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
export const NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
export const ASSERTION_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';

export const LIMITS = {
  parameters: 256,
  assertions: 64,
  stringValue: 1000,
  unit: 32,
} as const;

const nameRe = new RegExp(NAME_PATTERN);
export const ParamName = z
  .string()
  .regex(nameRe)
  .refine((s) => !RESERVED_NAMES.has(s), { message: 'reserved name' });

export const ParamValue = z.union([z.number().finite(), z.string().max(LIMITS.stringValue), z.boolean()]);
export type ParamValue = z.infer<typeof ParamValue>;

export const Parameter = z.strictObject({ value: ParamValue, unit: z.string().min(1).max(LIMITS.unit).optional() });
export type Parameter = z.infer<typeof Parameter>;

export const DocAssertion = z.strictObject({
  id: z.string().regex(new RegExp(ASSERTION_ID_PATTERN)),
  validator: z.string().max(64),
  args: z.record(z.string(), z.unknown()),
});
export type DocAssertion = z.infer<typeof DocAssertion>;

export const AiraDoc = z.strictObject({
  schema: z.literal(DOC_SCHEMA),
  parameters: z.record(ParamName, Parameter).refine((p) => Object.keys(p).length <= LIMITS.parameters, { message: 'too many parameters' }),
  assertions: z
    .array(DocAssertion)
    .max(LIMITS.assertions)
    .refine((a) => new Set(a.map((x) => x.id)).size === a.length, { message: 'duplicate assertion id' }),
});
export type AiraDoc = z.infer<typeof AiraDoc>;

/** The seed document every fresh store starts from: a bracket with two active assertions. */
export function bracketDoc(): AiraDoc {
  return {
    schema: DOC_SCHEMA,
    parameters: {
      width: { value: 40, unit: 'mm' },
      height: { value: 20, unit: 'mm' },
      thickness: { value: 3, unit: 'mm' },
      hole_diameter: { value: 6, unit: 'mm' },
      material: { value: 'aluminium' },
    },
    assertions: [
      { id: 'min-wall', validator: 'param.range', args: { name: 'thickness', min: 2 } },
      { id: 'hole-fits', validator: 'param.range', args: { name: 'hole_diameter', max: 10 } },
    ],
  };
}

/** The demo task on the bracket: widen it, keep the wall. Its acceptance assertion is checked at read-back. */
export function bracketTask(): { intentFrame: IntentFrame } {
  const acceptance: AcceptanceAssertion = {
    id: 'width-45',
    text: 'The bracket is 45 mm wide.',
    validator: 'param.equals',
    args: { name: 'width', value: 45 },
  };
  return {
    intentFrame: {
      goal: 'Widen the bracket to 45 mm without thinning the wall',
      hardRequirements: [{ id: 'width', text: 'width = 45 mm' }],
      softPreferences: [],
      scope: [{ id: 'parameters', text: 'the bracket parameter width' }],
      prohibitedEffects: [{ id: 'wall', text: 'thickness must not decrease' }],
      assumptions: [],
      unknowns: [],
      acceptanceAssertions: [acceptance],
    },
  };
}

/** A copy through JSON: documents are plain data and must not share structure with a caller. */
export function cloneDoc(doc: AiraDoc): AiraDoc {
  return JSON.parse(JSON.stringify(doc)) as AiraDoc;
}

/** Sets a member so that a name like `__proto__` (refused earlier, but never trusted here) stays data. */
export function setMember<T>(o: Record<string, T>, k: string, v: T): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

export function getParam(doc: AiraDoc, name: string): Parameter | undefined {
  return Object.hasOwn(doc.parameters, name) ? doc.parameters[name] : undefined;
}
