// toHex joins pairs for short inputs and decodes ASCII digits for long ones (ts/crypto/encoding.ts):
// both must give Node's own lowercase hex, on each side of the switch and past its reused buffer.
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../../ts/crypto/encoding.js';

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
