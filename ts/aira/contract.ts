/**
 * The Meta-operation Contract as data (M34, M36): the 9 × 9 admission matrix lives in a versioned JSON
 * descriptor (matrix-1.0.0.json), validated here once, and the runtime only looks cells up. Changing a
 * cell is a new descriptor with a new version and a new `matrixDigest`, never a code change (M46).
 */
import { z } from 'zod';
import type { Crypto } from '../crypto/backend.js';
import { contentId } from './ids.js';
import { META_OPS, MetaOp, RUNTIME_STATES, RuntimeState, type EffectClass, type MetaCall } from './schema.js';
import matrix100 from './matrix-1.0.0.json' with { type: 'json' };

export type AiraErrorCode =
  | 'CONTRACT_INVALID'
  | 'TASK_INPUT_INVALID'
  | 'PROTOCOL_LOOSENED'
  | 'AUTHORITY_UNAVAILABLE'
  | 'AUTHORITY_INTEGRITY'
  | 'AUTHORITY_INTERNAL'
  | 'RUNTIME_OPTIONS_INVALID'
  | 'BATCH_INVALID'
  | 'BATCH_TOO_LARGE'
  | 'REFUSAL_INVALID'
  | (string & {});

/** Every error the Aira runtime API throws: a stable `code`, a one-line message. */
export class AiraError extends Error {
  override readonly name = 'AiraError';
  constructor(
    readonly code: AiraErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const Code = z.string().regex(/^[A-Z][A-Z0-9_]*$/);
/** A refusal: the code and the meta-op a client should try next (M13, M26). */
const Refusal = z.strictObject({ code: Code, next: MetaOp });
const Target = z.union([RuntimeState, z.literal('=')]);

const AdmitFlags = {
  to: Target,
  /** Only a capability returned by an earlier `catalog.search` (M14). */
  requiresSearched: Refusal.optional(),
  /** The call's `candidateId` must be the task's current candidate. */
  requiresCandidate: Refusal.optional(),
  /** The call's `candidateId` and `validationToken` must be the current, validated pair. */
  requiresValidation: Refusal.optional(),
  /** The branch head must have been read back and verified (publishing, M36). */
  requiresVerifiedReadBack: Refusal.optional(),
  /** An error Diagnostic in the result moves the task to this state instead of `to` (M41). */
  onDiagnostic: RuntimeState.optional(),
  /** An authority `stale` answer moves the task to this state (M3). */
  onStale: RuntimeState.optional(),
  /** A successful result names a new candidate; it voids any validation token. */
  newCandidate: z.boolean().optional(),
  /** A passed validation yields the token a commit must present. */
  issuesToken: z.boolean().optional(),
  /** A successful result consumes the current candidate and its token. */
  consumesCandidate: z.boolean().optional(),
  /** A successful result's `revision` is the new branch head. */
  movesHead: z.boolean().optional(),
};
const AdmitCell = z.strictObject({ admit: z.literal(true), ...AdmitFlags });
const RefuseCell = z.strictObject({ admit: z.literal(false), code: Code, next: MetaOp });
const Variants = z.record(z.string().regex(/^[a-z]+$/), z.union([AdmitCell, RefuseCell]));
export const MatrixCell = z.union([AdmitCell.extend({ variants: Variants.optional() }), RefuseCell.extend({ variants: Variants.optional() })]);
export type MatrixCell = z.infer<typeof MatrixCell>;
/** A cell as admission sees it once a variant has been chosen. */
export type CellDecision = z.infer<typeof AdmitCell> | z.infer<typeof RefuseCell>;
export type AdmitCell = z.infer<typeof AdmitCell>;

/** A call is a variant of an op when one of its input members holds a given value (commit → publish). */
const VariantRule = z.strictObject({
  op: MetaOp,
  member: z.string().min(1),
  value: z.union([z.string(), z.number(), z.boolean()]),
  /** Answer for the variant in a cell that does not list it. */
  absent: Refusal,
});

const Row = z.strictObject(Object.fromEntries(META_OPS.map((op) => [op, MatrixCell])) as Record<MetaOp, typeof MatrixCell>);

export const MatrixDescriptor = z.strictObject({
  descriptor: z.literal('aira.matrix/1'),
  contractVersion: z.string().regex(/^\d+\.\d+\.\d+$/),
  traceVersion: z.string().regex(/^\d+\.\d+\.\d+$/),
  profile: z.string().min(1).max(64),
  initial: RuntimeState,
  /** A scheduled `model.read` that leaves the task here runs the completion check (M43). */
  completionState: RuntimeState,
  states: z.array(RuntimeState),
  ops: z.array(MetaOp),
  variants: z.record(z.string().regex(/^[a-z]+$/), VariantRule),
  cells: z.strictObject(Object.fromEntries(RUNTIME_STATES.map((s) => [s, Row])) as Record<RuntimeState, typeof Row>),
});
export type MatrixDescriptor = z.infer<typeof MatrixDescriptor>;

export interface MatrixContract {
  readonly descriptor: MatrixDescriptor;
  readonly contractVersion: string;
  readonly traceVersion: string;
  /** `matrix:sha256:…` over the descriptor's JCS bytes: what a trace binds (M46). */
  readonly matrixDigest: string;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && new Set(a).size === a.length && b.every((x) => a.includes(x));
}

/**
 * Validates a descriptor (structure and cross-references) and computes its digest. Anything malformed
 * is `CONTRACT_INVALID` with the first fault's path, so a bad contract never reaches a task.
 */
export function loadContract(doc: unknown, crypto: Crypto): MatrixContract {
  const r = MatrixDescriptor.safeParse(doc);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue ? issue.path.map(String).join('.') || '(root)' : '(root)';
    throw new AiraError('CONTRACT_INVALID', `matrix descriptor invalid at ${where}: ${issue?.message ?? 'malformed'}`);
  }
  const d = r.data;
  if (!sameSet(d.states, RUNTIME_STATES)) throw new AiraError('CONTRACT_INVALID', 'matrix descriptor must list exactly the nine runtime states');
  if (!sameSet(d.ops, META_OPS)) throw new AiraError('CONTRACT_INVALID', 'matrix descriptor must list exactly the nine meta-operations');
  for (const state of RUNTIME_STATES) {
    for (const op of META_OPS) {
      const cell = d.cells[state][op];
      for (const name of Object.keys(cell.variants ?? {})) {
        const rule = d.variants[name];
        if (!rule) throw new AiraError('CONTRACT_INVALID', `cell ${state}/${op} names undeclared variant ${name}`);
        if (rule.op !== op) throw new AiraError('CONTRACT_INVALID', `cell ${state}/${op}: variant ${name} belongs to ${rule.op}`);
      }
    }
  }
  let matrixDigest: string;
  try {
    matrixDigest = contentId('matrix', d as unknown as Record<string, unknown>, crypto);
  } catch (e) {
    throw new AiraError('CONTRACT_INVALID', `matrix descriptor cannot be hashed: ${e instanceof Error ? e.message : String(e)}`);
  }
  return Object.freeze({ descriptor: d, contractVersion: d.contractVersion, traceVersion: d.traceVersion, matrixDigest });
}

const defaults = new WeakMap<Crypto, MatrixContract>();

/** The built-in Meta-operation Contract 1.0.0 (trace 0.5.0). */
export function defaultContract(crypto: Crypto): MatrixContract {
  let c = defaults.get(crypto);
  if (!c) {
    c = loadContract(matrix100, crypto);
    defaults.set(crypto, c);
  }
  return c;
}

/**
 * A contract handed in by a caller is checked again: its descriptor must validate and hash to the
 * digest it claims, so a hand-edited object cannot slip past `loadContract`.
 */
export function checkContract(contract: unknown, crypto: Crypto): MatrixContract {
  if (contract === null || typeof contract !== 'object' || !('descriptor' in contract) || !('matrixDigest' in contract)) {
    throw new AiraError('CONTRACT_INVALID', 'contract must come from loadContract (descriptor and matrixDigest)');
  }
  const c = loadContract((contract as { descriptor: unknown }).descriptor, crypto);
  if (c.matrixDigest !== (contract as { matrixDigest: unknown }).matrixDigest) {
    throw new AiraError('CONTRACT_INVALID', 'contract matrixDigest does not match its descriptor');
  }
  return c;
}

/** The variant a call is, if any (by the descriptor's rules, never by op-specific code). */
export function callVariant(contract: MatrixContract, op: MetaOp, input: Readonly<Record<string, unknown>>): string | null {
  for (const [name, rule] of Object.entries(contract.descriptor.variants)) {
    if (rule.op === op && input[rule.member] === rule.value) return name;
  }
  return null;
}

/** The cell deciding `op` in `state`, with the call's variant applied. */
export function lookupCell(contract: MatrixContract, state: RuntimeState, op: MetaOp, variant: string | null): CellDecision {
  const cell = contract.descriptor.cells[state][op];
  if (variant === null) return cell;
  const v = cell.variants?.[variant];
  if (v) return v;
  const rule = contract.descriptor.variants[variant]!;
  return { admit: false, code: rule.absent.code, next: rule.absent.next };
}

/** Where an admitted cell leads on plain success. */
export function resolveTarget(cell: AdmitCell, from: RuntimeState): RuntimeState {
  return cell.to === '=' ? from : cell.to;
}

/**
 * The effect class M30 gives a call by its meta-operation alone: reads `read`; proposal, preview and
 * validation `bufferable`; a commit to the task branch and a revert `reversible`; publishing
 * `irreversible`. An authority may refine a write from what it knows of the call (a capability's own
 * reversibility), never turn one into a read or a read into a write. Anything that is not a
 * meta-operation gets the strictest class.
 */
export function staticEffectClass(call: MetaCall): EffectClass {
  switch (call.op) {
    case 'interface.manifest':
    case 'catalog.search':
    case 'catalog.describe':
    case 'model.read':
      return 'read';
    case 'model.proposePatch':
    case 'model.preview':
    case 'model.validate':
      return 'bufferable';
    case 'model.commit':
      return call.input.target === 'publish' ? 'irreversible' : 'reversible';
    case 'model.revert':
      return 'reversible';
    default:
      return 'irreversible';
  }
}
