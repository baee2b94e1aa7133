/**
 * Fresh copies of rin values, built member by member in the Go reference's declaration order with its
 * omitempty members dropped when empty. Two uses: defensive copies (a caller's later mutation cannot
 * reach a registry or a BoundAction), and values whose `goJsonEncode` is byte-identical to Go's
 * `json.Marshal` whatever shape the caller built them in (extra members are not copied).
 * RawJson is immutable and shared.
 */
import type { ActionRequest, BoundAction, CapabilityRef, CapabilitySpec, Duration, Effect, Epoch, HostRef, PlanStepRef, Schema, Timepoint } from './types.js';

const nonEmpty = <T>(list: readonly T[] | undefined, f: (x: T) => T): T[] | undefined => (list && list.length > 0 ? list.map(f) : undefined);
const str = (s: string | undefined): string | undefined => (s ? s : undefined);

export const copyEpoch = (e: Epoch): Epoch => ({ session_id: e.session_id, world_id: e.world_id, host: e.host, world: e.world, timeline: e.timeline });
export const copyTimepoint = (t: Timepoint): Timepoint => ({ clock: t.clock, value: t.value });
export const copyDuration = (d: Duration): Duration => ({ clock: d.clock, value: d.value });
export const copyCapabilityRef = (r: CapabilityRef): CapabilityRef => ({ id: r.id, version: r.version });
export const copyPlanStepRef = (r: PlanStepRef): PlanStepRef => ({ plan_id: r.plan_id, plan_revision: r.plan_revision, step_id: r.step_id });
export const copyHostRef = (r: HostRef): HostRef => ({ namespace: r.namespace, type: r.type, key: r.key, ephemeral: r.ephemeral, epoch: copyEpoch(r.epoch) });
/** A ref list, undefined when empty (omitempty). */
export const copyRefs = (refs: readonly HostRef[] | undefined): HostRef[] | undefined => nonEmpty(refs, copyHostRef);
export const copySchema = (s: Schema): Schema => ({ dialect: s.dialect, document: s.document, sha256: s.sha256 });

export function copySpec(s: CapabilitySpec): CapabilitySpec {
  return {
    capability: copyCapabilityRef(s.capability),
    description: s.description,
    input: copySchema(s.input),
    output: copySchema(s.output),
    effect_schema: copySchema(s.effect_schema),
    kind: s.kind,
    execution: s.execution,
    cancellation: s.cancellation,
    risk_floor: s.risk_floor,
    required_durability: s.required_durability,
    required_scopes: nonEmpty(s.required_scopes, (x) => x),
    execution_budget: copyDuration(s.execution_budget),
    max_input_bytes: s.max_input_bytes,
    max_output_bytes: s.max_output_bytes,
    max_effects: s.max_effects,
    produces_child_operations: s.produces_child_operations,
    digest: s.digest,
  };
}

export function copyEffect(e: Effect): Effect {
  return {
    effect_id: e.effect_id,
    kind: e.kind,
    operation: e.operation,
    subject_ref: e.subject_ref ? copyHostRef(e.subject_ref) : undefined,
    target_ref: e.target_ref ? copyHostRef(e.target_ref) : undefined,
    tags: nonEmpty(e.tags, (x) => x),
    ownership: e.ownership,
    scope: e.scope,
    quantity: e.quantity ? e.quantity : undefined,
    unit: str(e.unit),
    reversible: e.reversible,
    risk: e.risk,
    attributes: e.attributes,
  };
}

export function copyRequest(r: ActionRequest): ActionRequest {
  return {
    request_id: r.request_id,
    controller_id: r.controller_id,
    actor_id: r.actor_id,
    capability: copyCapabilityRef(r.capability),
    spec_digest: r.spec_digest,
    arguments: r.arguments,
    target_refs: copyRefs(r.target_refs),
    expected_epoch: copyEpoch(r.expected_epoch),
    observation_sequence: r.observation_sequence,
    task_id: str(r.task_id),
    plan_step_ref: r.plan_step_ref ? copyPlanStepRef(r.plan_step_ref) : undefined,
    idempotency_key: r.idempotency_key,
  };
}

export function copyBoundAction(b: BoundAction): BoundAction {
  return {
    binding_id: b.binding_id,
    request_id: b.request_id,
    request_digest: b.request_digest,
    controller_id: b.controller_id,
    actor_id: b.actor_id,
    capability: copyCapabilityRef(b.capability),
    spec_digest: b.spec_digest,
    normalized_arguments: b.normalized_arguments,
    requested_targets: copyRefs(b.requested_targets),
    resolved_targets: copyRefs(b.resolved_targets),
    expected_epoch: copyEpoch(b.expected_epoch),
    observation_sequence: b.observation_sequence,
    task_id: str(b.task_id),
    plan_step_ref: b.plan_step_ref ? copyPlanStepRef(b.plan_step_ref) : undefined,
    idempotency_key: b.idempotency_key,
    effect_preview: (b.effect_preview ?? []).map(copyEffect),
    effect_digest: b.effect_digest,
    bound_at: copyTimepoint(b.bound_at),
    valid_until: copyTimepoint(b.valid_until),
  };
}

/** The request a BoundAction was sealed from (its arguments already canonical). */
export function requestOfBound(b: BoundAction): ActionRequest {
  return {
    request_id: b.request_id,
    controller_id: b.controller_id,
    actor_id: b.actor_id,
    capability: copyCapabilityRef(b.capability),
    spec_digest: b.spec_digest,
    arguments: b.normalized_arguments,
    target_refs: copyRefs(b.requested_targets),
    expected_epoch: copyEpoch(b.expected_epoch),
    observation_sequence: b.observation_sequence,
    task_id: str(b.task_id),
    plan_step_ref: b.plan_step_ref ? copyPlanStepRef(b.plan_step_ref) : undefined,
    idempotency_key: b.idempotency_key,
  };
}
