// Request bodies as the reference's client writes them (Python json.dumps, ensure_ascii=False, compact,
// keys in insertion order), and a spec carried through with its number literals as Python reads them.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { compactJson, encodeBody, parseTree, RawJson } from '../../ts/registry/json.js';
import { protocolId } from '../../ts/spec/protocol-id.js';

describe('encodeBody', () => {
  it('is compact, keeps key order and non-ASCII raw, drops undefined members, embeds RawJson verbatim', () => {
    expect(encodeBody({ z: 'é ✓ 🎲', a: [1, { c: null, b: true }], skip: undefined, n: -2.5, raw: new RawJson('{"y":1.0}') })).toBe(
      '{"z":"é ✓ 🎲","a":[1,{"c":null,"b":true}],"n":-2.5,"raw":{"y":1.0}}',
    );
    // Python escapes exactly these: quote, backslash, and controls (\n \t … and \u00XX lowercase).
    expect(encodeBody({ s: '"\\\n\t\u0001\u007f\u2028' })).toBe('{"s":"\\"\\\\\\n\\t\\u0001\u007f\u2028"}');
    expect(encodeBody({})).toBe('{}');
  });
});

describe('compactJson of a parsed spec', () => {
  it('writes numbers as Python would read and print them, so the protocol_id survives the trip', () => {
    const text =
      '{\n  "name": "x",\n  "parameters": {"p": {"min": 1.0, "max": 1e2, "big": 123456789012345678901234567890, "f": 0.00001}},\n  "messages": []\n}';
    const compact = compactJson(parseTree(text));
    expect(compact).toBe('{"name":"x","parameters":{"p":{"min":1.0,"max":100.0,"big":123456789012345678901234567890,"f":1e-05}},"messages":[]}');
    const c = getCrypto();
    expect(protocolId(c, compact)).toBe(protocolId(c, text));
  });
});
