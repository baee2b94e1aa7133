/**
 * What the runtime dispatches to once it has admitted a meta-operation. An authority owns the model
 * (a revisioned document, a rin world, …); it never decides task state: the runtime does, from the
 * results returned here. Results are plain data: diagnostics are typed `Diagnostic`s, never prose for
 * the client to act on.
 *
 * Every method may throw `AuthorityError` for an unrecoverable fault (the task ends `failed`); anything
 * the model can recover from is a result with `diagnostics` (and `status`) instead.
 */
import type { AcceptanceAssertion, Artifact, CapabilityId, Diagnostic, EffectClass, EffectObserved, MetaCall, OpInput, Plan, Risk } from './schema.js';

export interface AuthorityContext {
  readonly taskId: string;
  /** The task branch opened by `openTask`. */
  readonly branch: string;
  readonly requestId: string;
  readonly idempotencyKey?: string | undefined;
}

export interface AuthorityResult<D> {
  /** The revision this answer was computed against (M3). */
  readonly observedRevision: string;
  readonly data: D;
  readonly diagnostics: readonly Diagnostic[];
  readonly effectsObserved?: readonly EffectObserved[];
  readonly artifacts?: readonly Artifact[];
  /** `stale`: a CAS lost to a moved head; `partial`: some selected parts were unavailable. */
  readonly status?: 'success' | 'partial' | 'stale';
}

export interface AuthorityManifest {
  readonly authority: string;
  readonly protocolVersion: string;
  readonly operationCatalog: string;
  readonly taxonomyRoot: string;
  /** Validators acceptance assertions may name (plan.check refuses others, M18). */
  readonly validators: readonly string[];
  readonly limits: Readonly<Record<string, number>>;
}

export interface CapabilityHit {
  readonly id: CapabilityId;
  readonly title: string;
  readonly effectClass: EffectClass;
  readonly risk: Risk;
}

export interface CapabilityContract extends CapabilityHit {
  readonly description: string;
  /** JSON Schema (2020-12) of the step's `args`. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly mode: 'query' | 'authoring';
  readonly reversible: boolean;
  readonly preconditions: readonly string[];
}

export interface TaskBranch {
  readonly branch: string;
  /** The user head the branch was cut from. */
  readonly baseRevision: string;
  /** The branch head now (equal to baseRevision for a new branch). */
  readonly head: string;
}

export interface ValidationData {
  readonly passed: boolean;
  /** Present iff passed: binds candidate, base revision and the evidence (M30: "by full binding"). */
  readonly validationToken?: string;
  readonly evidence: ReadonlyArray<{ readonly assertion: string; readonly passed: boolean; readonly detail?: unknown }>;
}

export interface AssertionResult {
  readonly passed: boolean;
  readonly results: ReadonlyArray<{ readonly assertion: string; readonly passed: boolean; readonly detail?: unknown }>;
}

export interface Authority {
  readonly kind: string;
  /** Cut (or reopen, for the same taskId) the task branch. Idempotent per taskId. */
  openTask(taskId: string): Promise<TaskBranch>;
  /** The task branch's head now (for stale checks); never a write. */
  head(ctx: AuthorityContext): Promise<string>;
  manifest(ctx: AuthorityContext): Promise<AuthorityResult<AuthorityManifest>>;
  search(ctx: AuthorityContext, input: OpInput<'catalog.search'>): Promise<AuthorityResult<{ hits: CapabilityHit[]; catalogHash: string }>>;
  describe(ctx: AuthorityContext, capability: CapabilityId): Promise<AuthorityResult<CapabilityContract>>;
  read(ctx: AuthorityContext, input: OpInput<'model.read'>): Promise<AuthorityResult<Record<string, unknown>>>;
  /** Lower the plan's authoring steps to a patch and check it statically; no write outside the task. */
  propose(ctx: AuthorityContext, plan: Plan): Promise<AuthorityResult<{ candidateId: string } & Record<string, unknown>>>;
  preview(ctx: AuthorityContext, candidateId: string): Promise<AuthorityResult<Record<string, unknown>>>;
  validate(ctx: AuthorityContext, candidateId: string): Promise<AuthorityResult<ValidationData>>;
  commit(ctx: AuthorityContext, input: OpInput<'model.commit'>): Promise<AuthorityResult<{ revision: string }>>;
  revert(ctx: AuthorityContext, input: OpInput<'model.revert'>): Promise<AuthorityResult<{ revision: string }>>;
  /** Evaluate acceptance assertions at a revision: the local verifier behind completion (M14, M43). */
  verify(ctx: AuthorityContext, assertions: readonly AcceptanceAssertion[], revision: string): Promise<AssertionResult>;
  /** Effect class of one admitted call; the runtime uses it for batch reduction (M38–M39). */
  effectClass(call: MetaCall): EffectClass;
  close(): Promise<void>;
}

export type AuthorityErrorCode = 'AUTHORITY_UNAVAILABLE' | 'AUTHORITY_INTEGRITY' | 'AUTHORITY_INTERNAL';

/** An unrecoverable authority fault: the runtime records it and ends the task `failed`. */
export class AuthorityError extends Error {
  override readonly name = 'AuthorityError';
  constructor(
    readonly code: AuthorityErrorCode,
    message: string,
  ) {
    super(message);
  }
}
