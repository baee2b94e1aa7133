// protocol_id: the 20 reference built-ins hash to the id they are stored under, and the project's own
// vectors (ids and contract texts from Python itself: astral keys, floats, big integers, flow
// transforms; refusals with their code and message, written by hand) match on both backends.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { CryptoError } from '../../ts/crypto/errors.js';
import { MAX_INPUT_BYTES } from '../../ts/crypto/jcs.js';
import { contractText, protocolId, pythonFloatRepr } from '../../ts/spec/index.js';

const REF = new URL('../../../shared/reference/aigenora/src/aigenora/protocols/', import.meta.url);
const vectors = JSON.parse(readFileSync(new URL('../../test-vectors/protocol-id.json', import.meta.url), 'utf8')) as {
  cases: { name: string; spec: string; contract: string; protocol_id: string }[];
  errors: { name: string; spec: string; code: string; message: string }[];
};

function refusal(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof CryptoError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('accepted');
}

describe.each(['wasm', 'js'])('protocol_id (%s backend)', (backend) => {
  const c = getCrypto(backend);

  it('of every reference built-in is the id it is stored under', () => {
    // The reference tree is read in place; its absence fails here rather than skipping silently.
    expect(existsSync(REF), `${REF.pathname} is absent`).toBe(true);
    const index = JSON.parse(readFileSync(new URL('index.json', REF), 'utf8'));
    expect(index.protocols).toHaveLength(20);
    for (const p of index.protocols) {
      const text = readFileSync(new URL(`${p.path}/spec.json`, REF), 'utf8');
      expect(protocolId(c, text), p.alias).toBe(p.protocol_id);
      expect(c.protocolId(text), p.alias).toBe(p.protocol_id);
      expect(p.path).toBe(`${p.protocol_id.slice(0, 8)}/${p.protocol_id.slice(8)}`);
    }
    expect(readdirSync(REF).filter((d) => /^[0-9a-f]{8}$/.test(d)).length).toBeGreaterThan(0);
  });

  it('matches the Python-generated vectors', () => {
    expect(vectors.cases.length).toBeGreaterThanOrEqual(37);
    for (const v of vectors.cases) expect(c.protocolId(v.spec), v.name).toBe(v.protocol_id);
  });

  it('refuses what the parser refuses, with the same code and message', () => {
    expect(vectors.errors.length).toBeGreaterThan(60);
    for (const v of vectors.errors)
      expect(
        refusal(() => c.protocolId(v.spec)),
        v.name,
      ).toEqual({ code: v.code, message: `${v.code}: ${v.message}` });
  });

  it('refuses an unpaired surrogate in the text and an over-long text before parsing', () => {
    expect(refusal(() => c.protocolId('{"a":"\ud800"}'))).toEqual({
      code: 'JSON_LONE_SURROGATE',
      message: 'JSON_LONE_SURROGATE: string contains an unpaired UTF-16 surrogate',
    });
    expect(refusal(() => c.protocolId(`{"a":"${'\udc00'}"}`)).code).toBe('JSON_LONE_SURROGATE');
    const big = ' '.repeat(MAX_INPUT_BYTES + 1);
    expect(refusal(() => c.protocolId(big))).toEqual({
      code: 'JSON_TOO_LARGE',
      message: `JSON_TOO_LARGE: JSON text of at least ${MAX_INPUT_BYTES + 1} bytes is over the ${MAX_INPUT_BYTES}-byte limit`,
    });
    const wide = 'é'.repeat(MAX_INPUT_BYTES / 2 + 1);
    expect(refusal(() => c.protocolId(wide))).toEqual({
      code: 'JSON_TOO_LARGE',
      message: `JSON_TOO_LARGE: JSON text of ${MAX_INPUT_BYTES + 2} bytes is over the ${MAX_INPUT_BYTES}-byte limit`,
    });
  });

  it('survives nesting far deeper than the bound', () => {
    expect(refusal(() => c.protocolId('{"a":'.repeat(500_000))).code).toBe('JSON_TOO_DEEP');
    expect(c.protocolId(`{"rules":${'['.repeat(126)}${']'.repeat(126)}}`)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('contractText', () => {
  it('is the exact text Python hashes', () => {
    for (const v of vectors.cases) expect(contractText(v.spec), v.name).toBe(v.contract);
  });
});

describe('pythonFloatRepr', () => {
  it.each([
    [1, '1.0'],
    [1e16, '1e+16'],
    [1e15, '1000000000000000.0'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-0, '-0.0'],
    [1.5e300, '1.5e+300'],
    [0.1, '0.1'],
    [123456789.125, '123456789.125'],
    [2.5e-7, '2.5e-07'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [-1234.5, '-1234.5'],
    [198868371166802.12, '198868371166802.12'],
  ])('%d → %s', (x, want) => expect(pythonFloatRepr(x)).toBe(want));
});
