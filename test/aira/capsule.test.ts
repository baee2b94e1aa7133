// Task input resolution (strict, tighten-only M15) and the Task Capsule (M4–M7: bounded, only what it
// is given, read-only).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import {
  AiraInputError,
  buildCapsule,
  DEFAULT_GRANT_ID,
  defaultBudget,
  defaultProtocol,
  intentFrameHash,
  resolveTaskInput,
  TaskCapsule,
  type CapsuleParts,
} from '../../ts/aira/capsule.js';
import { diagnostic } from '../../ts/aira/diagnostics.js';
import { IntentFrame } from '../../ts/aira/schema.js';
import { SIGNATURES_MAX_BYTES } from '../../ts/aira/signatures.js';
import { bracketIntent, docContracts, ZERO } from './capsule-fixtures.js';

function fault(f: () => unknown): AiraInputError {
  try {
    f();
  } catch (e) {
    if (e instanceof AiraInputError) return e;
    throw e;
  }
  throw new Error('expected an AiraInputError, nothing was thrown');
}

const idVectors = JSON.parse(readFileSync(new URL('../../test-vectors/aira/ids.json', import.meta.url), 'utf8')) as {
  cases: Array<{ name: string; value: unknown; id: string }>;
};

describe('resolveTaskInput', () => {
  it('fills the defaults of the runtime semantics', () => {
    const r = resolveTaskInput({ intentFrame: bracketIntent() });
    expect(r).toEqual({
      intentFrame: bracketIntent(),
      protocol: {
        requiredDiscoverySequence: ['catalog.search', 'catalog.describe'],
        requiredCompletionSequence: [
          'catalog.search',
          'catalog.describe',
          'model.proposePatch',
          'model.preview',
          'model.validate',
          'model.commit',
          'model.read',
        ],
        completionAuthority: 'runtime',
        repairCap: 3,
      },
      budget: { calls: 200, effects: 50 },
      grantId: 'grant:local',
    });
    expect(DEFAULT_GRANT_ID).toBe('grant:local');
    expect(defaultBudget).toEqual({ calls: 200, effects: 50 });
    // The result is the caller's to change; the defaults are not.
    r.protocol.requiredDiscoverySequence.push('model.read');
    expect(defaultProtocol.requiredDiscoverySequence).toEqual(['catalog.search', 'catalog.describe']);
    expect(Object.isFrozen(defaultProtocol.requiredCompletionSequence)).toBe(true);
  });

  it('keeps what tightens: extra discovery reads, a longer completion sequence, a lower cap, model completion, budgets, grant, nonce', () => {
    const r = resolveTaskInput({
      intentFrame: bracketIntent(),
      protocol: {
        requiredDiscoverySequence: ['interface.manifest', 'catalog.search', 'model.read', 'catalog.describe'],
        requiredCompletionSequence: ['interface.manifest', ...defaultProtocol.requiredCompletionSequence, 'model.read'],
        completionAuthority: 'model',
        repairCap: 0,
      },
      budget: { calls: 5, millis: 1000 },
      grantId: 'grant:alice',
      nonce: 'n-1',
    });
    expect(r.protocol.requiredDiscoverySequence[0]).toBe('interface.manifest');
    expect(r.protocol).toMatchObject({ completionAuthority: 'model', repairCap: 0 });
    expect(r.budget).toEqual({ calls: 5, effects: 50, millis: 1000 });
    expect(r.grantId).toBe('grant:alice');
    expect(r.nonce).toBe('n-1');
  });

  it('refuses a protocol that loosens the discovery sequence (M15)', () => {
    for (const seq of [[], ['catalog.search'], ['catalog.describe'], ['catalog.describe', 'catalog.search'], ['interface.manifest']]) {
      const e = fault(() => resolveTaskInput({ intentFrame: bracketIntent(), protocol: { requiredDiscoverySequence: seq } }));
      expect(e.code).toBe('PROTOCOL_LOOSENED');
      expect(e.path).toBe('task.protocol.requiredDiscoverySequence');
    }
  });

  it('refuses a repair cap above the runtime default: a task may lower the cap, never raise it (M15, M42)', () => {
    expect(defaultProtocol.repairCap).toBe(3);
    for (const cap of [4, 8, 16]) {
      const e = fault(() => resolveTaskInput({ intentFrame: bracketIntent(), protocol: { repairCap: cap } }));
      expect(e.code).toBe('PROTOCOL_LOOSENED');
      expect(e.path).toBe('task.protocol.repairCap');
    }
    for (const cap of [0, 1, 2, 3]) expect(resolveTaskInput({ intentFrame: bracketIntent(), protocol: { repairCap: cap } }).protocol.repairCap).toBe(cap);
  });

  it('refuses a discovery sequence that waits on an effect: it could never be satisfied', () => {
    const e = fault(() =>
      resolveTaskInput({ intentFrame: bracketIntent(), protocol: { requiredDiscoverySequence: ['catalog.search', 'catalog.describe', 'model.commit'] } }),
    );
    expect(e.code).toBe('PROTOCOL_UNSATISFIABLE');
  });

  it('refuses a completion sequence without the default evidence in order', () => {
    const full = [...defaultProtocol.requiredCompletionSequence];
    for (const seq of [[], full.slice(0, -1), full.filter((op) => op !== 'model.validate'), [...full.slice(0, 5), 'model.read', 'model.commit']]) {
      expect(fault(() => resolveTaskInput({ intentFrame: bracketIntent(), protocol: { requiredCompletionSequence: seq } })).code).toBe('PROTOCOL_LOOSENED');
    }
  });

  it('is strict: unknown members, unknown ops, out-of-range values and non-objects are TASK_INPUT_INVALID with a path', () => {
    const bad: Array<[unknown, string]> = [
      [null, 'task'],
      ['task', 'task'],
      [[], 'task'],
      [{}, 'task.intentFrame'],
      [{ intentFrame: bracketIntent(), extra: 1 }, 'task'],
      [{ intentFrame: { ...bracketIntent(), secret: 'x' } }, 'task.intentFrame'],
      [{ intentFrame: { ...bracketIntent(), goal: '' } }, 'task.intentFrame.goal'],
      [{ intentFrame: bracketIntent(), protocol: { loosen: true } }, 'task.protocol'],
      [
        { intentFrame: bracketIntent(), protocol: { requiredDiscoverySequence: ['catalog.search', 'plan.check'] } },
        'task.protocol.requiredDiscoverySequence.1',
      ],
      [{ intentFrame: bracketIntent(), protocol: { repairCap: 17 } }, 'task.protocol.repairCap'],
      [{ intentFrame: bracketIntent(), protocol: { repairCap: -1 } }, 'task.protocol.repairCap'],
      [{ intentFrame: bracketIntent(), protocol: { completionAuthority: 'user' } }, 'task.protocol.completionAuthority'],
      [{ intentFrame: bracketIntent(), budget: { calls: 0 } }, 'task.budget.calls'],
      [{ intentFrame: bracketIntent(), budget: { tokens: 9 } }, 'task.budget'],
      [{ intentFrame: bracketIntent(), grantId: 'grant local' }, 'task.grantId'],
      [
        { intentFrame: bracketIntent(), protocol: { requiredDiscoverySequence: new Array(33).fill('catalog.search') } },
        'task.protocol.requiredDiscoverySequence',
      ],
    ];
    for (const [input, path] of bad) {
      const e = fault(() => resolveTaskInput(input));
      expect(e.code, JSON.stringify(input)?.slice(0, 80)).toBe('TASK_INPUT_INVALID');
      expect(e.path).toBe(path);
      expect(e.message).not.toContain('\n');
    }
  });

  it('refuses input it cannot even read with the same typed error', () => {
    const trap = { intentFrame: bracketIntent() };
    Object.defineProperty(trap, 'protocol', {
      enumerable: true,
      get: () => {
        throw new Error('getter trap');
      },
    });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const input of [trap, proxy]) expect(fault(() => resolveTaskInput(input)).code).toBe('TASK_INPUT_INVALID');
  });

  it('refuses oversized and deeply nested intent frames without recursing', () => {
    const many = { ...bracketIntent(), assumptions: Array.from({ length: 65 }, (_, i) => ({ id: `a${i}`, text: 'x' })) };
    expect(fault(() => resolveTaskInput({ intentFrame: many })).code).toBe('TASK_INPUT_TOO_LARGE');
    const big = { ...bracketIntent(), hardRequirements: Array.from({ length: 40 }, (_, i) => ({ id: `r${i}`, text: 'x'.repeat(2000) })) };
    expect(fault(() => resolveTaskInput({ intentFrame: big })).code).toBe('TASK_INPUT_TOO_LARGE');
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const nested = { ...bracketIntent(), unknowns: [{ id: 'u', text: 'deep', payload: deep }] };
    const e = fault(() => resolveTaskInput({ intentFrame: nested }));
    expect(e.code).toBe('TASK_INPUT_TOO_LARGE');
    expect(e.message).toMatch(/deeper/);
  });
});

describe('buildCapsule', () => {
  const crypto = getCrypto('wasm');
  const parts = (extra: Partial<CapsuleParts> = {}): CapsuleParts => ({
    taskId: `task:sha256:${ZERO}`,
    intentFrame: bracketIntent(),
    protocol: structuredClone(defaultProtocol) as CapsuleParts['protocol'],
    revision: `rev:sha256:${'1'.repeat(64)}`,
    branch: `task/task:sha256:${ZERO}`,
    runtimeSnapshot: `runtime:sha256:${'2'.repeat(64)}`,
    budget: { consumed: { calls: 0 }, remaining: { calls: 200 } },
    grantId: 'grant:local',
    ...extra,
  });

  it('holds the runtime facts, the intent frame hash of the independent vector, and empty context when none is given', () => {
    const c = buildCapsule(parts(), crypto);
    expect(TaskCapsule.parse(c)).toEqual(c);
    const vector = idVectors.cases.find((x) => x.name === 'bracket-intent-frame')!;
    expect(IntentFrame.parse(vector.value)).toEqual(bracketIntent());
    expect(c.intentFrameHash).toBe(vector.id);
    expect(intentFrameHash(bracketIntent(), getCrypto('js'))).toBe(vector.id);
    expect(c).toMatchObject({
      schema: 'aira.capsule/1',
      revision: `rev:sha256:${'1'.repeat(64)}`,
      grant: { grantId: 'grant:local' },
      parameters: {},
      selection: [],
      featureSubgraph: { nodes: [], edges: [] },
      selectedContracts: [],
      capabilityHits: [],
      operationCatalog: null,
      discoveryCatalogHash: null,
      recentDiagnostics: [],
      extensions: [],
    });
  });

  it("is read-only all the way down, and does not freeze the caller's objects", () => {
    const contracts = docContracts();
    const c = buildCapsule(parts({ selectedContracts: contracts, parameters: { width: { value: 40, unit: 'mm' } } }), crypto);
    expect(() => {
      (c as { revision: string }).revision = 'x';
    }).toThrow(TypeError);
    expect(() => ((c.selectedContracts[0]!.inputSchema as Record<string, unknown>)['x'] = 1)).toThrow(TypeError);
    expect(() => (c.intentFrame.acceptanceAssertions as unknown[]).push(1)).toThrow(TypeError);
    expect(Object.isFrozen(contracts[0]!.inputSchema)).toBe(false);
    expect(c.compactStepSignatures).toContain('"cap:doc.setParameter@1"');
    expect(c.compactStepSignatures.length).toBeLessThanOrEqual(SIGNATURES_MAX_BYTES);
  });

  it('carries exactly the selected parameters it was given (M6)', () => {
    const c = buildCapsule(
      parts({ parameters: { width: { value: 40, unit: 'mm' }, material: { value: 'aluminium' } }, selection: ['parameters/width'] }),
      crypto,
    );
    expect(c.parameters).toEqual({ width: { value: 40, unit: 'mm' }, material: { value: 'aluminium' } });
    expect(Object.keys(c).sort()).toEqual(Object.keys(TaskCapsule.shape).sort());
  });

  it('refuses a whole document, a history or the full catalog instead of carrying it (M6)', () => {
    const doc = { schema: 'aira.doc/1', parameters: { width: { value: 40, unit: 'mm' } }, assertions: [] };
    const refusals: Array<[Partial<CapsuleParts> & Record<string, unknown>, string]> = [
      [{ document: doc }, 'capsule.document'],
      [{ history: [doc, doc] }, 'capsule.history'],
      [{ catalog: docContracts() }, 'capsule.catalog'],
      [{ parameters: doc as never }, 'capsule.parameters.schema'],
      [{ parameters: { width: { value: doc } } as never }, 'capsule.parameters.width.value'],
      [{ parameters: { width: { value: 40, extra: doc } } as never }, 'capsule.parameters.width'],
      [{ selectedContracts: Array.from({ length: 21 }, () => docContracts()[0]!) }, 'capsule.selectedContracts'],
      [{ capabilityHits: Array.from({ length: 51 }, () => ({ id: 'cap:doc.x@1', title: 't', effectClass: 'read', risk: 'low' })) }, 'capsule.capabilityHits'],
    ];
    for (const [extra, path] of refusals) {
      const e = fault(() => buildCapsule(parts(extra as Partial<CapsuleParts>), crypto));
      expect(e.code, path).toBe('CAPSULE_INVALID');
      expect(e.path).toBe(path);
    }
  });

  it('refuses a capsule over its byte bound', () => {
    const items = Array.from({ length: 64 }, (_, i) => ({ id: `c${i}`, text: 'x'.repeat(2000) }));
    expect(fault(() => buildCapsule(parts({ constraints: items, requirements: items }), crypto)).code).toBe('CAPSULE_TOO_LARGE');
  });

  it('keeps only the most recent diagnostics', () => {
    const diags = Array.from({ length: 40 }, (_, i) => diagnostic('ASSERTION_FAILED', 'preview', 'assertion', `round ${i}`));
    const c = buildCapsule(parts({ recentDiagnostics: diags }), crypto);
    expect(c.recentDiagnostics.map((d) => d.message)).toEqual(diags.slice(-16).map((d) => d.message));
  });

  it('refuses missing runtime facts and values the id cannot hash, with typed errors', () => {
    const { taskId: _t, ...noTask } = parts();
    expect(fault(() => buildCapsule(noTask as CapsuleParts, crypto)).path).toBe('capsule.taskId');
    expect(fault(() => buildCapsule(parts({ runtimeSnapshot: 'runtime:latest' }), crypto)).path).toBe('capsule.runtimeSnapshot');
    const nan = { ...bracketIntent(), unknowns: [{ id: 'u', text: 't', payload: Number.NaN }] };
    expect(fault(() => buildCapsule(parts({ intentFrame: nan }), crypto))).toMatchObject({ code: 'CAPSULE_INVALID', path: 'capsule.intentFrame' });
  });
});
