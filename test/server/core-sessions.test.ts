import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { toHex } from '../../ts/crypto/encoding.js';
import { postInvitation, sessionProof } from './fixtures.js';
import { describeDbs, type Agent, type TestServer } from './harness.js';

/** A host's invitation and a guest's proof for it, not yet posted. */
async function proposed(t: TestServer) {
  const host = await t.registered('host');
  const guest = await t.registered('guest');
  const { postId, body } = await postInvitation(host);
  const protocolId = body['protocol_id'] as string;
  return { host, guest, postId, protocolId, ...sessionProof(host, guest, postId, protocolId) };
}

async function paired(t: TestServer): Promise<{ host: Agent; guest: Agent; postId: string; protocolId: string; id: string }> {
  const { host, guest, postId, protocolId, proof, id } = await proposed(t);
  const r = await guest.json('POST', '/api/v1/sessions', { body: proof });
  expect(r.status).toBe(201);
  return { host, guest, postId, protocolId, id };
}

describeDbs('registry sessions', (server) => {
  it('records a session proof: 201 with the recomputed session_id, idempotent, and pairs the invitation', async () => {
    const t = server();
    const { host, guest, postId, protocolId, proof, id } = await proposed(t);
    const r = await guest.json('POST', '/api/v1/sessions', { body: proof });
    expect(r.status).toBe(201);
    expect(r.body['session_id']).toBe(id);
    expect(r.body['status']).toBe('matched');
    const again = await guest.json('POST', '/api/v1/sessions', { body: proof });
    expect(again.status).toBe(201);
    expect(again.body['session_id']).toBe(id);
    expect((await host.json('GET', `/api/v1/invitations/${postId}`)).body['status']).toBe('paired');
    expect((await host.json('GET', `/api/v1/invitations?protocol_id=${protocolId}`)).body['total']).toBe(0);
    const got = await host.json('GET', `/api/v1/sessions/${id}`);
    expect(got.body).toMatchObject({ session_id: id, post_id: postId, host_public_key: host.publicKey, guest_public_key: guest.publicKey, status: 'matched' });
    // A different guest cannot take the paired invitation.
    const late = await t.registered();
    const second = await late.json('POST', '/api/v1/sessions', { body: sessionProof(host, late, postId, protocolId).proof });
    expect(second.status).toBe(409);
    expect(second.body['code']).toBe('INVITATION_ALREADY_PAIRED');
  });

  it('refuses proofs with a wrong signature, a mismatched session_id, a foreign host or protocol', async () => {
    const t = server();
    const { host, guest, postId, protocolId, proof, id } = await proposed(t);
    const send = async (p: object, by = guest) => by.json('POST', '/api/v1/sessions', { body: p });
    const other = sessionProof(host, guest, postId, protocolId).proof;

    expect((await send({ ...proof, host_signature: other.host_signature })).body['code']).toBe('HOST_SIGNATURE_INVALID');
    expect((await send({ ...proof, guest_signature: other.guest_signature })).body['code']).toBe('GUEST_SIGNATURE_INVALID');
    expect((await send({ ...proof, guest_signature: proof.host_signature })).body['code']).toBe('GUEST_SIGNATURE_INVALID');
    const mismatch = await send({ ...proof, session_id: toHex(randomBytes(32)) });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body['code']).toBe('SESSION_ID_MISMATCH');
    // Signed correctly by a host who is not the invitation's host.
    const impostor = await t.registered();
    const foreign = sessionProof(impostor, guest, postId, protocolId).proof;
    expect((await send(foreign)).body['code']).toBe('HOST_MISMATCH');
    const wrongProto = sessionProof(host, guest, postId, toHex(randomBytes(32))).proof;
    expect((await send(wrongProto)).body['code']).toBe('PROTOCOL_MISMATCH');
    const unknownPost = sessionProof(host, guest, toHex(randomBytes(16)), protocolId).proof;
    expect((await send(unknownPost)).status).toBe(404);
    // A third party cannot record it, even with valid signatures.
    const bystander = await t.registered();
    const byOther = await send(proof, bystander);
    expect(byOther.status).toBe(403);
    expect(byOther.body['code']).toBe('NOT_PARTICIPANT');
    for (const broken of [
      { ...proof, session_nonce: 'xyz' },
      { ...proof, host_public_key: 'A'.repeat(64) },
      { ...proof, guest_public_key: host.publicKey },
    ]) {
      expect((await send(broken)).status).toBe(400);
    }
    // None of the above paired it: the honest proof still goes through.
    const ok = await send({ ...proof, session_id: id });
    expect(ok.status).toBe(201);
  });

  it('closes once, only by a participant, and closes the invitation', async () => {
    const t = server();
    const { host, guest, postId, id } = await paired(t);
    const stranger = await t.registered();
    const foreign = await stranger.json('POST', `/api/v1/sessions/${id}/status`, { body: { status: 'closed' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body['code']).toBe('NOT_PARTICIPANT');
    expect((await host.json('POST', `/api/v1/sessions/${id}/status`, { body: { status: 'finished' } })).status).toBe(400);
    const closed = await host.json('POST', `/api/v1/sessions/${id}/status`, { body: { status: 'closed', winner: 'guest' } });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ status: 'closed', winner: 'guest' });
    const second = await guest.json('POST', `/api/v1/sessions/${id}/status`, { body: { status: 'closed' } });
    expect(second.status).toBe(409);
    expect(second.body['code']).toBe('SESSION_FINAL');
    expect((await host.json('GET', `/api/v1/invitations/${postId}`)).body['status']).toBe('closed');
  });

  it('takes one result from each participant and none from anyone else', async () => {
    const t = server();
    const { host, guest, id } = await paired(t);
    const stranger = await t.registered();
    const foreign = await stranger.json('POST', `/api/v1/sessions/${id}/result`, { body: { winner: 'host' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body['code']).toBe('NOT_PARTICIPANT');
    expect((await host.json('POST', `/api/v1/sessions/${id}/result`, { body: { winner: 'nobody' } })).status).toBe(400);
    const first = await host.json('POST', `/api/v1/sessions/${id}/result`, { body: { winner: 'host' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ host_result: 'host', guest_result: null, result: null });
    const twice = await host.json('POST', `/api/v1/sessions/${id}/result`, { body: { winner: 'guest' } });
    expect(twice.status).toBe(409);
    expect(twice.body['code']).toBe('RESULT_ALREADY_REPORTED');
    const agreed = await guest.json('POST', `/api/v1/sessions/${id}/result`, { body: { winner: 'host' } });
    expect(agreed.body).toMatchObject({ host_result: 'host', guest_result: 'host', result: 'host' });
  });

  it('answers 404 for an unknown session on every session route', async () => {
    const t = server();
    const a = await t.registered();
    const unknown = toHex(randomBytes(32));
    expect((await a.json('GET', `/api/v1/sessions/${unknown}`)).body['code']).toBe('SESSION_NOT_FOUND');
    expect((await a.json('GET', '/api/v1/sessions/nothex')).status).toBe(404);
    expect((await a.json('POST', `/api/v1/sessions/${unknown}/status`, { body: { status: 'closed' } })).status).toBe(404);
    expect((await a.json('POST', `/api/v1/sessions/${unknown}/result`, { body: { winner: 'draw' } })).status).toBe(404);
  });
});
