// plan.check (M18): each decidable check has a stable code and a case that trips it; hostile plans
// (cycles of 64 steps, self-dependency, deep or huge args, non-plans) give diagnostics, never throws.
import { describe, expect, it } from 'vitest';
import type { AuthorityManifest, CapabilityContract } from '../../ts/aira/authority.js';
import { checkPlan, compileArgsSchema, dependencyCycles, PLAN_CHECK_CODES, type PlanCheckContext } from '../../ts/aira/plan-check.js';
import { Diagnostic, type Plan } from '../../ts/aira/schema.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { contentId } from '../../ts/aira/ids.js';
import { bracketIntent, docContracts } from './capsule-fixtures.js';

const h = (c: string) => c.repeat(64);
const HEAD = `rev:sha256:${h('1')}`;
const INTENT = `intent:sha256:${h('a')}`;
const CATALOG = `disc:sha256:${h('c')}`;
const SNAPSHOT = `runtime:sha256:${h('5')}`;
const MANIFEST: AuthorityManifest = {
  authority: 'doc',
  protocolVersion: '1',
  operationCatalog: 'aira.doc.ops/1',
  taxonomyRoot: 'doc',
  validators: ['param.exists', 'param.range', 'param.equals', 'param.type'],
  limits: {},
};

function ctx(over: Partial<PlanCheckContext> = {}): PlanCheckContext {
  const contracts = docContracts();
  return {
    intentFrame: bracketIntent(),
    intentFrameHash: INTENT,
    head: HEAD,
    described: new Map(contracts.map((c) => [c.id, c])),
    searched: new Set(contracts.map((c) => c.id)),
    manifest: MANIFEST,
    catalogHash: CATALOG,
    runtimeSnapshot: SNAPSHOT,
    grantId: 'grant:local',
    remainingEffects: 50,
    ...over,
  };
}

function plan(over: Partial<Plan> = {}): Plan {
  return {
    baseRevision: HEAD,
    intentFrameHash: INTENT,
    bindings: { operationCatalog: 'aira.doc.ops/1', discoveryCatalogHash: CATALOG, runtimeSnapshot: SNAPSHOT, grantId: 'grant:local' },
    steps: [
      { id: 'look', capability: 'cap:doc.inspect@1', mode: 'query', args: { select: ['parameters/width'] } },
      { id: 'widen', capability: 'cap:doc.setParameter@1', mode: 'authoring', dependsOn: ['look'], args: { name: 'width', value: 45 } },
    ],
    acceptanceAssertions: ['width-45'],
    estimatedEffects: ['parameters/width'],
    estimatedRisk: 'low',
    ...over,
  };
}

const codes = (ds: Diagnostic[]) => ds.map((x) => x.code);
function only(ds: Diagnostic[], code: string): Diagnostic {
  expect(codes(ds)).toEqual([code]);
  const x = ds[0]!;
  expect(Diagnostic.parse(x)).toEqual(x);
  expect(x.phase).toBe('plan');
  expect(x.code in PLAN_CHECK_CODES).toBe(true);
  return x;
}

describe('checkPlan', () => {
  it('passes a well-bound plan (no diagnostics)', () => {
    expect(checkPlan(plan(), ctx())).toEqual([]);
  });

  it('STALE_PLAN when baseRevision is not the head (cause stale)', () => {
    const x = only(checkPlan(plan({ baseRevision: `rev:sha256:${h('9')}` }), ctx()), 'STALE_PLAN');
    expect(x).toMatchObject({ cause: 'stale', severity: 'error', expected: HEAD, affected: ['baseRevision'] });
  });

  it('INTENT_FRAME_MISMATCH when the plan binds another intent frame', () => {
    only(checkPlan(plan({ intentFrameHash: `intent:sha256:${h('b')}` }), ctx()), 'INTENT_FRAME_MISMATCH');
  });

  it('BINDING_MISMATCH per binding that differs', () => {
    const bindings = {
      operationCatalog: 'other.ops/1',
      discoveryCatalogHash: `disc:sha256:${h('d')}`,
      runtimeSnapshot: `runtime:sha256:${h('6')}`,
      grantId: 'grant:bob',
    };
    const ds = checkPlan(plan({ bindings }), ctx());
    expect(codes(ds)).toEqual(['BINDING_MISMATCH', 'BINDING_MISMATCH', 'BINDING_MISMATCH', 'BINDING_MISMATCH']);
    expect(ds.map((x) => x.affected[0])).toEqual([
      'bindings.operationCatalog',
      'bindings.discoveryCatalogHash',
      'bindings.runtimeSnapshot',
      'bindings.grantId',
    ]);
    expect(ds.map((x) => x.cause)).toEqual(['stale', 'stale', 'stale', 'scope']);
    // Before any search there is no catalog hash to bind.
    only(checkPlan(plan(), ctx({ catalogHash: null })), 'BINDING_MISMATCH');
  });

  it('CAPABILITY_NOT_SEARCHED / CAPABILITY_NOT_DESCRIBED name the step', () => {
    const described = ctx().described;
    const lessDescribed = new Map([...described].filter(([k]) => k !== 'cap:doc.setParameter@1'));
    expect(only(checkPlan(plan(), ctx({ described: lessDescribed })), 'CAPABILITY_NOT_DESCRIBED').affected).toEqual(['widen']);
    const lessSearched = new Set([...ctx().searched].filter((k) => k !== 'cap:doc.setParameter@1'));
    expect(only(checkPlan(plan(), ctx({ searched: lessSearched })), 'CAPABILITY_NOT_SEARCHED').affected).toEqual(['widen']);
    const unknown = plan({ steps: [{ id: 's', capability: 'cap:doc.explode@2', mode: 'authoring', args: {} }] });
    only(checkPlan(unknown, ctx()), 'CAPABILITY_NOT_SEARCHED');
  });

  it('STEP_MODE_MISMATCH for authoring through a query capability and the reverse', () => {
    const p = plan({ steps: [{ id: 'x', capability: 'cap:doc.inspect@1', mode: 'authoring', args: { select: [] } }] });
    expect(only(checkPlan(p, ctx()), 'STEP_MODE_MISMATCH')).toMatchObject({ expected: 'query', actual: 'authoring', affected: ['x'] });
    const q = plan({ steps: [{ id: 'y', capability: 'cap:doc.setParameter@1', mode: 'query', args: { name: 'width', value: 1 } }] });
    only(checkPlan(q, ctx()), 'STEP_MODE_MISMATCH');
  });

  it('ARGS_INVALID names the failed step and every failing field (M21)', () => {
    const p = plan({ steps: [{ id: 'widen', capability: 'cap:doc.setParameter@1', mode: 'authoring', args: { name: 'Width!', value: [45], colour: 'red' } }] });
    const x = only(checkPlan(p, ctx()), 'ARGS_INVALID');
    expect(x.affected).toEqual(['widen']);
    expect(x.repairCapabilities).toEqual(['cap:doc.setParameter@1']);
    expect(x.repairScope).toEqual(expect.arrayContaining(['steps.widen.args/colour', 'steps.widen.args/name', 'steps.widen.args/value']));
    const missing = plan({ steps: [{ id: 'w', capability: 'cap:doc.setParameter@1', mode: 'authoring', args: { name: 'width' } }] });
    expect(only(checkPlan(missing, ctx()), 'ARGS_INVALID').repairScope).toEqual(['steps.w.args/value']);
  });

  it('compiles each contract schema once and reports one that does not compile as CAPABILITY_SCHEMA_INVALID', () => {
    const c = docContracts()[0]!;
    const v = compileArgsSchema(c.inputSchema);
    expect(v).toBeTypeOf('function');
    expect(compileArgsSchema(c.inputSchema)).toBe(v);
    expect(compileArgsSchema(structuredClone(c.inputSchema))).toBe(v);
    const broken: CapabilityContract = { ...c, inputSchema: { type: 'object', properties: { a: { $ref: 'https://example.com/elsewhere.json' } } } };
    const x = only(
      checkPlan(plan({ steps: [{ id: 's', capability: c.id, mode: 'authoring', args: {} }] }), ctx({ described: new Map([[c.id, broken]]) })),
      'CAPABILITY_SCHEMA_INVALID',
    );
    expect(x.cause).toBe('authority');
    expect(compileArgsSchema(broken.inputSchema)).toBeInstanceOf(Error);
  });

  it('bounds the schema cache: an evicted schema text is compiled afresh', () => {
    const first = { type: 'object', properties: { n0: { type: 'number' } } };
    const v = compileArgsSchema(first);
    for (let i = 1; i <= 260; i++) compileArgsSchema({ type: 'object', properties: { [`n${i}`]: { type: 'number' } } });
    expect(compileArgsSchema(first)).toBe(v);
    const again = compileArgsSchema(structuredClone(first));
    expect(again).not.toBe(v);
    expect((again as (x: unknown) => boolean)({ n0: 'x' })).toBe(false);
  });

  it('ARGS_TOO_LARGE for deep or huge args, without recursing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const addAssertion = (args: Record<string, unknown>) => plan({ steps: [{ id: 'a', capability: 'cap:doc.addAssertion@1', mode: 'authoring', args }] });
    only(checkPlan(addAssertion({ id: 'x', validator: 'param.exists', args: deep as Record<string, unknown> }), ctx()), 'ARGS_TOO_LARGE');
    only(checkPlan(addAssertion({ id: 'x', validator: 'param.exists', args: { s: 'x'.repeat(70_000) } }), ctx()), 'ARGS_TOO_LARGE');
  });

  it('DEPENDENCY_UNKNOWN and DUPLICATE_STEP_ID', () => {
    const base = plan().steps;
    expect(only(checkPlan(plan({ steps: [base[0]!, { ...base[1]!, dependsOn: ['nowhere'] }] }), ctx()), 'DEPENDENCY_UNKNOWN').affected).toEqual(['widen']);
    expect(only(checkPlan(plan({ steps: [base[0]!, { ...base[1]!, id: 'look', dependsOn: [] }] }), ctx()), 'DUPLICATE_STEP_ID').affected).toEqual(['look']);
  });

  it('DEPENDENCY_CYCLE for a self-dependency', () => {
    const self = plan({
      steps: [{ id: 'me', capability: 'cap:doc.setParameter@1', mode: 'authoring', dependsOn: ['me'], args: { name: 'width', value: 45 } }],
    });
    const x = only(checkPlan(self, ctx()), 'DEPENDENCY_CYCLE');
    expect(x.affected).toEqual(['me']);
    expect(x.message).toMatch(/depends on itself/);
  });

  it('DEPENDENCY_CYCLE for a 64-step cycle names all 64 steps; a 64-step chain passes', () => {
    const step = (i: number, dep: number | null) => ({
      id: `s${i}`,
      capability: 'cap:doc.inspect@1',
      mode: 'query' as const,
      args: { select: [] },
      ...(dep === null ? {} : { dependsOn: [`s${dep}`] }),
    });
    const ring = plan({ steps: Array.from({ length: 64 }, (_, i) => step(i, (i + 1) % 64)) });
    const x = only(checkPlan(ring, ctx()), 'DEPENDENCY_CYCLE');
    expect(x.affected).toEqual(Array.from({ length: 64 }, (_, i) => `s${i}`));
    const chain = plan({ steps: Array.from({ length: 64 }, (_, i) => step(i, i === 0 ? null : i - 1)) });
    expect(checkPlan(chain, ctx())).toEqual([]);
  });

  it('dependencyCycles finds each strongly connected component separately', () => {
    // 0→1→0, 2→3→4→2, 5→5, 6→0 (not in a cycle), 7 alone.
    const edges = [[1], [0], [3], [4], [2], [5], [0], []];
    expect(dependencyCycles(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], edges)).toEqual([[0, 1], [2, 3, 4], [5]]);
    expect(dependencyCycles([], [])).toEqual([]);
  });

  it('ACCEPTANCE_ASSERTION_UNKNOWN for an id not in the intent frame', () => {
    expect(only(checkPlan(plan({ acceptanceAssertions: ['width-45', 'height-50'] }), ctx()), 'ACCEPTANCE_ASSERTION_UNKNOWN').affected).toEqual(['height-50']);
  });

  it('VALIDATOR_UNSUPPORTED when an intent assertion names a validator the authority lacks', () => {
    const x = only(checkPlan(plan(), ctx({ manifest: { ...MANIFEST, validators: ['param.exists'] } })), 'VALIDATOR_UNSUPPORTED');
    expect(x).toMatchObject({ affected: ['width-45'], actual: 'param.equals', cause: 'precondition' });
  });

  it('PLAN_BUDGET_EXCEEDED when the plan has more authoring steps than effects remain (query steps are reads)', () => {
    const twoWrites = plan({
      steps: [...plan().steps, { id: 'unit', capability: 'cap:doc.addParameter@1', mode: 'authoring', args: { name: 'depth', value: 5 } }],
    });
    expect(only(checkPlan(twoWrites, ctx({ remainingEffects: 1 })), 'PLAN_BUDGET_EXCEEDED')).toMatchObject({ expected: 1, actual: 2, cause: 'budget' });
    expect(checkPlan(twoWrites, ctx({ remainingEffects: 2 }))).toEqual([]);
    only(checkPlan(plan(), ctx({ remainingEffects: 0 })), 'PLAN_BUDGET_EXCEEDED');
  });

  it("RISK_UNDERSTATED is a warning when estimatedRisk is below a step capability's risk", () => {
    const p = plan({ steps: [{ id: 'r', capability: 'cap:doc.removeAssertion@1', mode: 'authoring', args: { id: 'min-wall' } }] });
    expect(only(checkPlan(p, ctx()), 'RISK_UNDERSTATED')).toMatchObject({ severity: 'warning', expected: 'high', actual: 'low' });
    expect(checkPlan({ ...p, estimatedRisk: 'high' }, ctx())).toEqual([]);
  });

  it("PLAN_ID_MISMATCH when a crypto is given and planId is not the plan's content id", () => {
    const crypto = getCrypto('js');
    const p = plan();
    const id = contentId('plan', p, crypto);
    expect(checkPlan({ ...p, planId: id }, ctx({ crypto }))).toEqual([]);
    expect(only(checkPlan({ ...p, planId: `plan:sha256:${h('0')}` }, ctx({ crypto })), 'PLAN_ID_MISMATCH').expected).toBe(id);
    expect(only(checkPlan({ ...p, planId: id, estimatedRisk: 'high' }, ctx({ crypto })), 'PLAN_ID_MISMATCH').actual).toBe(id);
  });

  it('reports independent faults together, in a fixed order', () => {
    const p = plan({
      baseRevision: 'rev:old',
      acceptanceAssertions: ['nope'],
      steps: [{ id: 'x', capability: 'cap:doc.setParameter@1', mode: 'authoring', dependsOn: ['x'], args: {} }],
    });
    expect(codes(checkPlan(p, ctx({ remainingEffects: 0 })))).toEqual([
      'STALE_PLAN',
      'ARGS_INVALID',
      'DEPENDENCY_CYCLE',
      'ACCEPTANCE_ASSERTION_UNKNOWN',
      'PLAN_BUDGET_EXCEEDED',
    ]);
  });

  it('never throws: anything that is not a plan is PLAN_INVALID with the path at fault', () => {
    const tooMany = plan({ steps: Array.from({ length: 65 }, (_, i) => ({ id: `s${i}`, capability: 'cap:doc.inspect@1', mode: 'query' as const, args: {} })) });
    const cases: Array<[unknown, string]> = [
      [null, 'plan'],
      ['plan', 'plan'],
      [[], 'plan'],
      [{ ...plan(), extra: 1 }, 'plan'],
      [tooMany, 'plan.steps'],
      [{ ...plan(), steps: [] }, 'plan.steps'],
      [{ ...plan(), estimatedRisk: 'moderate' }, 'plan.estimatedRisk'],
    ];
    for (const [input, path] of cases) expect(only(checkPlan(input, ctx()), 'PLAN_INVALID').affected).toEqual([path]);
    const trap = { ...plan() };
    Object.defineProperty(trap, 'steps', {
      enumerable: true,
      get: () => {
        throw new Error('getter trap');
      },
    });
    expect(codes(checkPlan(trap, ctx()))).toHaveLength(1);
    const hostileCtx = { ...ctx(), described: null } as unknown as PlanCheckContext;
    expect(only(checkPlan(plan(), hostileCtx), 'PLAN_CHECK_INTERNAL').severity).toBe('error');
  });
});
