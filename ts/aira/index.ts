/**
 * aigenora/aira: the browser-safe Aira surface — the contract schemas, the Authority interface, the
 * runtime and its pure decisions, the structures, and the built-in authorities that need no Node APIs.
 * Node-only parts (the database-backed document store, the MCP server) are in aigenora/aira/node.
 */
export * from './schema.js';
export * from './authority.js';
export {
  AiraError,
  checkContract,
  defaultContract,
  loadContract,
  lookupCell,
  MatrixDescriptor,
  staticEffectClass,
  type AiraErrorCode,
  type MatrixContract,
  type MatrixCell,
} from './contract.js';
export { admit, reduceBatch, type Admission, type AdmissionView, type CallDecision, type ClassifiedCall, type Reduction } from './batch.js';
export {
  AiraTask,
  REFUSAL_CODES,
  startTask,
  type BatchOutcome,
  type BatchResult,
  type Refusal,
  type RefusalCode,
  type RuntimeOptions,
  type TaskInput,
} from './runtime.js';
export { contentId, verifyContentId, ContentIdError, CONTENT_ID } from './ids.js';
export { diagnostic, runtimeDiagnostic, isBlockingDiagnostic, RUNTIME_CODES, type RuntimeCode, type RuntimeCodeInfo } from './diagnostics.js';
export {
  AiraInputError,
  buildCapsule,
  defaultBudget,
  defaultProtocol,
  DEFAULT_GRANT_ID,
  intentFrameHash,
  resolveTaskInput,
  TaskCapsule,
  TaskInputSchema,
  CapabilityHitSchema,
  CapabilityContractSchema,
  type AiraInputErrorCode,
  type CapsuleParts,
  type ResolvedTaskInput,
} from './capsule.js';
export { checkPlan, compileArgsSchema, dependencyCycles, PLAN_CHECK_CODES, type PlanCheckCode, type PlanCheckContext } from './plan-check.js';
export { compactStepSignatures, schemaToTs, SIGNATURES_MAX_BYTES } from './signatures.js';
export * from './doc/index.js';
export * from './rin/index.js';
