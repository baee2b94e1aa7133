// A built-in group protocol played through the real group leader with one verifying replica per member,
// as the tests of the group built-ins set it up: seats whose keys derive from a label, the bootstrap every
// replica must apply, every envelope delivered to every replica, and a leader change to another seat from
// the checkpoint its replica holds.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../../ts/crypto/backend.js';
import { fromHex, toHex, utf8 } from '../../ts/crypto/encoding.js';
import { GroupLeader, groupConfigFromSpec, type Envelopes, type GroupConfig } from '../../ts/group/leader.js';
import { GroupReplica } from '../../ts/group/member.js';
import type { GroupHooks, GroupMember } from '../../ts/hooks/types.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import { expectEqual } from './fast-expect.js';

/** The group config a built-in's spec.json declares. */
export function builtinGroupConfig(folder: string): GroupConfig {
  return groupConfigFromSpec(JSON.parse(readFileSync(join(BUILTIN_DIR, folder, 'spec.json'), 'utf8')) as unknown);
}

export interface Seats {
  /** Seat i's Ed25519 seed (hex): SHA-256 of `<label> seat <i>`. */
  seedOf(i: number): string;
  /** Seat i's public key. */
  pk(i: number): string;
  /** One active member a seat, `<idPrefix><i>`. */
  members: GroupMember[];
}

/** `count` seats whose keys derive from `label` (each derived once: with the js backend that is a scalar multiplication). */
export function derivedSeats(crypto: Crypto, label: string, count: number, idPrefix: string): Seats {
  const seedOf = (i: number) => toHex(crypto.sha256(utf8(`${label} seat ${i}`)));
  const keys = Array.from({ length: count }, (_, i) => toHex(crypto.ed25519PublicKey(fromHex(seedOf(i)))));
  const pk = (i: number) => keys[i]!;
  const members = keys.map((public_key, seat): GroupMember => ({ member_id: `${idPrefix}${seat}`, public_key, seat, status: 'active' }));
  return { seedOf, pk, members };
}

export interface GroupTable {
  /** The leader of the current epoch (a failover replaces it). */
  leader: GroupLeader;
  /** One replica a member, in seat order. */
  replicas: GroupReplica[];
  /** Every envelope to its replica, each of which must apply it (the assertion built only where the plain check fails). */
  deliver(envs: Envelopes): void;
  /**
   * A leader change: seat `seat` leads the next epoch with `hooks`, from the checkpoint its replica holds
   * (or `checkpoint`); every replica follows it and applies the frame that opens the epoch. The new leader.
   */
  failover(hooks: GroupHooks, seat: number, checkpoint?: unknown): GroupLeader;
}

/** Seat 0 starts the group with `hooks`; each member's replica must apply its bootstrap. */
export function startTable(o: { crypto: Crypto; seats: Seats; config: GroupConfig; groupId: string; hooks: GroupHooks }): GroupTable {
  const { crypto, seats, config, groupId } = o;
  const { members } = seats;
  let epoch = 0;
  const leader = GroupLeader.start({
    crypto,
    hooks: o.hooks,
    config,
    groupId,
    leaderSeed: seats.seedOf(0),
    leaderEpoch: epoch,
    membershipVersion: members.length,
    members,
  });
  const replicas = members.map(
    (x) => new GroupReplica({ crypto, groupId, viewerPublicKey: x.public_key, leaderPublicKey: leader.leaderPublicKey, leaderEpoch: epoch }),
  );
  for (const r of replicas) expectEqual(r.apply(leader.bootstrapEnvelope(r.viewerPublicKey), { bootstrap: true }), { status: 'applied' });
  const table: GroupTable = {
    leader,
    replicas,
    deliver(envs) {
      for (const r of replicas) expectEqual(r.apply(envs[r.viewerPublicKey]), { status: 'applied' });
    },
    failover(hooks, seat, checkpoint = replicas[seat]!.checkpoint) {
      epoch += 1;
      const next = GroupLeader.fromCheckpoint(
        { crypto, hooks, config, groupId, leaderSeed: seats.seedOf(seat), leaderEpoch: epoch, membershipVersion: members.length },
        checkpoint,
      );
      table.leader = next;
      for (const r of replicas) r.advanceEpoch(next.leaderPublicKey, epoch);
      table.deliver(next.lastEnvelopes);
      return next;
    },
  };
  return table;
}
