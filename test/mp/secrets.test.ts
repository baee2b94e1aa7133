// randomSecrets draws its shuffle from the session's byte source (ts/mp/secrets.ts): a source that
// hands out views of a larger buffer, as a pool or a stream does, must shuffle as one that hands out
// copies of the same bytes.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { randomSecrets } from '../../ts/mp/secrets.js';

/** A deterministic byte stream: each call takes the next n bytes, as copies or as views at their offset. */
function stream(views: boolean): (n: number) => Uint8Array {
  const bytes = Uint8Array.from({ length: 1 << 16 }, (_, i) => (i * 167 + (i >> 7) * 31 + 11) & 255);
  let at = 0;
  return (n) => {
    const out = views ? bytes.subarray(at, at + n) : bytes.slice(at, at + n);
    at += n;
    return out;
  };
}

describe('randomSecrets', () => {
  it('shuffles from the bytes a view holds, not from the start of its buffer', () => {
    const ot = getCrypto('js').ot;
    const fromCopies = randomSecrets(ot, stream(false)).shuffle(52);
    const fromViews = randomSecrets(ot, stream(true)).shuffle(52);
    expect(fromViews).toEqual(fromCopies);
    expect([...fromCopies].sort((a, b) => a - b)).toEqual(Array.from({ length: 52 }, (_, i) => i));
    expect(fromCopies).not.toEqual(Array.from({ length: 52 }, (_, i) => i));
  });
});
