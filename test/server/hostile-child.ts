/**
 * A registry server as its own process, for hostile-registry.test.ts: createServer + listen as `aigenora
 * server` runs them, but with the configuration (rate limits) given as JSON in argv[2], which the CLI has
 * no flags for. Prints `{"url"}` once listening; logs JSON lines on stderr; SIGTERM stops it.
 *
 *   node --import tsx test/server/hostile-child.ts '{"dbUrl":"postgres://…","config":{…}}'
 */
import { createServer, listen } from '../../ts/server/app.js';
import type { ServerConfig } from '../../ts/server/context.js';

interface ChildOptions {
  dbUrl?: string;
  dataDir?: string;
  config?: Partial<ServerConfig>;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
const server = await createServer({ dbUrl: opts.dbUrl, dataDir: opts.dataDir, config: opts.config ?? {} });
const listening = await listen(server, '127.0.0.1', 0);
process.stdout.write(`${JSON.stringify({ url: listening.url })}\n`);
process.once('SIGTERM', () => {
  void listening.close().then(() => process.exit(0));
});
