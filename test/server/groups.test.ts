import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import { describeDbs, type Agent, type TestServer } from './harness.js';

// The signed statements, spelled out from NOTES A8/A18 rather than taken from the code under test.
const binding = (pk: string, ticket: string, pid: string) => `public_key:${pk}\ntransport:iroh\niroh_ticket:${ticket}\nprotocol_id:${pid}`;
const admission = (gid: string, leader: string, member: string, pid: string, epoch: number, nonce: string) =>
  `aigenora-group-admission-v1:${gid}:${leader}:${member}:${pid}:${epoch}:${nonce}`;
const certificate = (gid: string, leader: string, epoch: number, seq: number, frameHash: string, membershipVersion: number, checkpointHash: string) =>
  `aigenora-group-checkpoint-v1:${gid}:${leader}:${epoch}:${seq}:${frameHash}:${membershipVersion}:${checkpointHash}`;

const hex = (n: number) => randomBytes(n).toString('hex');
const sign = (a: Agent, text: string) => toHex(a.t.crypto.ed25519Sign(a.seed, utf8(text)));
const LEASE_SECONDS = 15;
const MEETING_ROOM_ID = '182ceaf26c288909862ad2f753c1e03858daac7e2550a18d2a856adfac02b58d';

type Group = Record<string, unknown> & { group_id: string; leader_epoch: number; leader_public_key: string };

interface Room {
  t: TestServer;
  leader: Agent;
  pid: string;
  postId: string;
  groupId: string;
  group: Group;
}

async function invitation(leader: Agent, pid: string): Promise<string> {
  const ticket = `ticket-${hex(8)}`;
  const r = await leader.json('POST', '/api/v1/invitations', {
    body: {
      protocol_id: pid,
      iroh_ticket: ticket,
      transport: 'iroh',
      type: 'supply',
      transport_binding_signature: sign(leader, binding(leader.publicKey, ticket, pid)),
    },
  });
  expect(r.status).toBe(201);
  return r.body['post_id'] as string;
}

async function room(t: TestServer, o: { max?: number; min?: number; lateJoin?: boolean; pid?: string } = {}): Promise<Room> {
  const leader = await t.registered('leader');
  const pid = o.pid ?? hex(32);
  const postId = await invitation(leader, pid);
  const r = await leader.json('POST', '/api/v1/groups', {
    body: { post_id: postId, min_participants: o.min ?? 2, max_participants: o.max ?? 4, allow_late_join: o.lateJoin ?? false, recovery_mode: 'exact' },
  });
  expect(r.status).toBe(201);
  const group = r.body as Group;
  return { t, leader, pid, postId, groupId: group.group_id, group };
}

const get = async (r: Room) => (await r.leader.json('GET', `/api/v1/groups/${r.groupId}`)).body as Group;

/** The member's admission, signed by `leader` (the current Leader unless a test forges it) and by `signer` (the member unless forged). */
async function admit(r: Room, member: Agent, o: { leader?: Agent; signer?: Agent; epoch?: number } = {}) {
  const g = await get(r);
  const epoch = o.epoch ?? g.leader_epoch;
  const nonce = hex(16);
  const statement = admission(r.groupId, g.leader_public_key, member.publicKey, r.pid, epoch, nonce);
  return member.json('POST', `/api/v1/groups/${r.groupId}/members`, {
    body: {
      join_nonce: nonce,
      leader_epoch: epoch,
      leader_signature: sign(o.leader ?? r.leader, statement),
      member_signature: sign(o.signer ?? member, statement),
    },
  });
}

function renewal(r: Room, who: Agent, o: { epoch: number; seq: number; hash?: string; ticket?: string }) {
  const ticket = o.ticket ?? `ticket-${hex(8)}`;
  return who.json('POST', `/api/v1/groups/${r.groupId}/heartbeat`, {
    body: {
      leader_epoch: o.epoch,
      checkpoint_seq: o.seq,
      checkpoint_hash: o.hash ?? hex(32),
      iroh_ticket: ticket,
      transport_binding_signature: sign(who, binding(who.publicKey, ticket, r.pid)),
    },
  });
}

/** A claim for the epoch after `expected`, with a checkpoint certified by `certifier` (the replaced Leader unless forged). */
function claim(r: Room, who: Agent, o: { expected: number; certifier: Agent; seq: number; certifiedEpoch?: number }) {
  const frameHash = hex(32);
  const checkpointHash = hex(32);
  const ticket = `ticket-${hex(8)}`;
  const cert = certificate(r.groupId, o.certifier.publicKey, o.certifiedEpoch ?? o.expected, o.seq, frameHash, 3, checkpointHash);
  return who.json('POST', `/api/v1/groups/${r.groupId}/claim-leader`, {
    body: {
      expected_epoch: o.expected,
      checkpoint_seq: o.seq,
      checkpoint_hash: checkpointHash,
      checkpoint_frame_hash: frameHash,
      checkpoint_membership_version: 3,
      checkpoint_signature: sign(o.certifier, cert),
      iroh_ticket: ticket,
      transport_binding_signature: sign(who, binding(who.publicKey, ticket, r.pid)),
    },
  });
}

describeDbs('groups', (server) => {
  it("opens a room for the host's own invitation, the Leader in seat 0", async () => {
    const t = server();
    const r = await room(t);
    const g = r.group;
    expect(g).toMatchObject({
      post_id: r.postId,
      protocol_id: r.pid,
      leader_public_key: r.leader.publicKey,
      leader_epoch: 0,
      membership_version: 1,
      participant_count: 1,
      min_participants: 2,
      max_participants: 4,
      allow_late_join: false,
      recovery_mode: 'exact',
      status: 'lobby',
      checkpoint_seq: 0,
      checkpoint_hash: '0'.repeat(64),
      leader_lease_seconds: LEASE_SECONDS,
      members: [{ public_key: r.leader.publicKey, seat: 0, status: 'active' }],
    });
    // The ticket and binding are the invitation's, which members verify before connecting.
    const inv = await r.leader.json('GET', `/api/v1/invitations/${r.postId}`);
    expect(g['iroh_ticket']).toBe(inv.body['iroh_ticket']);
    expect(g['transport_binding_signature']).toBe(inv.body['transport_binding_signature']);
    expect(Date.parse(g['leader_lease_expires_at'] as string) - Date.parse(g['server_time'] as string)).toBe(LEASE_SECONDS * 1000);

    const stranger = t.agent();
    expect((await stranger.json('GET', `/api/v1/groups/by-post/${r.postId}`)).body).toEqual({ ...g, server_time: expect.any(String) });
    expect((await t.fetch(`/api/v1/groups/${r.groupId}`)).status).toBe(401);
    expect(await stranger.json('GET', `/api/v1/groups/${hex(16)}`)).toMatchObject({ status: 404, body: { code: 'GROUP_NOT_FOUND' } });
    expect((await stranger.json('GET', '/api/v1/groups/zz')).body).toMatchObject({ code: 'ID_INVALID' });
  });

  it('refuses rooms for others’ or unknown invitations, twice for one, and outside the caps', async () => {
    const t = server();
    const leader = await t.registered('leader');
    const postId = await invitation(leader, hex(32));
    const create = (who: Agent, b: Record<string, unknown>) =>
      who.json('POST', '/api/v1/groups', {
        body: { post_id: postId, min_participants: 2, max_participants: 4, allow_late_join: false, recovery_mode: 'exact', ...b },
      });
    const other = await t.registered('other');
    expect(await create(other, {})).toMatchObject({ status: 403, body: { code: 'NOT_INVITATION_HOST' } });
    expect(await create(t.agent(), {})).toMatchObject({ status: 403, body: { code: 'NOT_REGISTERED' } });
    expect(await create(leader, { post_id: hex(16) })).toMatchObject({ status: 404, body: { code: 'INVITATION_NOT_FOUND' } });
    expect((await create(leader, { max_participants: 33 })).body).toMatchObject({ code: 'FIELD_INVALID' });
    expect((await create(leader, { min_participants: 5 })).body).toMatchObject({ code: 'FIELD_INVALID' });
    expect((await create(leader, { min_participants: 0 })).body).toMatchObject({ code: 'FIELD_INVALID' });
    expect((await create(leader, { max_participants: '4' })).body).toMatchObject({ code: 'FIELD_INVALID' });
    expect((await create(leader, { recovery_mode: 'hope' })).body).toMatchObject({ code: 'FIELD_INVALID' });
    expect((await create(leader, { allow_late_join: 'yes' })).body).toMatchObject({ code: 'FIELD_INVALID' });
    expect((await create(leader, { max_participants: 32 })).status).toBe(201);
    expect(await create(leader, {})).toMatchObject({ status: 409, body: { code: 'GROUP_EXISTS' } });

    const cancelled = await invitation(leader, hex(32));
    expect((await leader.send('DELETE', `/api/v1/invitations/${cancelled}`)).ok).toBe(true);
    expect((await create(leader, { post_id: cancelled })).body).toMatchObject({ code: 'INVITATION_NOT_ACTIVE' });
  });

  it("holds a registered protocol's rooms to its spec's participant and recovery policy", async () => {
    const t = server();
    const publisher = await t.registered('publisher');
    const spec = readFileSync(join(BUILTIN_DIR, 'meeting-room', 'spec.json'), 'utf8');
    const reg = await publisher.json('POST', '/api/v1/protocols', { raw: `{"protocol_id":"${MEETING_ROOM_ID}","spec_json":${spec}}` });
    expect([201, 409]).toContain(reg.status);
    const leader = await t.registered('leader');
    const postId = await invitation(leader, MEETING_ROOM_ID);
    const create = (b: Record<string, unknown>) =>
      leader.json('POST', '/api/v1/groups', {
        body: { post_id: postId, min_participants: 2, max_participants: 16, allow_late_join: true, recovery_mode: 'exact', ...b },
      });
    expect(await create({ max_participants: 32 })).toMatchObject({ status: 409, body: { code: 'GROUP_POLICY_MISMATCH' } });
    expect(await create({ allow_late_join: false })).toMatchObject({ status: 409, body: { code: 'GROUP_POLICY_MISMATCH' } });
    expect((await create({})).status).toBe(201);
  });

  it('admits a member signed by both sides, in the lowest free seat, and keeps its seat on reconnect', async () => {
    const t = server();
    const r = await room(t, { max: 3 });
    const alice = await t.registered('alice');
    const first = await admit(r, alice);
    expect(first).toMatchObject({
      status: 201,
      body: { group_id: r.groupId, public_key: alice.publicKey, seat: 1, status: 'active', leader_epoch: 0, membership_version: 2 },
    });
    const again = await admit(r, alice);
    expect(again).toMatchObject({ status: 200, body: { member_id: first.body['member_id'], seat: 1, membership_version: 2 } });

    const bob = await t.registered('bob');
    const mallory = await t.registered('mallory');
    expect(await admit(r, bob, { leader: mallory })).toMatchObject({ status: 403, body: { code: 'ADMISSION_INVALID' } });
    expect(await admit(r, bob, { signer: mallory })).toMatchObject({ status: 403, body: { code: 'ADMISSION_INVALID' } });
    expect(await admit(r, bob, { epoch: 1 })).toMatchObject({ status: 409, body: { code: 'STALE_EPOCH' } });
    const bad = await bob.json('POST', `/api/v1/groups/${r.groupId}/members`, {
      body: { join_nonce: '', leader_epoch: 0, leader_signature: 'ab', member_signature: 'cd' },
    });
    expect(bad).toMatchObject({ status: 400, body: { code: 'FIELD_INVALID' } });

    expect((await admit(r, bob)).body).toMatchObject({ seat: 2, membership_version: 3 });
    expect(await admit(r, mallory)).toMatchObject({ status: 409, body: { code: 'GROUP_FULL' } });
    // A seat freed by leaving is the next one given.
    expect((await alice.json('POST', `/api/v1/groups/${r.groupId}/leave`, { body: {} })).body).toMatchObject({ participant_count: 2, membership_version: 4 });
    expect((await admit(r, mallory)).body).toMatchObject({ seat: 1, membership_version: 5 });
    const g = await get(r);
    expect((g['members'] as { seat: number; public_key: string }[]).map((m) => [m.seat, m.public_key])).toEqual([
      [0, r.leader.publicKey],
      [1, mallory.publicKey],
      [2, bob.publicKey],
    ]);
  });

  it('takes no late joiners once started unless the room allows them', async () => {
    const t = server();
    for (const lateJoin of [false, true]) {
      const r = await room(t, { lateJoin });
      expect((await admit(r, await t.registered('m1'))).status).toBe(201);
      expect((await r.leader.json('POST', `/api/v1/groups/${r.groupId}/status`, { body: { leader_epoch: 0, status: 'active' } })).body).toMatchObject({
        status: 'active',
      });
      const late = await admit(r, await t.registered('late'));
      if (lateJoin) expect(late.status).toBe(201);
      else expect(late).toMatchObject({ status: 409, body: { code: 'LATE_JOIN_CLOSED' } });
    }
  });

  it("renews only the current Leader's lease, with a bound endpoint and a floor that never moves back", async () => {
    const t = server();
    const r = await room(t);
    const alice = await t.registered('alice');
    await admit(r, alice);
    t.clock.advance(10);
    const ok = await renewal(r, r.leader, { epoch: 0, seq: 5, ticket: 'ticket-renewed' });
    expect(ok).toMatchObject({ status: 200, body: { checkpoint_seq: 5, iroh_ticket: 'ticket-renewed', leader_epoch: 0 } });
    expect(Date.parse(ok.body['leader_lease_expires_at'] as string)).toBe(t.clock.now() + LEASE_SECONDS * 1000);

    expect(await renewal(r, alice, { epoch: 0, seq: 6 })).toMatchObject({ status: 409, body: { code: 'NOT_LEADER' } });
    expect(await renewal(r, r.leader, { epoch: 1, seq: 6 })).toMatchObject({ status: 409, body: { code: 'STALE_EPOCH' } });
    expect(await renewal(r, r.leader, { epoch: 0, seq: 4 })).toMatchObject({ status: 409, body: { code: 'CHECKPOINT_REGRESSION' } });
    expect(await renewal(r, r.leader, { epoch: 0, seq: 5 })).toMatchObject({ status: 409, body: { code: 'CHECKPOINT_CONFLICT' } });
    expect((await renewal(r, r.leader, { epoch: 0, seq: 5, hash: ok.body['checkpoint_hash'] as string })).status).toBe(200);
    const forged = await r.leader.json('POST', `/api/v1/groups/${r.groupId}/heartbeat`, {
      body: {
        leader_epoch: 0,
        checkpoint_seq: 7,
        checkpoint_hash: hex(32),
        iroh_ticket: 'ticket-x',
        transport_binding_signature: sign(r.leader, binding(r.leader.publicKey, 'ticket-y', r.pid)),
      },
    });
    expect(forged).toMatchObject({ status: 400, body: { code: 'BINDING_INVALID' } });

    const hb = await alice.json('POST', `/api/v1/groups/${r.groupId}/members/heartbeat`, { body: {} });
    expect(hb).toMatchObject({ status: 200, body: { public_key: alice.publicKey, seat: 1, last_seen_at: new Date(t.clock.now()).toISOString() } });
    const outsider = await t.registered('outsider');
    expect(await outsider.json('POST', `/api/v1/groups/${r.groupId}/members/heartbeat`, { body: {} })).toMatchObject({
      status: 403,
      body: { code: 'NOT_A_MEMBER' },
    });
  });

  it('fences claims: a member, the replaced epoch, an expired lease and a checkpoint the old Leader certified, not behind the floor', async () => {
    const t = server();
    const r = await room(t);
    const alice = await t.registered('alice');
    const bob = await t.registered('bob');
    await admit(r, alice);
    await admit(r, bob);
    expect((await renewal(r, r.leader, { epoch: 0, seq: 4 })).status).toBe(200);

    expect(await claim(r, alice, { expected: 0, certifier: r.leader, seq: 4 })).toMatchObject({ status: 409, body: { code: 'LEASE_ACTIVE' } });
    t.clock.advance(LEASE_SECONDS + 1);
    const outsider = await t.registered('outsider');
    expect(await claim(r, outsider, { expected: 0, certifier: r.leader, seq: 4 })).toMatchObject({ status: 403, body: { code: 'NOT_A_MEMBER' } });
    expect(await claim(r, alice, { expected: 1, certifier: r.leader, seq: 4 })).toMatchObject({ status: 409, body: { code: 'STALE_EPOCH' } });
    expect(await claim(r, alice, { expected: 0, certifier: alice, seq: 4 })).toMatchObject({ status: 403, body: { code: 'CHECKPOINT_SIGNATURE_INVALID' } });
    expect(await claim(r, alice, { expected: 0, certifier: r.leader, seq: 4, certifiedEpoch: 1 })).toMatchObject({
      status: 403,
      body: { code: 'CHECKPOINT_SIGNATURE_INVALID' },
    });
    expect(await claim(r, alice, { expected: 0, certifier: r.leader, seq: 3 })).toMatchObject({ status: 409, body: { code: 'CHECKPOINT_BEHIND' } });

    const won = await claim(r, alice, { expected: 0, certifier: r.leader, seq: 6 });
    expect(won).toMatchObject({
      status: 200,
      body: { leader_public_key: alice.publicKey, leader_epoch: 1, checkpoint_seq: 6, leader_lease_seconds: LEASE_SECONDS },
    });
    expect(Date.parse(won.body['leader_lease_expires_at'] as string)).toBe(t.clock.now() + LEASE_SECONDS * 1000);
    // The old Leader is fenced off the moment the epoch moves.
    expect(await renewal(r, r.leader, { epoch: 0, seq: 7 })).toMatchObject({ status: 409, body: { code: 'NOT_LEADER' } });
    expect((await r.leader.json('POST', `/api/v1/groups/${r.groupId}/status`, { body: { leader_epoch: 0, status: 'closed' } })).body).toMatchObject({
      code: 'NOT_LEADER',
    });
    expect(await claim(r, bob, { expected: 0, certifier: r.leader, seq: 6 })).toMatchObject({ status: 409, body: { code: 'STALE_EPOCH' } });
    expect((await renewal(r, alice, { epoch: 1, seq: 6, hash: won.body['checkpoint_hash'] as string })).status).toBe(200);
    // Admissions now need the new Leader's signature at the new epoch.
    const carol = await t.registered('carol');
    expect((await admit(r, carol, { leader: r.leader })).status).toBe(403);
    expect((await admit(r, carol, { leader: alice })).body).toMatchObject({ seat: 3, leader_epoch: 1 });
  });

  it('lets exactly one of two simultaneous claims for an epoch win', async () => {
    const t = server();
    for (let round = 0; round < 3; round++) {
      const r = await room(t);
      const members = [await t.registered('a'), await t.registered('b'), await t.registered('c')];
      for (const m of members) await admit(r, m);
      t.clock.advance(LEASE_SECONDS + 1);
      const results = await Promise.all(members.map((m) => claim(r, m, { expected: 0, certifier: r.leader, seq: 1 })));
      const winners = results.filter((x) => x.status === 200);
      expect(winners).toHaveLength(1);
      expect(results.filter((x) => x.status === 409).map((x) => x.body['code'])).toEqual(['STALE_EPOCH', 'STALE_EPOCH']);
      const g = await get(r);
      expect(g).toMatchObject({ leader_epoch: 1, leader_public_key: winners[0]!.body['leader_public_key'] });
    }
  });

  it('lets a departing Leader hand over at once, and closes the room and its invitation for good', async () => {
    const t = server();
    const r = await room(t);
    const alice = await t.registered('alice');
    await admit(r, alice);
    const left = await r.leader.json('POST', `/api/v1/groups/${r.groupId}/leave`, { body: {} });
    expect(left).toMatchObject({ status: 200, body: { participant_count: 1, membership_version: 3 } });
    expect(Date.parse(left.body['leader_lease_expires_at'] as string)).toBeLessThanOrEqual(t.clock.now());
    expect(await r.leader.json('POST', `/api/v1/groups/${r.groupId}/leave`, { body: {} })).toMatchObject({ status: 403, body: { code: 'NOT_A_MEMBER' } });
    // No waiting for the lease: the Leader gave it up.
    expect((await claim(r, alice, { expected: 0, certifier: r.leader, seq: 0 })).body).toMatchObject({ leader_public_key: alice.publicKey, leader_epoch: 1 });

    const status = (who: Agent, epoch: number, s: unknown) =>
      who.json('POST', `/api/v1/groups/${r.groupId}/status`, { body: { leader_epoch: epoch, status: s } });
    expect((await status(alice, 1, 'paused')).body).toMatchObject({ code: 'FIELD_INVALID' });
    expect(await status(alice, 0, 'active')).toMatchObject({ status: 409, body: { code: 'STALE_EPOCH' } });
    expect((await status(alice, 1, 'active')).body).toMatchObject({ status: 'active' });
    expect((await status(alice, 1, 'closed')).body).toMatchObject({ status: 'closed' });
    expect((await r.leader.json('GET', `/api/v1/invitations/${r.postId}`)).body).toMatchObject({ status: 'cancelled' });
    expect(await status(alice, 1, 'active')).toMatchObject({ status: 409, body: { code: 'GROUP_CLOSED' } });
    expect(await renewal(r, alice, { epoch: 1, seq: 0 })).toMatchObject({ status: 409, body: { code: 'GROUP_CLOSED' } });
    expect(await admit(r, await t.registered('late'), { leader: alice })).toMatchObject({ status: 409, body: { code: 'GROUP_CLOSED' } });
    expect((await get(r))['status']).toBe('closed');
  });
});
