/**
 * The registry server: the reference's REST API under /api/v1, on Hono.
 *
 * Registering a route module:
 *   1. Write `ts/server/routes/<name>.ts` exporting a `RouteModule` (context.ts): a unique `name`, its
 *      `migrations` (ids like '<name>/001', SQL in the PostgreSQL dialect that PGlite also speaks;
 *      never edit an applied one, append a new id), and `register(app, ctx)` adding its routes.
 *   2. Import it here and append it to ROUTE_MODULES. Order matters: migrations run in this order
 *      (after the core modules, so `agents(public_key)` etc. exist for foreign keys).
 *   3. In `register`, every /api/v1 path is already behind the signed-header middleware (auth.ts):
 *      `c.get('publicKey')` is the verified caller, `c.get('rawBody')` the signed body; read JSON with
 *      `readJsonObject(c)` (request.ts). Add `requireRegistered(ctx)` before a handler that changes
 *      shared state. Throw `ApiError` (errors.ts) for every refusal; never return ad-hoc error JSON.
 *
 * Middleware order on /api/v1: access log → per-IP rate limit → body size limit → query check (no NUL in
 * any parameter) → signed headers (signature, replay, then the per-key rate limit). Both rate limits live
 * in the database (limits.ts), shared by every server process on it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { Crypto } from '../crypto/backend.js';
import { getCrypto } from '../crypto/index.js';
import { rateLimited, signedHeaders } from './auth.js';
import { DEFAULT_CONFIG, type AppEnv, type RouteModule, type ServerConfig, type ServerContext } from './context.js';
import { openDb, type Db } from './db.js';
import { ApiError, errorBody } from './errors.js';
import { clientGone, createBoundedServer, honoHandler, honoIncoming } from './http-boundary.js';
import { RateLimiter } from './limits.js';
import { jsonLineLog, type Log } from './log.js';
import { migrate } from './migrate.js';
import { bodyIncomplete, checkQuery, clientIp } from './request.js';
import { authRoutes } from './routes/auth.js';
import { groupRoutes } from './routes/groups.js';
import { inboxRoutes } from './routes/inbox.js';
import { invitationRoutes } from './routes/invitations.js';
import { miscRoutes } from './routes/misc.js';
import { protocolRoutes } from './routes/protocols.js';
import { sessionRoutes } from './routes/sessions.js';

/** Every route module, in migration order. */
export const ROUTE_MODULES: readonly RouteModule[] = [authRoutes, miscRoutes, invitationRoutes, sessionRoutes, inboxRoutes, protocolRoutes, groupRoutes];

export function createApp(ctx: ServerContext, modules: readonly RouteModule[] = ROUTE_MODULES): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const perIp = new RateLimiter(ctx.db, ctx.config.ratePerIp, ctx.now, 'ip');

  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    // Path only: query strings can carry filters nobody asked us to keep; never bodies or signatures.
    ctx.log.info('request', {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
      public_key: c.get('publicKey'),
      ip: clientIp(c, ctx.config.trustProxy),
    });
  });
  app.use('/api/v1/*', async (c, next) => {
    const wait = await perIp.take(clientIp(c, ctx.config.trustProxy));
    if (wait > 0) throw rateLimited(wait, 'address');
    return next();
  });
  const limitBody = bodyLimit({
    maxSize: ctx.config.maxBodyBytes,
    onError: (c) => c.json(errorBody(new ApiError(413, 'BODY_TOO_LARGE', `request body is larger than ${ctx.config.maxBodyBytes} bytes`)), 413),
  });
  app.use('/api/v1/*', async (c, next) => {
    // bodyLimit reads a chunked body itself; a failure before it hands on is that read failing.
    let handedOn = false;
    try {
      return await limitBody(c, async () => {
        handedOn = true;
        await next();
      });
    } catch (e) {
      if (handedOn) throw e;
      throw bodyIncomplete();
    }
  });
  app.use('/api/v1/*', async (c, next) => {
    checkQuery(c);
    return next();
  });
  app.use('/api/v1/*', signedHeaders(ctx));
  for (const m of modules) m.register(app, ctx);

  app.notFound((c) => c.json(errorBody(new ApiError(404, 'ROUTE_NOT_FOUND', `no route for ${c.req.method} ${c.req.path}`)), 404));
  app.onError((err, c) => {
    if (err instanceof ApiError) {
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      return c.json(errorBody(err), err.status);
    }
    if (err instanceof HTTPException && err.status < 500) {
      return c.json({ code: `HTTP_${err.status}`, message: err.message.split('\n')[0] ?? '' }, err.status);
    }
    if (clientGone(honoIncoming(c.env))) {
      // The client left mid-request: anyone can, as often as they like, so it is no error of ours.
      ctx.log.info('client_aborted', { method: c.req.method, path: c.req.path });
      return c.json({ code: 'CLIENT_ABORTED', message: 'the client went away before the request was complete' }, 400);
    }
    ctx.log.error('internal_error', {
      method: c.req.method,
      path: c.req.path,
      error: err instanceof Error ? err.message.slice(0, 300) : String(err).slice(0, 300),
    });
    return c.json({ code: 'INTERNAL', message: 'internal server error' }, 500);
  });
  return app;
}

function packageVersion(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    if (typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string') return pkg.version;
  } catch {
    // A stripped install without package.json still serves; the version endpoint says so.
  }
  return DEFAULT_CONFIG.version;
}

export interface ServerOptions {
  /** PGlite lives in `<dataDir>/db`. Without dataDir and dbUrl the database is in memory. */
  dataDir?: string;
  /** A postgres:// URL: use PostgreSQL instead of PGlite. */
  dbUrl?: string;
  /** An already open database (tests); the server does not close it. */
  db?: Db;
  crypto?: Crypto;
  now?: () => number;
  log?: Log;
  config?: Partial<ServerConfig>;
  modules?: readonly RouteModule[];
}

export interface RegistryServer {
  app: Hono<AppEnv>;
  ctx: ServerContext;
  close(): Promise<void>;
}

/** Opens the database, applies migrations and builds the app; no socket (see `listen`). */
export async function createServer(opts: ServerOptions = {}): Promise<RegistryServer> {
  const log = opts.log ?? jsonLineLog();
  const ownsDb = opts.db === undefined;
  const db =
    opts.db ??
    (await openDb({
      url: opts.dbUrl,
      dir: opts.dataDir === undefined ? undefined : join(opts.dataDir, 'db'),
      onError: (m) => log.warn('db_pool_error', { error: m }),
    }));
  const modules = opts.modules ?? ROUTE_MODULES;
  try {
    const applied = await migrate(
      db,
      modules.flatMap((m) => m.migrations),
    );
    if (applied.length > 0) log.info('migrations_applied', { ids: applied.join(',') });
  } catch (e) {
    if (ownsDb) await db.close().catch(() => {});
    throw e;
  }
  const ctx: ServerContext = {
    db,
    crypto: opts.crypto ?? getCrypto(),
    now: opts.now ?? Date.now,
    config: { ...DEFAULT_CONFIG, version: packageVersion(), ...opts.config },
    log,
  };
  return { app: createApp(ctx, modules), ctx, close: async () => (ownsDb ? db.close() : undefined) };
}

export interface Listening {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  /** Stops accepting, ends open connections, then closes the database. */
  close(): Promise<void>;
}

/** Serves `server` on host:port (port 0 picks a free one), through the HTTP boundary (http-boundary.ts). */
export async function listen(server: RegistryServer, host = '127.0.0.1', port = 0): Promise<Listening> {
  const http = createBoundedServer(honoHandler(server.app.fetch), {
    render: (r) => ({ contentType: 'application/json', body: JSON.stringify(errorBody(new ApiError(r.status, r.code, r.message))) }),
    log: server.ctx.log,
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => resolve());
  });
  const addr = http.address();
  const actualPort = typeof addr === 'object' && addr !== null ? addr.port : port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostPart}:${actualPort}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        if ('closeAllConnections' in http) http.closeAllConnections();
      });
      await server.close();
    },
  };
}
