// `aigenora conformance` exit codes and recognition, on small corpora made here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../shared/tmp.js';

const BIN = new URL('../../bin/aigenora.mjs', import.meta.url).pathname;
const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, [BIN, 'conformance', ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const dir = tempDir('conformance');
// RFC 8032 TEST 1, in the RFC 8032 JSON shape.
const test1 = {
  name: '1',
  secretKey: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
  publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
  message: '',
  signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
};

describe('aigenora conformance', () => {
  it('passes a good file on both backends and prints the closing line', () => {
    writeFileSync(join(dir, 'good.json'), JSON.stringify([test1]));
    const r = run(join(dir, 'good.json'));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/\[rfc8032 ed25519\] {2}wasm 1\/1 {2}js 1\/1/);
    expect(r.out.trim().split('\n').at(-1)).toBe('2 passed, 0 failed');
  });

  it('exits 1 when a case fails its expectation', () => {
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ ...test1, signature: test1.signature.replace(/^e5/, 'e6') }]));
    const r = run(join(dir, 'bad.json'), '--backend', 'js');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FAIL /m);
    expect(r.out.trim().split('\n').at(-1)).toBe('0 passed, 1 failed');
  });

  it('checks an RFC 8785 folder, including invalid/ inputs that must be refused', () => {
    const f = join(dir, 'jcs');
    for (const d of ['input', 'output', 'invalid']) mkdirSync(join(f, d), { recursive: true });
    writeFileSync(join(f, 'input', 'a.json'), '{"b": 1.0, "a": "x"}');
    writeFileSync(join(f, 'output', 'a.json'), '{"a":"x","b":1}');
    writeFileSync(join(f, 'invalid', 'dup.json'), '{"a": 1, "a": 2}');
    const r = run(f);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/\[rfc8785 testdata\] {2}wasm 2\/2 {2}js 2\/2/);
  });

  it('exits 2 for an unreadable path or a named file in no known format', () => {
    expect(run(join(dir, 'does-not-exist')).code).toBe(2);
    writeFileSync(join(dir, 'notes.json'), '{"hello": "world"}');
    const r = run(join(dir, 'notes.json'));
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/not a test-vector format/);
    expect(run('--backend', 'rust').code).toBe(2);
  });
});
