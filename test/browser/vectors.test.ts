// The shared vector checks (test/shared/vector-checks.ts) in headless Chromium, on both backends, the WASM
// one loaded from the web build (bindings/web) as a page would: test/browser/entry.ts bundled by esbuild,
// served on loopback, its results read back here, one test per backend and vector file.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, serveStatic, type StaticServer } from '../../scripts/lib/chromium.js';
import { checks, type VectorFile } from '../shared/vector-checks.js';

interface Result {
  backend: string;
  file: string;
  cases: number;
  error?: string;
}

const root = new URL('../..', import.meta.url);
let browser: Browser;
let server: StaticServer;
let results: Result[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [new URL('test/browser/entry.ts', root).pathname],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'warning',
  });
  server = await serveStatic(undefined, {
    '/': ['text/html', '<!doctype html><meta charset="utf-8"><title>aigenora browser tests</title><script type="module" src="/entry.js"></script>'],
    '/entry.js': ['text/javascript', bundle.outputFiles[0]!.contents],
    '/aigenora_wasm_bg.wasm': ['application/wasm', readFileSync(new URL('bindings/web/aigenora_wasm_bg.wasm', root))],
  });
  browser = await launchChromium();
  const page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => '__results' in window, undefined, { timeout: 30_000 });
  results = await page.evaluate(() => (window as unknown as { __results: Promise<Result[]> }).__results);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the vector files in headless Chromium', () => {
  const files = Object.keys(checks);
  it('runs every check of every file on both backends, and nothing else', () => {
    expect(files).toHaveLength(8);
    expect(results.map((r) => `${r.backend} ${r.file}`)).toEqual(['wasm', 'js'].flatMap((b) => files.map((f) => `${b} ${f}`)));
    expect(pageErrors).toEqual([]);
  });

  it.each(['wasm', 'js'].flatMap((b) => files.map((f) => [b, f] as const)))('%s %s', (backend, file) => {
    const doc = JSON.parse(readFileSync(new URL(`test-vectors/${file}`, root), 'utf8')) as VectorFile;
    const r = results.find((x) => x.backend === backend && x.file === file);
    expect(r, `${backend} ${file} did not run`).toBeDefined();
    expect(r!.error).toBeUndefined();
    expect(r!.cases).toBe(doc.cases.length);
    expect(r!.cases).toBeGreaterThan(0);
  });
});
