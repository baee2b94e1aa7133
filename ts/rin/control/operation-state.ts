/**
 * One operation of the rin.control/v2 server as the operations half holds it, and what is derived
 * from it alone: completeness, the public `OperationView` with its `op2:` cursor, and the stored
 * record it is written as and restored from (R96's restart rules).
 */
import { canonicalGoJson, RawJson } from '../../crypto/gojson.js';
import { actionRequestDigest } from '../digest.js';
import { RinError } from '../errors.js';
import { validateActionOutcome, validateActionRun } from '../run.js';
import type {
  ActionOutcome,
  ActionRun,
  ActionRunStatus,
  HostAcknowledgement,
  HostControlRequest,
  OperationStatus,
  OperationView,
  Principal,
} from '../types.js';
import { validateActionRequest, validateBoundAction, validatePrincipal } from '../validate.js';
import { decodeWire, type Shape } from '../wire.js';
import type { WireBody } from './contracts.js';
import { clonePolicyDecision } from './policy.js';
import type { OperationRecord, OperationTimelineItem } from './store.js';

// ---- request bodies and errors in the reference's words ----

export const decode = <T>(body: WireBody, shape: Shape): T => decodeWire<T>(body.text, body.root, shape);
export const OperationTargetShape = { fields: { operation_id: 'string' } } as const;

export const fail = (code: RinError['code'], detail = ''): RinError => new RinError(code, detail);
export const invalidField = (field: string, reason: string): RinError => new RinError('invalid', `${field}: ${reason}`, field);

/**
 * Runs a model check; an `invalid` it throws is said under `prefix` (`<prefix>: <message>`), its field
 * path under `prefix` too, or `field` when given.
 */
export function checkedAs<T>(prefix: string, check: () => T, field?: string): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof RinError && e.code === 'invalid') throw new RinError('invalid', `${prefix}: ${e.message}`, field ?? `${prefix}.${e.field ?? ''}`);
    throw e;
  }
}

// ---- operation state ----

export interface OpState {
  request: HostControlRequest;
  status: OperationStatus;
  attempts: number;
  cancel: boolean;
  ack: HostAcknowledgement | undefined;
  run: ActionRun | undefined;
  outcome: ActionOutcome | undefined;
  output: RawJson | undefined;
  rejection: { code: string; message: string };
  idempotency: string;
  createdAt: number;
  updatedAt: number;
  children: string[];
  timeline: OperationTimelineItem[];
  timelineTruncatedBefore: number;
}

export const TERMINAL_STATUSES: ReadonlySet<OperationStatus> = new Set(['succeeded', 'failed', 'cancelled', 'interrupted', 'stale', 'rejected']);

/** Outcome-unknown counts as complete: it is no longer delivered or cancellable, only reconcilable. */
export function complete(op: OpState): boolean {
  if (op.status === 'outcome-unknown' || op.status === 'rejected') return true;
  if (op.status === 'stale' && !op.ack?.accepted) return true;
  if (op.status === 'cancelled' && op.attempts === 0 && op.outcome === undefined) return true;
  return op.outcome !== undefined;
}
export const reconciliationPending = (op: OpState): boolean => op.status === 'outcome-unknown' && op.outcome === undefined;
export const settled = (op: OpState): boolean => complete(op) && !reconciliationPending(op);
export const executionConfirmed = (op: OpState): boolean => op.status === 'succeeded' && op.outcome !== undefined;

export function statusFromRun(status: ActionRunStatus): OperationStatus {
  return status === 'queued' ? 'accepted' : status;
}

function operationCursor(op: OpState): string {
  return `op2:${op.status}:${op.attempts}:${op.cancel}:${op.updatedAt}:${op.run?.status ?? ''}:${op.run?.progress_seq ?? 0}:${op.outcome !== undefined}:${op.children.length}`;
}

export const requestKey = (principalId: string, idempotencyKey: string): string => `${principalId}\0action\0${idempotencyKey}`;

export function fingerprint(digest: string, parentId: string, principal: Principal): string {
  return [digest, parentId, principal.id, [...(principal.granted_scopes ?? [])].sort().join(',')].join('\0');
}

/** The fingerprint of a stored operation's submission ('' when its request no longer digests). */
export function storedFingerprint(op: OpState): string {
  let digest = '';
  try {
    digest = actionRequestDigest(op.request.action_request);
  } catch {
    return '';
  }
  return fingerprint(digest, op.request.parent_operation_id ?? '', op.request.principal);
}

export const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function actorTargetOf(op: OpState): { host_id: string; world_id: string; actor_id: string } {
  return { host_id: op.request.host_id, world_id: op.request.world_id, actor_id: op.request.actor_id };
}

export function structuredCloneOutcome(o: ActionOutcome): ActionOutcome {
  const out: ActionOutcome = { ...o, epoch: { ...o.epoch }, occurred_at: { ...o.occurred_at } };
  if (o.evidence !== undefined) out.evidence = o.evidence.map((r) => ({ ...r, epoch: { ...r.epoch } }));
  return out;
}

export function operationView(op: OpState): OperationView {
  const v: Partial<OperationView> = {
    operation_id: op.request.operation_id,
    request_id: op.request.request_id,
    host_id: op.request.host_id,
    world_id: op.request.world_id,
    actor_id: op.request.actor_id,
    kind: 'action',
  };
  if (op.request.binding.controller_lease_id) v.controller_lease_id = op.request.binding.controller_lease_id;
  if (op.request.parent_operation_id) v.parent_operation_id = op.request.parent_operation_id;
  if (op.children.length > 0) v.child_operation_ids = [...op.children];
  v.action_request = op.request.action_request;
  v.bound_action = op.request.bound_action;
  v.policy_decision = clonePolicyDecision(op.request.policy_decision);
  v.status = op.status;
  v.cursor = operationCursor(op);
  v.terminal = settled(op);
  v.reconciliation_pending = reconciliationPending(op);
  v.execution_confirmed = executionConfirmed(op);
  v.cancel_requested = op.cancel;
  v.delivery_attempts = op.attempts;
  if (op.run !== undefined) v.run = { ...op.run, updated_at: { ...op.run.updated_at } };
  if (op.outcome !== undefined) v.outcome = structuredCloneOutcome(op.outcome);
  // The reference decodes the output into a map and encodes it again: members sorted.
  if (op.output !== undefined) v.output = new RawJson(canonicalGoJson(op.output.text));
  if (op.rejection.code !== '') v.rejection_code = op.rejection.code;
  if (op.rejection.message !== '') v.rejection_message = op.rejection.message;
  v.created_at_unix_millis = op.createdAt;
  v.updated_at_unix_millis = op.updatedAt;
  return v as OperationView;
}

// ---- the stored record ----

export function recordOf(op: OpState): OperationRecord {
  const r: OperationRecord = {
    request: op.request,
    status: op.status,
    attempts: op.attempts,
    cancel: op.cancel,
    created_at_unix_millis: op.createdAt,
    updated_at_unix_millis: op.updatedAt,
    timeline: op.timeline,
    timeline_truncated_before: op.timelineTruncatedBefore,
  };
  if (op.ack !== undefined) r.ack = op.ack;
  if (op.run !== undefined) r.run = op.run;
  if (op.outcome !== undefined) r.outcome = op.outcome;
  if (op.output !== undefined) r.output = op.output;
  return r;
}

/**
 * R96 restart rules: a refused ack → rejected; an outcome decides the status; a policy denial →
 * rejected; locally cancelled stays cancelled; accepted without a run report stays accepted, with
 * one (and no outcome) → outcome-unknown; anything never accepted → stale.
 */
export function restoreOperation(r: OperationRecord): OpState {
  const request = r.request;
  validatePrincipal(request.principal);
  validateActionRequest(request.action_request);
  validateBoundAction(request.bound_action);
  if (r.run !== undefined) validateActionRun(r.run);
  if (r.outcome !== undefined) validateActionOutcome(r.outcome);
  const decision = request.policy_decision;
  const op: OpState = {
    request,
    status: r.status,
    attempts: r.attempts,
    cancel: r.cancel,
    ack: r.ack,
    run: r.run,
    outcome: r.outcome,
    output: r.output,
    rejection: { code: '', message: '' },
    idempotency: requestKey(request.principal.id, request.action_request.idempotency_key),
    createdAt: r.created_at_unix_millis,
    updatedAt: r.updated_at_unix_millis,
    children: [],
    timeline: r.timeline,
    timelineTruncatedBefore: r.timeline_truncated_before,
  };
  if (op.ack !== undefined && !op.ack.accepted) {
    op.rejection = { code: op.ack.code ?? '', message: op.ack.message ?? '' };
    op.status = 'rejected';
  } else if (op.outcome !== undefined) {
    op.status = statusFromRun(op.outcome.status);
  } else if (decision.result === 'deny') {
    op.status = 'rejected';
    op.rejection = { code: decision.reason_code, message: decision.human_summary };
  } else if (op.status === 'cancelled' && op.attempts === 0 && op.ack === undefined) {
    op.status = 'cancelled';
  } else if (op.ack?.accepted === true) {
    op.status = op.run === undefined && r.status === 'accepted' ? 'accepted' : 'outcome-unknown';
  } else {
    op.status = 'stale';
  }
  return op;
}
