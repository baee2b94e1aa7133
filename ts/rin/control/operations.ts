/**
 * The operations half of the rin.control/v2 server: `actions/submit` is the sole mutation path
 * (validate → actor.execute → epoch/observation fence → live controller lease → Host bind through
 * the gateway → policy → queued / awaiting-confirmation / rejected), then confirmation, delivery
 * through `host/poll`, acknowledgement, monotonic run reports, the terminal outcome, cancellation,
 * expiry and pruning, operation views with `op2:` cursors, bounded waits and the task timeline.
 *
 * Every mutation runs inside `state.mutate`, which serialises it with the core's mutations and
 * writes the changed rows (`flush`) in one transaction before the response. Long waits never hold
 * it: they wait on the change feed and re-read.
 */
import { canonicalGoJson, RawJson } from '../../crypto/gojson.js';
import type { Db } from '../../server/db.js';
import { goCompact } from '../canon.js';
import { actionRequestDigest } from '../digest.js';
import { RinError } from '../errors.js';
import { canTransitionActionRun, validateActionOutcome, validateActionRun } from '../run.js';
import type {
  ActionOutcome,
  ActionRequest,
  ActionRun,
  ActionRunStatus,
  ActorPublication,
  BoundAction,
  ControllerLease,
  HostAcknowledgement,
  HostControlBatch,
  HostControlRequest,
  HostGatewayResult,
  OperationStatus,
  OperationView,
  OperationUpdate,
  PolicyDecision,
  Principal,
  TaskTimelineEvent,
  TaskTimelinePage,
  TaskTimelineUpdate,
  WorldPublication,
} from '../types.js';
import { epochEquals, validateActionRequest, validateBoundAction, validateIdentifier, validatePrincipal } from '../validate.js';
import { ActionOutcomeShape, ActionRequestShape, ActionRunShape, BoundActionShape, decodeWire, EpochShape, TimepointShape, type Shape } from '../wire.js';
import { hasScope } from './auth.js';
import {
  MAX_WAIT_MILLIS,
  SCOPE_ACTOR_CONTROL,
  SCOPE_ACTOR_EXECUTE,
  SCOPE_HOST_ADMIN,
  SCOPE_OPERATION_CANCEL,
  type ControlOps,
  type ControlState,
  type OpsFactory,
  type OpsFactoryContext,
  type PollInput,
  type WireBody,
} from './contracts.js';
import { leaseMatchesActor } from './controllers.js';
import { validateControlText } from './hosts.js';
import { ChangeFeed, HostGateway, validateActionHostSnapshot } from './gateway.js';
import { clonePolicyDecision, parsePolicyConfig, PolicyEngine, type PolicyConfig } from './policy.js';
import { loadStoredState, saveMeta, saveOperations, OPERATION_STORE_VERSION, type OperationRecord, type OperationTimelineItem } from './store.js';
import { buildTimelinePage, normalizeTimelineQuery, parseTimelineCursor, type TimelineRecord } from './timeline.js';

export const DEFAULT_MAX_OPERATIONS = 1024;
export const HARD_MAX_OPERATIONS = 65_536;
export const DEFAULT_OPERATION_TTL_MILLIS = 30 * 60_000;
export const MAX_CHILD_OPERATIONS = 1024;
export const MAX_POLL_ITEMS = 64;
const MAX_OBSERVATION_GAP = 8;
const MAX_TIMELINE_EVENTS = 64;
const MAX_OUTPUT_BYTES = 64 << 10;
const MAX_CURSOR_BYTES = 256;

export interface OperationsOptions {
  maxOperations?: number;
  operationTtlMillis?: number;
}

// ---- request bodies ----

const lease = { host_id: 'string', lease_id: 'string' } as const;
const SnapshotShape = { fields: { now: TimepointShape, epoch: EpochShape, observation_sequence: 'u64' } } as const;
const SubmitShape = { fields: { host_id: 'string', world_id: 'string', action_request: ActionRequestShape, 'parent_operation_id?': 'string' } } as const;
const OperationTargetShape = { fields: { operation_id: 'string' } } as const;
const WaitShape = { fields: { operation_id: 'string', 'after_cursor?': 'string', wait_millis: 'u32' } } as const;
const TimelineQueryShape = { fields: { task_id: 'string', 'after_cursor?': 'string', 'limit?': 'u32' } } as const;
const TimelineWaitShape = { fields: { task_id: 'string', 'after_cursor?': 'string', 'limit?': 'u32', wait_millis: 'u32' } } as const;
const AckShape = {
  fields: { ...lease, acknowledgement: { fields: { operation_id: 'string', accepted: 'bool', 'code?': 'string', 'message?': 'string' } } },
} as const;
const RunShape = { fields: { ...lease, run: ActionRunShape } } as const;
const OutcomeShape = { fields: { ...lease, outcome: ActionOutcomeShape, 'output?': 'raw' } } as const;
const GatewayResultShape = {
  fields: {
    ...lease,
    result: {
      fields: {
        gateway_request_id: 'string',
        'binding?': { ptr: { fields: { bound_action: BoundActionShape, snapshot: SnapshotShape } } },
        'snapshot?': { ptr: SnapshotShape },
        'error_code?': 'string',
        'error_message?': 'string',
      },
    },
  },
} as const;

const decode = <T>(body: WireBody, shape: Shape): T => decodeWire<T>(body.text, body.root, shape);

// ---- errors in the reference's words ----

const fail = (code: RinError['code'], detail = ''): RinError => new RinError(code, detail);
const invalidField = (field: string, reason: string): RinError => new RinError('invalid', `${field}: ${reason}`, field);

// ---- operation state ----

interface OpState {
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

interface SubmissionSnapshot {
  actor: ActorPublication;
  controller: ControllerLease;
  stopped: boolean;
  stopRevision: number;
}

const TERMINAL_STATUSES: ReadonlySet<OperationStatus> = new Set(['succeeded', 'failed', 'cancelled', 'interrupted', 'stale', 'rejected']);

/** Outcome-unknown counts as complete: it is no longer delivered or cancellable, only reconcilable. */
function complete(op: OpState): boolean {
  if (op.status === 'outcome-unknown' || op.status === 'rejected') return true;
  if (op.status === 'stale' && !op.ack?.accepted) return true;
  if (op.status === 'cancelled' && op.attempts === 0 && op.outcome === undefined) return true;
  return op.outcome !== undefined;
}
const reconciliationPending = (op: OpState): boolean => op.status === 'outcome-unknown' && op.outcome === undefined;
const settled = (op: OpState): boolean => complete(op) && !reconciliationPending(op);
const executionConfirmed = (op: OpState): boolean => op.status === 'succeeded' && op.outcome !== undefined;
const recentGap = (ahead: number, behind: number): boolean => ahead >= behind && ahead - behind <= MAX_OBSERVATION_GAP;

function statusFromRun(status: ActionRunStatus): OperationStatus {
  return status === 'queued' ? 'accepted' : status;
}

function operationCursor(op: OpState): string {
  return `op2:${op.status}:${op.attempts}:${op.cancel}:${op.updatedAt}:${op.run?.status ?? ''}:${op.run?.progress_seq ?? 0}:${op.outcome !== undefined}:${op.children.length}`;
}

const requestKey = (principalId: string, idempotencyKey: string): string => `${principalId}\0action\0${idempotencyKey}`;

function sortedPrincipal(p: Principal): Principal {
  const scopes = [...(p.granted_scopes ?? [])].sort();
  return scopes.length > 0 ? { id: p.id, granted_scopes: scopes } : { id: p.id };
}

function fingerprint(digest: string, parentId: string, principal: Principal): string {
  return [digest, parentId, principal.id, [...(principal.granted_scopes ?? [])].sort().join(',')].join('\0');
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function actorTargetOf(op: OpState): { host_id: string; world_id: string; actor_id: string } {
  return { host_id: op.request.host_id, world_id: op.request.world_id, actor_id: op.request.actor_id };
}

// ---- the service ----

export class Operations implements ControlOps {
  readonly policy: PolicyEngine;
  private readonly feed = new ChangeFeed();
  private readonly gateway: HostGateway;
  private readonly ops = new Map<string, OpState>();
  private readonly requests = new Map<string, string>();
  private readonly flights = new Map<string, { fingerprint: string; done: Promise<void> }>();
  private readonly confirming = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly deleted = new Set<string>();
  private timelineSequence = 0;
  private metaDirty = false;
  /** The batch of the flush in progress, kept until its transaction commits or fails. */
  private readonly writing = { ids: new Set<string>(), deleted: new Set<string>() };
  /** Each rin_meta row's text as last committed. */
  private readonly metaWritten = new Map<string, string>();
  private closed = false;
  private readonly maxOperations: number;
  private readonly ttl: number;

  private constructor(
    private readonly state: ControlState,
    policy: PolicyEngine,
    options: OperationsOptions,
  ) {
    this.policy = policy;
    this.gateway = new HostGateway(state, this.feed);
    const max = options.maxOperations ?? DEFAULT_MAX_OPERATIONS;
    this.maxOperations = Math.min(max > 0 ? max : DEFAULT_MAX_OPERATIONS, HARD_MAX_OPERATIONS);
    this.ttl = options.operationTtlMillis ?? DEFAULT_OPERATION_TTL_MILLIS;
  }

  /** Loads the stored operations and applies the restart rules (R96). */
  static async open(ctx: OpsFactoryContext): Promise<Operations> {
    const opts = (ctx.options ?? {}) as OperationsOptions;
    const ops = new Operations(ctx.state, policyEngineOf(ctx.policy), opts);
    await ops.restore(ctx.db);
    return ops;
  }

  private now(): number {
    return this.state.clock.now();
  }

  private changed(): void {
    this.feed.bump();
    this.state.notify();
  }

  private markDirty(op: OpState): void {
    this.dirty.add(op.request.operation_id);
  }

  // ---- persistence ----

  hasDirty(): boolean {
    return this.dirty.size > 0 || this.deleted.size > 0 || this.metaDirty;
  }

  async flush(tx: Db): Promise<void> {
    const records: OperationRecord[] = [];
    for (const id of this.dirty) {
      const op = this.ops.get(id);
      if (op !== undefined) records.push(recordOf(op));
    }
    const batch = this.writing;
    for (const id of this.dirty) batch.ids.add(id);
    for (const id of this.deleted) batch.deleted.add(id);
    const deleted = [...this.deleted];
    const meta = this.metaDirty || records.length > 0 || deleted.length > 0;
    this.dirty.clear();
    this.deleted.clear();
    this.metaDirty = false;
    if (!meta) return;
    await saveOperations(tx, records, deleted);
    // Only the meta rows whose text moved are written (the version is written once).
    const current: Record<string, string> = {
      version: OPERATION_STORE_VERSION,
      timeline_sequence: String(this.timelineSequence),
      policy_state: JSON.stringify(this.policy.snapshotState()),
    };
    const changed: Record<string, string> = {};
    for (const [key, value] of Object.entries(current)) {
      if (this.metaWritten.get(key) !== value) changed[key] = value;
    }
    await saveMeta(tx, changed);
    for (const [key, value] of Object.entries(changed)) this.metaWritten.set(key, value);
  }

  /** A batch that was not committed is written again with the next one; every meta row too. */
  afterFlush(committed: boolean): void {
    const batch = this.writing;
    if (!committed) {
      for (const id of batch.ids) if (this.ops.has(id)) this.dirty.add(id);
      for (const id of batch.deleted) if (!this.ops.has(id)) this.deleted.add(id);
      this.metaWritten.clear();
      this.metaDirty = true;
    }
    batch.ids.clear();
    batch.deleted.clear();
  }

  private async restore(db: Db): Promise<void> {
    const stored = await loadStoredState(db);
    this.timelineSequence = stored.timelineSequence;
    for (const [key, value] of stored.meta) this.metaWritten.set(key, value);
    const now = this.now();
    const allowIds = new Set<string>();
    const persistedStatus = new Map<string, OperationStatus>();
    for (const record of stored.operations) {
      const op = restoreOperation(record);
      const id = op.request.operation_id;
      if (this.ops.has(id) || this.requests.has(op.idempotency)) throw new RinError('internal', `stored operation ${id} is duplicated`);
      this.ops.set(id, op);
      this.requests.set(op.idempotency, id);
      persistedStatus.set(id, record.status);
      const decision = op.request.policy_decision;
      if (decision.result === 'allow') allowIds.add(decision.decision_id);
      for (const item of op.timeline) {
        if (item.sequence > this.timelineSequence) throw new RinError('internal', 'stored timeline sequence is behind its events');
      }
    }
    for (const op of this.ops.values()) {
      const parentId = op.request.parent_operation_id;
      if (parentId === undefined) continue;
      const parent = this.ops.get(parentId);
      if (
        parent === undefined ||
        parent.request.host_id !== op.request.host_id ||
        parent.request.world_id !== op.request.world_id ||
        parent.request.actor_id !== op.request.actor_id ||
        parent.request.principal.id !== op.request.principal.id ||
        parent.request.binding.controller_lease_id !== op.request.binding.controller_lease_id
      ) {
        throw new RinError('internal', `stored operation ${op.request.operation_id} has an invalid parent`);
      }
      parent.children.push(op.request.operation_id);
    }
    for (const op of this.ops.values()) {
      op.children.sort((a, b) => this.ops.get(a)!.createdAt - this.ops.get(b)!.createdAt || (a < b ? -1 : a > b ? 1 : 0));
    }
    if (stored.policyState !== undefined) this.policy.restoreState(stored.policyState, allowIds);
    for (const op of this.ops.values()) {
      if (op.request.policy_decision.result !== 'allow') continue;
      if (op.status === 'succeeded' || op.status === 'outcome-unknown') this.finalizePolicy(op, true);
      else if (op.status === 'failed' || op.status === 'cancelled' || op.status === 'interrupted' || op.status === 'stale' || op.status === 'rejected')
        this.finalizePolicy(op, false);
    }
    for (const [id, op] of this.ops) {
      if (op.status !== persistedStatus.get(id)) {
        op.updatedAt = now;
        this.markDirty(op);
      }
      const before = op.timeline.length;
      this.recordTimeline(op);
      if (op.timeline.length !== before) this.markDirty(op);
    }
    if (this.dirty.size > 0) {
      let committed = false;
      try {
        await db.transaction((tx) => this.flush(tx));
        committed = true;
      } finally {
        this.afterFlush(committed);
      }
    }
  }

  // ---- hooks called by the core inside state.mutate ----

  onHostExpired(hostId: string, now: number): void {
    this.expireHostOperations(hostId, now);
  }

  onHostUnregistered(hostId: string, now: number): void {
    this.expireHostOperations(hostId, now);
    this.gateway.failHost(hostId, fail('unavailable'));
    this.changed();
  }

  /** Unaccepted work bound to an authority revision the new publication no longer carries is fenced. */
  onWorldPublished(hostId: string, publication: WorldPublication, now: number): void {
    const revisions = new Map(publication.actors.map((a) => [a.actor_id, a.decision_authority.revision]));
    this.fence(
      (op) =>
        op.request.host_id === hostId &&
        op.request.world_id === publication.world_id &&
        op.ack?.accepted !== true &&
        revisions.get(op.request.actor_id) !== op.request.binding.authority_revision,
      'stale',
      now,
      (op) => op.attempts === 0,
    );
  }

  onControllerLeaseInvalidated(lease: ControllerLease, now: number): void {
    this.fence((op) => op.request.binding.controller_lease_id === lease.lease_id, 'stale', now);
  }

  onEmergencyStop(hostId: string, worldId: string, actorId: string, now: number): void {
    this.fence((op) => op.request.host_id === hostId && op.request.world_id === worldId && op.request.actor_id === actorId, 'cancelled', now);
  }

  /**
   * Settles the matching unfinished operations: work the host never saw ends with `status`; work it
   * may have seen gets a cancellation request instead (cancellation is a request, not a rollback).
   */
  private fence(
    matches: (op: OpState) => boolean,
    status: OperationStatus,
    now: number,
    unseen = (op: OpState) => op.attempts === 0 && op.ack === undefined,
  ): void {
    let changed = false;
    for (const op of this.ops.values()) {
      if (complete(op) || !matches(op)) continue;
      if (unseen(op)) {
        op.status = status;
        this.finalizePolicy(op, false);
      } else {
        op.cancel = true;
      }
      this.touch(op, now);
      changed = true;
    }
    if (changed) this.changed();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.gateway.failAll(fail('unavailable'));
    this.feed.bump();
  }

  // ---- submit (R82–R84) ----

  async submit(principal: Principal, body: WireBody, signal: AbortSignal): Promise<OperationView> {
    const input = decode<{ host_id: string; world_id: string; action_request: ActionRequest; parent_operation_id?: string }>(body, SubmitShape);
    validateIdentifier('host_id', input.host_id);
    validateIdentifier('world_id', input.world_id);
    validateIdentifier('actor_id', input.action_request.actor_id);
    try {
      validateActionRequest(input.action_request);
    } catch (e) {
      if (e instanceof RinError && e.code === 'invalid') throw new RinError('invalid', `action_request: ${e.message}`, `action_request.${e.field ?? ''}`);
      throw e;
    }
    if (input.action_request.expected_epoch.world_id !== input.world_id) throw invalidField('action_request.expected_epoch.world_id', 'must equal world_id');
    const parentId = input.parent_operation_id ?? '';
    if (parentId !== '') validateIdentifier('parent_operation_id', parentId);
    validatePrincipal(principal);
    const who = sortedPrincipal(principal);
    // Go keeps the submitted bytes and writes them back through json.Marshal, which compacts them:
    // compacting once here gives the host and every view those same bytes.
    const request: ActionRequest = { ...input.action_request, arguments: new RawJson(goCompact(input.action_request.arguments.text)) };
    const digest = requestDigest(request);
    const key = requestKey(who.id, request.idempotency_key);
    const print = fingerprint(digest, parentId, who);

    for (;;) {
      if (this.closed) throw fail('unavailable');
      const step = await this.state.mutate(() => {
        const existing = this.idempotent(key, print);
        if (existing !== undefined) return { kind: 'view' as const, view: existing };
        const flight = this.flights.get(key);
        if (flight !== undefined) {
          if (flight.fingerprint !== print) throw fail('conflict', 'idempotency_key was reused with different input');
          return { kind: 'wait' as const, wait: flight.done };
        }
        const snapshot = this.prepareSubmission(who, input.host_id, input.world_id, request, parentId);
        let finish = (): void => {};
        const done = new Promise<void>((resolve) => {
          finish = resolve;
        });
        const mine = { fingerprint: print, done };
        this.flights.set(key, mine);
        const release = (): void => {
          if (this.flights.get(key) === mine) this.flights.delete(key);
          finish();
        };
        return { kind: 'bind' as const, snapshot, finish: release };
      });
      if (step.kind === 'view') return step.view;
      if (step.kind === 'wait') {
        await step.wait;
        continue;
      }
      try {
        return await this.bindAuthorizeAndQueue(who, input.host_id, input.world_id, request, parentId, digest, key, print, step.snapshot, signal);
      } finally {
        step.finish();
      }
    }
  }

  private async bindAuthorizeAndQueue(
    principal: Principal,
    hostId: string,
    worldId: string,
    request: ActionRequest,
    parentId: string,
    digest: string,
    key: string,
    print: string,
    submission: SubmissionSnapshot,
    signal: AbortSignal,
  ): Promise<OperationView> {
    const result = await this.gateway.bind({ host_id: hostId, world_id: worldId, actor_id: request.actor_id }, request, signal);
    try {
      checkBinding(result.bound_action, result.snapshot, request, digest, submission.actor);
    } catch (e) {
      throw fail('stale', `Host binding: ${e instanceof Error ? e.message : String(e)}`);
    }
    const decision = this.policy.evaluate(result.bound_action, {
      now: result.snapshot.now,
      current_epoch: result.snapshot.epoch,
      principal,
      server_id: hostId,
      owner_id: submission.actor.owner_principal_id,
      emergency_stopped: submission.stopped,
    });
    let stored: OpState | undefined;
    try {
      return await this.state.mutate(() => {
        let current: SubmissionSnapshot;
        try {
          current = this.prepareSubmission(principal, hostId, worldId, request, parentId);
        } catch (e) {
          this.policy.finalize(decision.decision_id, false);
          throw e;
        }
        if (
          !sameSubmission(submission, current) ||
          !epochEquals(result.snapshot.epoch, current.actor.epoch) ||
          !recentGap(current.actor.observation_seq, result.snapshot.observation_sequence)
        ) {
          this.policy.finalize(decision.decision_id, false);
          throw fail('stale');
        }
        const existing = this.idempotent(key, print);
        if (existing !== undefined) {
          this.policy.finalize(decision.decision_id, false);
          return existing;
        }
        this.pruneOperations(this.now());
        if (this.ops.size >= this.maxOperations) {
          this.policy.finalize(decision.decision_id, false);
          throw fail('capacity');
        }
        const now = this.now();
        const hostRequest: HostControlRequest = {
          operation_id: this.state.newId('operation'),
          request_id: request.request_id,
          principal,
          host_id: hostId,
          world_id: worldId,
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
          ...(parentId === '' ? {} : { parent_operation_id: parentId }),
          submitted_at_unix_millis: now,
        };
        stored = this.storeOperation(key, hostRequest, decision);
        return this.view(stored);
      });
    } catch (e) {
      // The write failed after the operation was stored in memory: take it back out.
      if (stored !== undefined && this.ops.get(stored.request.operation_id) === stored) this.unstore(stored);
      throw e;
    }
  }

  private prepareSubmission(principal: Principal, hostId: string, worldId: string, request: ActionRequest, parentId: string): SubmissionSnapshot {
    const actor = this.state.authorizeActor(principal, hostId, worldId, request.actor_id, SCOPE_ACTOR_EXECUTE);
    if (!epochEquals(actor.epoch, request.expected_epoch) || !recentGap(actor.observation_seq, request.observation_sequence)) throw fail('stale');
    const controller = this.state.controllerLease(hostId, worldId, request.actor_id);
    if (controller === undefined) throw fail('lease_expired');
    if (controller.controller_id !== request.controller_id || controller.principal_id !== principal.id || !leaseMatchesActor(controller, actor))
      throw fail('forbidden');
    this.validateParent(parentId, principal, hostId, worldId, actor, controller.lease_id, request.task_id ?? '');
    const stop = this.state.emergencyStop(hostId, worldId, request.actor_id);
    return { actor, controller, stopped: stop?.active ?? false, stopRevision: stop?.revision ?? 0 };
  }

  /** R84: a child belongs to a running macro of the same principal, actor, controller lease and task. */
  private validateParent(
    parentId: string,
    principal: Principal,
    hostId: string,
    worldId: string,
    actor: ActorPublication,
    leaseId: string,
    taskId: string,
  ): void {
    if (parentId === '') return;
    const parent = this.ops.get(parentId);
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
        s.capability.id === r.bound_action.capability.id &&
        s.capability.version === r.bound_action.capability.version &&
        s.digest === r.bound_action.spec_digest,
    );
    if (spec === undefined || spec.kind !== 'macro' || !spec.produces_child_operations) throw fail('conflict');
    if (parent.children.length >= MAX_CHILD_OPERATIONS) throw fail('capacity');
  }

  private idempotent(key: string, print: string): OperationView | undefined {
    const id = this.requests.get(key);
    if (id === undefined) return undefined;
    const op = this.ops.get(id);
    if (op === undefined || storedFingerprint(op) !== print) throw fail('conflict', 'idempotency_key was reused with different input');
    this.refresh(op);
    return this.view(op);
  }

  private storeOperation(key: string, request: HostControlRequest, decision: PolicyDecision): OpState {
    const status: OperationStatus = decision.result === 'allow' ? 'queued' : decision.result === 'require_confirmation' ? 'awaiting-confirmation' : 'rejected';
    const op: OpState = {
      request,
      status,
      attempts: 0,
      cancel: false,
      ack: undefined,
      run: undefined,
      outcome: undefined,
      output: undefined,
      rejection: decision.result === 'deny' ? { code: decision.reason_code, message: decision.human_summary } : { code: '', message: '' },
      idempotency: key,
      createdAt: request.submitted_at_unix_millis,
      updatedAt: request.submitted_at_unix_millis,
      children: [],
      timeline: [],
      timelineTruncatedBefore: 0,
    };
    const parentId = request.parent_operation_id;
    if (parentId !== undefined) {
      const parent = this.ops.get(parentId)!;
      parent.children.push(request.operation_id);
      parent.updatedAt = request.submitted_at_unix_millis;
      this.markDirty(parent);
    }
    this.ops.set(request.operation_id, op);
    this.requests.set(key, request.operation_id);
    this.recordTimeline(op);
    this.markDirty(op);
    this.changed();
    return op;
  }

  private unstore(op: OpState): void {
    const id = op.request.operation_id;
    this.ops.delete(id);
    this.requests.delete(op.idempotency);
    this.dirty.delete(id);
    const parent = op.request.parent_operation_id === undefined ? undefined : this.ops.get(op.request.parent_operation_id);
    if (parent !== undefined) parent.children = parent.children.filter((c) => c !== id);
    this.finalizePolicy(op, false);
  }

  // ---- confirm (R85) ----

  async confirm(approver: Principal, body: WireBody, signal: AbortSignal): Promise<OperationView> {
    const { operation_id: id } = decode<{ operation_id: string }>(body, OperationTargetShape);
    validatePrincipal(approver);
    validateIdentifier('operation_id', id);
    const prepared = await this.state.mutate(() => {
      const op = this.ops.get(id);
      if (op === undefined) throw fail('not_found');
      const challenge = op.request.policy_decision.confirmation_challenge;
      if (op.status !== 'awaiting-confirmation' || challenge === undefined) {
        if (complete(op)) return { kind: 'view' as const, view: this.view(op) };
        throw fail('conflict');
      }
      if (this.confirming.has(id)) throw fail('conflict');
      this.state.authorizeActor(approver, op.request.host_id, op.request.world_id, op.request.actor_id, SCOPE_ACTOR_CONTROL);
      let current: SubmissionSnapshot | undefined;
      let failure: unknown;
      try {
        current = this.prepareSubmission(
          op.request.principal,
          op.request.host_id,
          op.request.world_id,
          op.request.action_request,
          op.request.parent_operation_id ?? '',
        );
      } catch (e) {
        failure = e;
      }
      if (current === undefined || current.stopped || current.controller.lease_id !== op.request.binding.controller_lease_id) {
        op.status = 'stale';
        this.finalizePolicy(op, false);
        this.touch(op, this.now());
        this.changed();
        throw failure ?? fail('stale');
      }
      this.confirming.add(id);
      return { kind: 'confirm' as const, op, challenge, ownerId: current.actor.owner_principal_id };
    });
    if (prepared.kind === 'view') return prepared.view;
    const { op, challenge, ownerId } = prepared;
    const bound = op.request.bound_action;
    try {
      const snapshot = await this.gateway.snapshot(actorTargetOf(op), signal);
      try {
        validateActionHostSnapshot(snapshot, 'snapshot');
      } catch (e) {
        throw fail('invalid', `Host snapshot: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (!epochEquals(snapshot.epoch, bound.expected_epoch) || snapshot.observation_sequence !== bound.observation_sequence) {
        return await this.state.mutate(() => {
          if (op.status === 'awaiting-confirmation') {
            op.status = 'stale';
            this.touch(op, this.now());
            this.changed();
          }
          throw fail('stale');
        });
      }
      this.policy.approve(challenge.challenge_id, approver, snapshot.now);
      const decision = this.policy.evaluate(bound, {
        now: snapshot.now,
        current_epoch: snapshot.epoch,
        principal: op.request.principal,
        server_id: op.request.host_id,
        owner_id: ownerId,
        emergency_stopped: false,
        confirmation_id: challenge.challenge_id,
      });
      return await this.state.mutate(() => {
        if (this.ops.get(id) !== op) {
          this.policy.finalize(decision.decision_id, false);
          throw fail('not_found');
        }
        if (op.status !== 'awaiting-confirmation') {
          this.policy.finalize(decision.decision_id, false);
          return this.view(op);
        }
        if (decision.result !== 'allow') {
          op.request = { ...op.request, policy_decision: decision };
          if (decision.result === 'deny') {
            op.status = 'rejected';
            op.rejection = { code: decision.reason_code, message: decision.human_summary };
          }
          this.touch(op, this.now());
          this.changed();
          return this.view(op);
        }
        let current: SubmissionSnapshot | undefined;
        let failure: unknown;
        try {
          current = this.prepareSubmission(
            op.request.principal,
            op.request.host_id,
            op.request.world_id,
            op.request.action_request,
            op.request.parent_operation_id ?? '',
          );
        } catch (e) {
          failure = e;
        }
        if (
          current === undefined ||
          current.stopped ||
          !epochEquals(current.actor.epoch, snapshot.epoch) ||
          current.actor.observation_seq !== snapshot.observation_sequence ||
          current.controller.lease_id !== op.request.binding.controller_lease_id
        ) {
          this.policy.finalize(decision.decision_id, false);
          op.status = 'stale';
          this.touch(op, this.now());
          this.changed();
          throw failure ?? fail('stale');
        }
        op.request = { ...op.request, policy_decision: decision };
        op.status = 'queued';
        this.touch(op, this.now());
        this.changed();
        return this.view(op);
      });
    } finally {
      this.confirming.delete(id);
      if (op.status !== 'awaiting-confirmation') this.discardConfirmation(op);
    }
  }

  // ---- delivery (R87–R89, R94) ----

  async poll(input: PollInput): Promise<HostControlBatch> {
    if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_POLL_ITEMS) throw invalidField('limit', 'must be between 1 and 64');
    const deadline = this.now() + Math.min(input.waitMillis, MAX_WAIT_MILLIS);
    for (;;) {
      const since = this.feed.current;
      const batch = await this.state.mutate(() => {
        const lease = this.state.requireHostLease(input.hostId, input.leaseId);
        this.pruneOperations(this.now());
        return { batch: this.collect(input.hostId, input.limit), expires: lease.expires_at_unix_millis };
      });
      const b = batch.batch;
      if (b.gateway_requests.length > 0 || b.requests.length > 0 || b.cancellations.length > 0) return b;
      if (this.closed) return b;
      const outcome = await this.feed.wait(since, Math.min(deadline, batch.expires), this.state.clock, input.signal);
      if (outcome === 'aborted' || (outcome === 'timeout' && this.now() >= deadline)) return b;
    }
  }

  private collect(hostId: string, limit: number): HostControlBatch {
    const mine = [...this.ops.values()]
      .filter((op) => op.request.host_id === hostId)
      .sort(
        (a, b) =>
          deliveryPriority(a.status) - deliveryPriority(b.status) || a.createdAt - b.createdAt || compareIds(a.request.operation_id, b.request.operation_id),
      );
    const batch: HostControlBatch = { gateway_requests: [], requests: [], cancellations: [] };
    for (const op of mine) {
      if (batch.cancellations.length >= limit) break;
      if (op.cancel && !complete(op)) batch.cancellations.push(op.request.operation_id);
    }
    batch.gateway_requests = this.gateway.collect(hostId, limit - batch.cancellations.length);
    const now = this.now();
    for (const op of mine) {
      if (batch.gateway_requests.length + batch.requests.length + batch.cancellations.length >= limit) break;
      if (op.cancel || (op.status !== 'queued' && op.status !== 'delivered' && op.status !== 'accepted')) continue;
      op.attempts = Math.min(op.attempts + 1, 0xffffffff);
      if (op.ack === undefined) op.status = 'delivered';
      this.touch(op, now);
      batch.requests.push({ request: op.request, delivery_attempt: op.attempts });
    }
    if (batch.requests.length > 0) this.changed();
    return batch;
  }

  async ack(body: WireBody): Promise<void> {
    const input = decode<{ host_id: string; lease_id: string; acknowledgement: HostAcknowledgement }>(body, AckShape);
    const a = input.acknowledgement;
    validateIdentifier('operation_id', a.operation_id);
    if (a.accepted) {
      if ((a.code ?? '') !== '') throw invalidField('code', 'must be empty when accepted');
    } else {
      validateIdentifier('code', a.code ?? '');
    }
    validateControlText('message', a.message ?? '', 500, false);
    await this.state.mutate(() => {
      this.state.requireHostLease(input.host_id, input.lease_id);
      const op = this.hostOperation(input.host_id, a.operation_id);
      if (op.ack !== undefined) {
        if (sameJson(op.ack, a)) return;
        throw fail('conflict', 'acknowledgement changed');
      }
      if (op.status !== 'delivered') throw fail('conflict', 'operation was not delivered');
      op.ack = { ...a };
      if (a.accepted) {
        op.status = 'accepted';
      } else {
        op.status = 'rejected';
        op.rejection = { code: a.code ?? '', message: a.message ?? '' };
        this.finalizePolicy(op, false);
      }
      this.touch(op, this.now());
      this.changed();
    });
  }

  async run(body: WireBody): Promise<void> {
    const input = decode<{ host_id: string; lease_id: string; run: ActionRun }>(body, RunShape);
    const run = input.run;
    try {
      validateActionRun(run);
    } catch (e) {
      if (e instanceof RinError && e.code === 'invalid') throw new RinError('invalid', `run: ${e.message}`, `run.${e.field ?? ''}`);
      throw e;
    }
    await this.state.mutate(() => {
      this.state.requireHostLease(input.host_id, input.lease_id);
      const op = this.hostOperation(input.host_id, run.operation_id);
      if (op.outcome !== undefined) throw fail('conflict', 'terminal result is already recorded');
      if (op.ack?.accepted !== true) throw fail('not_accepted');
      const prev = op.run;
      if (prev !== undefined) {
        if (run.progress_seq < prev.progress_seq) throw fail('stale', 'progress sequence moved backwards');
        if (run.progress_seq === prev.progress_seq) {
          if (sameJson(prev, run)) return;
          throw fail('stale', 'progress changed without a new sequence');
        }
        if (run.progress < prev.progress) throw fail('stale', 'action progress moved backwards');
        if (run.updated_at.clock !== prev.updated_at.clock || run.updated_at.value < prev.updated_at.value)
          throw fail('stale', 'action timepoint moved backwards');
        if (run.status !== prev.status && !canTransitionActionRun(prev.status, run.status)) {
          throw fail('conflict', `action run cannot transition from ${prev.status} to ${run.status}`);
        }
      }
      op.run = { ...run, updated_at: { ...run.updated_at } };
      op.status = statusFromRun(run.status);
      this.touch(op, this.now());
      this.changed();
    });
  }

  async outcome(body: WireBody): Promise<void> {
    const input = decode<{ host_id: string; lease_id: string; outcome: ActionOutcome; output?: RawJson }>(body, OutcomeShape);
    const outcome = input.outcome;
    try {
      validateActionOutcome(outcome);
    } catch (e) {
      if (e instanceof RinError && e.code === 'invalid') throw new RinError('invalid', `outcome: ${e.message}`, `outcome.${e.field ?? ''}`);
      throw e;
    }
    const output = input.output !== undefined && input.output.text !== '' ? input.output : undefined;
    if (output !== undefined) validateOutput(output);
    await this.state.mutate(() => {
      this.state.requireHostLease(input.host_id, input.lease_id);
      const op = this.hostOperation(input.host_id, outcome.operation_id);
      if (op.outcome !== undefined) {
        if (sameJson(op.outcome, outcome) && (op.output?.text ?? '') === (output?.text ?? '')) return;
        throw fail('conflict', 'terminal result changed');
      }
      if (op.ack?.accepted !== true) throw fail('not_accepted');
      const expected = statusFromRun(outcome.status);
      if (TERMINAL_STATUSES.has(op.status) && op.status !== expected) throw fail('conflict', 'outcome conflicts with terminal run');
      if (!epochEquals(outcome.epoch, op.request.binding.epoch)) throw fail('invalid', 'outcome epoch does not match request binding');
      if (outcome.world_seq < op.request.binding.observation_seq) throw fail('invalid', 'outcome world sequence predates request binding');
      op.outcome = structuredCloneOutcome(outcome);
      op.output = output;
      op.status = expected;
      this.finalizePolicy(op, outcome.status === 'succeeded');
      this.touch(op, this.now());
      this.changed();
    });
  }

  async gatewayResult(body: WireBody): Promise<void> {
    const input = decode<{ host_id: string; lease_id: string; result: HostGatewayResult }>(body, GatewayResultShape);
    await this.state.mutate(() => {
      this.state.requireHostLease(input.host_id, input.lease_id);
      this.gateway.report(input.host_id, input.result);
    });
  }

  private hostOperation(hostId: string, operationId: string): OpState {
    const op = this.ops.get(operationId);
    if (op === undefined) throw fail('not_found');
    if (op.request.host_id !== hostId) throw fail('forbidden');
    return op;
  }

  // ---- reads, waits, cancel (R90, R92, R93) ----

  async get(principal: Principal, body: WireBody): Promise<OperationView> {
    const { operation_id: id } = decode<{ operation_id: string }>(body, OperationTargetShape);
    validatePrincipal(principal);
    validateIdentifier('operation_id', id);
    return this.readView(principal, id);
  }

  async wait(principal: Principal, body: WireBody, signal: AbortSignal): Promise<OperationUpdate> {
    const input = decode<{ operation_id: string; after_cursor?: string; wait_millis: number }>(body, WaitShape);
    validatePrincipal(principal);
    validateIdentifier('operation_id', input.operation_id);
    const after = input.after_cursor ?? '';
    if (Buffer.byteLength(after) > MAX_CURSOR_BYTES) throw invalidField('after_cursor', 'must be valid UTF-8 of at most 256 bytes');
    if (input.wait_millis > MAX_WAIT_MILLIS) throw invalidField('wait_millis', 'must not exceed 25000');
    const deadline = this.now() + input.wait_millis;
    for (;;) {
      if (this.closed) throw fail('unavailable');
      const since = this.feed.current;
      const view = await this.readView(principal, input.operation_id);
      const changed = view.cursor !== after;
      if (view.terminal || changed || input.wait_millis === 0) return { operation: view, changed };
      const outcome = await this.feed.wait(since, deadline, this.state.clock, signal);
      if (outcome === 'aborted') throw fail('unavailable', 'the request was abandoned');
      if (outcome === 'timeout') {
        const last = await this.readView(principal, input.operation_id);
        return { operation: last, changed: last.cursor !== after };
      }
    }
  }

  async cancel(principal: Principal, body: WireBody): Promise<OperationView> {
    const { operation_id: id } = decode<{ operation_id: string }>(body, OperationTargetShape);
    validatePrincipal(principal);
    validateIdentifier('operation_id', id);
    return this.state.mutate(() => {
      const op = this.ops.get(id);
      if (op === undefined) throw fail('not_found');
      this.refresh(op);
      if (!hasScope(principal, SCOPE_HOST_ADMIN) && (principal.id !== op.request.principal.id || !hasScope(principal, SCOPE_OPERATION_CANCEL)))
        throw fail('forbidden');
      if (complete(op)) return this.view(op);
      if (op.status === 'queued' || op.status === 'awaiting-confirmation') {
        op.status = 'cancelled';
        this.finalizePolicy(op, false);
        this.touch(op, this.now());
        this.changed();
        return this.view(op);
      }
      if (!op.cancel) {
        op.cancel = true;
        this.touch(op, this.now());
        this.changed();
      }
      return this.view(op);
    });
  }

  /** A view for its submitter or host.admin; expiry is applied first (a write only when it changes something). */
  private async readView(principal: Principal, id: string): Promise<OperationView> {
    const read = (): OperationView => {
      const op = this.ops.get(id);
      if (op === undefined) throw fail('not_found');
      this.refresh(op);
      if (!hasScope(principal, SCOPE_HOST_ADMIN) && principal.id !== op.request.principal.id) throw fail('forbidden');
      return this.view(op);
    };
    const op = this.ops.get(id);
    if (op !== undefined && this.needsRefresh(op)) return this.state.mutate(read);
    return read();
  }

  // ---- task timeline (R95) ----

  async timelineGet(principal: Principal, body: WireBody): Promise<TaskTimelinePage> {
    const input = decode<{ task_id: string; after_cursor?: string; limit?: number }>(body, TimelineQueryShape);
    validatePrincipal(principal);
    const query = normalizeTimelineQuery(input);
    return this.readTimeline(principal, query);
  }

  async timelineWait(principal: Principal, body: WireBody, signal: AbortSignal): Promise<TaskTimelineUpdate> {
    const input = decode<{ task_id: string; after_cursor?: string; limit?: number; wait_millis: number }>(body, TimelineWaitShape);
    validatePrincipal(principal);
    const query = normalizeTimelineQuery(input);
    if (input.wait_millis > MAX_WAIT_MILLIS) throw invalidField('wait_millis', 'must not exceed 25000');
    const deadline = this.now() + input.wait_millis;
    for (;;) {
      if (this.closed) throw fail('unavailable');
      const since = this.feed.current;
      const page = await this.readTimeline(principal, query);
      const latest = parseTimelineCursor(page.next_cursor);
      if (latest > query.after || input.wait_millis === 0) return { timeline: page, changed: latest > query.after };
      const outcome = await this.feed.wait(since, deadline, this.state.clock, signal);
      if (outcome === 'aborted') throw fail('unavailable', 'the request was abandoned');
      if (outcome === 'timeout') {
        const last = await this.readTimeline(principal, query);
        return { timeline: last, changed: parseTimelineCursor(last.next_cursor) > query.after };
      }
    }
  }

  private async readTimeline(principal: Principal, query: ReturnType<typeof normalizeTimelineQuery>): Promise<TaskTimelinePage> {
    const visible = (): OpState[] => {
      const admin = hasScope(principal, SCOPE_HOST_ADMIN);
      return [...this.ops.values()].filter((op) => op.request.action_request.task_id === query.taskId && (admin || op.request.principal.id === principal.id));
    };
    const build = (): TaskTimelinePage => {
      const ops = visible();
      if (ops.length === 0) throw fail('not_found');
      for (const op of ops) this.refresh(op);
      const records: TimelineRecord[] = [];
      let latest = 0;
      let truncatedBefore = 0;
      let status = '';
      for (const op of ops) {
        for (const item of op.timeline) {
          records.push({ sequence: item.sequence, event: projectEvent(op, item) });
          if (item.sequence > latest) {
            latest = item.sequence;
            status = item.status;
          }
        }
        truncatedBefore = Math.max(truncatedBefore, op.timelineTruncatedBefore);
      }
      return buildTimelinePage({ taskId: query.taskId, status, latestSequence: latest, truncatedBefore, records }, query);
    };
    if (visible().some((op) => this.needsRefresh(op))) return this.state.mutate(build);
    return build();
  }

  // ---- expiry and pruning (R91) ----

  private needsRefresh(op: OpState): boolean {
    if (complete(op)) return false;
    const now = this.now();
    if (op.updatedAt <= now - this.ttl) return true;
    const lease = this.state.hostLease(op.request.host_id);
    return lease !== undefined && lease.expires_at_unix_millis <= now;
  }

  private refresh(op: OpState): void {
    const now = this.now();
    if (this.expireByTtl(op, now)) return;
    const lease = this.state.hostLease(op.request.host_id);
    if (lease !== undefined && lease.expires_at_unix_millis <= now) this.expireHostOperations(op.request.host_id, now);
  }

  private expireHostOperations(hostId: string, now: number): void {
    let changed = false;
    for (const op of this.ops.values()) {
      if (op.request.host_id !== hostId || complete(op)) continue;
      if (op.ack?.accepted === true) {
        if (op.status === 'outcome-unknown') continue;
        op.status = 'outcome-unknown';
        this.finalizePolicy(op, true);
      } else {
        if (op.status === 'stale') continue;
        op.status = 'stale';
        this.finalizePolicy(op, false);
      }
      this.touch(op, now);
      changed = true;
    }
    if (changed) this.changed();
  }

  private expireByTtl(op: OpState, now: number): boolean {
    if (complete(op) || op.updatedAt > now - this.ttl) return false;
    if (op.ack?.accepted === true) {
      op.status = 'outcome-unknown';
      this.finalizePolicy(op, true);
    } else {
      op.status = 'stale';
      this.finalizePolicy(op, false);
    }
    this.touch(op, now);
    this.changed();
    return true;
  }

  private pruneOperations(now: number): void {
    for (const op of this.ops.values()) this.expireByTtl(op, now);
    const cutoff = now - this.ttl;
    for (const [id, op] of this.ops) {
      if (!complete(op) || op.updatedAt > cutoff || op.children.length > 0) continue;
      this.ops.delete(id);
      this.requests.delete(op.idempotency);
      this.dirty.delete(id);
      this.deleted.add(id);
      const parent = op.request.parent_operation_id === undefined ? undefined : this.ops.get(op.request.parent_operation_id);
      if (parent !== undefined) {
        parent.children = parent.children.filter((c) => c !== id);
        parent.updatedAt = now;
        this.markDirty(parent);
      }
    }
  }

  // ---- policy bookkeeping ----

  private finalizePolicy(op: OpState, committed: boolean): void {
    const decision = op.request.policy_decision;
    if (decision.result === 'allow') this.policy.finalize(decision.decision_id, committed);
    else if (!committed) this.discardConfirmation(op);
    this.metaDirty = true;
  }

  private discardConfirmation(op: OpState): void {
    const decision = op.request.policy_decision;
    if (decision.result !== 'require_confirmation' || decision.confirmation_challenge === undefined) return;
    if (this.confirming.has(op.request.operation_id)) return;
    this.policy.discardConfirmation(decision.confirmation_challenge);
  }

  // ---- views and timeline ----

  /** Sets updated_at, records the timeline snapshot and marks the row for writing. */
  private touch(op: OpState, now: number): void {
    op.updatedAt = now;
    this.recordTimeline(op);
    this.markDirty(op);
  }

  private recordTimeline(op: OpState): void {
    if ((op.request.action_request.task_id ?? '') === '') return;
    const item = timelineSnapshot(op);
    const last = op.timeline[op.timeline.length - 1];
    if (last !== undefined && sameJson({ ...last, sequence: 0 }, { ...item, sequence: 0 })) return;
    this.timelineSequence++;
    item.sequence = this.timelineSequence;
    this.metaDirty = true;
    if (op.timeline.length === MAX_TIMELINE_EVENTS) {
      op.timelineTruncatedBefore = op.timeline[0]!.sequence;
      op.timeline.shift();
    }
    op.timeline.push(item);
  }

  private view(op: OpState): OperationView {
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

  /** Test and diagnostics access: the number of operations held. */
  get size(): number {
    return this.ops.size;
  }
}

export const createOperations: OpsFactory = (ctx) => Operations.open(ctx);

function policyEngineOf(policy: unknown): PolicyEngine {
  if (policy === undefined) return new PolicyEngine();
  if (policy instanceof PolicyEngine) return policy;
  if (typeof policy === 'string') return new PolicyEngine(parsePolicyConfig(policy));
  return new PolicyEngine(policy as PolicyConfig);
}

function requestDigest(request: ActionRequest): string {
  try {
    return actionRequestDigest(request);
  } catch (e) {
    if (e instanceof RinError && e.code === 'invalid') throw new RinError('invalid', `action_request: ${e.message}`, 'action_request');
    throw e;
  }
}

function storedFingerprint(op: OpState): string {
  let digest = '';
  try {
    digest = actionRequestDigest(op.request.action_request);
  } catch {
    return '';
  }
  return fingerprint(digest, op.request.parent_operation_id ?? '', op.request.principal);
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

function validateOutput(output: RawJson): void {
  const text = output.text;
  if (Buffer.byteLength(text) > MAX_OUTPUT_BYTES) throw invalidField('output', 'must be a bounded JSON object');
  if (!text.trimStart().startsWith('{')) throw invalidField('output', 'must be a JSON object');
}

function deliveryPriority(status: OperationStatus): number {
  return status === 'queued' ? 0 : status === 'delivered' ? 1 : status === 'accepted' ? 2 : 3;
}

const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function structuredCloneOutcome(o: ActionOutcome): ActionOutcome {
  const out: ActionOutcome = { ...o, epoch: { ...o.epoch }, occurred_at: { ...o.occurred_at } };
  if (o.evidence !== undefined) out.evidence = o.evidence.map((r) => ({ ...r, epoch: { ...r.epoch } }));
  return out;
}

function timelineKind(op: OpState): string {
  if (op.cancel && !complete(op)) return 'operation.cancel-requested';
  if (op.run !== undefined && op.status === 'running') return 'operation.progress';
  return `operation.${op.status}`;
}

/** One snapshot in the reference's member order; optional members only when non-zero. */
function timelineSnapshot(op: OpState): OperationTimelineItem {
  const item: Partial<OperationTimelineItem> = { sequence: 0, kind: timelineKind(op), status: op.status };
  let reason = '';
  let summary = '';
  if (op.outcome !== undefined) {
    reason = op.outcome.status;
    summary = op.outcome.summary;
  } else if (op.rejection.code !== '' || op.rejection.message !== '') {
    reason = op.rejection.code;
    summary = op.rejection.message;
  } else {
    reason = op.status;
  }
  const decision = op.request.policy_decision;
  if (summary === '') summary = decision.human_summary;
  if (reason !== '') item.reason_code = reason;
  if (summary !== '') item.summary = summary;
  item.at_unix_millis = op.updatedAt;
  item.terminal = settled(op);
  item.execution_confirmed = executionConfirmed(op);
  item.reconciliation_pending = reconciliationPending(op);
  if (op.attempts > 0) item.delivery_attempts = op.attempts;
  if (op.run !== undefined && op.run.progress_seq > 0) item.progress_sequence = op.run.progress_seq;
  if (op.run !== undefined && op.run.progress > 0) item.progress = op.run.progress;
  if (op.cancel) item.cancel_requested = true;
  if (op.outcome !== undefined) item.outcome_code = op.outcome.status;
  item.policy_disposition = decision.result;
  if (decision.reason_code !== '') item.policy_reason_code = decision.reason_code;
  if (decision.human_summary !== '') item.policy_summary = decision.human_summary;
  if (decision.matched_rule_ids.length > 0) item.matched_rule_ids = [...decision.matched_rule_ids];
  if (decision.result === 'require_confirmation' && op.status === 'awaiting-confirmation') item.confirmation_pending = true;
  if (op.request.bound_action.effect_preview.length > 0) item.effect_count = op.request.bound_action.effect_preview.length;
  return item as OperationTimelineItem;
}

/** The public event of one snapshot, members in the reference's Event order. */
function projectEvent(op: OpState, item: OperationTimelineItem): Omit<TaskTimelineEvent, 'cursor'> {
  const request = op.request.action_request;
  const e: Partial<TaskTimelineEvent> = {
    event_id: `${op.request.operation_id}.event.${item.sequence.toString(36)}`,
    occurred_at_unix_millis: item.at_unix_millis,
    task_id: request.task_id ?? '',
    host_id: op.request.host_id,
    world_id: op.request.world_id,
    actor_id: op.request.actor_id,
  };
  if (op.request.bound_action.controller_id !== '') e.controller_id = op.request.bound_action.controller_id;
  if (request.plan_step_ref !== undefined) {
    e.plan_id = request.plan_step_ref.plan_id;
    e.plan_revision = request.plan_step_ref.plan_revision;
    e.plan_step_id = request.plan_step_ref.step_id;
  }
  e.event_kind = item.kind;
  if (item.summary !== undefined) e.public_summary = item.summary;
  if (item.reason_code !== undefined) e.reason_code = item.reason_code;
  e.observation_sequence = request.observation_sequence;
  e.epoch = { ...op.request.binding.epoch };
  e.capability = { id: request.capability.id, version: request.capability.version };
  if (item.policy_disposition !== undefined) {
    const policy: Partial<NonNullable<TaskTimelineEvent['policy']>> = {
      disposition: item.policy_disposition,
      reason_code: item.policy_reason_code ?? '',
      human_summary: item.policy_summary ?? '',
    };
    if (item.matched_rule_ids !== undefined) policy.matched_rule_ids = [...item.matched_rule_ids];
    policy.confirmation_pending = item.confirmation_pending ?? false;
    policy.effect_count = item.effect_count ?? 0;
    e.policy = policy as NonNullable<TaskTimelineEvent['policy']>;
  }
  const summary: Partial<NonNullable<TaskTimelineEvent['operation']>> = {
    operation_id: op.request.operation_id,
    status: item.status,
    terminal: item.terminal,
    execution_confirmed: item.execution_confirmed,
    reconciliation_pending: item.reconciliation_pending,
  };
  if (item.outcome_code !== undefined) summary.outcome_code = item.outcome_code;
  if (item.delivery_attempts !== undefined) summary.delivery_attempts = item.delivery_attempts;
  if (item.progress_sequence !== undefined) summary.progress_sequence = item.progress_sequence;
  if (item.progress !== undefined) summary.progress = item.progress;
  if (item.cancel_requested !== undefined) summary.cancel_requested = item.cancel_requested;
  e.operation = summary as NonNullable<TaskTimelineEvent['operation']>;
  return e as Omit<TaskTimelineEvent, 'cursor'>;
}

function recordOf(op: OpState): OperationRecord {
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
function restoreOperation(r: OperationRecord): OpState {
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
