/**
 * Observations (R29–R33, host/action_validate.go): bounded, epoch-bound envelopes an authoritative
 * adapter produces, the queries that ask for them, and the payload's schema check.
 */
import type { Crypto } from '../crypto/backend.js';
import { goJsonEncode, RawJson } from '../crypto/gojson.js';
import { utf8Length } from '../crypto/unicode.js';
import { goCompact } from './canon.js';
import { copyEpoch, copyHostRef, copyTimepoint } from './copy.js';
import { canonicalizeScalar, canonicalizeScalarObject, isOwnershipClass } from './effects.js';
import { invalid, prefixed } from './errors.js';
import { compileSchema, parseInstance } from './schema.js';
import type { ObservationEnvelope, ObservationQuery, Schema, SchemaRef } from './types.js';
import {
  isSha256Hex,
  MAX_INSTANCE_BYTES,
  MAX_JSON_SAFE,
  parseJsonObject,
  validateEpoch,
  validateExactVersion,
  validateIdentifier,
  validateRefAtEpoch,
  validateSortedTags,
  validateText,
  validateTimepoint,
} from './validate.js';

const MAX_OBSERVATION_BYTES = 1 << 20;
const MAX_PAYLOAD_BYTES = 256 << 10;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

export function validateSchemaRef(ref: SchemaRef, field: string): void {
  validateIdentifier(`${field}.id`, ref.id, true);
  validateExactVersion(`${field}.version`, ref.version);
  if (!isSha256Hex(ref.sha256)) throw invalid(`${field}.sha256`, 'must be a lowercase SHA-256 digest');
}

const compact = (raw: RawJson) => new RawJson(goCompact(raw.text));

/** The envelope as Go's json.Marshal writes it, for its size bound. */
function encodedEnvelope(o: ObservationEnvelope): string {
  return goJsonEncode({
    observation_id: o.observation_id,
    host_id: o.host_id,
    world_id: o.world_id,
    actor_id: o.actor_id,
    epoch: copyEpoch(o.epoch),
    sequence: o.sequence,
    observed_at: copyTimepoint(o.observed_at),
    schema_ref: { id: o.schema_ref.id, version: o.schema_ref.version, sha256: o.schema_ref.sha256 },
    payload: compact(o.payload),
    facts: o.facts?.length
      ? o.facts.map((f) => ({
          fact_id: f.fact_id,
          kind: f.kind,
          subject: f.subject ? copyHostRef(f.subject) : undefined,
          tags: f.tags?.length ? f.tags : undefined,
          value: compact(f.value),
        }))
      : undefined,
    resources: o.resources?.length
      ? o.resources.map((r) => ({
          ref: copyHostRef(r.ref),
          kind: r.kind,
          tags: r.tags?.length ? r.tags : undefined,
          ownership: r.ownership,
          scope: r.scope,
          quantity: r.quantity ? r.quantity : undefined,
          unit: r.unit ? r.unit : undefined,
          attributes: compact(r.attributes),
        }))
      : undefined,
    artifacts: o.artifacts?.length
      ? o.artifacts.map((a) => ({ artifact_id: a.artifact_id, kind: a.kind, media_type: a.media_type, size_bytes: a.size_bytes, sha256: a.sha256 }))
      : undefined,
    continuation_token: o.continuation_token ? o.continuation_token : undefined,
  });
}

/** ValidateObservationEnvelope: the envelope's shape (the payload's schema is validateObservationPayload's). */
export function validateObservationEnvelope(o: ObservationEnvelope): void {
  for (const f of ['observation_id', 'host_id', 'world_id', 'actor_id'] as const) validateIdentifier(f, o[f]);
  validateEpoch(o.epoch, 'epoch');
  if (o.world_id !== o.epoch.world_id) throw invalid('world_id', 'must match epoch.world_id');
  if (!(o.sequence > 0 && o.sequence <= MAX_JSON_SAFE)) throw invalid('sequence', 'must be a positive JSON-safe integer');
  validateTimepoint(o.observed_at, 'observed_at');
  validateSchemaRef(o.schema_ref, 'schema_ref');
  parseJsonObject('payload', o.payload, MAX_PAYLOAD_BYTES);

  const facts = o.facts ?? [];
  if (facts.length > 256) throw invalid('facts', 'must contain at most 256 values');
  const factIds = new Set<string>();
  facts.forEach((fact, i) => {
    const at = `facts[${i}]`;
    validateIdentifier(`${at}.fact_id`, fact.fact_id);
    if (factIds.has(fact.fact_id)) throw invalid('facts', 'must not contain duplicate fact_id values');
    factIds.add(fact.fact_id);
    validateIdentifier(`${at}.kind`, fact.kind, true);
    if (fact.subject) validateRefAtEpoch(`${at}.subject`, fact.subject, o.epoch);
    validateSortedTags(`${at}.tags`, fact.tags);
    canonicalizeScalar(`${at}.value`, fact.value);
  });

  const resources = o.resources ?? [];
  if (resources.length > 128) throw invalid('resources', 'must contain at most 128 values');
  const refs = new Set<string>();
  resources.forEach((r, i) => {
    const at = `resources[${i}]`;
    validateRefAtEpoch(`${at}.ref`, r.ref, o.epoch);
    const key = `${r.ref.namespace}\u0000${r.ref.type}\u0000${r.ref.key}`;
    if (refs.has(key)) throw invalid('resources', 'must not contain duplicate refs');
    refs.add(key);
    validateIdentifier(`${at}.kind`, r.kind, true);
    validateSortedTags(`${at}.tags`, r.tags);
    if (!isOwnershipClass(r.ownership)) throw invalid(`${at}.ownership`, 'is not supported');
    validateIdentifier(`${at}.scope`, r.scope, true);
    if ((r.quantity ?? 0) > MAX_JSON_SAFE) throw invalid(`${at}.quantity`, 'must be a JSON-safe integer');
    if (r.unit) validateIdentifier(`${at}.unit`, r.unit);
    canonicalizeScalarObject(`${at}.attributes`, r.attributes);
  });

  const artifacts = o.artifacts ?? [];
  if (artifacts.length > 64) throw invalid('artifacts', 'must contain at most 64 values');
  const artifactIds = new Set<string>();
  artifacts.forEach((a, i) => {
    const at = `artifacts[${i}]`;
    validateIdentifier(`${at}.artifact_id`, a.artifact_id);
    if (artifactIds.has(a.artifact_id)) throw invalid('artifacts', 'must not contain duplicate artifact_id values');
    artifactIds.add(a.artifact_id);
    validateIdentifier(`${at}.kind`, a.kind, true);
    if (!MEDIA_TYPE.test(a.media_type)) throw invalid(`${at}.media_type`, 'must be a lowercase media type without parameters');
    if (!(a.size_bytes >= 1 && a.size_bytes <= 64 << 20)) throw invalid(`${at}.size_bytes`, 'must be between 1 and 67108864');
    if (!isSha256Hex(a.sha256)) throw invalid(`${at}.sha256`, 'must be a lowercase SHA-256 digest');
  });

  validateText('continuation_token', o.continuation_token ?? '', 512, false);
  if (utf8Length(encodedEnvelope(o)) > MAX_OBSERVATION_BYTES) throw invalid('observation', 'must contain at most 1048576 bytes');
}

/** ValidateObservationQuery (R33). */
export function validateObservationQuery(q: ObservationQuery): void {
  for (const f of ['query_id', 'host_id', 'world_id', 'actor_id'] as const) validateIdentifier(f, q[f]);
  validateEpoch(q.expected_epoch, 'expected_epoch');
  if (q.world_id !== q.expected_epoch.world_id) throw invalid('world_id', 'must match expected_epoch.world_id');
  if ((q.after_sequence ?? 0) > MAX_JSON_SAFE) throw invalid('after_sequence', 'must be a JSON-safe integer');
  if (!(q.limit >= 1 && q.limit <= 256)) throw invalid('limit', 'must be between 1 and 256');
  const kinds = q.kinds ?? [];
  if (kinds.length > 32) throw invalid('kinds', 'must contain at most 32 values');
  kinds.forEach((kind, i) => {
    validateIdentifier(`kinds[${i}]`, kind, true);
    if (i > 0 && !(kinds[i - 1]! < kind)) throw invalid('kinds', 'must be sorted and contain no duplicates');
  });
  validateText('continuation_token', q.continuation_token ?? '', 512, false);
}

/** ValidateObservationPayload: the envelope, and its payload against the schema its schema_ref names. */
export function validateObservationPayload(o: ObservationEnvelope, schema: Schema, c?: Crypto): void {
  validateObservationEnvelope(o);
  let compiled;
  try {
    compiled = compileSchema(schema, c);
  } catch (e) {
    throw prefixed('payload_schema', e);
  }
  if (o.schema_ref.sha256 !== schema.sha256) throw invalid('schema_ref.sha256', 'does not match the supplied payload schema');
  const text = o.payload.text;
  if (utf8Length(text) > MAX_INSTANCE_BYTES) throw invalid('payload.instance', `must contain at most ${MAX_INSTANCE_BYTES} bytes`);
  compiled.check('payload.instance', parseInstance('payload.instance', text));
}
