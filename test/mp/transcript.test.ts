// The mental-poker transcript (ts/mp/transcript.ts) and its canonical JSON (ts/mp/canonical.ts): every
// case of the reference's receipt vectors on both backends, then the refusals and orderings the
// vectors do not reach.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getCrypto, type Crypto } from '../../ts/crypto/index.js';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { checkReceiptVectors, receiptSuite, RECEIPT_FORMAT } from '../../ts/conformance/mp-receipt.js';
import { compareCodePoints } from '../../ts/crypto/unicode.js';
import { canonicalJson, canonicalPayload, parseJsonExact, MAX_JSON_DEPTH } from '../../ts/mp/canonical.js';
import { MpError } from '../../ts/mp/errors.js';
import { eventHeader, otPayload, playPayload, Transcript, verifyPeerReceipt, witnessPayloads } from '../../ts/mp/transcript.js';
import { corpus } from './corpus.js';

const RECEIPTS = corpus('aigenora-mp-receipt-vectors.json');

function code(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof MpError) return e.code;
    throw e;
  }
}

describe.each(['wasm', 'js'])('%s backend', (name) => {
  const c: Crypto = getCrypto(name);

  it.skipIf(!RECEIPTS.text)(`passes every case of aigenora-mp-receipt-vectors.json${RECEIPTS.missing ? ` (${RECEIPTS.missing})` : ''}`, () => {
    expect(checkReceiptVectors(c, RECEIPTS.text!)).toEqual({ game_transcript: 1, transcript: 9, append_refusals: 1 });
  });

  it.skipIf(!RECEIPTS.text)('gives `aigenora conformance` one passing case per vector', () => {
    const suite = receiptSuite(RECEIPTS.text!);
    expect(suite.format).toBe(RECEIPT_FORMAT);
    expect(new Set(suite.cases.map((x) => x.key)).size).toBe(11);
    expect(suite.cases.map((x) => x.run(c)).filter((r) => !r.ok)).toEqual([]);
  });

  it('hashes the events in order, signs the raw root, and verifies only that root under that key', () => {
    const seed = new Uint8Array(32).fill(7);
    const t = new Transcript(c);
    expect(t.rootHex()).toBe(toHex(c.sha256(new Uint8Array(0))));
    t.append('mp_pass', { who: 'host' });
    t.append('mp_pass');
    const all = new Uint8Array([...t.events[0]!.bytes, ...t.events[1]!.bytes]);
    expect(t.root()).toEqual(c.sha256(all));
    expect(toHex(t.events[1]!.bytes)).toBe(`${'0'.repeat(15)}1000000076d705f70617373000000027b7d`);
    const sig = t.sign(seed);
    expect(sig).toEqual(c.ed25519Sign(seed, t.root()));
    const kp = c.ed25519Keypair(seed);
    expect(t.sign(kp)).toEqual(sig);
    expect(t.verify(kp.publicKey, sig)).toBe(true);
    expect(t.verify(kp.publicKey, sig.subarray(1))).toBe(false);
    expect(t.verify(kp.publicKey.subarray(1), sig)).toBe(false);
    t.append('mp_pass', { who: 'guest' });
    expect(t.verify(kp.publicKey, sig)).toBe(false);
    kp.dispose();
  });

  it("accepts a peer's receipt only for this root, from the handshake key", () => {
    const t = new Transcript(c);
    t.append('mp_pass', { who: 'guest' });
    const [peer, other] = [c.ed25519Keypair(new Uint8Array(32).fill(1)), c.ed25519Keypair(new Uint8Array(32).fill(2))];
    const receipt = (kp: typeof peer, hash = t.rootHex()) => ({
      action: 'mp_terminal_receipt',
      transcript_hash: hash,
      signature: toHex(t.sign(kp)),
      audit_status: 'passed',
      public_key: toHex(kp.publicKey),
    });
    expect(verifyPeerReceipt(t, receipt(peer), peer.publicKey)).toBe(true);
    expect(verifyPeerReceipt(t, { ...receipt(peer), signature: receipt(peer).signature.toUpperCase() }, peer.publicKey)).toBe(true);
    expect(verifyPeerReceipt(t, receipt(other), peer.publicKey)).toBe(false);
    expect(verifyPeerReceipt(t, { ...receipt(other), public_key: toHex(peer.publicKey) }, peer.publicKey)).toBe(false);
    expect(verifyPeerReceipt(t, receipt(peer, '00'.repeat(32)), peer.publicKey)).toBe(false);
    expect(verifyPeerReceipt(t, { ...receipt(peer), signature: 'zz' }, peer.publicKey)).toBe(false);
    expect(verifyPeerReceipt(t, { ...receipt(peer), signature: 5 }, peer.publicKey)).toBe(false);
    expect(verifyPeerReceipt(t, {}, peer.publicKey)).toBe(false);
  });

  it('leaves the transcript unchanged when an append is refused', () => {
    const t = new Transcript(c);
    t.append('mp_pass', { who: 'host' });
    const root = t.rootHex();
    for (const bad of [{ x: 1.5 }, { x: 'a\ud800' }, { ['\udc00']: 1 }, { x: undefined }] as const) {
      expect(code(() => t.append('x', bad as never))).not.toBe('ok');
    }
    expect(code(() => t.append('\ud800', {}))).toBe('MP_JSON_LONE_SURROGATE');
    expect(code(() => t.append('x', [] as never))).toBe('MP_JSON_NOT_OBJECT');
    expect(code(() => t.append('x', null as never))).toBe('MP_JSON_NOT_OBJECT');
    expect([t.length, t.rootHex()]).toEqual([1, root]);
  });
});

describe('canonical JSON', () => {
  it('sorts keys by code point, not by UTF-16 unit', () => {
    // U+FF61 is one unit above the surrogates of U+1F600 but a lower code point.
    expect(canonicalJson({ '\u{1F600}': 1, '\uff61': 2, a: 3, A: 4, '': 5 })).toBe('{"":5,"A":4,"a":3,"\uff61":2,"\u{1F600}":1}');
    expect(compareCodePoints('\uff61', '\u{1F600}')).toBeLessThan(0);
    expect(compareCodePoints('a', 'ab')).toBeLessThan(0);
  });

  it('escapes as Python json.dumps(ensure_ascii=False) does', () => {
    const s = '\u0000\u0001\u001f"\\/\b\f\n\r\t\u007f\u2028\u2029é😀';
    expect(canonicalJson(s)).toBe('"\\u0000\\u0001\\u001f\\"\\\\/\\b\\f\\n\\r\\t\u007f\u2028\u2029é😀"');
    expect(canonicalJson({ '\n': [true, false, null, -7, 0] })).toBe('{"\\n":[true,false,null,-7,0]}');
  });

  it('writes integers of any size exactly, and refuses numbers it could get wrong', () => {
    const big = 2n ** 2048n - 1n;
    expect(canonicalJson({ z: big, m: -(2n ** 64n) })).toBe(`{"m":-18446744073709551616,"z":${big.toString()}}`);
    expect(canonicalJson([Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER])).toBe('[9007199254740991,-9007199254740991]');
    expect(code(() => canonicalJson(2 ** 53))).toBe('MP_JSON_UNSAFE_INTEGER');
    for (const f of [0.5, -0, NaN, Infinity, -Infinity, 1e-7])
      expect(
        code(() => canonicalJson([f])),
        String(f),
      ).toBe('MP_JSON_FLOAT');
  });

  it('refuses what JSON cannot carry, with the reference message where it has one', () => {
    const detail = (v: unknown) => {
      try {
        canonicalPayload(v);
        return 'ok';
      } catch (e) {
        return e instanceof MpError ? `${e.code} ${e.detail}` : String(e);
      }
    };
    expect(detail({ x: new Uint8Array(2) })).toBe('MP_JSON_BYTES_OR_SET transcript payload must not contain bytes/set (non-JSON)');
    expect(detail({ x: new ArrayBuffer(2) })).toMatch(/^MP_JSON_BYTES_OR_SET/);
    expect(detail({ x: new Set() })).toMatch(/^MP_JSON_BYTES_OR_SET/);
    expect(detail({ x: new Map([[1, 2]]) })).toBe('MP_JSON_KEY_NOT_STRING transcript payload dict keys must be str');
    expect(detail({ x: new Map([['a', 2]]) })).toBe('MP_JSON_UNSUPPORTED transcript payload unsupported type: Map');
    expect(detail({ [Symbol('s')]: 1 })).toMatch(/^MP_JSON_KEY_NOT_STRING/);
    expect(detail({ x: undefined })).toBe('MP_JSON_UNSUPPORTED transcript payload unsupported type: undefined');
    expect(detail({ x: () => 1 })).toBe('MP_JSON_UNSUPPORTED transcript payload unsupported type: function');
    expect(detail({ x: new Date(0) })).toBe('MP_JSON_UNSUPPORTED transcript payload unsupported type: Date');
    expect(detail(['x'])).toBe('MP_JSON_NOT_OBJECT transcript payload must be a dict');
    expect(detail(new Set())).toBe('MP_JSON_NOT_OBJECT transcript payload must be a dict');
    expect(detail(undefined)).toBe('ok');
    // The whole payload is checked before any of it is written, as in the reference: the float later in
    // the document is reported, not the unpaired surrogate met first when writing.
    expect(detail({ a: '\ud800', b: 1.5 })).toMatch(/^MP_JSON_FLOAT/);
    expect(detail({ a: '\ud800' })).toMatch(/^MP_JSON_LONE_SURROGATE/);
    expect(detail({ ['\udfff']: 1 })).toMatch(/^MP_JSON_LONE_SURROGATE/);
  });

  it('ends deep nesting and cycles with a typed error', () => {
    let v: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) v = [v];
    expect(code(() => canonicalJson(v))).toBe('ok');
    expect(code(() => canonicalJson([v]))).toBe('MP_JSON_TOO_DEEP');
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(code(() => canonicalJson(cyclic))).toBe('MP_JSON_TOO_DEEP');
  });

  it('reads peer JSON with exact integers, and keeps a key named __proto__ as a key', () => {
    const v = parseJsonExact(`{"__proto__":1,"r":${2n ** 100n},"s":9007199254740991,"f":1.5}`) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(v['r']).toBe(2n ** 100n);
    expect(v['s']).toBe(9007199254740991);
    expect(Object.keys(v)).toEqual(['__proto__', 'r', 's', 'f']);
    expect(code(() => canonicalJson(v))).toBe('MP_JSON_FLOAT');
    expect(canonicalJson({ ...v, f: 0 })).toBe(`{"__proto__":1,"f":0,"r":${2n ** 100n},"s":9007199254740991}`);
  });

  it('orders any keys as a plain sort of their UTF-8 bytes does (property)', () => {
    // Code points around the surrogate range, where UTF-16 order and code-point order part, and any other.
    const unit = fc.oneof(
      fc.constantFrom('a', 'A', '\n', '\ud7ff', '\uff61', '\ue000', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}', 'é'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    const key = fc.string({ unit, maxLength: 4 });
    fc.assert(
      fc.property(fc.uniqueArray(key, { maxLength: 12 }), (keys) => {
        const o = Object.fromEntries(keys.map((k, i) => [k, i]));
        const text = canonicalJson(o);
        // UTF-8 byte order is code-point order; JSON.stringify escapes as Python does for well-formed strings.
        const byBytes = [...keys].sort((a, b) => Buffer.compare(Buffer.from(utf8(a)), Buffer.from(utf8(b))));
        expect(text).toBe(`{${byBytes.map((k) => `${JSON.stringify(k)}:${o[k]}`).join(',')}}`);
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips any JSON value it accepts (property)', () => {
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.maxSafeInteger(),
        fc.bigInt({ min: -(2n ** 2100n), max: 2n ** 2100n }),
        fc.string({ unit: 'grapheme' }),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: 'grapheme' }), tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    fc.assert(
      fc.property(value, (v) => {
        const text = canonicalJson(v);
        const back = parseJsonExact(text);
        expect(canonicalJson(back)).toBe(text);
        // Only bigints that a double holds exactly come back as numbers; everything else is the same value.
        const norm = (x: unknown): unknown =>
          typeof x === 'bigint' && x >= -BigInt(Number.MAX_SAFE_INTEGER) && x <= BigInt(Number.MAX_SAFE_INTEGER)
            ? Number(x)
            : Array.isArray(x)
              ? x.map(norm)
              : x && typeof x === 'object'
                ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, norm(y)]))
                : x;
        expect(back).toEqual(norm(v));
      }),
      { numRuns: 300 },
    );
  });
});

describe('event bytes and payload builders', () => {
  it('writes seq as 64 bits', () => {
    expect(toHex(eventHeader(2 ** 32 + 5, utf8('t'), 258))).toBe('0000000100000005000000017400000102');
    expect(() => eventHeader(-1, utf8('t'), 0)).toThrow(RangeError);
  });

  it('gives each event the shape the reference appends', () => {
    expect(canonicalJson(playPayload('host', '12', 6, 2, 0))).toBe('{"call_suit":0,"id_b":"12","rank":6,"suit":2,"who":"host"}');
    expect(canonicalJson(playPayload('guest', '3', 0, 0, null))).toBe('{"id_b":"3","rank":0,"suit":0,"who":"guest"}');
    expect(canonicalJson(otPayload('host-0', 5n, 2n ** 2047n))).toBe(`{"ot_id":"host-0","y":${2n ** 2047n},"z":5}`);
    const w = (otId: string) => ({ otId, label: 'l', r: 1n });
    const [h, g] = witnessPayloads([w('host-2'), w('guest-1'), w('host-10'), w('x-1'), w('guest-0')]);
    // Sorted as strings, so host-10 comes before host-2, as in the reference.
    expect(canonicalJson(h)).toBe('{"role":"host","witnesses":[{"label":"l","ot_id":"host-10","r":1},{"label":"l","ot_id":"host-2","r":1}]}');
    expect(canonicalJson(g)).toBe('{"role":"guest","witnesses":[{"label":"l","ot_id":"guest-0","r":1},{"label":"l","ot_id":"guest-1","r":1}]}');
  });
});
