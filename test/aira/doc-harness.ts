/**
 * The document authority's shared suite: every behaviour of the authority, registered once and run on
 * each store (memory on both crypto backends, PGlite, PostgreSQL). `fresh()` hands each test an empty
 * store, so every test starts from the seed bracket.
 *
 * Expected ids are recomputed here independently of the code under test: SHA-256 (node:crypto) of a
 * sorted-keys JSON serialisation, which equals RFC 8785 for the ASCII strings and integers these
 * records hold.
 */
import { createHash } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import { AuthorityError, type Authority, type AuthorityContext } from '../../ts/aira/authority.js';
import { openDocumentAuthority } from '../../ts/aira/doc/authority.js';
import { bracketDoc, type AiraDoc } from '../../ts/aira/doc/model.js';
import { docRefs, type DocStore } from '../../ts/aira/doc/index.js';
import { Diagnostic, type MetaCall, type Plan, type PlanStep } from '../../ts/aira/schema.js';
import type { Crypto } from '../../ts/crypto/backend.js';

/** Sorted-keys JSON; only for ASCII strings, integers, booleans, null, arrays and objects. */
export function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canon(x)}`).join(',')}}`;
  }
  if (typeof v === 'number' && !Number.isInteger(v)) throw new Error('canon: integers only');
  return JSON.stringify(v);
}

export const expectedId = (prefix: string, v: unknown): string => `${prefix}:sha256:${createHash('sha256').update(canon(v), 'utf8').digest('hex')}`;

const HASH = (p: string, fill = 'ab'): string => `${p}:sha256:${fill.repeat(32)}`;

export function taskId(n: string): string {
  return `task:sha256:${createHash('sha256').update(n).digest('hex')}`;
}

export function ctxOf(task: string, requestId = 'req-1'): AuthorityContext {
  return { taskId: task, branch: docRefs.branch(task), requestId };
}

export type StepIn = Omit<PlanStep, 'id' | 'mode'> & { id?: string; mode?: PlanStep['mode'] };

export function plan(baseRevision: string, steps: StepIn[], over: Partial<Plan> = {}): Plan {
  return {
    baseRevision,
    intentFrameHash: HASH('intent'),
    bindings: { operationCatalog: 'aira.doc.ops/1', discoveryCatalogHash: HASH('disc'), runtimeSnapshot: HASH('runtime'), grantId: 'grant:local' },
    steps: steps.map((s, i) => ({
      id: s.id ?? `s${i + 1}`,
      mode: s.mode ?? (s.capability === 'cap:doc.inspect@1' ? 'query' : 'authoring'),
      capability: s.capability,
      args: s.args,
      ...(s.dependsOn ? { dependsOn: s.dependsOn } : {}),
    })),
    acceptanceAssertions: ['width-45'],
    estimatedEffects: ['parameters/width'],
    estimatedRisk: 'low',
    ...over,
  };
}

export const setWidth = (value: unknown): StepIn => ({ capability: 'cap:doc.setParameter@1', args: { name: 'width', value } });

/** Every diagnostic an authority returns must parse against the contract's schema. */
export function codes(r: { diagnostics: readonly unknown[] }): string[] {
  return r.diagnostics.map((d) => Diagnostic.parse(d).code);
}

export interface Opened {
  a: Authority;
  ctx: AuthorityContext;
  base: string;
}

export async function openTask(a: Authority, name: string): Promise<Opened> {
  const t = taskId(name);
  const b = await a.openTask(t);
  return { a, ctx: ctxOf(t), base: b.head };
}

/** propose → validate; the candidate and its token. */
export async function validated(o: Opened, steps: StepIn[], base?: string): Promise<{ candidateId: string; token: string }> {
  const p = await o.a.propose(o.ctx, plan(base ?? (await o.a.head(o.ctx)), steps));
  expect(codes(p)).toEqual([]);
  const v = await o.a.validate(o.ctx, p.data.candidateId);
  expect(codes(v)).toEqual([]);
  expect(v.data.passed).toBe(true);
  return { candidateId: p.data.candidateId, token: v.data.validationToken! };
}

export async function committed(o: Opened, steps: StepIn[]): Promise<{ candidateId: string; token: string; revision: string }> {
  const v = await validated(o, steps);
  const c = await o.a.commit(o.ctx, { requestId: 'c', candidateId: v.candidateId, validationToken: v.token });
  expect(codes(c)).toEqual([]);
  return { ...v, revision: c.data.revision };
}

async function authorityError(p: Promise<unknown>): Promise<AuthorityError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(AuthorityError);
  return e as AuthorityError;
}

export interface SuiteEnv {
  crypto: Crypto;
  /** An empty store for one test. */
  fresh(): Promise<DocStore>;
}

export function docAuthoritySuite(env: () => SuiteEnv): void {
  let a: Authority;
  let store: DocStore;
  beforeEach(async () => {
    store = await env().fresh();
    a = openDocumentAuthority({ crypto: env().crypto, store });
  });

  const seedBody = { parent: null, seq: 0, doc: bracketDoc(), op: { kind: 'seed', name: 'bracket' } };

  it('seeds the bracket: a task branch is cut from the user head, whose id hashes {parent, seq, doc, op}', async () => {
    const o = await openTask(a, 'seed');
    expect(o.base).toBe(expectedId('rev', seedBody));
    expect(await store.getRef('head')).toBe(o.base);
    const r = await a.read(o.ctx, { requestId: 'r' });
    expect(r.observedRevision).toBe(o.base);
    expect(r.data['parameters']).toEqual({
      width: { value: 40, unit: 'mm' },
      height: { value: 20, unit: 'mm' },
      thickness: { value: 3, unit: 'mm' },
      hole_diameter: { value: 6, unit: 'mm' },
      material: { value: 'aluminium' },
    });
    expect((r.data['assertions'] as Array<{ id: string }>).map((x) => x.id)).toEqual(['min-wall', 'hole-fits']);
    // Reopening is idempotent and another task cuts from the same head.
    expect(await a.openTask(o.ctx.taskId)).toEqual({ branch: o.ctx.branch, baseRevision: o.base, head: o.base });
    expect((await openTask(a, 'other')).base).toBe(o.base);
  });

  it('runs a task: propose, preview, validate, commit to the branch (user head untouched), verify, publish', async () => {
    const o = await openTask(a, 'flow');
    const m = await a.manifest(o.ctx);
    expect(m.data.operationCatalog).toBe('aira.doc.ops/1');
    expect(m.data.validators).toEqual(['param.exists', 'param.range', 'param.equals', 'param.type']);
    const s = await a.search(o.ctx, { requestId: 's', query: 'set parameter value' });
    expect(s.data.hits[0]!.id).toBe('cap:doc.setParameter@1');
    expect(s.data.catalogHash).toMatch(/^disc:sha256:[0-9a-f]{64}$/);
    const d = await a.describe(o.ctx, 'cap:doc.setParameter@1');
    expect(d.data.inputSchema['required']).toEqual(['name', 'value']);
    expect(d.data.mode).toBe('authoring');

    const steps = [
      { id: 'look', capability: 'cap:doc.inspect@1', args: { select: ['parameters/width'] } },
      { id: 'widen', capability: 'cap:doc.setParameter@1', args: { name: 'width', value: 45 }, dependsOn: ['look'] },
    ] as StepIn[];
    const p = await a.propose(o.ctx, plan(o.base, steps));
    expect(codes(p)).toEqual([]);
    // Only the authoring step lowers; the id binds task, base and the plan's steps.
    expect(p.data['patch']).toEqual([{ step: 'widen', op: 'cap:doc.setParameter@1', target: 'width' }]);
    expect(p.data.candidateId).toBe(expectedId('cand', { taskId: o.ctx.taskId, baseRevision: o.base, steps: plan(o.base, steps).steps }));

    const pv = await a.preview(o.ctx, p.data.candidateId);
    expect(codes(pv)).toEqual([]);
    expect(pv.data['diff']).toEqual({
      parameters: [{ name: 'width', from: { value: 40, unit: 'mm' }, to: { value: 45, unit: 'mm' } }],
      assertionsAdded: [],
      assertionsRemoved: [],
    });

    const v = await a.validate(o.ctx, p.data.candidateId);
    expect(v.data.passed).toBe(true);
    expect(v.data.evidence.map((e) => [e.assertion, e.passed])).toEqual([
      ['min-wall', true],
      ['hole-fits', true],
    ]);
    expect(v.data.validationToken).toBe(expectedId('vtok', { candidateId: p.data.candidateId, baseRevision: o.base, evidence: v.data.evidence }));
    expect(await store.getRef('head')).toBe(o.base);

    const c = await a.commit(o.ctx, { requestId: 'c', candidateId: p.data.candidateId, validationToken: v.data.validationToken! });
    expect(codes(c)).toEqual([]);
    const doc45: AiraDoc = bracketDoc();
    doc45.parameters['width'] = { value: 45, unit: 'mm' };
    expect(c.data.revision).toBe(expectedId('rev', { parent: o.base, seq: 1, doc: doc45, op: { kind: 'commit', candidateId: p.data.candidateId } }));
    expect(c.effectsObserved).toEqual([{ kind: 'commit', target: o.ctx.branch, effectClass: 'reversible', revision: c.data.revision }]);
    expect(await a.head(o.ctx)).toBe(c.data.revision);
    // Task isolation: the user head moves only by publish.
    expect(await store.getRef('head')).toBe(o.base);
    const other = await openTask(a, 'bystander');
    expect((await a.read(other.ctx, { requestId: 'r', select: ['parameters/width'] })).data['selected']).toEqual({
      'parameters/width': { value: 40, unit: 'mm' },
    });

    const width45 = [{ id: 'width-45', text: 'w', validator: 'param.equals', args: { name: 'width', value: 45 } }];
    expect((await a.verify(o.ctx, width45, c.data.revision)).passed).toBe(true);
    const atBase = await a.verify(o.ctx, width45, o.base);
    expect(atBase.passed).toBe(false);
    expect(atBase.results[0]!.detail).toEqual({ code: 'NOT_EQUAL', expected: 45, actual: 40 });

    const pub = await a.commit(o.ctx, { requestId: 'p', candidateId: p.data.candidateId, validationToken: v.data.validationToken!, target: 'publish' });
    expect(codes(pub)).toEqual([]);
    expect(pub.effectsObserved).toEqual([{ kind: 'publish', target: 'head', effectClass: 'irreversible', revision: c.data.revision }]);
    expect(await store.getRef('head')).toBe(c.data.revision);
    // Once: publishing again changes nothing and reports no effect.
    const again = await a.commit(o.ctx, { requestId: 'p2', candidateId: p.data.candidateId, validationToken: v.data.validationToken!, target: 'publish' });
    expect(codes(again)).toEqual([]);
    expect(again.effectsObserved ?? []).toEqual([]);
    // A task opened now starts from the published revision.
    expect((await openTask(a, 'after-publish')).base).toBe(c.data.revision);
  });

  it('an abandoned candidate writes nothing to the model: no revision, neither head moves', async () => {
    const o = await openTask(a, 'abandon');
    const v = await validated(o, [setWidth(50)]);
    expect(await a.head(o.ctx)).toBe(o.base);
    expect(await store.getRef('head')).toBe(o.base);
    const doc50 = bracketDoc();
    doc50.parameters['width'] = { value: 50, unit: 'mm' };
    const wouldBe = expectedId('rev', { parent: o.base, seq: 1, doc: doc50, op: { kind: 'commit', candidateId: v.candidateId } });
    expect(await store.getRevision(wouldBe)).toBeNull();
    expect((await a.read(o.ctx, { requestId: 'r', select: ['parameters/width'] })).data['selected']).toEqual({ 'parameters/width': { value: 40, unit: 'mm' } });
  });

  it('lowering diagnostics name the step, carry a stable code, and make no candidate', async () => {
    const o = await openTask(a, 'lower');
    const cases: Array<[StepIn[], string, string[]]> = [
      [[{ capability: 'cap:doc.setParameter@1', args: { name: 'depth', value: 1 } }], 'PARAMETER_UNKNOWN', ['s1', 'depth']],
      [[setWidth('wide')], 'PARAMETER_TYPE', ['s1', 'width']],
      [[{ capability: 'cap:doc.addParameter@1', args: { name: 'width', value: 1 } }], 'PARAMETER_EXISTS', ['s1', 'width']],
      [[{ capability: 'cap:doc.removeParameter@1', args: { name: 'depth' } }], 'PARAMETER_UNKNOWN', ['s1', 'depth']],
      [[{ capability: 'cap:doc.removeAssertion@1', args: { id: 'nope' } }], 'ASSERTION_UNKNOWN', ['s1', 'nope']],
      [
        [{ capability: 'cap:doc.addAssertion@1', args: { id: 'min-wall', validator: 'param.exists', args: { name: 'width' } } }],
        'ASSERTION_EXISTS',
        ['s1', 'min-wall'],
      ],
      [
        [{ capability: 'cap:doc.addAssertion@1', args: { id: 'x', validator: 'param.range', args: { name: 'width', min: 'one' } } }],
        'ARGS_INVALID',
        ['s1', 'x'],
      ],
      [[{ capability: 'cap:doc.inspect@1', args: { select: ['parameters'] } }], 'PATCH_EMPTY', []],
      [[{ capability: 'cap:doc.setParameter@1', mode: 'query', args: { name: 'width', value: 1 } }], 'STEP_MODE', ['s1']],
      [
        [
          { id: 'a', capability: 'cap:doc.setParameter@1', args: { name: 'width', value: 41 }, dependsOn: ['b'] },
          { id: 'b', capability: 'cap:doc.setParameter@1', args: { name: 'height', value: 21 } },
        ],
        'STEP_DEPENDENCY',
        ['a'],
      ],
      [[setWidth(41), { id: 's1', ...setWidth(42) }], 'STEP_DUPLICATE', ['s1']],
    ];
    for (const [steps, code, affected] of cases) {
      const p = await a.propose(o.ctx, plan(o.base, steps));
      expect(codes(p), code).toEqual([code]);
      expect(p.diagnostics[0]!.severity).toBe('error');
      expect(p.diagnostics[0]!.affected).toEqual(affected);
      expect(p.data.candidateId).toBe('');
    }
    expect(await store.getRef(docRefs.candidate(o.ctx.taskId))).toBeNull();
    // A plan whose later step fixes nothing still reports the failing step first.
    const two = await a.propose(o.ctx, plan(o.base, [setWidth(41), { id: 'bad', capability: 'cap:doc.setParameter@1', args: { name: 'depth', value: 2 } }]));
    expect(two.data['failedStep']).toBe('bad');
  });

  it('preview and validate report a broken active assertion; validation fails without a token', async () => {
    const o = await openTask(a, 'thin');
    const p = await a.propose(o.ctx, plan(o.base, [{ capability: 'cap:doc.setParameter@1', args: { name: 'thickness', value: 1 } }]));
    expect(codes(p)).toEqual([]);
    const pv = await a.preview(o.ctx, p.data.candidateId);
    expect(codes(pv)).toEqual(['ASSERTION_FAILED']);
    expect(pv.diagnostics[0]).toMatchObject({
      phase: 'preview',
      severity: 'error',
      cause: 'assertion',
      affected: ['min-wall', 'thickness'],
      expected: { min: 2 },
      actual: 1,
    });
    const v = await a.validate(o.ctx, p.data.candidateId);
    expect(codes(v)).toEqual(['ASSERTION_FAILED']);
    expect(v.diagnostics[0]!.phase).toBe('validate');
    expect(v.data.passed).toBe(false);
    expect(v.data.validationToken).toBeUndefined();
    // Removing the assertion and thinning in one candidate passes: the candidate's own assertions are active.
    const p2 = await a.propose(
      o.ctx,
      plan(o.base, [
        { capability: 'cap:doc.removeAssertion@1', args: { id: 'min-wall' } },
        { capability: 'cap:doc.setParameter@1', args: { name: 'thickness', value: 1 } },
      ]),
    );
    const v2 = await a.validate(o.ctx, p2.data.candidateId);
    expect(v2.data.passed).toBe(true);
    expect(v2.data.evidence.map((e) => e.assertion)).toEqual(['hole-fits']);
  });

  it('revert writes a new revision with an ancestor document; history is kept', async () => {
    const o = await openTask(a, 'revert');
    const c = await committed(o, [setWidth(45)]);
    const r = await a.revert(o.ctx, { requestId: 'rv', toRevision: o.base });
    expect(codes(r)).toEqual([]);
    expect(r.data.revision).toBe(expectedId('rev', { parent: c.revision, seq: 2, doc: bracketDoc(), op: { kind: 'revert', toRevision: o.base } }));
    expect(r.effectsObserved).toEqual([{ kind: 'revert', target: o.ctx.branch, effectClass: 'reversible', revision: r.data.revision }]);
    const read = await a.read(o.ctx, { requestId: 'r', query: { kind: 'lineage', ref: 'head' } });
    const q = read.data['query'] as { lineage: Array<{ id: string; op: { kind: string } }> };
    expect(q.lineage.map((x) => [x.id, x.op.kind])).toEqual([
      [r.data.revision, 'revert'],
      [c.revision, 'commit'],
      [o.base, 'seed'],
    ]);
    // The committed revision is still there and still verifies.
    expect((await a.verify(o.ctx, [{ id: 'w', text: '', validator: 'param.equals', args: { name: 'width', value: 45 } }], c.revision)).passed).toBe(true);
    // Reverting the revert restores the commit's document in yet another revision.
    const back = await a.revert(o.ctx, { requestId: 'rv2', toRevision: c.revision });
    expect(codes(back)).toEqual([]);
    expect((await a.read(o.ctx, { requestId: 'r2', select: ['parameters/width'] })).data['selected']).toEqual({
      'parameters/width': { value: 45, unit: 'mm' },
    });
  });

  it('revert refuses an unknown revision, a non-ancestor and the head itself', async () => {
    const o = await openTask(a, 'revert-bad');
    const other = await openTask(a, 'revert-other');
    const elsewhere = await committed(other, [setWidth(60)]);
    await committed(o, [setWidth(45)]);
    const head = await a.head(o.ctx);
    for (const [to, code] of [
      [HASH('rev', 'cd'), 'REVISION_UNKNOWN'],
      ['not a revision', 'REVISION_UNKNOWN'],
      ['x'.repeat(100_000), 'REVISION_UNKNOWN'],
      [elsewhere.revision, 'REVISION_NOT_ANCESTOR'],
      [head, 'REVERT_TO_HEAD'],
    ] as const) {
      const r = await a.revert(o.ctx, { requestId: 'rv', toRevision: to });
      expect(codes(r), code).toEqual([code]);
      expect(r.data.revision).toBe(head);
    }
    expect(await a.head(o.ctx)).toBe(head);
  });

  it('commit refuses an unknown token, a token of another candidate or task, a voided token, and a moved branch (stale)', async () => {
    const o = await openTask(a, 'tokens');
    const first = await validated(o, [setWidth(45)]);
    const second = await validated(o, [setWidth(46)]);
    const commit = (candidateId: string, validationToken: string) => a.commit(o.ctx, { requestId: 'c', candidateId, validationToken });
    expect(codes(await commit(second.candidateId, HASH('vtok')))).toEqual(['TOKEN_UNKNOWN']);
    expect(codes(await commit(second.candidateId, first.token))).toEqual(['TOKEN_MISMATCH']);
    // first's token was voided when second was proposed.
    expect(codes(await commit(first.candidateId, first.token))).toEqual(['TOKEN_VOID']);
    expect(codes(await a.preview(o.ctx, first.candidateId))).toEqual(['CANDIDATE_SUPERSEDED']);
    const t2 = await openTask(a, 'tokens-2');
    const foreign = await validated(t2, [setWidth(47)]);
    expect(codes(await commit(foreign.candidateId, foreign.token))).toEqual(['TOKEN_UNKNOWN']);
    expect(codes(await a.preview(o.ctx, foreign.candidateId))).toEqual(['CANDIDATE_UNKNOWN']);
    expect(await a.head(o.ctx)).toBe(o.base);

    // Stale: the branch moves (commit, then a revert) under a validated candidate.
    const ok = await commit(second.candidateId, second.token);
    expect(codes(ok)).toEqual([]);
    const third = await validated(o, [setWidth(48)]);
    const rv = await a.revert(o.ctx, { requestId: 'rv', toRevision: o.base });
    const stale = await commit(third.candidateId, third.token);
    expect(stale.status).toBe('stale');
    expect(codes(stale)).toEqual(['COMMIT_STALE']);
    expect(stale.diagnostics[0]!.cause).toBe('stale');
    expect(stale.observedRevision).toBe(rv.data.revision);
    // Reusing a token that committed is stale too: the branch has moved past its candidate's base.
    expect((await commit(second.candidateId, second.token)).status).toBe('stale');
    // Preview and validate of a candidate on a moved head say so.
    const pv = await a.preview(o.ctx, third.candidateId);
    expect(pv.status).toBe('stale');
    expect(codes(pv)).toEqual(['CANDIDATE_STALE']);
  });

  it('two commits racing on one base: exactly one wins, the other is stale', async () => {
    const o = await openTask(a, 'race');
    const v = await validated(o, [setWidth(45)]);
    const results = await Promise.all(
      [1, 2].map((i) => a.commit(ctxOf(o.ctx.taskId, `c${i}`), { requestId: `c${i}`, candidateId: v.candidateId, validationToken: v.token })),
    );
    const won = results.filter((r) => (r.status ?? 'success') === 'success' && r.diagnostics.length === 0);
    const lost = results.filter((r) => r.status === 'stale');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(codes(lost[0]!)).toEqual(['COMMIT_STALE']);
    expect(await a.head(o.ctx)).toBe(won[0]!.data.revision);
    expect((await store.getRevision(won[0]!.data.revision))?.parent).toBe(o.base);
  });

  it('two tasks publishing from one user head: exactly one wins, the other is stale', async () => {
    const x = await openTask(a, 'pub-x');
    const y = await openTask(a, 'pub-y');
    const cx = await committed(x, [setWidth(45)]);
    const cy = await committed(y, [setWidth(55)]);
    const [rx, ry] = await Promise.all([
      a.commit(x.ctx, { requestId: 'p', candidateId: cx.candidateId, validationToken: cx.token, target: 'publish' }),
      a.commit(y.ctx, { requestId: 'p', candidateId: cy.candidateId, validationToken: cy.token, target: 'publish' }),
    ]);
    const statuses = [rx.status ?? 'success', ry.status ?? 'success'].sort();
    expect(statuses).toEqual(['stale', 'success']);
    const winner = rx.status === 'stale' ? cy.revision : cx.revision;
    expect(await store.getRef('head')).toBe(winner);
    expect(codes(rx.status === 'stale' ? rx : ry)).toEqual(['PUBLISH_STALE']);
  });

  it('publish takes the token of the committed candidate only', async () => {
    const o = await openTask(a, 'pub-early');
    const v = await validated(o, [setWidth(45)]);
    const r = await a.commit(o.ctx, { requestId: 'p', candidateId: v.candidateId, validationToken: v.token, target: 'publish' });
    expect(codes(r)).toEqual(['PUBLISH_REQUIRES_COMMIT']);
    expect(await store.getRef('head')).toBe(o.base);
  });

  it('hostile arguments are typed diagnostics: wrong types, huge strings, deep objects, __proto__ names', async () => {
    const o = await openTask(a, 'hostile');
    let deep: Record<string, unknown> = { end: 1 };
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const protoArgs = JSON.parse('{"name":"width","value":41,"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const cases: Array<[StepIn, string]> = [
      [setWidth({ x: 1 }), 'ARGS_INVALID'],
      [{ capability: 'cap:doc.setParameter@1', args: { name: 5, value: 1 } }, 'ARGS_INVALID'],
      [setWidth('x'.repeat(1_000_000)), 'ARGS_INVALID'],
      [{ capability: 'cap:doc.setParameter@1', args: { name: 'w'.repeat(1_000_000), value: 1 } }, 'ARGS_INVALID'],
      [{ capability: 'cap:doc.addParameter@1', args: { name: 'deep', value: deep } }, 'ARGS_INVALID'],
      [{ capability: 'cap:doc.setParameter@1', args: deep }, 'ARGS_INVALID'],
      [{ capability: 'cap:doc.addAssertion@1', args: { id: 'deep', validator: 'param.exists', args: deep } }, 'ARGS_INVALID'],
      [{ capability: 'cap:doc.addParameter@1', args: { name: '__proto__', value: 1 } }, 'NAME_RESERVED'],
      [{ capability: 'cap:doc.addParameter@1', args: { name: 'constructor', value: 1 } }, 'NAME_RESERVED'],
      [{ capability: 'cap:doc.setParameter@1', args: protoArgs }, 'ARGS_INVALID'],
      [{ capability: 'cap:doc.teleport@1', args: {} }, 'CAPABILITY_UNKNOWN'],
      [setWidth(Number.NaN), 'ARGS_INVALID'],
      [{ capability: 'cap:doc.setParameter@1', args: { name: 'material', value: 'alu\uD800' } }, 'ARGS_INVALID'],
      [{ capability: 'cap:doc.addAssertion@1', args: { id: 'lone', validator: 'param.equals', args: { name: 'material', value: '\uDC00' } } }, 'ARGS_INVALID'],
      [{ capability: 'cap:doc.inspect@1', args: { select: ['parameters/\uD800'] } }, 'ARGS_INVALID'],
    ];
    for (const [step, code] of cases) {
      const p = await a.propose(o.ctx, plan(o.base, [step]));
      expect(codes(p), code).toEqual([code]);
      expect(p.data.candidateId).toBe('');
    }
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    // Not a plan at all, a stale base, another catalog.
    expect(codes(await a.propose(o.ctx, { steps: 'nope' } as unknown as Plan))).toEqual(['PLAN_INVALID']);
    const stale = await a.propose(o.ctx, plan(HASH('rev', 'ef'), [setWidth(45)]));
    expect(stale.status).toBe('stale');
    expect(codes(stale)).toEqual(['STALE_PLAN']);
    const otherCatalog = plan(o.base, [setWidth(45)]);
    otherCatalog.bindings.operationCatalog = 'amir.ops/0.1.0';
    expect(codes(await a.propose(o.ctx, otherCatalog))).toEqual(['CATALOG_MISMATCH']);
    // describe of an unknown capability, preview/validate of garbage ids.
    expect(codes(await a.describe(o.ctx, 'cap:doc.teleport@1'))).toEqual(['CAPABILITY_UNKNOWN']);
    expect(codes(await a.preview(o.ctx, 'x'.repeat(1_000_000)))).toEqual(['CANDIDATE_UNKNOWN']);
    expect(codes(await a.validate(o.ctx, HASH('cand')))).toEqual(['CANDIDATE_UNKNOWN']);
    expect(codes(await a.commit(o.ctx, { requestId: 'c', candidateId: HASH('cand'), validationToken: 'x'.repeat(100_000) }))).toEqual(['TOKEN_UNKNOWN']);
    // A selection naming __proto__ is just an unknown path.
    const r = await a.read(o.ctx, { requestId: 'r', select: ['__proto__', 'parameters/__proto__', 'parameters/width'] });
    expect(r.status).toBe('partial');
    expect(codes(r)).toEqual(['SELECT_UNKNOWN', 'SELECT_UNKNOWN']);
    expect(r.diagnostics.every((d) => d.severity === 'warning')).toBe(true);
    expect(Object.keys(r.data['selected'] as object)).toEqual(['parameters/width']);
    expect(await a.head(o.ctx)).toBe(o.base);
  });

  it('integrity faults are AuthorityErrors: a foreign branch, an unopened task, a bad task id', async () => {
    const o = await openTask(a, 'integrity');
    expect((await authorityError(a.read({ ...o.ctx, branch: 'task/other' }, { requestId: 'r' }))).code).toBe('AUTHORITY_INTEGRITY');
    expect((await authorityError(a.head(ctxOf(taskId('never-opened'))))).code).toBe('AUTHORITY_INTEGRITY');
    expect((await authorityError(a.openTask('bad id with spaces'))).code).toBe('AUTHORITY_INTEGRITY');
    expect((await authorityError(a.openTask('x'.repeat(201)))).code).toBe('AUTHORITY_INTEGRITY');
    expect((await authorityError(a.head(ctxOf('nul\u0000task')))).code).toBe('AUTHORITY_INTEGRITY');
  });

  it('read: selections, resolve, impact and lineage queries; unknown references make it partial', async () => {
    const o = await openTask(a, 'read');
    const r = await a.read(o.ctx, { requestId: 'r', select: ['parameters/width', 'assertions/min-wall', 'revision', 'parameters/depth'] });
    expect(r.status).toBe('partial');
    expect(r.data['selected']).toEqual({
      'parameters/width': { value: 40, unit: 'mm' },
      'assertions/min-wall': { id: 'min-wall', validator: 'param.range', args: { name: 'thickness', min: 2 } },
      revision: o.base,
    });
    expect(r.data['parameters']).toBeUndefined();
    expect(r.diagnostics[0]!.affected).toEqual(['parameters/depth']);
    const impact = await a.read(o.ctx, { requestId: 'r', query: { kind: 'impact', ref: 'thickness' } });
    expect(impact.data['query']).toEqual({ kind: 'impact', ref: 'thickness', assertions: ['min-wall'] });
    const resolve = await a.read(o.ctx, { requestId: 'r', query: { kind: 'resolve', ref: 'parameters/material' } });
    expect(resolve.data['query']).toEqual({ kind: 'resolve', ref: 'parameters/material', value: { value: 'aluminium' } });
    const lineage = await a.read(o.ctx, { requestId: 'r', query: { kind: 'lineage', ref: HASH('rev', '00') } });
    expect(lineage.status).toBe('partial');
    expect(codes(lineage)).toEqual(['SELECT_UNKNOWN']);
  });

  it('verify: an unknown revision or validator fails every assertion instead of throwing; none passes vacuously', async () => {
    const o = await openTask(a, 'verify');
    const w = { id: 'w', text: '', validator: 'param.equals', args: { name: 'width', value: 40 } };
    expect(await a.verify(o.ctx, [w], o.base)).toEqual({ passed: true, results: [{ assertion: 'w', passed: true, detail: { actual: 40 } }] });
    expect(await a.verify(o.ctx, [w], HASH('rev', '01'))).toEqual({
      passed: false,
      results: [{ assertion: 'w', passed: false, detail: { code: 'REVISION_UNKNOWN' } }],
    });
    const magic = await a.verify(o.ctx, [{ ...w, validator: 'param.magic' }], o.base);
    expect(magic.passed).toBe(false);
    expect(magic.results[0]!.detail).toEqual({ code: 'VALIDATOR_UNKNOWN' });
    const badArgs = await a.verify(o.ctx, [{ ...w, args: { name: 'width' } }], o.base);
    expect(badArgs.results[0]!.detail).toEqual({ code: 'ARGS_INVALID' });
    expect((await a.verify(o.ctx, [], o.base)).passed).toBe(true);
  });

  it('effectClass: reads, bufferable stages, reversible commit and revert, irreversible publish', () => {
    const c = (call: unknown) => a.effectClass(call as MetaCall);
    const base = { requestId: 'r' };
    expect(['interface.manifest', 'catalog.search', 'catalog.describe', 'model.read'].map((op) => c({ op, input: base }))).toEqual([
      'read',
      'read',
      'read',
      'read',
    ]);
    expect(['model.proposePatch', 'model.preview', 'model.validate'].map((op) => c({ op, input: base }))).toEqual(['bufferable', 'bufferable', 'bufferable']);
    expect(c({ op: 'model.commit', input: { ...base, target: 'branch' } })).toBe('reversible');
    expect(c({ op: 'model.commit', input: base })).toBe('reversible');
    expect(c({ op: 'model.commit', input: { ...base, target: 'publish' } })).toBe('irreversible');
    expect(c({ op: 'model.revert', input: base })).toBe('reversible');
  });
}
