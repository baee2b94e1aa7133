/**
 * Capability schemas (R16–R18, host/schema.go): a closed JSON Schema 2020-12 document, stored in Go's
 * canonical JSON form and named by the SHA-256 of those bytes. Compiled with ajv's 2020 dialect under
 * the base `urn:rin:host-schema:<sha256>`, with no loader: a `$ref` to anything outside the document
 * does not compile. Like the reference's compiler, unknown keywords are ignored and `format` is an
 * annotation; the document is checked against the 2020-12 meta-schema.
 *
 * Where ajv's own behaviour is JavaScript's and the reference's library (santhosh-tekuri/jsonschema v6)
 * is Go's, ajv is bent to Go's, so a document and an instance get the reference's verdict:
 * - numbers are exact decimals of their lexemes, never floats (./decimal.ts): the numeric bounds,
 *   multipleOf, const, enum and uniqueItems are keywords of ours that read the lexemes, and `integer`
 *   is decided on the lexeme too;
 * - `pattern` and `patternProperties` are Go regular expressions (RE2 syntax and semantics, re2js);
 * - a reference without a scheme resolves against the opaque `urn:` base as Go's net/url does in that
 *   library: to the document itself (the fragment kept), never to another resource.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { SchemaEnv } from 'ajv/dist/compile/index.js';
import type { DataValidateFunction, DataValidationCxt, RegExpEngine, RegExpLike, UriResolver } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';
import type { Crypto } from '../crypto/backend.js';
import { GoJsonError, parseWireJson, RawJson, type WireNode } from '../crypto/gojson.js';
import { utf8Length } from '../crypto/unicode.js';
import { backend, goCanonical, sha256Hex } from './canon.js';
import { compareDecimal, decimalKey, isIntegerDecimal, isMultipleOf, parseDecimal, type Decimal } from './decimal.js';
import { invalid, prefixed } from './errors.js';
import { SCHEMA_DIALECT, type Schema } from './types.js';
import { MAX_INSTANCE_BYTES } from './validate.js';

export const MAX_SCHEMA_BYTES = 64 << 10;

/** A compiled schema: checks one parsed instance, throwing `invalid(field, …)`. */
export interface CompiledSchema {
  readonly sha256: string;
  check(field: string, instance: WireNode): void;
}

/**
 * The lexemes of the numbers directly inside each object and array toValue made (schema documents and
 * instances alike), by member name or index: the keywords below read a number's value from here.
 */
const lexemes = new WeakMap<object, Map<string | number, string>>();
/** The lexeme of an instance that is itself a number, while it is validated (it has no container). */
let rootLexeme: string | undefined;

const PLAIN_INTEGER = /^-?\d+$/;

/**
 * The JS number ajv holds for a lexeme. Our keywords read the lexeme instead, so only ajv's `type`
 * check reads this value, and it must say `integer` exactly when the lexeme is a whole number:
 * `1.0000000000000001` is a float 1, so it stands in as 0.5. (ajv takes ±Infinity, which a huge
 * integer becomes, for an integer, as Go takes 1e400.)
 */
function standIn(lexeme: string): number {
  const v = Number(lexeme);
  // Without a fraction or an exponent both say integer; a fraction the float kept both say not.
  if (!PLAIN_INTEGER.test(lexeme) && (v % 1 === 0 || !Number.isFinite(v)) && !isIntegerDecimal(parseDecimal(lexeme))) return 0.5;
  return v;
}

/**
 * A parsed JSON value as the plain JS value ajv validates, each number's lexeme kept in `lexemes`.
 * Iterative: a text may nest 10000 levels, more than the call stack takes.
 */
function toValue(root: WireNode): unknown {
  const out: { v?: unknown } = {};
  const work: Array<[WireNode, (v: unknown) => void]> = [[root, (v) => (out.v = v)]];
  while (work.length > 0) {
    const [n, put] = work.pop()!;
    switch (n.kind) {
      case 'object': {
        const o: Record<string, unknown> = {};
        let numbers: Map<string, string> | undefined;
        // defineProperty: a member named __proto__ is data, never the prototype.
        for (const [k, v] of n.members) {
          Object.defineProperty(o, k, { value: undefined, enumerable: true, writable: true, configurable: true });
          if (v.kind === 'number') (numbers ??= new Map()).set(k, v.lexeme);
          work.push([v, (x) => (o[k] = x)]);
        }
        if (numbers) lexemes.set(o, numbers);
        put(o);
        break;
      }
      case 'array': {
        const a: unknown[] = new Array(n.items.length);
        let numbers: Map<number, string> | undefined;
        n.items.forEach((item, i) => {
          if (item.kind === 'number') (numbers ??= new Map()).set(i, item.lexeme);
          work.push([item, (x) => (a[i] = x)]);
        });
        if (numbers) lexemes.set(a, numbers);
        put(a);
        break;
      }
      case 'number':
        put(standIn(n.lexeme));
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

/** The lexeme of the value ajv is checking (undefined for a value toValue did not make). */
function lexemeAt(cxt: DataValidationCxt | undefined): string | undefined {
  if (cxt?.parentData === undefined) return rootLexeme;
  return lexemes.get(cxt.parentData)?.get(cxt.parentDataProperty);
}

/** A number's exact value: from its lexeme, or for a number of ajv's own meta-schemas, from its shortest text. */
function decimalOf(value: number, lexeme: string | undefined): Decimal {
  return parseDecimal(lexeme ?? String(value));
}

/**
 * A text two JSON values share exactly when the reference's `equals` holds: numbers by exact value
 * (1 = 1.0 = 1e0, 0.1 ≠ 0.10000000000000001), objects by member set in any order. Iterative, as toValue.
 */
function exactKey(value: unknown, lexeme: string | undefined): string {
  const out: string[] = [];
  const work: Array<string | [unknown, string | undefined]> = [[value, lexeme]];
  while (work.length > 0) {
    const w = work.pop()!;
    if (typeof w === 'string') {
      out.push(w);
      continue;
    }
    const [v, lex] = w;
    if (typeof v === 'number') out.push(`n${decimalKey(decimalOf(v, lex))}`);
    else if (typeof v === 'string') out.push(JSON.stringify(v));
    else if (v === null || typeof v !== 'object') out.push(String(v));
    else if (Array.isArray(v)) {
      const numbers = lexemes.get(v);
      work.push(']');
      for (let i = v.length - 1; i >= 0; i--) work.push([v[i], numbers?.get(i)], i > 0 ? ',' : '');
      work.push('[');
    } else {
      const numbers = lexemes.get(v);
      const keys = Object.keys(v).sort();
      work.push('}');
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        work.push([(v as Record<string, unknown>)[k], numbers?.get(k)], `${JSON.stringify(k)}:`, i > 0 ? ',' : '');
      }
      work.push('{');
    }
  }
  return out.join('');
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
const cache = new Map<string, { fn: ValidateFunction; doc: Record<string, unknown> }>();

/**
 * Go's regexp, which the reference's library compiles `pattern` and `patternProperties` with: RE2
 * syntax (`(?i)`, `(?P<n>…)`, `\z`, `[[:alpha:]]`, `\x{41}`; no lookaround, no backreference) and
 * semantics (`.` takes \r and U+2028, `\s` is ASCII only). A syntax error throws, so the document does
 * not compile, with Go's message.
 */
const goRegExp: RegExpEngine = Object.assign(
  (pattern: string): RegExpLike => {
    const re = RE2JS.compile(pattern);
    // ajv keeps one compiled pattern per toString() text: this one names the pattern.
    const like: RegExpLike & { toString(): string } = { test: (s: string) => re.test(s), toString: () => `re2:${pattern}` };
    return like;
  },
  { code: 're2js' },
);

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
/** An opaque URI (`urn:…`, no `//` or `/` after the scheme), up to any query or fragment. */
const OPAQUE = /^[A-Za-z][A-Za-z0-9+.-]*:[^/?#][^?#]*/;

/**
 * The reference library's url join (util.go): Go's ResolveReference, after which an opaque base keeps
 * its opaque part for any reference without a scheme (golang/go#66084). So under
 * `urn:rin:host-schema:<sha256>`, `other.json#/$defs/a` names `urn:rin:host-schema:<sha256>#/$defs/a`;
 * the RFC 3986 resolver ajv uses makes `urn:other.json` of it and fails to serialize it.
 */
function goUriResolver(rfc3986: UriResolver): UriResolver {
  return {
    parse: (uri) => rfc3986.parse(uri),
    serialize: (component) => rfc3986.serialize(component),
    resolve(base, ref) {
      const opaque = OPAQUE.exec(base);
      if (!opaque || SCHEME.test(ref)) return rfc3986.resolve(base, ref);
      const hash = ref.indexOf('#');
      const beforeHash = hash < 0 ? ref : ref.slice(0, hash);
      const query = beforeHash.indexOf('?');
      return opaque[0] + (query < 0 ? '' : beforeHash.slice(query)) + (hash < 0 ? '' : ref.slice(hash));
    },
  };
}

/**
 * One compiler for all documents (a compiler per document costs about 20 times as much). Documents
 * never see each other: a compiled document is not added to the compiler's registry of $ids
 * (addUsedSchema false), so a `$ref` can only reach inside its own document.
 */
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false, addUsedSchema: false, code: { regExp: goRegExp } });
// Replaced before the first compilation; ajv reads it at each use.
ajv.opts.uriResolver = goUriResolver(ajv.opts.uriResolver);

/** Records a keyword's failure on its validate function, where ajv looks for it; returns false. */
function fail(fn: DataValidateFunction, keyword: string, message: string, params: Record<string, unknown> = {}): false {
  fn.errors = [{ keyword, message, params }];
  return false;
}

// The numeric keywords compare exact decimals (the reference compares big.Rat values). A bound whose
// lexeme big.Rat cannot hold is no bound (the reference's compiler drops it); an instance number it
// cannot hold would make the reference panic, so it is refused.
const BOUNDS: ReadonlyArray<readonly [keyword: string, comparison: string, holds: (order: number) => boolean]> = [
  ['minimum', '>=', (order) => order >= 0],
  ['maximum', '<=', (order) => order <= 0],
  ['exclusiveMinimum', '>', (order) => order > 0],
  ['exclusiveMaximum', '<', (order) => order < 0],
];
const UNCOMPARABLE = 'cannot be compared exactly (its power of ten is beyond ±1000000)';
for (const [keyword, comparison, holds] of BOUNDS) {
  ajv.removeKeyword(keyword);
  ajv.addKeyword({
    keyword,
    type: 'number',
    schemaType: 'number',
    compile(value: number, parentSchema) {
      const bound = decimalOf(value, lexemes.get(parentSchema)?.get(keyword));
      const validate: DataValidateFunction = (data: number, cxt) => {
        if (!bound.exact) return true;
        const x = decimalOf(data, lexemeAt(cxt));
        if (!x.exact) return fail(validate, keyword, UNCOMPARABLE);
        return holds(compareDecimal(x, bound)) || fail(validate, keyword, `must be ${comparison} ${bound.text}`, { comparison, limit: bound.text });
      };
      return validate;
    },
  });
}
ajv.removeKeyword('multipleOf');
ajv.addKeyword({
  keyword: 'multipleOf',
  type: 'number',
  schemaType: 'number',
  compile(value: number, parentSchema) {
    const divisor = decimalOf(value, lexemes.get(parentSchema)?.get('multipleOf'));
    const validate: DataValidateFunction = (data: number, cxt) => {
      // The meta-schema has refused a divisor that is not > 0 (or that big.Rat cannot hold).
      if (!divisor.exact || divisor.sign <= 0) return true;
      const x = decimalOf(data, lexemeAt(cxt));
      if (!x.exact) return fail(validate, 'multipleOf', UNCOMPARABLE);
      return isMultipleOf(x, divisor) || fail(validate, 'multipleOf', `must be multiple of ${divisor.text}`, { multipleOf: divisor.text });
    };
    return validate;
  },
});
ajv.removeKeyword('const');
ajv.addKeyword({
  keyword: 'const',
  compile(value: unknown, parentSchema) {
    const want = exactKey(value, lexemes.get(parentSchema)?.get('const'));
    const validate: DataValidateFunction = (data: unknown, cxt) =>
      exactKey(data, lexemeAt(cxt)) === want || fail(validate, 'const', 'must be equal to constant', { allowedValue: value });
    return validate;
  },
});
ajv.removeKeyword('enum');
ajv.addKeyword({
  keyword: 'enum',
  schemaType: 'array',
  compile(values: unknown[]) {
    const numbers = lexemes.get(values);
    const allowed = new Set(values.map((v, i) => exactKey(v, numbers?.get(i))));
    const validate: DataValidateFunction = (data: unknown, cxt) =>
      allowed.has(exactKey(data, lexemeAt(cxt))) || fail(validate, 'enum', 'must be equal to one of the allowed values', { allowedValues: values });
    return validate;
  },
});
ajv.removeKeyword('uniqueItems');
ajv.addKeyword({
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  compile(unique: boolean) {
    const validate: DataValidateFunction = (data: unknown[]) => {
      if (!unique) return true;
      const numbers = lexemes.get(data);
      const seen = new Map<string, number>();
      for (let i = 0; i < data.length; i++) {
        const key = exactKey(data[i], numbers?.get(i));
        const j = seen.get(key);
        if (j !== undefined) return fail(validate, 'uniqueItems', `must NOT have duplicate items (items ## ${j} and ${i} are identical)`, { i: j, j: i });
        seen.set(key, i);
      }
      return true;
    };
    return validate;
  },
});

/**
 * Drops a document from ajv's cache. Only that: ajv.removeSchema(doc) also deletes whatever the
 * compiler holds under the document's $id, and a document claiming the 2020-12 meta-schema's id would
 * take the meta-schema with it, so that every later document failed to compile. Nothing else is ever
 * held under a document's id (see compile), so its $id is hidden from removeSchema.
 */
function forget(doc: Record<string, unknown>): void {
  const id = doc['$id'];
  delete doc['$id'];
  ajv.removeSchema(doc);
  doc['$id'] = id;
}

function compile(root: WireNode, sha: string): ValidateFunction {
  const hit = cache.get(sha);
  if (hit) {
    cache.delete(sha);
    cache.set(sha, hit);
    return hit.fn;
  }
  const doc = toValue(root) as Record<string, unknown>;
  const base = `urn:rin:host-schema:${sha}`;
  const id = doc['$id'];
  // The document's own $id is resolved against the base as the reference resolves it: one without a
  // scheme names the base itself.
  if (id === undefined) doc['$id'] = base;
  else if (typeof id === 'string' && !SCHEME.test(id)) doc['$id'] = ajv.opts.uriResolver.resolve(base, id);
  // While it compiles, the document is registered under its own id, as the reference's compiler holds
  // it: a reference to the whole document (`other.json` under the urn: base, or its absolute $id)
  // then resolves, and a subschema claiming the same id is refused as Go refuses a duplicate id (ajv:
  // "resolves to more than one schema"; its duplicate check reads only `.schema` of what it finds, so
  // the document stands in until ajv has made its environment). An id ajv already holds (a
  // meta-schema's) is left alone.
  const self = typeof doc['$id'] === 'string' ? doc['$id'].replace(/#\/?$/, '') : undefined;
  const registered = new Set(Object.keys(ajv.refs));
  const register = self !== undefined && ajv.refs[self] === undefined && ajv.schemas[self] === undefined;
  let fn: ValidateFunction;
  try {
    if (register) ajv.refs[self] = { schema: doc } as unknown as SchemaEnv;
    const env = ajv._addSchema(doc);
    if (register) ajv.refs[self] = env;
    fn = ajv.compile(doc);
  } catch (e) {
    forget(doc);
    throw invalid('schema.document', `does not compile: ${(e as Error).message}`);
  } finally {
    // Documents never see each other: what this one added to the compiler's registry (itself, and
    // ajv's entry for each subschema $id) goes; the compiled code does not read it.
    for (const key of Object.keys(ajv.refs)) if (!registered.has(key)) delete ajv.refs[key];
  }
  cache.set(sha, { fn, doc });
  if (cache.size > CACHE_LIMIT) {
    const [oldest, entry] = cache.entries().next().value!;
    cache.delete(oldest);
    forget(entry.doc);
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
      const value = toValue(instance);
      rootLexeme = instance.kind === 'number' ? instance.lexeme : undefined;
      try {
        ok = validate(value) as boolean;
      } catch (e) {
        // The validator recursing through a very deep instance: refused, never half-checked.
        if (e instanceof RangeError) throw invalid(field, 'is nested too deeply to validate');
        throw e;
      } finally {
        rootLexeme = undefined;
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
