/**
 * Execution results (R48–R51, host/validate.go): ActionRun progress records, the legal status
 * transitions, and ActionOutcome, the sole terminal fact of an operation.
 */
import { invalid } from './errors.js';
import type { ActionOutcome, ActionRun, ActionRunStatus } from './types.js';
import { MAX_JSON_SAFE, validateEpoch, validateIdentifier, validateRefs, validateText, validateTimepoint } from './validate.js';

const STATUSES: readonly string[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'interrupted', 'stale', 'outcome-unknown'];
const TERMINAL: readonly string[] = ['succeeded', 'failed', 'cancelled', 'interrupted', 'stale', 'outcome-unknown'];

export const isActionRunStatus = (s: string): s is ActionRunStatus => STATUSES.includes(s);
/** Every status but queued and running: the statuses an ActionOutcome may carry. */
export const isTerminalActionRunStatus = (s: string): boolean => TERMINAL.includes(s);

const LEGAL: Readonly<Record<string, readonly string[]>> = {
  queued: ['running', 'failed', 'cancelled', 'stale', 'outcome-unknown'],
  running: ['succeeded', 'failed', 'cancelled', 'interrupted', 'stale', 'outcome-unknown'],
  'outcome-unknown': ['succeeded', 'failed', 'cancelled', 'interrupted', 'stale'],
};

/** R48: the 16 legal status changes; a same-status update is not a transition. */
export function canTransitionActionRun(from: string, to: string): boolean {
  return Object.hasOwn(LEGAL, from) && LEGAL[from]!.includes(to);
}

const positive = (n: number) => n > 0 && n <= MAX_JSON_SAFE;

/** R49. */
export function validateActionRun(run: ActionRun): void {
  validateIdentifier('operation_id', run.operation_id);
  if (!isActionRunStatus(run.status)) throw invalid('status', 'is not supported');
  if (!positive(run.progress_seq)) throw invalid('progress_seq', 'must be a positive JSON-safe integer');
  if (!(run.progress >= 0 && run.progress <= 100)) throw invalid('progress', 'must be between 0 and 100');
  if (run.status === 'queued' && run.progress !== 0) throw invalid('progress', 'queued action must have zero progress');
  if (run.status === 'succeeded' && run.progress !== 100) throw invalid('progress', 'succeeded action must have 100 progress');
  validateTimepoint(run.updated_at, 'updated_at');
  validateText('message', run.message ?? '', 500, false);
}

/** R50. */
export function validateActionOutcome(o: ActionOutcome): void {
  validateIdentifier('operation_id', o.operation_id);
  if (!isTerminalActionRunStatus(o.status)) throw invalid('status', 'must be a terminal action status');
  if (o.status === 'succeeded') {
    if (o.code) throw invalid('code', 'must be empty for succeeded outcome');
  } else validateIdentifier('code', o.code ?? '', true);
  validateText('summary', o.summary, 1000, true);
  validateEpoch(o.epoch, 'epoch');
  validateRefs('evidence', o.evidence, o.epoch);
  if (!positive(o.world_seq)) throw invalid('world_seq', 'must be a positive JSON-safe integer');
  validateTimepoint(o.occurred_at, 'occurred_at');
}

/**
 * R51: whether `next` may follow `previous` for one operation (the reference's validAdapterTransition):
 * progress_seq, progress and updated_at never go back and updated_at keeps its clock; an equal
 * progress_seq carries an identical run; otherwise the status is kept or changes legally.
 */
export function isMonotonicRunUpdate(previous: ActionRun, next: ActionRun): boolean {
  if (
    next.progress_seq < previous.progress_seq ||
    next.progress < previous.progress ||
    next.updated_at.clock !== previous.updated_at.clock ||
    next.updated_at.value < previous.updated_at.value
  ) {
    return false;
  }
  if (next.progress_seq === previous.progress_seq) {
    return (
      next.operation_id === previous.operation_id &&
      next.status === previous.status &&
      next.progress === previous.progress &&
      next.updated_at.value === previous.updated_at.value &&
      (next.message ?? '') === (previous.message ?? '')
    );
  }
  return next.status === previous.status || canTransitionActionRun(previous.status, next.status);
}
