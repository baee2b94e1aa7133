/**
 * One SQL dialect (PostgreSQL) over two engines: PGlite, PostgreSQL compiled to WASM, embedded and
 * persisted in a directory (the default: nothing to install), and a real PostgreSQL through `pg` when
 * several server processes share one database. Route code sees only `Db`.
 *
 * Both engines hand bigint (int8) columns back as JS numbers: the schema keeps times as unix
 * milliseconds in bigint, which stay well inside the safe-integer range.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import pg from 'pg';

export interface Db {
  readonly kind: 'pglite' | 'postgres';
  /** One statement with $1, $2 … placeholders. */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs `fn` in one transaction; rolled back if it throws. Inside, `tx.transaction` simply reuses `tx`. */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const INT8_OID = 20;
const toNumber = (v: string): number => Number(v);

/**
 * PGlite is one process's database: a second process opening the same directory would corrupt it.
 * A pid file claims the directory; one left by a process that is gone is taken over.
 */
function claimDir(dir: string): () => void {
  const path = join(dir, '.aigenora-server.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new Error(`the database in ${dir} is in use by process ${pid}; use --db postgres://… to share one database between servers`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`cannot claim the database in ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A new PGlite database runs initdb, seconds of WebAssembly. When AIGENORA_PGLITE_TEMPLATE names a
 * tarball of a new, empty database made by this PGlite version (its dumpDataDir), a database that does
 * not exist yet starts as a copy of it instead: the test suite makes one per run for its hundreds of
 * databases. An existing database directory is always opened as it is.
 */
function pgliteTemplate(dir: string | undefined): Blob | undefined {
  const path = process.env['AIGENORA_PGLITE_TEMPLATE'];
  if (!path || (dir !== undefined && existsSync(join(dir, 'PG_VERSION')))) return undefined;
  return new Blob([readFileSync(path)]);
}

export async function openPglite(dir: string | undefined): Promise<Db> {
  let release = (): void => {};
  if (dir !== undefined) {
    mkdirSync(dir, { recursive: true });
    release = claimDir(dir);
  }
  let lite: PGlite;
  try {
    const template = pgliteTemplate(dir);
    lite = new PGlite(dir, { parsers: { [INT8_OID]: toNumber }, ...(template && { loadDataDir: template }) });
    await lite.waitReady;
  } catch (e) {
    release();
    throw e;
  }
  const txDb = (tx: Transaction): Db => {
    const self: Db = {
      kind: 'pglite',
      query: async <R>(sql: string, params?: readonly unknown[]) => (await tx.query<R>(sql, params ? [...params] : undefined)).rows,
      exec: async (sql) => {
        await tx.exec(sql);
      },
      transaction: (fn) => fn(self),
      close: async () => {},
    };
    return self;
  };
  return {
    kind: 'pglite',
    query: async <R>(sql: string, params?: readonly unknown[]) => (await lite.query<R>(sql, params ? [...params] : undefined)).rows,
    exec: async (sql) => {
      await lite.exec(sql);
    },
    transaction: (fn) => lite.transaction((tx) => fn(txDb(tx))),
    close: async () => {
      try {
        await lite.close();
      } finally {
        release();
      }
    },
  };
}

export function openPostgres(url: string, onError: (message: string) => void = () => {}): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? toNumber : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client losing its connection must not take the process down; the next query reconnects.
  pool.on('error', (e) => onError(e.message));
  const clientDb = (client: pg.PoolClient): Db => {
    const self: Db = {
      kind: 'postgres',
      query: async <R>(sql: string, params?: readonly unknown[]) => (await client.query(sql, params ? [...params] : undefined)).rows as R[],
      exec: async (sql) => {
        await client.query(sql);
      },
      transaction: (fn) => fn(self),
      close: async () => {},
    };
    return self;
  };
  return {
    kind: 'postgres',
    query: async <R>(sql: string, params?: readonly unknown[]) => (await pool.query(sql, params ? [...params] : undefined)).rows as R[],
    exec: async (sql) => {
      await pool.query(sql);
    },
    transaction: async (fn) => {
      const client = await pool.connect();
      // The pool listens for errors only on idle clients: a connection lost while checked out would
      // otherwise be an unhandled 'error' event. Its queries fail on their own; the client is discarded.
      let lost: Error | undefined;
      const onLost = (e: Error): void => {
        lost ??= e;
        onError(e.message);
      };
      client.on('error', onLost);
      try {
        await client.query('BEGIN');
        const out = await fn(clientDb(client));
        await client.query('COMMIT');
        return out;
      } catch (e) {
        if (lost === undefined) await client.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        client.removeListener('error', onLost);
        client.release(lost);
      }
    },
    close: () => pool.end(),
  };
}

/** `postgres://…` / `postgresql://…` opens PostgreSQL; otherwise PGlite in `dir` (in memory when undefined). */
export async function openDb(opts: { url?: string | undefined; dir?: string | undefined; onError?: (message: string) => void }): Promise<Db> {
  if (opts.url !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(opts.url)) throw new Error(`--db must be a postgres:// URL, got ${opts.url.slice(0, 40)}`);
    return openPostgres(opts.url, opts.onError);
  }
  return openPglite(opts.dir);
}
