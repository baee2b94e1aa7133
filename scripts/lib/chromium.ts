// Debian's headless Chromium through playwright-core (never a browser that a tool downloads), and a
// static file server on a loopback port: shared by the browser test run and the package test.
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

export interface StaticServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `routes` (exact paths) first, then files under `root`; nothing outside `root`. */
export async function serveStatic(root: string | undefined, routes: Record<string, [string, Uint8Array | string]> = {}): Promise<StaticServer> {
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const route = routes[path];
    if (route) {
      res.writeHead(200, { 'content-type': route[0] }).end(route[1]);
      return;
    }
    if (root) {
      const file = normalize(join(root, path));
      if (file === root || file.startsWith(root.endsWith(sep) ? root : root + sep)) {
        const st = statSync(file, { throwIfNoEntry: false });
        if (st?.isFile()) {
          res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-length': st.size });
          createReadStream(file).pipe(res);
          return;
        }
      }
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((ok) => server.close(() => ok())) };
}
