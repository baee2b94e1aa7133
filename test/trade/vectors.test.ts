// agent-trade/0.2 vectors on both crypto backends: the reference's authority vectors (read in place
// from ../shared/reference; a missing one fails unless AIGENORA_SKIP_CORPORA=1) and the project's own in
// test-vectors/agent-trade/.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { foldEvents, SCHEMAS, verifyEnvelope, type KeyMap } from '../../ts/trade/index.js';

const REF = new URL('../../../shared/reference/agent-native-trade/', import.meta.url);
const haveRef = needShared('reference/agent-native-trade', "the reference's agent-trade vectors and schemas");
const json = (u: URL) => JSON.parse(readFileSync(u, 'utf8'));
const own = (name: string) => json(new URL(`../../test-vectors/agent-trade/${name}`, import.meta.url));

describe.each(['wasm', 'js'])('%s backend', (backend) => {
  const c = getCrypto(backend);

  it.skipIf(!haveRef)("passes the reference's six vectors", () => {
    const v = json(new URL('protocol/test-vectors/vectors.json', REF));
    expect(v.cases).toHaveLength(6);
    for (const k of v.cases) {
      const verdict = verifyEnvelope(c, k.file, v.identities);
      expect(verdict.result, k.name).toBe(k.expect);
      if (k.expect === 'valid') expect(verdict.objectId, k.name).toBe(k.object_id);
      // The standalone files are the same envelopes as text: the untrusted-text path agrees.
      const text = readFileSync(new URL(`protocol/test-vectors/files/${k.name}.json`, REF), 'utf8');
      expect(verifyEnvelope(c, text, v.identities).result, `${k.name} as text`).toBe(k.expect);
    }
  });

  it('passes the project vectors (every failure code, schema rule and signature edge case)', () => {
    const v = own('envelopes.json');
    const keys: KeyMap = Object.fromEntries(v.key_map.map((id: string) => [id, v.identities[id]]));
    const seen = new Set<string>();
    for (const k of v.cases) {
      const input = k.file_text ?? k.file;
      const verdict = verifyEnvelope(c, input, keys, k.object_id ? { objectId: k.object_id } : {});
      expect(verdict.result, `${k.name}: ${verdict.detail}`).toBe(k.expect);
      if (k.expected_object_id) expect(verdict.objectId, k.name).toBe(k.expected_object_id);
      seen.add(k.expect);
    }
    expect([...seen].sort()).toEqual([
      'fail:body_hash_mismatch',
      'fail:malformed_input',
      'fail:object_id_mismatch',
      'fail:protocol_version',
      'fail:schema_invalid',
      'fail:signature_invalid',
      'fail:unknown_signer',
      'valid',
    ]);
  });
});

describe('trade state machine', () => {
  it('follows every allowed and forbidden transition of the table', () => {
    const v = own('state.json');
    expect(v.cases.length).toBeGreaterThan(100);
    for (const k of v.cases) {
      const f = foldEvents(k.events);
      if ('state' in k.expect) {
        expect(f.ok, `${k.name}: ${f.ok ? '' : f.reason}`).toBe(true);
        expect(f.trade.state, k.name).toBe(k.expect.state);
      } else {
        expect(f.ok, k.name).toBe(false);
        if (!f.ok) {
          expect(f.rejectedAt, k.name).toBe(k.expect.rejected_at);
          expect(f.trade.state, k.name).toBe(k.expect.state_before);
          expect(f.reason).toMatch(/not allowed/);
        }
      }
    }
  });
});

describe('schemas', () => {
  it.skipIf(!haveRef)("are the reference's schemas, constraint for constraint", () => {
    const ref = {
      LISTING_REF: 'packages/signed-files/src/schemas/listing-ref.schema.json',
      DEAL: 'packages/signed-files/src/schemas/deal.schema.json',
      TRADE_EVENT: 'packages/codex-plugin/runtime/schemas/trade-event.schema.json',
      TRADE_RECEIPT: 'packages/signed-files/src/schemas/trade-receipt.schema.json',
    } as const;
    for (const [type, path] of Object.entries(ref)) expect(SCHEMAS[type as keyof typeof ref], type).toEqual(json(new URL(path, REF)));
  });
});
