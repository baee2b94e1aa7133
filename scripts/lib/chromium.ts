// Debian's headless Chromium through playwright-core (never a browser that a tool downloads), and a
// static file server on a loopback port: shared by the browser test run and the package test.
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { chromium, type Browser, type BrowserServer } from 'playwright-core';

export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * A browser to drive. When AIGENORA_CHROMIUM_WS names a running browser server (the test run starts
 * one for all its suites: test/shared/chromium-server.ts) this connects to it, and close() only
 * disconnects; otherwise it launches a browser of its own.
 */
export function launchChromium(): Promise<Browser> {
  const ws = process.env['AIGENORA_CHROMIUM_WS'];
  if (ws) return chromium.connect(ws);
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

/** A browser server that other processes connect to (launchChromium with AIGENORA_CHROMIUM_WS). */
export function launchChromiumServer(): Promise<BrowserServer> {
  return chromium.launchServer({ executablePath: CHROMIUM, args: FLAGS });
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
