// The rin authority against the reference Go control daemon (built into .cache by
// scripts/lib/rin-reference.sh, run with the harbor policy) with our harbor attached through our host
// agent: the same mapping must hold whichever daemon decides, and the local policy prediction must
// agree with the reference's own decision (a disagreement would show as POLICY_MISMATCH).
import { beforeAll, expect, it, vi } from 'vitest';
import { harborLoadTask } from '../../ts/aira/rin/index.js';
import { tempDir } from '../shared/tmp.js';
import { describeWithReference, startGoDaemon, type AttachedHarbor } from '../interop/rin-harness.js';
import { commitAction, ctx, GRANT_APPROVES, prepare, useRinWorld } from './rin-harness.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

describeWithReference('rin authority on the reference Go control daemon', () => {
  const world = useRinWorld(async () => {
    const d = await startGoDaemon(tempDir('aira-rin-go'));
    return { url: d.url, stop: () => d.stop(), output: () => d.output() };
  });
  const authority = world.authority;
  let attached: AttachedHarbor;
  beforeAll(() => {
    attached = world.attached;
  });
  const failureContext = () => `\n--- Go daemon:\n${world.output()}`;

  it('offers the same catalog and reads the same kind of revision', async () => {
    const a = authority('puffin');
    const hits = (await a.search(ctx(), { requestId: 'q' })).data.hits;
    expect(hits.map((h) => h.id)).toEqual([
      'cap:harbor.inspect@1',
      'cap:harbor.load-cargo@1',
      'cap:harbor.repair@1',
      'cap:harbor.sail@1',
      'cap:harbor.scuttle@1',
      'cap:harbor.shift@1',
      'cap:harbor.tow@1',
    ]);
    const d = await a.describe(ctx(), 'cap:harbor.load-cargo@1');
    expect(d.diagnostics).toEqual([]);
    expect(d.data.inputSchema).toMatchObject({ required: ['crates'] });
    const r = await a.read(ctx(), { requestId: 'r' });
    expect(r.observedRevision).toMatch(/^rev:sha256:[0-9a-f]{64}$/);
    expect(r.data['payload']).toMatchObject({ actor_id: 'puffin' });
  });

  it('commits an allowed action the reference daemon also allows, and the acceptance assertions hold', async () => {
    const a = authority('gull');
    const { committed } = await commitAction(a, 'cap:harbor.load-cargo@1', { crates: 2 });
    expect(committed.diagnostics, failureContext()).toEqual([]);
    expect(committed.status).toBe('success');
    expect(attached.harbor.boat('gull').cargo).toBe(2);
    expect((await a.verify(ctx(), harborLoadTask(2).acceptanceAssertions, committed.data.revision)).passed).toBe(true);
  });

  it('confirms the repair the reference asks to confirm, as predicted, and sees it through the slipway', async () => {
    const a = authority('puffin');
    const { committed } = await commitAction(a, 'cap:harbor.repair@1', {}, GRANT_APPROVES);
    expect(committed.diagnostics, failureContext()).toEqual([]);
    expect(committed.status).toBe('success');
    expect(committed.effectsObserved?.map((e) => [e.kind, e.effectClass])).toEqual([['harbor.repair', 'irreversible']]);
  });

  it('answers stale when the world moved, and reports the reference policy denying what it was not told to predict', async () => {
    const a = authority('tern');
    const before = attached.agent.stats().executed;
    const p = await prepare(a, 'cap:harbor.load-cargo@1', { crates: 1 });
    await attached.tick();
    expect((await a.commit(p.ctx, { requestId: 'c', candidateId: p.candidateId, validationToken: p.validated.data.validationToken! })).status).toBe('stale');

    const bare = authority('tern', { policy: undefined });
    const { committed: denied } = await commitAction(bare, 'cap:harbor.scuttle@1', {});
    expect(denied.diagnostics[0], failureContext()).toMatchObject({ code: 'POLICY_DENIED', phase: 'commit' });
    const { committed: unapproved } = await commitAction(bare, 'cap:harbor.repair@1', {}, GRANT_APPROVES);
    expect(unapproved.diagnostics.map((d) => d.code)).toEqual(['APPROVAL_REQUIRED']);
    expect(attached.agent.stats().executed).toBe(before);
    expect(attached.harbor.boat('tern')).toMatchObject({ berth: 'dock', cargo: 0 });
  });
});
