// The light package (packages/core, npm "aigenora-core") as a crypto, spec or trade consumer meets it:
// `npm pack`, installed from the tarball into an empty project. Asserts the install weight (issue 34:
// at most 10 packages and 5 MB, the consumer's own @types/node aside), then the same answers as the
// full package from ESM, require() and TypeScript at skipLibCheck: false, and a vite-built page that
// gets the .wasm as an asset. Needs packages/core built (npm run build; the test command builds it).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../shared/tmp.js';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const CORE = join(ROOT, 'packages/core');
const ROOT_PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const VITE = join(ROOT, 'node_modules/vite/bin/vite.js');
const protocolIds = JSON.parse(readFileSync(join(ROOT, 'test-vectors/protocol-id.json'), 'utf8')) as { cases: { spec: string; protocol_id: string }[] };
const envelopes = JSON.parse(readFileSync(join(ROOT, 'test-vectors/agent-trade/envelopes.json'), 'utf8')) as {
  identities: Record<string, { public_key: string }>;
  key_map: string[];
  cases: { name: string; expect: string; file?: unknown; object_id?: string }[];
};

let work: string;
let app: string;
let added: number;
let weight: { packages: string[]; bytes: number };

function run(cmd: string, args: string[], cwd = app) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 240_000 });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

function node(file: string, source: string) {
  writeFileSync(join(app, file), source);
  return run(process.execPath, [file]);
}

/** Packages under node_modules (scoped ones by their scope/name) and their bytes (apparent sizes). */
function measure(dir: string): { packages: string[]; bytes: number } {
  const packages: string[] = [];
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else bytes += lstatSync(p).size;
    }
  };
  const list = (nm: string) => {
    for (const e of readdirSync(nm, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name.startsWith('.')) continue;
      if (e.name.startsWith('@')) {
        for (const s of readdirSync(join(nm, e.name))) packages.push(`${e.name}/${s}`);
      } else packages.push(e.name);
    }
  };
  list(dir);
  walk(dir);
  return { packages: packages.sort(), bytes };
}

beforeAll(() => {
  if (!existsSync(join(CORE, 'dist/node/index.js'))) throw new Error('packages/core is not built: run npm run build (the test command does)');
  work = tempDir('core-package');
  const info = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: CORE, encoding: 'utf8' })) as {
    filename: string;
  }[];
  const tarball = join(work, info[0]!.filename);
  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'light-consumer', private: true, type: 'module' }));
  const r = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball]);
  if (r.status !== 0) throw new Error(`npm install of the light tarball failed:\n${r.out}${r.err}`);
  added = Number(/added (\d+) packages?/.exec(r.out)?.[1] ?? NaN);
  weight = measure(join(app, 'node_modules'));
  // Measured before the TypeScript check adds its own @types/node.
  const t = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `@types/node@${ROOT_PKG.devDependencies['@types/node']}`]);
  if (t.status !== 0) throw new Error(`npm install @types/node failed:\n${t.out}${t.err}`);
}, 300_000);

describe('the light package aigenora-core', () => {
  it('installs at most 10 packages and 5 MB, and none of the network, server or CLI dependencies', () => {
    expect(added).toBeLessThanOrEqual(10);
    expect(weight.packages.length).toBeLessThanOrEqual(10);
    expect(weight.bytes).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(weight.packages.filter((p) => /libp2p|pglite|^pg$|hono|modelcontextprotocol|^tsx$|^ws$|^zod$|iroh|@noble/.test(p))).toEqual([]);
    expect(weight.packages).toContain('aigenora-core');
    // Quoted in the closing note.
    console.log(`aigenora-core install: ${weight.packages.length} packages (${weight.packages.join(', ')}), ${(weight.bytes / 1024 / 1024).toFixed(2)} MiB`);
  });

  it('signs and verifies with both backends from ESM, and they agree byte for byte', () => {
    const r = node(
      'crypto.mjs',
      `import { getCrypto, createCrypto, utf8, toHex, CryptoError } from 'aigenora-core/crypto';
import * as all from 'aigenora-core';
const c = getCrypto(); const j = getCrypto('js');
const seed = new Uint8Array(32).fill(7);
const sig = c.ed25519Sign(seed, utf8('hello'));
let code; try { getCrypto('nope'); } catch (e) { code = e instanceof all.CryptoError && e instanceof CryptoError ? e.code : 'other'; }
console.log(JSON.stringify({ backend: c.backend, same: (await createCrypto()) === c, ok: j.ed25519Verify(c.ed25519PublicKey(seed), utf8('hello'), sig),
  bad: c.ed25519Verify(c.ed25519PublicKey(seed), utf8('hellO'), sig), twin: toHex(j.ed25519Sign(seed, utf8('hello'))) === toHex(sig),
  jcs: new TextDecoder().decode(j.jcsValue({ b: 1, a: [1.0, 'é'] })), code }));`,
    );
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual({ backend: 'wasm', same: true, ok: true, bad: false, twin: true, jcs: '{"a":[1,"é"],"b":1}', code: expect.any(String) });
  });

  it('computes protocol_id as the Python-generated vectors say, and verifies the agent-trade vectors, through require()', () => {
    const cases = protocolIds.cases.slice(0, 5);
    const trade = envelopes.cases.filter((k) => k.file !== undefined).slice(0, 12);
    writeFileSync(
      join(app, 'cases.json'),
      JSON.stringify({ cases, trade, keys: Object.fromEntries(envelopes.key_map.map((id) => [id, envelopes.identities[id]])) }),
    );
    const r = node(
      'require.cjs',
      `const { readFileSync } = require('node:fs');
const { getCrypto } = require('aigenora-core/crypto');
const { protocolId } = require('aigenora-core/spec');
const { verifyEnvelope } = require('aigenora-core/trade');
const { defineHooks } = require('aigenora-core/hooks');
const { cases, trade, keys } = JSON.parse(readFileSync('cases.json', 'utf8'));
const c = getCrypto();
console.log(JSON.stringify({ ids: cases.map((v) => protocolId(c, v.spec)), verdicts: trade.map((k) => verifyEnvelope(c, k.file, keys, k.object_id ? { objectId: k.object_id } : {}).result), hooks: typeof defineHooks }));`,
    );
    expect(r.err).toBe('');
    const out = JSON.parse(r.out) as { ids: string[]; verdicts: string[]; hooks: string };
    expect(out.ids).toEqual(cases.map((v) => v.protocol_id));
    expect(out.verdicts).toEqual(trade.map((k) => k.expect));
    expect(new Set(out.verdicts).size).toBeGreaterThan(2);
    expect(out.hooks).toBe('function');
  });

  it('type-checks as a TypeScript consumer (nodenext, skipLibCheck: false)', () => {
    writeFileSync(
      join(app, 'check.ts'),
      `import { createCrypto, getCrypto, CryptoError, type Crypto } from 'aigenora-core/crypto';
import { protocolId, validateSpec, type Spec } from 'aigenora-core/spec';
import { verifyEnvelope } from 'aigenora-core/trade';
import { defineHooks, type HooksModule } from 'aigenora-core/hooks';
import * as everything from 'aigenora-core';
export async function check(spec: Spec): Promise<string> {
  const c: Crypto = await createCrypto('wasm');
  const hooks: HooksModule<'free'> = defineHooks('free', () => ({ proto_on_message: () => undefined, proto_on_send: () => undefined, proto_on_end: () => undefined }));
  void hooks; void verifyEnvelope; void everything.getCrypto; void validateSpec(spec);
  try { getCrypto('nope'); } catch (e) { if (e instanceof CryptoError) return e.code; }
  return protocolId(c, JSON.stringify(spec));
}
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['check.ts'],
      }),
    );
    const r = run(process.execPath, [TSC, '-p', 'tsconfig.json']);
    expect(r.out + r.err).toBe('');
    expect(r.status).toBe(0);
  });

  it('builds with vite for a browser: the browser entry, and the .wasm emitted as an asset', () => {
    const site = join(app, 'site');
    mkdirSync(site, { recursive: true });
    writeFileSync(join(site, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>');
    writeFileSync(
      join(site, 'main.js'),
      `import { createCrypto } from 'aigenora-core/crypto';\nconst c = await createCrypto();\ndocument.title = c.backend;\n`,
    );
    const r = run(process.execPath, [VITE, 'build', '--logLevel', 'error', '--outDir', join(site, 'out'), site], app);
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
    const assets = readdirSync(join(site, 'out/assets'));
    expect(assets.some((f) => /^aigenora_wasm_bg-.*\.wasm$/.test(f))).toBe(true);
    const js = assets
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(site, 'out/assets', f), 'utf8'))
      .join('\n');
    expect(js).not.toMatch(/node:module|createRequire/);
  });
});
