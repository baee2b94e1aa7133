// eslint.config.js states purity.test.ts's rule for the pure modules again, so that an editor shows a
// violation where it is written. The two must not drift: the same files, edges, built-ins and globals,
// and on a sample like purity.test.ts's, an error on each line that test expects for its own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

/** The string literals of the initializer of `const name` in purity.test.ts (for an object: its keys). */
function purityList(name: string): string[] {
  const sf = ts.createSourceFile('purity.test.ts', readFileSync(join(ROOT, 'test/lint/purity.test.ts'), 'utf8'), ts.ScriptTarget.ES2022, true);
  const decl = sf.statements
    .filter(ts.isVariableStatement)
    .flatMap((s) => [...s.declarationList.declarations])
    .find((d) => ts.isIdentifier(d.name) && d.name.text === name);
  if (!decl?.initializer) throw new Error(`purity.test.ts has no const ${name}`);
  const init = decl.initializer;
  if (ts.isObjectLiteralExpression(init)) return init.properties.map((p) => (p.name && ts.isStringLiteral(p.name) ? p.name.text : '?'));
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteral(n)) out.push(n.text);
    else ts.forEachChild(n, visit);
  };
  visit(init);
  return out;
}

interface Config {
  PURE: string[];
  EDGES: string[];
  NODE_BUILTINS: string[];
  FORBIDDEN_GLOBALS: string[];
}

describe('eslint.config.js and test/lint/purity.test.ts', () => {
  it('name the same pure modules, edges, built-ins and globals', async () => {
    const config = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as Config;
    for (const name of ['PURE', 'EDGES', 'NODE_BUILTINS', 'FORBIDDEN_GLOBALS'] as const) expect(config[name], name).toEqual(purityList(name));
  });

  it("flag each line of purity.test.ts's sample that it flags, in a pure module and not elsewhere", async () => {
    // purity.test.ts's first sample, its names used so that only the pure rules can fire.
    const sample = `import { readFileSync } from 'node:fs';
import { join } from 'path';
const t = Date.now(); const d = new Date(); setTimeout(() => 0, 5); const r = Math.random();
globalThis.crypto.getRandomValues(new Uint8Array(4)); process.exit(0); performance.now();
const m = await import('node:crypto');
type Clock = { now(): number; setTimeout: number; at: Date };
export function f(clock: Clock, timers: { setTimeout(ms: number): void }): number { timers.setTimeout(1); return clock.now(); }
export const o = { setTimeout: 1, process: 2, readFileSync, join, t, d, r, m };`;
    const eslint = new ESLint({ cwd: ROOT });
    const lines = async (filePath: string) =>
      (await eslint.lintText(sample, { filePath: join(ROOT, filePath) }))[0]!.messages.filter((m) => m.severity === 2).map((m) => m.line);
    expect(await lines('ts/mp/sample.ts')).toEqual([1, 2, 3, 3, 3, 3, 4, 4, 4, 5]);
    expect(await lines('ts/engine/modes/sample.ts')).toEqual([1, 2, 3, 3, 3, 3, 4, 4, 4, 5]);
    expect(await lines('ts/mp/secrets.ts')).toEqual([]);
    expect(await lines('ts/cli/sample.ts')).toEqual([]);
  });
});
