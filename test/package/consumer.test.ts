// The published package as a new user meets it: `npm pack` of the built tree, installed from the
// tarball into an empty project, then used from plain Node (ESM and require), through npx, from two
// TypeScript configurations, from a vite-built page and from a plain <script type="module"> page in
// headless Chromium. Needs dist/ (npm run build; the test command builds it first).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, serveStatic } from '../../scripts/lib/chromium.js';
import { tempDir } from '../shared/tmp.js';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const VITE = join(ROOT, 'node_modules/vite/bin/vite.js');
const vectors = JSON.parse(readFileSync(join(ROOT, 'test-vectors/protocol-id.json'), 'utf8')) as {
  cases: { name: string; spec: string; protocol_id: string }[];
};

let work: string;
let app: string;
let tarball: string;
let packed: string[];
let installLog: string;

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(cmd, args, { cwd: opts.cwd ?? app, encoding: 'utf8', env: { ...process.env, ...opts.env }, timeout: 240_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

function node(file: string, source: string) {
  writeFileSync(join(app, file), source);
  return run(process.execPath, [file]);
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/index.js'))) throw new Error('dist/ is not built: run npm run build (the test command does)');
  work = tempDir('package');
  // Scripts are skipped: prepack's clean rebuild would pull dist/ from under tests running beside this one.
  const info = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' })) as {
    filename: string;
    files: { path: string }[];
  }[];
  tarball = join(work, info[0]!.filename);
  packed = info[0]!.files.map((f) => f.path);
  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const r = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, `@types/node@${PKG.devDependencies['@types/node']}`]);
  installLog = r.out + r.err;
  if (r.status !== 0) throw new Error(`npm install of the tarball failed:\n${installLog}`);
}, 300_000);

describe('the tarball', () => {
  it('holds the build, both WASM builds and the legal files, and nothing from development', () => {
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'NOTICE.md',
      'bin/aigenora.mjs',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/main.js',
      'dist/crypto/browser.js',
      'dist/web/aigenora-crypto.js',
      'dist/protocols/rps/spec.json',
      'dist/protocols/rps/hooks.js',
      'bindings/node/aigenora_wasm_bg.wasm',
      'bindings/node/aigenora_wasm.js',
      'bindings/web/aigenora_wasm_bg.wasm',
      'bindings/web/aigenora_wasm.js',
    ])
      expect(packed, f).toContain(f);
    const allowed = /^(package\.json|README\.md|LICENSE|NOTICE\.md|bin\/aigenora\.mjs|dist\/.+|bindings\/(node|web)\/[^/]+)$/;
    expect(packed.filter((f) => !allowed.test(f))).toEqual([]);
    expect(packed.filter((f) => /^(test|crates|target|bench|scripts|ts|\.ci|test-vectors)\//.test(f) || f.endsWith('.tsbuildinfo'))).toEqual([]);
  });

  it('installs on this Node without engine warnings', () => {
    expect(installLog).not.toMatch(/EBADENGINE/);
  });
});

describe('Node', () => {
  it('imports aigenora/crypto as ESM and signs and verifies with the WASM backend, sync and async', () => {
    const r = node(
      'esm.mjs',
      `import { getCrypto, createCrypto, utf8, toHex } from 'aigenora/crypto';
const c = getCrypto();
const seed = new Uint8Array(32).fill(7);
const sig = c.ed25519Sign(seed, utf8('hello'));
const a = await createCrypto();
console.log(JSON.stringify({ backend: c.backend, same: a === c, ok: a.ed25519Verify(c.ed25519PublicKey(seed), utf8('hello'), sig),
  bad: c.ed25519Verify(c.ed25519PublicKey(seed), utf8('hellO'), sig), jcs: new TextDecoder().decode(c.jcsValue({ b: 1, a: [1.0, 'é'] })),
  js: toHex(getCrypto('js').ed25519Sign(seed, utf8('hello'))) === toHex(sig) }));`,
    );
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({ backend: 'wasm', same: true, ok: true, bad: false, jcs: '{"a":[1,"é"],"b":1}', js: true });
  });

  it('computes protocol_id with aigenora/spec as the Python-generated vectors say', () => {
    const cases = vectors.cases.slice(0, 5);
    writeFileSync(join(app, 'cases.json'), JSON.stringify(cases));
    const r = node(
      'spec.mjs',
      `import { readFileSync } from 'node:fs';
import { getCrypto } from 'aigenora/crypto';
import { protocolId } from 'aigenora/spec';
const cases = JSON.parse(readFileSync('cases.json', 'utf8'));
console.log(JSON.stringify(cases.map((v) => protocolId(getCrypto(), v.spec))));`,
    );
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual(cases.map((v) => v.protocol_id));
  });

  it('computes the rin.host/v2 fixture digest with aigenora/rin, and aigenora/rin/control serves', () => {
    const fixturePath = join(ROOT, '../shared/reference/rin/host/testdata/v2_action_fixture.json');
    if (!existsSync(fixturePath)) throw new Error(`the rin fixture is missing: ${fixturePath}`);
    writeFileSync(join(app, 'rin-fixture.json'), readFileSync(fixturePath));
    const r = node(
      'rin.mjs',
      `import { readFileSync } from 'node:fs';
import { actionRequestDigest, decodeActionRequest } from 'aigenora/rin';
import { createRinControl } from 'aigenora/rin/control';
const f = JSON.parse(readFileSync('rin-fixture.json', 'utf8'));
const quiet = { info() {}, warn() {}, error() {} };
const control = await createRinControl({ token: 'x'.repeat(32), log: quiet });
const health = await (await control.app.request('/health')).text();
await control.close();
console.log(JSON.stringify({ digest: actionRequestDigest(decodeActionRequest(JSON.stringify(f.action_request))), want: f.action_request_digest, health }));`,
    );
    expect(r.err).toBe('');
    const out = JSON.parse(r.out) as { digest: string; want: string; health: string };
    expect(out.digest).toBe(out.want);
    expect(out.health).toBe('{"status":"ok"}\n');
  });

  it('runs an Aira task to completed with aigenora/aira and the script runner of aigenora/aira/node', () => {
    const r = node(
      'aira.mjs',
      `import { bracketTask, openDocumentAuthority, startTask } from 'aigenora/aira';
import { bracketScript, runScript } from 'aigenora/aira/node';
import { getCrypto } from 'aigenora/crypto';
const crypto = getCrypto();
const task = await startTask({ authority: openDocumentAuthority({ crypto }), crypto, task: bracketTask() });
await runScript(bracketScript(), (op, input) => task.call({ op, input }), () => task.capsule());
const t = task.trace();
console.log(JSON.stringify({ terminal: t.terminal?.state, contract: t.contractVersion, rejected: t.events.filter((e) => e.decision !== 'scheduled').length }));`,
    );
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({ terminal: 'completed', contract: '1.0.0', rejected: 0 });
  });

  it('loads every entry with require()', () => {
    const r = node(
      'cjs.cjs',
      `const { getCrypto, utf8 } = require('aigenora/crypto');
const spec = require('aigenora/spec');
const trade = require('aigenora/trade');
const hooks = require('aigenora/hooks');
const group = require('aigenora/group');
const root = require('aigenora');
const c = getCrypto();
const seed = new Uint8Array(32).fill(1);
console.log(JSON.stringify({ backend: c.backend, ok: c.ed25519Verify(c.ed25519PublicKey(seed), utf8('x'), c.ed25519Sign(seed, utf8('x'))),
  spec: typeof spec.protocolId, trade: typeof trade.verifyEnvelope, hooks: typeof hooks.defineHooks, group: typeof group.GroupLeader + typeof group.verifyGroupSessionAt, root: typeof root.getCrypto + typeof root.verifyEnvelope }));`,
    );
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({
      backend: 'wasm',
      ok: true,
      spec: 'function',
      trade: 'function',
      hooks: 'function',
      group: 'functionfunction',
      root: 'functionfunction',
    });
  });

  it('does not load libp2p or the CLI for aigenora/crypto, /spec or /trade', () => {
    const r = node(
      'light.mjs',
      `import 'aigenora/crypto'; import 'aigenora/spec'; import 'aigenora/trade';
import { createRequire } from 'node:module';
const loaded = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify(loaded.filter((p) => /libp2p|dist\\/(cli|net|engine)\\//.test(p))));`,
    );
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual([]);
    // ESM modules do not enter require.cache: also check the module graph statically.
    const seen = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*['"](\.[^'"]+)['"]/g)) walk(join(file, '..', m[1]!));
    };
    for (const e of ['crypto/index.js', 'spec/index.js', 'trade/index.js', 'crypto/browser.js']) walk(join(app, 'node_modules/aigenora/dist', e));
    expect([...seen].filter((f) => /\/dist\/(cli|net|engine|library)\//.test(f))).toEqual([]);
    const bare = new Set([...seen].flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/(?:from|import)\s*['"]([^.'"][^'"]*)['"]/g)].map((m) => m[1]!)));
    expect([...bare].filter((b) => /libp2p|tsx/.test(b))).toEqual([]);
  });
});

describe('the CLI from the tarball', () => {
  it('answers --version, help, and refuses on stderr with exit 2', () => {
    const v = run('npx', ['--no-install', 'aigenora', '--version']);
    expect(v).toMatchObject({ status: 0, out: `aigenora ${PKG.version}\n`, err: '' });
    const bare = run('npx', ['--no-install', 'aigenora']);
    expect(bare.status).toBe(0);
    expect(bare.out).toMatch(/^usage: aigenora <command>/);
    const bad = run('npx', ['--no-install', 'aigenora', 'frobnicate']);
    expect(bad.status).toBe(2);
    expect(bad.out).toBe('');
    expect(bad.err).toMatch(/^aigenora: UNKNOWN_COMMAND: "frobnicate" is not a command/);
  });

  it('init makes an identity and the library, and a built-in protocol plays from the installed package', () => {
    const data = join(work, 'data');
    const init = run('npx', ['--no-install', 'aigenora', 'init', '--data-dir', data, '--json']);
    expect(init.err).toBe('');
    expect(init.status).toBe(0);
    const res = JSON.parse(init.out) as { public_key: string; protocols: { alias: string }[] };
    expect(res.public_key).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(data, 'key.json')).mode & 0o777).toBe(0o600);
    expect(res.protocols.map((p) => p.alias)).toContain('rps-v1');
    const dir = run('npx', ['--no-install', 'aigenora', 'protocol', 'path', 'rps-v1', '--data-dir', data]).out.trim();
    expect(readdirSync(dir).sort()).toEqual(['hooks.mjs', 'spec.json']);
    const played = run('npx', ['--no-install', 'aigenora', 'protocol', 'test', dir, '--seed', '3', '--json']);
    expect(played.err).toBe('');
    expect(played.status).toBe(0);
    expect(JSON.parse(played.out)).toMatchObject({ ok: true, host: { completed: true }, guest: { completed: true } });
  });

  it("loads a user's own TypeScript hooks through the packaged loader", () => {
    const dir = join(work, 'my-chat');
    const created = run('npx', ['--no-install', 'aigenora', 'protocol', 'create', dir, '--from', 'human-chat-v1']);
    expect(created.status, created.err).toBe(0);
    writeFileSync(
      join(dir, 'hooks.mts'),
      `import type { HooksModule, Message } from 'aigenora/hooks';
const seen: Message[] = [];
const hooks: HooksModule<'free'> = {
  mode: 'free',
  create: () => ({ proto_on_message: (m: Message) => void seen.push(m), proto_on_send: (m: Message) => void seen.push(m), proto_on_end: () => undefined }),
};
export default hooks;
`,
    );
    const r = run('npx', ['--no-install', 'aigenora', 'protocol', 'hooks', dir, '--json']);
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, flow_mode: 'free', implemented: ['proto_on_message', 'proto_on_send', 'proto_on_end'] });
  });
});

describe('TypeScript consumers (skipLibCheck: false)', () => {
  const source = `import { createCrypto, getCrypto, CryptoError, type Crypto } from 'aigenora/crypto';
import { protocolId, validateSpec, type Spec } from 'aigenora/spec';
import { verifyEnvelope } from 'aigenora/trade';
import { defineHooks, type HooksModule } from 'aigenora/hooks';
import * as everything from 'aigenora';
export async function check(spec: Spec): Promise<string> {
  const c: Crypto = await createCrypto('wasm');
  const hooks: HooksModule<'free'> = defineHooks('free', () => ({ proto_on_message: () => undefined, proto_on_send: () => undefined, proto_on_end: () => undefined }));
  void hooks; void verifyEnvelope; void everything.getCrypto; void validateSpec(spec);
  try { getCrypto('nope'); } catch (e) { if (e instanceof CryptoError) return e.code; }
  return protocolId(c, JSON.stringify(spec));
}
`;
  it.each([
    ['nodenext', { module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'] }],
    ['bundler', { module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM'], types: [] }],
  ])('compiles with moduleResolution %s', (name, options) => {
    writeFileSync(join(app, `check-${name}.ts`), source);
    writeFileSync(
      join(app, `tsconfig.${name}.json`),
      JSON.stringify({ compilerOptions: { target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, ...options }, files: [`check-${name}.ts`] }),
    );
    const r = run(process.execPath, [TSC, '-p', `tsconfig.${name}.json`]);
    expect(r.out + r.err).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('browsers (headless Chromium)', () => {
  const page = (script: string) =>
    `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>aigenora</title><script type="module">${script}</script>`;
  const signAndVerify = `const c = await createCrypto();
const seed = new Uint8Array(32).fill(9);
const msg = new TextEncoder().encode('from a page');
const sig = c.ed25519Sign(seed, msg);
window.__result = { backend: c.backend, ok: c.ed25519Verify(c.ed25519PublicKey(seed), msg, sig), bad: c.ed25519Verify(c.ed25519PublicKey(seed), msg, sig.map((b, i) => (i === 0 ? b ^ 1 : b))),
  same: getCrypto('wasm') === c };`;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function resultOf(url: string): Promise<unknown> {
    const p = await browser.newPage();
    const errors: string[] = [];
    p.on('pageerror', (e) => errors.push(String(e)));
    p.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await p.goto(url);
    await p.waitForFunction(() => '__result' in window || document.title === 'error', undefined, { timeout: 30_000 }).catch(() => undefined);
    const result = await p.evaluate(() => (window as unknown as { __result?: unknown }).__result);
    await p.close();
    expect(errors).toEqual([]);
    return result;
  }

  it('a vite build of a page importing aigenora/crypto signs and verifies with WASM, without libp2p', async () => {
    const site = join(app, 'site');
    mkdirSync(site, { recursive: true });
    writeFileSync(join(site, 'index.html'), page(`import './main.js';`));
    writeFileSync(join(site, 'main.js'), `import { createCrypto, getCrypto } from 'aigenora/crypto';\n${signAndVerify}\n`);
    const b = run(process.execPath, [VITE, 'build', '--logLevel', 'warn', '--outDir', 'out', '--emptyOutDir'], { cwd: site });
    expect(b.status, b.out + b.err).toBe(0);
    expect(b.out + b.err).not.toMatch(/externalized for browser compatibility|UNRESOLVED_IMPORT/);
    const assets = readdirSync(join(site, 'out/assets'));
    const js = assets.filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(site, 'out/assets', f)));
    const wasm = assets.filter((f) => f.endsWith('.wasm')).map((f) => readFileSync(join(site, 'out/assets', f)));
    expect(wasm.length).toBeGreaterThanOrEqual(1);
    const jsText = Buffer.concat(js).toString('utf8');
    expect(jsText).not.toMatch(/libp2p|createRequire/);
    const kib = (n: number) => (n / 1024).toFixed(1);
    const jsBytes = js.reduce((n, b) => n + b.length, 0);
    console.log(
      `vite page, crypto only: JS ${kib(jsBytes)} KiB (${kib(gzipSync(Buffer.concat(js), { level: 9 }).length)} KiB gzipped), WASM ${kib(wasm[0]!.length)} KiB (${kib(gzipSync(wasm[0]!, { level: 9 }).length)} KiB gzipped)`,
    );
    const server = await serveStatic(join(site, 'out'));
    try {
      expect(await resultOf(`${server.url}/index.html`)).toEqual({ backend: 'wasm', ok: true, bad: false, same: true });
    } finally {
      await server.close();
    }
  });

  it('a plain <script type="module"> page served from the installed package needs no bundler', async () => {
    const pkgDir = join(app, 'node_modules/aigenora');
    const server = await serveStatic(pkgDir, {
      '/page.html': ['text/html', page(`import { createCrypto, getCrypto } from '/dist/web/aigenora-crypto.js';\n${signAndVerify}`)],
    });
    try {
      expect(await resultOf(`${server.url}/page.html`)).toEqual({ backend: 'wasm', ok: true, bad: false, same: true });
    } finally {
      await server.close();
    }
  });
});
