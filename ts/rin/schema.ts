/**
 * Capability schemas (R16–R18, host/schema.go): a closed JSON Schema 2020-12 document, stored in Go's
 * canonical JSON form and named by the SHA-256 of those bytes. Compiled with ajv's 2020 dialect under
 * the base `urn:rin:host-schema:<sha256>`, with no loader: a `$ref` to anything outside the document
 * does not compile. Like the reference's compiler, unknown keywords are ignored and `format` is an
 * annotation; the document is checked against the 2020-12 meta-schema.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Crypto } from '../crypto/backend.js';
import { GoJsonError, parseWireJson, RawJson, type WireNode } from '../crypto/gojson.js';
import { backend, goCanonical, sha256Hex } from './canon.js';
import { invalid, prefixed } from './errors.js';
import { SCHEMA_DIALECT, type Schema } from './types.js';
import { MAX_INSTANCE_BYTES, utf8Length } from './validate.js';

export const MAX_SCHEMA_BYTES = 64 << 10;

/** A compiled schema: checks one parsed instance, throwing `invalid(field, …)`. */
export interface CompiledSchema {
  readonly sha256: string;
  check(field: string, instance: WireNode): void;
}

/**
 * A parsed JSON value as the plain JS value ajv validates (numbers from their lexemes). Iterative:
 * a text may nest 10000 levels, more than the call stack takes.
 */
function toValue(root: WireNode): unknown {
  const out: { v?: unknown } = {};
  const work: Array<[WireNode, (v: unknown) => void]> = [[root, (v) => (out.v = v)]];
  while (work.length > 0) {
    const [n, put] = work.pop()!;
    switch (n.kind) {
      case 'object': {
        const o: Record<string, unknown> = {};
        // defineProperty: a member named __proto__ is data, never the prototype.
        for (const [k, v] of n.members) {
          Object.defineProperty(o, k, { value: undefined, enumerable: true, writable: true, configurable: true });
          work.push([v, (x) => (o[k] = x)]);
        }
        put(o);
        break;
      }
      case 'array': {
        const a: unknown[] = new Array(n.items.length);
        n.items.forEach((item, i) => work.push([item, (x) => (a[i] = x)]));
        put(a);
        break;
      }
      case 'number':
        put(Number(n.lexeme));
        break;
      case 'null':
        put(null);
        break;
      default:
        put(n.value);
    }
  }
  return out.v;
}

function member(root: Extract<WireNode, { kind: 'object' }>, name: string): WireNode | undefined {
  return root.members.find(([k]) => k === name)?.[1];
}

function describe(e: ErrorObject | undefined): string {
  if (!e) return 'jsonschema validation failed';
  const extra = e.keyword === 'additionalProperties' ? ` ${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty)}` : '';
  return `jsonschema validation failed: at '${e.instancePath}': ${e.message ?? e.keyword}${extra}`;
}

const CACHE_LIMIT = 1024;
const cache = new Map<string, { fn: ValidateFunction; doc: object }>();

/**
 * One compiler for all documents (a compiler per document costs about 20 times as much). Documents
 * never see each other: a compiled document is not added to the compiler's registry of $ids
 * (addUsedSchema false), so a `$ref` can only reach inside its own document.
 */
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false, addUsedSchema: false });

function compile(root: WireNode, sha: string): ValidateFunction {
  const hit = cache.get(sha);
  if (hit) {
    cache.delete(sha);
    cache.set(sha, hit);
    return hit.fn;
  }
  const doc = toValue(root) as Record<string, unknown>;
  if (!Object.hasOwn(doc, '$id')) doc['$id'] = `urn:rin:host-schema:${sha}`;
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(doc);
  } catch (e) {
    ajv.removeSchema(doc);
    throw invalid('schema.document', `does not compile: ${(e as Error).message}`);
  }
  cache.set(sha, { fn, doc });
  if (cache.size > CACHE_LIMIT) {
    const [oldest, entry] = cache.entries().next().value!;
    cache.delete(oldest);
    ajv.removeSchema(entry.doc);
  }
  return fn;
}

/** The reference's prepareSchema: checks in its order, then the canonical text and the compiled schema. */
function prepare(document: string, c: Crypto): { canonical: string; sha256: string; validate: ValidateFunction } {
  if (document.length === 0 || utf8Length(document) > MAX_SCHEMA_BYTES) throw invalid('schema.document', 'must contain 1-65536 bytes');
  let root: WireNode;
  try {
    root = parseWireJson(document).root;
  } catch (e) {
    if (e instanceof GoJsonError) throw invalid('schema.document', e.message);
    throw e;
  }
  if (root.kind !== 'object') throw invalid('schema.document', 'root must be an object');
  const dialect = member(root, '$schema');
  if (dialect?.kind !== 'string' || dialect.value !== SCHEMA_DIALECT) throw invalid('schema.document.$schema', `must equal ${SCHEMA_DIALECT}`);
  const type = member(root, 'type');
  if (type?.kind !== 'string' || type.value !== 'object') throw invalid('schema.document.type', 'must equal object');
  const additional = member(root, 'additionalProperties');
  if (additional?.kind !== 'bool' || additional.value !== false) {
    throw invalid('schema.document.additionalProperties', 'must be present and equal false');
  }
  const canonical = goCanonical(c, document);
  const sha256 = sha256Hex(c, canonical);
  return { canonical, sha256, validate: compile(root, sha256) };
}

/** The canonical bytes of an authored schema document (CanonicalizeSchema). */
export function canonicalizeSchema(document: string, c?: Crypto): string {
  return prepare(document, backend(c)).canonical;
}

/** A Schema from an authored document: checked, compiled, stored canonically (NewSchema). */
export function newSchema(document: string, c?: Crypto): Schema {
  const { canonical, sha256 } = prepare(document, backend(c));
  return { dialect: SCHEMA_DIALECT, document: new RawJson(canonical), sha256 };
}

/** A stored Schema, checked as the reference does (dialect, canonical document, digest) and compiled. */
export function compileSchema(schema: Schema, c?: Crypto): CompiledSchema {
  if (schema.dialect !== SCHEMA_DIALECT) throw invalid('schema.dialect', `must equal ${SCHEMA_DIALECT}`);
  const document = schema.document?.text ?? '';
  const prepared = prepare(document, backend(c));
  if (document !== prepared.canonical) throw invalid('schema.document', 'must be canonical; construct it with NewSchema');
  if (schema.sha256 !== prepared.sha256) throw invalid('schema.sha256', 'does not match canonical document');
  const validate = prepared.validate;
  return {
    sha256: prepared.sha256,
    check(field, instance) {
      let ok: boolean;
      try {
        ok = validate(toValue(instance)) as boolean;
      } catch (e) {
        // The validator recursing through a very deep instance: refused, never half-checked.
        if (e instanceof RangeError) throw invalid(field, 'is nested too deeply to validate');
        throw e;
      }
      if (!ok) throw invalid(field, describe(validate.errors?.[0]));
    },
  };
}

/** Schema.Validate: throws the first fault of a stored Schema. */
export function validateSchema(schema: Schema, c?: Crypto): void {
  compileSchema(schema, c);
}

/** The reference's decodeJSON: a required, strict JSON text, parsed. Faults are `invalid(field, …)`. */
export function parseInstance(field: string, text: string): WireNode {
  if (text.length === 0) throw invalid(field, 'is required');
  try {
    return parseWireJson(text).root;
  } catch (e) {
    if (e instanceof GoJsonError) throw invalid(field, e.message);
    throw e;
  }
}

/** Schema.ValidateInstance: one JSON text of at most 1 MiB valid against the schema (field `instance`). */
export function validateAgainstSchema(schema: Schema, instanceText: string, c?: Crypto): void {
  const compiled = compileSchema(schema, c);
  if (utf8Length(instanceText) > MAX_INSTANCE_BYTES) throw invalid('instance', `must contain at most ${MAX_INSTANCE_BYTES} bytes`);
  compiled.check('instance', parseInstance('instance', instanceText));
}

/** Prefixes a schema fault with the schema's member in a spec (`input` → `input.schema.document`). */
export function compileSchemaAt(prefix: string, schema: Schema, c?: Crypto): CompiledSchema {
  try {
    return compileSchema(schema, c);
  } catch (e) {
    throw prefixed(prefix, e);
  }
}
