// What the client puts on the wire, byte for byte, against the reference's registration vectors: the
// request the client really hands to fetch (URL, headers, body) for the case's timestamp and request id.
// The vectors are read in place from ../shared/conformance; a missing file fails unless
// AIGENORA_SKIP_CORPORA=1 asks to skip it.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needShared } from '../shared/require.js';
import { fromHex, getCrypto, toHex } from '../../ts/crypto/index.js';
import { RegistryClient } from '../../ts/registry/client.js';

const POW = new URL('../../../shared/conformance/aigenora-reference/aigenora-pow-vectors.json', import.meta.url);
const skip = !needShared('conformance/aigenora-reference/aigenora-pow-vectors.json', "the reference's registration (pow) vectors");

interface PowCase {
  id: string;
  nonce: string;
  public_key: string;
  seed: string;
  difficulty: number;
  register: { nickname: string; body: string };
  rest_auth: { method: string; path: string; timestamp: number; request_id: string; signed_bytes: string; headers: Record<string, string> };
}

function cases(): PowCase[] {
  if (!existsSync(POW)) throw new Error(`${POW.pathname} is absent, so nothing can be checked; set AIGENORA_SKIP_CORPORA=1 to skip`);
  return (JSON.parse(readFileSync(POW, 'utf8')) as { cases: PowCase[] }).cases;
}

describe.each(['wasm', 'js'])('%s backend', (backend) => {
  it.skipIf(skip)('registers with the exact headers and body of every vector case', async () => {
    const c = getCrypto(backend);
    const all = cases();
    expect(all.length).toBeGreaterThan(0);
    for (const v of all) {
      const sent: { url: string; method: string; headers: Record<string, string>; body: string }[] = [];
      const client = new RegistryClient('http://registry.test/', fromHex(v.seed), c, {
        now: () => v.rest_auth.timestamp * 1000 + 999,
        requestId: () => v.rest_auth.request_id,
        fetch: async (url, init) => {
          const body = init.body ? Buffer.from(init.body as Uint8Array).toString('utf8') : '';
          sent.push({ url, method: String(init.method), headers: init.headers as Record<string, string>, body });
          if (url.endsWith('/challenge')) return Response.json({ nonce: v.nonce, difficulty: v.difficulty });
          return Response.json({ ok: true }, { status: 201 });
        },
      });
      expect(client.publicKey).toBe(v.public_key);
      const r = await client.register(v.register.nickname);
      expect(r.alreadyRegistered).toBe(false);
      expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
        'GET http://registry.test/api/v1/auth/challenge',
        'POST http://registry.test/api/v1/auth/register',
      ]);
      const post = sent[1]!;
      expect(post.body, v.id).toBe(v.register.body);
      expect(post.headers, v.id).toEqual(v.rest_auth.headers);
      // The signature verifies over the vector's signed bytes, so the client signed exactly those.
      expect(c.ed25519Verify(fromHex(v.public_key), fromHex(v.rest_auth.signed_bytes), fromHex(post.headers['X-Signature']!))).toBe(true);
      expect(toHex(Buffer.from(`${v.rest_auth.timestamp}\nPOST\n${v.rest_auth.path}\n${v.rest_auth.request_id}\n${post.body}`))).toBe(v.rest_auth.signed_bytes);
    }
  });
});
