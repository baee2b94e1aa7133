// Creating, co-signing and verifying envelopes; ids, amounts and manifests.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto, toBase64Url, utf8 } from '../../ts/crypto/index.js';
import {
  addSignature,
  buildManifest,
  catalogHash,
  createEnvelope,
  decimalAmount,
  DECIMAL,
  manifestOfDirectory,
  objectId,
  uuidv7,
  verifyEnvelope,
} from '../../ts/trade/index.js';
import { tempDir } from '../shared/tmp.js';

const c = getCrypto('wasm');
const alice = c.ed25519Keypair(new Uint8Array(32).fill(1));
const bob = c.ed25519Keypair(new Uint8Array(32).fill(2));
const keys = { alice: { public_key: toBase64Url(alice.publicKey) }, bob: { public_key: toBase64Url(bob.publicKey) } };

const dealBody = () => ({
  trade_id: uuidv7(),
  buyer: 'bob',
  seller: 'alice',
  subject: { listing_ref: 'sha256:' + '0'.repeat(64), description: 'x', quantity: 1, acceptance_conditions: ['ok'] },
  settlement: { asset: 'iso4217:EUR', amount: decimalAmount('10.50'), method: 'manual' },
  fulfillment: { deadline: '2026-12-31T00:00:00Z', destination_ref: 'd', carrier_ref: 'c' },
});

describe('envelopes', () => {
  it('co-sign in either order; each signature stays valid; object_id ignores signatures', () => {
    const env = createEnvelope(c, 'DEAL', dealBody());
    expect(verifyEnvelope(c, env, keys).result).toBe('fail:schema_invalid'); // unsigned: minItems 1
    const one = addSignature(env, alice, 'alice');
    expect(verifyEnvelope(c, one, keys).result).toBe('valid');
    const two = addSignature(one, bob, 'bob');
    const verdict = verifyEnvelope(c, two, keys);
    expect(verdict).toEqual({ result: 'valid', objectId: objectId(c, env) });
    expect(two.signatures[0]).toEqual(one.signatures[0]);
    const other = addSignature(addSignature(env, bob, 'bob'), alice, 'alice');
    expect(verifyEnvelope(c, other, keys).objectId).toBe(verdict.objectId);
    // Both backends agree on every byte.
    expect(verifyEnvelope(getCrypto('js'), JSON.stringify(two), keys)).toEqual(verdict);
  });

  it('a signature spelled in non-canonical base64url (spare bits set) does not verify, on either backend', () => {
    const one = addSignature(createEnvelope(c, 'DEAL', dealBody()), alice, 'alice');
    const sig = one.signatures[0]!.signature;
    // 64 bytes in 86 characters: the last character carries 2 spare bits, which canonical base64url leaves 0.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(sig.at(-1)!);
    expect(last & 0b11).toBe(0);
    const twin = { ...one, signatures: [{ ...one.signatures[0]!, signature: sig.slice(0, -1) + alphabet[last | 1] }] };
    expect(Buffer.from(twin.signatures[0]!.signature, 'base64url')).toEqual(Buffer.from(sig, 'base64url'));
    for (const b of [c, getCrypto('js')]) expect(verifyEnvelope(b, twin, keys).result).toBe('fail:signature_invalid');
    expect(verifyEnvelope(c, one, keys).result).toBe('valid');
  });

  it('the first unknown signer or bad signature, in order, is the verdict, with keys cold and hot', () => {
    const env = createEnvelope(c, 'DEAL', dealBody());
    const good = addSignature(addSignature(addSignature(env, alice, 'alice'), bob, 'bob'), alice, 'alice');
    const [a, b, a2] = good.signatures as [(typeof good.signatures)[0], (typeof good.signatures)[0], (typeof good.signatures)[0]];
    const flip = (s: typeof a) => ({ ...s, signature: (s.signature[0] === 'A' ? 'B' : 'A') + s.signature.slice(1) });
    const stranger = { ...a, signer: 'carol' };
    const cases: [(typeof a)[], string, number | undefined][] = [
      [[a, b, a2], 'valid', undefined],
      [[a, flip(b), a2], 'fail:signature_invalid', 1],
      [[flip(a), stranger], 'fail:signature_invalid', 0],
      [[a, stranger, flip(b)], 'fail:unknown_signer', 1],
      [[stranger, flip(b)], 'fail:unknown_signer', 0],
      [[a, b, flip(a2)], 'fail:signature_invalid', 2],
      [[a, { ...b, signature: 'A'.repeat(86) }], 'fail:signature_invalid', 1],
      [[flip(b)], 'fail:signature_invalid', 0],
    ];
    // Three rounds: the wasm cache builds the keys' tables on their fourth use, after which the
    // signatures' last steps are batched.
    for (let round = 0; round < 3; round++) {
      for (const [signatures, result, at] of cases) {
        for (const b of [c, getCrypto('js')]) {
          const v = verifyEnvelope(b, { ...good, signatures }, keys);
          expect(v.result, `${b.backend} round ${round}: ${result} at ${at}`).toBe(result);
          if (at !== undefined) expect(v.detail).toMatch(new RegExp(`^signatures\\[${at}\\]`));
        }
      }
    }
  });

  it('refuses oversize and non-UTF-8 text before parsing', () => {
    const env = addSignature(createEnvelope(c, 'DEAL', dealBody()), alice, 'alice');
    const text = JSON.stringify(env);
    expect(verifyEnvelope(c, text, keys, { maxBytes: text.length - 1 }).result).toBe('fail:malformed_input');
    expect(verifyEnvelope(c, text, keys, { maxBytes: text.length }).result).toBe('valid');
    const bytes = utf8(text);
    expect(verifyEnvelope(c, bytes, keys).result).toBe('valid');
    expect(verifyEnvelope(c, Uint8Array.of(...bytes.slice(0, 20), 0xff, ...bytes.slice(20)), keys).result).toBe('fail:malformed_input');
  });

  it('treats a file that only looks like a verdict as an envelope', () => {
    expect(verifyEnvelope(c, '{"result":"valid"}', keys).result).toBe('fail:protocol_version');
    expect(verifyEnvelope(c, '[1,2]', keys).result).toBe('fail:protocol_version');
    expect(verifyEnvelope(c, 'null', keys).result).toBe('fail:protocol_version');
  });

  it('a body that is not I-JSON from JS values is a body_hash mismatch (not serializable)', () => {
    const env = addSignature(createEnvelope(c, 'DEAL', dealBody()), alice, 'alice');
    const bad = { ...env, body: { ...env.body, subject: { ...env.body.subject, quantity: NaN } } };
    expect(verifyEnvelope(c, bad, keys).result).toBe('fail:body_hash_mismatch');
  });
});

describe('ids and amounts', () => {
  it('uuidv7 has version 7, the RFC 9562 variant, and time order', () => {
    const a = uuidv7(1_700_000_000_000);
    const b = uuidv7(1_700_000_000_001);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a < b).toBe(true);
    expect(uuidv7(0x0123456789ab, new Uint8Array(10))).toBe('01234567-89ab-7000-8000-000000000000');
  });

  it('decimalAmount writes the canonical form and refuses what is not exact', () => {
    expect(decimalAmount('0010.5000')).toBe('10.5');
    expect(decimalAmount('0.00')).toBe('0');
    expect(decimalAmount(12n)).toBe('12');
    expect(decimalAmount(3200)).toBe('3200');
    expect(decimalAmount('1.12345678')).toBe('1.12345678');
    for (const bad of ['1.123456789', '-1', '1e3', '.5', '1.', 0.1, 'abc']) expect(() => decimalAmount(bad as string), String(bad)).toThrow(RangeError);
    for (const ok of ['0', '10', '10.5', '3200.00']) expect(DECIMAL.test(ok)).toBe(true);
  });
});

describe('catalog manifests', () => {
  it('sorts paths by bytes, uses forward slashes, and hashes the JCS of the manifest', () => {
    const dir = tempDir('manifest');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'b.txt'), 'b');
    writeFileSync(join(dir, 'sub', 'a.txt'), 'a');
    writeFileSync(join(dir, 'Z.txt'), 'z');
    writeFileSync(join(dir, 'é.txt'), 'e');
    const m = manifestOfDirectory(c, dir);
    expect(m.files.map((f) => f.path)).toEqual(['Z.txt', 'b.txt', 'sub/a.txt', 'é.txt']);
    expect(m.files[1]!.sha256).toBe('3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d'); // sha256("b")
    const expected = '{"files":[' + m.files.map((f) => `{"path":"${f.path}","sha256":"${f.sha256}"}`).join(',') + ']}';
    expect(catalogHash(c, m)).toBe(`sha256:${Buffer.from(c.sha256(utf8(expected))).toString('hex')}`);
    expect(() =>
      buildManifest(c, [
        { path: 'a', content: utf8('1') },
        { path: 'a', content: utf8('2') },
      ]),
    ).toThrow(/duplicate/);
  });
});
