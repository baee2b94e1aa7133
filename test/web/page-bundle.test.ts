// What the agent page is bundled from (scripts/build-web.mjs): the precompiled validators of the
// built-ins it plays and no JSON Schema compiler, so its CSP allows no eval; none of the flow modes
// those built-ins lack, and not the pure-JS crypto backend.
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { CSP } from '../../ts/cli/web.js';
import { PAGE_HOOKS } from '../../ts/web/page-protocols.js';
import { PAGE_VALIDATORS } from '../../ts/web/page-validators.js';
// @ts-expect-error -- a plain .mjs build script without types
import { pageBuild } from '../../scripts/build-web.mjs';

describe('the agent page bundle', () => {
  it("is served under a CSP with 'wasm-unsafe-eval' and without 'unsafe-eval'", () => {
    const scripts = /script-src ([^;]*)/.exec(CSP)?.[1]?.split(' ');
    expect(scripts).toContain("'wasm-unsafe-eval'");
    expect(scripts).not.toContain("'unsafe-eval'");
  });

  it('carries the precompiled validators of exactly the built-ins the page plays', () => {
    expect(Object.keys(PAGE_VALIDATORS).sort()).toEqual(Object.keys(PAGE_HOOKS).sort());
  });

  it('holds no ajv, no eval, no mental-poker or realtime engine and no pure-JS crypto backend', async () => {
    const r = await build({ ...(pageBuild as object), write: false, metafile: true, sourcemap: false, outfile: 'agent.js' });
    const inputs = Object.keys((r.metafile as Metafile).inputs);
    expect(inputs.filter((f) => /node_modules\/(ajv|fast-uri|ajv-formats)\//.test(f))).toEqual([]);
    expect(
      inputs.filter((f) => /ts\/(spec\/compile|spec\/precompiled\/index|mp\/|realtime\/|engine\/modes\/(mental-poker|realtime)|crypto\/js-)/.test(f)),
    ).toEqual([]);
    expect(inputs.some((f) => f.endsWith('ts/web/no-compile.ts'))).toBe(true);
    const text = r.outputFiles!.find((f) => f.path.endsWith('agent.js'))!.text;
    expect(text).not.toMatch(/new Function\b|\beval\(/);
  }, 60_000);
});
