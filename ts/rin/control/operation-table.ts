/**
 * The operations the server holds and the rules every route applies to them: the indices (by id,
 * by idempotency key, submissions in flight), touching an operation (updated_at, its timeline, its
 * row), policy bookkeeping, fencing, expiry (R91) and pruning, storing and taking back a submission.
 * Everything here runs inside `state.mutate`.
 */
import type { HostControlRequest, OperationStatus, PolicyDecision } from '../types.js';
import type { ControlState } from './contracts.js';
import { ChangeFeed, HostGateway } from './gateway.js';
import { complete, fail, recordOf, type OpState } from './operation-state.js';
import { appendTimelineItem, changedTimelineItem } from './operation-timeline.js';
import { PendingWrites } from './operation-writes.js';
import type { PolicyEngine } from './policy.js';
import { OPERATION_STORE_VERSION } from './store.js';

export class OperationTable {
  readonly feed = new ChangeFeed();
  readonly gateway: HostGateway;
  readonly ops = new Map<string, OpState>();
  /** Operation id by idempotency key (requestKey). */
  readonly requests = new Map<string, string>();
  /** Submissions between their bind and their store, by idempotency key. */
  readonly flights = new Map<string, { fingerprint: string; done: Promise<void> }>();
  /** Operations whose confirmation is in progress: their challenge is kept until it ends. */
  readonly confirming = new Set<string>();
  readonly writes: PendingWrites;
  timelineSequence = 0;
  closed = false;

  constructor(
    readonly state: ControlState,
    readonly policy: PolicyEngine,
    readonly maxOperations: number,
    readonly ttl: number,
  ) {
    this.gateway = new HostGateway(state, this.feed);
    this.writes = new PendingWrites({
      has: (id) => this.ops.has(id),
      record: (id) => {
        const op = this.ops.get(id);
        return op === undefined ? undefined : recordOf(op);
      },
      meta: () => ({
        version: OPERATION_STORE_VERSION,
        timeline_sequence: String(this.timelineSequence),
        policy_state: JSON.stringify(this.policy.snapshotState()),
      }),
    });
  }

  now(): number {
    return this.state.clock.now();
  }

  changed(): void {
    this.feed.bump();
    this.state.notify();
  }

  markDirty(op: OpState): void {
    this.writes.changed(op.request.operation_id);
  }

  /** Sets updated_at, records the timeline snapshot and marks the row for writing. */
  touch(op: OpState, now: number): void {
    op.updatedAt = now;
    this.recordTimeline(op);
    this.markDirty(op);
  }

  recordTimeline(op: OpState): void {
    const item = changedTimelineItem(op);
    if (item === undefined) return;
    this.timelineSequence++;
    item.sequence = this.timelineSequence;
    this.writes.metaChanged();
    appendTimelineItem(op, item);
  }

  /** The operation a host reports on: it must be one delivered to that host. */
  hostOperation(hostId: string, operationId: string): OpState {
    const op = this.ops.get(operationId);
    if (op === undefined) throw fail('not_found');
    if (op.request.host_id !== hostId) throw fail('forbidden');
    return op;
  }

  // ---- policy bookkeeping ----

  finalizePolicy(op: OpState, committed: boolean): void {
    const decision = op.request.policy_decision;
    if (decision.result === 'allow') this.policy.finalize(decision.decision_id, committed);
    else if (!committed) this.discardConfirmation(op);
    this.writes.metaChanged();
  }

  discardConfirmation(op: OpState): void {
    const decision = op.request.policy_decision;
    if (decision.result !== 'require_confirmation' || decision.confirmation_challenge === undefined) return;
    if (this.confirming.has(op.request.operation_id)) return;
    this.policy.discardConfirmation(decision.confirmation_challenge);
  }

  // ---- fencing ----

  /**
   * Settles the matching unfinished operations: work the host never saw ends with `status`; work it
   * may have seen gets a cancellation request instead (cancellation is a request, not a rollback).
   */
  fence(matches: (op: OpState) => boolean, status: OperationStatus, now: number, unseen = (op: OpState) => op.attempts === 0 && op.ack === undefined): void {
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

  // ---- expiry and pruning (R91) ----

  needsRefresh(op: OpState): boolean {
    if (complete(op)) return false;
    const now = this.now();
    if (op.updatedAt <= now - this.ttl) return true;
    const lease = this.state.hostLease(op.request.host_id);
    return lease !== undefined && lease.expires_at_unix_millis <= now;
  }

  refresh(op: OpState): void {
    const now = this.now();
    if (this.expireByTtl(op, now)) return;
    const lease = this.state.hostLease(op.request.host_id);
    if (lease !== undefined && lease.expires_at_unix_millis <= now) this.expireHostOperations(op.request.host_id, now);
  }

  expireHostOperations(hostId: string, now: number): void {
    let changed = false;
    for (const op of this.ops.values()) {
      if (op.request.host_id !== hostId || complete(op) || op.status === expiredStatus(op)) continue;
      this.expire(op, now);
      changed = true;
    }
    if (changed) this.changed();
  }

  private expireByTtl(op: OpState, now: number): boolean {
    if (complete(op) || op.updatedAt > now - this.ttl) return false;
    this.expire(op, now);
    this.changed();
    return true;
  }

  private expire(op: OpState, now: number): void {
    op.status = expiredStatus(op);
    this.finalizePolicy(op, op.status === 'outcome-unknown');
    this.touch(op, now);
  }

  prune(now: number): void {
    for (const op of this.ops.values()) this.expireByTtl(op, now);
    const cutoff = now - this.ttl;
    for (const [id, op] of this.ops) {
      if (!complete(op) || op.updatedAt > cutoff || op.children.length > 0) continue;
      this.ops.delete(id);
      this.requests.delete(op.idempotency);
      this.writes.removed(id);
      const parent = op.request.parent_operation_id === undefined ? undefined : this.ops.get(op.request.parent_operation_id);
      if (parent !== undefined) {
        parent.children = parent.children.filter((c) => c !== id);
        parent.updatedAt = now;
        this.markDirty(parent);
      }
    }
  }

  // ---- storing a submission ----

  store(key: string, request: HostControlRequest, decision: PolicyDecision): OpState {
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

  /** Takes back an operation whose write failed. */
  unstore(op: OpState): void {
    const id = op.request.operation_id;
    this.ops.delete(id);
    this.requests.delete(op.idempotency);
    this.writes.forget(id);
    const parent = op.request.parent_operation_id === undefined ? undefined : this.ops.get(op.request.parent_operation_id);
    if (parent !== undefined) parent.children = parent.children.filter((c) => c !== id);
    this.finalizePolicy(op, false);
  }

  // ---- long waits ----

  /**
   * Reads until `changed` says the value moved (or `done` says there is nothing more to wait for), the
   * wait ends, or `signal` aborts; a wait that timed out reads once more. Never holds `state.mutate`.
   */
  async waitFor<T>(
    waitMillis: number,
    signal: AbortSignal,
    read: () => Promise<T>,
    changed: (value: T) => boolean,
    done: (value: T) => boolean = () => false,
  ): Promise<{ value: T; changed: boolean }> {
    const deadline = this.now() + waitMillis;
    for (;;) {
      if (this.closed) throw fail('unavailable');
      const since = this.feed.current;
      const value = await read();
      const moved = changed(value);
      if (done(value) || moved || waitMillis === 0) return { value, changed: moved };
      const outcome = await this.feed.wait(since, deadline, this.state.clock, signal);
      if (outcome === 'aborted') throw fail('unavailable', 'the request was abandoned');
      if (outcome === 'timeout') {
        const last = await read();
        return { value: last, changed: changed(last) };
      }
    }
  }
}

/** What an unfinished operation expires as: work the host accepted may have run, anything else did not. */
function expiredStatus(op: OpState): OperationStatus {
  return op.ack?.accepted === true ? 'outcome-unknown' : 'stale';
}
