// protocol_id: the 20 reference built-ins hash to the id they are stored under, and the project's own
// vectors (Python-generated: astral keys, floats, big integers, flow transforms) match on both backends.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { protocolId, pythonFloatRepr } from '../../ts/spec/index.js';

const REF = new URL('../../../shared/reference/aigenora/src/aigenora/protocols/', import.meta.url);
const vectors = JSON.parse(readFileSync(new URL('../../test-vectors/protocol-id.json', import.meta.url), 'utf8'));

describe.each(['wasm', 'js'])('protocol_id (%s backend)', (backend) => {
  const c = getCrypto(backend);

  it.runIf(existsSync(REF))('of every reference built-in is the id it is stored under', () => {
    const index = JSON.parse(readFileSync(new URL('index.json', REF), 'utf8'));
    expect(index.protocols).toHaveLength(20);
    for (const p of index.protocols) {
      const text = readFileSync(new URL(`${p.path}/spec.json`, REF), 'utf8');
      expect(protocolId(c, text), p.alias).toBe(p.protocol_id);
      expect(p.path).toBe(`${p.protocol_id.slice(0, 8)}/${p.protocol_id.slice(8)}`);
    }
    expect(readdirSync(REF).filter((d) => /^[0-9a-f]{8}$/.test(d)).length).toBeGreaterThan(0);
  });

  it('matches the Python-generated vectors', () => {
    for (const v of vectors.cases) expect(protocolId(c, v.spec), v.name).toBe(v.protocol_id);
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
  ])('%d → %s', (x, want) => expect(pythonFloatRepr(x)).toBe(want));
});
