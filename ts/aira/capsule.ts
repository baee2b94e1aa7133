/**
 * The Task Capsule (M4–M7): the read-only context one task works from, bound to one revision. It holds
 * only what it is given, member by member, each bounded: no member takes a whole document, the full
 * catalog or a history (M6), and the whole capsule has a byte bound. Task input (intent frame, task
 * protocol, budget, grant) is resolved here too, strictly, with the protocol only allowed to tighten
 * the runtime's defaults (M15).
 */
import { z } from 'zod';
import type { Crypto } from '../crypto/backend.js';
import type { CapabilityContract, CapabilityHit } from './authority.js';
import { contentId } from './ids.js';
import {
  Budgets,
  BudgetLimits,
  CapabilityId,
  CertificateSummary,
  Diagnostic,
  EffectClass,
  HashId,
  IntentFrame,
  IntentItem,
  MetaOp,
  Name,
  ReadInput,
  Risk,
  TaskProtocol,
} from './schema.js';
import { compactStepSignatures, SIGNATURES_MAX_BYTES } from './signatures.js';

export type AiraInputErrorCode =
  'TASK_INPUT_INVALID' | 'TASK_INPUT_TOO_LARGE' | 'PROTOCOL_LOOSENED' | 'PROTOCOL_UNSATISFIABLE' | 'CAPSULE_INVALID' | 'CAPSULE_TOO_LARGE';

/** Task input or capsule material the runtime refuses; `path` names the offending member. */
export class AiraInputError extends Error {
  override readonly name = 'AiraInputError';
  constructor(
    readonly code: AiraInputErrorCode,
    readonly path: string,
    message: string,
  ) {
    super(`${code}: ${path ? `${path}: ` : ''}${message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Defaults and task input

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** The loosest protocol the runtime accepts: a task's protocol may add to it, never remove (M15). */
export const defaultProtocol: Readonly<TaskProtocol> = deepFreeze({
  requiredDiscoverySequence: ['catalog.search', 'catalog.describe'],
  requiredCompletionSequence: ['catalog.search', 'catalog.describe', 'model.proposePatch', 'model.preview', 'model.validate', 'model.commit', 'model.read'],
  completionAuthority: 'runtime',
  repairCap: 3,
});
export const defaultBudget: Readonly<BudgetLimits> = deepFreeze({ calls: 200, effects: 50 });
export const DEFAULT_GRANT_ID = 'grant:local';

/** Discovery can only wait on reads: an effect required before effects could never run. */
const DISCOVERY_OPS: ReadonlySet<MetaOp> = new Set(['interface.manifest', 'catalog.search', 'catalog.describe', 'model.read']);
const MAX_SEQUENCE = 32;
const MAX_INTENT_ITEMS = 64;
const MAX_INTENT_BYTES = 64 << 10;
const MAX_JSON_DEPTH = 32;

const ProtocolPatch = z.strictObject({
  requiredDiscoverySequence: z.array(MetaOp).max(MAX_SEQUENCE).optional(),
  requiredCompletionSequence: z.array(MetaOp).max(MAX_SEQUENCE).optional(),
  completionAuthority: TaskProtocol.shape.completionAuthority.optional(),
  repairCap: TaskProtocol.shape.repairCap.optional(),
});

export const TaskInputSchema = z.strictObject({
  intentFrame: IntentFrame,
  protocol: ProtocolPatch.optional(),
  budget: z
    .strictObject({
      calls: BudgetLimits.shape.calls.optional(),
      effects: BudgetLimits.shape.effects.optional(),
      millis: BudgetLimits.shape.millis,
    })
    .optional(),
  grantId: Name.optional(),
  nonce: Name.optional(),
});
export type TaskInputShape = z.infer<typeof TaskInputSchema>;

export interface ResolvedTaskInput {
  intentFrame: IntentFrame;
  protocol: TaskProtocol;
  budget: BudgetLimits;
  grantId: string;
  nonce?: string;
}

function zodPath(path: ReadonlyArray<PropertyKey>, root: string): string {
  return [root, ...path.map(String)].join('.');
}

function firstIssue(e: z.ZodError, root: string): [string, string] {
  const i = e.issues[0];
  return i ? [zodPath(i.path, root), i.message] : [root, 'invalid'];
}

/**
 * Depth and size of a JSON-like value, walked without recursion (a hostile payload may nest deeper
 * than the stack). Size is counted in UTF-16 units of the JSON text, close enough for a bound.
 * Returns null when the value is within bounds, else what is exceeded.
 */
export function jsonBoundsFault(value: unknown, maxDepth: number, maxBytes: number): string | null {
  let size = 0;
  const work: Array<[unknown, number]> = [[value, 0]];
  while (work.length > 0) {
    const [v, d] = work.pop()!;
    if (d > maxDepth) return `nests deeper than ${maxDepth}`;
    if (typeof v === 'string') size += v.length + 2;
    else if (typeof v === 'object' && v !== null) {
      const entries = Array.isArray(v) ? v.map((x) => ['', x] as const) : Object.entries(v);
      size += 2;
      for (const [k, x] of entries) {
        size += k.length + 4;
        work.push([x, d + 1]);
      }
    } else size += 8;
    if (size > maxBytes) return `is larger than ${maxBytes} bytes`;
  }
  return null;
}

/** Whether `sub` occurs in `seq` in order (not necessarily contiguously). */
export function isSubsequence<T>(sub: readonly T[], seq: readonly T[]): boolean {
  let i = 0;
  for (const x of seq) if (i < sub.length && x === sub[i]) i++;
  return i === sub.length;
}

/**
 * Task input → what the runtime runs with: strict (unknown members refused), bounded, defaults
 * filled, and the protocol checked to only tighten the defaults (M15): both required sequences must
 * contain the default ones in order, discovery may only wait on reads, and the repair cap may only be
 * lowered. Throws `AiraInputError`.
 */
export function resolveTaskInput(input: unknown): ResolvedTaskInput {
  let r: ReturnType<typeof TaskInputSchema.safeParse>;
  try {
    r = TaskInputSchema.safeParse(input);
  } catch (e) {
    // A value zod cannot even read (a throwing getter, a revoked proxy): refused like any bad input.
    throw new AiraInputError('TASK_INPUT_INVALID', 'task', `cannot be read: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!r.success) {
    const [path, msg] = firstIssue(r.error, 'task');
    throw new AiraInputError('TASK_INPUT_INVALID', path, msg);
  }
  const t = r.data;
  for (const [k, v] of Object.entries(t.intentFrame)) {
    if (Array.isArray(v) && v.length > MAX_INTENT_ITEMS)
      throw new AiraInputError('TASK_INPUT_TOO_LARGE', `task.intentFrame.${k}`, `at most ${MAX_INTENT_ITEMS} items`);
  }
  const fault = jsonBoundsFault(t.intentFrame, MAX_JSON_DEPTH, MAX_INTENT_BYTES);
  if (fault) throw new AiraInputError('TASK_INPUT_TOO_LARGE', 'task.intentFrame', fault);

  const protocol: TaskProtocol = {
    requiredDiscoverySequence: [...(t.protocol?.requiredDiscoverySequence ?? defaultProtocol.requiredDiscoverySequence)],
    requiredCompletionSequence: [...(t.protocol?.requiredCompletionSequence ?? defaultProtocol.requiredCompletionSequence)],
    completionAuthority: t.protocol?.completionAuthority ?? defaultProtocol.completionAuthority,
    repairCap: t.protocol?.repairCap ?? defaultProtocol.repairCap,
  };
  const disc = protocol.requiredDiscoverySequence;
  if (!isSubsequence(defaultProtocol.requiredDiscoverySequence, disc)) {
    throw new AiraInputError(
      'PROTOCOL_LOOSENED',
      'task.protocol.requiredDiscoverySequence',
      `must contain ${defaultProtocol.requiredDiscoverySequence.join(' then ')}`,
    );
  }
  const effect = disc.find((op) => !DISCOVERY_OPS.has(op));
  if (effect)
    throw new AiraInputError('PROTOCOL_UNSATISFIABLE', 'task.protocol.requiredDiscoverySequence', `${effect} is an effect; discovery may only require reads`);
  if (!isSubsequence(defaultProtocol.requiredCompletionSequence, protocol.requiredCompletionSequence)) {
    throw new AiraInputError(
      'PROTOCOL_LOOSENED',
      'task.protocol.requiredCompletionSequence',
      `must contain ${defaultProtocol.requiredCompletionSequence.join(', ')} in order`,
    );
  }
  // M42: the cap is the runtime's (default 3); more rounds would loosen terminal determination, which a
  // task protocol may only tighten (M15). The schema's 16 bounds the value, not what a task may ask for.
  if (protocol.repairCap > defaultProtocol.repairCap) {
    throw new AiraInputError('PROTOCOL_LOOSENED', 'task.protocol.repairCap', `may lower the repair cap, not raise it above ${defaultProtocol.repairCap}`);
  }
  const budget: BudgetLimits = { calls: t.budget?.calls ?? defaultBudget.calls, effects: t.budget?.effects ?? defaultBudget.effects };
  if (t.budget?.millis !== undefined) budget.millis = t.budget.millis;
  const out: ResolvedTaskInput = { intentFrame: t.intentFrame, protocol, budget, grantId: t.grantId ?? DEFAULT_GRANT_ID };
  if (t.nonce !== undefined) out.nonce = t.nonce;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The capsule

export const CapabilityHitSchema = z.strictObject({ id: CapabilityId, title: z.string().max(200), effectClass: EffectClass, risk: Risk });
export const CapabilityContractSchema = CapabilityHitSchema.extend({
  description: z.string().max(2000),
  inputSchema: z.record(z.string(), z.unknown()),
  mode: z.enum(['query', 'authoring']),
  reversible: z.boolean(),
  preconditions: z.array(z.string().max(500)).max(32),
});

const Ref = z.string().min(1).max(200);
/** A parameter is one scalar: a nested value here would be a way to carry a document in. */
const ParameterValue = z.strictObject({ value: z.union([z.number(), z.string().max(2000), z.boolean(), z.null()]), unit: z.string().max(32).optional() });

export const CAPSULE_SCHEMA = 'aira.capsule/1';
export const MAX_CAPSULE_BYTES = 128 << 10;
export const MAX_RECENT_DIAGNOSTICS = 16;
export const MAX_SELECTED_CONTRACTS = 20;
/** Capsule extensions kept (the most recent ones). */
export const MAX_EXTENSIONS = 32;

export const TaskCapsule = z.strictObject({
  schema: z.literal(CAPSULE_SCHEMA),
  taskId: HashId,
  intentFrame: IntentFrame,
  intentFrameHash: HashId,
  protocol: TaskProtocol,
  revision: Ref,
  branch: Ref,
  selection: z.array(Ref).max(64),
  parameters: z.record(Ref, ParameterValue).refine((p) => Object.keys(p).length <= 256, 'at most 256 parameters'),
  featureSubgraph: z.strictObject({
    nodes: z.array(z.strictObject({ id: Ref, kind: z.string().max(64) })).max(256),
    edges: z.array(z.strictObject({ from: Ref, to: Ref })).max(1024),
  }),
  constraints: z.array(IntentItem).max(64),
  requirements: z.array(IntentItem).max(64),
  activeAssertions: z.array(z.strictObject({ id: Name, validator: Name, args: z.record(z.string(), z.unknown()) })).max(64),
  resolvedReferences: z.array(z.strictObject({ ref: Ref, resolution: z.array(Ref).max(64), cardinality: z.enum(['none', 'one', 'many']) })).max(64),
  downstreamSummary: z.array(z.string().max(500)).max(64),
  capabilityHits: z.array(CapabilityHitSchema).max(50),
  selectedContracts: z.array(CapabilityContractSchema).max(MAX_SELECTED_CONTRACTS),
  compactStepSignatures: z.string().max(SIGNATURES_MAX_BYTES),
  /** Plan bindings the model copies into `Plan.bindings` (M17). */
  operationCatalog: z.string().max(200).nullable(),
  discoveryCatalogHash: HashId.nullable(),
  runtimeSnapshot: HashId,
  grant: z.strictObject({ grantId: Name }),
  budget: Budgets,
  ambiguities: z.array(IntentItem).max(64),
  missingInformation: z.array(IntentItem).max(64),
  recentDiagnostics: z.array(Diagnostic).max(MAX_RECENT_DIAGNOSTICS),
  certificates: z.array(CertificateSummary).max(16),
  /**
   * Capsule extensions through `model.query` (M7), each with the revision it was answered at (M3). The
   * query is the read input's own schema, so every query the runtime admits can be recorded as asked.
   */
  extensions: z.array(z.strictObject({ requestId: Name, query: ReadInput.shape.query.unwrap(), revision: Ref })).max(MAX_EXTENSIONS),
});
export type TaskCapsule = z.infer<typeof TaskCapsule>;

type Optionalised =
  | 'selection'
  | 'parameters'
  | 'featureSubgraph'
  | 'constraints'
  | 'requirements'
  | 'activeAssertions'
  | 'resolvedReferences'
  | 'downstreamSummary'
  | 'operationCatalog'
  | 'discoveryCatalogHash'
  | 'ambiguities'
  | 'missingInformation'
  | 'recentDiagnostics'
  | 'certificates'
  | 'extensions';

/**
 * What a capsule is built from: the runtime's own facts are required, the context selected for the
 * task is optional and empty when not given. Computed members (schema, intentFrameHash,
 * compactStepSignatures, grant) are not parts.
 */
export type CapsuleParts = Pick<TaskCapsule, 'taskId' | 'intentFrame' | 'protocol' | 'revision' | 'branch' | 'runtimeSnapshot' | 'budget'> &
  Partial<Pick<TaskCapsule, Optionalised>> & {
    grantId: string;
    /** What the authority answered to search and describe (checked here against the capsule schema). */
    capabilityHits?: readonly CapabilityHit[];
    selectedContracts?: readonly CapabilityContract[];
  };

const PART_KEYS: ReadonlySet<string> = new Set([
  'taskId',
  'intentFrame',
  'protocol',
  'revision',
  'branch',
  'runtimeSnapshot',
  'budget',
  'grantId',
  'selection',
  'parameters',
  'featureSubgraph',
  'constraints',
  'requirements',
  'activeAssertions',
  'resolvedReferences',
  'downstreamSummary',
  'capabilityHits',
  'selectedContracts',
  'operationCatalog',
  'discoveryCatalogHash',
  'ambiguities',
  'missingInformation',
  'recentDiagnostics',
  'certificates',
  'extensions',
]);

/**
 * A capsule from its parts: defaults for what is not given, the intent frame's hash, the step
 * signatures of the selected contracts, the most recent diagnostics only; checked against the schema
 * and the byte bound, and frozen (M4: read-only). A part the capsule has no member for (a whole
 * document, a history, …) is refused, never carried along. Throws `AiraInputError`.
 */
export function buildCapsule(parts: CapsuleParts, crypto: Crypto): TaskCapsule {
  for (const k of Object.keys(parts)) {
    if (!PART_KEYS.has(k)) throw new AiraInputError('CAPSULE_INVALID', `capsule.${k}`, 'not a capsule member; the capsule carries only selected context');
  }
  const selected = parts.selectedContracts ?? [];
  const draft = {
    schema: CAPSULE_SCHEMA,
    taskId: parts.taskId,
    intentFrame: parts.intentFrame,
    intentFrameHash: '',
    protocol: parts.protocol,
    revision: parts.revision,
    branch: parts.branch,
    selection: parts.selection ?? [],
    parameters: parts.parameters ?? {},
    featureSubgraph: parts.featureSubgraph ?? { nodes: [], edges: [] },
    constraints: parts.constraints ?? [],
    requirements: parts.requirements ?? [],
    activeAssertions: parts.activeAssertions ?? [],
    resolvedReferences: parts.resolvedReferences ?? [],
    downstreamSummary: parts.downstreamSummary ?? [],
    capabilityHits: parts.capabilityHits ?? [],
    selectedContracts: selected,
    compactStepSignatures: '',
    operationCatalog: parts.operationCatalog ?? null,
    discoveryCatalogHash: parts.discoveryCatalogHash ?? null,
    runtimeSnapshot: parts.runtimeSnapshot,
    grant: { grantId: parts.grantId },
    budget: parts.budget,
    ambiguities: parts.ambiguities ?? [],
    missingInformation: parts.missingInformation ?? [],
    recentDiagnostics: (parts.recentDiagnostics ?? []).slice(-MAX_RECENT_DIAGNOSTICS),
    certificates: parts.certificates ?? [],
    extensions: parts.extensions ?? [],
  };
  const r = TaskCapsule.safeParse({ ...draft, intentFrameHash: `intent:sha256:${'0'.repeat(64)}` });
  if (!r.success) {
    const [path, msg] = firstIssue(r.error, 'capsule');
    throw new AiraInputError('CAPSULE_INVALID', path, msg);
  }
  const fault = jsonBoundsFault(r.data, MAX_JSON_DEPTH + 8, MAX_CAPSULE_BYTES);
  if (fault) throw new AiraInputError('CAPSULE_TOO_LARGE', 'capsule', fault);
  let hash: string;
  try {
    hash = intentFrameHash(r.data.intentFrame, crypto);
  } catch (e) {
    throw new AiraInputError('CAPSULE_INVALID', 'capsule.intentFrame', (e as Error).message);
  }
  // A plain-JSON copy: freezing must not reach into objects the caller still holds (contracts' schemas, payloads).
  const capsule = JSON.parse(JSON.stringify(r.data)) as TaskCapsule;
  capsule.intentFrameHash = hash;
  capsule.compactStepSignatures = compactStepSignatures(capsule.selectedContracts);
  return deepFreeze(capsule);
}

/** `intent:sha256:…` of an intent frame (M10): what a plan's `intentFrameHash` must equal. */
export function intentFrameHash(intentFrame: IntentFrame, crypto: Crypto): string {
  return contentId('intent', intentFrame, crypto);
}
