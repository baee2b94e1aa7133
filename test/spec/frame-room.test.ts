// The engine's frame limit leaves room for what a spec allows: for every declared message of every
// built-in and of the reference's specs (read in place from ../shared: missing, they fail unless
// AIGENORA_SKIP_CORPORA=1), a message with every field at its largest — strings of control characters,
// which JSON escapes to six bytes each — is valid, and its signed frame line fits DEFAULT_MAX_FRAME_BYTES.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { DEFAULT_MAX_FRAME_BYTES } from '../../ts/engine/session.js';
import { BUILTINS, builtinDir } from '../../ts/protocols/index.js';
import { MessageValidator, type FieldSchema, type Spec } from '../../ts/spec/index.js';

const REF = new URL('../../../shared/reference/aigenora-src/src/aigenora/protocols/', import.meta.url).pathname;
const specs: [string, string][] = BUILTINS.map((b) => [b.alias, readFileSync(join(builtinDir(b), 'spec.json'), 'utf8')]);
const haveRef = needShared('reference/aigenora-src/src/aigenora/protocols', "the reference's built-in specs");
const refSpecs: [string, string][] = [];
if (haveRef)
  for (const a of readdirSync(REF).filter((d) => /^[0-9a-f]{8}$/.test(d)))
    for (const b of readdirSync(join(REF, a))) refSpecs.push([`reference ${a}`, readFileSync(join(REF, a, b, 'spec.json'), 'utf8')]);
// Skipped (AIGENORA_SKIP_CORPORA=1), one placeholder row stands for them so the totals count the skip.
else refSpecs.push(["the reference's specs", '']);

/** A string of `bytes` UTF-8 bytes that JSON writes six times as long. */
const escaped = (bytes: number) => '\u0001'.repeat(bytes);

function largest(f: FieldSchema): unknown {
  switch (f.type) {
    case 'integer':
      // Unbounded: the longest literal Python's json reads (4300 digits).
      return f.max !== undefined ? f.max : BigInt('9'.repeat(4300));
    case 'enum':
      return (f.values ?? []).reduce((a, b) => (b.length > a.length ? b : a), '');
    case 'boolean':
      return false;
    case 'hash':
    case 'key':
      return 'f'.repeat(64);
    case 'nonce':
      return 'f'.repeat(64);
    case 'signature':
      return 'f'.repeat(128);
    case 'id':
      return 'x'.repeat(128);
    case 'ticket':
      return escaped(2048);
    case 'text':
      return escaped(f.max_length ?? 2000);
    case 'ot_blob':
      return escaped(f.max_length ?? 16384);
    case 'ciphertext':
      return 'ff'.repeat(Math.floor((f.max_length ?? 512) / 2));
    case 'array': {
      // As many elements as allowed, sharing the total byte budget.
      const total = f.max_total_bytes ?? 262144;
      const it = f.items!;
      const n = f.max_items ?? Math.max(f.min_items ?? 0, 64);
      const share = Math.floor(total / n);
      const item =
        it.type === 'ciphertext'
          ? 'ff'.repeat(Math.floor(Math.min(it.max_length ?? 512, share) / 2))
          : it.type === 'text' || it.type === 'ot_blob'
            ? escaped(Math.min(it.max_length ?? (it.type === 'text' ? 2000 : 16384), share))
            : largest(it);
      return Array.from({ length: n }, () => item);
    }
    case 'json': {
      // A string filling the canonical limit (six bytes per escaped byte), in the container asked for.
      const fill = (overhead: number) => escaped(Math.floor(((f.max_total_bytes ?? 1048576) - overhead) / 6));
      return f.container === 'object' ? { s: fill(8) } : f.container === 'array' ? [fill(4)] : fill(2);
    }
  }
}

const stringify = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `@@${x}@@` : x)).replace(/"@@(-?\d+)@@"/g, '$1');

function leavesRoom(text: string): void {
  const spec = JSON.parse(text) as Spec;
  const v = new MessageValidator(spec, { specText: text });
  for (const m of spec.messages) {
    const msg = Object.fromEntries(Object.entries(m.fields).map(([k, f]) => [k, k === 'action' ? f.values![0] : largest(f)]));
    const body = stringify(msg);
    const check = v.checkText(body, undefined, m.name);
    expect(check.ok, `${m.name}: ${JSON.stringify(check.ok ? '' : check.errors.slice(0, 3))}`).toBe(true);
    const line = `{"v":2,"sid":"${'f'.repeat(64)}","from":"guest","seq":999999999,"prev":"${'f'.repeat(64)}","ack":"${'f'.repeat(64)}","msg":${body},"sig":"${'f'.repeat(128)}"}`;
    expect(new TextEncoder().encode(line).length, m.name).toBeLessThanOrEqual(DEFAULT_MAX_FRAME_BYTES);
  }
}

describe('frame limit', () => {
  it.each(specs)('leaves room for the largest messages of %s', (_name, text) => leavesRoom(text));
  it.skipIf(!haveRef).each(refSpecs)('leaves room for the largest messages of %s', (_name, text) => leavesRoom(text));
});
