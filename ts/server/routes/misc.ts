/** GET /api/v1/version: what `aigenora doctor` in the reference reads (min_client_version, latest_version). */
import type { Hono } from 'hono';
import type { AppEnv, RouteModule, ServerContext } from '../context.js';

function register(app: Hono<AppEnv>, ctx: ServerContext): void {
  app.get('/api/v1/version', (c) =>
    c.json({ server: 'aigenora', version: ctx.config.version, api: 'v1', min_client_version: '0.0.0', latest_version: ctx.config.version }),
  );
}

export const miscRoutes: RouteModule = { name: 'misc', migrations: [], register };
