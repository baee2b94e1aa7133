// jcsFirstMemberSha256 on both backends: the SHA-256 of JCS(value) of the text's first member when it
// is the one named (node:crypto hashing the value's own canonical form as the oracle), undefined when
// it is not, and the same refusals, with the same messages, as jcs() of the same text.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CryptoError, getCrypto } from '../../ts/crypto/index.js';

const sha = (b: Uint8Array) => new Uint8Array(createHash('sha256').update(b).digest());

const FOUND: [string, unknown][] = [
  ['{"body": {"y": 1, "x": [1, "a,}"]}, "sig": []}', { y: 1, x: [1, 'a,}'] }],
  ['{"zeta": 0, "body": "q\\"}]", "alpha_not_first": 1}', undefined],
  ['{"body": 1.0E2}', 100],
  ['{"body": {"\\u00e9": "\\ud83d\\ude00", "e": null}}', { é: '😀', e: null }],
  ['{"body": [], "c": {"b": 1}}', []],
];
const NOT_FOUND = ['[{"body": 1}]', '{}', '{"bodyx": 1}', '{"a": 1, "body": 2}', '"body"', '{"Body": 1}'];
const REFUSED = ['{"body": 1, "body": 2}', '{"body": "\\ud800"}', '{"body": 1e400}', '{"body": ', '', '{"body": 1} x'];

describe.each(['wasm', 'js'] as const)('jcsFirstMemberSha256 on the %s backend', (name) => {
  const c = getCrypto(name);

  it("hashes the first member's canonical value, and only when it is the one named", () => {
    for (const [text, value] of FOUND) {
      const got = c.jcsFirstMemberSha256(text, 'body');
      if (value === undefined) expect(got, text).toBeUndefined();
      else expect(got, text).toEqual(sha(c.jcsValue(value)));
    }
    for (const text of NOT_FOUND) expect(c.jcsFirstMemberSha256(text, 'body'), text).toBeUndefined();
    expect(c.jcsFirstMemberSha256('{"a": {"b": 1}, "body": 2}', 'a')).toEqual(sha(c.jcs('{"b":1}')));
  });

  it('refuses what jcs() refuses, with the same error', () => {
    for (const text of REFUSED) {
      const err = (f: () => unknown) => {
        try {
          f();
          return 'accepted';
        } catch (e) {
          expect(e).toBeInstanceOf(CryptoError);
          return (e as CryptoError).message;
        }
      };
      const want = err(() => c.jcs(text));
      expect(want, text).not.toBe('accepted');
      expect(
        err(() => c.jcsFirstMemberSha256(text, 'body')),
        text,
      ).toBe(want);
    }
    expect(c.jcsFirstMemberSha256('{"body": true}', 'body')).toEqual(sha(new TextEncoder().encode('true')));
  });
});
