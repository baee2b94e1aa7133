/**
 * Message validation: each protocol's messages get closed JSON Schema 2020-12 validators, cached by
 * protocol_id, compiled by ajv at first use (compile.ts); the agent page, which has no compiler, takes
 * those of the built-ins it plays compiled ahead of time (precompiled-validators.ts, found by each
 * schema's own text). A message is matched as the reference matches it (NOTES A4): the declared
 * message whose `action` enum contains msg.action and whose direction matches (`both` matches either;
 * no direction, any). Undeclared fields, wrong types, out-of-range values, unknown actions and oversize
 * values are refused with the field's pointer and a stable code, so nothing invalid can reach a hook.
 *
 * Messages from the wire are checked on their own number literals (wire.ts): `checkText` and
 * `checkNode` judge `1.0` a float and `2^53 + 1` an exact integer, as Python's json does, and return
 * the exact value for hooks. `check` takes a JS value and judges what JSON.stringify would write.
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import { CryptoError } from '../crypto/errors.js';
import { Entries, MAX_DEPTH, parseJson, type JsonNode } from '../crypto/jcs.js';
import { isWellFormed } from '../crypto/unicode.js';
import { schemaCompiler } from './compile.js';
import { exactBounds, get, messageJsonSchema, schemaKey, type SchemaValidator } from './message-schema.js';
import { PRECOMPILED } from './precompiled-validators.js';
import { actionsOf } from './validate.js';
import type { MessageSpec, Spec, WireDirection } from './types.js';
import { countMembers, hasFloat, plainMembers, project, untag, WireFloat } from './wire.js';

export { WireFloat, MAX_INTEGER_DIGITS } from './wire.js';
export { exactBounds, messageJsonSchema, type FieldBounds } from './message-schema.js';
export { makeAjv } from './compile.js';

export const MESSAGE_ERROR_CODES = [
  'MESSAGE_NOT_JSON',
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

/**
 * `value` is the message hooks should see: for checkText/checkNode its exact value (integers beyond
 * ±(2^53 − 1) as bigint, floats as numbers), for check the value given.
 */
export type MessageCheck = { ok: true; message: string; value: Record<string, unknown> } | { ok: false; errors: MessageError[] };

const CODE_OF: Record<string, MessageErrorCode> = {
  additionalProperties: 'FIELD_UNDECLARED',
  required: 'FIELD_REQUIRED',
  type: 'FIELD_TYPE',
  wireInteger: 'FIELD_TYPE',
  jsonContainer: 'FIELD_TYPE',
  enum: 'FIELD_RANGE',
  wireMinimum: 'FIELD_RANGE',
  wireMaximum: 'FIELD_RANGE',
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
    at = `${at}/${extra.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    what = `field ${JSON.stringify(extra)} is not declared by message "${name}"`;
  } else if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    at = `${at}/${missing}`;
    what = `required field "${missing}" is missing`;
  } else if (e.keyword === 'maxUtf8Bytes' || e.keyword === 'maxTotalBytes' || e.keyword === 'maxCanonicalBytes') {
    what = `larger than the ${String(e.schema)} bytes allowed`;
  } else if (e.keyword === 'enum') {
    what = `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
  } else if (e.keyword === 'wireInteger') {
    what = 'must be an integer (a JSON number with no fraction or exponent)';
  } else if (e.keyword === 'wireMinimum') {
    what = `must be >= ${String(e.schema)}`;
  } else if (e.keyword === 'wireMaximum') {
    what = `must be <= ${String(e.schema)}`;
  } else if (e.keyword === 'jsonContainer') {
    what = `must be a JSON ${String(e.schema)}`;
  }
  return { pointer: at || '/', code: CODE_OF[e.keyword] ?? 'FIELD_TYPE', message: what };
}

interface Candidate {
  name: string;
  direction: MessageSpec['direction'];
  validate: SchemaValidator;
}

const fail = (pointer: string, code: MessageErrorCode, message: string): MessageCheck => ({ ok: false, errors: [{ pointer, code, message }] });

export interface ValidatorOptions {
  /** Validate the generated schemas against the JSON Schema meta-schema (tests). */
  metaValidate?: boolean;
  /** The spec's text, for integer bounds exactly as written (JSON.parse rounds those beyond 2^53). */
  specText?: string;
  /**
   * Take a validator compiled ahead of time (precompiled-validators.ts, found by the schema's own
   * text) when there is one (the default), or compile every schema now (false; tests compare the two).
   */
  precompiled?: boolean;
}

/** A protocol's compiled validators. */
export class MessageValidator {
  private readonly byAction = new Map<string, Candidate[]>();
  private readonly all: Candidate[] = [];

  constructor(spec: Pick<Spec, 'messages'>, opts: ValidatorOptions | boolean = {}) {
    const o = typeof opts === 'boolean' ? { metaValidate: opts } : opts;
    const compile = schemaCompiler(o.metaValidate);
    // Meta-validation is a check of the compiler's input: it compiles every schema. Node's table is
    // empty, so there no schema is written out as its key.
    const ahead = o.precompiled !== false && !o.metaValidate && PRECOMPILED.size > 0;
    const exact = o.specText === undefined ? [] : exactBounds(o.specText);
    spec.messages.forEach((m, i) => {
      const schema = messageJsonSchema(m, exact[i]);
      const validate = (ahead && PRECOMPILED.get(schemaKey(schema))) || compile(schema);
      const c: Candidate = { name: m.name, direction: m.direction, validate };
      this.all.push(c);
      for (const action of actionsOf(m as never)) {
        const list = this.byAction.get(action) ?? [];
        list.push(c);
        this.byAction.set(action, list);
      }
    });
  }

  /**
   * Checks a message built in JS, travelling in `direction` (any when undefined); the name of the
   * declared message it matched, or every error. Numbers are judged as JSON.stringify writes them.
   */
  check(msg: unknown, direction?: WireDirection, name?: string): MessageCheck {
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg) || msg instanceof WireFloat)
      return fail('/', 'MESSAGE_NOT_OBJECT', 'a message must be a JSON object');
    const m = msg as Record<string, unknown>;
    let c: Candidate;
    if (name !== undefined) {
      const found = this.all.filter((x) => x.name === name && (direction === undefined || x.direction === 'both' || x.direction === direction));
      if (found.length !== 1)
        return fail(
          '/',
          found.length ? 'MESSAGE_ACTION_AMBIGUOUS' : 'MESSAGE_ACTION_UNKNOWN',
          `${found.length ? 'several messages are' : 'no message is'} named ${JSON.stringify(name)}${direction ? ` for ${direction}` : ''}`,
        );
      c = found[0]!;
    } else {
      const action = m['action'];
      if (typeof action !== 'string') return fail('/action', 'MESSAGE_ACTION_MISSING', 'a message needs a string "action"');
      const list = this.byAction.get(action);
      let found: Candidate | undefined;
      let n = 0;
      if (list)
        for (let i = 0; i < list.length; i++) {
          const x = list[i]!;
          if (direction === undefined || x.direction === 'both' || x.direction === direction) if (n++ === 0) found = x;
        }
      if (!found)
        return fail('/action', 'MESSAGE_ACTION_UNKNOWN', `no message with action ${JSON.stringify(action)} is declared${direction ? ` for ${direction}` : ''}`);
      if (n > 1)
        return fail(
          '/action',
          'MESSAGE_ACTION_AMBIGUOUS',
          `action ${JSON.stringify(action)} matches ${list!
            .filter((x) => direction === undefined || x.direction === 'both' || x.direction === direction)
            .map((x) => x.name)
            .join(' and ')}`,
        );
      c = found;
    }
    if (c.validate(m)) return { ok: true, message: c.name, value: m };
    return { ok: false, errors: (c.validate.errors ?? []).map((e) => toError(e, c.name)) };
  }

  /** Checks a message as a lossless tree (number literals as written); on success, its exact value. */
  checkNode(node: JsonNode, direction?: WireDirection, name?: string): MessageCheck {
    if (!(node instanceof Entries)) return fail('/', 'MESSAGE_NOT_OBJECT', 'a message must be a JSON object');
    let checked: Record<string, unknown>;
    try {
      checked = project(node, true) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof CryptoError) return fail('/', 'MESSAGE_NOT_JSON', e.message);
      throw e;
    }
    const r = this.check(checked, direction, name);
    if (!r.ok || !hasFloat(node)) return r;
    return { ok: true, message: r.message, value: untag(checked) as Record<string, unknown> };
  }

  /**
   * Checks message text from the wire: strict JSON (the project's policy: no duplicate keys, lone
   * surrogates or numbers beyond doubles), then checkNode. With `member`, the message is that member
   * of the JSON object `text` (a frame carrying it).
   */
  checkText(text: string, direction?: WireDirection, name?: string, member?: string): MessageCheck {
    // Most messages hold only short integers: then JSON.parse (native) reads them exactly, and the
    // same strictness is checked by counting members and scanning escapes and depth.
    if (text.length <= PLAIN_MAX_CHARS && isWellFormed(text)) {
      const members = plainMembers(text, MAX_DEPTH);
      if (members >= 0) {
        let v: unknown;
        try {
          v = JSON.parse(text);
        } catch {
          v = undefined; // the lossless parser says why
        }
        if (v !== undefined && countMembers(v) === members) {
          if (member === undefined) return this.check(v, direction, name);
          const inner =
            typeof v === 'object' && v !== null && !Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, member)
              ? (v as Record<string, unknown>)[member]
              : undefined;
          if (inner !== undefined) return this.check(inner, direction, name);
        }
      }
    }
    let node: JsonNode;
    try {
      node = parseJson(text, { rawNumbers: true });
    } catch (e) {
      if (e instanceof CryptoError) return fail('/', 'MESSAGE_NOT_JSON', `not strict JSON: ${e.message}`);
      throw e;
    }
    if (member !== undefined) {
      const inner = get(node, member);
      if (inner === undefined) return fail('/', 'MESSAGE_NOT_OBJECT', `no member ${JSON.stringify(member)} holds a message`);
      node = inner;
    }
    return this.checkNode(node, direction, name);
  }
}

/** Texts longer than this skip the JSON.parse shortcut (the lossless parser checks the size limit). */
const PLAIN_MAX_CHARS = 1 << 20;

const cache = new Map<string, { v: MessageValidator; exact: boolean }>();

/**
 * The compiled validators of a protocol, compiled once per protocol_id; with `specText`, integer bounds
 * are read exactly as written (a validator compiled without it is replaced by one compiled with it).
 *
 * @param protocolId - the cache key: the protocol_id of `spec`
 * @param spec - the spec, or at least its messages
 * @param specText - the spec's text, for integer bounds beyond 2^53
 * @example
 * ```ts
 * const v = messageValidator(loaded.protocolId!, loaded.spec);
 * v.checkText('{"action":"reveal","round":1.0}', 'guest_to_host'); // { ok: false, errors: [{ pointer: '/round', code: 'FIELD_TYPE', … }] }
 * ```
 */
export function messageValidator(protocolId: string, spec: Pick<Spec, 'messages'>, specText?: string): MessageValidator {
  const hit = cache.get(protocolId);
  if (hit && (hit.exact || specText === undefined)) return hit.v;
  const v = new MessageValidator(spec, specText === undefined ? {} : { specText });
  cache.set(protocolId, { v, exact: specText !== undefined });
  return v;
}
