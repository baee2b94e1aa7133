// PostgreSQL connections dropped under a running server (a restart, pg_terminate_backend): the
// process survives, a transaction on the dropped connection fails cleanly, and a server that lost
// its one-writer lock stops changing anything and says so once.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createRinControl } from '../../ts/rin/control/service.js';
import { openDb } from '../../ts/server/db.js';
import type { Log, LogFields } from '../../ts/server/log.js';
import { freshPgDatabase, needPg, PG_SKIPPED, PG_URL } from '../server/harness.js';
import { ALL_SCOPES, harnessFor, registration, TOKEN, VirtualTimers } from './control-http-harness.js';

const havePg = needPg();
const describePg = describe.skipIf(!havePg);
const suite = `dropped PostgreSQL connections${havePg ? '' : PG_SKIPPED}`;

/** Ends every session on `database` but the caller's own. */
async function terminateBackends(database: string): Promise<number> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const rows = (
      await admin.query('SELECT pg_terminate_backend(pid) AS gone FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database])
    ).rows;
    return rows.length;
  } finally {
    await admin.end();
  }
}

const databaseOf = (url: string): string => new URL(url).pathname.slice(1);

function recordingLog(): Log & { lines: Array<{ level: string; event: string; fields?: LogFields }> } {
  const lines: Array<{ level: string; event: string; fields?: LogFields }> = [];
  return {
    lines,
    info: (event, fields) => lines.push({ level: 'info', event, fields }),
    warn: (event, fields) => lines.push({ level: 'warn', event, fields }),
    error: (event, fields) => lines.push({ level: 'error', event, fields }),
  };
}

const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms))]);

describePg(suite, () => {
  it('a transaction whose connection is terminated fails with an error, and the pool goes on', async () => {
    const fresh = await freshPgDatabase(PG_URL!);
    const errors: string[] = [];
    const db = await openDb({ url: fresh.url, onError: (m) => errors.push(m) });
    try {
      await db.exec('CREATE TABLE t (x int)');
      const failed = db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (1)');
        await tx.query('SELECT pg_terminate_backend(pg_backend_pid())');
        await tx.query('INSERT INTO t VALUES (2)');
      });
      await expect(failed).rejects.toThrow();
      expect(errors.length).toBeGreaterThan(0);
      // Nothing of the dropped transaction was kept, and the next one runs on a new connection.
      await db.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (3)');
      });
      expect(await db.query<{ x: number }>('SELECT x FROM t ORDER BY x')).toEqual([{ x: 3 }]);
    } finally {
      await db.close();
      await fresh.drop();
    }
  });

  it('a server whose lock connection is terminated refuses every change as unavailable, logs one line, and the next server can start', async () => {
    const fresh = await freshPgDatabase(PG_URL!);
    const log = recordingLog();
    const control = await createRinControl({ token: TOKEN, principal: ALL_SCOPES, dbUrl: fresh.url, log });
    let second: Awaited<ReturnType<typeof createRinControl>> | undefined;
    try {
      const h = harnessFor(control, new VirtualTimers(), []);
      expect((await h.call('/control/v2/host/register', registration('host.one'))).status).toBe(200);
      expect(await terminateBackends(databaseOf(fresh.url))).toBeGreaterThan(0);
      const why = await within(control.failed, 10_000, 'the lock loss');
      expect(why).toBeInstanceOf(Error);
      const lost = log.lines.filter((l) => l.event === 'rin_db_lock_lost');
      expect(lost).toHaveLength(1);
      expect(lost[0]!.level).toBe('error');
      for (const [path, body] of [
        ['/control/v2/host/register', registration('host.two')],
        ['/control/v2/emergency-stop', { host_id: 'host.one', world_id: 'world.one', actor_id: 'actor.one', active: true }],
      ] as const) {
        const refused = await h.call(path, body);
        expect(refused.body['code'], `${path}: ${refused.text}`).toBe('unavailable');
        expect(refused.body['error']).toContain('its database lock was lost');
      }
      // The lock is free again: a new server takes the database over, which is why the old one stops.
      second = await createRinControl({ token: TOKEN, principal: ALL_SCOPES, dbUrl: fresh.url, log: recordingLog() });
      const h2 = harnessFor(second, new VirtualTimers(), []);
      expect((await h2.call('/control/v2/host/register', registration('host.two'))).status).toBe(200);
      expect(log.lines.filter((l) => l.event === 'rin_db_lock_lost')).toHaveLength(1);
    } finally {
      await second?.close();
      await control.close();
      await fresh.drop();
    }
  });

  it('a second server on a database whose lock is held is refused', async () => {
    const fresh = await freshPgDatabase(PG_URL!);
    const control = await createRinControl({ token: TOKEN, principal: ALL_SCOPES, dbUrl: fresh.url, log: recordingLog() });
    try {
      await expect(createRinControl({ token: TOKEN, principal: ALL_SCOPES, dbUrl: fresh.url, log: recordingLog() })).rejects.toThrow(
        'in use by another server',
      );
    } finally {
      await control.close();
      await fresh.drop();
    }
  });
});
