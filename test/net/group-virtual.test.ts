// The in-memory registry the virtual group runner (ts/net/group-virtual.ts) plays against keeps the
// server's rules for a leader's lease and the claim of the next epoch (ts/server/routes/groups.ts):
// a claim waits out the lease, names the current epoch, meets the recovery floor and brings a
// checkpoint the replaced leader certified; of two claims for one epoch only the first is granted; a
// fenced leader's renewal is refused. Time is the virtual clock's, so a 15-second lease costs nothing.
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { admissionCanonical, checkpointCertificate } from '../../ts/group/wire.js';
import { MemoryRegistry, VirtualClock } from '../../ts/net/group-virtual.js';
import { RegistryError } from '../../ts/registry/errors.js';
import { buildInvitation } from '../../ts/registry/invitation.js';

const c = getCrypto();
const seeds = [0, 1, 2].map((i) => c.sha256(utf8(`virtual registry seat ${i}`)));
const pks = seeds.map((s) => toHex(c.ed25519PublicKey(s)));
const PROTOCOL = 'ab'.repeat(32);

async function lobby() {
  const clock = new VirtualClock();
  const registry = new MemoryRegistry(c, clock);
  const [host, m1, m2] = seeds.map((s) => registry.client(s));
  const { postId } = await host!.postInvitation(
    buildInvitation(c, seeds[0]!, { message: 'm', ticket: 'memory-0', protocolId: PROTOCOL, controlMode: 'autonomous', transport: 'iroh' }),
  );
  const g = await host!.createGroup(postId, { min_participants: 3, max_participants: 3, allow_late_join: false, recovery_mode: 'exact' });
  for (const [i, m] of [m1!, m2!].entries()) {
    const nonce = `nonce-${i}`;
    const admission = {
      group_id: g.group_id,
      leader_public_key: pks[0]!,
      member_public_key: pks[i + 1]!,
      protocol_id: PROTOCOL,
      leader_epoch: 0,
      join_nonce: nonce,
    };
    // The leader's half of the admission, as its channel hands it to the member.
    const sig = toHex(c.ed25519Sign(seeds[0]!, utf8(admissionCanonical(admission))));
    expect(await m.admitGroupMember(g, nonce, sig)).toMatchObject({ seat: i + 1 });
  }
  return { clock, host: host!, m1: m1!, m2: m2!, groupId: g.group_id };
}

/** A checkpoint of epoch 0 at `seq`, certified by `signer` (the leader, unless a test forges it). */
function checkpoint(groupId: string, seq: number, signer = seeds[0]!) {
  const cp = {
    group_id: groupId,
    leader_public_key: pks[0]!,
    leader_epoch: 0,
    seq,
    frame_hash: 'f'.repeat(64),
    membership_version: 3,
    checkpoint_hash: seq.toString(16).padStart(64, '0'),
  };
  return { ...cp, checkpoint_signature: toHex(c.ed25519Sign(signer, utf8(checkpointCertificate(cp)))) };
}

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof RegistryError) return [e.status, e.serverCode];
    throw e;
  }
  return 'granted';
};

describe('the virtual registry keeps the server rules for leases and claims', () => {
  it('a claim waits out the lease, meets the floor, brings a certified checkpoint, and is granted once per epoch; the fenced leader is refused', async () => {
    const { clock, host, m1, m2, groupId } = await lobby();
    await host.groupHeartbeat(groupId, {
      protocolId: PROTOCOL,
      leaderEpoch: 0,
      checkpointSeq: 5,
      checkpointHash: checkpoint(groupId, 5).checkpoint_hash,
      ticket: 't0',
    });
    const claim = (m: typeof m1, seq: number, signer?: Uint8Array) =>
      m.claimGroupLeader(groupId, { protocolId: PROTOCOL, expectedEpoch: 0, checkpoint: checkpoint(groupId, seq, signer), ticket: 't1' });
    expect(await refusal(claim(m1, 5))).toEqual([409, 'LEASE_ACTIVE']);
    clock.setTimer(15_000, () => undefined);
    await clock.run(() => false, 15_000);
    expect(await refusal(claim(m1, 4))).toEqual([409, 'CHECKPOINT_BEHIND']);
    expect(await refusal(claim(m1, 6, seeds[2]))).toEqual([403, 'CHECKPOINT_SIGNATURE_INVALID']);
    const granted = await claim(m1, 6);
    expect(granted).toMatchObject({ leader_public_key: pks[1], leader_epoch: 1, checkpoint_seq: 6 });
    expect(await refusal(claim(m2, 6))).toEqual([409, 'STALE_EPOCH']);
    expect(
      await refusal(host.groupHeartbeat(groupId, { protocolId: PROTOCOL, leaderEpoch: 0, checkpointSeq: 6, checkpointHash: '0'.repeat(64), ticket: 't0' })),
    ).toEqual([409, 'NOT_LEADER']);
    // The new leader's lease runs from its claim, on the virtual clock.
    const g = await m2.getGroup(groupId);
    expect(Date.parse(g.leader_lease_expires_at!) - Date.parse(g.server_time!)).toBe(15_000);
  });
});
