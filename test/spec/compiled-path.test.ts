// Node carries no precompiled validator (ts/spec/precompiled-validators.ts is empty; only the agent page
// bundles them): every schema, built-in or not, is compiled at run time by ajv, so the message suites
// (messages.test.ts and the rest) already run that path. test/spec/precompiled.test.ts compares it with
// the page's precompiled validators message by message.
import { readFileSync } from 'node:fs';
import { expect, it, vi } from 'vitest';

const compiled = vi.hoisted(() => ({ n: 0 }));
vi.mock('../../ts/spec/compile.js', async (original) => {
  const m = await original<typeof import('../../ts/spec/compile.js')>();
  return {
    ...m,
    schemaCompiler: (meta?: boolean) => {
      const compile = m.schemaCompiler(meta);
      return (schema: Record<string, unknown>) => (compiled.n++, compile(schema));
    },
  };
});

it('compiles the schemas of a built-in spec at run time, with no precompiled validator to take', async () => {
  const { MessageValidator } = await import('../../ts/spec/messages.js');
  const text = readFileSync(new URL('../../ts/protocols/rps/spec.json', import.meta.url), 'utf8');
  const before = compiled.n;
  new MessageValidator(JSON.parse(text), { specText: text });
  expect(compiled.n - before).toBe(7);
});
