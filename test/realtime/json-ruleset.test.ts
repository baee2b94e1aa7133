// Realtime canonical JSON beyond the corpus (what JS values become, what is refused), the lossless
// reader, and the ruleset hash of a folder on disk walked as the reference walks it.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { utf8 } from '../../ts/crypto/encoding.js';
import { RealtimeError } from '../../ts/realtime/errors.js';
import { parseRealtimeJson, plainValue, rtCanonical, rtJsonHash } from '../../ts/realtime/json.js';
import { inRuleset, rulesetHash, rulesetHashOfSpec } from '../../ts/realtime/ruleset.js';
import { rulesetHashOfDir } from '../../ts/realtime/ruleset-dir.js';

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    if (e instanceof RealtimeError) return e.code;
    throw e;
  }
  return undefined;
};

describe('realtime canonical JSON', () => {
  it('writes numbers as the wire carries them: integers below 1e21 as integers, others in Python float repr', () => {
    expect(rtCanonical({ b: 1, a: [0.5, -0, 1e21, 1e20, 123456789012345678901234567890n, 1e-7] })).toBe(
      '{"a":[0.5,0,1e+21,100000000000000000000,123456789012345678901234567890,1e-07],"b":1}',
    );
  });

  it('sorts keys by code point and writes non-ASCII raw', () => {
    expect(rtCanonical({ '\u{1F600}': 1, '\uff61': 2, é: 3, Z: 4 })).toBe('{"Z":4,"é":3,"｡":2,"😀":1}');
    expect(rtCanonical('\u2028\x7f\x01')).toBe('"\u2028\x7f\\u0001"');
  });

  it('refuses what JSON cannot carry, each with its code', () => {
    expect(code(() => rtCanonical({ x: NaN }))).toBe('RT_JSON_NOT_FINITE');
    expect(code(() => rtCanonical([Infinity]))).toBe('RT_JSON_NOT_FINITE');
    expect(code(() => rtCanonical({ x: undefined }))).toBe('RT_JSON_UNSUPPORTED');
    expect(code(() => rtCanonical({ x: () => 1 }))).toBe('RT_JSON_UNSUPPORTED');
    expect(code(() => rtCanonical(new Map()))).toBe('RT_JSON_UNSUPPORTED');
    expect(code(() => rtCanonical(new Date(0)))).toBe('RT_JSON_UNSUPPORTED');
    expect(code(() => rtCanonical({ '\ud800': 1 }))).toBe('RT_JSON_LONE_SURROGATE');
    expect(code(() => rtCanonical('a\udc00'))).toBe('RT_JSON_LONE_SURROGATE');
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(code(() => rtCanonical(cyclic))).toBe('RT_JSON_TOO_DEEP');
  });

  it('reads a peer message losslessly, so 1.0 and big integers hash as the peer wrote them', () => {
    const v = parseRealtimeJson('{"f":1.0,"big":12345678901234567890,"n":-0,"__proto__":{"x":2.50}}');
    expect(rtCanonical(v)).toBe('{"__proto__":{"x":2.5},"big":12345678901234567890,"f":1.0,"n":0}');
    expect(plainValue(v)).toEqual({ f: 1, big: 12345678901234567890n, n: 0, ['__proto__']: { x: 2.5 } });
    expect(code(() => parseRealtimeJson('{"a":1,"a":2}'))).toBe('RT_JSON_SYNTAX');
    expect(code(() => parseRealtimeJson('NaN'))).toBe('RT_JSON_SYNTAX');
  });

  it('hashes the same on both backends', () => {
    const v = { a: [1, 'é', { z: null }], t: true };
    expect(rtJsonHash(getCrypto('wasm'), v)).toBe(rtJsonHash(getCrypto('js'), v));
    expect(rtJsonHash(getCrypto('js'), v)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('ruleset hash', () => {
  const c = getCrypto('js');
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const folder = () => {
    const d = mkdtempSync(join(tmpdir(), 'rt-ruleset-'));
    dirs.push(d);
    return d;
  };

  it('leaves out ui/, __pycache__, dot paths and .pyc files', () => {
    expect(['spec.json', 'hooks.py', 'data/levels.json', 'data-extra.txt', 'ui.txt'].every(inRuleset)).toBe(true);
    expect(['ui/index.html', 'a/__pycache__/x.py', '.hidden/x', 'a/.env', 'notes.pyc'].some(inRuleset)).toBe(false);
  });

  it('of a folder equals the pure hash of its files, skipping symlinked folders and following symlinked files', () => {
    const d = folder();
    const outside = folder();
    writeFileSync(join(d, 'spec.json'), '{"name":"x"}');
    mkdirSync(join(d, 'data'));
    writeFileSync(join(d, 'data', 'levels.json'), '[1]');
    writeFileSync(join(d, 'data-extra.txt'), 'dash');
    mkdirSync(join(d, 'ui'));
    writeFileSync(join(d, 'ui', 'index.html'), '<html>');
    writeFileSync(join(d, 'notes.pyc'), 'x');
    writeFileSync(join(outside, 'shared.txt'), 'linked');
    mkdirSync(join(outside, 'sub'));
    writeFileSync(join(outside, 'sub', 'deep.txt'), 'not entered');
    symlinkSync(join(outside, 'shared.txt'), join(d, 'linked.txt'));
    symlinkSync(join(outside, 'sub'), join(d, 'linkdir'));
    symlinkSync(join(outside, 'missing'), join(d, 'dangling'));
    const expected = rulesetHash(c, [
      { path: 'spec.json', bytes: utf8('{"name":"x"}') },
      { path: 'data/levels.json', bytes: utf8('[1]') },
      { path: 'data-extra.txt', bytes: utf8('dash') },
      { path: 'linked.txt', bytes: utf8('linked') },
    ]);
    expect(rulesetHashOfDir(c, d)).toBe(expected);
    writeFileSync(join(d, 'data', 'levels.json'), '[2]');
    expect(rulesetHashOfDir(c, d)).not.toBe(expected);
  });

  it('fails with typed errors for a missing folder, a file, an empty bundle and duplicate paths', () => {
    const d = folder();
    expect(code(() => rulesetHashOfDir(c, join(d, 'nope')))).toBe('RT_RULESET_UNREADABLE');
    writeFileSync(join(d, 'f'), 'x');
    expect(code(() => rulesetHashOfDir(c, join(d, 'f')))).toBe('RT_RULESET_UNREADABLE');
    const empty = folder();
    mkdirSync(join(empty, 'ui'));
    writeFileSync(join(empty, 'ui', 'a.html'), 'x');
    expect(code(() => rulesetHashOfDir(c, empty))).toBe('RT_RULESET_EMPTY');
    expect(
      code(() =>
        rulesetHash(c, [
          { path: 'a', bytes: utf8('1') },
          { path: 'a', bytes: utf8('2') },
        ]),
      ),
    ).toBe('RT_RULESET_DUPLICATE');
  });

  it('of a session without a protocol folder is its spec.json alone', () => {
    expect(rulesetHashOfSpec(c, '{"a":1}')).toBe(rulesetHash(c, [{ path: 'spec.json', bytes: utf8('{"a":1}') }]));
    expect(rulesetHashOfSpec(c, '{"a":1}')).not.toBe(rulesetHashOfSpec(c, '{"a":2}'));
  });
});
