/**
 * What the CLI's local servers share: a loopback `--listen`, listening with a typed error, closing
 * with the connections still open, and waiting for SIGINT or SIGTERM.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from './args.js';

export class WebViewError extends Error {
  override readonly name = 'WebViewError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** `--listen HOST:PORT` where HOST is 127.0.0.1, [::1] or localhost; anything else is a usage error. */
export function parseLoopbackListen(v: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(v);
  const host = m ? (m[1] ?? m[2]!) : '';
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535 || !LOOPBACK.has(host.toLowerCase())) {
    throw new UsageError(
      `--listen must be a loopback HOST:PORT (127.0.0.1, [::1] or localhost; port 0 picks a free one), got ${JSON.stringify(v.slice(0, 80))}`,
    );
  }
  return { host: host.toLowerCase() === 'localhost' ? '127.0.0.1' : host, port };
}

/** Listens on host:port (0: a free port); a socket that cannot be had is a WebViewError LISTEN_FAILED. */
export async function listenOn(server: Server, host: string, port: number): Promise<{ port: number; origin: string; close(): Promise<void> }> {
  await new Promise<void>((ok, bad) => {
    server.once('error', (e: NodeJS.ErrnoException) => bad(new WebViewError('LISTEN_FAILED', `cannot listen on ${host}:${port}: ${e.code ?? e.message}`)));
    server.listen(port, host, () => ok());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

/** Resolves when the process is asked to stop (SIGINT or SIGTERM), naming the signal. */
export const stopSignal = (): Promise<string> =>
  new Promise<string>((resolve) => {
    for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => resolve(s));
  });
