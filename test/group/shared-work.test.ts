// What the leader shares between the members of a frame: hashing texts that start alike (each hash and
// byte length must be the text's own, whatever the texts share, surrogate pairs and multi-byte
// characters included), and deltas that reuse the operations of pairs diffed before (each delta must be
// the one made alone).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { makeDelta, type DeltaMemo } from '../../ts/group/delta.js';
import { sharedPrefixLength, textHashes, utf8ByteLength, type GroupJson } from '../../ts/group/json.js';

const c = getCrypto('wasm');

// Few characters, so that random texts share prefixes; each kind of UTF-8 width and a surrogate pair.
const text = fc.string({ unit: fc.constantFrom('a', 'b', '\u00e9', '\u20ac', '\u{1F600}', '\u{1F601}'), maxLength: 12 });

describe('textHashes', () => {
  it('hashes and measures each text as its own UTF-8, whatever the texts share', () => {
    fc.assert(
      fc.property(text, fc.array(text, { minLength: 0, maxLength: 5 }), fc.boolean(), (head, tails, long) => {
        const start = long ? head.repeat(3000) : head;
        const texts = tails.map((t) => start + t);
        const { hashes, lengths } = textHashes(c, texts);
        expect(hashes).toEqual(texts.map((t) => toHex(c.sha256(utf8(t)))));
        expect(lengths).toEqual(texts.map((t) => utf8(t).length));
        expect(texts.map(utf8ByteLength)).toEqual(lengths);
      }),
    );
  });

  it('shares the longest common prefix, never half a surrogate pair', () => {
    expect(sharedPrefixLength([])).toBe(0);
    expect(sharedPrefixLength(['abc'])).toBe(3);
    expect(sharedPrefixLength(['abcd', 'abce', 'abxx'])).toBe(2);
    expect(sharedPrefixLength(['ab', 'abc'])).toBe(2);
    // U+1F600 and U+1F601 share their high surrogate: the prefix stops before it.
    expect(sharedPrefixLength(['a\u{1F600}', 'a\u{1F601}'])).toBe(1);
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 5 }), (texts) => {
        const n = sharedPrefixLength(texts);
        for (const t of texts) expect(t.slice(0, n)).toBe(texts[0]!.slice(0, n));
        if (n > 0) expect(texts[0]!.charCodeAt(n - 1) & 0xfc00).not.toBe(0xd800);
        const next = n + (n < texts[0]!.length && (texts[0]!.charCodeAt(n) & 0xfc00) === 0xd800 ? 2 : 1);
        expect(texts.every((t) => t.length >= next && t.slice(0, next) === texts[0]!.slice(0, next))).toBe(false);
      }),
    );
  });
});

describe('makeDelta with a memo', () => {
  it("gives each delta the operations it has alone, when the values share parts and paths (a frame's views)", () => {
    const scalar = fc.constantFrom<GroupJson>(0, 1, true, false, null, 'x', 'y');
    const part = fc.oneof(scalar, fc.array(scalar, { maxLength: 5 }), fc.dictionary(fc.constantFrom('a', 'b', 'c'), scalar, { maxKeys: 3 }));
    fc.assert(
      fc.property(
        fc.array(part, { minLength: 3, maxLength: 3 }),
        fc.array(part, { minLength: 3, maxLength: 3 }),
        fc.array(fc.tuple(scalar, scalar, fc.boolean()), { minLength: 1, maxLength: 6 }),
        (before, after, own) => {
          // Every member's view holds the same parts (some at a second key too) and one value of its own.
          const views = (parts: GroupJson[], side: 0 | 1) =>
            own.map(([x, y, moved]) => ({ s: parts[0]!, t: parts[1]!, u: moved ? parts[0]! : parts[2]!, me: { v: side === 0 ? x : y } }));
          const [bs, as] = [views(before, 0), views(after, 1)];
          const known: DeltaMemo = new WeakMap();
          bs.forEach((b, i) => expect(makeDelta(b, as[i]!, undefined, known)).toEqual(makeDelta(b, as[i]!)));
        },
      ),
    );
  });
});
