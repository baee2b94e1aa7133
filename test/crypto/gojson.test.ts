// Go encoding/json canonical form (rin.host/v2 digests). Expected outputs come from a real Go program
// (test-vectors/rin/gen, see the file's `source`) and from the reference conformance corpus; nothing
// here is computed by the code under test.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { need } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import {
  canonicalGoJson,
  GO_MAX_BYTES,
  compareUtf8,
  GoJsonError,
  goJsonEncode,
  goJsonString,
  parseWireJson,
  RawJson,
  type WireNode,
} from '../../ts/crypto/gojson.js';

interface GoVector {
  id: string;
  description?: string;
  text?: string;
  hex?: string;
  canonical?: string;
  error?: string;
  go_error?: string;
}

const doc = JSON.parse(readFileSync(new URL('../../test-vectors/rin/gojson.json', import.meta.url), 'utf8')) as { source: string; cases: GoVector[] };
const cases = doc.cases;

const corpusDir = new URL('../../../shared/conformance/rin-reference/', import.meta.url);
function corpus(name: string): Array<{ id: string; expect: Record<string, unknown>; [k: string]: unknown }> {
  const file = new URL(name, corpusDir);
  // A missing corpus fails loudly: these cases are the reference's own canonical outputs.
  if (!existsSync(file)) throw new Error(`conformance corpus missing: ${file.pathname} (../shared/conformance/rin-reference)`);
  return JSON.parse(readFileSync(file, 'utf8')).cases;
}

function input(v: GoVector): string | Uint8Array {
  if (v.hex !== undefined) return Uint8Array.from(Buffer.from(v.hex, 'hex'));
  return v.text!;
}

function fault(f: () => unknown): GoJsonError {
  try {
    f();
  } catch (e) {
    expect(e, String(e)).toBeInstanceOf(GoJsonError);
    return e as GoJsonError;
  }
  throw new Error('expected a GoJsonError, got a result');
}

describe('Go canonical JSON vectors (from Go encoding/json)', () => {
  it('the file says where its expectations come from and covers each outcome', () => {
    expect(doc.source).toMatch(/go run/);
    const outcomes = new Set(cases.map((c) => c.error ?? 'ok'));
    for (const k of ['ok', 'JSON_UTF8', 'JSON_SYNTAX', 'JSON_TRAILING', 'JSON_DEPTH', 'JSON_SURROGATE', 'JSON_DUPLICATE']) expect(outcomes).toContain(k);
    expect(cases.length).toBeGreaterThan(100);
  });

  for (const v of cases) {
    it(`${v.id}: ${v.description ?? ''}`, () => {
      const text = input(v);
      if (v.error === undefined) {
        const { root } = parseWireJson(text);
        const out = canonicalGoJson(typeof text === 'string' ? text : new TextDecoder().decode(text));
        expect(out).toBe(v.canonical);
        expect(root.kind).toBeTypeOf('string');
      } else {
        const f = fault(() => parseWireJson(text));
        expect(f.code).toBe(v.error);
        // Where the reference's own wording is specific, it is ours too.
        if (v.error === 'JSON_DUPLICATE' || v.error === 'JSON_SURROGATE') expect(f.message).toBe(v.go_error);
        if (typeof text === 'string') expect(fault(() => canonicalGoJson(text)).code).toBe(v.error);
      }
    });
  }
});

describe('reference conformance corpus (canonicalization only)', () => {
  it('action-request-digest: normalized_arguments is the canonical form of the raw arguments text', () => {
    const all = corpus('action-request-digest.json');
    expect(all.length).toBeGreaterThanOrEqual(40);
    for (const c of all) {
      const { text, root } = parseWireJson(c['request_json'] as string);
      const args = member(root, 'arguments');
      expect(canonicalGoJson(text.slice(args.start, args.end)), c.id).toBe(c.expect['normalized_arguments']);
    }
  });

  it('schema-canonicalization: accepted documents canonicalize to expect.canonical, hashing to expect.sha256', () => {
    const all = corpus('schema-canonicalization.json');
    const accepted = all.filter((c) => typeof c.expect['canonical'] === 'string');
    expect(accepted.length).toBeGreaterThanOrEqual(20);
    for (const c of accepted) {
      const out = canonicalGoJson(c['document'] as string);
      expect(out, c.id).toBe(c.expect['canonical']);
      expect(createHash('sha256').update(out, 'utf8').digest('hex'), c.id).toBe(c.expect['sha256']);
    }
  });

  it("schema-canonicalization: documents the reference refuses as JSON are refused with the reference's message", () => {
    const jsonFaults = /^(must be valid UTF-8 JSON|must contain well-formed escaped Unicode|duplicate object name )/;
    const refused = corpus('schema-canonicalization.json').filter((c) => {
      const e = c.expect['error'] as { field: string; message: string } | undefined;
      return e && e.field === 'schema.document' && jsonFaults.test(e.message);
    });
    expect(refused.length).toBeGreaterThanOrEqual(6);
    for (const c of refused) {
      const e = c.expect['error'] as { message: string };
      expect(fault(() => canonicalGoJson(c['document'] as string)).message, c.id).toBe(e.message);
    }
  });

  it('action-request-validation: a fault inside arguments is refused with a path naming arguments', () => {
    const bad = corpus('action-request-validation.json').filter((c) => {
      const e = c.expect['error'] as { field: string; message: string } | undefined;
      return e && e.field === 'arguments' && /^(duplicate object name |must contain well-formed)/.test(e.message);
    });
    expect(bad.length).toBeGreaterThanOrEqual(4);
    for (const c of bad) {
      const f = fault(() => parseWireJson(c['request_json'] as string));
      expect(f.path[0], c.id).toBe('arguments');
      expect(f.message, c.id).toBe((c.expect['error'] as { message: string }).message);
    }
  });
});

function member(node: WireNode, name: string): WireNode {
  if (node.kind !== 'object') throw new Error('not an object');
  const m = node.members.find(([n]) => n === name);
  if (!m) throw new Error(`no member ${name}`);
  return m[1];
}

describe('parseWireJson', () => {
  it('keeps raw offsets and lexemes of sub-documents', () => {
    const text = '{"a" : [1.0, {"b":-0}] ,"c":"\\u00e9"}';
    const { root } = parseWireJson(text);
    const a = member(root, 'a');
    expect(text.slice(a.start, a.end)).toBe('[1.0, {"b":-0}]');
    expect(a.kind === 'array' && a.items[0]).toMatchObject({ kind: 'number', lexeme: '1.0' });
    expect(member(root, 'c')).toMatchObject({ kind: 'string', value: 'é', start: 28, end: 36 });
  });

  it('names the path of the fault', () => {
    expect(fault(() => parseWireJson('{"x":[1,{"y":1,"y":2}]}')).path).toEqual(['x', 1, 'y']);
    expect(fault(() => parseWireJson('{"x":[1,{"y":"\\ud800"}]}')).path).toEqual(['x', 1, 'y']);
    expect(fault(() => parseWireJson('{"x":[1,{"y":tru}]}')).path).toEqual(['x', 1, 'y']);
    expect(fault(() => parseWireJson('[[0],[1,2,x]]')).path).toEqual([1, 2]);
  });

  it('refuses a string with a lone surrogate code unit as not UTF-8, before parsing', () => {
    expect(fault(() => parseWireJson('{"a":"\ud800"}')).code).toBe('JSON_UTF8');
    expect(fault(() => parseWireJson('[1,\udc00')).code).toBe('JSON_UTF8');
  });

  it('bounds size before anything else, in UTF-8 bytes, and depth where asked', () => {
    expect(fault(() => parseWireJson('"ééé"', { maxBytes: 7 })).code).toBe('JSON_SIZE');
    expect(parseWireJson('"ééé"', { maxBytes: 8 }).root).toMatchObject({ value: 'ééé' });
    expect(fault(() => parseWireJson(new Uint8Array(9).fill(0xff), { maxBytes: 8 })).code).toBe('JSON_SIZE');
    expect(fault(() => parseWireJson('[[[1]]]', { maxDepth: 2 })).code).toBe('JSON_DEPTH');
    expect(parseWireJson('[[[1]]]', { maxDepth: 3 }).root.kind).toBe('array');
  });

  it('keeps a byte-order mark of byte input, which is then a syntax fault', () => {
    expect(fault(() => parseWireJson(Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d))).code).toBe('JSON_SYNTAX');
  });
});

describe('goJsonString and compareUtf8', () => {
  it('escapes as Go does', () => {
    expect(goJsonString('<&>\u2028\u2029\x7f\x00\x1f\b\t"\\é😀/')).toBe('"\\u003c\\u0026\\u003e\\u2028\\u2029\x7f\\u0000\\u001f\\b\\t\\"\\\\é😀/"');
    expect(fault(() => goJsonString('\udc00')).code).toBe('JSON_UTF8');
  });

  it('orders by code point, unlike UTF-16', () => {
    expect(compareUtf8('\ufb01', '😀')).toBeLessThan(0);
    expect('\ufb01' < '😀').toBe(false);
    expect(['b', '', '😀', '\ue000', 'ab', 'a'].sort(compareUtf8)).toEqual(['', 'a', 'ab', 'b', '\ue000', '😀']);
  });
});

describe('goJsonEncode', () => {
  it('writes members in insertion order, drops undefined members, writes RawJson verbatim', () => {
    expect(goJsonEncode({ z: 1, a: [true, null, 'x<y'], u: undefined, r: new RawJson('{"b":1.0}') })).toBe('{"z":1,"a":[true,null,"x\\u003cy"],"r":{"b":1.0}}');
  });

  it('writes numbers as Go writes integers and float64', () => {
    expect(goJsonEncode([0, -0, 9007199254740991, -9007199254740991, 1.5, 1.5e-7, 0.000001, 123456.789, 10n ** 20n])).toBe(
      '[0,0,9007199254740991,-9007199254740991,1.5,1.5e-7,0.000001,123456.789,100000000000000000000]',
    );
  });

  it('refuses what has no Go JSON form', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    for (const bad of [NaN, Infinity, 2 ** 53, [undefined], () => 1, Symbol('s'), new Map(), new Date(0), cyclic, { a: { b: [1, { c: Infinity }] } }]) {
      expect(fault(() => goJsonEncode(bad)).code).toBe('JSON_VALUE');
    }
    expect(fault(() => goJsonEncode({ a: { b: [1, { c: NaN }] } })).path).toEqual(['a', 'b', 1, 'c']);
    expect(fault(() => goJsonEncode({ '\ud800': 1 })).code).toBe('JSON_UTF8');
    let deep: unknown = 1;
    for (let i = 0; i < 1001; i++) deep = [deep];
    expect(fault(() => goJsonEncode(deep)).code).toBe('JSON_DEPTH');
  });
});

describe.each(['wasm', 'js'])('Crypto.goCanonicalJson, %s backend', (name) => {
  const c = getCrypto(name);
  const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

  it('gives the Go canonical bytes and their SHA-256 for every text vector', () => {
    let checked = 0;
    for (const v of cases) {
      if (v.text === undefined) continue;
      const text = v.text;
      if (v.error === undefined) {
        expect(new TextDecoder().decode(c.goCanonicalJson(text)), v.id).toBe(v.canonical);
        expect(hex(c.goCanonicalJsonSha256(text)), v.id).toBe(sha(v.canonical!));
      } else {
        const f = fault(() => c.goCanonicalJson(text));
        expect(f.code, v.id).toBe(v.error);
        // The same path and message as the TypeScript parser, whichever backend did the work.
        const ts = fault(() => canonicalGoJson(text));
        expect([f.path, f.message], v.id).toEqual([ts.path, ts.message]);
        expect(fault(() => c.goCanonicalJsonSha256(text)).code, v.id).toBe(v.error);
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('gives the normalized arguments of the reference corpus', () => {
    for (const k of corpus('action-request-digest.json')) {
      const { text, root } = parseWireJson(k['request_json'] as string);
      const args = member(root, 'arguments');
      expect(new TextDecoder().decode(c.goCanonicalJson(text.slice(args.start, args.end))), k.id).toBe(k.expect['normalized_arguments']);
    }
  });

  it('names the fault path and the reference message on this backend too', () => {
    const f = fault(() => c.goCanonicalJson('{"a\\n<":[0,{"b":1,"b":2}]}'));
    expect([f.code, f.path, f.message]).toEqual(['JSON_DUPLICATE', ['a\n<', 1, 'b'], 'duplicate object name "b"']);
  });

  it('refuses a lone surrogate code unit (JSON_UTF8) and an oversized text (JSON_SIZE) before parsing', () => {
    expect(fault(() => c.goCanonicalJson('{"a":"\ud800"}')).code).toBe('JSON_UTF8');
    // Over the bound and malformed: size is judged first.
    expect(fault(() => c.goCanonicalJson('"' + 'x'.repeat(GO_MAX_BYTES))).code).toBe('JSON_SIZE');
    expect(fault(() => c.goCanonicalJson('"' + 'é'.repeat(GO_MAX_BYTES / 2))).code).toBe('JSON_SIZE');
  });
});

describe('wasm instance after gojson errors', () => {
  it('keeps working after every kind of refusal', () => {
    const wasm = getCrypto('wasm');
    // Duplicate, escaped lone surrogate, syntax, trailing text, depth, raw lone surrogate, empty.
    const bad = ['{"a":1,"a":2}', '["\\ud800"]', '[1,]', '{} x', '['.repeat(10001), '"\ud800"', ''];
    for (const text of bad) {
      expect(fault(() => wasm.goCanonicalJson(text)).code).toMatch(/^JSON_/);
    }
    expect(new TextDecoder().decode(wasm.goCanonicalJson('{"b":[1.0],"a":"<"}'))).toBe('{"a":"\\u003c","b":[1.0]}');
    const seed = new Uint8Array(32).fill(3);
    const msg = new TextEncoder().encode('alive');
    expect(wasm.ed25519Verify(wasm.ed25519PublicKey(seed), msg, wasm.ed25519Sign(seed, msg))).toBe(true);
  });
});

// Fragments that make texts right and wrong in every way the parser distinguishes.
const piece = fc.constantFrom(
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  ' ',
  '\n',
  '"a"',
  '"b"',
  '"ab"',
  '"a\\u0062"',
  '"\\/"',
  '"/"',
  '"\\ud83d\\ude00"',
  '"😀"',
  '"\ufb01"',
  '"\\ud800"',
  '"\\udc00"',
  '"\\ud800\\u0041"',
  '"<&>"',
  '"\u2028"',
  '"\\u0000\\b\\f"',
  '"\x7f"',
  '1',
  '1.0',
  '-0',
  '1e400',
  '01',
  '1.',
  'true',
  'tru',
  'null',
  '"a\tb"',
  '"\\x"',
  '"',
  '\\',
);
const randomText = fc.oneof(
  fc.array(piece, { maxLength: 16 }).map((p) => p.join('')),
  // Objects and arrays that are usually well formed, with repeated names now and then.
  fc.letrec<{ v: string }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      piece,
      fc.array(tie('v'), { maxLength: 4 }).map((a) => `[${a.join(',')}]`),
      fc
        .array(fc.tuple(fc.constantFrom('"a"', '"b"', '"a\\u0062"', '"ab"', '"\ufb01"', '"😀"', '"\\ud800"', '"<"'), tie('v')), { maxLength: 4 })
        .map((m) => `{${m.map(([k, v]) => `${k}:${v}`).join(',')}}`),
    ),
  })).v,
);

describe('random texts: both backends agree, and the grammar agrees with JSON.parse', () => {
  const RUNS = Number(process.env['AIGENORA_FUZZ_RUNS'] ?? 1000);
  const wasm = getCrypto('wasm');
  const js = getCrypto('js');
  const outcome = (c: ReturnType<typeof getCrypto>, t: string) => {
    try {
      return Buffer.from(c.goCanonicalJson(t)).toString('utf8');
    } catch (e) {
      const g = e as GoJsonError;
      expect(g).toBeInstanceOf(GoJsonError);
      return { code: g.code, path: g.path, message: g.message };
    }
  };

  it('same bytes or same fault (code, path, message) on wasm and js', () => {
    let accepted = 0;
    fc.assert(
      fc.property(randomText, (t) => {
        const a = outcome(wasm, t);
        expect(a).toEqual(outcome(js, t));
        let parsed: unknown;
        let grammatical = true;
        try {
          parsed = JSON.parse(t);
        } catch {
          grammatical = false;
        }
        if (typeof a === 'string') {
          accepted++;
          expect(grammatical).toBe(true);
          // Same value, unless number lexemes round differently (1e400) in JSON.parse.
          if (!/e400/.test(t)) expect(JSON.parse(a)).toEqual(parsed);
        } else if (!grammatical) expect(['JSON_SYNTAX', 'JSON_TRAILING']).toContain(a.code);
        else expect(['JSON_SURROGATE', 'JSON_DUPLICATE']).toContain(a.code);
      }),
      { numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(RUNS / 20);
  });
});

// Go itself as the oracle for random texts: test-vectors/rin/gen judges them with encoding/json.
const hasGo = need('Go (`go` on the PATH: the oracle of the differential test)', () => spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0, {
  how: 'install Go (https://go.dev/dl/; scripts/lib/rin-reference.sh needs it too)',
});

describe.skipIf(!hasGo)('random texts judged by Go encoding/json', () => {
  it('every random text gets the canonical bytes or the fault class Go gives it', () => {
    const n = Number(process.env['AIGENORA_FUZZ_RUNS'] ?? 1000) * 2;
    const texts = fc.sample(randomText, { numRuns: n, seed: 15 });
    const run = spawnSync('go', ['run', '.', '-stdin'], {
      cwd: new URL('../../test-vectors/rin/gen/', import.meta.url),
      input: JSON.stringify(texts),
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      timeout: 240_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const judged = JSON.parse(run.stdout) as GoVector[];
    expect(judged.length).toBe(texts.length);
    const c = getCrypto('wasm');
    let accepted = 0;
    texts.forEach((t, i) => {
      const want = judged[i]!;
      if (want.error === undefined) {
        accepted++;
        expect(new TextDecoder().decode(c.goCanonicalJson(t)), t).toBe(want.canonical);
      } else {
        const f = fault(() => c.goCanonicalJson(t));
        expect(f.code, t).toBe(want.error);
        if (want.error === 'JSON_DUPLICATE' || want.error === 'JSON_SURROGATE') expect(f.message, t).toBe(want.go_error);
        expect(fault(() => canonicalGoJson(t)).code, t).toBe(want.error);
      }
    });
    expect(accepted).toBeGreaterThan(n / 20);
  }, 300_000);
});
