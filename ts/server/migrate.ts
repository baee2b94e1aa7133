/**
 * Applies every module's migrations once, in module order. The whole run is one transaction holding
 * a transaction-scoped advisory lock, so when two server processes start at once on one PostgreSQL
 * the second waits, then finds everything applied. A failed migration rolls the whole run back.
 */
import type { Migration } from './context.js';
import type { Db } from './db.js';

/** An arbitrary constant naming this lock among the database's advisory locks. */
const MIGRATION_LOCK = 0x616967656e;

export async function migrate(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const ids = new Set<string>();
  for (const m of migrations) {
    if (ids.has(m.id)) throw new Error(`duplicate migration id ${m.id}`);
    ids.add(m.id);
  }
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at bigint NOT NULL)');
    const done = new Set((await tx.query<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2)', [m.id, Date.now()]);
      applied.push(m.id);
    }
    return applied;
  });
}
