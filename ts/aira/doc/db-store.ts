/**
 * The document store on a database (Node only): PGlite under a directory by default, PostgreSQL by
 * URL. Records are JSON text, never jsonb: jsonb would reorder members and round numbers, and a
 * revision's id is the hash of its exact content. Refs change by compare-and-swap inside one
 * transaction, so two servers on one PostgreSQL cannot both advance the same ref from one value.
 */
import { join } from 'node:path';
import type { Migration } from '../../server/context.js';
import { AuthorityError } from '../authority.js';
import { openDb, type Db } from '../../server/db.js';
import { migrate } from '../../server/migrate.js';
import { refs, VOID_TOKEN, type CandidateRecord, type DocStore, type RefUpdate, type RevisionRecord, type TokenRecord } from './store.js';

export const AIRA_DOC_MIGRATIONS: readonly Migration[] = [
  {
    id: 'aira/001',
    sql: `
CREATE TABLE aira_doc_revisions (id text PRIMARY KEY, parent text, doc text NOT NULL);
CREATE TABLE aira_doc_refs (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE aira_doc_candidates (id text PRIMARY KEY, task_id text NOT NULL, doc text NOT NULL);
CREATE TABLE aira_doc_tokens (id text PRIMARY KEY, task_id text NOT NULL, doc text NOT NULL);
`,
  },
];

/** A stored record as the authority wrote it; text that is not JSON is an integrity fault, not a crash. */
function parseRecord<T>(table: string, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new AuthorityError('AUTHORITY_INTEGRITY', `a row of ${table} is not JSON`);
  }
}

/** Thrown inside a transaction to roll it back when a ref does not hold its expected value. */
class SwapLost extends Error {}

export interface DbDocStoreOptions {
  /** An open database (the caller keeps closing it). */
  db?: Db;
  /** `postgres://…`: a PostgreSQL database. */
  url?: string;
  /** PGlite under `<dataDir>/aira/db` (default when neither db nor url is given; in memory without dataDir). */
  dataDir?: string;
}

export class DbDocStore implements DocStore {
  readonly kind: string;

  private constructor(
    private readonly db: Db,
    private readonly owned: boolean,
  ) {
    this.kind = `db:${db.kind}`;
  }

  static async open(opts: DbDocStoreOptions = {}): Promise<DbDocStore> {
    const owned = opts.db === undefined;
    const db =
      opts.db ?? (await openDb({ url: opts.url, dir: opts.url === undefined && opts.dataDir !== undefined ? join(opts.dataDir, 'aira', 'db') : undefined }));
    try {
      await migrate(db, AIRA_DOC_MIGRATIONS);
    } catch (e) {
      if (owned) await db.close().catch(() => {});
      throw e;
    }
    return new DbDocStore(db, owned);
  }

  async getRef(name: string): Promise<string | null> {
    const rows = await this.db.query<{ value: string }>('SELECT value FROM aira_doc_refs WHERE name = $1', [name]);
    return rows[0]?.value ?? null;
  }

  async swap(updates: readonly RefUpdate[], revision?: RevisionRecord): Promise<boolean> {
    try {
      return await this.db.transaction(async (tx) => {
        if (revision !== undefined) {
          await tx.query('INSERT INTO aira_doc_revisions (id, parent, doc) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [
            revision.id,
            revision.parent,
            JSON.stringify(revision),
          ]);
        }
        for (const u of updates) {
          // Under PostgreSQL's read committed, a concurrent UPDATE of the same row waits for the
          // other transaction and then re-checks the WHERE: the loser matches no row.
          const rows =
            u.expected === null
              ? await tx.query('INSERT INTO aira_doc_refs (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING name', [u.name, u.next])
              : await tx.query('UPDATE aira_doc_refs SET value = $3 WHERE name = $1 AND value = $2 RETURNING name', [u.name, u.expected, u.next]);
          if (rows.length !== 1) throw new SwapLost();
        }
        return true;
      });
    } catch (e) {
      if (e instanceof SwapLost) return false;
      throw e;
    }
  }

  async getRevision(id: string): Promise<RevisionRecord | null> {
    const rows = await this.db.query<{ doc: string }>('SELECT doc FROM aira_doc_revisions WHERE id = $1', [id]);
    return rows[0] === undefined ? null : parseRecord<RevisionRecord>('aira_doc_revisions', rows[0].doc);
  }

  async putCandidate(candidate: CandidateRecord): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query('INSERT INTO aira_doc_candidates (id, task_id, doc) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [
        candidate.id,
        candidate.taskId,
        JSON.stringify(candidate),
      ]);
      for (const [name, value] of [
        [refs.candidate(candidate.taskId), candidate.id],
        [refs.token(candidate.taskId), VOID_TOKEN],
      ] as const) {
        await tx.query('INSERT INTO aira_doc_refs (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value', [name, value]);
      }
    });
  }

  async getCandidate(id: string): Promise<CandidateRecord | null> {
    const rows = await this.db.query<{ doc: string }>('SELECT doc FROM aira_doc_candidates WHERE id = $1', [id]);
    return rows[0] === undefined ? null : parseRecord<CandidateRecord>('aira_doc_candidates', rows[0].doc);
  }

  async putToken(token: TokenRecord): Promise<void> {
    await this.db.query('INSERT INTO aira_doc_tokens (id, task_id, doc) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [
      token.id,
      token.taskId,
      JSON.stringify(token),
    ]);
  }

  async getToken(id: string): Promise<TokenRecord | null> {
    const rows = await this.db.query<{ doc: string }>('SELECT doc FROM aira_doc_tokens WHERE id = $1', [id]);
    return rows[0] === undefined ? null : parseRecord<TokenRecord>('aira_doc_tokens', rows[0].doc);
  }

  async close(): Promise<void> {
    if (this.owned) await this.db.close();
  }
}
