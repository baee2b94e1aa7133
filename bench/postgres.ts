/** PostgreSQL for the server benches: a cluster to run against, and a fresh database on it per run. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** AIGENORA_TEST_PG_URL, else a cluster of our own (scripts/lib/postgres.sh, stopped by `stop`), else undefined. */
export async function postgresUrl(): Promise<{ url: string; stop(): void } | undefined> {
  const given = process.env['AIGENORA_TEST_PG_URL'];
  if (given) return { url: given, stop: () => {} };
  // Its own process group, so that stopping it also stops the sleep it waits on.
  const child: ChildProcess = spawn('bash', [new URL('../scripts/lib/postgres.sh', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const url = await new Promise<string | undefined>((resolve) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /AIGENORA_TEST_PG_URL=(\S+)/.exec(out);
      if (m) resolve(m[1]);
      else if (out.includes('SKIPPED')) resolve(undefined);
    });
    child.on('exit', () => resolve(undefined));
  });
  // The script's background sleep inherits this pipe and would outlive it, keeping this process alive.
  child.stdout!.destroy();
  if (!url) return undefined;
  return { url, stop: () => process.kill(-child.pid!, 'SIGTERM') };
}

/** A new empty database on the cluster at `baseUrl`; `drop` removes it even while connections remain. */
export async function freshDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `aig_bench_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: baseUrl });
    // A connection lost mid-statement also rejects the statement: that is the error the caller sees.
    client.on('error', () => {});
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  await run(`CREATE DATABASE ${name}`);
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
