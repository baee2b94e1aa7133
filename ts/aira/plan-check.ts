/**
 * plan.check (M18), run inside the trusted `model.proposePatch` entry before anything reaches the
 * authority: every check decidable from the plan, the task's bindings and the described contracts.
 * The result is a list of typed diagnostics (phase `plan`, stable codes, `affected` = step ids or the
 * plan member at fault); an empty list means the plan may be lowered. It never throws: a hostile plan
 * is a diagnostic, not an exception.
 *
 * Not decidable here, so left to the authority's lowering: preconditions that need the model state,
 * read/write scope against the intent frame's `scope`/`prohibitedEffects` (free text), representation
 * conversions, and approval requirements beyond the grant id.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Crypto } from '../crypto/backend.js';
import type { AuthorityManifest, CapabilityContract } from './authority.js';
import { jsonBoundsFault } from './capsule.js';
import { diagnostic } from './diagnostics.js';
import { contentId } from './ids.js';
import { Plan, type Diagnostic, type IntentFrame, type PlanStep, type Risk } from './schema.js';

export interface PlanCheckContext {
  readonly intentFrame: IntentFrame;
  readonly intentFrameHash: string;
  /** The task branch head now (M3). */
  readonly head: string;
  /** Contracts described in this task, by capability id. */
  readonly described: ReadonlyMap<string, CapabilityContract>;
  /** Capability ids returned by the task's searches. */
  readonly searched: ReadonlySet<string>;
  readonly manifest: AuthorityManifest;
  /** The discovery catalog hash of the last search, null before any. */
  readonly catalogHash: string | null;
  readonly runtimeSnapshot: string;
  readonly grantId: string;
  readonly remainingEffects: number;
  /** When given, a plan that carries a `planId` must carry its own content id (M2). */
  readonly crypto?: Crypto;
}

type Cause = Diagnostic['cause'];

/** Every code checkPlan emits, with its cause. */
export const PLAN_CHECK_CODES = {
  PLAN_INVALID: 'input',
  PLAN_ID_MISMATCH: 'integrity',
  STALE_PLAN: 'stale',
  INTENT_FRAME_MISMATCH: 'integrity',
  BINDING_MISMATCH: 'stale',
  DUPLICATE_STEP_ID: 'input',
  CAPABILITY_NOT_SEARCHED: 'protocol',
  CAPABILITY_NOT_DESCRIBED: 'protocol',
  STEP_MODE_MISMATCH: 'input',
  CAPABILITY_SCHEMA_INVALID: 'authority',
  ARGS_TOO_LARGE: 'input',
  ARGS_INVALID: 'input',
  DEPENDENCY_UNKNOWN: 'input',
  DEPENDENCY_CYCLE: 'input',
  ACCEPTANCE_ASSERTION_UNKNOWN: 'input',
  VALIDATOR_UNSUPPORTED: 'precondition',
  PLAN_BUDGET_EXCEEDED: 'budget',
  RISK_UNDERSTATED: 'input',
  PLAN_CHECK_INTERNAL: 'integrity',
} as const satisfies Record<string, Cause>;
export type PlanCheckCode = keyof typeof PLAN_CHECK_CODES;

const MAX_ARGS_BYTES = 64 << 10;
const MAX_ARGS_DEPTH = 32;
const MAX_FIELDS = 8;
const RISK_ORDER: Record<Risk, number> = { low: 0, medium: 1, high: 2, critical: 3 };

function d(code: PlanCheckCode, message: string, extra?: Partial<Diagnostic>): Diagnostic {
  return diagnostic(code, 'plan', PLAN_CHECK_CODES[code], message, extra);
}

// ---------------------------------------------------------------------------------------------
// Argument schemas: one ajv for all, each contract's schema compiled once. Looked up by the schema
// object first, then by its JSON text (an authority may hand out a fresh copy per describe); the
// text cache is bounded and evicts from ajv too, so a long-running server does not grow with every
// task. Schemas are never registered by $id, so they cannot reach each other.

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true, addUsedSchema: false });
const byObject = new WeakMap<object, ValidateFunction | Error>();
const byText = new Map<string, { result: ValidateFunction | Error; doc: object }>();
const CACHE_LIMIT = 256;

/** The compiled validator of an argument schema (the same function for the same schema), or the compile error. */
export function compileArgsSchema(schema: Readonly<Record<string, unknown>>): ValidateFunction | Error {
  const hit = byObject.get(schema);
  if (hit) return hit;
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    text = undefined;
  }
  const known = text === undefined ? undefined : byText.get(text);
  if (known) {
    byText.delete(text!);
    byText.set(text!, known);
    byObject.set(schema, known.result);
    return known.result;
  }
  let result: ValidateFunction | Error;
  try {
    result = ajv.compile(schema as Record<string, unknown>);
  } catch (e) {
    ajv.removeSchema(schema as Record<string, unknown>);
    result = e instanceof Error ? e : new Error(String(e));
  }
  byObject.set(schema, result);
  if (text !== undefined) {
    byText.set(text, { result, doc: schema });
    if (byText.size > CACHE_LIMIT) {
      const [oldest, entry] = byText.entries().next().value!;
      byText.delete(oldest);
      ajv.removeSchema(entry.doc as Record<string, unknown>);
    }
  }
  return result;
}

function fieldPath(stepId: string, e: ErrorObject): string {
  const missing = e.keyword === 'required' ? `/${(e.params as { missingProperty: string }).missingProperty}` : '';
  const extra = e.keyword === 'additionalProperties' ? `/${(e.params as { additionalProperty: string }).additionalProperty}` : '';
  return `steps.${stepId}.args${e.instancePath}${missing}${extra}`;
}

function checkArgs(step: PlanStep, contract: CapabilityContract): Diagnostic | null {
  const fault = jsonBoundsFault(step.args, MAX_ARGS_DEPTH, MAX_ARGS_BYTES);
  if (fault) return d('ARGS_TOO_LARGE', `step ${step.id}: args ${fault}`, { affected: [step.id], repairScope: [`steps.${step.id}.args`] });
  const validate = compileArgsSchema(contract.inputSchema);
  if (validate instanceof Error) {
    return d('CAPABILITY_SCHEMA_INVALID', `${contract.id}: its input schema does not compile: ${validate.message}`, { affected: [step.id] });
  }
  let ok: boolean;
  try {
    ok = validate(step.args) as boolean;
  } catch {
    return d('ARGS_TOO_LARGE', `step ${step.id}: args cannot be validated (too deep for the schema)`, { affected: [step.id] });
  }
  if (ok) return null;
  const errors = (validate.errors ?? []).slice(0, MAX_FIELDS);
  const first = errors[0];
  const fields = [...new Set(errors.map((e) => fieldPath(step.id, e)))];
  return d('ARGS_INVALID', `step ${step.id}: args do not match ${contract.id}: ${first ? `${fields[0]} ${first.message ?? first.keyword}` : 'invalid'}`, {
    affected: [step.id],
    repairScope: fields,
    repairCapabilities: [step.capability],
    expected: first ? { keyword: first.keyword, params: first.params, schemaPath: first.schemaPath } : undefined,
    actual: first ? { instancePath: first.instancePath } : undefined,
  });
}

// ---------------------------------------------------------------------------------------------
// Dependencies

/**
 * Strongly connected components of the step graph (Tarjan, iterative): each component of two or more
 * steps, or one step depending on itself, is a cycle. Returned in plan order, members in plan order.
 */
export function dependencyCycles(ids: readonly string[], edges: ReadonlyArray<readonly number[]>): number[][] {
  const n = ids.length;
  const index = new Array<number>(n).fill(-1);
  const low = new Array<number>(n).fill(0);
  const onStack = new Array<boolean>(n).fill(false);
  const stack: number[] = [];
  const cycles: number[][] = [];
  let next = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: Array<[number, number]> = [[root, 0]];
    index[root] = low[root] = next++;
    stack.push(root);
    onStack[root] = true;
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const [v, i] = top;
      const out = edges[v]!;
      if (i < out.length) {
        top[1]++;
        const w = out[i]!;
        if (index[w] === -1) {
          index[w] = low[w] = next++;
          stack.push(w);
          onStack[w] = true;
          work.push([w, 0]);
        } else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        const comp: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = false;
          comp.push(w);
        } while (w !== v);
        if (comp.length > 1 || out.includes(v)) cycles.push(comp.sort((a, b) => a - b));
      }
    }
  }
  return cycles.sort((a, b) => a[0]! - b[0]!);
}

// ---------------------------------------------------------------------------------------------

/**
 * Every decidable M18 check of `plan` (a parsed `Plan`, or anything: it is parsed first) against the
 * task. Diagnostics come in a fixed order: plan-level bindings, then each step in plan order, then
 * dependency cycles, acceptance assertions, budget and risk.
 */
export function checkPlan(plan: unknown, ctx: PlanCheckContext): Diagnostic[] {
  try {
    return check(plan, ctx);
  } catch (e) {
    return [d('PLAN_CHECK_INTERNAL', `plan check failed: ${e instanceof Error ? e.message : String(e)}`)];
  }
}

function check(input: unknown, ctx: PlanCheckContext): Diagnostic[] {
  const parsed = Plan.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = ['plan', ...(issue?.path ?? []).map(String)].join('.');
    return [d('PLAN_INVALID', `${path}: ${issue?.message ?? 'invalid'}`, { affected: [path] })];
  }
  const plan = parsed.data;
  const out: Diagnostic[] = [];

  if (plan.planId !== undefined && ctx.crypto) {
    const want = contentId('plan', plan as Record<string, unknown>, ctx.crypto, 'planId');
    if (want !== plan.planId)
      out.push(d('PLAN_ID_MISMATCH', 'planId is not the content id of the plan', { affected: ['planId'], expected: want, actual: plan.planId }));
  }
  if (plan.baseRevision !== ctx.head) {
    out.push(
      d('STALE_PLAN', 'the plan was made on another revision than the branch head: observe, then rebase and re-check it', {
        affected: ['baseRevision'],
        expected: ctx.head,
        actual: plan.baseRevision,
      }),
    );
  }
  if (plan.intentFrameHash !== ctx.intentFrameHash) {
    out.push(
      d('INTENT_FRAME_MISMATCH', "intentFrameHash is not the hash of this task's intent frame", {
        affected: ['intentFrameHash'],
        expected: ctx.intentFrameHash,
        actual: plan.intentFrameHash,
      }),
    );
  }
  const bindings: Array<[keyof Plan['bindings'], string | null, Cause]> = [
    ['operationCatalog', ctx.manifest.operationCatalog, 'stale'],
    ['discoveryCatalogHash', ctx.catalogHash, 'stale'],
    ['runtimeSnapshot', ctx.runtimeSnapshot, 'stale'],
    ['grantId', ctx.grantId, 'scope'],
  ];
  for (const [member, want, cause] of bindings) {
    const got = plan.bindings[member];
    if (got !== want) {
      out.push(
        diagnostic(
          'BINDING_MISMATCH',
          'plan',
          cause,
          `bindings.${member} does not match the task's ${want === null ? '(none yet: search first)' : 'current one'}`,
          {
            affected: [`bindings.${member}`],
            expected: want,
            actual: got,
          },
        ),
      );
    }
  }

  const position = new Map<string, number>();
  plan.steps.forEach((s, i) => {
    if (position.has(s.id)) out.push(d('DUPLICATE_STEP_ID', `step id ${s.id} is used twice`, { affected: [s.id] }));
    else position.set(s.id, i);
  });

  let maxRisk = -1;
  const edges: number[][] = plan.steps.map(() => []);
  plan.steps.forEach((step, i) => {
    const contract = ctx.described.get(step.capability);
    if (!ctx.searched.has(step.capability)) {
      out.push(d('CAPABILITY_NOT_SEARCHED', `step ${step.id}: ${step.capability} was not returned by a search in this task`, { affected: [step.id] }));
    } else if (!contract) {
      out.push(
        d('CAPABILITY_NOT_DESCRIBED', `step ${step.id}: ${step.capability} was not described in this task`, {
          affected: [step.id],
          repairCapabilities: [step.capability],
        }),
      );
    }
    if (contract) {
      maxRisk = Math.max(maxRisk, RISK_ORDER[contract.risk] ?? 3);
      if ((step.mode === 'authoring' || step.mode === 'query') && step.mode !== contract.mode) {
        out.push(
          d('STEP_MODE_MISMATCH', `step ${step.id}: ${step.capability} is a ${contract.mode} capability, not ${step.mode}`, {
            affected: [step.id],
            expected: contract.mode,
            actual: step.mode,
            repairScope: [`steps.${step.id}.mode`],
          }),
        );
      }
      const args = checkArgs(step, contract);
      if (args) out.push(args);
    }
    for (const dep of step.dependsOn ?? []) {
      const j = position.get(dep);
      if (j === undefined) {
        out.push(
          d('DEPENDENCY_UNKNOWN', `step ${step.id} depends on ${dep}, which is not a step of the plan`, {
            affected: [step.id],
            actual: dep,
            repairScope: [`steps.${step.id}.dependsOn`],
          }),
        );
      } else if (!edges[i]!.includes(j)) edges[i]!.push(j);
    }
  });

  // Duplicate ids share the first step's index, so only first occurrences take part.
  const ids = plan.steps.map((s) => s.id);
  for (const cycle of dependencyCycles(ids, edges)) {
    const names = cycle.map((i) => ids[i]!);
    out.push(
      d('DEPENDENCY_CYCLE', `dependencies form a cycle: ${names.length === 1 ? `${names[0]} depends on itself` : names.join(', ')}`, {
        affected: names,
        repairScope: names.map((n) => `steps.${n}.dependsOn`),
      }),
    );
  }

  const intentAssertions = new Map(ctx.intentFrame.acceptanceAssertions.map((a) => [a.id, a]));
  const validators = new Set(ctx.manifest.validators);
  for (const id of new Set(plan.acceptanceAssertions)) {
    if (!intentAssertions.has(id)) {
      out.push(
        d('ACCEPTANCE_ASSERTION_UNKNOWN', `acceptance assertion ${id} is not in the intent frame`, { affected: [id], repairScope: ['acceptanceAssertions'] }),
      );
    }
  }
  // Completion verifies every assertion of the intent frame, so an unsupported validator there is a dead end now.
  for (const a of intentAssertions.values()) {
    if (!validators.has(a.validator)) {
      out.push(
        d('VALIDATOR_UNSUPPORTED', `acceptance assertion ${a.id} names validator ${a.validator}, which the authority does not support`, {
          affected: [a.id],
          expected: [...validators],
          actual: a.validator,
        }),
      );
    }
  }

  // Only authoring steps write (M16); query, preview and compare steps are reads.
  const effects = plan.steps.filter((s) => s.mode === 'authoring').length;
  if (effects > ctx.remainingEffects) {
    out.push(
      d('PLAN_BUDGET_EXCEEDED', `the plan has ${effects} authoring steps; ${ctx.remainingEffects} effects remain`, {
        affected: ['steps'],
        expected: ctx.remainingEffects,
        actual: effects,
      }),
    );
  }
  if (maxRisk > RISK_ORDER[plan.estimatedRisk]) {
    const worst = (Object.keys(RISK_ORDER) as Risk[]).find((r) => RISK_ORDER[r] === maxRisk)!;
    out.push(
      d('RISK_UNDERSTATED', `estimatedRisk ${plan.estimatedRisk} is below the ${worst} risk of a step's capability`, {
        severity: 'warning',
        affected: ['estimatedRisk'],
        expected: worst,
        actual: plan.estimatedRisk,
      }),
    );
  }
  return out;
}
