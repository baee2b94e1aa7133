/**
 * The task timeline of the operations half (R95): each operation keeps its last snapshots (the
 * reference's operationTimelineEvent), numbered by one server-wide sequence; `timeline/get` and
 * `timeline/wait` project the snapshots of a task's operations into public events, paged by
 * timeline.ts.
 */
import { hasScope } from './auth.js';
import { MAX_WAIT_MILLIS, SCOPE_HOST_ADMIN, type WireBody } from './contracts.js';
import type { Principal, TaskTimelineEvent, TaskTimelinePage, TaskTimelineUpdate } from '../types.js';
import { validatePrincipal } from '../validate.js';
import { complete, decode, executionConfirmed, fail, invalidField, reconciliationPending, sameJson, settled, type OpState } from './operation-state.js';
import type { OperationTable } from './operation-table.js';
import type { OperationTimelineItem } from './store.js';
import { buildTimelinePage, normalizeTimelineQuery, parseTimelineCursor, type TimelineRecord } from './timeline.js';

const MAX_TIMELINE_EVENTS = 64;

const TimelineQueryShape = { fields: { task_id: 'string', 'after_cursor?': 'string', 'limit?': 'u32' } } as const;
const TimelineWaitShape = { fields: { task_id: 'string', 'after_cursor?': 'string', 'limit?': 'u32', wait_millis: 'u32' } } as const;

// ---- recording ----

/** The operation's snapshot when it differs from its last one (an operation without a task has none). */
export function changedTimelineItem(op: OpState): OperationTimelineItem | undefined {
  if ((op.request.action_request.task_id ?? '') === '') return undefined;
  const item = timelineSnapshot(op);
  const last = op.timeline[op.timeline.length - 1];
  if (last !== undefined && sameJson({ ...last, sequence: 0 }, { ...item, sequence: 0 })) return undefined;
  return item;
}

/** Keeps the last MAX_TIMELINE_EVENTS snapshots, remembering the oldest sequence dropped. */
export function appendTimelineItem(op: OpState, item: OperationTimelineItem): void {
  if (op.timeline.length === MAX_TIMELINE_EVENTS) {
    op.timelineTruncatedBefore = op.timeline[0]!.sequence;
    op.timeline.shift();
  }
  op.timeline.push(item);
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

// ---- reads ----

export async function timelineGet(t: OperationTable, principal: Principal, body: WireBody): Promise<TaskTimelinePage> {
  const input = decode<{ task_id: string; after_cursor?: string; limit?: number }>(body, TimelineQueryShape);
  validatePrincipal(principal);
  const query = normalizeTimelineQuery(input);
  return readTimeline(t, principal, query);
}

export async function timelineWait(t: OperationTable, principal: Principal, body: WireBody, signal: AbortSignal): Promise<TaskTimelineUpdate> {
  const input = decode<{ task_id: string; after_cursor?: string; limit?: number; wait_millis: number }>(body, TimelineWaitShape);
  validatePrincipal(principal);
  const query = normalizeTimelineQuery(input);
  if (input.wait_millis > MAX_WAIT_MILLIS) throw invalidField('wait_millis', 'must not exceed 25000');
  const { value, changed } = await t.waitFor(
    input.wait_millis,
    signal,
    () => readTimeline(t, principal, query),
    (page) => parseTimelineCursor(page.next_cursor) > query.after,
  );
  return { timeline: value, changed };
}

/** The page of the task's operations the principal may see (all of them for host.admin); expiry is applied first. */
async function readTimeline(t: OperationTable, principal: Principal, query: ReturnType<typeof normalizeTimelineQuery>): Promise<TaskTimelinePage> {
  const visible = (): OpState[] => {
    const admin = hasScope(principal, SCOPE_HOST_ADMIN);
    return [...t.ops.values()].filter((op) => op.request.action_request.task_id === query.taskId && (admin || op.request.principal.id === principal.id));
  };
  const build = (): TaskTimelinePage => {
    const ops = visible();
    if (ops.length === 0) throw fail('not_found');
    for (const op of ops) t.refresh(op);
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
  if (visible().some((op) => t.needsRefresh(op))) return t.state.mutate(build);
  return build();
}
