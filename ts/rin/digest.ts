/**
 * Sealing and the digests of rin.host/v2 (R13–R15, R19, R34–R35, R46): each is the SHA-256 of Go's
 * `json.Marshal` of a struct, written here member by member in the reference's declaration order.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromUtf8 } from '../crypto/encoding.js';
import { compareUtf8, goJsonEncode, RawJson } from '../crypto/gojson.js';
import { backend, goCanonical, goCompact, sha256Hex } from './canon.js';
import { copyBoundAction, copyCapabilityRef, copyDuration, copyRequest, copySpec, requestOfBound } from './copy.js';
import { canonicalizeScalarObject, compactEffect, effectPreviewDigest, validateEffect } from './effects.js';
import { invalid, prefixed } from './errors.js';
import { requestPayloadBytes } from './payload.js';
import { compileSchemaAt, type CompiledSchema } from './schema.js';
import type { ActionRequest, BoundAction, CapabilitySpec, RawJson as Raw } from './types.js';
import {
  checkActionRequest,
  durabilityRank,
  isSha256Hex,
  MAX_INSTANCE_BYTES,
  MAX_JSON_SAFE,
  parseJsonObject,
  riskRank,
  validateCapabilityRef,
  validateDuration,
  validateEpoch,
  validateIdentifier,
  validatePlanStepRef,
  validateRefs,
  validateText,
  validateTimepoint,
} from './validate.js';

/** The digest payload of a capability spec (schema SHA-256s instead of documents, no digest). */
export function capabilitySpecDigestText(spec: CapabilitySpec): string {
  return goJsonEncode({
    capability: copyCapabilityRef(spec.capability),
    description: spec.description,
    input_sha256: spec.input.sha256,
    output_sha256: spec.output.sha256,
    effect_schema_sha256: spec.effect_schema.sha256,
    kind: spec.kind,
    execution: spec.execution,
    cancellation: spec.cancellation,
    risk_floor: spec.risk_floor,
    required_durability: spec.required_durability,
    required_scopes: spec.required_scopes && spec.required_scopes.length > 0 ? [...spec.required_scopes] : undefined,
    execution_budget: copyDuration(spec.execution_budget),
    max_input_bytes: spec.max_input_bytes,
    max_output_bytes: spec.max_output_bytes,
    max_effects: spec.max_effects,
    produces_child_operations: spec.produces_child_operations,
  });
}

/** The digest of a spec's current fields (no checks: seal it to check). */
export function capabilitySpecDigest(spec: CapabilitySpec, c?: Crypto): string {
  return sha256Hex(backend(c), capabilitySpecDigestText(spec));
}

function validateSpecFields(s: CapabilitySpec): void {
  validateCapabilityRef(s.capability, 'capability');
  validateText('description', s.description, 500, true);
  if (s.kind !== 'atomic' && s.kind !== 'macro') throw invalid('kind', 'is not supported');
  if (s.kind === 'atomic' && s.produces_child_operations) throw invalid('produces_child_operations', 'atomic capabilities cannot produce child operations');
  if (!['immediate', 'queued', 'long-running'].includes(s.execution)) throw invalid('execution', 'is not supported');
  if (!['unsupported', 'cooperative', 'preemptive'].includes(s.cancellation)) throw invalid('cancellation', 'is not supported');
  if (s.execution === 'immediate' && s.cancellation !== 'unsupported') throw invalid('cancellation', 'immediate capabilities cannot be cancelled');
  if (riskRank(s.risk_floor) < 0) throw invalid('risk_floor', 'is not supported');
  if (durabilityRank(s.required_durability) < 0) throw invalid('required_durability', 'is not supported');
  validateDuration(s.execution_budget, 'execution_budget');
  if (!(s.max_input_bytes >= 1 && s.max_input_bytes <= MAX_INSTANCE_BYTES)) throw invalid('max_input_bytes', 'must be between 1 and 1048576');
  if (!(s.max_output_bytes >= 1 && s.max_output_bytes <= MAX_INSTANCE_BYTES)) throw invalid('max_output_bytes', 'must be between 1 and 1048576');
  if (!(s.max_effects >= 1 && s.max_effects <= 64)) throw invalid('max_effects', 'must be between 1 and 64');
  const scopes = s.required_scopes ?? [];
  if (scopes.length > 32) throw invalid('required_scopes', 'must contain at most 32 values');
  scopes.forEach((scope, i) => validateIdentifier(`required_scopes[${i}]`, scope, true));
}

/** A sealed spec with its three compiled schemas. */
export interface PreparedSpec {
  spec: CapabilitySpec;
  input: CompiledSchema;
  output: CompiledSchema;
  effectSchema: CompiledSchema;
}

/** The reference's prepareCapabilitySpec: sort scopes, check schemas then fields, digest (R35). */
export function prepareCapabilitySpec(spec: CapabilitySpec, c?: Crypto): PreparedSpec {
  const normalized = copySpec(spec);
  const scopes = [...(spec.required_scopes ?? [])].sort(compareUtf8);
  if (scopes.some((s, i) => i > 0 && s === scopes[i - 1])) throw invalid('required_scopes', 'must not contain duplicates');
  normalized.required_scopes = scopes.length > 0 ? scopes : undefined;
  const input = compileSchemaAt('input', normalized.input, c);
  const output = compileSchemaAt('output', normalized.output, c);
  const effectSchema = compileSchemaAt('effect_schema', normalized.effect_schema, c);
  validateSpecFields(normalized);
  const digest = capabilitySpecDigest(normalized, c);
  if (spec.digest && spec.digest !== digest) throw invalid('digest', 'does not match capability spec');
  normalized.digest = digest;
  return { spec: normalized, input, output, effectSchema };
}

/** SealCapabilitySpec: a checked, normalized copy carrying its digest. */
export function sealCapabilitySpec(spec: CapabilitySpec, c?: Crypto): CapabilitySpec {
  return prepareCapabilitySpec(spec, c).spec;
}

/** CapabilitySpec.Validate: the spec must already be sealed (digest present and right, scopes sorted). */
export function validateCapabilitySpec(spec: CapabilitySpec, c?: Crypto): void {
  const sealed = sealCapabilitySpec(spec, c);
  if (spec.digest !== sealed.digest) throw invalid('digest', 'is required and must match capability spec');
  const given = spec.required_scopes ?? [];
  const sorted = sealed.required_scopes ?? [];
  if (given.length !== sorted.length || given.some((s, i) => s !== sorted[i])) throw invalid('required_scopes', 'must be sorted');
}

/** Go's canonical text of a raw JSON object (arguments), after the reference's checks. */
export function canonicalizeJsonObject(field: string, raw: Raw | undefined, maximum: number, c?: Crypto): string {
  const { text } = parseJsonObject(field, raw, maximum);
  return goCanonical(backend(c), text);
}

/** The reference's ActionRequestDigest payload struct, arguments given canonical, as goJsonEncode takes it. */
export function actionRequestPayload(r: ActionRequest, args: string): Record<string, unknown> {
  // The defensive copy already has the struct's member order and drops the omitempty members.
  return { ...copyRequest(r), arguments: new RawJson(args) };
}

/**
 * The digest payload of a valid request: the direct writer's UTF-8, or the general encoder's text for
 * a request it leaves to that encoder.
 */
function requestPayload(r: ActionRequest, c: Crypto): Uint8Array | string {
  // The checks parse the arguments; the canonical form is then all that is left to compute.
  const args = goCanonical(c, checkActionRequest(r));
  return requestPayloadBytes(r, args) ?? goJsonEncode(actionRequestPayload(r, args));
}

/** The digest payload of a valid request (its arguments canonical). */
export function actionRequestDigestText(r: ActionRequest, c?: Crypto): string {
  const p = requestPayload(r, backend(c));
  return typeof p === 'string' ? p : fromUtf8(p);
}

/** action_request_digest (R13): the request is validated first. */
export function actionRequestDigest(r: ActionRequest, c?: Crypto): string {
  const cc = backend(c);
  return sha256Hex(cc, requestPayload(r, cc));
}

/** R19: SHA-256 of the Go JSON of the whole BoundAction. */
export function boundActionFingerprint(b: BoundAction, c?: Crypto): string {
  const copy = copyBoundAction(b);
  copy.normalized_arguments = new RawJson(goCompact(copy.normalized_arguments.text));
  copy.effect_preview = copy.effect_preview.map(compactEffect);
  return sha256Hex(backend(c), goJsonEncode(copy));
}

/** ValidateBoundAction (R46): the binding on its own, its digests re-derived. */
export function validateBoundAction(b: BoundAction, c?: Crypto): void {
  const cc = backend(c);
  for (const f of ['binding_id', 'request_id', 'controller_id', 'actor_id', 'idempotency_key'] as const) validateIdentifier(f, b[f]);
  if (b.task_id) validateIdentifier('task_id', b.task_id);
  if (b.plan_step_ref) {
    if (!b.task_id) throw invalid('plan_step_ref', 'requires task_id');
    validatePlanStepRef(b.plan_step_ref, 'plan_step_ref');
  }
  if (!isSha256Hex(b.request_digest)) throw invalid('request_digest', 'must be a lowercase SHA-256 digest');
  if (!isSha256Hex(b.spec_digest)) throw invalid('spec_digest', 'must be a lowercase SHA-256 digest');
  if (!isSha256Hex(b.effect_digest)) throw invalid('effect_digest', 'must be a lowercase SHA-256 digest');
  validateCapabilityRef(b.capability, 'capability');
  validateEpoch(b.expected_epoch, 'expected_epoch');
  const args = canonicalizeJsonObject('normalized_arguments', b.normalized_arguments, MAX_INSTANCE_BYTES, cc);
  if (args !== b.normalized_arguments.text) throw invalid('normalized_arguments', 'must be canonical JSON');
  validateRefs('requested_targets', b.requested_targets, b.expected_epoch);
  validateRefs('resolved_targets', b.resolved_targets, b.expected_epoch);
  if (!(b.observation_sequence > 0 && b.observation_sequence <= MAX_JSON_SAFE)) {
    throw invalid('observation_sequence', 'must be a positive JSON-safe integer');
  }
  validateTimepoint(b.bound_at, 'bound_at');
  validateTimepoint(b.valid_until, 'valid_until');
  if (b.bound_at.clock !== b.valid_until.clock || b.valid_until.value <= b.bound_at.value) {
    throw invalid('valid_until', 'must use the binding clock and be after bound_at');
  }
  const effects = b.effect_preview ?? [];
  if (effects.length === 0 || effects.length > 64) throw invalid('effect_preview', 'must contain between 1 and 64 values');
  let previous = '';
  effects.forEach((e, i) => {
    try {
      validateEffect(e, b.expected_epoch, cc);
    } catch (err) {
      throw prefixed(`effect_preview[${i}]`, err);
    }
    if (previous !== '' && compareUtf8(e.effect_id, previous) <= 0) throw invalid('effect_preview', 'must be sorted by unique effect_id');
    previous = e.effect_id;
    if (canonicalizeScalarObject('attributes', e.attributes, cc) !== e.attributes.text) {
      throw invalid(`effect_preview[${i}].attributes`, 'must be canonical JSON');
    }
  });
  let digest: string;
  try {
    digest = actionRequestDigest(requestOfBound(b), cc);
  } catch (err) {
    throw prefixed('request', err);
  }
  if (digest !== b.request_digest) throw invalid('request_digest', 'does not match bound request fields');
  if (effectPreviewDigest(effects, cc) !== b.effect_digest) throw invalid('effect_digest', 'does not match effect_preview');
}
