/**
 * The runtime's decisions as pure functions of data: whether one call is admitted in a task state
 * (M33, the matrix looked up, never branched on per cell) and how one round of calls is reduced
 * (M38–M40). No authority, no I/O: the runtime feeds them what it knows and then dispatches; a bench
 * can measure them alone.
 */
import { callVariant, lookupCell, type AdmitCell, type MatrixContract } from './contract.js';
import type { EffectClass, MetaCall, MetaOp, RuntimeState } from './schema.js';

/** What admission may look at: the task as the runtime knows it at the start of a round. */
export interface AdmissionView {
  readonly state: RuntimeState;
  readonly terminal: boolean;
  /** The branch head the runtime knows (from openTask and its own commits). */
  readonly head: string | null;
  /** Capability ids returned by the task's searches. */
  readonly searched: ReadonlySet<string>;
  readonly candidateId: string | null;
  /** The token of a passed validation of `candidateId`, if any. */
  readonly validationToken: string | null;
  /** The branch head a read-back verified, if any. */
  readonly verifiedRevision: string | null;
  /** First op of the protocol's discovery sequence not yet done in this cycle (M12, M15), else null. */
  readonly discoveryMissing: MetaOp | null;
}

/** A call as the runtime received it: parsed against its op's input schema, or why not. */
export type ClassifiedCall =
  | {
      readonly kind: 'invalid';
      readonly code: 'INVALID_INPUT' | 'UNKNOWN_OPERATION';
      readonly requestId: string;
      readonly op: string;
      readonly message: string;
    }
  | { readonly kind: 'call'; readonly requestId: string; readonly call: MetaCall; readonly effectClass: EffectClass };

export type Admission =
  | { readonly admit: true; readonly cell: AdmitCell; readonly variant: string | null }
  | { readonly admit: false; readonly code: string; readonly next: MetaOp | null; readonly message: string };

const refuse = (code: string, next: MetaOp | null, message: string): Admission => ({ admit: false, code, next, message });

/**
 * One call in one state. Order: terminal; the matrix cell (variant applied); the cell's binding
 * requirements; the protocol's discovery sequence for effects; the caller's observed revision (for
 * effects and queries).
 */
export function admit(contract: MatrixContract, view: AdmissionView, call: MetaCall, effectClass: EffectClass): Admission {
  if (view.terminal) return refuse('TASK_TERMINAL', null, 'the task has ended');
  const input = call.input as Readonly<Record<string, unknown>>;
  const variant = callVariant(contract, call.op, input);
  const cell = lookupCell(contract, view.state, call.op, variant);
  if (!cell.admit) return refuse(cell.code, cell.next, `${call.op}${variant ? ` (${variant})` : ''} is not admitted in state ${view.state}`);
  if (cell.requiresSearched && !view.searched.has(String(input['capability']))) {
    return refuse(cell.requiresSearched.code, cell.requiresSearched.next, `${String(input['capability'])} was not returned by an earlier catalog.search`);
  }
  if (cell.requiresCandidate && input['candidateId'] !== view.candidateId) {
    return refuse(cell.requiresCandidate.code, cell.requiresCandidate.next, "candidateId is not the task's current candidate");
  }
  if (
    cell.requiresValidation &&
    (view.validationToken === null || input['candidateId'] !== view.candidateId || input['validationToken'] !== view.validationToken)
  ) {
    return refuse(cell.requiresValidation.code, cell.requiresValidation.next, 'candidateId and validationToken are not the current validated pair');
  }
  if (cell.requiresVerifiedReadBack && (view.verifiedRevision === null || view.verifiedRevision !== view.head)) {
    return refuse(cell.requiresVerifiedReadBack.code, cell.requiresVerifiedReadBack.next, 'the branch head has no verified read-back');
  }
  if (effectClass !== 'read' && view.discoveryMissing !== null) {
    return refuse('DISCOVERY_REQUIRED', view.discoveryMissing, `the protocol's discovery sequence needs ${view.discoveryMissing} first`);
  }
  // A query extends the capsule (M7) and binds the revision it observed (M3): one asked from an old head
  // would add an answer about the new head to a view of the old one, so it is refused like an effect.
  // A plain read only observes and is answered at the head with that head named.
  const bindsRevision = effectClass !== 'read' || (call.op === 'model.read' && call.input.query !== undefined);
  if (bindsRevision && typeof input['observedRevision'] === 'string' && input['observedRevision'] !== view.head) {
    return refuse('STALE_REVISION', 'model.read', `the observed revision is not the branch head${effectClass === 'read' ? ' (a query binds it)' : ''}`);
  }
  return { admit: true, cell, variant };
}

export type CallDecision =
  | { readonly index: number; readonly decision: 'rejected'; readonly code: string; readonly next: MetaOp | null; readonly message: string }
  | { readonly index: number; readonly decision: 'scheduled'; readonly role: 'read' | 'effect'; readonly cell: AdmitCell; readonly variant: string | null }
  | { readonly index: number; readonly decision: 'deferred' };

export interface Reduction {
  /** One decision per call, input order. */
  readonly decisions: readonly CallDecision[];
  /** Indices in trace order: rejections, scheduled reads, the scheduled effect, deferred (each in input order). */
  readonly traceOrder: readonly number[];
  readonly reads: readonly number[];
  readonly effect: number | null;
  /** Request ids this round consumes (everything but the deferred calls and duplicates). */
  readonly consumed: readonly string[];
  /** A STALE_REVISION refusal moves the task to observe. */
  readonly stale: boolean;
}

/**
 * One round (M40): duplicates and invalid calls refused; admission of the rest against the state at
 * the start of the round; admitted reads all scheduled; the first admitted non-read call scheduled
 * after them (an irreversible one is then necessarily alone and last); every other non-read deferred.
 * Scheduled calls beyond `remainingCalls` are refused `BUDGET_EXHAUSTED`. After a stale refusal no effect
 * runs this round: the caller's view is old, so the effect is deferred.
 */
export function reduceBatch(
  contract: MatrixContract,
  view: AdmissionView,
  calls: readonly ClassifiedCall[],
  usedRequestIds: ReadonlySet<string>,
  remainingCalls: number,
): Reduction {
  const decisions: CallDecision[] = new Array(calls.length);
  const seen = new Set<string>();
  const admitted: Array<{ index: number; cell: AdmitCell; variant: string | null; read: boolean }> = [];
  let stale = false;
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i]!;
    if (view.terminal) {
      decisions[i] = { index: i, decision: 'rejected', code: 'TASK_TERMINAL', next: null, message: 'the task has ended' };
      continue;
    }
    if (c.kind === 'invalid') {
      decisions[i] = { index: i, decision: 'rejected', code: c.code, next: null, message: c.message };
      continue;
    }
    if (usedRequestIds.has(c.requestId) || seen.has(c.requestId)) {
      decisions[i] = { index: i, decision: 'rejected', code: 'DUPLICATE_REQUEST_ID', next: null, message: `requestId ${c.requestId} was used before` };
      continue;
    }
    seen.add(c.requestId);
    const a = admit(contract, view, c.call, c.effectClass);
    if (!a.admit) {
      if (a.code === 'STALE_REVISION') stale = true;
      decisions[i] = { index: i, decision: 'rejected', code: a.code, next: a.next, message: a.message };
      continue;
    }
    admitted.push({ index: i, cell: a.cell, variant: a.variant, read: c.effectClass === 'read' });
  }

  let budget = remainingCalls;
  const overBudget = (index: number): CallDecision => ({
    index,
    decision: 'rejected',
    code: 'BUDGET_EXHAUSTED',
    next: null,
    message: 'the call budget is spent',
  });
  const reads: number[] = [];
  for (const a of admitted) {
    if (!a.read) continue;
    if (budget > 0) {
      budget--;
      reads.push(a.index);
      decisions[a.index] = { index: a.index, decision: 'scheduled', role: 'read', cell: a.cell, variant: a.variant };
    } else {
      decisions[a.index] = overBudget(a.index);
    }
  }
  let effect: number | null = null;
  for (const a of admitted) {
    if (a.read) continue;
    if (effect === null && !stale && budget > 0) {
      effect = a.index;
      decisions[a.index] = { index: a.index, decision: 'scheduled', role: 'effect', cell: a.cell, variant: a.variant };
    } else if (effect === null && !stale && budget <= 0) {
      decisions[a.index] = overBudget(a.index);
    } else {
      decisions[a.index] = { index: a.index, decision: 'deferred' };
    }
  }

  const traceOrder: number[] = [];
  const consumed: string[] = [];
  for (const d of decisions) if (d.decision === 'rejected') traceOrder.push(d.index);
  traceOrder.push(...reads);
  if (effect !== null) traceOrder.push(effect);
  for (const d of decisions) if (d.decision === 'deferred') traceOrder.push(d.index);
  for (const d of decisions) {
    const c = calls[d.index]!;
    if (c.kind !== 'call' || d.decision === 'deferred') continue;
    if (d.decision === 'rejected' && (d.code === 'DUPLICATE_REQUEST_ID' || d.code === 'TASK_TERMINAL')) continue;
    consumed.push(c.requestId);
  }
  return { decisions, traceOrder, reads, effect, consumed, stale };
}
