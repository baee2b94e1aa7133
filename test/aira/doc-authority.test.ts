/**
 * The document authority on the memory store, on both crypto backends (ids must not depend on the
 * backend), plus what only the memory store can show cheaply: tampered records are integrity faults.
 */
import { describe, expect, it } from 'vitest';
import { AuthorityError } from '../../ts/aira/authority.js';
import { openDocumentAuthority } from '../../ts/aira/doc/authority.js';
import { MemoryDocStore, type DocStore, type RevisionRecord, type CandidateRecord, type TokenRecord } from '../../ts/aira/doc/store.js';
import { bracketDoc, bracketTask } from '../../ts/aira/doc/model.js';
import { IntentFrame } from '../../ts/aira/schema.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { codes, docAuthoritySuite, openTask, plan, setWidth, validated } from './doc-harness.js';

for (const backend of ['wasm', 'js'] as const) {
  describe(`document authority [memory, ${backend}]`, () => {
    const crypto = getCrypto(backend);
    docAuthoritySuite(() => ({ crypto, fresh: async () => new MemoryDocStore() }));
  });
}

/** A store that hands back altered records, as a corrupted or hostile database would. */
class TamperingStore extends MemoryDocStore {
  revision: ((r: RevisionRecord) => RevisionRecord) | undefined;
  candidate: ((c: CandidateRecord) => CandidateRecord) | undefined;
  token: ((t: TokenRecord) => TokenRecord) | undefined;
  override async getRevision(id: string): Promise<RevisionRecord | null> {
    const r = await super.getRevision(id);
    return r && this.revision ? this.revision(r) : r;
  }
  override async getCandidate(id: string): Promise<CandidateRecord | null> {
    const c = await super.getCandidate(id);
    return c && this.candidate ? this.candidate(c) : c;
  }
  override async getToken(id: string): Promise<TokenRecord | null> {
    const t = await super.getToken(id);
    return t && this.token ? this.token(t) : t;
  }
}

describe('document authority: tampered records', () => {
  const crypto = getCrypto();

  async function setup(): Promise<{ store: TamperingStore; o: Awaited<ReturnType<typeof openTask>>; v: { candidateId: string; token: string } }> {
    const store = new TamperingStore();
    const a = openDocumentAuthority({ crypto, store });
    const o = await openTask(a, 'tamper');
    const v = await validated(o, [setWidth(45)]);
    return { store, o, v };
  }

  const integrity = async (p: Promise<unknown>): Promise<void> => {
    const e = await p.then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(AuthorityError);
    expect((e as AuthorityError).code).toBe('AUTHORITY_INTEGRITY');
  };

  it('a revision whose document was changed does not match its id', async () => {
    const { store, o } = await setup();
    store.revision = (r) => ({ ...r, doc: { ...r.doc, parameters: { ...r.doc.parameters, thickness: { value: 0.5, unit: 'mm' } } } });
    await integrity(o.a.read(o.ctx, { requestId: 'r' }));
  });

  it('a candidate whose steps were changed does not match its id', async () => {
    const { store, o, v } = await setup();
    store.candidate = (c) => ({ ...c, steps: [{ ...c.steps[0]!, args: { name: 'width', value: 4500 } }] });
    await integrity(o.a.commit(o.ctx, { requestId: 'c', candidateId: v.candidateId, validationToken: v.token }));
  });

  it('a token whose evidence was changed does not match its binding', async () => {
    const { store, o, v } = await setup();
    store.token = (t) => ({ ...t, evidence: t.evidence.slice(1) });
    await integrity(o.a.commit(o.ctx, { requestId: 'c', candidateId: v.candidateId, validationToken: v.token }));
    expect(await o.a.head(o.ctx)).toBe(o.base);
  });

  it('a store that fails is an AuthorityError, not a crash', async () => {
    const store = new MemoryDocStore();
    const a = openDocumentAuthority({ crypto, store });
    const o = await openTask(a, 'closed');
    await store.close();
    const e = await a.read(o.ctx, { requestId: 'r' }).then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(AuthorityError);
    expect((e as AuthorityError).code).toBe('AUTHORITY_INTERNAL');
  });
});

describe('document authority: seed and demo task', () => {
  const crypto = getCrypto();

  it('bracketTask() is a valid intent frame whose acceptance assertion fails on the seed and passes once width is 45', async () => {
    const t = bracketTask();
    const frame = IntentFrame.parse(t.intentFrame);
    expect(frame.goal).toBe('Widen the bracket to 45 mm without thinning the wall');
    expect(frame.acceptanceAssertions).toEqual([{ id: 'width-45', text: expect.any(String), validator: 'param.equals', args: { name: 'width', value: 45 } }]);
    const a = openDocumentAuthority({ crypto });
    const o = await openTask(a, 'demo');
    expect((await a.verify(o.ctx, frame.acceptanceAssertions, o.base)).passed).toBe(false);
    const v = await validated(o, [setWidth(45)]);
    const c = await a.commit(o.ctx, { requestId: 'c', candidateId: v.candidateId, validationToken: v.token });
    expect((await a.verify(o.ctx, frame.acceptanceAssertions, c.data.revision)).passed).toBe(true);
  });

  it('a custom seed is used by an empty store and refused when it is not aira.doc/1', async () => {
    const doc = bracketDoc();
    doc.parameters['depth'] = { value: 12, unit: 'mm' };
    const a = openDocumentAuthority({ crypto, seed: doc, seedName: 'deep-bracket' });
    const o = await openTask(a, 'custom');
    expect((await a.read(o.ctx, { requestId: 'r', select: ['parameters/depth'] })).data['selected']).toEqual({ 'parameters/depth': { value: 12, unit: 'mm' } });
    const bad = { ...doc, parameters: { ...doc.parameters, 'bad name': { value: 1 } } };
    expect(() => openDocumentAuthority({ crypto, seed: bad })).toThrow(AuthorityError);
    expect(() => openDocumentAuthority({ crypto, seed: { ...doc, schema: 'aira.doc/2' } as never })).toThrow(/aira\.doc\/1/);
  });

  it('a patch past the document limits is DOC_LIMIT', async () => {
    const doc = bracketDoc();
    for (let i = Object.keys(doc.parameters).length; i < 256; i++) doc.parameters[`p${i}`] = { value: i };
    const store: DocStore = new MemoryDocStore();
    const a = openDocumentAuthority({ crypto, store, seed: doc });
    const o = await openTask(a, 'limit');
    const p = await a.propose(o.ctx, plan(o.base, [{ capability: 'cap:doc.addParameter@1', args: { name: 'one_more', value: 1 } }]));
    expect(codes(p)).toEqual(['DOC_LIMIT']);
  });
});
