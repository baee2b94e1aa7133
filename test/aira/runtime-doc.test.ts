/**
 * Whole tasks through the runtime on the built-in document authority (memory store): the runtime's
 * decisions against a real authority's revisions, candidates, tokens and diagnostics.
 */
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { bracketTask, openDocumentAuthority } from '../../ts/aira/doc/index.js';
import { startTask, type AiraTask, type TaskInput } from '../../ts/aira/runtime.js';
import { Envelope, Trace, type Envelope as EnvelopeT } from '../../ts/aira/schema.js';

const SET = 'cap:doc.setParameter@1';

function driver(task: AiraTask) {
  let n = 0;
  let operationCatalog = '';
  let catalogHash = '';
  const send = async (op: string, input: Record<string, unknown>): Promise<EnvelopeT> => {
    const e = await task.call({ op, input: { requestId: `q${++n}`, ...input } });
    expect(Envelope.safeParse(e).success).toBe(true);
    return e;
  };
  return {
    send,
    async manifest() {
      const e = await send('interface.manifest', {});
      operationCatalog = e.data['operationCatalog'] as string;
      return e;
    },
    async search() {
      const e = await send('catalog.search', {});
      catalogHash = e.data['catalogHash'] as string;
      return e;
    },
    describe: (capability = SET) => send('catalog.describe', { capability }),
    propose: (name: string, value: number) =>
      send('model.proposePatch', {
        plan: {
          baseRevision: task.head,
          intentFrameHash: task.intentFrameHash,
          bindings: { operationCatalog, discoveryCatalogHash: catalogHash, runtimeSnapshot: task.runtimeSnapshot, grantId: task.grantId },
          steps: [{ id: 'set', capability: SET, mode: 'authoring', args: { name, value } }],
          acceptanceAssertions: ['width-45'],
          estimatedEffects: [`parameters/${name}`],
          estimatedRisk: 'low',
        },
      }),
    preview: (candidateId: string) => send('model.preview', { candidateId }),
    validate: (candidateId: string) => send('model.validate', { candidateId }),
    commit: (candidateId: string, validationToken: string, target?: 'publish') =>
      send('model.commit', { candidateId, validationToken, ...(target ? { target } : {}) }),
    read: (extra: Record<string, unknown> = {}) => send('model.read', extra),
  };
}

type Driver = ReturnType<typeof driver>;

/** The discovery the protocol requires before a plan: the manifest, the catalog, the capability. */
async function discover(d: Driver): Promise<void> {
  await d.manifest();
  await d.search();
  await d.describe();
}

/** A candidate previewed, validated and committed with its validation token. */
async function land(d: Driver, candidateId: string): Promise<EnvelopeT> {
  await d.preview(candidateId);
  const v = await d.validate(candidateId);
  return d.commit(candidateId, v.data['validationToken'] as string);
}

describe.each(['js', 'wasm'] as const)('aira runtime on the document authority (%s)', (backend) => {
  const crypto = getCrypto(backend);
  /** `input` started on a fresh document authority, and a driver of it. */
  const started = async (input: TaskInput = bracketTask()) => {
    const task = await startTask({ authority: openDocumentAuthority({ crypto }), crypto, task: input });
    return { task, d: driver(task) };
  };

  it('the bracket task: widen to 45 mm, completed by the runtime at read-back', async () => {
    const { task, d } = await started();
    expect((await d.describe()).diagnostics[0]!.code).toBe('DISCOVERY_REQUIRED');
    await d.manifest();
    await d.search();
    expect((await d.describe()).status).toBe('success');
    const p = await d.propose('width', 45);
    expect(p.diagnostics).toEqual([]);
    const cand = p.data['candidateId'] as string;
    expect((await d.preview(cand)).status).toBe('success');
    const v = await d.validate(cand);
    expect(v.data['passed']).toBe(true);
    const base = task.head;
    const c = await d.commit(cand, v.data['validationToken'] as string);
    expect(c.status).toBe('success');
    expect(task.head).not.toBe(base);
    expect(task.head).toBe(c.data['revision']);
    const r = await d.read();
    expect(r.task).toMatchObject({ state: 'readBack', terminal: 'completed' });
    expect(r.certificateSummary).toMatchObject({ passed: true, assertions: 1 });
    const trace = task.trace();
    expect(Trace.safeParse(trace).success).toBe(true);
    expect(trace.terminal).toMatchObject({ state: 'completed', code: 'COMPLETED' });
    expect(trace.events.map((e) => e.decision)).toEqual(['rejected', ...Array(8).fill('scheduled')]);
  });

  it('a thinned wall fails the preview with a real diagnostic → repair, rediscovery, then the right patch completes', async () => {
    const { task, d } = await started();
    await discover(d);
    const bad = await d.propose('thickness', 1);
    const pv = await d.preview(bad.data['candidateId'] as string);
    expect(pv.status).toBe('failed');
    expect(pv.diagnostics.some((x) => x.severity === 'error')).toBe(true);
    expect(task.state).toBe('repair');
    expect(pv.budgets.remaining['repairs']).toBe(2);
    await d.search();
    await d.describe();
    const p = await d.propose('width', 45);
    await land(d, p.data['candidateId'] as string);
    expect((await d.read()).task.terminal).toBe('completed');
  });

  it('an unknown parameter is refused by the authority at propose → repair; acceptance failure at read-back keeps the task open', async () => {
    const { task, d } = await started();
    await discover(d);
    const unknown = await d.propose('depth', 5);
    expect(unknown.status).toBe('failed');
    expect(task.state).toBe('repair');
    await d.search();
    await d.describe();
    // A legal change that does not meet the acceptance assertion (width 44, not 45).
    const p = await d.propose('width', 44);
    await land(d, p.data['candidateId'] as string);
    const r = await d.read();
    expect(r.diagnostics.map((x) => x.code)).toEqual(['ACCEPTANCE_FAILED']);
    expect(task.state).toBe('readBack');
    expect(task.terminal).toBeNull();
  });

  it('completionAuthority model: read-back, publish to the user head (irreversible), then complete', async () => {
    const { task, d } = await started({ ...bracketTask(), protocol: { completionAuthority: 'model' } });
    await discover(d);
    const p = await d.propose('width', 45);
    const cand = p.data['candidateId'] as string;
    await d.preview(cand);
    const v = await d.validate(cand);
    const token = v.data['validationToken'] as string;
    expect((await d.commit(cand, token, 'publish')).diagnostics[0]!.code).toBe('READBACK_REQUIRED');
    await d.commit(cand, token);
    const r = await d.read();
    expect(r.task.terminal).toBeNull();
    const pub = await d.commit(cand, token, 'publish');
    expect(pub.status).toBe('success');
    expect(task.trace().events.at(-1)).toMatchObject({ op: 'model.commit', effectClass: 'irreversible', decision: 'scheduled' });
    expect((await d.read({ complete: true })).task.terminal).toBe('completed');
  });
});
