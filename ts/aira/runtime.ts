/**
 * The Aira runtime: one task, its state machine, its budgets and its trace. It decides every crossing
 * (admission before any dispatch, M33; repair only from real Diagnostics, M41–M42; the five terminals,
 * M43) and only calls the Authority it is given; it has no clock, no randomness and no I/O of its own,
 * so the same calls give the same envelopes and the same trace through any transport.
 */
import { z } from 'zod';
import type { Crypto } from '../crypto/backend.js';
import {
  AuthorityError,
  type Authority,
  type AuthorityContext,
  type AuthorityManifest,
  type AuthorityResult,
  type CapabilityContract,
  type TaskBranch,
} from './authority.js';
import { reduceBatch, type AdmissionView, type CallDecision, type ClassifiedCall } from './batch.js';
import { AiraError, checkContract, defaultContract, resolveTarget, staticEffectClass, type AdmitCell, type MatrixContract } from './contract.js';
import { diagnostic, runtimeDiagnostic, type RuntimeCode, RUNTIME_CODES } from './diagnostics.js';
import { contentId } from './ids.js';
import {
  Artifact,
  CapabilityId,
  Diagnostic,
  EffectClass,
  EffectObserved,
  HashId,
  META_OPS,
  Name,
  OP_INPUTS,
  type Budgets,
  type BudgetLimits,
  type CertificateSummary,
  type Envelope,
  type EnvelopeStatus,
  type IntentFrame,
  type MetaCall,
  type MetaOp,
  type NextAction,
  type OpInput,
  type RuntimeState,
  type TaskProtocol,
  type TerminalRecord,
  type TerminalState,
  type Trace,
} from './schema.js';
import { TraceLog } from './trace.js';
import { checkPlan } from './plan-check.js';
import {
  AiraInputError,
  buildCapsule,
  CapabilityContractSchema,
  CapabilityHitSchema,
  intentFrameHash,
  MAX_EXTENSIONS,
  resolveTaskInput,
  type ResolvedTaskInput,
  type TaskCapsule,
} from './capsule.js';

export interface TaskInput {
  intentFrame: IntentFrame;
  protocol?: Partial<TaskProtocol>;
  budget?: Partial<BudgetLimits>;
  grantId?: string;
  nonce?: string;
}

export interface RuntimeOptions {
  authority: Authority;
  crypto: Crypto;
  /** Defaults to the built-in contract 1.0.0; one handed in is validated again. */
  contract?: MatrixContract;
  /** Virtual clock (milliseconds) for the `millis` budget; never read unless that budget is set. */
  now?: () => number;
}

export interface BatchResult {
  readonly requestId: string;
  readonly op: string;
  readonly decision: 'scheduled' | 'deferred' | 'rejected';
  readonly envelope: Envelope;
}

export interface BatchOutcome {
  readonly batch: number;
  /** Input order. */
  readonly results: BatchResult[];
}

/**
 * Codes a caller outside the runtime may refuse a call with (`AiraTask.refuse`): refusals that change
 * nothing. The runtime's own refusals with other effects (a stale revision moves the task, a duplicate
 * or a call after the end consumes no id, a deferral is resent) stay the runtime's.
 */
export const REFUSAL_CODES = [
  'BOUND_CAPABILITY_STALE',
  'DISCOVERY_REQUIRED',
  'CANDIDATE_REQUIRED',
  'PREVIEW_REQUIRED',
  'VALIDATION_REQUIRED',
  'NOTHING_TO_REVERT',
  'READBACK_REQUIRED',
] as const satisfies readonly RuntimeCode[];
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** A call refused before the runtime saw it whole, e.g. through a scoped binding gone stale (M49). */
export interface Refusal {
  readonly requestId: string;
  /** The meta-operation the refused call stood for. */
  readonly op: MetaOp;
  readonly code: RefusalCode;
  readonly message: string;
  /** What to call instead, optionally about one capability. */
  readonly next?: { readonly op: MetaOp; readonly capability?: string } | null;
  /** The diagnostic's members beyond code, phase, cause, severity and message; `affected` defaults to the request id. */
  readonly details?: Pick<Partial<Diagnostic>, 'affected' | 'expected' | 'actual' | 'repairCapabilities' | 'repairScope'>;
}

const RefusalShape = z.object({
  requestId: Name,
  op: z.enum(META_OPS),
  code: z.enum(REFUSAL_CODES),
  message: z.string(),
  next: z
    .object({ op: z.enum(META_OPS), capability: CapabilityId.optional() })
    .nullable()
    .optional(),
  details: Diagnostic.pick({ affected: true, expected: true, actual: true, repairCapabilities: true, repairScope: true }).partial().optional(),
});

/** What a rejected event needs beyond the call and its decision. */
interface RejectExtra {
  readonly nextCapability?: string;
  readonly details?: Partial<Diagnostic>;
}

type CertificateSummaryT = z.infer<typeof CertificateSummary>;

// What the runtime itself relies on in an authority's answer; anything else in `data` is passed through.
const ResultShape = z.object({
  observedRevision: z.string().max(200),
  data: z.record(z.string(), z.unknown()),
  diagnostics: z.array(z.unknown()),
  effectsObserved: z.array(EffectObserved).optional(),
  artifacts: z.array(Artifact).optional(),
  status: z.enum(['success', 'partial', 'stale']).optional(),
});
const SearchData = z.object({ hits: z.array(z.looseObject({ id: z.string() })), catalogHash: z.string() });
const DescribeData = z.object({ id: z.string() });
const ProposeData = z.object({ candidateId: HashId });
const ValidateData = z.object({ passed: z.boolean(), validationToken: HashId.optional() });
const RevisionData = z.object({ revision: z.string().min(1).max(200) });
const ManifestData = z.object({ validators: z.array(z.string()), operationCatalog: z.string() });
const BranchShape = z.object({ branch: z.string().min(1), baseRevision: z.string().min(1), head: z.string().min(1) });
/** A query's answer must name the revision it was computed at: that is the extension's binding (M3, M7). */
const QueryRevision = z.string().min(1).max(200);

/** Where a stale plan sends the task: back to observe, to be rebased and re-checked (M3, M36 footnote 5). */
const STALE_PLAN_STATE: RuntimeState = 'observe';

/** An authority answer the runtime refuses: the task ends `failed` (AUTHORITY_INTEGRITY). */
class IntegrityFault extends Error {}

interface Checked {
  readonly observedRevision: string;
  readonly data: Record<string, unknown>;
  readonly diagnostics: Diagnostic[];
  readonly effectsObserved: EffectObserved[];
  readonly artifacts: z.infer<typeof Artifact>[];
  readonly status: 'success' | 'partial' | 'stale';
}

function checkResult(op: MetaOp, raw: unknown): Checked {
  const r = ResultShape.safeParse(raw);
  if (!r.success) throw new IntegrityFault(`${op}: malformed authority result (${r.error.issues[0]?.message ?? 'shape'})`);
  const diagnostics: Diagnostic[] = [];
  for (const d of r.data.diagnostics) {
    const p = Diagnostic.safeParse(d);
    // M41: only a schema-valid Diagnostic can open repair; a malformed one is an integrity fault.
    if (!p.success) throw new IntegrityFault(`${op}: authority returned a malformed diagnostic`);
    diagnostics.push(p.data);
  }
  return {
    observedRevision: r.data.observedRevision,
    data: r.data.data,
    diagnostics,
    effectsObserved: r.data.effectsObserved ?? [],
    artifacts: r.data.artifacts ?? [],
    status: r.data.status ?? 'success',
  };
}

function requireData<T>(schema: z.ZodType<T>, op: MetaOp, data: unknown): T {
  const r = schema.safeParse(data);
  if (!r.success) throw new IntegrityFault(`${op}: authority result data lacks what the runtime needs (${r.error.issues[0]?.path.join('.') ?? ''})`);
  return r.data;
}

/**
 * The longest prefix of `sequence` found, in order, as a subsequence of the ops pushed so far. Greedy
 * matching is exact for a prefix, so one counter suffices: each op costs O(1) however long the task.
 */
class PrefixProgress {
  #matched = 0;

  constructor(private readonly sequence: readonly MetaOp[]) {}

  push(op: MetaOp): void {
    if (this.#matched < this.sequence.length && this.sequence[this.#matched] === op) this.#matched++;
  }

  reset(): void {
    this.#matched = 0;
  }

  /** The prefix matched so far (a fresh array). */
  get prefix(): MetaOp[] {
    return this.sequence.slice(0, this.#matched);
  }

  /** The first op of the sequence not yet matched, or null when all of it is. */
  get missing(): MetaOp | null {
    return this.sequence[this.#matched] ?? null;
  }
}

/** Calls in one round at most; a larger batch is refused whole. */
export const MAX_BATCH = 256;
const MAX_INPUT_DEPTH = 64;
const MAX_INPUT_NODES = 100_000;

/**
 * Why `value` is not plain JSON (NaN, bigint, undefined in an array, a function, a non-plain object,
 * too deep or too large — a cycle is one of the last two), else null. Walked without recursion: input
 * may be hostile.
 */
function jsonFault(value: unknown): string | null {
  const work: Array<[unknown, number]> = [[value, 0]];
  let nodes = 0;
  while (work.length > 0) {
    const [v, depth] = work.pop()!;
    if (++nodes > MAX_INPUT_NODES) return `more than ${MAX_INPUT_NODES} values`;
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return 'a number that is not finite';
      continue;
    }
    if (typeof v !== 'object') return `a ${typeof v} value`;
    if (depth >= MAX_INPUT_DEPTH) return `nesting deeper than ${MAX_INPUT_DEPTH}`;
    if (Array.isArray(v)) {
      for (const x of v) work.push([x, depth + 1]);
      continue;
    }
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) return 'an object that is not plain';
    for (const x of Object.values(v)) if (x !== undefined) work.push([x, depth + 1]);
  }
  return null;
}

function faultCode(e: unknown): RuntimeCode {
  if (e instanceof AuthorityError) return e.code;
  if (e instanceof IntegrityFault) return 'AUTHORITY_INTEGRITY';
  return 'AUTHORITY_INTERNAL';
}

function faultMessage(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 500);
}

/**
 * Starts a task: checks the contract and the task input (typed `AiraError` on either), computes the
 * task id and opens the task branch. No meta-operation is dispatched.
 *
 * @param opts - the authority the task runs against and a crypto backend (RuntimeOptions: also a contract and a
 *   virtual clock), and the task input
 * @returns the task: `call` and `batch` request meta-operations, `trace` and `capsule` show where it is
 * @example
 * ```ts
 * const crypto = getCrypto();
 * const task = await startTask({ authority: openDocumentAuthority({ crypto }), crypto, task: bracketTask() });
 * const envelope = await task.call({ op: 'interface.manifest', input: { requestId: 'r1' } }); // envelope.status 'success'
 * ```
 */
export async function startTask(opts: RuntimeOptions & { task: TaskInput }): Promise<AiraTask> {
  const { authority, crypto } = opts ?? {};
  if (typeof crypto?.jcsValueSha256 !== 'function') throw new AiraError('RUNTIME_OPTIONS_INVALID', 'crypto must be a Crypto backend');
  const methods = [
    'openTask',
    'manifest',
    'search',
    'describe',
    'read',
    'propose',
    'preview',
    'validate',
    'commit',
    'revert',
    'verify',
    'effectClass',
  ] as const;
  const missing = methods.find((m) => typeof (authority as Partial<Authority> | undefined)?.[m] !== 'function');
  if (missing) throw new AiraError('RUNTIME_OPTIONS_INVALID', `authority lacks ${missing}()`);
  const contract = opts.contract === undefined ? defaultContract(crypto) : checkContract(opts.contract, crypto);
  let input: ResolvedTaskInput;
  try {
    input = resolveTaskInput(opts.task);
  } catch (e) {
    if (e instanceof AiraInputError) throw new AiraError(e.code, e.message);
    throw e;
  }
  const notJson = jsonFault(input.intentFrame);
  if (notJson) throw new AiraError('TASK_INPUT_INVALID', `task.intentFrame is not plain JSON: ${notJson}`);
  const taskId = contentId(
    'task',
    {
      intentFrame: input.intentFrame,
      protocol: input.protocol,
      budget: input.budget,
      grantId: input.grantId,
      ...(input.nonce === undefined ? {} : { nonce: input.nonce }),
    },
    crypto,
  );
  let branch: TaskBranch;
  try {
    const raw: unknown = await authority.openTask(taskId);
    const b = BranchShape.safeParse(raw);
    if (!b.success) throw new AiraError('AUTHORITY_INTEGRITY', 'openTask returned a malformed task branch');
    branch = b.data;
  } catch (e) {
    if (e instanceof AiraError) throw e;
    throw new AiraError(faultCode(e), `cannot open the task branch: ${faultMessage(e)}`);
  }
  const now = opts.now ?? (() => 0);
  return new AiraTask({
    authority,
    crypto,
    contract,
    taskId,
    intentFrame: input.intentFrame,
    protocol: input.protocol,
    budget: input.budget,
    grantId: input.grantId,
    branch,
    now,
  });
}

interface TaskInit {
  authority: Authority;
  crypto: Crypto;
  contract: MatrixContract;
  taskId: string;
  intentFrame: IntentFrame;
  protocol: TaskProtocol;
  budget: BudgetLimits;
  grantId: string;
  branch: TaskBranch;
  now: () => number;
}

/** What running one scheduled call produced, before it is folded into the task. */
type Outcome = { readonly ok: true; readonly result: Checked } | { readonly ok: false; readonly error: unknown };

export class AiraTask {
  readonly taskId: string;
  readonly #authority: Authority;
  readonly #crypto: Crypto;
  readonly #contract: MatrixContract;
  readonly #intentFrame: IntentFrame;
  readonly #protocol: TaskProtocol;
  readonly #budget: BudgetLimits;
  readonly #grantId: string;
  readonly #branch: TaskBranch;
  readonly #now: () => number;
  readonly #startedAt: number;
  readonly #trace: TraceLog;

  #state: RuntimeState;
  #head: string;
  #batches = 0;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #used = new Set<string>();
  readonly #searched = new Set<string>();
  readonly #described = new Map<string, CapabilityContract>();
  #catalogHash: string | null = null;
  #hits: Array<Record<string, unknown>> = [];
  /** Capsule extensions through `model.query` (M7), oldest first, the most recent MAX_EXTENSIONS kept. */
  readonly #extensions: TaskCapsule['extensions'] = [];
  readonly #recent: Diagnostic[] = [];
  readonly #certificates: CertificateSummaryT[] = [];
  readonly #runtimeSnapshot: string;
  readonly #intentFrameHash: string;
  #manifest: AuthorityManifest | null = null;
  #candidate: string | null = null;
  #token: string | null = null;
  #verified: string | null = null;
  /**
   * How far this cycle's successful scheduled ops (reset on stale → observe and on repair) have gone
   * through the protocol's discovery and completion sequences.
   */
  readonly #cycleDiscovery: PrefixProgress;
  readonly #cycleCompletion: PrefixProgress;
  /** The same for the whole task's successful scheduled ops (the completion check, M43). */
  readonly #taskCompletion: PrefixProgress;
  #calls = 0;
  #effects = 0;
  #repairs = 0;

  constructor(init: TaskInit) {
    this.taskId = init.taskId;
    this.#authority = init.authority;
    this.#crypto = init.crypto;
    this.#contract = init.contract;
    this.#intentFrame = init.intentFrame;
    this.#protocol = init.protocol;
    this.#budget = init.budget;
    this.#grantId = init.grantId;
    this.#branch = init.branch;
    this.#now = init.now;
    this.#startedAt = init.budget.millis === undefined ? 0 : init.now();
    this.#cycleDiscovery = new PrefixProgress(init.protocol.requiredDiscoverySequence);
    this.#cycleCompletion = new PrefixProgress(init.protocol.requiredCompletionSequence);
    this.#taskCompletion = new PrefixProgress(init.protocol.requiredCompletionSequence);
    this.#state = init.contract.descriptor.initial;
    this.#head = init.branch.head;
    this.#trace = new TraceLog(init.contract, init.taskId);
    this.#intentFrameHash = intentFrameHash(init.intentFrame, init.crypto);
    // What a plan binds as the runtime it was made for (M17): contract, matrix and authority kind.
    this.#runtimeSnapshot = contentId(
      'runtime',
      {
        contractVersion: init.contract.contractVersion,
        traceVersion: init.contract.traceVersion,
        matrixDigest: init.contract.matrixDigest,
        authority: init.authority.kind,
      },
      init.crypto,
    );
  }

  get state(): RuntimeState {
    return this.#state;
  }

  get terminal(): TerminalRecord | null {
    return this.#trace.terminal;
  }

  get contract(): MatrixContract {
    return this.#contract;
  }

  /** The branch head as the runtime knows it (no authority call). */
  get head(): string {
    return this.#head;
  }

  trace(): Trace {
    return this.#trace.snapshot();
  }

  /** `intent:sha256:…` of the task's intent frame: what a plan's `intentFrameHash` must equal. */
  get intentFrameHash(): string {
    return this.#intentFrameHash;
  }

  get grantId(): string {
    return this.#grantId;
  }

  /** `runtime:sha256:…`: the snapshot a plan's bindings must name. */
  get runtimeSnapshot(): string {
    return this.#runtimeSnapshot;
  }

  /**
   * The Task Capsule at the branch head now (M4): intent, protocol, plan bindings, the capabilities
   * found and described so far, budgets, recent diagnostics and certificates. Read-only.
   */
  capsule(): TaskCapsule {
    // Only what the capsule schema declares is carried; an authority's extra members stay out.
    const pick = <T>(schema: z.ZodType<T>, o: unknown, keys: readonly string[]): T[] => {
      const src = o as Record<string, unknown>;
      const r = schema.safeParse(Object.fromEntries(keys.filter((k) => src[k] !== undefined).map((k) => [k, src[k]])));
      return r.success ? [r.data] : [];
    };
    const hitKeys = Object.keys(CapabilityHitSchema.shape);
    const contractKeys = Object.keys(CapabilityContractSchema.shape);
    try {
      return buildCapsule(
        {
          taskId: this.taskId,
          intentFrame: this.#intentFrame,
          protocol: this.#protocol,
          revision: this.#head,
          branch: this.#branch.branch,
          runtimeSnapshot: this.#runtimeSnapshot,
          budget: this.#budgets(),
          grantId: this.#grantId,
          capabilityHits: this.#hits.slice(0, 50).flatMap((h) => pick(CapabilityHitSchema, h, hitKeys)),
          selectedContracts: [...this.#described.values()].slice(-20).flatMap((c) => pick(CapabilityContractSchema, c, contractKeys)),
          operationCatalog: this.#manifest?.operationCatalog ?? null,
          discoveryCatalogHash: this.#catalogHash !== null && HashId.safeParse(this.#catalogHash).success ? this.#catalogHash : null,
          recentDiagnostics: this.#recent,
          certificates: this.#certificates.slice(-16),
          extensions: this.#extensions,
        },
        this.#crypto,
      );
    } catch (e) {
      if (e instanceof AiraInputError) throw new AiraError(e.code, e.message);
      throw e;
    }
  }

  /** Ends the task `cancelled` (client or user cancel). On an ended task, returns its terminal unchanged. */
  cancel(reason: string): TerminalRecord {
    return this.#end('cancelled', 'CANCELLED', reason, this.#trace.nextSeq);
  }

  /** Explicit abstention (M44): ends the task `cannotProceed`. On an ended task, returns its terminal unchanged. */
  abstain(reason: string): TerminalRecord {
    return this.#end('cannotProceed', 'ABSTAINED', reason, this.#trace.nextSeq);
  }

  /** One call: a batch of one. */
  async call(call: unknown): Promise<Envelope> {
    const out = await this.batch([call]);
    return out.results[0]!.envelope;
  }

  /**
   * Records a call refused outside the runtime's own admission (a scoped binding gone stale, M49) as a
   * round of its own holding one rejected event: the envelope any admission refusal has, nothing
   * dispatched, state and budgets unchanged, the request id consumed. A reused request id is refused
   * `DUPLICATE_REQUEST_ID` and, after the end, `TASK_TERMINAL` instead (neither consumes it). The call
   * was never built whole, so its event carries no effect class. A malformed refusal is an `AiraError`
   * `REFUSAL_INVALID`, with nothing recorded.
   */
  refuse(refusal: Refusal): Promise<Envelope> {
    const r = RefusalShape.safeParse(refusal);
    if (!r.success) {
      const issue = r.error.issues[0];
      return Promise.reject(
        new AiraError('REFUSAL_INVALID', `refusal invalid at ${issue?.path.map(String).join('.') || '(refusal)'}: ${issue?.message ?? 'malformed'}`),
      );
    }
    const notJson = jsonFault(r.data.details ?? null);
    if (notJson) return Promise.reject(new AiraError('REFUSAL_INVALID', `refusal details are not plain JSON: ${notJson}`));
    const run = this.#queue.then(() => this.#refusal(r.data));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** One round of calls (M38–M40); rounds of one task run one after another. */
  batch(calls: readonly unknown[]): Promise<BatchOutcome> {
    if (!Array.isArray(calls)) return Promise.reject(new AiraError('BATCH_INVALID', 'a batch is an array of calls'));
    if (calls.length > MAX_BATCH) return Promise.reject(new AiraError('BATCH_TOO_LARGE', `a batch holds at most ${MAX_BATCH} calls`));
    const run = this.#queue.then(() => this.#round(calls));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  // ---------------------------------------------------------------------------------------------

  #end(state: TerminalState, code: string, reason: string, seq: number): TerminalRecord {
    return this.#trace.end(state, code, reason, seq);
  }

  #ctx(requestId: string, idempotencyKey?: string): AuthorityContext {
    return { taskId: this.taskId, branch: this.#branch.branch, requestId, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) };
  }

  #view(): AdmissionView {
    return {
      state: this.#state,
      terminal: this.#trace.terminal !== null,
      head: this.#head,
      searched: this.#searched,
      candidateId: this.#candidate,
      validationToken: this.#token,
      verifiedRevision: this.#verified,
      discoveryMissing: this.#cycleDiscovery.missing,
    };
  }

  #elapsed(): number {
    return this.#budget.millis === undefined ? 0 : Math.max(0, Math.floor(this.#now() - this.#startedAt));
  }

  #budgets(): Budgets {
    const consumed: Record<string, number> = { calls: this.#calls, effects: this.#effects, repairs: this.#repairs };
    const remaining: Record<string, number> = {
      calls: Math.max(0, this.#budget.calls - this.#calls),
      effects: Math.max(0, this.#budget.effects - this.#effects),
      repairs: Math.max(0, this.#protocol.repairCap - this.#repairs),
    };
    if (this.#budget.millis !== undefined) {
      const used = this.#elapsed();
      consumed['millis'] = used;
      remaining['millis'] = Math.max(0, this.#budget.millis - used);
    }
    return { consumed, remaining };
  }

  #resetCycle(): void {
    this.#cycleDiscovery.reset();
    this.#cycleCompletion.reset();
  }

  #completedPrefix(): MetaOp[] {
    return this.#cycleCompletion.prefix;
  }

  #envelope(
    requestId: string,
    parts: {
      observedRevision: string | null;
      status: EnvelopeStatus;
      data?: Record<string, unknown>;
      diagnostics?: Diagnostic[];
      effectsObserved?: EffectObserved[];
      artifacts?: z.infer<typeof Artifact>[];
      certificateSummary?: CertificateSummaryT | null;
      nextActions?: NextAction[];
    },
  ): Envelope {
    const terminal = this.#trace.terminal;
    return {
      requestId,
      observedRevision: parts.observedRevision,
      status: parts.status,
      data: parts.data ?? {},
      diagnostics: parts.diagnostics ?? [],
      effectsObserved: parts.effectsObserved ?? [],
      artifacts: parts.artifacts ?? [],
      certificateSummary: parts.certificateSummary ?? null,
      budgets: this.#budgets(),
      nextActions: terminal ? [] : (parts.nextActions ?? []),
      task: { taskId: this.taskId, state: this.#state, terminal: terminal ? terminal.state : null, contractVersion: this.#contract.contractVersion },
    };
  }

  /** Parses each call against its op's input schema and asks the authority for its effect class. */
  #classify(calls: readonly unknown[]): ClassifiedCall[] {
    const out: ClassifiedCall[] = [];
    for (const raw of calls) {
      const obj = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
      const input = obj && obj['input'] !== null && typeof obj['input'] === 'object' ? (obj['input'] as Record<string, unknown>) : null;
      const rid = input && typeof input['requestId'] === 'string' ? input['requestId'].slice(0, 128) : '';
      const op = obj && typeof obj['op'] === 'string' ? obj['op'].slice(0, 64) : '';
      if (!obj || typeof obj['op'] !== 'string') {
        out.push({ kind: 'invalid', code: 'INVALID_INPUT', requestId: rid, op, message: 'a call is {op, input}' });
        continue;
      }
      if (!(META_OPS as readonly string[]).includes(op)) {
        out.push({ kind: 'invalid', code: 'UNKNOWN_OPERATION', requestId: rid, op, message: `${JSON.stringify(op)} is not one of the nine meta-operations` });
        continue;
      }
      const metaOp = op as MetaOp;
      const notJson = jsonFault(obj['input']);
      if (notJson) {
        out.push({ kind: 'invalid', code: 'INVALID_INPUT', requestId: rid, op, message: `${op} input is not plain JSON: ${notJson}` });
        continue;
      }
      const extra = Object.keys(obj).filter((k) => k !== 'op' && k !== 'input');
      const parsed = OP_INPUTS[metaOp].safeParse(obj['input']);
      if (!parsed.success || extra.length > 0) {
        const issue = parsed.success ? { path: [extra[0]!], message: 'unknown member of the call' } : parsed.error.issues[0];
        const where = issue ? issue.path.map(String).join('.') || '(input)' : '(input)';
        out.push({ kind: 'invalid', code: 'INVALID_INPUT', requestId: rid, op, message: `${op} input invalid at ${where}: ${issue?.message ?? 'malformed'}` });
        continue;
      }
      const call = { op: metaOp, input: parsed.data } as MetaCall;
      let ec: EffectClass;
      try {
        const r = EffectClass.safeParse(this.#authority.effectClass(call));
        if (!r.success) throw new IntegrityFault(`${op}: authority gave no effect class`);
        ec = r.data;
      } catch (e) {
        throw new ClassifyFault(e);
      }
      // The op's class family is protocol (M30): an authority may refine a write, never turn one into a read.
      if ((ec === 'read') !== (staticEffectClass(call) === 'read')) throw new ClassifyFault(new IntegrityFault(`${op}: authority classed it ${ec}`));
      out.push({ kind: 'call', requestId: parsed.data.requestId, call, effectClass: ec });
    }
    return out;
  }

  /** A new round's number; a round that starts with the time budget spent ends the task first. */
  #startRound(): number {
    if (this.#trace.terminal === null && this.#budget.millis !== undefined && this.#elapsed() >= this.#budget.millis) {
      this.#end('budgetExhausted', 'BUDGET_EXHAUSTED', 'the time budget is spent', this.#trace.nextSeq);
    }
    return this.#batches++;
  }

  #refusal(r: z.infer<typeof RefusalShape>): Envelope {
    const batch = this.#startRound();
    const c: ClassifiedCall = { kind: 'invalid', code: 'INVALID_INPUT', requestId: r.requestId, op: r.op, message: r.message };
    let d: Extract<CallDecision, { decision: 'rejected' }>;
    if (this.#trace.terminal !== null) {
      d = { index: 0, decision: 'rejected', code: 'TASK_TERMINAL', next: null, message: 'the task has ended' };
    } else if (this.#used.has(r.requestId)) {
      d = { index: 0, decision: 'rejected', code: 'DUPLICATE_REQUEST_ID', next: null, message: `requestId ${r.requestId} was used before` };
    } else {
      this.#used.add(r.requestId);
      d = { index: 0, decision: 'rejected', code: r.code, next: r.next?.op ?? null, message: r.message };
      return this.#reject(batch, c, d, {
        ...(r.next?.capability !== undefined && { nextCapability: r.next.capability }),
        ...(r.details !== undefined && { details: r.details }),
      });
    }
    return this.#reject(batch, c, d);
  }

  async #round(calls: readonly unknown[]): Promise<BatchOutcome> {
    const batch = this.#startRound();
    let classified: ClassifiedCall[] | null = null;
    if (this.#trace.terminal === null) {
      try {
        classified = this.#classify(calls);
      } catch (e) {
        const cause = e instanceof ClassifyFault ? e.cause : e;
        this.#end('failed', faultCode(cause), faultMessage(cause), this.#trace.nextSeq);
      }
    }
    // After the end every call is refused TASK_TERMINAL; only its request id and op are kept.
    classified ??= calls.map(terminalCall);

    const reduction = reduceBatch(this.#contract, this.#view(), classified, this.#used, Math.max(0, this.#budget.calls - this.#calls));
    for (const id of reduction.consumed) this.#used.add(id);
    const results: BatchResult[] = new Array(calls.length);

    // Reads run concurrently against the same revision, before the one effect (M40 3–4).
    const readOutcomes = new Map<number, Promise<Outcome>>();
    for (const i of reduction.reads) {
      const c = classified[i]!;
      if (c.kind === 'call') readOutcomes.set(i, this.#dispatch(c.call));
    }
    // Settle them all before folding, so nothing is left running if a fold ends the task.
    await Promise.all(readOutcomes.values());

    for (const i of reduction.traceOrder) {
      const d = reduction.decisions[i]!;
      const c = classified[i]!;
      const op = c.kind === 'call' ? c.call.op : c.op;
      if (d.decision === 'rejected') {
        results[i] = { requestId: c.requestId, op, decision: 'rejected', envelope: this.#reject(batch, c, d) };
      } else if (d.decision === 'deferred') {
        results[i] = { requestId: c.requestId, op, decision: 'deferred', envelope: this.#defer(batch, c) };
      } else if (c.kind === 'call') {
        if (d.role === 'effect' && this.#trace.terminal) {
          // A read of this round ended the task: the effect is not dispatched.
          const late: CallDecision = { index: i, decision: 'rejected', code: 'TASK_TERMINAL', next: null, message: 'the task ended earlier in this round' };
          results[i] = { requestId: c.requestId, op, decision: 'rejected', envelope: this.#reject(batch, c, late) };
          continue;
        }
        const outcome = d.role === 'read' ? await readOutcomes.get(i)! : await this.#dispatch(c.call);
        results[i] = { requestId: c.requestId, op, decision: 'scheduled', envelope: await this.#fold(batch, c, d.cell, d.variant, outcome) };
      }
    }
    return { batch, results };
  }

  #reject(batch: number, c: ClassifiedCall, d: Extract<CallDecision, { decision: 'rejected' }>, extra: RejectExtra = {}): Envelope {
    const from = this.#state;
    if (d.code === 'STALE_REVISION') this.#enterObserveByStale();
    const code = d.code;
    const info = (RUNTIME_CODES as Record<string, { status?: EnvelopeStatus }>)[code];
    const status: EnvelopeStatus = info?.status ?? 'blocked';
    const refine: Partial<Diagnostic> = { affected: c.requestId ? [c.requestId] : [], ...extra.details };
    const diag =
      code in RUNTIME_CODES ? runtimeDiagnostic(code as RuntimeCode, d.message, refine) : diagnostic(code, 'admission', 'protocol', d.message, refine);
    this.#trace.append({
      batch,
      requestId: c.requestId,
      op: c.kind === 'call' ? c.call.op : c.op,
      fromState: from,
      decision: 'rejected',
      code,
      status,
      ...(c.kind === 'call' ? { effectClass: c.effectClass } : {}),
      toState: this.#state,
    });
    return this.#envelope(c.requestId, {
      observedRevision: this.#head,
      status,
      data: { completedPrefix: this.#completedPrefix(), nextOperation: d.next },
      diagnostics: [diag],
      nextActions: d.next
        ? [{ op: d.next, ...(extra.nextCapability !== undefined && { capability: extra.nextCapability as NextAction['capability'] }), preconditions: [] }]
        : [],
    });
  }

  #defer(batch: number, c: ClassifiedCall): Envelope {
    const op = c.kind === 'call' ? c.call.op : (c.op as MetaOp);
    this.#trace.append({
      batch,
      requestId: c.requestId,
      op,
      fromState: this.#state,
      decision: 'deferred',
      code: 'DEFERRED',
      status: 'blocked',
      ...(c.kind === 'call' ? { effectClass: c.effectClass } : {}),
      toState: this.#state,
    });
    return this.#envelope(c.requestId, {
      observedRevision: this.#head,
      status: 'blocked',
      data: { completedPrefix: this.#completedPrefix(), nextOperation: op },
      diagnostics: [runtimeDiagnostic('DEFERRED', 'one effect a round: this call was not run; resend it', { affected: [c.requestId] })],
      nextActions: [{ op, preconditions: [] }],
    });
  }

  #enterObserveByStale(): void {
    this.#state = 'observe';
    this.#resetCycle();
    this.#candidate = null;
    this.#token = null;
  }

  /** Runs one admitted call against the authority; never throws. */
  async #dispatch(call: MetaCall): Promise<Outcome> {
    const a = this.#authority;
    const ctx = this.#ctx(call.input.requestId, call.input.idempotencyKey);
    try {
      let raw: AuthorityResult<unknown>;
      switch (call.op) {
        case 'interface.manifest':
          raw = await a.manifest(ctx);
          break;
        case 'catalog.search':
          raw = await a.search(ctx, call.input);
          break;
        case 'catalog.describe':
          raw = await a.describe(ctx, call.input.capability);
          break;
        case 'model.read':
          raw = await a.read(ctx, call.input);
          break;
        case 'model.proposePatch': {
          const diags = await this.#checkPlan(ctx, call.input.plan);
          if (diags.some((d) => d.severity === 'error')) {
            // A plan made on another revision is stale, not wrong (M3): it is answered `stale` and goes
            // back to observe, like an authority's stale answer, instead of opening a repair round.
            const stale = diags.some((d) => d.code === 'STALE_PLAN');
            return {
              ok: true,
              result: { observedRevision: this.#head, data: {}, diagnostics: diags, effectsObserved: [], artifacts: [], status: stale ? 'stale' : 'success' },
            };
          }
          raw = await a.propose(ctx, call.input.plan);
          break;
        }
        case 'model.preview':
          raw = await a.preview(ctx, call.input.candidateId);
          break;
        case 'model.validate':
          raw = await a.validate(ctx, call.input.candidateId);
          break;
        case 'model.commit':
          raw = await a.commit(ctx, call.input);
          break;
        case 'model.revert':
          raw = await a.revert(ctx, call.input);
          break;
      }
      return { ok: true, result: checkResult(call.op, raw) };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /**
   * plan.check inside the trusted proposePatch entry (M18, M28). It needs the authority's validators:
   * if no interface.manifest ran yet, the manifest is fetched here (not a meta-op, not traced).
   */
  async #checkPlan(ctx: AuthorityContext, plan: unknown): Promise<Diagnostic[]> {
    if (this.#manifest === null) {
      const m = checkResult('interface.manifest', await this.#authority.manifest(ctx));
      requireData(ManifestData, 'interface.manifest', m.data);
      this.#manifest = m.data as unknown as AuthorityManifest;
    }
    return checkPlan(plan, {
      intentFrame: this.#intentFrame,
      intentFrameHash: this.#intentFrameHash,
      head: this.#head,
      described: this.#described,
      searched: this.#searched,
      manifest: this.#manifest,
      catalogHash: this.#catalogHash,
      runtimeSnapshot: this.#runtimeSnapshot,
      grantId: this.#grantId,
      remainingEffects: Math.max(0, this.#budget.effects - this.#effects),
      crypto: this.#crypto,
    });
  }

  /** Folds one scheduled call's outcome into the task: trace event, transition, budgets, terminals. */
  async #fold(batch: number, c: Extract<ClassifiedCall, { kind: 'call' }>, cell: AdmitCell, variant: string | null, outcome: Outcome): Promise<Envelope> {
    const { call, effectClass } = c;
    const op = call.op;
    const from = this.#state;
    const alive = this.#trace.terminal === null;
    this.#calls++;
    if (effectClass !== 'read') this.#effects++;
    const seq = this.#trace.nextSeq;

    let status: EnvelopeStatus;
    let observedRevision: string | null = this.#head;
    let data: Record<string, unknown> = {};
    const diagnostics: Diagnostic[] = [];
    let effectsObserved: EffectObserved[] = [];
    let artifacts: z.infer<typeof Artifact>[] = [];
    let certificate: CertificateSummaryT | null = null;
    let to: RuntimeState = from;
    let terminal: { state: TerminalState; code: string; reason: string } | null = null;

    try {
      if (!outcome.ok) throw outcome.error;
      const r = outcome.result;
      observedRevision = r.observedRevision;
      data = r.data;
      diagnostics.push(...r.diagnostics);
      effectsObserved = r.effectsObserved;
      artifacts = r.artifacts;
      const failed = r.diagnostics.some((d) => d.severity === 'error');
      if (r.status === 'stale') {
        status = 'stale';
        if (alive) {
          this.#head = r.observedRevision;
          // The matrix names where a stale CAS goes; a stale plan goes to observe whatever the cell
          // (M3: rebase and re-check). Neither is a Diagnostic round, so neither spends the repair cap.
          const back = cell.onStale ?? (op === 'model.proposePatch' ? STALE_PLAN_STATE : undefined);
          if (back) {
            to = back;
            this.#resetCycle();
          }
          this.#candidate = null;
          this.#token = null;
          this.#verified = null;
        }
      } else if (failed) {
        status = 'failed';
        if (alive && cell.onDiagnostic) {
          if (this.#repairs + 1 > this.#protocol.repairCap) {
            terminal = { state: 'cannotProceed', code: 'REPAIR_CAP_REACHED', reason: `repair cap ${this.#protocol.repairCap} reached` };
          } else {
            this.#repairs++;
            to = cell.onDiagnostic;
            this.#resetCycle();
            this.#candidate = null;
            this.#token = null;
          }
        }
      } else {
        status = r.status;
        if (op === 'model.validate') {
          const v = requireData(ValidateData, op, r.data);
          if (v.passed && v.validationToken === undefined) throw new IntegrityFault('model.validate passed without a validation token');
          if (!v.passed) status = 'failed';
        }
        if (status !== 'failed' && alive) {
          this.#learn(call, r.data);
          this.#applyFlags(cell, op, r.data);
          if (call.op === 'model.read' && call.input.query !== undefined) this.#extend(c.requestId, call.input.query, r.observedRevision);
          to = resolveTarget(cell, from);
          this.#cycleDiscovery.push(op);
          this.#cycleCompletion.push(op);
          this.#taskCompletion.push(op);
          if (op === 'model.read' && to === this.#contract.descriptor.completionState) {
            const check = await this.#readBack(c.requestId, variant);
            certificate = check.certificate;
            diagnostics.push(...check.diagnostics);
            if (check.completed) terminal = { state: 'completed', code: 'COMPLETED', reason: 'completion sequence and read-back verified' };
          }
        } else if (alive && op === 'model.validate') {
          this.#token = null;
        }
      }
    } catch (e) {
      status = 'failed';
      to = from;
      diagnostics.length = 0;
      const code = faultCode(e);
      diagnostics.push(runtimeDiagnostic(code, faultMessage(e), { affected: [c.requestId] }));
      terminal = { state: 'failed', code, reason: faultMessage(e) };
    }

    if (!alive) to = from;
    this.#state = to;
    this.#trace.append({ batch, requestId: c.requestId, op, fromState: from, decision: 'scheduled', status, effectClass, toState: to });
    if (alive && terminal) this.#end(terminal.state, terminal.code, terminal.reason, seq);
    if (alive && !terminal) {
      const b = this.#budgets();
      if (b.remaining['calls'] === 0 || b.remaining['effects'] === 0) this.#end('budgetExhausted', 'BUDGET_EXHAUSTED', 'a budget dimension reached zero', seq);
    }

    for (const d of diagnostics) this.#remember(d);
    if (certificate) this.#certificates.push(certificate);
    const next = this.#completedPrefix();
    const nextOp = this.#protocol.requiredCompletionSequence[next.length];
    const nextActions: NextAction[] = [];
    if (nextOp) nextActions.push({ op: nextOp, preconditions: [] });
    for (const d of diagnostics)
      for (const cap of d.repairCapabilities) nextActions.push({ op: 'catalog.describe', capability: cap, preconditions: ['catalog.search'] });
    return this.#envelope(c.requestId, {
      observedRevision,
      status,
      data,
      diagnostics,
      effectsObserved,
      artifacts,
      certificateSummary: certificate,
      nextActions,
    });
  }

  #remember(d: Diagnostic): void {
    this.#recent.push(d);
    if (this.#recent.length > 16) this.#recent.shift();
  }

  /** What a successful read teaches the runtime: search hits, described contracts, the manifest. */
  #learn(call: MetaCall, data: Record<string, unknown>): void {
    const op = call.op;
    if (call.op === 'catalog.describe' && data['id'] !== call.input.capability) {
      throw new IntegrityFault(`catalog.describe answered ${String(data['id']).slice(0, 160)} for ${call.input.capability}`);
    }
    if (op === 'catalog.search') {
      const s = requireData(SearchData, op, data);
      for (const h of s.hits) this.#searched.add(h.id);
      this.#hits = s.hits as Array<Record<string, unknown>>;
      this.#catalogHash = s.catalogHash;
    } else if (op === 'catalog.describe') {
      const d = requireData(DescribeData, op, data);
      this.#described.set(d.id, data as unknown as CapabilityContract);
    } else if (op === 'interface.manifest') {
      requireData(ManifestData, op, data);
      this.#manifest = data as unknown as AuthorityManifest;
    }
  }

  /**
   * Records a query as a capsule extension bound to the revision it was answered at (M7), so a later
   * reader sees which head the answer belongs to; only the most recent MAX_EXTENSIONS are kept.
   */
  #extend(requestId: string, query: NonNullable<OpInput<'model.read'>['query']>, revision: string): void {
    const rev = QueryRevision.safeParse(revision);
    if (!rev.success) throw new IntegrityFault('model.read: a query answer names no revision it was computed at');
    this.#extensions.push({ requestId, query: { kind: query.kind, ref: query.ref }, revision: rev.data });
    if (this.#extensions.length > MAX_EXTENSIONS) this.#extensions.shift();
  }

  /** The cell's declared effects on candidate, token and head (data flags, not per-op code). */
  #applyFlags(cell: AdmitCell, op: MetaOp, data: Record<string, unknown>): void {
    if (cell.newCandidate) {
      this.#candidate = requireData(ProposeData, op, data).candidateId;
      this.#token = null;
    }
    if (cell.issuesToken) {
      const v = requireData(ValidateData, op, data);
      this.#token = v.passed ? (v.validationToken ?? null) : null;
    }
    if (cell.consumesCandidate) {
      this.#candidate = null;
      this.#token = null;
    }
    if (cell.movesHead) {
      this.#head = requireData(RevisionData, op, data).revision;
      this.#verified = null;
    }
  }

  /** Read-back at the branch head (M43): verify the acceptance assertions; complete if asked and earned. */
  async #readBack(requestId: string, variant: string | null): Promise<{ completed: boolean; certificate: CertificateSummaryT; diagnostics: Diagnostic[] }> {
    const assertions = this.#intentFrame.acceptanceAssertions;
    const raw: unknown = await this.#authority.verify(this.#ctx(requestId), assertions, this.#head);
    const v = z.object({ passed: z.boolean(), results: z.array(z.object({ assertion: z.string(), passed: z.boolean() }).passthrough()) }).safeParse(raw);
    if (!v.success) throw new IntegrityFault('verify returned a malformed result');
    // A verifier's `passed` covers only what it answered: every declared assertion needs a result of its
    // own, or an empty answer would complete a task that declared assertions (M43).
    const answered = new Set(v.data.results.map((r) => r.assertion));
    const unverified = assertions.filter((a) => !answered.has(a.id)).map((a) => a.id);
    const passed = v.data.passed && unverified.length === 0 && v.data.results.every((r) => r.passed);
    if (passed) this.#verified = this.#head;
    const certificate: CertificateSummaryT = {
      id: contentId(
        'cert',
        { taskId: this.taskId, revision: this.#head, results: v.data.results.map((r) => ({ assertion: r.assertion, passed: r.passed })) },
        this.#crypto,
      ),
      passed,
      assertions: assertions.length,
    };
    const asked = this.#protocol.completionAuthority === 'runtime' || variant === 'complete';
    if (!asked) return { completed: false, certificate, diagnostics: [] };
    const diagnostics: Diagnostic[] = [];
    const seq = this.#protocol.requiredCompletionSequence;
    const have = this.#taskCompletion.prefix;
    if (have.length < seq.length) {
      diagnostics.push(
        diagnostic(
          'COMPLETION_SEQUENCE_INCOMPLETE',
          'completion',
          'protocol',
          `the completion sequence needs ${seq[have.length]!} after ${have.join(', ') || 'nothing'}`,
          {
            expected: seq,
            actual: have,
          },
        ),
      );
    }
    if (unverified.length > 0) {
      diagnostics.push(
        diagnostic(
          'ACCEPTANCE_UNVERIFIED',
          'completion',
          'assertion',
          `the verifier gave no result for ${unverified.length} declared acceptance assertion(s) at ${this.#head}`,
          {
            affected: unverified,
            expected: assertions.map((a) => a.id),
            actual: assertions.filter((a) => answered.has(a.id)).map((a) => a.id),
          },
        ),
      );
    }
    const failedIds = v.data.results.filter((r) => !r.passed).map((r) => r.assertion);
    if (!passed && (failedIds.length > 0 || unverified.length === 0)) {
      diagnostics.push(runtimeDiagnostic('ACCEPTANCE_FAILED', `acceptance assertions failed at ${this.#head}`, { affected: failedIds }));
    }
    return { completed: diagnostics.length === 0, certificate, diagnostics };
  }
}

/** An authority fault while classifying a round: the task ends `failed` before anything runs. */
class ClassifyFault extends Error {
  constructor(override readonly cause: unknown) {
    super(faultMessage(cause));
  }
}

/** A call in a round after the task ended: only its request id and op are kept, for the refusal. */
function terminalCall(raw: unknown): ClassifiedCall {
  const obj = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const input = obj['input'] !== null && typeof obj['input'] === 'object' ? (obj['input'] as Record<string, unknown>) : {};
  return {
    kind: 'invalid',
    code: 'INVALID_INPUT',
    requestId: typeof input['requestId'] === 'string' ? input['requestId'].slice(0, 128) : '',
    op: typeof obj['op'] === 'string' ? obj['op'].slice(0, 64) : '',
    message: 'the task has ended',
  };
}
