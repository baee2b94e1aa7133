/**
 * `actions/submit`, the sole mutation path (R82–R84): validate → actor.execute → epoch/observation
 * fence → live controller lease → Host bind through the gateway → policy → queued /
 * awaiting-confirmation / rejected; and `actions/confirm` (R85), which approves a challenged
 * operation against a fresh Host snapshot. A Host is never awaited inside `state.mutate`: what was
 * checked before the bind is checked again after it.
 */
import { RawJson } from '../../crypto/gojson.js';
import { goCompact } from '../canon.js';
import { actionRequestDigest } from '../digest.js';
import type {
  ActionBindingResult,
  ActionHostSnapshot,
  ActionRequest,
  ActorPublication,
  BoundAction,
  ConfirmationChallenge,
  ControllerLease,
  HostControlRequest,
  OperationView,
  PolicyDecision,
  Principal,
} from '../types.js';
import { epochEquals, validateActionRequest, validateBoundAction, validateIdentifier, validatePrincipal } from '../validate.js';
import { ActionRequestShape } from '../wire.js';
import { SCOPE_ACTOR_CONTROL, SCOPE_ACTOR_EXECUTE, type WireBody } from './contracts.js';
import { leaseMatchesActor } from './controllers.js';
import { validateActionHostSnapshot } from './gateway.js';
import {
  actorTargetOf,
  checkedAs,
  complete,
  decode,
  fail,
  fingerprint,
  invalidField,
  OperationTargetShape,
  operationView,
  requestKey,
  sameJson,
  storedFingerprint,
  type OpState,
} from './operation-state.js';
import type { OperationTable } from './operation-table.js';

export const MAX_CHILD_OPERATIONS = 1024;
const MAX_OBSERVATION_GAP = 8;

const SubmitShape = { fields: { host_id: 'string', world_id: 'string', action_request: ActionRequestShape, 'parent_operation_id?': 'string' } } as const;

/** A submission as checked and keyed, before the Host binds it. */
interface Submission {
  principal: Principal;
  hostId: string;
  worldId: string;
  request: ActionRequest;
  parentId: string;
  digest: string;
  /** The idempotency index's key. */
  key: string;
  /** What a replay under the same key must match. */
  print: string;
}

/** What the submission was checked against; the same checks after the bind must find the same. */
interface SubmissionSnapshot {
  actor: ActorPublication;
  controller: ControllerLease;
  stopped: boolean;
  stopRevision: number;
}

const recentGap = (ahead: number, behind: number): boolean => ahead >= behind && ahead - behind <= MAX_OBSERVATION_GAP;

// ---- submit (R82–R84) ----

export async function submit(t: OperationTable, principal: Principal, body: WireBody, signal: AbortSignal): Promise<OperationView> {
  const s = readSubmission(principal, body);
  for (;;) {
    if (t.closed) throw fail('unavailable');
    const step = await t.state.mutate(() => beginSubmission(t, s));
    if (step.kind === 'view') return step.view;
    if (step.kind === 'wait') {
      await step.wait;
      continue;
    }
    try {
      return await bindAuthorizeAndQueue(t, s, step.snapshot, signal);
    } finally {
      step.finish();
    }
  }
}

function readSubmission(principal: Principal, body: WireBody): Submission {
  const input = decode<{ host_id: string; world_id: string; action_request: ActionRequest; parent_operation_id?: string }>(body, SubmitShape);
  validateIdentifier('host_id', input.host_id);
  validateIdentifier('world_id', input.world_id);
  validateIdentifier('actor_id', input.action_request.actor_id);
  checkedAs('action_request', () => validateActionRequest(input.action_request));
  if (input.action_request.expected_epoch.world_id !== input.world_id) throw invalidField('action_request.expected_epoch.world_id', 'must equal world_id');
  const parentId = input.parent_operation_id ?? '';
  if (parentId !== '') validateIdentifier('parent_operation_id', parentId);
  validatePrincipal(principal);
  const who = sortedPrincipal(principal);
  // Go keeps the submitted bytes and writes them back through json.Marshal, which compacts them:
  // compacting once here gives the host and every view those same bytes.
  const request: ActionRequest = { ...input.action_request, arguments: new RawJson(goCompact(input.action_request.arguments.text)) };
  const digest = checkedAs('action_request', () => actionRequestDigest(request), 'action_request');
  return {
    principal: who,
    hostId: input.host_id,
    worldId: input.world_id,
    request,
    parentId,
    digest,
    key: requestKey(who.id, request.idempotency_key),
    print: fingerprint(digest, parentId, who),
  };
}

type SubmissionStep =
  { kind: 'view'; view: OperationView } | { kind: 'wait'; wait: Promise<void> } | { kind: 'bind'; snapshot: SubmissionSnapshot; finish: () => void };

/** A replay answers with its operation; a submission in flight under the same key is waited for; else this one flies. */
function beginSubmission(t: OperationTable, s: Submission): SubmissionStep {
  const existing = idempotent(t, s.key, s.print);
  if (existing !== undefined) return { kind: 'view', view: existing };
  const flight = t.flights.get(s.key);
  if (flight !== undefined) {
    if (flight.fingerprint !== s.print) throw fail('conflict', 'idempotency_key was reused with different input');
    return { kind: 'wait', wait: flight.done };
  }
  const snapshot = prepareSubmission(t, s.principal, s.hostId, s.worldId, s.request, s.parentId);
  let finish = (): void => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const mine = { fingerprint: s.print, done };
  t.flights.set(s.key, mine);
  const release = (): void => {
    if (t.flights.get(s.key) === mine) t.flights.delete(s.key);
    finish();
  };
  return { kind: 'bind', snapshot, finish: release };
}

async function bindAuthorizeAndQueue(t: OperationTable, s: Submission, submission: SubmissionSnapshot, signal: AbortSignal): Promise<OperationView> {
  const { request } = s;
  const result = await t.gateway.bind({ host_id: s.hostId, world_id: s.worldId, actor_id: request.actor_id }, request, signal);
  try {
    checkBinding(result.bound_action, result.snapshot, request, s.digest, submission.actor);
  } catch (e) {
    throw fail('stale', `Host binding: ${e instanceof Error ? e.message : String(e)}`);
  }
  const decision = t.policy.evaluate(result.bound_action, {
    now: result.snapshot.now,
    current_epoch: result.snapshot.epoch,
    principal: s.principal,
    server_id: s.hostId,
    owner_id: submission.actor.owner_principal_id,
    emergency_stopped: submission.stopped,
  });
  let stored: OpState | undefined;
  try {
    return await t.state.mutate(() => {
      const queued = queueSubmission(t, s, submission, result, decision);
      if (queued.kind === 'view') return queued.view;
      stored = queued.op;
      return operationView(stored);
    });
  } catch (e) {
    // The write failed after the operation was stored in memory: take it back out.
    if (stored !== undefined && t.ops.get(stored.request.operation_id) === stored) t.unstore(stored);
    throw e;
  }
}

/** After the bind, inside `state.mutate`: the same checks must pass again before the operation is stored. */
function queueSubmission(
  t: OperationTable,
  s: Submission,
  submission: SubmissionSnapshot,
  result: ActionBindingResult,
  decision: PolicyDecision,
): { kind: 'view'; view: OperationView } | { kind: 'stored'; op: OpState } {
  const { request } = s;
  let current: SubmissionSnapshot;
  try {
    current = prepareSubmission(t, s.principal, s.hostId, s.worldId, request, s.parentId);
  } catch (e) {
    t.policy.finalize(decision.decision_id, false);
    throw e;
  }
  if (
    !sameSubmission(submission, current) ||
    !epochEquals(result.snapshot.epoch, current.actor.epoch) ||
    !recentGap(current.actor.observation_seq, result.snapshot.observation_sequence)
  ) {
    t.policy.finalize(decision.decision_id, false);
    throw fail('stale');
  }
  const existing = idempotent(t, s.key, s.print);
  if (existing !== undefined) {
    t.policy.finalize(decision.decision_id, false);
    return { kind: 'view', view: existing };
  }
  t.prune(t.now());
  if (t.ops.size >= t.maxOperations) {
    t.policy.finalize(decision.decision_id, false);
    throw fail('capacity');
  }
  const now = t.now();
  const hostRequest: HostControlRequest = {
    operation_id: t.state.newId('operation'),
    request_id: request.request_id,
    principal: s.principal,
    host_id: s.hostId,
    world_id: s.worldId,
    actor_id: request.actor_id,
    kind: 'action',
    binding: {
      epoch: { ...current.actor.epoch },
      observation_seq: request.observation_sequence,
      authority_revision: current.actor.decision_authority.revision,
      controller_lease_id: current.controller.lease_id,
    },
    action_request: request,
    bound_action: result.bound_action,
    policy_decision: decision,
    ...(s.parentId === '' ? {} : { parent_operation_id: s.parentId }),
    submitted_at_unix_millis: now,
  };
  return { kind: 'stored', op: t.store(s.key, hostRequest, decision) };
}

function prepareSubmission(
  t: OperationTable,
  principal: Principal,
  hostId: string,
  worldId: string,
  request: ActionRequest,
  parentId: string,
): SubmissionSnapshot {
  const actor = t.state.authorizeActor(principal, hostId, worldId, request.actor_id, SCOPE_ACTOR_EXECUTE);
  if (!epochEquals(actor.epoch, request.expected_epoch) || !recentGap(actor.observation_seq, request.observation_sequence)) throw fail('stale');
  const controller = t.state.controllerLease(hostId, worldId, request.actor_id);
  if (controller === undefined) throw fail('lease_expired');
  if (controller.controller_id !== request.controller_id || controller.principal_id !== principal.id || !leaseMatchesActor(controller, actor))
    throw fail('forbidden');
  validateParent(t, parentId, principal, hostId, worldId, actor, controller.lease_id, request.task_id ?? '');
  const stop = t.state.emergencyStop(hostId, worldId, request.actor_id);
  return { actor, controller, stopped: stop?.active ?? false, stopRevision: stop?.revision ?? 0 };
}

/** The stored operation's submission checked as it stands now; a failure is kept, not thrown. */
function resubmission(t: OperationTable, op: OpState): { current: SubmissionSnapshot | undefined; failure: unknown } {
  try {
    const r = op.request;
    return { current: prepareSubmission(t, r.principal, r.host_id, r.world_id, r.action_request, r.parent_operation_id ?? ''), failure: undefined };
  } catch (e) {
    return { current: undefined, failure: e };
  }
}

/** R84: a child belongs to a running macro of the same principal, actor, controller lease and task. */
function validateParent(
  t: OperationTable,
  parentId: string,
  principal: Principal,
  hostId: string,
  worldId: string,
  actor: ActorPublication,
  leaseId: string,
  taskId: string,
): void {
  if (parentId === '') return;
  const parent = t.ops.get(parentId);
  if (parent === undefined) throw fail('not_found');
  const r = parent.request;
  if (
    complete(parent) ||
    r.principal.id !== principal.id ||
    r.host_id !== hostId ||
    r.world_id !== worldId ||
    r.actor_id !== actor.actor_id ||
    r.binding.controller_lease_id !== leaseId
  ) {
    throw fail('conflict');
  }
  if (parent.status !== 'accepted' && parent.status !== 'running') throw fail('conflict');
  if (taskId === '' || r.action_request.task_id !== taskId || r.bound_action.task_id !== taskId) throw fail('conflict');
  const spec = actor.capabilities?.specs.find(
    (s) =>
      s.capability.id === r.bound_action.capability.id && s.capability.version === r.bound_action.capability.version && s.digest === r.bound_action.spec_digest,
  );
  if (spec === undefined || spec.kind !== 'macro' || !spec.produces_child_operations) throw fail('conflict');
  if (parent.children.length >= MAX_CHILD_OPERATIONS) throw fail('capacity');
}

function idempotent(t: OperationTable, key: string, print: string): OperationView | undefined {
  const id = t.requests.get(key);
  if (id === undefined) return undefined;
  const op = t.ops.get(id);
  if (op === undefined || storedFingerprint(op) !== print) throw fail('conflict', 'idempotency_key was reused with different input');
  t.refresh(op);
  return operationView(op);
}

// ---- confirm (R85) ----

export async function confirm(t: OperationTable, approver: Principal, body: WireBody, signal: AbortSignal): Promise<OperationView> {
  const { operation_id: id } = decode<{ operation_id: string }>(body, OperationTargetShape);
  validatePrincipal(approver);
  validateIdentifier('operation_id', id);
  const prepared = await t.state.mutate(() => openConfirmation(t, approver, id));
  if (prepared.kind === 'view') return prepared.view;
  const { op, challenge, ownerId } = prepared;
  try {
    const snapshot = await confirmationSnapshot(t, op, signal);
    t.policy.approve(challenge.challenge_id, approver, snapshot.now);
    const decision = t.policy.evaluate(op.request.bound_action, {
      now: snapshot.now,
      current_epoch: snapshot.epoch,
      principal: op.request.principal,
      server_id: op.request.host_id,
      owner_id: ownerId,
      emergency_stopped: false,
      confirmation_id: challenge.challenge_id,
    });
    return await t.state.mutate(() => settleConfirmation(t, id, op, snapshot, decision));
  } finally {
    t.confirming.delete(id);
    if (op.status !== 'awaiting-confirmation') t.discardConfirmation(op);
  }
}

/** The approver may control the actor and the submission still stands; a stale one ends here. */
function openConfirmation(
  t: OperationTable,
  approver: Principal,
  id: string,
): { kind: 'view'; view: OperationView } | { kind: 'confirm'; op: OpState; challenge: ConfirmationChallenge; ownerId: string } {
  const op = t.ops.get(id);
  if (op === undefined) throw fail('not_found');
  const challenge = op.request.policy_decision.confirmation_challenge;
  if (op.status !== 'awaiting-confirmation' || challenge === undefined) {
    if (complete(op)) return { kind: 'view', view: operationView(op) };
    throw fail('conflict');
  }
  if (t.confirming.has(id)) throw fail('conflict');
  t.state.authorizeActor(approver, op.request.host_id, op.request.world_id, op.request.actor_id, SCOPE_ACTOR_CONTROL);
  const { current, failure } = resubmission(t, op);
  if (current === undefined || current.stopped || current.controller.lease_id !== op.request.binding.controller_lease_id) {
    op.status = 'stale';
    t.finalizePolicy(op, false);
    t.touch(op, t.now());
    t.changed();
    throw failure ?? fail('stale');
  }
  t.confirming.add(id);
  return { kind: 'confirm', op, challenge, ownerId: current.actor.owner_principal_id };
}

/** The Host's snapshot must still be the one the operation was bound at; otherwise the operation is stale. */
async function confirmationSnapshot(t: OperationTable, op: OpState, signal: AbortSignal): Promise<ActionHostSnapshot> {
  const bound = op.request.bound_action;
  const snapshot = await t.gateway.snapshot(actorTargetOf(op), signal);
  try {
    validateActionHostSnapshot(snapshot, 'snapshot');
  } catch (e) {
    throw fail('invalid', `Host snapshot: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!epochEquals(snapshot.epoch, bound.expected_epoch) || snapshot.observation_sequence !== bound.observation_sequence) {
    await t.state.mutate((): never => {
      if (op.status === 'awaiting-confirmation') {
        op.status = 'stale';
        t.touch(op, t.now());
        t.changed();
      }
      throw fail('stale');
    });
  }
  return snapshot;
}

/** Inside `state.mutate`: the new decision is recorded, and an allowed operation queued if nothing moved meanwhile. */
function settleConfirmation(t: OperationTable, id: string, op: OpState, snapshot: ActionHostSnapshot, decision: PolicyDecision): OperationView {
  if (t.ops.get(id) !== op) {
    t.policy.finalize(decision.decision_id, false);
    throw fail('not_found');
  }
  if (op.status !== 'awaiting-confirmation') {
    t.policy.finalize(decision.decision_id, false);
    return operationView(op);
  }
  if (decision.result !== 'allow') {
    op.request = { ...op.request, policy_decision: decision };
    if (decision.result === 'deny') {
      op.status = 'rejected';
      op.rejection = { code: decision.reason_code, message: decision.human_summary };
    }
    t.touch(op, t.now());
    t.changed();
    return operationView(op);
  }
  const { current, failure } = resubmission(t, op);
  if (
    current === undefined ||
    current.stopped ||
    !epochEquals(current.actor.epoch, snapshot.epoch) ||
    current.actor.observation_seq !== snapshot.observation_sequence ||
    current.controller.lease_id !== op.request.binding.controller_lease_id
  ) {
    t.policy.finalize(decision.decision_id, false);
    op.status = 'stale';
    t.touch(op, t.now());
    t.changed();
    throw failure ?? fail('stale');
  }
  op.request = { ...op.request, policy_decision: decision };
  op.status = 'queued';
  t.touch(op, t.now());
  t.changed();
  return operationView(op);
}

// ---- checks ----

function sortedPrincipal(p: Principal): Principal {
  const scopes = [...(p.granted_scopes ?? [])].sort();
  return scopes.length > 0 ? { id: p.id, granted_scopes: scopes } : { id: p.id };
}

function sameSubmission(left: SubmissionSnapshot, right: SubmissionSnapshot): boolean {
  return (
    epochEquals(left.actor.epoch, right.actor.epoch) &&
    recentGap(right.actor.observation_seq, left.actor.observation_seq) &&
    left.actor.owner_principal_id === right.actor.owner_principal_id &&
    sameJson(left.controller, right.controller) &&
    left.stopped === right.stopped &&
    left.stopRevision === right.stopRevision
  );
}

/** The Host's binding must be the one asked for, at the published actor's epoch and observation window. */
function checkBinding(
  bound: BoundAction,
  snapshot: { now: BoundAction['bound_at']; epoch: BoundAction['expected_epoch']; observation_sequence: number },
  request: ActionRequest,
  digest: string,
  actor: ActorPublication,
): void {
  validateActionHostSnapshot(snapshot, 'snapshot');
  validateBoundAction(bound);
  if (!epochEquals(snapshot.epoch, actor.epoch) || !recentGap(actor.observation_seq, snapshot.observation_sequence))
    throw new Error('Host snapshot does not match the published Actor');
  if (
    bound.request_digest !== digest ||
    bound.request_id !== request.request_id ||
    bound.controller_id !== request.controller_id ||
    bound.actor_id !== request.actor_id ||
    bound.capability.id !== request.capability.id ||
    bound.capability.version !== request.capability.version ||
    bound.spec_digest !== request.spec_digest ||
    !epochEquals(bound.expected_epoch, request.expected_epoch) ||
    !recentGap(bound.observation_sequence, request.observation_sequence) ||
    (bound.task_id ?? '') !== (request.task_id ?? '') ||
    bound.idempotency_key !== request.idempotency_key ||
    !sameJson(bound.requested_targets ?? [], request.target_refs ?? [])
  ) {
    throw new Error('BoundAction does not match ActionRequest');
  }
  if (bound.bound_at.clock !== snapshot.now.clock || bound.bound_at.value !== snapshot.now.value)
    throw new Error('BoundAction bound_at does not match Host snapshot');
}
