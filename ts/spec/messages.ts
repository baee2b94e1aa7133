/**
 * Message validation: each protocol is compiled once into closed JSON Schema 2020-12 validators (ajv),
 * cached by protocol_id. A message is matched as the reference matches it (NOTES A4): the declared
 * message whose `action` enum contains msg.action and whose direction matches (`both` matches either).
 * Undeclared fields, wrong types, out-of-range values, unknown actions and oversize values are refused
 * with the field's pointer and a stable code, so nothing invalid can reach a hook.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { pythonJson } from './protocol-id.js';
import { actionsOf } from './validate.js';
import type { FieldSchema, MessageSpec, Spec, WireDirection } from './types.js';

export const MESSAGE_ERROR_CODES = [
  'MESSAGE_NOT_OBJECT',
  'MESSAGE_ACTION_MISSING',
  'MESSAGE_ACTION_UNKNOWN',
  'MESSAGE_ACTION_AMBIGUOUS',
  'FIELD_UNDECLARED',
  'FIELD_REQUIRED',
  'FIELD_TYPE',
  'FIELD_RANGE',
  'FIELD_FORMAT',
  'FIELD_TOO_LARGE',
] as const;
export type MessageErrorCode = (typeof MESSAGE_ERROR_CODES)[number];

export interface MessageError {
  pointer: string;
  code: MessageErrorCode;
  message: string;
}

export type MessageCheck = { ok: true; message: string } | { ok: false; errors: MessageError[] };

const utf8Length = (s: string) => new TextEncoder().encode(s).length;
/** Python's str() of a scalar, as the reference measures array elements. */
const pyStr = (v: unknown) => (v === true ? 'True' : v === false ? 'False' : typeof v === 'string' ? v : JSON.stringify(v));

function makeAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true, unicodeRegExp: false });
  // Limits the reference states in UTF-8 bytes, which JSON Schema's maxLength (code points) cannot say.
  ajv.addKeyword({ keyword: 'maxUtf8Bytes', type: 'string', schemaType: 'number', validate: (max: number, data: string) => utf8Length(data) <= max, errors: false });
  ajv.addKeyword({
    keyword: 'maxTotalBytes',
    type: 'array',
    schemaType: 'number',
    validate: (max: number, data: unknown[]) => data.reduce<number>((n, x) => n + utf8Length(pyStr(x)), 0) <= max,
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'maxCanonicalBytes',
    schemaType: 'number',
    validate: (max: number, data: unknown) => {
      try {
        return utf8Length(pythonJson(data as never)) <= max;
      } catch {
        return false;
      }
    },
    errors: false,
  });
  return ajv;
}

const HEX = (n: string) => `^[0-9a-f]{${n}}$`;

function fieldSchema(f: FieldSchema): Record<string, unknown> {
  switch (f.type) {
    case 'integer':
      return { type: 'integer', ...(f.min !== undefined && { minimum: f.min }), ...(f.max !== undefined && { maximum: f.max }) };
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
      return { type: 'string', pattern: '^(?:[0-9a-f]{2})*$', maxLength: f.max_length ?? 512 };
    case 'ot_blob':
      return { type: 'string', maxUtf8Bytes: f.max_length ?? 16384 };
    case 'array':
      return {
        type: 'array',
        items: fieldSchema(f.items ?? ({ type: 'text' } as FieldSchema)),
        ...(f.min_items !== undefined && { minItems: f.min_items }),
        ...(f.max_items !== undefined && { maxItems: f.max_items }),
        maxTotalBytes: f.max_total_bytes ?? 262144,
      };
    case 'json': {
      const t = f.container === 'object' ? { type: 'object' } : f.container === 'array' ? { type: 'array' } : {};
      return { ...t, maxCanonicalBytes: f.max_total_bytes ?? 1048576 };
    }
  }
}

/** The closed JSON Schema of one declared message. */
export function messageJsonSchema(m: MessageSpec): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(m.fields).map(([k, f]) => [k, fieldSchema(f)])),
    required: Object.entries(m.fields)
      .filter(([, f]) => f.required)
      .map(([k]) => k),
    additionalProperties: false,
  };
}

const CODE_OF: Record<string, MessageErrorCode> = {
  additionalProperties: 'FIELD_UNDECLARED',
  required: 'FIELD_REQUIRED',
  type: 'FIELD_TYPE',
  enum: 'FIELD_RANGE',
  minimum: 'FIELD_RANGE',
  maximum: 'FIELD_RANGE',
  minItems: 'FIELD_RANGE',
  maxItems: 'FIELD_TOO_LARGE',
  pattern: 'FIELD_FORMAT',
  minLength: 'FIELD_FORMAT',
  maxLength: 'FIELD_TOO_LARGE',
  maxUtf8Bytes: 'FIELD_TOO_LARGE',
  maxTotalBytes: 'FIELD_TOO_LARGE',
  maxCanonicalBytes: 'FIELD_TOO_LARGE',
};

function toError(e: ErrorObject, name: string): MessageError {
  let at = e.instancePath;
  let what = e.message ?? e.keyword;
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    at = `${at}/${extra}`;
    what = `field "${extra}" is not declared by message "${name}"`;
  } else if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    at = `${at}/${missing}`;
    what = `required field "${missing}" is missing`;
  } else if (e.keyword === 'maxUtf8Bytes' || e.keyword === 'maxTotalBytes' || e.keyword === 'maxCanonicalBytes') {
    what = `larger than the ${String(e.schema)} bytes allowed`;
  } else if (e.keyword === 'enum') {
    what = `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return { pointer: at || '/', code: CODE_OF[e.keyword] ?? 'FIELD_TYPE', message: what };
}

interface Candidate {
  name: string;
  direction: MessageSpec['direction'];
  validate: ValidateFunction;
}

/** A protocol's compiled validators. */
export class MessageValidator {
  private readonly byAction = new Map<string, Candidate[]>();

  constructor(spec: Pick<Spec, 'messages'>) {
    const ajv = makeAjv();
    for (const m of spec.messages) {
      const c: Candidate = { name: m.name, direction: m.direction, validate: ajv.compile(messageJsonSchema(m)) };
      for (const action of actionsOf(m as never)) {
        const list = this.byAction.get(action) ?? [];
        list.push(c);
        this.byAction.set(action, list);
      }
    }
  }

  /** Checks a message travelling in `direction`; the name of the declared message it matched, or every error. */
  check(msg: unknown, direction: WireDirection): MessageCheck {
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg))
      return { ok: false, errors: [{ pointer: '/', code: 'MESSAGE_NOT_OBJECT', message: 'a message must be a JSON object' }] };
    const action = (msg as { action?: unknown }).action;
    if (typeof action !== 'string') return { ok: false, errors: [{ pointer: '/action', code: 'MESSAGE_ACTION_MISSING', message: 'a message needs a string "action"' }] };
    const candidates = (this.byAction.get(action) ?? []).filter((c) => c.direction === 'both' || c.direction === direction);
    if (candidates.length === 0)
      return { ok: false, errors: [{ pointer: '/action', code: 'MESSAGE_ACTION_UNKNOWN', message: `no message with action "${action}" is declared for ${direction}` }] };
    if (candidates.length > 1)
      return { ok: false, errors: [{ pointer: '/action', code: 'MESSAGE_ACTION_AMBIGUOUS', message: `action "${action}" matches ${candidates.map((c) => c.name).join(' and ')}` }] };
    const c = candidates[0]!;
    if (c.validate(msg)) return { ok: true, message: c.name };
    return { ok: false, errors: (c.validate.errors ?? []).map((e) => toError(e, c.name)) };
  }
}

const cache = new Map<string, MessageValidator>();

/** The compiled validators of a protocol, compiled once per protocol_id. */
export function messageValidator(protocolId: string, spec: Pick<Spec, 'messages'>): MessageValidator {
  let v = cache.get(protocolId);
  if (!v) {
    v = new MessageValidator(spec);
    cache.set(protocolId, v);
  }
  return v;
}
