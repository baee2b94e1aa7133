/** `aigenora server`: the registry (ts/server) on a socket until SIGINT or SIGTERM. */
import { join } from 'node:path';
import { createServer, listen } from '../server/app.js';
import { resolveDataDir } from '../library/data-dir.js';
import { UsageError, type Command } from './args.js';

const DEFAULT_LISTEN = '127.0.0.1:8080';

class ServerStartError extends Error {
  override readonly name = 'ServerStartError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export function parseListen(v: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(v);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new UsageError(`--listen must be HOST:PORT (e.g. ${DEFAULT_LISTEN}; port 0 picks a free one), got ${v}`);
  return { host: (m[1] ?? m[2])!, port };
}

export const serverCommand: Command = {
  name: 'server',
  usage: 'aigenora server [--listen HOST:PORT] [--data-dir DIR] [--db URL] [--pow-difficulty N] [--trust-proxy] [--json]',
  help: `Runs the registry: the reference's REST API under /api/v1 (registration with proof of work, signed
requests, invitations, sessions, inbox, protocols, groups). Prints one line with the URL once it accepts
connections; SIGINT or SIGTERM stops it cleanly.
--listen (default ${DEFAULT_LISTEN}; port 0 picks a free port).
The database is PGlite (embedded PostgreSQL) under <data-dir>/db, unless --db names a PostgreSQL URL
(postgres://user@host:port/db); several server processes may share one PostgreSQL.
One embedded database serves one process; a second server on the same --data-dir is refused.
--pow-difficulty: leading zero bytes a registration's proof of work needs (0..4, default 2).
--trust-proxy: behind a reverse proxy, rate-limit per address by the last X-Forwarded-For entry.
--json prints the ready line as {"url", "database"}. Logs are JSON lines on stderr.`,
  flags: { listen: 'string', 'data-dir': 'string', db: 'string', 'pow-difficulty': 'string', 'trust-proxy': 'boolean', json: 'boolean' },
  async run(args, out) {
    if (args.positional.length > 0) throw new UsageError(`unexpected argument ${args.positional[0]}`);
    const { host, port } = parseListen((args.flags['listen'] as string | undefined) ?? DEFAULT_LISTEN);
    const difficultyFlag = args.flags['pow-difficulty'] as string | undefined;
    const powDifficulty = difficultyFlag === undefined ? undefined : Number(difficultyFlag);
    if (powDifficulty !== undefined && !(Number.isInteger(powDifficulty) && powDifficulty >= 0 && powDifficulty <= 4)) {
      throw new UsageError('--pow-difficulty must be an integer from 0 to 4');
    }
    const dbUrl = args.flags['db'] as string | undefined;
    if (dbUrl !== undefined && !/^postgres(ql)?:\/\//.test(dbUrl)) throw new UsageError('--db must be a postgres:// or postgresql:// URL');
    const dataDir = resolveDataDir(args.flags['data-dir'] as string | undefined);

    let server;
    try {
      server = await createServer({
        dataDir,
        dbUrl,
        config: { trustProxy: args.flags['trust-proxy'] === true, ...(powDifficulty === undefined ? {} : { powDifficulty }) },
      });
    } catch (e) {
      throw new ServerStartError('DB_UNAVAILABLE', `cannot open the database: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`);
    }
    let listening;
    try {
      listening = await listen(server, host, port);
    } catch (e) {
      await server.close();
      throw new ServerStartError('LISTEN_FAILED', `cannot listen on ${host}:${port}: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}`);
    }
    // Never print the PostgreSQL URL: it may hold a password.
    const database = dbUrl === undefined ? `pglite ${join(dataDir, 'db')}` : 'postgres';
    if (args.flags['json'] === true) out.line(JSON.stringify({ url: listening.url, database }));
    else out.line(`aigenora server listening on ${listening.url} (database: ${database})`);
    const signal = await new Promise<string>((resolve) => {
      for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => resolve(s));
    });
    server.ctx.log.info('shutdown', { signal });
    await listening.close();
    return 0;
  },
};
