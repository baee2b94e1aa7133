/**
 * The validators active and acceptance assertions may name. Each has a closed JSON Schema for its
 * `args`, checked before evaluation, so an assertion with wrong args is reported as such instead of
 * silently failing or passing.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { getParam, LIMITS, NAME_PATTERN, RESERVED_NAMES, type AiraDoc, type ParamValue } from './model.js';

const nameSchema = { type: 'string', pattern: NAME_PATTERN, not: { enum: [...RESERVED_NAMES] } } as const;
const valueSchema = { oneOf: [{ type: 'number' }, { type: 'string', maxLength: LIMITS.stringValue }, { type: 'boolean' }] } as const;

export const VALIDATOR_ARG_SCHEMAS: Readonly<Record<string, Record<string, unknown>>> = {
  'param.exists': { type: 'object', additionalProperties: false, required: ['name'], properties: { name: nameSchema } },
  'param.range': {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: { name: nameSchema, min: { type: 'number' }, max: { type: 'number' } },
  },
  'param.equals': { type: 'object', additionalProperties: false, required: ['name', 'value'], properties: { name: nameSchema, value: valueSchema } },
  'param.type': {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'type'],
    properties: { name: nameSchema, type: { enum: ['number', 'string', 'boolean'] } },
  },
};

export const VALIDATORS: readonly string[] = Object.keys(VALIDATOR_ARG_SCHEMAS);

export const ajv = new Ajv2020({ allErrors: false, strict: true });
const compiled = new Map<string, ValidateFunction>(Object.entries(VALIDATOR_ARG_SCHEMAS).map(([k, s]) => [k, ajv.compile(s)]));

export interface Evaluation {
  readonly passed: boolean;
  /** Why it failed or what was seen; plain data. */
  readonly detail: { readonly code?: string; readonly expected?: unknown; readonly actual?: unknown };
}

/** `null` when the validator exists and its args fit; otherwise a stable code and a message. */
export function checkValidatorArgs(validator: string, args: unknown): { code: 'VALIDATOR_UNKNOWN' | 'ARGS_INVALID'; message: string } | null {
  const fn = Object.hasOwn(VALIDATOR_ARG_SCHEMAS, validator) ? compiled.get(validator) : undefined;
  if (fn === undefined)
    return { code: 'VALIDATOR_UNKNOWN', message: `no validator ${JSON.stringify(validator.slice(0, 64))}; known: ${VALIDATORS.join(', ')}` };
  if (!fn(args)) {
    const e = fn.errors?.[0];
    return { code: 'ARGS_INVALID', message: `${validator} args${e?.instancePath ?? ''}: ${e?.message ?? 'invalid'}` };
  }
  for (const v of Object.values(args as Record<string, unknown>)) {
    if (typeof v === 'number' && !Number.isFinite(v)) return { code: 'ARGS_INVALID', message: `${validator} args: numbers must be finite` };
  }
  return null;
}

/** Evaluates one assertion on a document. Never throws: bad args are a failed evaluation with a code. */
export function evaluate(doc: AiraDoc, validator: string, args: Record<string, unknown>): Evaluation {
  const bad = checkValidatorArgs(validator, args);
  if (bad !== null) return { passed: false, detail: { code: bad.code } };
  const name = args['name'] as string;
  const p = getParam(doc, name);
  switch (validator) {
    case 'param.exists':
      return { passed: p !== undefined, detail: p === undefined ? { code: 'PARAMETER_UNKNOWN', expected: name } : { actual: p.value } };
    case 'param.range': {
      if (p === undefined) return { passed: false, detail: { code: 'PARAMETER_UNKNOWN', expected: name } };
      const min = args['min'] as number | undefined;
      const max = args['max'] as number | undefined;
      const expected = { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
      if (typeof p.value !== 'number') return { passed: false, detail: { code: 'PARAMETER_TYPE', expected: 'number', actual: p.value } };
      const ok = (min === undefined || p.value >= min) && (max === undefined || p.value <= max);
      return { passed: ok, detail: ok ? { actual: p.value } : { code: 'OUT_OF_RANGE', expected, actual: p.value } };
    }
    case 'param.equals': {
      if (p === undefined) return { passed: false, detail: { code: 'PARAMETER_UNKNOWN', expected: name } };
      const want = args['value'] as ParamValue;
      const ok = p.value === want;
      return { passed: ok, detail: ok ? { actual: p.value } : { code: 'NOT_EQUAL', expected: want, actual: p.value } };
    }
    default: {
      // param.type
      if (p === undefined) return { passed: false, detail: { code: 'PARAMETER_UNKNOWN', expected: name } };
      const want = args['type'] as string;
      const ok = typeof p.value === want;
      return { passed: ok, detail: ok ? { actual: want } : { code: 'PARAMETER_TYPE', expected: want, actual: typeof p.value } };
    }
  }
}
