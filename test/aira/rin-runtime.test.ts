// Whole Aira tasks through the runtime with the rin authority driving the built-in harbor: our control
// daemon in this process (in-memory database, the harbor policy), the harbor attached through our host
// agent, all on loopback. One daemon for the file; each task on its own boat.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { harborLoadTask } from '../../ts/aira/rin/index.js';
import { startTask, type AiraTask } from '../../ts/aira/runtime.js';
import { Envelope, Trace, type IntentFrame, type Plan } from '../../ts/aira/schema.js';
import { serveOurDaemon, type AttachedHarbor } from '../interop/rin-harness.js';
import { HARBOR_LOAD_PATH, useRinWorld } from './rin-harness.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const crypto = getCrypto();
const log: string[] = [];
const world = useRinWorld(async () => {
  const served = await serveOurDaemon(log);
  return { url: served.url, stop: () => served.close() };
});
const authority = (actor: string) => world.authority(actor, { approvingGrants: ['grant:skipper'] });
let attached: AttachedHarbor;
beforeAll(() => {
  attached = world.attached;
});

let n = 0;
async function call(task: AiraTask, op: string, input: Record<string, unknown> = {}): Promise<Envelope> {
  const env = await task.call({ op, input: { requestId: `req-${++n}`, ...input } });
  expect(Envelope.safeParse(env).success, JSON.stringify(env)).toBe(true);
  return env;
}

/** search → describe → read → propose (one step) → preview → validate, as a model would. */
async function upToValidate(task: AiraTask, query: string, capability: string, args: Record<string, unknown>) {
  const search = await call(task, 'catalog.search', { query });
  expect(search.status).toBe('success');
  expect((search.data['hits'] as Array<{ id: string }>).map((h) => h.id)).toContain(capability);
  const describe = await call(task, 'catalog.describe', { capability });
  expect(describe.status).toBe('success');
  const read = await call(task, 'model.read');
  const capsule = task.capsule();
  const plan: Plan = {
    baseRevision: read.observedRevision!,
    intentFrameHash: capsule.intentFrameHash,
    bindings: {
      operationCatalog: 'aira.rin.ops/1',
      discoveryCatalogHash: search.data['catalogHash'] as string,
      runtimeSnapshot: capsule.runtimeSnapshot,
      grantId: capsule.grant.grantId,
    },
    steps: [{ id: 'load', capability: capability as Plan['steps'][number]['capability'], mode: 'authoring', args }],
    acceptanceAssertions: capsule.intentFrame.acceptanceAssertions.map((a) => a.id),
    estimatedEffects: [],
    estimatedRisk: 'low',
  };
  const proposed = await call(task, 'model.proposePatch', { plan });
  expect(proposed.status, JSON.stringify(proposed.diagnostics)).toBe('success');
  const candidateId = proposed.data['candidateId'] as string;
  const preview = await call(task, 'model.preview', { candidateId });
  expect(preview.status).toBe('success');
  const validated = await call(task, 'model.validate', { candidateId });
  return { candidateId, validated };
}

describe('a whole Aira task on the harbor through the runtime', () => {
  it('loads crates: discovery, one action, policy allowed, committed in the world, verified at read-back', async () => {
    const a = authority('gull');
    const task = await startTask({ authority: a, crypto, task: { intentFrame: harborLoadTask(2) } });
    expect(task.state).toBe('observe');
    const { candidateId, validated } = await upToValidate(task, 'load crates', 'cap:harbor.load-cargo@1', { crates: 2 });
    expect(validated.status).toBe('success');
    expect(task.state).toBe('validate');
    const committed = await call(task, 'model.commit', { candidateId, validationToken: validated.data['validationToken'] });
    expect(committed.status, JSON.stringify(committed.diagnostics)).toBe('success');
    expect(committed.effectsObserved.map((e) => e.kind)).toEqual(['harbor.cargo']);
    expect(attached.harbor.boat('gull').cargo).toBe(2);
    const readBack = await call(task, 'model.read');
    expect(readBack.status).toBe('success');
    expect(readBack.task.terminal).toBe('completed');
    expect(readBack.certificateSummary).toMatchObject({ passed: true, assertions: 2 });
    expect(task.terminal).toMatchObject({ state: 'completed', code: 'COMPLETED' });
    const trace = task.trace();
    expect(Trace.safeParse(trace).success).toBe(true);
    expect(trace.events.map((e) => `${e.op}:${e.toState}`)).toEqual(HARBOR_LOAD_PATH);
    expect(trace.events.find((e) => e.op === 'model.commit')?.effectClass).toBe('reversible');
  });

  it('a world that moves before the commit sends the task back to observe; the retry completes', async () => {
    const a = authority('tern');
    const task = await startTask({ authority: a, crypto, task: { intentFrame: harborLoadTask(1) } });
    const first = await upToValidate(task, 'load crates', 'cap:harbor.load-cargo@1', { crates: 1 });
    await attached.tick();
    const stale = await call(task, 'model.commit', { candidateId: first.candidateId, validationToken: first.validated.data['validationToken'] });
    expect(stale.status).toBe('stale');
    expect(task.state).toBe('observe');
    expect(attached.harbor.boat('tern').cargo).toBe(0);

    const again = await upToValidate(task, 'load crates', 'cap:harbor.load-cargo@1', { crates: 1 });
    const committed = await call(task, 'model.commit', { candidateId: again.candidateId, validationToken: again.validated.data['validationToken'] });
    expect(committed.status, JSON.stringify(committed.diagnostics)).toBe('success');
    const readBack = await call(task, 'model.read');
    expect(readBack.task.terminal).toBe('completed');
    expect(attached.harbor.boat('tern').cargo).toBe(1);
  });

  it('a repair the policy asks to confirm runs only under a grant that may approve it', async () => {
    const repairTask = (): IntentFrame => ({
      ...harborLoadTask(0),
      goal: 'Repair the hull on the slipway',
      acceptanceAssertions: [{ id: 'hull-whole', text: 'The hull is whole', validator: 'payload.equals', args: { pointer: '/boat/hull', value: 100 } }],
    });
    const a = authority('puffin');
    const plain = await startTask({ authority: a, crypto, task: { intentFrame: repairTask() } });
    const refused = await upToValidate(plain, 'repair hull', 'cap:harbor.repair@1', {});
    expect(refused.validated.status).toBe('failed');
    expect(refused.validated.diagnostics[0]).toMatchObject({ code: 'APPROVAL_REQUIRED', approvalRequired: true });
    expect(plain.state).toBe('repair');

    const approving = await startTask({ authority: a, crypto, task: { intentFrame: repairTask(), grantId: 'grant:skipper' } });
    const { candidateId, validated } = await upToValidate(approving, 'repair hull', 'cap:harbor.repair@1', {});
    expect(validated.status, JSON.stringify(validated.diagnostics)).toBe('success');
    const committed = await call(approving, 'model.commit', { candidateId, validationToken: validated.data['validationToken'] });
    expect(committed.status, JSON.stringify(committed.diagnostics)).toBe('success');
    expect(committed.effectsObserved).toMatchObject([{ kind: 'harbor.repair', effectClass: 'irreversible' }]);
    expect((await call(approving, 'model.read')).task.terminal).toBe('completed');
    expect(approving.trace().events.find((e) => e.op === 'model.commit')?.effectClass).toBe('irreversible');
  });

  it('a capability the policy denies is caught at validation: repair, nothing sent to the world', async () => {
    const a = authority('puffin');
    const before = attached.agent.stats().executed;
    const task = await startTask({ authority: a, crypto, task: { intentFrame: harborLoadTask(1) } });
    const { validated } = await upToValidate(task, 'sink', 'cap:harbor.scuttle@1', {});
    expect(validated.status).toBe('failed');
    expect(validated.diagnostics.map((d) => d.code)).toEqual(['POLICY_DENIED']);
    expect(task.state).toBe('repair');
    const revert = await call(task, 'model.revert', { toRevision: validated.observedRevision });
    expect(revert.status).not.toBe('success');
    expect(attached.agent.stats().executed).toBe(before);
    expect(attached.harbor.boat('puffin').berth).toBe('dock');
  });
});
