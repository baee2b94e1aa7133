/**
 * The operations half of the rin.control/v2 server, `ControlOps`: the core's hooks (host expiry,
 * publications, controller leases, emergency stops), storage, and the routes, each in its own module:
 * submission and confirmation (operation-submit.ts), delivery through `host/poll` and the host's reports
 * (operation-delivery.ts), the task timeline (operation-timeline.ts); operation views with `op2:`
 * cursors, bounded waits and cancellation are here. The operations and the rules they all follow are
 * in operation-table.ts.
 *
 * Every mutation runs inside `state.mutate`, which serialises it with the core's mutations and
 * writes the changed rows (`flush`) in one transaction before the response. Long waits never hold
 * it: they wait on the change feed and re-read.
 */
import type { Db } from '../../server/db.js';
import type {
  ControllerLease,
  HostControlBatch,
  OperationUpdate,
  OperationView,
  Principal,
  TaskTimelinePage,
  TaskTimelineUpdate,
  WorldPublication,
} from '../types.js';
import { validateIdentifier, validatePrincipal } from '../validate.js';
import { hasScope } from './auth.js';
import {
  MAX_WAIT_MILLIS,
  SCOPE_HOST_ADMIN,
  SCOPE_OPERATION_CANCEL,
  type ControlOps,
  type OpsFactory,
  type OpsFactoryContext,
  type PollInput,
  type WireBody,
} from './contracts.js';
import type { HostGateway } from './gateway.js';
import * as delivery from './operation-delivery.js';
import { complete, decode, fail, invalidField, OperationTargetShape, operationView } from './operation-state.js';
import { confirm, submit } from './operation-submit.js';
import { OperationTable } from './operation-table.js';
import { timelineGet, timelineWait } from './operation-timeline.js';
import { restoreOperations } from './operation-writes.js';
import { parsePolicyConfig, PolicyEngine, type PolicyConfig } from './policy.js';

export { MAX_POLL_ITEMS } from './operation-delivery.js';
export { MAX_CHILD_OPERATIONS } from './operation-submit.js';

export const DEFAULT_MAX_OPERATIONS = 1024;
export const HARD_MAX_OPERATIONS = 65_536;
export const DEFAULT_OPERATION_TTL_MILLIS = 30 * 60_000;
const MAX_CURSOR_BYTES = 256;

export interface OperationsOptions {
  maxOperations?: number;
  operationTtlMillis?: number;
}

const WaitShape = { fields: { operation_id: 'string', 'after_cursor?': 'string', wait_millis: 'u32' } } as const;

export class Operations implements ControlOps {
  readonly policy: PolicyEngine;
  private readonly table: OperationTable;

  private constructor(state: OpsFactoryContext['state'], policy: PolicyEngine, options: OperationsOptions) {
    this.policy = policy;
    const max = options.maxOperations ?? DEFAULT_MAX_OPERATIONS;
    this.table = new OperationTable(
      state,
      policy,
      Math.min(max > 0 ? max : DEFAULT_MAX_OPERATIONS, HARD_MAX_OPERATIONS),
      options.operationTtlMillis ?? DEFAULT_OPERATION_TTL_MILLIS,
    );
  }

  /** Loads the stored operations and applies the restart rules (R96). */
  static async open(ctx: OpsFactoryContext): Promise<Operations> {
    const opts = (ctx.options ?? {}) as OperationsOptions;
    const ops = new Operations(ctx.state, policyEngineOf(ctx.policy), opts);
    await restoreOperations(ops.table, ctx.db);
    return ops;
  }

  // ---- persistence ----

  hasDirty(): boolean {
    return this.table.writes.hasDirty();
  }

  flush(tx: Db): Promise<void> {
    return this.table.writes.flush(tx);
  }

  afterFlush(committed: boolean): void {
    this.table.writes.afterFlush(committed);
  }

  // ---- hooks called by the core inside state.mutate ----

  onHostExpired(hostId: string, now: number): void {
    this.table.expireHostOperations(hostId, now);
  }

  onHostUnregistered(hostId: string, now: number): void {
    this.table.expireHostOperations(hostId, now);
    this.table.gateway.failHost(hostId, fail('unavailable'));
    this.table.changed();
  }

  /** Unaccepted work bound to an authority revision the new publication no longer carries is fenced. */
  onWorldPublished(hostId: string, publication: WorldPublication, now: number): void {
    const revisions = new Map(publication.actors.map((a) => [a.actor_id, a.decision_authority.revision]));
    this.table.fence(
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
    this.table.fence((op) => op.request.binding.controller_lease_id === lease.lease_id, 'stale', now);
  }

  onEmergencyStop(hostId: string, worldId: string, actorId: string, now: number): void {
    this.table.fence((op) => op.request.host_id === hostId && op.request.world_id === worldId && op.request.actor_id === actorId, 'cancelled', now);
  }

  async close(): Promise<void> {
    this.table.closed = true;
    this.table.gateway.failAll(fail('unavailable'));
    this.table.feed.bump();
  }

  // ---- submit and confirm (R82–R85) ----

  submit(principal: Principal, body: WireBody, signal: AbortSignal): Promise<OperationView> {
    return submit(this.table, principal, body, signal);
  }

  confirm(approver: Principal, body: WireBody, signal: AbortSignal): Promise<OperationView> {
    return confirm(this.table, approver, body, signal);
  }

  // ---- delivery (R87–R89, R94) ----

  poll(input: PollInput): Promise<HostControlBatch> {
    return delivery.poll(this.table, input);
  }

  ack(body: WireBody): Promise<void> {
    return delivery.ack(this.table, body);
  }

  run(body: WireBody): Promise<void> {
    return delivery.run(this.table, body);
  }

  outcome(body: WireBody): Promise<void> {
    return delivery.outcome(this.table, body);
  }

  gatewayResult(body: WireBody): Promise<void> {
    return delivery.gatewayResult(this.table, body);
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
    const { value, changed } = await this.table.waitFor(
      input.wait_millis,
      signal,
      () => this.readView(principal, input.operation_id),
      (view) => view.cursor !== after,
      (view) => view.terminal,
    );
    return { operation: value, changed };
  }

  async cancel(principal: Principal, body: WireBody): Promise<OperationView> {
    const { operation_id: id } = decode<{ operation_id: string }>(body, OperationTargetShape);
    validatePrincipal(principal);
    validateIdentifier('operation_id', id);
    const t = this.table;
    return t.state.mutate(() => {
      const op = t.ops.get(id);
      if (op === undefined) throw fail('not_found');
      t.refresh(op);
      if (!hasScope(principal, SCOPE_HOST_ADMIN) && (principal.id !== op.request.principal.id || !hasScope(principal, SCOPE_OPERATION_CANCEL)))
        throw fail('forbidden');
      if (complete(op)) return operationView(op);
      if (op.status === 'queued' || op.status === 'awaiting-confirmation') {
        op.status = 'cancelled';
        t.finalizePolicy(op, false);
        t.touch(op, t.now());
        t.changed();
        return operationView(op);
      }
      if (!op.cancel) {
        op.cancel = true;
        t.touch(op, t.now());
        t.changed();
      }
      return operationView(op);
    });
  }

  /** A view for its submitter or host.admin; expiry is applied first (a write only when it changes something). */
  private async readView(principal: Principal, id: string): Promise<OperationView> {
    const t = this.table;
    const read = (): OperationView => {
      const op = t.ops.get(id);
      if (op === undefined) throw fail('not_found');
      t.refresh(op);
      if (!hasScope(principal, SCOPE_HOST_ADMIN) && principal.id !== op.request.principal.id) throw fail('forbidden');
      return operationView(op);
    };
    const op = t.ops.get(id);
    if (op !== undefined && t.needsRefresh(op)) return t.state.mutate(read);
    return read();
  }

  // ---- task timeline (R95) ----

  timelineGet(principal: Principal, body: WireBody): Promise<TaskTimelinePage> {
    return timelineGet(this.table, principal, body);
  }

  timelineWait(principal: Principal, body: WireBody, signal: AbortSignal): Promise<TaskTimelineUpdate> {
    return timelineWait(this.table, principal, body, signal);
  }

  /** Test and diagnostics access: the number of operations held. */
  get size(): number {
    return this.table.ops.size;
  }

  /** Test and diagnostics access: the gateway whose bind and snapshot requests the host answers. */
  get gateway(): HostGateway {
    return this.table.gateway;
  }
}

export const createOperations: OpsFactory = (ctx) => Operations.open(ctx);

function policyEngineOf(policy: unknown): PolicyEngine {
  if (policy === undefined) return new PolicyEngine();
  if (policy instanceof PolicyEngine) return policy;
  if (typeof policy === 'string') return new PolicyEngine(parsePolicyConfig(policy));
  return new PolicyEngine(policy as PolicyConfig);
}
