// The message-validation suites once more with no precompiled validator at all: every schema, built-in
// or not, is compiled at run time by ajv, the path a spec that is not a built-in takes. (In their own
// files the built-in specs take their precompiled validators; test/spec/precompiled.test.ts compares
// the two paths message by message.)
import { readFileSync } from 'node:fs';
import { expect, it, vi } from 'vitest';

const compiled = vi.hoisted(() => ({ n: 0 }));
vi.mock('../../ts/spec/precompiled-validators.js', () => ({ PRECOMPILED: new Map() }));
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

it('compiles the schemas of a built-in spec', async () => {
  const { MessageValidator } = await import('../../ts/spec/messages.js');
  const text = readFileSync(new URL('../../ts/protocols/rps/spec.json', import.meta.url), 'utf8');
  const before = compiled.n;
  new MessageValidator(JSON.parse(text), { specText: text });
  expect(compiled.n - before).toBe(7);
});

await import('./messages.test.js');
await import('./messages-numbers.test.js');
await import('./frame-room.test.js');
await import('./messages-differential.test.js');
