/**
 * The closed JSON Schema (2020-12, with this project's keywords) of each declared message: what the
 * run-time compiler (compile.ts) and the ahead-of-time one (scripts/build-validators.mjs) both compile,
 * and what names a precompiled validator (its JSON text is the key), so that no ajv is needed here.
 */
import { Entries, parseJson, RawNumber, type JsonNode } from '../crypto/jcs.js';
import type { ErrorObject } from 'ajv/dist/2020.js';
import type { FieldSchema, MessageSpec } from './types.js';

/** An exact integer bound, as a decimal string (spec limits may lie beyond doubles). */
export type Bound = string;

/** A compiled message schema: ajv's validate function, compiled now or ahead of time. */
export interface SchemaValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** What names a schema's precompiled validator: its JSON text (messageJsonSchema builds it in one key order). */
export const schemaKey = (schema: Record<string, unknown>): string => JSON.stringify(schema);

/** A generated module of ts/spec/precompiled/: one protocol's schema keys, and its validators in that order. */
export interface PrecompiledModule {
  keys: string[];
  load(): SchemaValidator[];
}

/** Precompiled validators by schemaKey. */
export interface PrecompiledTable {
  get(key: string): SchemaValidator | undefined;
  readonly size: number;
}

/** The validators of these modules by schemaKey; each module's are made at the first lookup of one of its keys. */
export function precompiledTable(modules: readonly PrecompiledModule[]): PrecompiledTable {
  const where = new Map<string, [PrecompiledModule, number]>();
  for (const m of modules) m.keys.forEach((k, i) => where.set(k, [m, i]));
  const loaded = new Map<PrecompiledModule, SchemaValidator[]>();
  return {
    get(key) {
      const at = where.get(key);
      if (!at) return undefined;
      let vs = loaded.get(at[0]);
      if (!vs) loaded.set(at[0], (vs = at[0].load()));
      return vs[at[1]];
    },
    size: where.size,
  };
}

const HEX = (n: string) => `^[0-9a-f]{${n}}$`;

/** Exact integer bounds of a field (and of its items), where the spec text gave them. */
export interface FieldBounds {
  min?: Bound;
  max?: Bound;
  items?: FieldBounds;
}

/** A bound from a JS number: integral values as they are; a fractional min rounds up, a fractional max down. */
function boundOf(v: unknown, side: 'min' | 'max'): Bound | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
  return BigInt(side === 'min' ? Math.ceil(v) : Math.floor(v)).toString();
}

function fieldSchema(f: FieldSchema, exact: FieldBounds = {}): Record<string, unknown> {
  switch (f.type) {
    case 'integer': {
      const min = exact.min ?? boundOf(f.min, 'min');
      const max = exact.max ?? boundOf(f.max, 'max');
      return { wireInteger: true, ...(min !== undefined && { wireMinimum: min }), ...(max !== undefined && { wireMaximum: max }) };
    }
    case 'enum':
      return { type: 'string', enum: f.values ?? [] };
    case 'boolean':
      return { type: 'boolean' };
    case 'hash':
    case 'key':
      return { type: 'string', pattern: HEX('64') };
    case 'nonce':
      return { type: 'string', pattern: HEX('16,64') };
    case 'signature':
      return { type: 'string', pattern: HEX('128') };
    case 'id':
      return { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' };
    case 'ticket':
      return { type: 'string', minLength: 1, maxLength: 2048 };
    case 'text':
      return { type: 'string', maxUtf8Bytes: f.max_length ?? 2000 };
    case 'ciphertext':
      // At least one byte: the reference's pattern is `[0-9a-f]+` with an even length.
      return { type: 'string', pattern: '^(?:[0-9a-f]{2})+$', maxLength: f.max_length ?? 512 };
    case 'ot_blob':
      return { type: 'string', maxUtf8Bytes: f.max_length ?? 16384 };
    case 'array':
      return {
        type: 'array',
        items: fieldSchema(f.items ?? ({ type: 'text' } as FieldSchema), exact.items),
        ...(f.min_items !== undefined && { minItems: f.min_items }),
        ...(f.max_items !== undefined && { maxItems: f.max_items }),
        maxTotalBytes: f.max_total_bytes ?? 262144,
      };
    case 'json':
      return {
        ...(f.container === 'object' || f.container === 'array' ? { jsonContainer: f.container } : {}),
        maxCanonicalBytes: f.max_total_bytes ?? 1048576,
      };
  }
}

/** The closed JSON Schema of one declared message (with this project's keywords for wire integers and byte limits). */
export function messageJsonSchema(m: MessageSpec, exact: Record<string, FieldBounds> = {}): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(m.fields).map(([k, f]) => [k, fieldSchema(f, exact[k])])),
    required: Object.entries(m.fields)
      .filter(([, f]) => f.required)
      .map(([k]) => k),
    additionalProperties: false,
  };
}

export const get = (o: JsonNode | undefined, key: string): JsonNode | undefined => (o instanceof Entries ? o.entries.find(([k]) => k === key)?.[1] : undefined);

function exactBound(n: JsonNode | undefined, side: 'min' | 'max'): Bound | undefined {
  if (!(n instanceof RawNumber)) return undefined;
  if (/[.eE]/.test(n.text)) return boundOf(Number(n.text), side);
  return BigInt(n.text).toString();
}

function boundsOf(field: JsonNode | undefined): FieldBounds {
  const b: FieldBounds = {};
  const min = exactBound(get(field, 'min'), 'min');
  const max = exactBound(get(field, 'max'), 'max');
  if (min !== undefined) b.min = min;
  if (max !== undefined) b.max = max;
  const items = get(field, 'items');
  if (items) b.items = boundsOf(items);
  return b;
}

/** Per message (by index), the exact integer bounds its fields declare in the spec text. */
export function exactBounds(specText: string): Record<string, FieldBounds>[] {
  const messages = get(parseJson(specText, { rawNumbers: true }), 'messages');
  if (!Array.isArray(messages)) return [];
  return messages.map((m) => {
    const fields = get(m, 'fields');
    return fields instanceof Entries ? Object.fromEntries(fields.entries.map(([k, f]) => [k, boundsOf(f)])) : {};
  });
}
