/**
 * The pure decisions (ts/aira/batch.ts) against the M36 matrix as transcribed by hand below from
 * aira-requirements.md, independently of matrix-1.0.0.json: every one of the 81 cells, then the
 * reduction of one round (M38–M40) without an authority.
 */
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { admit, reduceBatch, type AdmissionView, type ClassifiedCall } from '../../ts/aira/batch.js';
import { AiraError, defaultContract, loadContract } from '../../ts/aira/contract.js';
import { META_OPS, RUNTIME_STATES, type EffectClass, type MetaCall, type MetaOp, type RuntimeState } from '../../ts/aira/schema.js';

const crypto = getCrypto('js');
const contract = defaultContract(crypto);

// M36, columns observe discover describe propose preview repair validate commit readBack.
// `=` stay, `>x` move to x, a code is a refusal.
const M36: Record<MetaOp, string> = {
  'interface.manifest': '=  =  =  =  =  =  =  =  =',
  'catalog.search': '>discover  =  =  =  =  >discover  =  =  =',
  'catalog.describe': 'DR  >describe  =  =  =  >describe  =  =  =',
  'model.read': '=  =  =  =  =  =  =  >readBack  =',
  'model.proposePatch': 'DR  DR  >propose  >propose  >propose  DR  >propose  >propose  >propose',
  'model.preview': 'DR  DR  CR  >preview  >preview  DR  >preview  CR  CR',
  'model.validate': 'DR  DR  CR  PR  >validate  DR  =  CR  CR',
  'model.commit': 'DR  DR  VR  VR  VR  DR  >commit  VR  VR',
  'model.revert': 'NR  NR  NR  NR  NR  NR  NR  >commit  >commit',
};
const CODES: Record<string, string> = {
  DR: 'DISCOVERY_REQUIRED',
  CR: 'CANDIDATE_REQUIRED',
  PR: 'PREVIEW_REQUIRED',
  VR: 'VALIDATION_REQUIRED',
  NR: 'NOTHING_TO_REVERT',
};
const READS = new Set<MetaOp>(['interface.manifest', 'catalog.search', 'catalog.describe', 'model.read']);

const HEAD = 'rev:head';
const CAND = `cand:sha256:${'a'.repeat(64)}`;
const TOKEN = `vtok:sha256:${'b'.repeat(64)}`;
const CAP = 'cap:x.y@1';

/** A view in which every binding requirement is met, so only the matrix decides. */
function view(state: RuntimeState, extra: Partial<AdmissionView> = {}): AdmissionView {
  return {
    state,
    terminal: false,
    head: HEAD,
    searched: new Set([CAP]),
    candidateId: CAND,
    validationToken: TOKEN,
    verifiedRevision: HEAD,
    discoveryMissing: null,
    ...extra,
  };
}

function call(op: MetaOp, requestId = 'r', extra: Record<string, unknown> = {}): MetaCall {
  const input: Record<string, unknown> = { requestId, ...extra };
  if (op === 'catalog.describe') input['capability'] ??= CAP;
  if (op === 'model.preview' || op === 'model.validate' || op === 'model.commit') input['candidateId'] ??= CAND;
  if (op === 'model.commit') input['validationToken'] ??= TOKEN;
  if (op === 'model.revert') input['toRevision'] ??= 'rev:older';
  return { op, input } as MetaCall;
}
const ec = (c: MetaCall): EffectClass =>
  READS.has(c.op) ? 'read' : c.op === 'model.commit' && (c.input as { target?: string }).target === 'publish' ? 'irreversible' : 'bufferable';
const classified = (c: MetaCall): ClassifiedCall => ({ kind: 'call', requestId: c.input.requestId, call: c, effectClass: ec(c) });

describe('aira matrix 1.0.0: the 81 cells of M36', () => {
  for (const op of META_OPS) {
    const row = M36[op].trim().split(/\s+/);
    it(`${op}: ${row.join(' ')}`, () => {
      expect(row).toHaveLength(9);
      RUNTIME_STATES.forEach((state, i) => {
        const want = row[i]!;
        const c = call(op);
        const a = admit(contract, view(state), c, ec(c));
        if (want === '=' || want.startsWith('>')) {
          expect(a.admit, `${state}/${op}`).toBe(true);
          if (a.admit) expect(a.cell.to === '=' ? state : a.cell.to, `${state}/${op}`).toBe(want === '=' ? state : want.slice(1));
        } else {
          expect(a.admit, `${state}/${op}`).toBe(false);
          if (!a.admit) expect(a.code, `${state}/${op}`).toBe(CODES[want]);
        }
      });
    });
  }

  it('rejection next operations are the hand-chosen ones of the plan', () => {
    const next = (state: RuntimeState, op: MetaOp) => {
      const c = call(op);
      const a = admit(contract, view(state), c, ec(c));
      return a.admit ? null : a.next;
    };
    expect(next('observe', 'model.proposePatch')).toBe('catalog.search');
    expect(next('discover', 'model.proposePatch')).toBe('catalog.describe');
    expect(next('repair', 'model.commit')).toBe('catalog.search');
    expect(next('describe', 'model.preview')).toBe('model.proposePatch');
    expect(next('propose', 'model.validate')).toBe('model.preview');
    expect(next('preview', 'model.commit')).toBe('model.validate');
    expect(next('propose', 'model.commit')).toBe('model.proposePatch');
    expect(next('describe', 'model.commit')).toBe('model.proposePatch');
    expect(next('observe', 'model.revert')).toBe('model.commit');
  });

  it('footnotes: describe needs an earlier search hit; publish needs readBack and a verified read-back; complete needs a read-back', () => {
    const d = call('catalog.describe', 'r', { capability: 'cap:other@1' });
    expect(admit(contract, view('discover'), d, 'read')).toMatchObject({ admit: false, code: 'DISCOVERY_REQUIRED', next: 'catalog.search' });
    expect(admit(contract, view('repair'), d, 'read')).toMatchObject({ admit: false, code: 'DISCOVERY_REQUIRED' });
    const pub = call('model.commit', 'p', { target: 'publish' });
    for (const s of RUNTIME_STATES.filter((x) => x !== 'readBack')) {
      expect(admit(contract, view(s), pub, 'irreversible'), s).toMatchObject({ admit: false, code: 'READBACK_REQUIRED', next: 'model.read' });
    }
    expect(admit(contract, view('readBack'), pub, 'irreversible')).toMatchObject({ admit: true, variant: 'publish' });
    expect(admit(contract, view('readBack', { verifiedRevision: null }), pub, 'irreversible')).toMatchObject({ admit: false, code: 'READBACK_REQUIRED' });
    expect(admit(contract, view('readBack', { verifiedRevision: 'rev:before-revert' }), pub, 'irreversible')).toMatchObject({
      admit: false,
      code: 'READBACK_REQUIRED',
    });
    const done = call('model.read', 'c', { complete: true });
    for (const s of RUNTIME_STATES) {
      const a = admit(contract, view(s), done, 'read');
      expect(a.admit, s).toBe(s === 'commit' || s === 'readBack');
      if (!a.admit) expect(a.code).toBe('READBACK_REQUIRED');
    }
  });

  it('binding checks, protocol discovery and the observed revision refine an admitted cell', () => {
    expect(admit(contract, view('propose', { candidateId: null }), call('model.preview'), 'bufferable')).toMatchObject({
      admit: false,
      code: 'CANDIDATE_REQUIRED',
    });
    expect(admit(contract, view('validate', { validationToken: null }), call('model.commit'), 'reversible')).toMatchObject({
      admit: false,
      code: 'VALIDATION_REQUIRED',
      next: 'model.validate',
    });
    expect(admit(contract, view('describe', { discoveryMissing: 'interface.manifest' }), call('model.proposePatch'), 'bufferable')).toMatchObject({
      admit: false,
      code: 'DISCOVERY_REQUIRED',
      next: 'interface.manifest',
    });
    expect(admit(contract, view('describe', { discoveryMissing: 'interface.manifest' }), call('catalog.search'), 'read')).toMatchObject({ admit: true });
    expect(admit(contract, view('commit'), call('model.revert', 'r', { observedRevision: 'rev:old' }), 'reversible')).toMatchObject({
      admit: false,
      code: 'STALE_REVISION',
    });
    expect(admit(contract, view('commit'), call('model.revert', 'r', { observedRevision: HEAD }), 'reversible')).toMatchObject({ admit: true });
    expect(admit(contract, view('commit', { terminal: true }), call('model.read'), 'read')).toMatchObject({ admit: false, code: 'TASK_TERMINAL' });
  });

  it('a query (model.read with a query) naming an old observedRevision is STALE_REVISION; a plain read is not (M3, M7)', () => {
    const q = { kind: 'resolve', ref: 'parameters/width' };
    for (const s of RUNTIME_STATES) {
      expect(admit(contract, view(s), call('model.read', 'q', { observedRevision: 'rev:old', query: q }), 'read'), s).toMatchObject({
        admit: false,
        code: 'STALE_REVISION',
        next: 'model.read',
      });
      expect(admit(contract, view(s), call('model.read', 'q', { observedRevision: HEAD, query: q }), 'read'), s).toMatchObject({ admit: true });
      expect(admit(contract, view(s), call('model.read', 'q', { query: q }), 'read'), s).toMatchObject({ admit: true });
      expect(admit(contract, view(s), call('model.read', 'r', { observedRevision: 'rev:old' }), 'read'), s).toMatchObject({ admit: true });
    }
  });
});

describe('aira matrix descriptor validation', () => {
  const base = () => structuredClone(contract.descriptor) as unknown as Record<string, any>;
  const refused = (doc: unknown) => {
    try {
      loadContract(doc, crypto);
      return 'loaded';
    } catch (e) {
      return e instanceof AiraError ? e.code : 'untyped';
    }
  };

  it('the built-in contract: versions, digest over its JCS bytes, the same on both backends', () => {
    expect(contract.contractVersion).toBe('1.0.0');
    expect(contract.traceVersion).toBe('0.5.0');
    expect(contract.matrixDigest).toMatch(/^matrix:sha256:[0-9a-f]{64}$/);
    expect(defaultContract(getCrypto('wasm')).matrixDigest).toBe(contract.matrixDigest);
    const moved = base();
    moved['cells']['observe']['interface.manifest'] = { admit: true, to: 'discover' };
    expect(loadContract(moved, crypto).matrixDigest).not.toBe(contract.matrixDigest);
  });

  it('malformed descriptors are CONTRACT_INVALID', () => {
    const cases: Array<(d: Record<string, any>) => void> = [
      (d) => delete d['cells']['readBack']['model.revert'],
      (d) => (d['cells']['observe']['catalog.search'] = { admit: true, to: 'nowhere' }),
      (d) => (d['cells']['observe']['catalog.search'] = { admit: false, code: 'DR', next: 'model.delete' }),
      (d) => (d['cells']['observe']['catalog.search'] = { admit: false, code: 'lower', next: 'catalog.search' }),
      (d) => (d['cells']['observe']['catalog.search'] = { admit: true, to: '=', extra: 1 }),
      (d) => (d['cells']['observe']['catalog.search'].variants = { bogus: { admit: true, to: '=' } }),
      (d) => (d['cells']['observe']['catalog.search'].variants = { publish: { admit: true, to: '=' } }),
      (d) => (d['states'] = d['states'].slice(1)),
      (d) => (d['ops'] = [...d['ops'], 'model.read']),
      (d) => (d['contractVersion'] = 'one'),
      (d) => (d['descriptor'] = 'aira.matrix/2'),
      (d) => (d['cells']['extraState'] = d['cells']['observe']),
    ];
    for (const mutate of cases) {
      const d = base();
      mutate(d);
      expect(refused(d), mutate.toString()).toBe('CONTRACT_INVALID');
    }
    expect(refused(null)).toBe('CONTRACT_INVALID');
    expect(refused('[]')).toBe('CONTRACT_INVALID');
  });
});

describe('aira batch reduction, pure (M38–M40)', () => {
  it('rejections, reads, the one effect, then deferred; deferred ids not consumed', () => {
    const calls: ClassifiedCall[] = [
      classified(call('model.proposePatch', 'e1')),
      classified(call('model.read', 'r1')),
      { kind: 'invalid', code: 'UNKNOWN_OPERATION', requestId: 'x', op: 'model.delete', message: '' },
      classified(call('model.preview', 'e2')),
      classified(call('catalog.search', 'r2')),
      classified(call('catalog.search', 'r1')),
      classified(call('model.revert', 'n1')),
      classified(call('model.validate', 'e3')),
    ];
    const r = reduceBatch(contract, view('propose'), calls, new Set(['old']), 100);
    expect(r.decisions.map((d) => (d.decision === 'rejected' ? d.code : d.decision === 'scheduled' ? d.role : 'deferred'))).toEqual([
      'effect',
      'read',
      'UNKNOWN_OPERATION',
      'deferred',
      'read',
      'DUPLICATE_REQUEST_ID',
      'NOTHING_TO_REVERT',
      'PREVIEW_REQUIRED',
    ]);
    expect(r.traceOrder).toEqual([2, 5, 6, 7, 1, 4, 0, 3]);
    expect(r.reads).toEqual([1, 4]);
    expect(r.effect).toBe(0);
    expect([...r.consumed].sort()).toEqual(['e1', 'e3', 'n1', 'r1', 'r2']);
  });

  it('an irreversible call listed first is the one effect and runs after every read; a second one is deferred', () => {
    const pub = (id: string) => classified(call('model.commit', id, { target: 'publish' }));
    const r = reduceBatch(
      contract,
      view('readBack'),
      [pub('p1'), classified(call('model.read', 'r')), pub('p2'), classified(call('model.proposePatch', 'e'))],
      new Set(),
      10,
    );
    expect(r.traceOrder).toEqual([1, 0, 2, 3]);
    expect(r.effect).toBe(0);
    expect(r.decisions[2]!.decision).toBe('deferred');
    expect(r.decisions[3]!.decision).toBe('deferred');
  });

  it('a duplicate of an earlier deferred call in the same round is still a duplicate', () => {
    const r = reduceBatch(
      contract,
      view('validate'),
      [classified(call('model.commit', 'a')), classified(call('model.proposePatch', 'b')), classified(call('model.read', 'b'))],
      new Set(),
      10,
    );
    expect(r.decisions.map((d) => d.decision)).toEqual(['scheduled', 'deferred', 'rejected']);
  });

  it('calls beyond the call budget are refused BUDGET_EXHAUSTED, reads first', () => {
    const r = reduceBatch(
      contract,
      view('describe'),
      [classified(call('model.proposePatch', 'e')), classified(call('model.read', 'a')), classified(call('catalog.search', 'b'))],
      new Set(),
      2,
    );
    expect(r.decisions.map((d) => (d.decision === 'rejected' ? d.code : d.decision))).toEqual(['BUDGET_EXHAUSTED', 'scheduled', 'scheduled']);
  });

  it("a stale refusal defers the round's effect; reads still run", () => {
    const r = reduceBatch(
      contract,
      view('describe'),
      [
        classified(call('model.proposePatch', 's', { observedRevision: 'rev:old' })),
        classified(call('model.proposePatch', 'e')),
        classified(call('model.read', 'r')),
      ],
      new Set(),
      10,
    );
    expect(r.stale).toBe(true);
    expect(r.decisions.map((d) => (d.decision === 'rejected' ? d.code : d.decision))).toEqual(['STALE_REVISION', 'deferred', 'scheduled']);
    expect(r.effect).toBeNull();
  });

  it('after the end every call is TASK_TERMINAL and nothing is consumed', () => {
    const r = reduceBatch(
      contract,
      view('commit', { terminal: true }),
      [classified(call('model.read', 'a')), classified(call('model.revert', 'b'))],
      new Set(),
      10,
    );
    expect(r.decisions.map((d) => (d.decision === 'rejected' ? d.code : d.decision))).toEqual(['TASK_TERMINAL', 'TASK_TERMINAL']);
    expect(r.consumed).toEqual([]);
  });
});
