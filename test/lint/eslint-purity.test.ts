// eslint.config.js states purity.test.ts's rule for the pure modules again, so that an editor shows a
// violation where it is written. Both read their lists from test/lint/pure-modules.json; what must not
// drift is the rule itself: on a sample like purity.test.ts's, an error on each line that test expects.
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

describe('eslint.config.js and test/lint/purity.test.ts', () => {
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
