// A source checkout runs every built-in before anything is built: `npm run demo` builds only the WASM,
// and `aigenora/*` resolves to the package's own dist/, which a fresh checkout does not have. So a
// built-in's hooks may import types from `aigenora/hooks`, never values. Checked for real: each hooks
// module is imported by a plain Node process (through tsx, as bin/aigenora.mjs runs sources) in which
// resolving any `aigenora` specifier fails.
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findHooksFile } from '../../ts/hooks/load.js';
import { BUILTINS, builtinDir } from '../../ts/protocols/index.js';

const REFUSE = `export async function resolve(specifier, context, next) {
  if (specifier === 'aigenora' || specifier.startsWith('aigenora/')) {
    const e = new Error('no package entry in this checkout: ' + specifier);
    e.code = 'ERR_MODULE_NOT_FOUND';
    throw e;
  }
  return next(specifier, context);
}`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(REFUSE)}`)});`;

function importAll(files: string[]): { status: number | null; out: string } {
  const script = `for (const f of ${JSON.stringify(files)}) {
    try {
      const m = await import(f);
      const h = m.default;
      console.log(JSON.stringify({ f, mode: h && h.mode, create: typeof (h && h.create) }));
    } catch (e) {
      console.log(JSON.stringify({ f, error: String(e && e.code) + ': ' + String(e && e.message).split('\\n')[0] }));
    }
  }`;
  // tsx first, then the refusing hook, which runs before tsx's resolver (the last registered runs first).
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx/esm', '--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 120_000 },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('built-ins in a checkout without dist/', () => {
  it('the refusing resolver does refuse a value import from aigenora/hooks', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, '--input-type=module', '-e', "await import('aigenora/hooks')"],
      { encoding: 'utf8' },
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/no package entry in this checkout: aigenora\/hooks/);
  });

  it('every built-in hooks module loads with no aigenora package to resolve', () => {
    const files = BUILTINS.map((b) => findHooksFile(builtinDir(b))!).map((f) => pathToFileURL(f).href);
    const r = importAll(files);
    expect(r.status, r.out).toBe(0);
    const lines = r.out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { f: string; mode?: string; create?: string; error?: string });
    expect(lines.length, r.out).toBe(BUILTINS.length);
    for (const l of lines) expect(l, l.f).toMatchObject({ create: 'function' });
    for (const l of lines) expect(l.error, l.f).toBeUndefined();
  }, 150_000);
});
