// The registry client's group calls (ts/registry/client.ts, ts/registry/group.ts) against our own
// server in process, on a virtual clock: a room opened, a member admitted with both signatures, the
// lease renewed with a recovery floor, a claim refused while the lease runs and granted after it, the
// old leader fenced, the room closed. Also the strict reading of a group record and the reference's
// rules over it (start policy, lease expiry by the server's clock).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHex, utf8 } from '../../ts/crypto/index.js';
import { checkpointCertificate, signAdmission, ZERO_HASH } from '../../ts/group/wire.js';
import { buildInvitation, RegistryClient, RegistryError } from '../../ts/registry/client.js';
import { asGroupRecord, leaseExpired, leaseSecondsOf, startReady } from '../../ts/registry/group.js';
import { openTestServer, type TestServer } from '../server/harness.js';

let t: TestServer;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ t, close } = await openTestServer('pglite'));
}, 60_000);
afterAll(() => close?.());

/** A client on the in-process server, its requests stamped with the server's virtual clock. */
async function agent(): Promise<{ client: RegistryClient; seed: Uint8Array }> {
  const seed = new Uint8Array(randomBytes(32));
  const client = new RegistryClient('http://registry.test', seed, t.crypto, { fetch: async (url, init) => t.server.app.request(url, init), now: t.clock.now });
  await client.register('agent');
  return { client, seed };
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RegistryError) return `${e.status} ${e.serverCode ?? e.code}`;
    throw e;
  }
  throw new Error('expected a RegistryError');
}

describe('the groups API through the registry client', () => {
  it('opens, admits, renews, fences a claim until the lease is over, hands over and closes', async () => {
    const leader = await agent();
    const alice = await agent();
    const pid = toHex(t.crypto.sha256(utf8(`protocol ${Math.random()}`)));
    const { postId } = await leader.client.postInvitation(
      buildInvitation(t.crypto, leader.seed, { message: 'room', ticket: 'ticket-0', protocolId: pid, controlMode: 'autonomous' }),
    );
    const g = await leader.client.createGroup(postId, { min_participants: 2, max_participants: 4, allow_late_join: true, recovery_mode: 'exact' });
    expect(g).toMatchObject({
      post_id: postId,
      protocol_id: pid,
      leader_public_key: leader.client.publicKey,
      leader_epoch: 0,
      status: 'lobby',
      participant_count: 1,
      iroh_ticket: 'ticket-0',
    });
    expect(g.members).toEqual([{ member_id: g.members[0]!.member_id, public_key: leader.client.publicKey, seat: 0, status: 'active' }]);
    expect(await alice.client.getGroupByPost(postId)).toEqual({ ...g, server_time: g.server_time });

    // The admission the leader signs over the channel, posted by the member with its own signature.
    const nonce = toHex(randomBytes(16));
    const leaderSig = signAdmission(t.crypto, toHex(leader.seed), {
      group_id: g.group_id,
      leader_public_key: g.leader_public_key,
      member_public_key: alice.client.publicKey,
      protocol_id: pid,
      leader_epoch: 0,
      join_nonce: nonce,
    });
    const a = await alice.client.admitGroupMember(g, nonce, leaderSig);
    expect(a).toMatchObject({ group_id: g.group_id, public_key: alice.client.publicKey, seat: 1, status: 'active', leader_epoch: 0, membership_version: 2 });
    expect(await code(alice.client.admitGroupMember(g, nonce, '0'.repeat(128)))).toBe('403 ADMISSION_INVALID');
    // Reconnecting keeps the seat.
    expect((await alice.client.admitGroupMember(g, nonce, leaderSig)).seat).toBe(1);
    await alice.client.groupMemberHeartbeat(g.group_id);
    expect(startReady(await leader.client.getGroup(g.group_id), 'min_ready')).toBe(true);

    // The checkpoint the leader certified at seq 3, which alice holds.
    const cp = { seq: 3, frame_hash: 'a'.repeat(64), membership_version: 2, checkpoint_hash: 'b'.repeat(64) };
    const signature = toHex(
      t.crypto.ed25519Sign(leader.seed, utf8(checkpointCertificate({ group_id: g.group_id, leader_public_key: g.leader_public_key, leader_epoch: 0, ...cp }))),
    );
    const renewed = await leader.client.groupHeartbeat(g.group_id, {
      protocolId: pid,
      leaderEpoch: 0,
      checkpointSeq: 3,
      checkpointHash: cp.checkpoint_hash,
      ticket: 'ticket-1',
    });
    expect(renewed).toMatchObject({ checkpoint_seq: 3, checkpoint_hash: cp.checkpoint_hash, iroh_ticket: 'ticket-1' });
    expect(leaseExpired(renewed)).toBe(false);

    const claim = () =>
      alice.client.claimGroupLeader(g.group_id, {
        protocolId: pid,
        expectedEpoch: 0,
        checkpoint: { ...cp, checkpoint_signature: signature },
        ticket: 'ticket-alice',
      });
    expect(await code(claim())).toBe('409 LEASE_ACTIVE');
    t.clock.advance(leaseSecondsOf(renewed) + 1);
    expect(leaseExpired(await alice.client.getGroup(g.group_id))).toBe(true);
    const won = await claim();
    expect(won).toMatchObject({ leader_public_key: alice.client.publicKey, leader_epoch: 1, iroh_ticket: 'ticket-alice', checkpoint_seq: 3 });
    expect(await code(claim())).toBe('409 STALE_EPOCH');

    // The old leader is fenced; the new one closes the room, which takes its invitation down.
    expect(
      await code(
        leader.client.groupHeartbeat(g.group_id, { protocolId: pid, leaderEpoch: 0, checkpointSeq: 3, checkpointHash: cp.checkpoint_hash, ticket: 'ticket-2' }),
      ),
    ).toBe('409 NOT_LEADER');
    expect(await code(leader.client.setGroupStatus(g.group_id, 0, 'closed'))).toBe('409 NOT_LEADER');
    expect((await alice.client.setGroupStatus(g.group_id, 1, 'closed')).status).toBe('closed');
    expect(await code(leader.client.leaveGroup(g.group_id).then(() => leader.client.groupMemberHeartbeat(g.group_id)))).toBe('409 GROUP_CLOSED');
  });

  it('refuses a group id that is not one before asking', async () => {
    const { client } = await agent();
    expect(await code(client.getGroup('../x'))).toBe('undefined REGISTRY_BAD_ARGUMENT');
  });
});

describe('reading a group record', () => {
  const record = (over: Record<string, unknown> = {}) => ({
    group_id: '0'.repeat(32),
    post_id: 'p'.repeat(32),
    protocol_id: 'c'.repeat(64),
    leader_public_key: 'A'.repeat(64),
    leader_epoch: 2,
    membership_version: 3,
    participant_count: 3,
    min_participants: 2,
    max_participants: 4,
    allow_late_join: true,
    recovery_mode: 'exact',
    status: 'active',
    checkpoint_seq: 0,
    checkpoint_hash: ZERO_HASH,
    iroh_ticket: 'ticket',
    transport_binding_signature: 'f'.repeat(128),
    leader_lease_seconds: 15,
    leader_lease_expires_at: '2026-01-01T00:00:15.000Z',
    server_time: '2026-01-01T00:00:10.000Z',
    members: [
      { member_id: 'm2', public_key: 'B'.repeat(64), seat: 2, status: 'active', joined_at: 'x' },
      { member_id: 'm0', public_key: 'A'.repeat(64), seat: 0, status: 'active' },
      { member_id: 'm1', public_key: 'C'.repeat(64), seat: 1, status: 'left' },
    ],
    ...over,
  });

  it('keeps the active members as a checkpoint holds them, and lowercases keys', () => {
    const g = asGroupRecord(record(), 200);
    expect(g.leader_public_key).toBe('a'.repeat(64));
    expect(g.members).toEqual([
      { member_id: 'm0', public_key: 'a'.repeat(64), seat: 0, status: 'active' },
      { member_id: 'm2', public_key: 'b'.repeat(64), seat: 2, status: 'active' },
    ]);
  });

  it('refuses what it cannot act on safely', () => {
    const bad = (over: Record<string, unknown>) => {
      try {
        asGroupRecord(record(over), 200);
        return 'accepted';
      } catch (e) {
        return (e as RegistryError).code;
      }
    };
    for (const over of [
      { group_id: '../../x' },
      { leader_public_key: 'zz' },
      { protocol_id: 'C'.repeat(64) },
      { leader_epoch: -1 },
      { leader_epoch: 1.5 },
      { checkpoint_hash: 'x' },
      { recovery_mode: 'maybe' },
      { allow_late_join: 'yes' },
      { members: 'all' },
      { members: [{ public_key: 'a'.repeat(64), seat: 40, status: 'active' }] },
      {
        members: [
          { public_key: 'a'.repeat(64), seat: 1, status: 'active' },
          { public_key: 'A'.repeat(64), seat: 2, status: 'active' },
        ],
      },
      { iroh_ticket: '' },
    ])
      expect(bad(over), JSON.stringify(over)).toBe('REGISTRY_BAD_RESPONSE');
    expect(() => asGroupRecord([], 200)).toThrow(RegistryError);
  });

  it('reads the lease as the reference does: 3..300 s, else 15; expiry by the server’s own clock', () => {
    expect(leaseSecondsOf(asGroupRecord(record(), 200))).toBe(15);
    expect(leaseSecondsOf(asGroupRecord(record({ leader_lease_seconds: 2 }), 200))).toBe(15);
    expect(leaseSecondsOf(asGroupRecord(record({ leader_lease_seconds: 60 }), 200))).toBe(60);
    expect(leaseExpired(asGroupRecord(record(), 200))).toBe(false);
    expect(leaseExpired(asGroupRecord(record({ server_time: '2026-01-01T00:00:15.000Z' }), 200))).toBe(true);
    // Without both times nothing says the lease is over.
    expect(leaseExpired(asGroupRecord(record({ server_time: undefined }), 200))).toBe(false);
    expect(leaseExpired(asGroupRecord(record({ leader_lease_expires_at: 'soon' }), 200))).toBe(false);
  });

  it('starts a lobby at its minimum, or full for a full or fixed table', () => {
    const g = asGroupRecord(record({ participant_count: 3 }), 200);
    expect([startReady(g, 'min_ready'), startReady(g, 'full'), startReady(g, 'fixed_full')]).toEqual([true, false, false]);
    expect(startReady({ ...g, participant_count: 4 }, 'fixed_full')).toBe(true);
  });
});
