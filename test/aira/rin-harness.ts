// Helpers of the rin authority tests: a plan of one step, a context, and one action prepared up to
// validation (propose must succeed), as a model would drive them.
import { expect } from 'vitest';
import type { Authority, AuthorityContext } from '../../ts/aira/authority.js';
import type { Plan, PlanStep } from '../../ts/aira/schema.js';

export const H = (prefix: string): string => `${prefix}:sha256:${'0'.repeat(64)}`;

let seq = 0;
export const ctx = (taskId = 'task:sha256:' + 'a'.repeat(64)): AuthorityContext => ({ taskId, branch: `task/${taskId}`, requestId: `r${++seq}` });

export function plan(baseRevision: string, steps: Array<Partial<PlanStep> & Pick<PlanStep, 'capability' | 'args'>>, grantId = 'grant:local'): Plan {
  return {
    baseRevision,
    intentFrameHash: H('intent'),
    bindings: { operationCatalog: 'aira.rin.ops/1', discoveryCatalogHash: H('catalog'), runtimeSnapshot: H('snapshot'), grantId },
    steps: steps.map((s, i) => ({ id: `s${i + 1}`, mode: 'authoring', ...s })),
    acceptanceAssertions: [],
    estimatedEffects: [],
    estimatedRisk: 'low',
  };
}

/** Propose and validate one action at the world's head now; propose must succeed. */
export async function prepare(a: Authority, capability: string, args: Record<string, unknown>, grantId?: string, c = ctx()) {
  const head = await a.head(c);
  const proposed = await a.propose(c, plan(head, [{ capability: capability as PlanStep['capability'], args }], grantId));
  expect(proposed.diagnostics).toEqual([]);
  const candidateId = proposed.data.candidateId;
  const validated = await a.validate(c, candidateId);
  return { head, candidateId, validated, ctx: c };
}

/** Prepare, expect validation to pass, commit. */
export async function commitAction(a: Authority, capability: string, args: Record<string, unknown>, grantId?: string) {
  const p = await prepare(a, capability, args, grantId);
  expect(p.validated.data.passed, JSON.stringify(p.validated.diagnostics)).toBe(true);
  const committed = await a.commit(p.ctx, { requestId: 'commit', candidateId: p.candidateId, validationToken: p.validated.data.validationToken! });
  return { ...p, committed };
}
