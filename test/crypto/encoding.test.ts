// toHex joins pairs for short inputs and decodes ASCII digits for long ones (ts/crypto/encoding.ts):
// both must give Node's own lowercase hex, on each side of the switch and past its reused buffer.
// utf8 encodes short texts into views of a shared slab: each must be TextEncoder's bytes and the
// caller's alone, across slab changes and beside texts long enough to get their own buffer.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex, utf8 } from '../../ts/crypto/encoding.js';

describe('toHex', () => {
  it("gives Buffer's lowercase hex at every size around its two paths", () => {
    for (const n of [0, 1, 2, 63, 64, 65, 127, 128, 1056, 32_767, 32_768, 32_769, 100_000]) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 151 + (i >> 8)) & 255);
      const hex = toHex(bytes);
      expect(hex).toBe(Buffer.from(bytes).toString('hex'));
      expect(fromHex(hex)).toEqual(bytes);
    }
  });

  it('covers all 256 byte values on the long path, and a short call after a long one is unaffected', () => {
    const all = Uint8Array.from({ length: 512 }, (_, i) => i & 255);
    expect(toHex(all)).toBe(Buffer.from(all).toString('hex'));
    expect(toHex(new Uint8Array([0xab, 0x01]))).toBe('ab01');
    expect(toHex(all.subarray(250, 256))).toBe('fafbfcfdfeff');
  });
});

describe('fromHex', () => {
  it("gives Buffer's bytes for hex in either case, and a TypeError for anything Buffer would not read whole", () => {
    const digit = fc.constantFrom(...'0123456789abcdefABCDEF');
    fc.assert(
      fc.property(fc.array(digit, { maxLength: 200 }), (ds) => {
        const hex = ds.join('');
        if (hex.length % 2 === 0) expect(fromHex(hex)).toEqual(new Uint8Array(Buffer.from(hex, 'hex')));
        else expect(() => fromHex(hex)).toThrow(TypeError);
      }),
      { numRuns: 2000 },
    );
    // One character that is not a hex digit anywhere in otherwise good hex: every ASCII code, a few
    // beyond (some whose low byte is a digit's code), and a lone surrogate.
    const odd = [
      ...Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).filter((ch) => !/[0-9a-fA-F]/.test(ch)),
      'é',
      '\u0130',
      '\u0161',
      '\u0666',
      '\ud800',
      '\uff10',
    ];
    for (const ch of odd)
      for (const at of [0, 1, 5, 6]) {
        const bad = '0a1B2c'.slice(0, at) + ch + '0a1B2c'.slice(at + 1);
        expect(() => fromHex(bad), JSON.stringify(bad)).toThrow(TypeError);
        expect(() => fromHex(`${bad}00`), JSON.stringify(bad)).toThrow(TypeError);
      }
    expect(fromHex('')).toEqual(new Uint8Array(0));
    expect(fromHex('00fFa5')).toEqual(Uint8Array.of(0, 255, 165));
  });
});

describe('utf8', () => {
  const encoder = new TextEncoder();

  it("gives TextEncoder's bytes, lone surrogates included, at every length around the pooled limit", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 1100 }), (s) => {
        expect(utf8(s)).toEqual(encoder.encode(s));
      }),
      { numRuns: 2000 },
    );
    for (const n of [0, 1, 1023, 1024, 1025, 5461, 5462, 20_000]) expect(utf8('é'.repeat(n))).toEqual(encoder.encode('é'.repeat(n)));
    expect(utf8('a\ud800b\udc00')).toEqual(Uint8Array.of(0x61, 0xef, 0xbf, 0xbd, 0x62, 0xef, 0xbf, 0xbd));
  });

  it('hands out bytes that no later call overwrites, across many slabs', () => {
    const texts = Array.from({ length: 3000 }, (_, i) => `${'€'.repeat(i % 700)}#${i}`);
    const out = texts.map((t) => utf8(t));
    out.forEach((bytes, i) => expect(bytes).toEqual(encoder.encode(texts[i]!)));
    // Writing into one view leaves its neighbours as they were.
    const [a, b] = [utf8('first'), utf8('second')];
    a.fill(0);
    expect(new TextDecoder().decode(b)).toBe('second');
    expect(a.byteOffset % 8).toBe(0);
    expect(b.byteOffset % 8).toBe(0);
  });
});
