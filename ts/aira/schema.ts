/**
 * The Aira contract in one place: every structure the runtime, the authorities, the MCP tools and the
 * tests exchange is a zod schema here, and its TypeScript type is `z.infer` of that schema. The MCP
 * tools' input and output JSON Schemas are generated from these same objects, so there is no second,
 * hand-written contract (RFC-0002 §13.2).
 *
 * Objects are strict: an undeclared member is refused, never carried along.
 */
import { z } from 'zod';

/** The nine Core v1 meta-operations (M28), in the order the runtime matrix lists them. */
export const META_OPS = [
  'interface.manifest',
  'catalog.search',
  'catalog.describe',
  'model.read',
  'model.proposePatch',
  'model.preview',
  'model.validate',
  'model.commit',
  'model.revert',
] as const;
export const MetaOp = z.enum(META_OPS);
export type MetaOp = z.infer<typeof MetaOp>;

/** The nine runtime states (M35); `observe` is the initial one. */
export const RUNTIME_STATES = ['observe', 'discover', 'describe', 'propose', 'preview', 'repair', 'validate', 'commit', 'readBack'] as const;
export const RuntimeState = z.enum(RUNTIME_STATES);
export type RuntimeState = z.infer<typeof RuntimeState>;

/** The five terminal states (M43). */
export const TERMINAL_STATES = ['completed', 'cannotProceed', 'budgetExhausted', 'cancelled', 'failed'] as const;
export const TerminalState = z.enum(TERMINAL_STATES);
export type TerminalState = z.infer<typeof TerminalState>;

/** Effect classes (M30). */
export const EffectClass = z.enum(['read', 'bufferable', 'reversible', 'irreversible']);
export type EffectClass = z.infer<typeof EffectClass>;

export const Risk = z.enum(['low', 'medium', 'high', 'critical']);
export type Risk = z.infer<typeof Risk>;

/** Request ids and other client-chosen names: the free-string alphabet of §13.2.1. */
export const Name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:-]+$/);
/** `<prefix>:sha256:<64 lowercase hex>` (M2). */
export const HashId = z.string().regex(/^[a-z]+:sha256:[0-9a-f]{64}$/);
/** A capability id `cap:<name>@<major>` (M1). */
export const CapabilityId = z
  .string()
  .max(160)
  .regex(/^cap:[A-Za-z0-9._-]+@[0-9]+$/);
export type CapabilityId = z.infer<typeof CapabilityId>;

// ---------------------------------------------------------------------------------------------
// Diagnostics and the observation envelope (M22–M26)

export const DiagnosticPhase = z.enum(['admission', 'input', 'plan', 'lower', 'preview', 'validate', 'commit', 'read', 'completion', 'runtime', 'binding']);
export const Severity = z.enum(['error', 'warning', 'info']);
export const Cause = z.enum(['protocol', 'input', 'precondition', 'assertion', 'conflict', 'stale', 'budget', 'authority', 'integrity', 'scope']);

export const Diagnostic = z.strictObject({
  code: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  phase: DiagnosticPhase,
  severity: Severity,
  affected: z.array(z.string()),
  expected: z.unknown().optional(),
  actual: z.unknown().optional(),
  cause: Cause,
  repairCapabilities: z.array(CapabilityId),
  repairScope: z.array(z.string()),
  approvalRequired: z.boolean(),
  message: z.string().max(1000),
});
export type Diagnostic = z.infer<typeof Diagnostic>;

/** A registered next action: always a meta-op (optionally with a capability), never free text (M23). */
export const NextAction = z.strictObject({
  op: MetaOp,
  capability: CapabilityId.optional(),
  preconditions: z.array(z.string()),
});
export type NextAction = z.infer<typeof NextAction>;

export const EffectObserved = z.strictObject({
  kind: z.string(),
  target: z.string(),
  effectClass: EffectClass,
  revision: z.string().optional(),
});
export type EffectObserved = z.infer<typeof EffectObserved>;

export const Artifact = z.strictObject({ kind: z.string(), id: z.string(), digest: z.string().optional(), data: z.unknown().optional() });
export type Artifact = z.infer<typeof Artifact>;

export const CertificateSummary = z.strictObject({ id: z.string(), passed: z.boolean(), assertions: z.number().int().nonnegative() });

export const Budgets = z.strictObject({
  consumed: z.record(z.string(), z.number().int().nonnegative()),
  remaining: z.record(z.string(), z.number().int().nonnegative()),
});
export type Budgets = z.infer<typeof Budgets>;

export const EnvelopeStatus = z.enum(['success', 'partial', 'blocked', 'failed', 'stale']);
export type EnvelopeStatus = z.infer<typeof EnvelopeStatus>;

/** Where the task stands after this response: the runtime's word, never the model's. */
export const TaskStatus = z.strictObject({
  taskId: HashId,
  state: RuntimeState,
  terminal: TerminalState.nullable(),
  contractVersion: z.string(),
});
export type TaskStatus = z.infer<typeof TaskStatus>;

/** The single observation envelope every meta-operation answers with (M22), plus the task status. */
export const Envelope = z.strictObject({
  requestId: z.string(),
  observedRevision: z.string().nullable(),
  status: EnvelopeStatus,
  data: z.record(z.string(), z.unknown()),
  diagnostics: z.array(Diagnostic),
  effectsObserved: z.array(EffectObserved),
  artifacts: z.array(Artifact),
  certificateSummary: CertificateSummary.nullable(),
  budgets: Budgets,
  nextActions: z.array(NextAction),
  task: TaskStatus,
});
export type Envelope = z.infer<typeof Envelope>;

// ---------------------------------------------------------------------------------------------
// Intent Frame, Task Protocol, Plan (M9–M21)

export const IntentItem = z.strictObject({ id: Name, text: z.string().max(2000), payload: z.unknown().optional() });
export const AcceptanceAssertion = z.strictObject({
  id: Name,
  text: z.string().max(2000),
  validator: Name,
  args: z.record(z.string(), z.unknown()),
});
export type AcceptanceAssertion = z.infer<typeof AcceptanceAssertion>;

export const IntentFrame = z.strictObject({
  goal: z.string().min(1).max(4000),
  hardRequirements: z.array(IntentItem),
  softPreferences: z.array(IntentItem),
  scope: z.array(IntentItem),
  prohibitedEffects: z.array(IntentItem),
  assumptions: z.array(IntentItem),
  unknowns: z.array(IntentItem),
  acceptanceAssertions: z.array(AcceptanceAssertion),
});
export type IntentFrame = z.infer<typeof IntentFrame>;

export const TaskProtocol = z.strictObject({
  requiredDiscoverySequence: z.array(MetaOp),
  requiredCompletionSequence: z.array(MetaOp),
  completionAuthority: z.enum(['runtime', 'model']),
  /** Repair rounds allowed; the round that would exceed it ends the task `cannotProceed` (M42). */
  repairCap: z.number().int().min(0).max(16),
});
export type TaskProtocol = z.infer<typeof TaskProtocol>;

export const BudgetLimits = z.strictObject({
  calls: z.number().int().positive().max(1_000_000),
  effects: z.number().int().positive().max(1_000_000),
  millis: z.number().int().positive().max(86_400_000).optional(),
});
export type BudgetLimits = z.infer<typeof BudgetLimits>;

export const PlanStep = z.strictObject({
  id: Name,
  capability: CapabilityId,
  mode: z.enum(['query', 'authoring', 'preview', 'compare']),
  dependsOn: z.array(Name).optional(),
  args: z.record(z.string(), z.unknown()),
});
export type PlanStep = z.infer<typeof PlanStep>;

/** M17. `planId` is the content hash of the plan without it (M2); the client may leave it out. */
export const Plan = z.strictObject({
  planId: HashId.optional(),
  baseRevision: z.string(),
  intentFrameHash: HashId,
  bindings: z.strictObject({
    operationCatalog: z.string(),
    discoveryCatalogHash: HashId,
    runtimeSnapshot: HashId,
    grantId: z.string(),
  }),
  steps: z.array(PlanStep).min(1).max(64),
  acceptanceAssertions: z.array(Name),
  estimatedEffects: z.array(z.string()),
  estimatedRisk: Risk,
});
export type Plan = z.infer<typeof Plan>;

// ---------------------------------------------------------------------------------------------
// Meta-operation inputs (M48): what each MCP tool and each library call takes.

const common = {
  requestId: Name,
  idempotencyKey: Name.optional(),
  /** The revision the caller last observed; an effect on a moved head answers `stale` (M3). */
  observedRevision: z.string().max(200).optional(),
};

export const ManifestInput = z.strictObject({ ...common });
export const SearchInput = z.strictObject({
  ...common,
  query: z.string().max(500).optional(),
  effectClass: EffectClass.optional(),
  maxRisk: Risk.optional(),
  limit: z.number().int().min(1).max(50).optional(),
});
export const DescribeInput = z.strictObject({ ...common, capability: CapabilityId });
export const ReadInput = z.strictObject({
  ...common,
  /** Bounded selection: authority-defined paths (e.g. `parameters/width`). */
  select: z.array(z.string().max(200)).max(64).optional(),
  /** `model.query` projected into read (M28). */
  query: z.strictObject({ kind: z.enum(['resolve', 'impact', 'lineage']), ref: z.string().max(200) }).optional(),
  /** Ask the runtime to end the task `completed` on this read-back (completionAuthority "model"). */
  complete: z.boolean().optional(),
});
export const ProposePatchInput = z.strictObject({ ...common, plan: Plan });
export const PreviewInput = z.strictObject({ ...common, candidateId: HashId });
export const ValidateInput = z.strictObject({ ...common, candidateId: HashId });
export const CommitInput = z.strictObject({
  ...common,
  candidateId: HashId,
  validationToken: HashId,
  /** `branch`: CAS onto the task branch (reversible). `publish`: the branch onto the user head (irreversible). */
  target: z.enum(['branch', 'publish']).optional(),
});
export const RevertInput = z.strictObject({ ...common, toRevision: z.string().max(200) });

export const OP_INPUTS = {
  'interface.manifest': ManifestInput,
  'catalog.search': SearchInput,
  'catalog.describe': DescribeInput,
  'model.read': ReadInput,
  'model.proposePatch': ProposePatchInput,
  'model.preview': PreviewInput,
  'model.validate': ValidateInput,
  'model.commit': CommitInput,
  'model.revert': RevertInput,
} as const satisfies Record<MetaOp, z.ZodType>;
export type OpInput<O extends MetaOp> = z.infer<(typeof OP_INPUTS)[O]>;

/** One requested call: what a model emits and a batch holds. */
export type MetaCall = { [O in MetaOp]: { op: O; input: OpInput<O> } }[MetaOp];

// ---------------------------------------------------------------------------------------------
// Trace (M46)

export const TraceEvent = z.strictObject({
  seq: z.number().int().nonnegative(),
  batch: z.number().int().nonnegative(),
  requestId: z.string(),
  op: z.string(),
  fromState: RuntimeState,
  decision: z.enum(['scheduled', 'deferred', 'rejected']),
  code: z.string().optional(),
  status: EnvelopeStatus.optional(),
  effectClass: EffectClass.optional(),
  toState: RuntimeState,
});
export type TraceEvent = z.infer<typeof TraceEvent>;

export const TerminalRecord = z.strictObject({
  state: TerminalState,
  reason: z.string(),
  code: z.string(),
  seq: z.number().int().nonnegative(),
});
export type TerminalRecord = z.infer<typeof TerminalRecord>;

export const Trace = z.strictObject({
  contractVersion: z.string(),
  traceVersion: z.string(),
  matrixDigest: HashId,
  taskId: HashId,
  events: z.array(TraceEvent),
  terminal: TerminalRecord.nullable(),
});
export type Trace = z.infer<typeof Trace>;
