/**
 * The document authority on the database store: the shared suite on PGlite and PostgreSQL, then what
 * only a database shows: state found again after a reopen, commits racing from two connections
 * (PostgreSQL), corrupted rows, and the migration recorded once.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AuthorityError } from '../../ts/aira/authority.js';
import { openDocumentAuthority } from '../../ts/aira/doc/authority.js';
import { DbDocStore } from '../../ts/aira/doc/db-store.js';
import { bracketDoc, docRefs } from '../../ts/aira/doc/index.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { openDb, type Db } from '../../ts/server/db.js';
import { describeEachDb, freshPgDatabase, PG_URL, type DbKind } from '../server/harness.js';
import { codes, committed, ctxOf, docAuthoritySuite, expectedId, openTask, setWidth, taskId, validated } from './doc-harness.js';

const crypto = getCrypto();

/** Where a store of `kind` lives: a PGlite directory or a fresh PostgreSQL database. */
async function location(kind: DbKind): Promise<{ opts: { dataDir?: string; url?: string }; drop(): Promise<void> }> {
  if (kind === 'postgres') {
    if (PG_URL === undefined) throw new Error('AIGENORA_TEST_PG_URL is not set');
    const fresh = await freshPgDatabase(PG_URL);
    return { opts: { url: fresh.url }, drop: fresh.drop };
  }
  const dir = mkdtempSync(join(tmpdir(), 'aigenora-aira-doc-'));
  return { opts: { dataDir: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function openAt(opts: { dataDir?: string; url?: string }): Promise<Db> {
  return openDb(opts.url !== undefined ? { url: opts.url } : { dir: join(opts.dataDir!, 'aira', 'db') });
}

const TABLES = ['aira_doc_revisions', 'aira_doc_refs', 'aira_doc_candidates', 'aira_doc_tokens'];

describeEachDb('document authority on the database', (kind) => {
  let where: Awaited<ReturnType<typeof location>>;
  let db: Db;
  beforeAll(async () => {
    where = await location(kind);
    db = await openAt(where.opts);
  });
  afterAll(async () => {
    await db?.close();
    await where?.drop();
  });
  docAuthoritySuite(() => ({
    crypto,
    fresh: async () => {
      const store = await DbDocStore.open({ db });
      for (const t of TABLES) await db.query(`DELETE FROM ${t}`);
      return store;
    },
  }));
});

describeEachDb('document store persistence', (kind) => {
  let where: Awaited<ReturnType<typeof location>>;
  beforeAll(async () => {
    where = await location(kind);
  });
  afterAll(async () => {
    await where?.drop();
  });

  it('a reopened store finds revisions, refs, candidates and tokens again', async () => {
    const s1 = await DbDocStore.open(where.opts);
    const a1 = openDocumentAuthority({ crypto, store: s1 });
    const o1 = await openTask(a1, 'persist');
    const first = await committed(o1, [setWidth(45)]);
    const pending = await validated(o1, [setWidth(46)]);
    await a1.close();
    if (kind === 'pglite') expect(statSync(join(where.opts.dataDir!, 'aira', 'db')).isDirectory()).toBe(true);

    const s2 = await DbDocStore.open(where.opts);
    try {
      const a2 = openDocumentAuthority({ crypto, store: s2 });
      const t = taskId('persist');
      // Reopening the task finds its branch where it was, cut from the same base.
      expect(await a2.openTask(t)).toEqual({ branch: docRefs.branch(t), baseRevision: o1.base, head: first.revision });
      const ctx = ctxOf(t);
      expect((await a2.read(ctx, { requestId: 'r', select: ['parameters/width'] })).data['selected']).toEqual({
        'parameters/width': { value: 45, unit: 'mm' },
      });
      // The candidate and its token survived: the commit goes through on the new instance.
      const c = await a2.commit(ctx, { requestId: 'c2', candidateId: pending.candidateId, validationToken: pending.token });
      expect(codes(c)).toEqual([]);
      expect((await s2.getRevision(c.data.revision))?.parent).toBe(first.revision);
      // Old revisions are there to revert to.
      const rv = await a2.revert(ctx, { requestId: 'rv', toRevision: o1.base });
      expect(codes(rv)).toEqual([]);
      expect(await s2.getRef('head')).toBe(o1.base);
      expect(o1.base).toBe(expectedId('rev', { parent: null, seq: 0, doc: bracketDoc(), op: { kind: 'seed', name: 'bracket' } }));
    } finally {
      await s2.close();
    }
  });

  it('the migration aira/001 is applied once however often the store is opened', async () => {
    const s = await DbDocStore.open(where.opts);
    await s.close();
    const db = await openAt(where.opts);
    try {
      const rows = await db.query<{ id: string }>("SELECT id FROM schema_migrations WHERE id LIKE 'aira/%'");
      expect(rows.map((r) => r.id)).toEqual(['aira/001']);
      // JSON is kept as text, not jsonb: the bytes written are the bytes read.
      const cols = await db.query<{ column_name: string; data_type: string }>(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'aira_doc_revisions' AND column_name = 'doc'",
      );
      expect(cols).toEqual([{ column_name: 'doc', data_type: 'text' }]);
    } finally {
      await db.close();
    }
  });

  it('a corrupted row is an integrity fault, not a crash', async () => {
    const db = await openAt(where.opts);
    try {
      const store = await DbDocStore.open({ db });
      const a = openDocumentAuthority({ crypto, store });
      const o = await openTask(a, 'corrupt');
      const c = await committed(o, [setWidth(45)]);
      const row = (await db.query<{ doc: string }>('SELECT doc FROM aira_doc_revisions WHERE id = $1', [c.revision]))[0]!;
      expect(row.doc).toContain('"value":45');
      for (const text of [row.doc.replace('"value":45', '"value":4500'), 'not json', '{"__proto__":{"x":1}}']) {
        await db.query('UPDATE aira_doc_revisions SET doc = $2 WHERE id = $1', [c.revision, text]);
        const e = await a.read(o.ctx, { requestId: 'r' }).then(
          () => null,
          (x: unknown) => x,
        );
        expect(e, text).toBeInstanceOf(AuthorityError);
        expect((e as AuthorityError).code).toBe('AUTHORITY_INTEGRITY');
      }
    } finally {
      await db.close();
    }
  });

  if (kind === 'postgres') {
    it('two servers on one PostgreSQL racing to commit the same candidate: exactly one wins, the other is stale', async () => {
      const s1 = await DbDocStore.open(where.opts);
      const s2 = await DbDocStore.open(where.opts);
      try {
        const a1 = openDocumentAuthority({ crypto, store: s1 });
        const a2 = openDocumentAuthority({ crypto, store: s2 });
        const o = await openTask(a1, 'two-servers');
        await a2.openTask(o.ctx.taskId);
        const v = await validated(o, [setWidth(45)]);
        for (let round = 0; round < 3; round++) {
          const results = await Promise.all(
            [a1, a2].map((a, i) =>
              a.commit(ctxOf(o.ctx.taskId, `c${round}-${i}`), { requestId: `c${round}-${i}`, candidateId: v.candidateId, validationToken: v.token }),
            ),
          );
          const statuses = results.map((r) => r.status ?? 'success').sort();
          if (round === 0) {
            expect(statuses).toEqual(['stale', 'success']);
          } else {
            expect(statuses).toEqual(['stale', 'stale']);
          }
        }
        // Two tasks publishing from two servers: one user head move.
        const x = await openTask(a1, 'pub-2s-x');
        const y = await openTask(a2, 'pub-2s-y');
        const cx = await committed(x, [setWidth(50)]);
        const cy = await committed(y, [setWidth(55)]);
        const pubs = await Promise.all([
          a1.commit(x.ctx, { requestId: 'p', candidateId: cx.candidateId, validationToken: cx.token, target: 'publish' }),
          a2.commit(y.ctx, { requestId: 'p', candidateId: cy.candidateId, validationToken: cy.token, target: 'publish' }),
        ]);
        expect(pubs.map((r) => r.status ?? 'success').sort()).toEqual(['stale', 'success']);
        expect([cx.revision, cy.revision]).toContain(await s1.getRef('head'));
      } finally {
        await s1.close();
        await s2.close();
      }
    });
  }
});
