/**
 * Building typed diagnostics (M24) and the runtime's own codes. Every diagnostic leaves here valid
 * against the `Diagnostic` schema, so an envelope never carries one the schema would refuse.
 */
import { Diagnostic, type EnvelopeStatus } from './schema.js';

type Phase = Diagnostic['phase'];
type Cause = Diagnostic['cause'];

const MAX_MESSAGE = 1000;
const CODE = /^[A-Z][A-Z0-9_]*$/;

/**
 * One diagnostic. Defaults: severity `error`, nothing affected, no repair capability or scope, no
 * approval. A message longer than the schema allows is cut (it may quote hostile input); a code that
 * is not UPPER_SNAKE is a programming error and throws.
 */
export function diagnostic(code: string, phase: Phase, cause: Cause, message: string, extra?: Partial<Diagnostic>): Diagnostic {
  if (!CODE.test(code)) throw new TypeError(`diagnostic code must be UPPER_SNAKE_CASE: ${JSON.stringify(code)}`);
  // `extra` refines; it cannot change what the diagnostic is.
  const { code: _code, phase: _phase, cause: _cause, message: _message, ...refine } = extra ?? {};
  const d: Diagnostic = {
    code,
    phase,
    severity: 'error',
    affected: [],
    cause,
    repairCapabilities: [],
    repairScope: [],
    approvalRequired: false,
    message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message,
    ...refine,
  };
  if (d.expected === undefined) delete d.expected;
  if (d.actual === undefined) delete d.actual;
  return Diagnostic.parse(d);
}

export interface RuntimeCodeInfo {
  /** Envelope status of a refused call; absent for codes that only name a terminal or a verdict. */
  readonly status?: EnvelopeStatus;
  readonly phase: Phase;
  readonly cause: Cause;
  /** Severity of the diagnostic carrying the code; `DEFERRED` is not an error. */
  readonly severity: Diagnostic['severity'];
  readonly meaning: string;
}

const admission = (meaning: string): RuntimeCodeInfo => ({ status: 'blocked', phase: 'admission', cause: 'protocol', severity: 'error', meaning });

/**
 * The codes the runtime itself emits (matrix rejections M36, the other refusals, terminals). Authority
 * codes (`PARAMETER_UNKNOWN`, …) and plan-check codes (`PLAN_CHECK_CODES`) are not here.
 */
export const RUNTIME_CODES = {
  DISCOVERY_REQUIRED: admission('the required discovery sequence has not completed (or the capability was not found by an earlier search)'),
  CANDIDATE_REQUIRED: admission('no current candidate: propose a patch first'),
  PREVIEW_REQUIRED: admission('the candidate has not been previewed'),
  VALIDATION_REQUIRED: admission('the candidate has not been validated'),
  NOTHING_TO_REVERT: admission('nothing has been committed on the task branch'),
  INVALID_INPUT: { status: 'blocked', phase: 'input', cause: 'input', severity: 'error', meaning: 'the call does not match the operation input schema' },
  UNKNOWN_OPERATION: { status: 'blocked', phase: 'input', cause: 'input', severity: 'error', meaning: 'not one of the nine meta-operations' },
  DUPLICATE_REQUEST_ID: admission('the requestId was used before in this task or earlier in the batch'),
  TASK_TERMINAL: admission('the task has ended'),
  STALE_REVISION: { status: 'stale', phase: 'admission', cause: 'stale', severity: 'error', meaning: 'the observed revision is not the branch head' },
  READBACK_REQUIRED: admission('completion and publishing need a verified read-back'),
  BOUND_CAPABILITY_STALE: {
    status: 'blocked',
    phase: 'binding',
    cause: 'stale',
    severity: 'error',
    meaning: 'the scoped binding no longer matches session, revision or snapshot',
  },
  DEFERRED: { status: 'blocked', phase: 'admission', cause: 'protocol', severity: 'info', meaning: 'not run this round (one effect a round); resend it' },
  ACCEPTANCE_FAILED: { phase: 'completion', cause: 'assertion', severity: 'error', meaning: 'acceptance assertions did not pass at the read-back revision' },
  REPAIR_CAP_REACHED: { phase: 'runtime', cause: 'budget', severity: 'error', meaning: 'another repair round would exceed the protocol repair cap' },
  BUDGET_EXHAUSTED: { phase: 'runtime', cause: 'budget', severity: 'error', meaning: 'a budget dimension reached zero before completion' },
  AUTHORITY_INTEGRITY: { phase: 'runtime', cause: 'integrity', severity: 'error', meaning: 'the authority answered something the contract refuses' },
  AUTHORITY_UNAVAILABLE: { phase: 'runtime', cause: 'authority', severity: 'error', meaning: 'the authority cannot be reached' },
  AUTHORITY_INTERNAL: { phase: 'runtime', cause: 'authority', severity: 'error', meaning: 'the authority failed' },
  COMPLETED: { phase: 'completion', cause: 'assertion', severity: 'info', meaning: 'completion sequence and read-back verified' },
  CANCELLED: { phase: 'runtime', cause: 'protocol', severity: 'info', meaning: 'cancelled by the client or user' },
  ABSTAINED: { phase: 'runtime', cause: 'protocol', severity: 'info', meaning: 'explicit abstention: no legal action reaches the goal' },
} as const satisfies Record<string, RuntimeCodeInfo>;
export type RuntimeCode = keyof typeof RUNTIME_CODES;

/** A diagnostic for one of the runtime's codes, phase/cause/severity from the table. */
export function runtimeDiagnostic(code: RuntimeCode, message: string, extra?: Partial<Diagnostic>): Diagnostic {
  const info: RuntimeCodeInfo = RUNTIME_CODES[code];
  return diagnostic(code, info.phase, info.cause, message, { severity: info.severity, ...extra });
}

/** Whether a diagnostic opens a repair round (M41): a schema-valid object of severity `error`. */
export function isBlockingDiagnostic(d: unknown): boolean {
  const r = Diagnostic.safeParse(d);
  return r.success && r.data.severity === 'error';
}
