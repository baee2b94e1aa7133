/**
 * Delivery of operations to their host (R87–R89, R94): `host/poll` hands out cancellations, gateway
 * requests and queued work; the host answers with its acknowledgement, monotonic run reports, the
 * terminal outcome and gateway results. Every report needs the host's live lease.
 */
import type { RawJson } from '../../crypto/gojson.js';
import { canTransitionActionRun, validateActionOutcome, validateActionRun } from '../run.js';
import type { ActionOutcome, ActionRun, HostAcknowledgement, HostControlBatch, HostGatewayResult, OperationStatus } from '../types.js';
import { epochEquals, validateIdentifier } from '../validate.js';
import { ActionOutcomeShape, ActionRunShape, BoundActionShape, EpochShape, TimepointShape } from '../wire.js';
import { MAX_WAIT_MILLIS, type PollInput, type WireBody } from './contracts.js';
import { validateControlText } from './hosts.js';
import {
  checkedAs,
  compareIds,
  complete,
  decode,
  fail,
  invalidField,
  sameJson,
  statusFromRun,
  structuredCloneOutcome,
  TERMINAL_STATUSES,
} from './operation-state.js';
import type { OperationTable } from './operation-table.js';

export const MAX_POLL_ITEMS = 64;
const MAX_OUTPUT_BYTES = 64 << 10;

const lease = { host_id: 'string', lease_id: 'string' } as const;
const SnapshotShape = { fields: { now: TimepointShape, epoch: EpochShape, observation_sequence: 'u64' } } as const;
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

export async function poll(t: OperationTable, input: PollInput): Promise<HostControlBatch> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_POLL_ITEMS) throw invalidField('limit', 'must be between 1 and 64');
  const deadline = t.now() + Math.min(input.waitMillis, MAX_WAIT_MILLIS);
  for (;;) {
    const since = t.feed.current;
    const batch = await t.state.mutate(() => {
      const lease = t.state.requireHostLease(input.hostId, input.leaseId);
      t.prune(t.now());
      return { batch: collect(t, input.hostId, input.limit), expires: lease.expires_at_unix_millis };
    });
    const b = batch.batch;
    if (b.gateway_requests.length > 0 || b.requests.length > 0 || b.cancellations.length > 0) return b;
    if (t.closed) return b;
    const outcome = await t.feed.wait(since, Math.min(deadline, batch.expires), t.state.clock, input.signal);
    if (outcome === 'aborted' || (outcome === 'timeout' && t.now() >= deadline)) return b;
  }
}

/** Cancellations first, then gateway requests, then queued work; each delivery counts an attempt. */
function collect(t: OperationTable, hostId: string, limit: number): HostControlBatch {
  const mine = [...t.ops.values()]
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
  batch.gateway_requests = t.gateway.collect(hostId, limit - batch.cancellations.length);
  const now = t.now();
  for (const op of mine) {
    if (batch.gateway_requests.length + batch.requests.length + batch.cancellations.length >= limit) break;
    if (op.cancel || (op.status !== 'queued' && op.status !== 'delivered' && op.status !== 'accepted')) continue;
    op.attempts = Math.min(op.attempts + 1, 0xffffffff);
    if (op.ack === undefined) op.status = 'delivered';
    t.touch(op, now);
    batch.requests.push({ request: op.request, delivery_attempt: op.attempts });
  }
  if (batch.requests.length > 0) t.changed();
  return batch;
}

export async function ack(t: OperationTable, body: WireBody): Promise<void> {
  const input = decode<{ host_id: string; lease_id: string; acknowledgement: HostAcknowledgement }>(body, AckShape);
  const a = input.acknowledgement;
  validateIdentifier('operation_id', a.operation_id);
  if (a.accepted) {
    if ((a.code ?? '') !== '') throw invalidField('code', 'must be empty when accepted');
  } else {
    validateIdentifier('code', a.code ?? '');
  }
  validateControlText('message', a.message ?? '', 500, false);
  await t.state.mutate(() => {
    t.state.requireHostLease(input.host_id, input.lease_id);
    const op = t.hostOperation(input.host_id, a.operation_id);
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
      t.finalizePolicy(op, false);
    }
    t.touch(op, t.now());
    t.changed();
  });
}

export async function run(t: OperationTable, body: WireBody): Promise<void> {
  const input = decode<{ host_id: string; lease_id: string; run: ActionRun }>(body, RunShape);
  const run = input.run;
  checkedAs('run', () => validateActionRun(run));
  await t.state.mutate(() => {
    t.state.requireHostLease(input.host_id, input.lease_id);
    const op = t.hostOperation(input.host_id, run.operation_id);
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
    t.touch(op, t.now());
    t.changed();
  });
}

export async function outcome(t: OperationTable, body: WireBody): Promise<void> {
  const input = decode<{ host_id: string; lease_id: string; outcome: ActionOutcome; output?: RawJson }>(body, OutcomeShape);
  const outcome = input.outcome;
  checkedAs('outcome', () => validateActionOutcome(outcome));
  const output = input.output !== undefined && input.output.text !== '' ? input.output : undefined;
  if (output !== undefined) validateOutput(output);
  await t.state.mutate(() => {
    t.state.requireHostLease(input.host_id, input.lease_id);
    const op = t.hostOperation(input.host_id, outcome.operation_id);
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
    t.finalizePolicy(op, outcome.status === 'succeeded');
    t.touch(op, t.now());
    t.changed();
  });
}

export async function gatewayResult(t: OperationTable, body: WireBody): Promise<void> {
  const input = decode<{ host_id: string; lease_id: string; result: HostGatewayResult }>(body, GatewayResultShape);
  await t.state.mutate(() => {
    t.state.requireHostLease(input.host_id, input.lease_id);
    t.gateway.report(input.host_id, input.result);
  });
}

function validateOutput(output: RawJson): void {
  const text = output.text;
  if (Buffer.byteLength(text) > MAX_OUTPUT_BYTES) throw invalidField('output', 'must be a bounded JSON object');
  if (!text.trimStart().startsWith('{')) throw invalidField('output', 'must be a JSON object');
}

function deliveryPriority(status: OperationStatus): number {
  return status === 'queued' ? 0 : status === 'delivered' ? 1 : status === 'accepted' ? 2 : 3;
}
