// `aigenora conformance` exit codes, recognition and counting, on small corpora made here, and on
// the real corpus (a missing one fails, unless AIGENORA_SKIP_CORPORA=1 asks to skip it).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CORPUS } from '../../ts/cli/conformance.js';
import { tempDir } from '../shared/tmp.js';
import { needShared } from '../shared/require.js';

import { cli } from '../shared/cli.js';
const run = async (...args: string[]) => {
  const r = await cli(['conformance', ...args]);
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const last = (out: string) => out.trim().split('\n').at(-1);
const dir = tempDir('conformance');
const folder = (name: string) => {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  return d;
};
// RFC 8032 TEST 1, in the RFC 8032 JSON shape.
const test1 = {
  name: '1',
  secretKey: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
  publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
  message: '',
  signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
};
// The same vector as a line of sign.input: seed||pk : pk : message : signature||message :
const test1Line = `${test1.secretKey}${test1.publicKey}:${test1.publicKey}::${test1.signature}:\n`;

const DECK = join(DEFAULT_CORPUS, 'aigenora-reference', 'aigenora-mp-deck-vectors.json');
const haveDeck = needShared('conformance/aigenora-reference/aigenora-mp-deck-vectors.json', "the reference's mental-poker deck vectors");
const haveCorpus = needShared('conformance', 'the conformance corpora (`aigenora conformance` with no PATH reads them)');

describe('aigenora conformance', () => {
  it.skipIf(!haveDeck)('checks the mental-poker deck vectors, and fails a case whose blob was altered', async () => {
    if (!existsSync(DECK)) throw new Error(`${DECK} is absent; set AIGENORA_SKIP_CORPORA=1 to skip`);
    const good = await run(DECK);
    expect(good.code, good.err).toBe(0);
    expect(good.out).toMatch(/\[aigenora-mp-deck-vectors\/1\] {2}20 cases {2}wasm 20\/20 {2}js 20\/20/);
    const doc = JSON.parse(readFileSync(DECK, 'utf8')) as { cases: { kind: string; blob_b?: string }[] };
    const layer = doc.cases.find((c) => c.kind === 'layers')!;
    layer.blob_b = `${layer.blob_b!.slice(0, -2)}${layer.blob_b!.endsWith('00') ? '01' : '00'}`;
    writeFileSync(join(dir, 'deck-altered.json'), JSON.stringify(doc));
    const bad = await run(join(dir, 'deck-altered.json'));
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/wasm 19\/20 {2}js 19\/20/);
  });

  it('passes a good file on both backends and counts its case once', async () => {
    writeFileSync(join(dir, 'good.json'), JSON.stringify([test1]));
    const r = await run(join(dir, 'good.json'));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/\[rfc8032 ed25519\] {2}1 cases {2}wasm 1\/1 {2}js 1\/1/);
    expect(last(r.out)).toBe('1 passed, 0 failed');
    expect(last((await run(join(dir, 'good.json'), '--backend', 'js')).out)).toBe('1 passed, 0 failed');
  });

  it('counts a case two files hold once, whatever their formats', async () => {
    const d = folder('twice');
    writeFileSync(join(d, 'a.json'), JSON.stringify([test1]));
    writeFileSync(join(d, 'b.json'), JSON.stringify([test1]));
    writeFileSync(join(d, 'c.txt'), test1Line);
    const r = await run(d);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/b\.json {2}\[rfc8032 ed25519\] {2}1 cases {2}wasm 0\/0 {2}js 0\/0 {2}\(all repeat cases counted before\)/);
    expect(r.out).toMatch(/c\.txt {2}\[ed25519 sign\.input\] {2}1 cases .*\(all repeat/);
    expect(last(r.out)).toBe('1 passed, 0 failed');
  });

  it('exits 1 when a case fails its expectation', async () => {
    writeFileSync(join(dir, 'bad.json'), JSON.stringify([{ ...test1, signature: test1.signature.replace(/^e5/, 'e6') }]));
    const r = await run(join(dir, 'bad.json'), '--backend', 'js');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FAIL /m);
    expect(last(r.out)).toBe('0 passed, 1 failed');
  });

  it('checks an RFC 8785 folder, including invalid/ inputs that must be refused', async () => {
    const f = join(dir, 'jcs');
    for (const d of ['input', 'output', 'invalid']) mkdirSync(join(f, d), { recursive: true });
    writeFileSync(join(f, 'input', 'a.json'), '{"b": 1.0, "a": "x"}');
    writeFileSync(join(f, 'output', 'a.json'), '{"a":"x","b":1}');
    writeFileSync(join(f, 'invalid', 'dup.json'), '{"a": 1, "a": 2}');
    const r = await run(f);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/\[rfc8785 testdata\] {2}2 cases {2}wasm 2\/2 {2}js 2\/2/);
    expect(last(r.out)).toBe('2 passed, 0 failed');
  });

  it('exits 2 for an unreadable path or a named file in no known format', async () => {
    expect((await run(join(dir, 'does-not-exist'))).code).toBe(2);
    writeFileSync(join(dir, 'notes.json'), '{"hello": "world"}');
    const r = await run(join(dir, 'notes.json'));
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/not a test-vector format/);
    expect((await run('--backend', 'rust')).code).toBe(2);
  });

  it('exits 2 when a folder holds no test vectors at all', async () => {
    const r = await run(folder('empty'));
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^ERR {2}no test-vector file found in /m);
    const docs = folder('only-docs');
    writeFileSync(join(docs, 'README.md'), '# nothing here\n');
    expect((await run(docs)).code).toBe(2);
  });

  it('exits 2 for a file under a folder that is in no known format, while still running the rest', async () => {
    const d = folder('stray');
    writeFileSync(join(d, 'good.json'), JSON.stringify([test1]));
    writeFileSync(join(d, 'notes.json'), '{"hello": "world"}');
    writeFileSync(join(d, 'LICENSE'), 'MIT');
    const r = await run(d);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^ERR {2}.*stray\/notes\.json: not a test-vector format this command knows$/m);
    expect(r.out).toMatch(/^ok {3}.*good\.json/m);
    expect(r.out).toMatch(/^skip 1 documentation files$/m);
  });

  it('holds a corpus folder to the files and case counts its README gives', async () => {
    // A corpus folder whose RFC 8032 file lost four of its five vectors and whose other files are gone.
    const c = folder('corpus');
    mkdirSync(join(c, 'rfc8032'));
    writeFileSync(join(c, 'rfc8032', 'ed25519.json'), JSON.stringify([test1]));
    const r = await run(c);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^ERR {2}.*corpus\/rfc8032\/ed25519\.json: 1 cases \[rfc8032 ed25519\]; the corpus has 5 \[rfc8032 ed25519\] there$/m);
    expect(r.out).toMatch(/^ERR {2}.*corpus\/wycheproof\/testvectors_v1\/ed25519_test\.json: missing from the corpus$/m);
    // Files the corpus lists as not vectors are skipped with the reason, unless named.
    mkdirSync(join(c, 'wycheproof', 'schemas'), { recursive: true });
    writeFileSync(join(c, 'wycheproof', 'schemas', 'x.json'), '{}');
    expect((await run(c)).out).toMatch(/^skip .*corpus\/wycheproof\/schemas: JSON schemas of the Wycheproof files$/m);
    expect((await run(join(c, 'wycheproof', 'schemas', 'x.json'))).code).toBe(2);
  });

  it.skipIf(!haveCorpus)('passes the real corpus with every file at the count its README gives', async () => {
    const r = await cli(['conformance', '--json']);
    expect(r.status, r.stdout.slice(-2000)).toBe(0);
    const report = JSON.parse(r.stdout) as {
      suites: { path: string; total: number; repeated: number; failed: number; passed: Record<string, number> }[];
      errors: string[];
      passed: number;
      failed: number;
    };
    // The counts of ../shared/conformance/README.md's table (cases.txt repeats cases.json; the seven
    // sample lines of the ES6 file's README are the eighth file).
    const readme: Record<string, number> = {
      'wycheproof/testvectors_v1/ed25519_test.json': 151,
      'wycheproof/testvectors_v1/chacha20_poly1305_test.json': 325,
      'wycheproof/testvectors_v1/xchacha20_poly1305_test.json': 315,
      'wycheproof/testvectors_v1/x25519_test.json': 518,
      'ed25519-speccheck/cases.json': 12,
      'ed25519-speccheck/cases.txt': 12,
      'cctv-ed25519/ed25519vectors.json': 914,
      'rfc8032/ed25519.json': 5,
      'noble-ed25519/vectors.txt': 1024,
      'rfc8439/chacha20_poly1305_aead.json': 2,
      'json-canonicalization/testdata': 6,
      'json-canonicalization/es6numbers/es6testfile_first10000.txt': 10_000,
      'json-canonicalization/es6numbers/readme_sample_lines.txt': 7,
      // aigenora-reference/README.md: 10 layers, 2 encode_card, 6 validate_play, 2 brute_force_open.
      'aigenora-reference/aigenora-mp-deck-vectors.json': 20,
      // The same README's table: 15 OT, 11 receipt and 29 audit cases.
      'aigenora-reference/aigenora-mp-ot-vectors.json': 15,
      'aigenora-reference/aigenora-mp-receipt-vectors.json': 11,
      'aigenora-reference/aigenora-mp-audit-vectors.json': 29,
      // rt-hash: ruleset, match config, a host session, frame hashes, handshake, two quirks, verify_frame, canonical JSON.
      'aigenora-reference/aigenora-rt-hash-vectors.json': 9,
      // group: json_delta, json_delta_apply, admission, admission_handshake, session, session_quirk, checkpoint, canonical_json.
      'aigenora-reference/aigenora-group-vectors.json': 8,
      // box: 8 convert, 5 seal (each with 8 tampered copies), 1 decrypt_only; pow: 6 (pow, register, rest_auth each).
      'aigenora-reference/aigenora-box-vectors.json': 14,
      'aigenora-reference/aigenora-pow-vectors.json': 6,
      // rin-reference/README.md: ten kinds of rin.host/v2 vectors.
      'rin-reference/capability-digest.json': 40,
      'rin-reference/capability-validation.json': 40,
      'rin-reference/action-request-digest.json': 40,
      'rin-reference/action-request-validation.json': 39,
      'rin-reference/effect-digest.json': 40,
      'rin-reference/schema-canonicalization.json': 40,
      'rin-reference/manifest-validation.json': 40,
      'rin-reference/durability-validation.json': 40,
      'rin-reference/epoch-fencing.json': 36,
      'rin-reference/action-run-transition.json': 40,
    };
    const got = Object.fromEntries(report.suites.map((s) => [s.path.replace(/^.*shared\/conformance\//, ''), s.total]));
    expect(got).toEqual(readme);
    expect(report.errors).toEqual([]);
    expect(report.failed).toBe(0);
    const speccheckText = report.suites.find((s) => s.path.endsWith('cases.txt'))!;
    expect(speccheckText.repeated).toBe(12);
    // Every group case runs and passes on both backends, the session and its quirk included.
    const group = report.suites.find((s) => s.path.endsWith('aigenora-group-vectors.json'))!;
    expect([group.passed, group.failed, group.repeated]).toEqual([{ wasm: 8, js: 8 }, 0, 0]);
    // Each distinct case once: the files' cases less those repeated from an earlier file.
    const distinct = report.suites.reduce((n, s) => n + s.total - s.repeated, 0);
    expect(report.passed).toBe(distinct);
    // Less than the files' cases less cases.txt's twelve: sign.input and the ES6 samples repeat others too.
    expect(distinct).toBeLessThan(Object.values(readme).reduce((a, b) => a + b, 0) - 12);
  });
});
