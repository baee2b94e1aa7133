import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import { ROUTE_MODULES } from '../../ts/server/app.js';
import { protocolRoutesWith } from '../../ts/server/routes/protocols.js';
import { describeDbs, type Agent } from './harness.js';

/** protocol_ids from the reference's own index.json (NOTES A2, recomputed there for all built-ins). */
const REFERENCE_IDS = {
  rps: '43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f',
  'coin-flip': '9e5df77c31b613dd16b015ed802d4d063d446c4e381382885683c89b7f5ee48f',
  'guess-number': '166570eff5c0864d31ccafb9d04ea5154184542085dfa401a9c3590f6831e8c8',
  'meeting-room': '182ceaf26c288909862ad2f753c1e03858daac7e2550a18d2a856adfac02b58d',
} as const;

const MAX_SPEC_BYTES = 64 * 1024;
const modules = ROUTE_MODULES.map((m) => (m.name === 'protocols' ? protocolRoutesWith({ maxSpecBytes: MAX_SPEC_BYTES }) : m));

const specText = (folder: keyof typeof REFERENCE_IDS) => readFileSync(join(BUILTIN_DIR, folder, 'spec.json'), 'utf8');

/** The reference client's registration body, spec_json spliced in as written. */
function body(spec: string, extra: Record<string, unknown> = {}): string {
  const head = JSON.stringify({ name: 'x', description: '', type: 'game', ...extra });
  return `${head.slice(0, -1)},"spec_json":${spec}}`;
}

/** A spec of our own whose contract differs by a unique rule, so each test registers a new protocol_id. */
function freshSpec(extra = ''): string {
  const tag = Math.random().toString(36).slice(2);
  return `{"name":"Fresh ${tag}","description":"a test protocol about ${tag}","type":"game","family":"fresh-${tag}","tags":["t-${tag}"],"rules":{"note":"${tag}","weight":1.0${extra}},"choices":["a","b"],"messages":[{"name":"pick","direction":"both","fields":{"action":{"type":"enum","values":["pick"]},"choice":{"type":"enum","values":["a","b"]}}}]}`;
}

async function register(a: Agent, spec: string, extra: Record<string, unknown> = {}) {
  return a.json('POST', '/api/v1/protocols', { raw: body(spec, extra) });
}

describeDbs(
  'protocols',
  (server) => {
    it("stores a built-in under the reference's protocol_id and returns it unchanged", async () => {
      const t = server();
      const a = await t.registered('publisher');
      for (const folder of ['rps', 'meeting-room'] as const) {
        const r = await register(a, specText(folder), { protocol_id: REFERENCE_IDS[folder] });
        // A suite shares one database: a built-in may already be there from the other test.
        if (r.status === 409) expect(r.body).toMatchObject({ code: 'PROTOCOL_EXISTS' });
        else expect(r).toMatchObject({ status: 201, body: { protocol_id: REFERENCE_IDS[folder], publisher_public_key: a.publicKey } });
        const got = await t.agent().send('GET', `/api/v1/protocols/${REFERENCE_IDS[folder]}`);
        expect(got.status).toBe(200);
        const answer = (await got.json()) as Record<string, unknown>;
        expect(answer['protocol_id']).toBe(REFERENCE_IDS[folder]);
        expect(answer['spec_json']).toEqual(JSON.parse(specText(folder)));
      }
    });

    it('keeps number literals and key order as registered, so the fetcher rehashes to the same id', async () => {
      const t = server();
      const a = await t.registered('publisher');
      const spec = freshSpec(',"ratio":2.50,"big":1e3');
      const r = await register(a, spec);
      expect(r.status).toBe(201);
      const id = r.body['protocol_id'] as string;
      const raw = await (await a.send('GET', `/api/v1/protocols/${id}`)).text();
      // 1.0 is not 1 in the reference's hash (Python prints floats as 1.0); the stored text must not normalise it.
      expect(raw).toContain(`"spec_json":${spec}`);
      // The same spec sent as a JSON string is the same protocol.
      expect(await a.json('POST', '/api/v1/protocols', { body: { spec_json: spec } })).toMatchObject({ status: 409, body: { code: 'PROTOCOL_EXISTS' } });
    });

    it('refuses a claimed protocol_id the spec does not hash to', async () => {
      const t = server();
      const a = await t.registered('publisher');
      const r = await register(a, specText('coin-flip'), { protocol_id: REFERENCE_IDS.rps });
      expect(r).toMatchObject({ status: 400, body: { code: 'PROTOCOL_ID_MISMATCH' } });
      expect(r.body['message']).toContain(REFERENCE_IDS['coin-flip']);
      expect((await register(a, freshSpec(), { protocol_id: 'nope' })).body).toMatchObject({ code: 'PROTOCOL_ID_MISMATCH' });
      // Nothing was stored under either id.
      const miss = await a.json('GET', `/api/v1/protocols/${REFERENCE_IDS.rps}`);
      if (miss.status === 200) expect(miss.body['spec_json']).toEqual(JSON.parse(specText('rps')));
    });

    it('refuses invalid, non-strict, oversize and missing specs with typed codes', async () => {
      const t = server();
      const a = await t.registered('publisher');
      const noName = freshSpec().replace(/"name":"Fresh [a-z0-9]+",/, '');
      expect((await register(a, noName)).body).toMatchObject({ code: 'SPEC_INVALID', message: expect.stringContaining('SPEC_NAME_MISSING') });
      const badDirection = freshSpec().replace('"direction":"both"', '"direction":"sideways"');
      expect((await register(a, badDirection)).body).toMatchObject({ code: 'SPEC_INVALID' });
      expect((await register(a, freshSpec().replace('{"name"', '{"spec_version":"9.9","name"'))).body).toMatchObject({ code: 'SPEC_INVALID' });
      expect((await register(a, '[1,2]')).body).toMatchObject({ code: 'FIELD_INVALID' });
      expect((await a.json('POST', '/api/v1/protocols', { body: { name: 'no spec' } })).body).toMatchObject({ code: 'FIELD_INVALID' });
      // Duplicate keys: Python and JS would each keep a different one, so the id would be ambiguous.
      expect((await a.json('POST', '/api/v1/protocols', { raw: `{"spec_json":{"name":"a","name":"b"}}` })).body).toMatchObject({ code: 'BODY_NOT_JSON' });
      expect((await a.json('POST', '/api/v1/protocols', { raw: new Uint8Array([0x7b, 0xff, 0x7d]) })).body).toMatchObject({ code: 'BODY_NOT_UTF8' });
      const huge = freshSpec(`,"padding":"${'x'.repeat(MAX_SPEC_BYTES)}"`);
      expect(await register(a, huge)).toMatchObject({ status: 413, body: { code: 'SPEC_TOO_LARGE' } });
      expect((await register(a, freshSpec(), { name: 'n'.repeat(201) })).body).toMatchObject({ code: 'FIELD_INVALID' });
      // Names are shown in other agents' terminals: no escape sequences.
      expect((await register(a, freshSpec(), { name: 'red \u001b[31malert' })).body).toMatchObject({ code: 'FIELD_INVALID' });
    });

    it('needs a signature to read and a registered key to publish', async () => {
      const t = server();
      expect((await t.fetch(`/api/v1/protocols/${REFERENCE_IDS.rps}`)).status).toBe(401);
      expect((await t.fetch('/api/v1/protocols', { method: 'POST', body: body(freshSpec()) })).status).toBe(401);
      const stranger = t.agent();
      expect(await register(stranger, freshSpec())).toMatchObject({ status: 403, body: { code: 'NOT_REGISTERED' } });
      expect((await stranger.json('GET', '/api/v1/protocols')).status).toBe(200);
    });

    it('answers unknown ids, bundles and UI uploads with typed errors', async () => {
      const t = server();
      const a = await t.registered('publisher');
      const unknown = 'ab'.repeat(32);
      expect(await a.json('GET', `/api/v1/protocols/${unknown}`)).toMatchObject({ status: 404, body: { code: 'PROTOCOL_NOT_FOUND' } });
      expect((await a.json('GET', '/api/v1/protocols/ABC')).body).toMatchObject({ code: 'ID_INVALID' });
      // The reference client asks for a bundle first and falls back to the spec on exactly 404.
      expect(await a.json('GET', `/api/v1/protocols/${REFERENCE_IDS.rps}/bundle`)).toMatchObject({ status: 404, body: { code: 'BUNDLE_NOT_FOUND' } });
      expect(await a.json('POST', `/api/v1/protocols/${REFERENCE_IDS.rps}/ui-batch`, { body: {} })).toMatchObject({
        status: 501,
        body: { code: 'UI_NOT_SUPPORTED' },
      });
    });

    it('lists newest first with a cursor, and filters by text, family and tag', async () => {
      const t = server();
      const a = await t.registered('publisher');
      const specs = [freshSpec(), freshSpec(), freshSpec()];
      const ids: string[] = [];
      for (const s of specs)
        ids.push(
          (await register(a, s, { name: JSON.parse(s).name as string, description: JSON.parse(s).description as string })).body['protocol_id'] as string,
        );

      const first = await a.json('GET', '/api/v1/protocols?limit=2');
      const page1 = first.body['results'] as { protocol_id: string }[];
      expect(page1.map((p) => p.protocol_id)).toEqual([ids[2], ids[1]]);
      const second = await a.json('GET', `/api/v1/protocols?limit=2&cursor=${first.body['next_cursor'] as string}`);
      expect((second.body['results'] as { protocol_id: string }[])[0]!.protocol_id).toBe(ids[0]);

      const fam = JSON.parse(specs[1]!).family as string;
      const byFamily = await a.json('GET', `/api/v1/protocols?family=${fam}`);
      expect(byFamily.body).toMatchObject({ results: [{ protocol_id: ids[1], family: fam, name: JSON.parse(specs[1]!).name }], next_cursor: null });
      const word = (JSON.parse(specs[0]!).rules as { note: string }).note;
      const byText = await a.json('GET', `/api/v1/protocols?q=${word.toUpperCase()}`);
      expect((byText.body['results'] as { protocol_id: string }[]).map((p) => p.protocol_id)).toEqual([ids[0]]);
      const byTag = await a.json('GET', `/api/v1/protocols?tag=t-${word}`);
      expect((byTag.body['results'] as { protocol_id: string }[]).map((p) => p.protocol_id)).toEqual([ids[0]]);
      // LIKE wildcards are plain text here.
      expect((await a.json('GET', '/api/v1/protocols?q=%25')).body['results']).toEqual([]);
      for (const q of ['limit=0', 'limit=101', 'cursor=x', `q=${'q'.repeat(101)}`])
        expect((await a.json('GET', `/api/v1/protocols?${q}`)).body).toMatchObject({ code: 'QUERY_INVALID' });
    });
  },
  { modules },
);
