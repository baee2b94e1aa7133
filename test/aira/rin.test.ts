// The rin authority against our control daemon (in this process, in-memory database, the harbor policy)
// with the built-in harbor attached through our host agent, all on loopback. One daemon for the file:
// the tests share the harbor, each on its own boat where the world's state matters.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { harborLoadTask } from '../../ts/aira/rin/index.js';
import { Diagnostic, HashId } from '../../ts/aira/schema.js';
import { RinControlClient } from '../../ts/rin/client.js';
import { RIN_TOKEN, serveOurDaemon, type AttachedHarbor } from '../interop/rin-harness.js';
import { commitAction, ctx, GRANT_APPROVES, H, plan, prepare, useRinWorld } from './rin-harness.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const log: string[] = [];
const world = useRinWorld(async () => {
  const served = await serveOurDaemon(log);
  return { url: served.url, stop: () => served.close() };
});
const authority = world.authority;
let attached: AttachedHarbor;
let client: RinControlClient;
beforeAll(() => {
  ({ attached, client } = world);
});

const codes = (ds: readonly Diagnostic[]) => ds.map((d) => d.code);

describe('rin authority: catalog', () => {
  it('searches the actor capabilities by words, risk and effect class, with a stable catalog hash', async () => {
    const a = authority('puffin');
    const all = await a.search(ctx(), { requestId: 'q1' });
    expect(all.diagnostics).toEqual([]);
    expect(all.data.hits.map((h) => h.id)).toEqual([
      'cap:harbor.inspect@1',
      'cap:harbor.load-cargo@1',
      'cap:harbor.repair@1',
      'cap:harbor.sail@1',
      'cap:harbor.scuttle@1',
      'cap:harbor.shift@1',
      'cap:harbor.tow@1',
    ]);
    const by = Object.fromEntries(all.data.hits.map((h) => [h.id, h]));
    expect(by['cap:harbor.load-cargo@1']).toMatchObject({ effectClass: 'reversible', risk: 'low', title: 'harbor.load-cargo' });
    // Repair is irreversible by its declared effect; its rin risk floor "moderate" is Aira's "medium".
    expect(by['cap:harbor.repair@1']).toMatchObject({ effectClass: 'irreversible', risk: 'medium' });
    expect(by['cap:harbor.tow@1']).toMatchObject({ effectClass: 'reversible', risk: 'high' });
    expect(by['cap:harbor.scuttle@1']).toMatchObject({ effectClass: 'irreversible', risk: 'critical' });
    expect(HashId.safeParse(all.data.catalogHash).success).toBe(true);
    expect(all.data.catalogHash.startsWith('catalog:sha256:')).toBe(true);

    const cargo = await a.search(ctx(), { requestId: 'q2', query: 'crates into boat' });
    expect(cargo.data.hits.map((h) => h.id)).toEqual(['cap:harbor.load-cargo@1']);
    expect(cargo.data.catalogHash).toBe(all.data.catalogHash);
    const low = await a.search(ctx(), { requestId: 'q3', maxRisk: 'low' });
    expect(low.data.hits.map((h) => h.id)).toEqual(['cap:harbor.inspect@1', 'cap:harbor.load-cargo@1', 'cap:harbor.sail@1', 'cap:harbor.shift@1']);
    const irreversible = await a.search(ctx(), { requestId: 'q4', effectClass: 'irreversible', limit: 1 });
    expect(irreversible.data.hits.map((h) => h.id)).toEqual(['cap:harbor.repair@1']);
    expect((await a.search(ctx(), { requestId: 'q5', query: 'teleport' })).data.hits).toEqual([]);
  });

  it('without declared effects, every capability is taken as irreversible at its risk floor', async () => {
    const a = authority('puffin', { effects: undefined });
    const all = await a.search(ctx(), { requestId: 'q1' });
    expect(new Set(all.data.hits.map((h) => h.effectClass))).toEqual(new Set(['irreversible']));
    expect(all.data.hits.find((h) => h.id === 'cap:harbor.tow@1')?.risk).toBe('high');
  });

  it('describes a capability with its input schema, and refuses an unknown one with a diagnostic', async () => {
    const a = authority('puffin');
    const d = await a.describe(ctx(), 'cap:harbor.load-cargo@1');
    expect(d.diagnostics).toEqual([]);
    expect(d.data).toMatchObject({ id: 'cap:harbor.load-cargo@1', mode: 'authoring', reversible: true, effectClass: 'reversible', risk: 'low' });
    expect(d.data.description).toMatch(/crates/);
    expect(d.data.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['crates'],
      properties: { crates: { type: 'integer', minimum: 1, maximum: 20 } },
    });
    expect((await a.describe(ctx(), 'cap:harbor.repair@1')).data.reversible).toBe(false);

    const unknown = await a.describe(ctx(), 'cap:harbor.teleport@1');
    expect(codes(unknown.diagnostics)).toEqual(['CAPABILITY_UNKNOWN']);
    expect(unknown.diagnostics.every((x) => Diagnostic.safeParse(x).success)).toBe(true);
    expect(codes((await a.describe(ctx(), 'cap:harbor.load-cargo@2')).diagnostics)).toEqual(['CAPABILITY_UNKNOWN']);
  });

  it('has a manifest naming its catalog and validators', async () => {
    const m = await authority('puffin').manifest(ctx());
    expect(m.data).toMatchObject({
      authority: 'rin',
      protocolVersion: 'rin.control/v2',
      operationCatalog: 'aira.rin.ops/1',
      validators: ['payload.equals', 'payload.range', 'fact.equals'],
    });
  });
});

describe('rin authority: read', () => {
  it('reads the observation; its revision is stable while the world stands and moves when it moves', async () => {
    const a = authority('puffin');
    const r1 = await a.read(ctx(), { requestId: 'r1' });
    expect(r1.diagnostics).toEqual([]);
    expect(r1.observedRevision).toMatch(/^rev:sha256:[0-9a-f]{64}$/);
    expect(r1.data['revision']).toBe(r1.observedRevision);
    expect(r1.data['world']).toEqual({ host: 'harbor-host', world: 'harbor', actor: 'puffin' });
    expect(r1.data['payload']).toMatchObject({ actor_id: 'puffin', boat: { name: 'Puffin', berth: 'dock' } });
    expect((r1.data['facts'] as Array<{ id: string }>).map((f) => f.id)).toContain('cargo');
    expect(await a.head(ctx())).toBe(r1.observedRevision);
    expect((await a.read(ctx(), { requestId: 'r2' })).observedRevision).toBe(r1.observedRevision);

    await attached.tick();
    const r3 = await a.read(ctx(), { requestId: 'r3' });
    expect(r3.observedRevision).not.toBe(r1.observedRevision);
    expect((r3.data['payload'] as { step: number }).step).toBe((r1.data['payload'] as { step: number }).step + 1);
  });

  it('reads a selection, and says which paths were not there', async () => {
    const a = authority('puffin');
    const r = await a.read(ctx(), { requestId: 'r1', select: ['payload/boat/berth', 'facts/hull', 'payload/boat/wings', 'elsewhere'] });
    expect(r.status).toBe('partial');
    expect(r.data['selected']).toEqual({ 'payload/boat/berth': 'dock', 'facts/hull': 100 });
    expect(codes(r.diagnostics)).toEqual(['SELECT_UNKNOWN', 'SELECT_UNKNOWN']);
    expect(r.diagnostics.map((d) => [d.severity, d.affected])).toEqual([
      ['warning', ['payload/boat/wings']],
      ['warning', ['elsewhere']],
    ]);
  });
});

describe('rin authority: propose', () => {
  it('lowers one authoring step to one candidate, the same plan to the same candidate', async () => {
    const a = authority('puffin');
    const c = ctx();
    const head = await a.head(c);
    const p1 = await a.propose(c, plan(head, [{ capability: 'cap:harbor.load-cargo@1', args: { crates: 2 } }]));
    expect(p1.diagnostics).toEqual([]);
    expect(p1.data.candidateId).toMatch(/^cand:sha256:[0-9a-f]{64}$/);
    expect(p1.data).toMatchObject({
      capability: 'cap:harbor.load-cargo@1',
      rinCapability: 'harbor.load-cargo@1.0.0',
      arguments: { crates: 2 },
      baseRevision: head,
    });
    expect((await a.propose(c, plan(head, [{ capability: 'cap:harbor.load-cargo@1', args: { crates: 2 } }]))).data.candidateId).toBe(p1.data.candidateId);
    expect((await a.propose(c, plan(head, [{ capability: 'cap:harbor.load-cargo@1', args: { crates: 3 } }]))).data.candidateId).not.toBe(p1.data.candidateId);
    // Another task, another candidate.
    expect(
      (await a.propose(ctx('task:sha256:' + 'b'.repeat(64)), plan(head, [{ capability: 'cap:harbor.load-cargo@1', args: { crates: 2 } }]))).data.candidateId,
    ).not.toBe(p1.data.candidateId);
    // Query steps are plan, not patch: they do not count as actions.
    const withQuery = await a.propose(
      c,
      plan(head, [
        { capability: 'cap:harbor.inspect@1', mode: 'query', args: {} },
        { capability: 'cap:harbor.load-cargo@1', args: { crates: 2 } },
      ]),
    );
    expect(withQuery.diagnostics).toEqual([]);
  });

  it('refuses arguments the capability schema refuses, naming the step and the capability to repair with', async () => {
    const a = authority('puffin');
    const head = await a.head(ctx());
    for (const args of [{ crates: 0 }, { crates: 21 }, { crates: 'two' }, {}, { crates: 2, extra: true }, { crates: 1.5 }]) {
      const r = await a.propose(ctx(), plan(head, [{ capability: 'cap:harbor.load-cargo@1', args }]));
      expect(codes(r.diagnostics), JSON.stringify(args)).toEqual(['ARGUMENTS_INVALID']);
      expect(r.diagnostics[0]).toMatchObject({
        phase: 'lower',
        cause: 'input',
        severity: 'error',
        affected: ['s1'],
        repairCapabilities: ['cap:harbor.load-cargo@1'],
        actual: args,
      });
      expect(Diagnostic.safeParse(r.diagnostics[0]).success).toBe(true);
      expect(r.data.candidateId).toBe('');
    }
    const sail = await a.propose(ctx(), plan(head, [{ capability: 'cap:harbor.sail@1', args: { distance: 51 } }]));
    expect(codes(sail.diagnostics)).toEqual(['ARGUMENTS_INVALID']);
    expect(sail.diagnostics[0]!.message).toMatch(/distance|maximum|50/);
  });

  it('refuses two actions in one plan, an unknown capability and a plan made on an older revision', async () => {
    const a = authority('puffin');
    const head = await a.head(ctx());
    const two = await a.propose(
      ctx(),
      plan(head, [
        { capability: 'cap:harbor.load-cargo@1', args: { crates: 1 } },
        { capability: 'cap:harbor.sail@1', args: { distance: 2 } },
      ]),
    );
    expect(codes(two.diagnostics)).toEqual(['ONE_ACTION_PER_PLAN']);
    expect(two.diagnostics[0]!.affected).toEqual(['s1', 's2']);
    expect(codes((await a.propose(ctx(), plan(head, [{ capability: 'cap:harbor.fly@1', args: {} }]))).diagnostics)).toEqual(['CAPABILITY_UNKNOWN']);
    const stale = await a.propose(ctx(), plan(H('rev'), [{ capability: 'cap:harbor.load-cargo@1', args: { crates: 1 } }]));
    expect(stale.diagnostics[0]).toMatchObject({ code: 'STALE_PLAN', cause: 'stale', expected: head, actual: H('rev') });
  });
});

describe('rin authority: preview and validate', () => {
  it('previews the declared effects of the candidate', async () => {
    const a = authority('puffin');
    const c = ctx();
    const head = await a.head(c);
    const load = (await a.propose(c, plan(head, [{ capability: 'cap:harbor.load-cargo@1', args: { crates: 2 } }]))).data.candidateId;
    const p = await a.preview(c, load);
    expect(p.diagnostics).toEqual([]);
    expect(p.data).toMatchObject({
      effectSource: 'declared',
      effectClass: 'reversible',
      riskFloor: 'low',
      effects: [{ kind: 'harbor.cargo', operation: 'transfer', ownership: 'actor', scope: 'harbor.public', reversible: true, risk: 'low' }],
      moved: false,
    });
    const repair = (await a.propose(c, plan(head, [{ capability: 'cap:harbor.repair@1', args: {} }]))).data.candidateId;
    const pr = await a.preview(c, repair);
    expect(pr.data).toMatchObject({
      effectClass: 'irreversible',
      riskFloor: 'medium',
      effects: [{ kind: 'harbor.repair', ownership: 'shared', scope: 'harbor.slipway', reversible: false, risk: 'medium' }],
    });
    expect(pr.diagnostics.map((d) => [d.code, d.severity])).toEqual([['IRREVERSIBLE_EFFECT', 'info']]);
    expect(codes((await a.preview(c, H('cand'))).diagnostics)).toEqual(['CANDIDATE_UNKNOWN']);

    const bare = authority('puffin', { effects: undefined });
    const cand = (await bare.propose(c, plan(head, [{ capability: 'cap:harbor.load-cargo@1', args: { crates: 2 } }]))).data.candidateId;
    const pb = await bare.preview(c, cand);
    expect(pb.data).toMatchObject({ effectSource: 'risk-floor', effectClass: 'irreversible', effects: [] });
    expect(pb.diagnostics.map((d) => [d.code, d.severity])).toEqual([['EFFECTS_UNDECLARED', 'warning']]);
  });

  it('validates with the harbor policy computed locally: allow, require_confirmation, deny', async () => {
    const a = authority('puffin');
    const allow = (await prepare(a, 'cap:harbor.load-cargo@1', { crates: 1 })).validated;
    expect(allow.diagnostics).toEqual([]);
    expect(allow.data.passed).toBe(true);
    expect(allow.data.validationToken).toMatch(/^vtok:sha256:[0-9a-f]{64}$/);
    expect(allow.data.evidence.find((e) => e.assertion === 'policy')).toMatchObject({
      passed: true,
      detail: { policyMode: 'local', policy: 'harbor', result: 'allow' },
    });

    const confirm = (await prepare(a, 'cap:harbor.repair@1', {})).validated;
    expect(confirm.data.passed).toBe(false);
    expect(confirm.data.validationToken).toBeUndefined();
    expect(confirm.diagnostics[0]).toMatchObject({ code: 'APPROVAL_REQUIRED', approvalRequired: true, severity: 'error', actual: 'require_confirmation' });
    const approved = (await prepare(a, 'cap:harbor.repair@1', {}, GRANT_APPROVES)).validated;
    expect(approved.data.passed).toBe(true);
    expect(approved.data.evidence.find((e) => e.assertion === 'policy')).toMatchObject({ detail: { result: 'require_confirmation', confirm: true } });

    for (const cap of ['cap:harbor.scuttle@1', 'cap:harbor.tow@1']) {
      const deny = (await prepare(a, cap, {}, GRANT_APPROVES)).validated;
      expect(deny.data.passed, cap).toBe(false);
      expect(deny.diagnostics[0], cap).toMatchObject({ code: 'POLICY_DENIED', phase: 'validate', actual: 'deny' });
    }
  });

  it('without a known policy, validation checks the schema only and says so', async () => {
    const a = authority('puffin', { policy: undefined });
    const v = (await prepare(a, 'cap:harbor.scuttle@1', {})).validated;
    expect(v.data.passed).toBe(true);
    expect(v.data.evidence.find((e) => e.assertion === 'policy')).toMatchObject({ passed: true, detail: { policyMode: 'schema-only' } });
    expect(v.data.evidence.find((e) => e.assertion === 'arguments.schema')).toMatchObject({ passed: true });
  });
});

describe('rin authority: an untrustworthy daemon', () => {
  /** A client whose answers from `path` are rewritten by `edit` on the way in. */
  function tampering(path: string, edit: (body: Record<string, unknown>) => unknown): RinControlClient {
    return new RinControlClient({
      baseUrl: world.url,
      token: RIN_TOKEN,
      fetch: async (url, init) => {
        const res = await fetch(url, init);
        if (!url.endsWith(path)) return res;
        const body = edit((await res.json()) as Record<string, unknown>);
        return new Response(JSON.stringify(body), { status: res.status, headers: { 'content-type': 'application/json' } });
      },
    });
  }

  it('refuses an input schema that does not match its digest, and an observation of another actor', async () => {
    const loosened = authority('puffin', {
      client: tampering('/control/v2/capabilities', (b) => {
        for (const s of b['specs'] as Array<{ input: { document: unknown } }>) s.input.document = { type: 'object' };
        return b;
      }),
    });
    const head = await loosened.head(ctx());
    await expect(loosened.propose(ctx(), plan(head, [{ capability: 'cap:harbor.load-cargo@1', args: { crates: 999 } }]))).rejects.toMatchObject({
      name: 'AuthorityError',
      code: 'AUTHORITY_INTEGRITY',
    });

    const elsewhere = authority('puffin', { client: tampering('/control/v2/observe', (b) => ({ ...b, actor_id: 'gull' })) });
    await expect(elsewhere.read(ctx(), { requestId: 'r' })).rejects.toMatchObject({ name: 'AuthorityError', code: 'AUTHORITY_INTEGRITY' });
  });

  it('turns an unreachable daemon into AUTHORITY_UNAVAILABLE', async () => {
    const gone = authority('puffin', { client: new RinControlClient({ baseUrl: 'http://127.0.0.1:9', token: RIN_TOKEN }) });
    await expect(gone.head(ctx())).rejects.toMatchObject({ name: 'AuthorityError', code: 'AUTHORITY_UNAVAILABLE' });
  });
});

describe('rin authority: commit', () => {
  it('commits an allowed action: it runs in the world, the revision moves and the acceptance assertions hold', async () => {
    const a = authority('gull');
    const before = attached.agent.stats().executed;
    const { head, candidateId, validated, ctx: c } = await prepare(a, 'cap:harbor.load-cargo@1', { crates: 3 });
    expect(a.effectClass({ op: 'model.commit', input: { requestId: 'x', candidateId, validationToken: validated.data.validationToken! } })).toBe('reversible');
    const badToken = await a.commit(c, { requestId: 'c0', candidateId, validationToken: H('vtok') });
    expect(codes(badToken.diagnostics)).toEqual(['VALIDATION_TOKEN_INVALID']);
    const publish = await a.commit(c, { requestId: 'c0', candidateId, validationToken: validated.data.validationToken!, target: 'publish' });
    expect(codes(publish.diagnostics)).toEqual(['PUBLISH_UNSUPPORTED']);
    expect(attached.agent.stats().executed).toBe(before);

    const done = await a.commit(c, { requestId: 'c1', candidateId, validationToken: validated.data.validationToken! });
    expect(done.diagnostics).toEqual([]);
    expect(done.status).toBe('success');
    expect(done.data.revision).not.toBe(head);
    expect(done.observedRevision).toBe(done.data.revision);
    expect(done.effectsObserved).toEqual([{ kind: 'harbor.cargo', target: 'gull', effectClass: 'reversible', revision: done.data.revision }]);
    expect(done.artifacts?.[0]).toMatchObject({ kind: 'rin.operation' });
    expect(attached.harbor.boat('gull').cargo).toBe(3);
    expect(attached.agent.stats().executed).toBe(before + 1);

    const read = await a.read(c, { requestId: 'r', select: ['payload/boat/cargo'] });
    expect(read.observedRevision).toBe(done.data.revision);
    expect(read.data['selected']).toEqual({ 'payload/boat/cargo': 3 });
    const verdict = await a.verify(c, harborLoadTask(3).acceptanceAssertions, done.data.revision);
    expect(verdict).toEqual({
      passed: true,
      results: [
        { assertion: 'cargo-loaded', passed: true, detail: { actual: 3 } },
        { assertion: 'still-docked', passed: true, detail: { actual: 'dock' } },
      ],
    });
    const wrong = await a.verify(c, harborLoadTask(5).acceptanceAssertions, done.data.revision);
    expect(wrong.passed).toBe(false);
    expect(wrong.results[0]).toMatchObject({ assertion: 'cargo-loaded', passed: false });
    expect((await a.verify(c, harborLoadTask(3).acceptanceAssertions, H('rev'))).passed).toBe(false);

    // The same commit again is the same answer, and nothing runs twice.
    expect(await a.commit(c, { requestId: 'c2', candidateId, validationToken: validated.data.validationToken! })).toEqual(done);
    expect(attached.agent.stats().executed).toBe(before + 1);
  });

  it('answers stale, submitting nothing, when the world moved after the candidate was made', async () => {
    const a = authority('tern');
    const before = attached.agent.stats().executed;
    const { candidateId, validated, ctx: c } = await prepare(a, 'cap:harbor.load-cargo@1', { crates: 1 });
    await attached.tick();
    const r = await a.commit(c, { requestId: 'c1', candidateId, validationToken: validated.data.validationToken! });
    expect(r.status).toBe('stale');
    expect(r.diagnostics[0]).toMatchObject({ code: 'REVISION_MOVED', cause: 'stale' });
    expect(r.data.revision).toBe(await a.head(c));
    expect(attached.agent.stats().executed).toBe(before);
    expect(attached.harbor.boat('tern').cargo).toBe(0);
  });

  it('confirms a predicted require_confirmation under an approving grant, and waits for the slipway', async () => {
    const a = authority('puffin');
    const { candidateId, validated, ctx: c } = await prepare(a, 'cap:harbor.repair@1', {}, GRANT_APPROVES);
    expect(a.effectClass({ op: 'model.commit', input: { requestId: 'x', candidateId, validationToken: validated.data.validationToken! } })).toBe(
      'irreversible',
    );
    const done = await a.commit(c, { requestId: 'c1', candidateId, validationToken: validated.data.validationToken! });
    expect(done.diagnostics).toEqual([]);
    expect(done.status).toBe('success');
    expect(done.effectsObserved).toEqual([{ kind: 'harbor.repair', target: 'puffin', effectClass: 'irreversible', revision: done.data.revision }]);
    expect(attached.harbor.boat('puffin')).toMatchObject({ berth: 'dock', hull: 100 });
  });

  it('without a prediction, never approves what the daemon asks to confirm, and reports what the daemon denies', async () => {
    const a = authority('tern', { policy: undefined });
    const before = attached.agent.stats().executed;
    const repair = await prepare(a, 'cap:harbor.repair@1', {}, GRANT_APPROVES);
    const r = await a.commit(repair.ctx, { requestId: 'c1', candidateId: repair.candidateId, validationToken: repair.validated.data.validationToken! });
    expect(codes(r.diagnostics)).toEqual(['APPROVAL_REQUIRED']);
    expect(r.diagnostics[0]!.approvalRequired).toBe(true);
    const scuttle = await prepare(a, 'cap:harbor.scuttle@1', {}, GRANT_APPROVES);
    const s = await a.commit(scuttle.ctx, { requestId: 'c2', candidateId: scuttle.candidateId, validationToken: scuttle.validated.data.validationToken! });
    expect(s.diagnostics[0]).toMatchObject({ code: 'POLICY_DENIED', phase: 'commit' });
    expect(attached.agent.stats().executed).toBe(before);
    expect(attached.harbor.boat('tern').berth).toBe('dock');
  });

  it('holds one controller lease, renews it when it runs short, and reports another controller holding the actor', async () => {
    let skew = 0;
    const a = authority('gull', { now: () => Date.now() + skew, controller: { id: 'aira.lease-test', leaseTtlMillis: 60_000 } });
    const target = { host_id: 'harbor-host', world_id: 'harbor', actor_id: 'gull' };
    // Another controller holds gull (the earlier commit's): refused, nothing runs.
    const before = attached.agent.stats().executed;
    const held = await client.getController(target);
    expect(held.controller_id).toBe('aira.controller');
    const refused = await prepare(a, 'cap:harbor.load-cargo@1', { crates: 1 });
    const r = await a.commit(refused.ctx, { requestId: 'c1', candidateId: refused.candidateId, validationToken: refused.validated.data.validationToken! });
    expect(r.diagnostics[0]).toMatchObject({ code: 'ACTION_REFUSED', cause: 'conflict', actual: 'lease_conflict' });
    expect(attached.agent.stats().executed).toBe(before);

    await client.releaseController({ ...target, lease_id: held.lease_id });
    const first = await commitAction(a, 'cap:harbor.load-cargo@1', { crates: 1 });
    expect(first.committed.status, JSON.stringify(first.committed.diagnostics)).toBe('success');
    const lease1 = await client.getController(target);
    expect(lease1.controller_id).toBe('aira.lease-test');
    // Within a third of its time: the same lease, not renewed.
    const second = await commitAction(a, 'cap:harbor.load-cargo@1', { crates: 1 });
    expect(second.committed.status).toBe('success');
    expect(await client.getController(target)).toEqual(lease1);
    // Its clock says the lease is nearly over: renewed, same lease, later expiry.
    skew = 45_000;
    const third = await commitAction(a, 'cap:harbor.load-cargo@1', { crates: 1 });
    expect(third.committed.status).toBe('success');
    const lease2 = await client.getController(target);
    expect(lease2.lease_id).toBe(lease1.lease_id);
    expect(lease2.expires_at_unix_millis).toBeGreaterThan(lease1.expires_at_unix_millis);
    expect(attached.harbor.boat('gull').cargo).toBe(6);
    // close() gives the actor back.
    await a.close();
    await expect(client.getController(target)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses revert: a rin action cannot be undone', async () => {
    const a = authority('gull');
    const head = await a.head(ctx());
    const r = await a.revert(ctx(), { requestId: 'v1', toRevision: head });
    expect(r.diagnostics[0]).toMatchObject({ code: 'REVERT_UNSUPPORTED', severity: 'error', affected: [head] });
    expect(r.data.revision).toBe(head);
  });

  it('classes the meta-operations for batch reduction', async () => {
    const a = authority('gull');
    expect(a.effectClass({ op: 'model.read', input: { requestId: 'x' } })).toBe('read');
    expect(a.effectClass({ op: 'catalog.search', input: { requestId: 'x' } })).toBe('read');
    expect(a.effectClass({ op: 'model.validate', input: { requestId: 'x', candidateId: H('cand') } })).toBe('bufferable');
    // An unknown candidate is taken at its worst.
    expect(a.effectClass({ op: 'model.commit', input: { requestId: 'x', candidateId: H('cand'), validationToken: H('vtok') } })).toBe('irreversible');
  });
});
