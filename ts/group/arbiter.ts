/**
 * Who leads a group's next epoch after its leader fails. With a registry server configured, its groups
 * API arbitrates claims (claim-leader with epoch fencing). Without one, two things stand in for it:
 * `LocalArbiter`, an in-process arbiter with the same fencing for tests and single-process runs, and
 * `serverlessSuccessor`, a rule every member computes alone from the last signed checkpoint, so that
 * members who cannot reach each other's arbiter still agree on one successor.
 *
 * The serverless rule: the successor of a failed leader is the next active member after it in seat
 * order (wrapping around), and it leads epoch = failed epoch + 1. If that member also fails to open its
 * epoch, the members apply the rule again from it, for the epoch after. Every member holds the same
 * checkpoint (it is signed and hash-chained), so every member names the same successor.
 */
import type { GroupMember } from '../hooks/types.js';

export interface LeaderClaim {
  groupId: string;
  /** The epoch claimed: exactly one more than the latest granted (or the group's start epoch). */
  epoch: number;
  claimant: string;
  /** The checkpoint the claimant will resume from. */
  checkpointHash: string;
}

export type ClaimResult = { granted: true; epoch: number; leader: string } | { granted: false; reason: string; epoch: number; leader: string };

export interface LeaderArbiter {
  claim(c: LeaderClaim): ClaimResult;
  current(groupId: string): { epoch: number; leader: string } | undefined;
}

/** First claim per (group, epoch) wins; a claim for any other epoch than the next is fenced off. */
export class LocalArbiter implements LeaderArbiter {
  private readonly groups = new Map<string, { epoch: number; leader: string; checkpointHash: string | null }>();

  /** Registers a group's first leader (epoch `epoch`, usually 0). */
  open(groupId: string, leader: string, epoch = 0): void {
    if (this.groups.has(groupId)) throw new Error(`group ${groupId} is already open`);
    this.groups.set(groupId, { epoch, leader, checkpointHash: null });
  }

  current(groupId: string): { epoch: number; leader: string } | undefined {
    const g = this.groups.get(groupId);
    return g && { epoch: g.epoch, leader: g.leader };
  }

  claim(c: LeaderClaim): ClaimResult {
    const g = this.groups.get(c.groupId);
    if (!g) return { granted: false, reason: 'unknown group', epoch: -1, leader: '' };
    if (c.epoch === g.epoch && c.claimant === g.leader && c.checkpointHash === g.checkpointHash) return { granted: true, epoch: g.epoch, leader: g.leader };
    if (c.epoch !== g.epoch + 1) return { granted: false, reason: `epoch ${c.epoch} is not the next epoch (${g.epoch + 1})`, epoch: g.epoch, leader: g.leader };
    this.groups.set(c.groupId, { epoch: c.epoch, leader: c.claimant, checkpointHash: c.checkpointHash });
    return { granted: true, epoch: c.epoch, leader: c.claimant };
  }
}

/** The serverless rule (module comment): the next active member after `failedLeader` in seat order. */
export function serverlessSuccessor(members: readonly GroupMember[], failedLeader: string): GroupMember | undefined {
  const active = members.filter((m) => m.status === 'active' && m.public_key !== failedLeader).sort((a, b) => a.seat - b.seat);
  const failedSeat = members.find((m) => m.public_key === failedLeader)?.seat ?? -1;
  return active.find((m) => m.seat > failedSeat) ?? active[0];
}
