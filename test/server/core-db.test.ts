import { expect, it } from 'vitest';
import { migrate } from '../../ts/server/migrate.js';
import { describeDbs } from './harness.js';

describeDbs('registry database', (server) => {
  it('applies migrations once, in order, and refuses duplicate ids', async () => {
    const { db } = server().server.ctx;
    const steps = [
      { id: 'dbtest/001', sql: 'CREATE TABLE dbtest_a (n bigint NOT NULL); CREATE TABLE dbtest_b (n bigint)' },
      { id: 'dbtest/002', sql: 'ALTER TABLE dbtest_a ADD COLUMN note text' },
    ];
    expect(await migrate(db, steps)).toEqual(['dbtest/001', 'dbtest/002']);
    expect(await migrate(db, steps)).toEqual([]);
    await expect(migrate(db, [steps[0]!, steps[0]!])).rejects.toThrow(/duplicate migration id/);
    // A failing step rolls back the whole run, the steps before it included.
    await expect(
      migrate(db, [
        { id: 'dbtest/003', sql: 'CREATE TABLE dbtest_c (n int)' },
        { id: 'dbtest/004', sql: 'SELECT no_such_function()' },
      ]),
    ).rejects.toThrow();
    expect(await db.query("SELECT id FROM schema_migrations WHERE id LIKE 'dbtest/00%' ORDER BY id")).toEqual([{ id: 'dbtest/001' }, { id: 'dbtest/002' }]);
    expect(await db.query("SELECT to_regclass('dbtest_c') AS t")).toEqual([{ t: null }]);
  });

  it('returns bigint columns as numbers and rolls a failed transaction back', async () => {
    const { db } = server().server.ctx;
    await migrate(db, [{ id: 'dbtest/010', sql: 'CREATE TABLE dbtest_t (k text PRIMARY KEY, at bigint NOT NULL)' }]);
    const at = Date.UTC(2030, 0, 1);
    await db.query('INSERT INTO dbtest_t (k, at) VALUES ($1, $2)', ['kept', at]);
    expect(await db.query('SELECT at, count(*) OVER () AS n FROM dbtest_t')).toEqual([{ at, n: 1 }]);
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO dbtest_t (k, at) VALUES ($1, $2)', ['lost', 1]);
        await tx.query('INSERT INTO dbtest_t (k, at) VALUES ($1, $2)', ['kept', 2]);
      }),
    ).rejects.toThrow();
    expect(await db.query('SELECT k FROM dbtest_t ORDER BY k')).toEqual([{ k: 'kept' }]);
  });
});
