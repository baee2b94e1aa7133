import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { transportBindingCanonical } from '../../ts/group/wire.js';
import { invitationBody, postInvitation, randomProtocolId } from './fixtures.js';
import { describeDbs } from './harness.js';

describeDbs('registry invitations', (server) => {
  it('stores a posted invitation and returns what a guest reads (ticket, binding, key, protocol)', async () => {
    const t = server();
    const host = await t.registered('hosty');
    const { postId, body } = await postInvitation(host);
    expect(postId).toMatch(/^[0-9a-f]{32}$/);
    const guest = await t.registered();
    const r = await guest.json('GET', `/api/v1/invitations/${postId}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      post_id: postId,
      public_key: host.publicKey,
      nickname: 'hosty',
      registered: true,
      status: 'active',
      type: 'supply',
      tags: ['game', 'rps'],
      protocol_id: body['protocol_id'],
      iroh_ticket: body['iroh_ticket'],
      transport: 'iroh',
      transport_info: body['transport_info'],
      transport_binding_signature: body['transport_binding_signature'],
      host_control_mode: 'autonomous',
    });
    // The guest's own check (A8) passes on what the server returns.
    const canonical = transportBindingCanonical(
      r.body['public_key'] as string,
      'iroh',
      (r.body['transport_info'] as { ticket: string }).ticket,
      r.body['protocol_id'] as string,
    );
    expect(
      t.crypto.ed25519Verify(Buffer.from(host.publicKey, 'hex'), utf8(canonical), Buffer.from(r.body['transport_binding_signature'] as string, 'hex')),
    ).toBe(true);
  });

  it('refuses a post whose transport binding does not verify', async () => {
    const t = server();
    const host = await t.registered();
    const other = await t.registered();
    // Signed by someone else's key.
    const foreign = invitationBody(other);
    const r1 = await host.json('POST', '/api/v1/invitations', { body: foreign });
    expect(r1.status).toBe(400);
    expect(r1.body['code']).toBe('BINDING_INVALID');
    // Signed over another ticket.
    const swapped = {
      ...invitationBody(host),
      iroh_ticket: 'attacker-ticket',
      transport_info: { version: 1, endpoint_id: host.publicKey, ticket: 'attacker-ticket' },
    };
    expect((await host.json('POST', '/api/v1/invitations', { body: swapped })).body['code']).toBe('BINDING_INVALID');
    // Signed over another protocol.
    expect((await host.json('POST', '/api/v1/invitations', { body: { ...invitationBody(host), protocol_id: randomProtocolId() } })).body['code']).toBe(
      'BINDING_INVALID',
    );
    // The two ticket fields disagree.
    const b = invitationBody(host);
    const mismatch = await host.json('POST', '/api/v1/invitations', {
      body: { ...b, transport_info: { version: 1, endpoint_id: host.publicKey, ticket: 'other' } },
    });
    expect(mismatch.body['code']).toBe('TICKET_MISMATCH');
    const missing = { ...invitationBody(host) };
    delete missing['transport_binding_signature'];
    expect((await host.json('POST', '/api/v1/invitations', { body: missing })).body['code']).toBe('FIELD_MISSING');
  });

  it('validates type, tags, sizes and ids with typed 400s', async () => {
    const t = server();
    const host = await t.registered();
    const bad = [
      { type: 'offer' },
      { tags: 'game' },
      { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) },
      { tags: ['a,b'] },
      { message: 'm'.repeat(513) },
      { message: 'bell\u0007' },
      { host_control_mode: 'robot' },
      { options: [1, 2] },
      { options: { blob: 'x'.repeat(9000) } },
    ];
    for (const over of bad) {
      const r = await host.json('POST', '/api/v1/invitations', { body: { ...invitationBody(host), ...over } });
      expect(r.status, JSON.stringify(over).slice(0, 60)).toBe(400);
      expect(['FIELD_INVALID', 'FIELD_TOO_LARGE']).toContain(r.body['code']);
    }
    const badPid = await host.json('POST', '/api/v1/invitations', { body: { ...invitationBody(host), protocol_id: 'ABC' } });
    expect(badPid.status).toBe(400);
  });

  it('answers 404 for an unknown post', async () => {
    const t = server();
    const a = await t.registered();
    for (const id of [toHex(randomBytes(16)), 'not-an-id', '..%2f..%2fetc']) {
      const r = await a.json('GET', `/api/v1/invitations/${id}`);
      expect(r.status).toBe(404);
      expect(r.body['code']).toBe('INVITATION_NOT_FOUND');
    }
    expect((await a.json('POST', `/api/v1/invitations/${toHex(randomBytes(16))}/renew`, { body: {} })).status).toBe(404);
    expect((await a.json('DELETE', `/api/v1/invitations/${toHex(randomBytes(16))}`)).status).toBe(404);
  });

  it('lets only the host renew or cancel; a cancelled invitation leaves browse', async () => {
    const t = server();
    const host = await t.registered();
    const other = await t.registered();
    const protocolId = randomProtocolId();
    const { postId } = await postInvitation(host, { protocolId });
    const renewByOther = await other.json('POST', `/api/v1/invitations/${postId}/renew`, { body: {} });
    expect(renewByOther.status).toBe(403);
    expect(renewByOther.body['code']).toBe('NOT_OWNER');
    const cancelByOther = await other.json('DELETE', `/api/v1/invitations/${postId}`);
    expect(cancelByOther.status).toBe(403);
    expect(cancelByOther.body['code']).toBe('NOT_OWNER');
    const listed = await other.json('GET', `/api/v1/invitations?protocol_id=${protocolId}`);
    expect((listed.body['results'] as unknown[]).length).toBe(1);

    const cancel = await host.send('DELETE', `/api/v1/invitations/${postId}`);
    expect(cancel.status).toBe(204);
    expect((await host.send('DELETE', `/api/v1/invitations/${postId}`)).status).toBe(204);
    expect((await other.json('GET', `/api/v1/invitations/${postId}`)).body['status']).toBe('cancelled');
    const after = await other.json('GET', `/api/v1/invitations?protocol_id=${protocolId}`);
    expect(after.body).toMatchObject({ results: [], total: 0 });
    const renew = await host.json('POST', `/api/v1/invitations/${postId}/renew`, { body: {} });
    expect(renew.status).toBe(409);
    expect(renew.body['code']).toBe('INVITATION_NOT_ACTIVE');
  });

  it('expires an invitation that is not renewed, and renewal pushes expiry forward', async () => {
    const t = server();
    const host = await t.registered();
    const protocolId = randomProtocolId();
    const { postId } = await postInvitation(host, { protocolId });
    const ttl = t.server.ctx.config.invitationTtlSeconds;
    t.clock.advance(ttl - 10);
    const renew = await host.json('POST', `/api/v1/invitations/${postId}/renew`, { body: {} });
    expect(renew.status).toBe(200);
    expect(renew.body['expires_at']).toBe(Math.floor(t.clock.now() / 1000) + ttl);
    t.clock.advance(ttl - 10);
    expect((await host.json('GET', `/api/v1/invitations?protocol_id=${protocolId}`)).body['total']).toBe(1);
    t.clock.advance(11);
    expect((await host.json('GET', `/api/v1/invitations?protocol_id=${protocolId}`)).body).toMatchObject({ results: [], total: 0 });
    expect((await host.json('GET', `/api/v1/invitations/${postId}`)).body['status']).toBe('expired');
    const late = await host.json('POST', `/api/v1/invitations/${postId}/renew`, { body: {} });
    expect(late.status).toBe(409);
  });

  it('browses by protocol_id, type and tags, newest first, with limit and cursor', async () => {
    const t = server();
    const host = await t.registered();
    const pid = randomProtocolId();
    const posted: string[] = [];
    for (let i = 0; i < 5; i++) {
      posted.push((await postInvitation(host, { protocolId: pid, type: i % 2 === 0 ? 'supply' : 'demand', tags: i < 3 ? ['game', 'rps'] : ['game'] })).postId);
      t.clock.advance(1);
    }
    await postInvitation(host, { tags: ['game', 'rps'] }); // another protocol
    const q = async (query: string) => (await host.json('GET', `/api/v1/invitations?${query}`)).body;
    const all = await q(`protocol_id=${pid}`);
    expect(all['total']).toBe(5);
    expect((all['results'] as { post_id: string }[]).map((r) => r.post_id)).toEqual([...posted].reverse());
    expect((await q(`protocol_id=${pid}&type=demand`))['total']).toBe(2);
    expect((await q(`protocol_id=${pid}&tags=rps`))['total']).toBe(3);
    expect((await q(`protocol_id=${pid}&tags=rps%2Cgame&type=supply`))['total']).toBe(2);
    expect((await q(`protocol_id=${pid}&tags=nothing`))['total']).toBe(0);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Record<string, unknown> = await q(`protocol_id=${pid}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      const results = page['results'] as { post_id: string }[];
      expect(results.length).toBeLessThanOrEqual(2);
      expect(page['total']).toBe(5);
      seen.push(...results.map((r) => r.post_id));
      cursor = page['next_cursor'] as string | null;
    } while (cursor !== null);
    expect(seen).toEqual([...posted].reverse());
  });

  it('refuses bad browse filters with a typed 400', async () => {
    const t = server();
    const a = await t.registered();
    for (const query of ['protocol_id=xyz', 'type=offer', 'limit=0', 'limit=101', 'limit=ten', 'tags=', 'tags=a%20b', 'cursor=!!!', 'cursor=YWJj']) {
      const r = await a.json('GET', `/api/v1/invitations?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body['code']).toBe('QUERY_INVALID');
    }
  });
});
