import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { fromHex, utf8 } from '../../ts/crypto/encoding.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { ROUTE_MODULES } from '../../ts/server/app.js';
import { inboxRoutesWith, type InboxLimits } from '../../ts/server/routes/inbox.js';
import { describeDbs, type Agent } from './harness.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** Small caps so that tests reach them; every other module as the app has it. */
const LIMITS: InboxLimits = { maxCiphertextBytes: 200, maxPerRecipient: 3, ttlMs: 3600_000 };
const modules = ROUTE_MODULES.map((m) => (m.name === 'inbox' ? inboxRoutesWith(LIMITS) : m));

async function send(from: Agent, to: Agent, text: string) {
  const boxed = from.t.crypto.boxSeal(fromHex(to.publicKey), utf8(text));
  return from.json('POST', '/api/v1/inbox', { body: { recipient_public_key: to.publicKey, ciphertext: b64(boxed) } });
}

describeDbs(
  'inbox',
  (server) => {
    it('delivers a sealed box that only the recipient reads and opens', async () => {
      const t = server();
      const alice = await t.registered('alice');
      const bob = await t.registered('bob');
      // Sealed by the pure-JS backend, opened by the server's (wasm) one: the box is the reference's format, not a backend's.
      const boxed = getCrypto('js').boxSeal(fromHex(bob.publicKey), utf8('meet at the usual table ♠'));
      const posted = await alice.json('POST', '/api/v1/inbox', { body: { recipient_public_key: bob.publicKey, ciphertext: b64(boxed) } });
      expect(posted.status).toBe(201);
      expect(posted.body).toMatchObject({ recipient_public_key: bob.publicKey, size: boxed.length });
      const id = posted.body['id'] as number;
      expect(Date.parse(posted.body['expires_at'] as string) - Date.parse(posted.body['created_at'] as string)).toBe(LIMITS.ttlMs);

      const list = await bob.json('GET', '/api/v1/inbox');
      expect(list.status).toBe(200);
      expect(list.body).toMatchObject({
        entries: [{ id, size: boxed.length, created_at: posted.body['created_at'], expires_at: posted.body['expires_at'] }],
        next_cursor: null,
      });

      const read = await bob.json('GET', `/api/v1/inbox/${id}`);
      expect(read.status).toBe(200);
      const ciphertext = Buffer.from(read.body['ciphertext'] as string, 'base64');
      expect(new TextDecoder().decode(t.crypto.boxOpen(bob.seed, ciphertext))).toBe('meet at the usual table ♠');
      // The sender cannot open what it sealed: the box is to bob's key only.
      expect(() => t.crypto.boxOpen(alice.seed, ciphertext)).toThrow();

      expect((await alice.json('GET', '/api/v1/inbox')).body['entries']).toEqual([]);
    });

    it("answers another key's message as missing: no read, no delete, not listed", async () => {
      const t = server();
      const alice = await t.registered('alice');
      const bob = await t.registered('bob');
      const mallory = await t.registered('mallory');
      const id = (await send(alice, bob, 'for bob')).body['id'] as number;

      for (const method of ['GET', 'DELETE']) {
        const r = await mallory.json(method, `/api/v1/inbox/${id}`);
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ code: 'INBOX_NOT_FOUND', message: expect.any(String) });
        // The sender is no owner either.
        expect((await alice.json(method, `/api/v1/inbox/${id}`)).status).toBe(404);
      }
      const unknown = await mallory.json('GET', `/api/v1/inbox/999999999999`);
      expect(unknown.body).toEqual((await mallory.json('GET', `/api/v1/inbox/${id}`)).body);
      expect((await mallory.json('DELETE', '/api/v1/inbox')).body).toEqual({ deleted: 0 });

      expect((await bob.json('GET', `/api/v1/inbox/${id}`)).status).toBe(200);
      expect(await bob.json('DELETE', `/api/v1/inbox/${id}`)).toEqual({ status: 200, body: { id, deleted: true } });
      expect((await bob.json('GET', `/api/v1/inbox/${id}`)).status).toBe(404);
      expect((await bob.json('DELETE', `/api/v1/inbox/${id}`)).status).toBe(404);
    });

    it('refuses unsigned calls, unregistered senders and malformed ids', async () => {
      const t = server();
      const bob = await t.registered('bob');
      expect((await t.fetch('/api/v1/inbox')).status).toBe(401);
      const stranger = t.agent();
      const r = await send(stranger, bob, 'hi');
      expect(r).toMatchObject({ status: 403, body: { code: 'NOT_REGISTERED' } });
      // An unregistered but signed key may still read its own (empty) inbox.
      expect((await stranger.json('GET', '/api/v1/inbox')).status).toBe(200);
      expect((await bob.json('GET', '/api/v1/inbox/not-an-id')).body).toMatchObject({ code: 'ID_INVALID' });
      expect((await bob.json('DELETE', `/api/v1/inbox/${'A'.repeat(32)}`)).body).toMatchObject({ code: 'ID_INVALID' });
    });

    it('checks the ciphertext: standard base64, AGBX1, at least 65 bytes, at most the cap', async () => {
      const t = server();
      const alice = await t.registered('alice');
      const bob = await t.registered('bob');
      const post = (ciphertext: unknown, recipient: unknown = bob.publicKey) =>
        alice.json('POST', '/api/v1/inbox', { body: { recipient_public_key: recipient, ciphertext } });
      const box = (n: number, magic = 'AGBX1') => new Uint8Array([...utf8(magic), ...randomBytes(n - magic.length)]);

      expect((await post('not base64!')).body).toMatchObject({ code: 'BAD_BASE64' });
      expect((await post(b64(box(80)).replace(/=+$/, ''))).body).toMatchObject({ code: 'BAD_BASE64' });
      // Bytes fb ef be encode as '++++'; the URL-safe alphabet would write '----'.
      const plus = b64(new Uint8Array([...box(78), 0xfb, 0xef, 0xbe]));
      expect(plus.endsWith('++++')).toBe(true);
      expect((await post(plus.replace(/\+/g, '-'))).body).toMatchObject({ code: 'BAD_BASE64' });
      expect((await post(b64(box(80, 'AGBX2')))).body).toMatchObject({ code: 'BOX_BAD_MAGIC' });
      expect((await post(b64(box(64)))).body).toMatchObject({ code: 'BOX_TOO_SHORT' });
      expect((await post(b64(box(200)))).status).toBe(201);
      const over = await post(b64(box(201)));
      expect(over).toMatchObject({ status: 413, body: { code: 'BOX_TOO_LARGE' } });
      expect((await post(b64(box(5000)))).status).toBe(413);
      expect((await post(12345)).body).toMatchObject({ code: 'FIELD_INVALID' });
      expect((await post(b64(box(80)), 'ab'.repeat(31))).body).toMatchObject({ code: 'FIELD_INVALID' });
      // 2^255 - 1 is no field element, so no Ed25519 key: nobody could ever open mail sealed to it.
      expect((await post(b64(box(80)), `${'f'.repeat(62)}7f`)).body).toMatchObject({ code: 'RECIPIENT_INVALID' });
      expect((await alice.json('POST', '/api/v1/inbox', { raw: '{"recipient_public_key":' })).body).toMatchObject({ code: 'BODY_NOT_JSON' });
      expect((await alice.json('POST', '/api/v1/inbox', { body: [1] })).body).toMatchObject({ code: 'BODY_NOT_OBJECT' });
      expect((await bob.json('GET', '/api/v1/inbox')).body['entries']).toHaveLength(1);
    });

    it('caps a mailbox and frees room as mail is deleted or expires', async () => {
      const t = server();
      const alice = await t.registered('alice');
      const bob = await t.registered('bob');
      const ids: number[] = [];
      for (let i = 0; i < 3; i++) ids.push((await send(alice, bob, `m${i}`)).body['id'] as number);
      expect(await send(alice, bob, 'one too many')).toMatchObject({ status: 409, body: { code: 'MAILBOX_FULL' } });
      expect((await send(bob, alice, 'other mailboxes are not affected')).status).toBe(201);
      await bob.json('DELETE', `/api/v1/inbox/${ids[0]}`);
      expect((await send(alice, bob, 'fits again')).status).toBe(201);

      t.clock.advance(3601);
      expect((await bob.json('GET', '/api/v1/inbox')).body).toEqual({ entries: [], next_cursor: null });
      expect((await bob.json('GET', `/api/v1/inbox/${ids[1]}`)).status).toBe(404);
      for (let i = 0; i < 3; i++) expect((await send(alice, bob, `after expiry ${i}`)).status).toBe(201);
    });

    it('holds the cap when senders race', async () => {
      const t = server();
      const bob = await t.registered('bob');
      const senders = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => t.registered(`s${i}`)));
      const results = await Promise.all(senders.map((s) => send(s, bob, 'race')));
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 409, 409, 409]);
      expect((await bob.json('GET', '/api/v1/inbox')).body['entries']).toHaveLength(3);
    });

    it('pages with a cursor, oldest first, and clears only the caller’s mail', async () => {
      const t = server();
      const alice = await t.registered('alice');
      const bob = await t.registered('bob');
      const sent: number[] = [];
      for (let i = 0; i < 3; i++) sent.push((await send(alice, bob, `m${i}`)).body['id'] as number);
      await send(bob, alice, 'for alice');

      const seen: number[] = [];
      let path = '/api/v1/inbox?limit=2';
      const pages: number[] = [];
      for (;;) {
        const r = await bob.json('GET', path);
        expect(r.status).toBe(200);
        const entries = r.body['entries'] as { id: number }[];
        pages.push(entries.length);
        seen.push(...entries.map((e) => e.id));
        const next = r.body['next_cursor'];
        if (next === null) break;
        path = `/api/v1/inbox?limit=2&cursor=${next as string}`;
      }
      expect(pages).toEqual([2, 1]);
      expect(seen).toEqual(sent);

      for (const q of ['limit=0', 'limit=101', 'limit=x', 'cursor=abc', 'cursor=-1', 'cursor=0'])
        expect((await bob.json('GET', `/api/v1/inbox?${q}`)).body).toMatchObject({ code: 'QUERY_INVALID' });

      expect(await bob.json('DELETE', '/api/v1/inbox')).toEqual({ status: 200, body: { deleted: 3 } });
      expect((await bob.json('GET', '/api/v1/inbox')).body['entries']).toEqual([]);
      expect((await alice.json('GET', '/api/v1/inbox')).body['entries']).toHaveLength(1);
    });
  },
  { modules },
);
