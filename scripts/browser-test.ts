// Bundles test/browser/entry.ts with esbuild, serves it and the web build of the WASM core on a
// loopback port, and runs it in Debian's headless Chromium through playwright-core (never a browser
// that a tool downloads). Prints one line per backend and vector file, then `N passed, N failed`.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { launchChromium, serveStatic } from './lib/chromium.js';

const root = new URL('..', import.meta.url);

const bundle = await build({
  entryPoints: [new URL('test/browser/entry.ts', root).pathname],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  write: false,
  logLevel: 'warning',
});
const server = await serveStatic(undefined, {
  '/': ['text/html', '<!doctype html><meta charset="utf-8"><title>aigenora browser tests</title><script type="module" src="/entry.js"></script>'],
  '/entry.js': ['text/javascript', bundle.outputFiles[0]!.contents],
  '/aigenora_wasm_bg.wasm': ['application/wasm', readFileSync(new URL('bindings/web/aigenora_wasm_bg.wasm', root))],
});
const browser = await launchChromium();
let failed = 0;
let passed = 0;
try {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => '__results' in window, undefined, { timeout: 30_000 });
  const results = await page.evaluate(() => (window as unknown as { __results: Promise<{ backend: string; file: string; cases: number; error?: string }[]> }).__results);
  const version = browser.version();
  for (const r of results) {
    console.log(`${r.error ? 'FAIL' : 'ok  '} chromium ${version} ${r.backend.padEnd(4)} ${r.file} (${r.cases} cases)${r.error ? `: ${r.error}` : ''}`);
    if (r.error) failed++;
    else passed++;
  }
  for (const e of errors) {
    console.log(`FAIL page error: ${e}`);
    failed++;
  }
  if (results.length !== 16) {
    console.log(`FAIL expected 16 results (2 backends x 8 files), got ${results.length}`);
    failed++;
  }
} finally {
  await browser.close();
  await server.close();
}
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
