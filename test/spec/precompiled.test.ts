// The page's built-ins' message validators compiled ahead of time (ts/spec/precompiled/,
// scripts/build-validators.mjs; messages.ts takes them here as the page bundle does) against the same
// schemas compiled at run time: for every one of those specs, every message, with and without
// the spec text's exact bounds, the same verdict and the same errors on valid messages, on each field
// broken in each way the schema can refuse, and on the recorded reference cases of test-vectors/messages.json.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { exactBounds, messageJsonSchema, schemaKey } from '../../ts/spec/message-schema.js';
import { MessageValidator, WireFloat, type MessageCheck } from '../../ts/spec/messages.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import { PAGE_VALIDATORS, PRECOMPILED } from '../../ts/web/page-validators.js';
import type { FieldSchema, Spec, WireDirection } from '../../ts/spec/types.js';

const ROOT = new URL('../../', import.meta.url).pathname;
vi.mock('../../ts/spec/precompiled-validators.js', () => import('../../ts/web/page-validators.js'));
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

const FOLDERS = Object.keys(PAGE_VALIDATORS).sort();
const DIRECTIONS: (WireDirection | undefined)[] = [undefined, 'host_to_guest', 'guest_to_host'];

/** Values a field of this schema takes, then values it refuses (or that sit on its edges). */
function values(f: FieldSchema): unknown[] {
  const big = 10n ** 30n;
  switch (f.type) {
    case 'integer': {
      const lo = typeof f.min === 'number' ? f.min : -5;
      const hi = typeof f.max === 'number' ? f.max : 5;
      return [lo, hi, lo - 1, hi + 1, 0, 1.5, '1', true, null, big, -big, new WireFloat(2), 2 ** 53 + 2];
    }
    case 'enum':
      return [...(f.values ?? []), 'not-a-value', 3, null];
    case 'boolean':
      return [true, false, 'true', 0];
    case 'hash':
    case 'key':
      return ['a'.repeat(64), 'A'.repeat(64), 'a'.repeat(63), 'g'.repeat(64), 7];
    case 'nonce':
      return ['0'.repeat(16), '0'.repeat(64), '0'.repeat(15), '0'.repeat(65)];
    case 'signature':
      return ['e'.repeat(128), 'e'.repeat(127)];
    case 'id':
      return ['agent_1:x.y-z', '', 'a b', 'x'.repeat(129)];
    case 'ticket':
      return ['t', '', 'x'.repeat(2049), '😀'.repeat(1024), '😀'.repeat(1025)];
    case 'text':
    case 'ot_blob': {
      const max = f.max_length ?? (f.type === 'text' ? 2000 : 16384);
      return ['hi', 'x'.repeat(max), 'x'.repeat(max + 1), 'é'.repeat(Math.ceil(max / 2) + 1), 5, ['x']];
    }
    case 'ciphertext':
      return ['abcd', '', 'abc', 'ABCD', 'ab'.repeat((f.max_length ?? 512) / 2 + 1)];
    case 'array': {
      const items = values(f.items ?? ({ type: 'text' } as FieldSchema));
      const n = f.min_items ?? 1;
      return [
        Array.from({ length: n }, () => items[0]),
        [],
        Array.from({ length: (f.max_items ?? 3) + 1 }, () => items[0]),
        [items[0], ...items.slice(2, 5)],
        Array.from({ length: Math.min(f.max_items ?? 64, 64) }, () => 'x'.repeat(4096)),
        'not-an-array',
      ];
    }
    case 'json':
      return [{ a: [1, 2] }, [1, 'x'], 'text', 3, null, new WireFloat(1), { big: 'x'.repeat((f.max_total_bytes ?? 1048576) + 1) }];
  }
}

/** The messages to try for one declared message: a full valid one, then each field changed or left out, an extra field. */
function messagesFor(fields: Record<string, FieldSchema>): Record<string, unknown>[] {
  const base = Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, values(f)[0]]));
  const out: Record<string, unknown>[] = [base, { ...base, undeclared: 1 }, {}];
  for (const [k, f] of Object.entries(fields)) {
    const { [k]: _, ...without } = base;
    out.push(without);
    for (const v of values(f).slice(1)) out.push({ ...base, [k]: v });
  }
  return out;
}

/** A value JSON.stringify cannot write as it is: a bigint, or a WireFloat (a float whose literal is gone). */
const hasNoText = (v: unknown): boolean =>
  typeof v === 'bigint' || v instanceof WireFloat || (typeof v === 'object' && v !== null && Object.values(v).some(hasNoText));

/** check, and checkText where the message has a JSON text (no bigint or WireFloat), in each direction. */
function verdicts(v: MessageValidator, msgs: unknown[]): MessageCheck[] {
  const out: MessageCheck[] = [];
  for (const m of msgs)
    for (const d of DIRECTIONS) {
      out.push(v.check(m, d));
      if (!hasNoText(m)) out.push(v.checkText(JSON.stringify(m), d));
    }
  return out;
}

describe('precompiled message validators', () => {
  it('are current: scripts/build-validators.mjs --check', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build-validators.mjs'), '--check'], { encoding: 'utf8' });
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
  }, 60_000);

  it.each(FOLDERS)('%s: every schema is precompiled, and gives the run-time compiled verdicts and errors', (folder) => {
    const text = readFileSync(join(BUILTIN_DIR, folder, 'spec.json'), 'utf8');
    const spec = JSON.parse(text) as Spec;
    const exact = exactBounds(text);
    spec.messages.forEach((m, i) => {
      expect(PRECOMPILED.get(schemaKey(messageJsonSchema(m, exact[i]))), m.name).toBeTypeOf('function');
      expect(PRECOMPILED.get(schemaKey(messageJsonSchema(m))), m.name).toBeTypeOf('function');
    });
    const msgs: unknown[] = spec.messages.flatMap((m) => messagesFor(m.fields));
    msgs.push({ action: 'no-such-action' }, [], 'text');
    let refused = 0;
    for (const opts of [{ specText: text }, {}]) {
      const before = compiled.n;
      const ahead = new MessageValidator(spec, opts);
      expect(compiled.n, 'schemas compiled at run time with the precompiled validators there').toBe(before);
      const pre = verdicts(ahead, msgs);
      const run = verdicts(new MessageValidator(spec, { ...opts, precompiled: false }), msgs);
      expect(pre).toEqual(run);
      refused += pre.filter((r) => !r.ok).length;
      expect(pre.some((r) => r.ok)).toBe(true);
    }
    expect(refused).toBeGreaterThan(0);
  });

  it("agree on the reference's recorded cases for those built-ins", () => {
    const v = JSON.parse(readFileSync(join(ROOT, 'test-vectors/messages.json'), 'utf8')) as {
      specs: { name: string; text?: string }[];
      cases: { spec: number; direction: WireDirection | null; message: string | null; text: string }[];
    };
    const pairs = v.specs.map((s) => {
      if (s.text !== undefined || !FOLDERS.includes(s.name.slice('builtin-'.length))) return undefined;
      const text = readFileSync(join(BUILTIN_DIR, s.name.slice('builtin-'.length), 'spec.json'), 'utf8');
      const spec = JSON.parse(text) as Spec;
      return [new MessageValidator(spec, { specText: text }), new MessageValidator(spec, { specText: text, precompiled: false })] as const;
    });
    let n = 0;
    for (const c of v.cases) {
      const p = pairs[c.spec];
      if (!p) continue;
      const args = [c.text, c.direction ?? undefined, c.message ?? undefined] as const;
      expect(p[0].checkText(...args), c.text.slice(0, 80)).toEqual(p[1].checkText(...args));
      n++;
    }
    expect(n).toBeGreaterThan(1000);
  });
});
