// The verifier's shortcuts give exactly what the general path gives: the JavaScript canonical text of
// a body (canonical.ts) against each backend's jcsValue, the signature decoder against
// fromBase64Url, the body read out of the gate's canonical bytes (text input) against the body
// canonicalized again (object input), verdict and detail alike, and the quick date-time check against
// ajv-formats' own.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromBase64Url, fromUtf8, getCrypto, toBase64Url } from '../../ts/crypto/index.js';
import { plainCanonicalText } from '../../ts/crypto/jcs.js';
import { addSignature, bodyHash, createEnvelope, uuidv7, verifyEnvelope, type ObjectType, type Verdict } from '../../ts/trade/index.js';
import { decodeOrEmpty, publicKeyBytes } from '../../ts/trade/decode.js';
import { isPlainDateTime } from '../../ts/trade/date-time.js';
import { schemaError } from '../../ts/trade/schema.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';

const backends = [getCrypto('wasm'), getCrypto('js')];
const RUNS = Number(process.env['AIGENORA_FUZZ_RUNS'] ?? 300);

/** What the backend's jcsValue makes of `v`: its text, or the error code. */
function backendJcs(c: (typeof backends)[number], v: unknown): { text: string } | { error: string } {
  try {
    return { text: fromUtf8(c.jcsValue(v)) };
  } catch (e) {
    return { error: (e as { code?: string }).code ?? String(e) };
  }
}

describe('plainCanonicalText', () => {
  it('is the backends’ jcsValue text for JSON data, or leaves the value to them', () => {
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }),
      fc.anything({ maxDepth: 3, withNullPrototype: true, withObjectString: true, withSparseArray: true, withBoxedValues: true }),
    );
    fc.assert(
      fc.property(value, (v) => {
        const ours = plainCanonicalText(v);
        for (const c of backends) {
          const theirs = backendJcs(c, v);
          if (ours !== undefined) expect(theirs).toEqual({ text: ours });
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('covers the cases where JSON.stringify and RFC 8785 could part', () => {
    const deep: unknown[] = [];
    let at = deep;
    for (let i = 0; i < 200; i++) at.push((at = []));
    const cases: unknown[] = [
      JSON.parse('{"__proto__":{"b":1,"a":2},"z":[-0,1e21,5e-324,1.5e-7,123456789012345680000]}'),
      { '10': 1, '9': 2, a: 3, '': 4, '\u{1F600}': 5, '\uFFFF': 6, é: 7, '\u0000': 8 },
      { s: 'quote " backslash \\ controls \u0000\u001f\u007f \u2028 astral \u{1F600}' },
      Object.assign(Object.create(null) as object, { b: 1, a: [true, false, null] }),
      { lone: '\ud800' },
      { '\udc00': 1 },
      { n: NaN },
      { n: Infinity },
      { u: undefined },
      [undefined],
      Object.assign(new Array<number>(2), { 1: 1 }),
      { d: new Date(0) },
      { j: { toJSON: () => 'x' } },
      { f: () => 1 },
      new Map(),
      Object.assign([1], { toJSON: () => 2 }),
      deep,
      'text',
      3.25,
      null,
      undefined,
    ];
    for (const v of cases) {
      const ours = plainCanonicalText(v);
      for (const c of backends) {
        const theirs = backendJcs(c, v);
        if (ours !== undefined) expect(theirs, JSON.stringify(ours)).toEqual({ text: ours });
      }
    }
    // The first three are plain data: the shortcut takes them.
    expect(plainCanonicalText(cases[0])).toBe('{"__proto__":{"a":2,"b":1},"z":[0,1e+21,5e-324,1.5e-7,123456789012345680000]}');
    expect(plainCanonicalText(cases[1])).toBe('{"":4,"\\u0000":8,"10":1,"9":2,"a":3,"é":7,"\u{1F600}":5,"\uFFFF":6}');
    expect(plainCanonicalText(cases[2])).toBeDefined();
    // What JSON.stringify would change or drop is left to the backend, which refuses or rewrites it.
    for (const v of cases.slice(4, 17)) expect(plainCanonicalText(v), String(v)).toBeUndefined();
  });
});

describe('signature and key decoding', () => {
  it('accepts exactly what fromBase64Url accepts, with the same bytes', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const spelling = fc.oneof(
      fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 90 }),
      fc.string({ unit: fc.constantFrom(...alphabet, '=', '+', '/', ' ', 'é'), maxLength: 90 }),
      fc.uint8Array({ maxLength: 66 }).map(toBase64Url),
      fc.uint8Array({ minLength: 64, maxLength: 64 }).chain((b) => fc.nat(63).map((n) => toBase64Url(b).slice(0, -1) + alphabet[n])),
    );
    fc.assert(
      fc.property(spelling, (s) => {
        let expected: Uint8Array;
        try {
          expected = fromBase64Url(s);
        } catch {
          expected = new Uint8Array(0);
        }
        expect(decodeOrEmpty(s)).toEqual(expected);
      }),
      { numRuns: RUNS * 4 },
    );
    for (const v of [undefined, null, 5, ['AAAA']]) {
      expect(decodeOrEmpty(v)).toEqual(new Uint8Array(0));
      expect(publicKeyBytes(v)).toEqual(new Uint8Array(0));
    }
    // Keys are kept once decoded; a spelling that is refused stays refused.
    const key = toBase64Url(new Uint8Array(32).fill(7));
    expect(publicKeyBytes(key)).toEqual(new Uint8Array(32).fill(7));
    expect(publicKeyBytes(key)).toEqual(new Uint8Array(32).fill(7));
    const spareBits = key.slice(0, -1) + 'd';
    expect(publicKeyBytes(spareBits)).toEqual(new Uint8Array(0));
    expect(publicKeyBytes(spareBits)).toEqual(new Uint8Array(0));
  });
});

describe('body hash from the gate', () => {
  const c = getCrypto('wasm');
  const alice = c.ed25519Keypair(new Uint8Array(32).fill(1));
  const keys = { alice: { public_key: toBase64Url(alice.publicKey) } };
  const deal = addSignature(
    createEnvelope(c, 'DEAL', {
      trade_id: uuidv7(0, new Uint8Array(10)),
      buyer: 'bob',
      seller: 'alice',
      subject: { listing_ref: 'sha256:' + '0'.repeat(64), description: 'x', quantity: 1, acceptance_conditions: ['ok'] },
      settlement: { asset: 'iso4217:EUR', amount: '10.5', method: 'manual' },
      fulfillment: { deadline: '2026-12-31T00:00:00Z', destination_ref: 'd', carrier_ref: 'c' },
    }),
    alice,
    'alice',
    '2026-11-30T10:00:00Z',
  );

  /** Text and object input must give the same verdict, detail (which names the hash) included. */
  function same(env: unknown): Verdict {
    const fromObject = verifyEnvelope(c, env, keys);
    for (const b of backends) {
      expect(verifyEnvelope(b, JSON.stringify(env), keys), JSON.stringify(env)).toEqual(fromObject);
      expect(verifyEnvelope(b, env, keys)).toEqual(fromObject);
    }
    return fromObject;
  }

  it('agrees with the body canonicalized again, whatever the body holds', () => {
    expect(same(deal).result).toBe('valid');
    const bodies: unknown[] = [
      { ...deal.body, note: 'a "quoted" }, {"nested": [1]} \\ end\\', list: [{}, [], [[{ '}': ']' }]], '', '\\'] },
      { ...deal.body, z: { body_hash: 'sha256:x', ',': '}' } },
      { ...deal.body, q: '"}],', r: '\\"}' },
      'a string body',
      '"',
      12.5,
      null,
      true,
      [],
      [{ a: 1 }, '}'],
      {},
    ];
    for (const body of bodies) expect(same({ ...deal, body }).result).toBe('fail:body_hash_mismatch');
    // With the hash fixed to match, a changed body is rejected by its signatures instead, on both paths.
    const body = { ...deal.body, buyer: 'b"}o\\b' };
    expect(same({ ...deal, body, body_hash: bodyHash(c, body) }).result).toBe('fail:signature_invalid');
  });

  it('falls back when a key sorts before "body", or there is no body', () => {
    for (const extra of [{ a: 1 }, { '': 1 }, { Body: 1 }, { bod: 1 }]) expect(same({ ...extra, ...deal }).result).toBe('fail:schema_invalid');
    const noBody: Record<string, unknown> = { ...deal };
    delete noBody['body'];
    expect(same(noBody).result).toBe('fail:body_hash_mismatch');
    expect(same({ ...noBody, body_x: deal.body }).result).toBe('fail:body_hash_mismatch');
  });
});

describe('isPlainDateTime', () => {
  const full = (fullFormats['date-time'] as { validate: (s: string) => boolean }).validate;

  it('says yes to the usual spellings and leaves the rest to ajv-formats', () => {
    for (const yes of ['2026-03-01T12:00:00Z', '2024-02-29t23:59:59.123456+05:30', '2026-12-31T00:00:00-23:59', '0000-01-01T00:00:00z']) {
      expect([yes, isPlainDateTime(yes)]).toEqual([yes, true]);
      expect(full(yes)).toBe(true);
    }
    // ajv-formats takes these (a leap second, a space, no colon in the offset): the quick check leaves them to it.
    for (const theirs of ['2016-12-31T23:59:60Z', '2026-03-01 12:00:00Z', '2026-03-01T12:00:00+0530', '2026-03-01T12:00:00+05']) {
      expect([theirs, isPlainDateTime(theirs), full(theirs)]).toEqual([theirs, false, true]);
    }
    for (const no of [
      '2023-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-03-01T24:00:00Z',
      '2026-03-01T12:00:00',
      '2026-03-01T12:00:00.Z',
      '2026-03-01T12:00:00+24:00',
    ]) {
      expect([no, isPlainDateTime(no), full(no)]).toEqual([no, false, false]);
    }
  });

  it('never says yes where ajv-formats says no', () => {
    const digits = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n });
    const piece = fc.oneof(
      digits(1),
      digits(2),
      digits(4),
      fc.constantFrom('-', ':', '.', 'T', 't', 'Z', 'z', '+', ' ', '\u00a0', 'x', '٣'),
      fc.string({ maxLength: 2 }),
    );
    // Each field mostly in its range (edges included), sometimes anywhere in 00..99.
    const field = (lo: number, hi: number) =>
      fc
        .oneof({ weight: 4, arbitrary: fc.integer({ min: lo, max: hi }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 99 }) })
        .map((v) => String(v).padStart(2, '0'));
    const year = fc.oneof(digits(4), fc.constantFrom('2000', '1900', '2024', '2100', '0000'));
    const nearly = fc
      .tuple(
        year,
        field(1, 12),
        field(1, 31),
        fc.constantFrom('T', 't', ' '),
        field(0, 24),
        field(0, 60),
        field(0, 61),
        fc.option(digits(3)),
        fc.constantFrom('Z', 'z', '+', '-', ''),
        field(0, 24),
        field(0, 60),
      )
      .map(
        ([y, mo, d, t, h, mi, s, frac, sign, oh, om]) =>
          `${y}-${mo}-${d}${t}${h}:${mi}:${s}${frac === null ? '' : `.${frac}`}${sign}${sign === '+' || sign === '-' ? `${oh}:${om}` : ''}`,
      );
    const mutated = fc.tuple(nearly, fc.nat(), piece).map(([s, at, p]) => s.slice(0, at % (s.length + 1)) + p + s.slice((at % (s.length + 1)) + 1));
    fc.assert(
      fc.property(
        fc.oneof(
          nearly,
          mutated,
          fc.array(piece, { maxLength: 14 }).map((a) => a.join('')),
        ),
        (s) => {
          if (isPlainDateTime(s)) expect([s, full(s)]).toEqual([s, true]);
        },
      ),
      { numRuns: RUNS * 20 },
    );
  });

  it('leaves the schemas’ verdicts on date-times as ajv-formats gives them', () => {
    const doc = JSON.parse(readFileSync(new URL('../../test-vectors/agent-trade/envelopes.json', import.meta.url), 'utf8')) as {
      cases: Array<{ name: string; file: { object_type: ObjectType; signatures: Array<Record<string, unknown>> } }>;
    };
    const env = doc.cases.find((c) => c.name === 'deal-cosigned-alice-then-bob')!.file;
    expect(schemaError(env.object_type, env)).toBeUndefined();
    for (const when of ['2026-03-01T12:00:00.5-01:00', '2016-12-31T23:59:60Z', '2026-03-01 12:00:00Z', '2023-02-29T00:00:00Z', 'yesterday']) {
      const edited = { ...env, signatures: [{ ...env.signatures[0], issued_at: when }] };
      expect([when, schemaError(env.object_type, edited)]).toEqual([when, full(when) ? undefined : '/signatures/0/issued_at must match format "date-time"']);
    }
  });
});
