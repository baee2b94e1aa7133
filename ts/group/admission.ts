/**
 * Admission to a group, without I/O. Three parties: the member asks the registry to admit it (a POST
 * carrying the admission string signed by leader and member: `checkAdmissionPost`, which a registry or
 * the in-process arbiter runs), then proves to the leader over a fresh channel that it holds its key
 * (`join` → the leader's `admission` with a challenge → the member's `ready`: `LeaderAdmission`), and
 * the leader accepts it only as the member record the registry lists. The caller supplies the
 * challenge's 16 random bytes, so this module stays deterministic.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import type { GroupMember } from '../hooks/types.js';
import { GroupError } from './errors.js';
import { MAX_MEMBER_ID, checkChannelChallenge, readJoin, signAdmission, verifyAdmission, verifyChannelReady, type AdmissionFields } from './wire.js';

export type AdmissionRefusal =
  | 'JOIN_INVALID'
  | 'CHALLENGE_INVALID'
  | 'READY_MISMATCH'
  | 'PROOF_INVALID'
  | 'PROOF_SIGNATURE'
  | 'NOT_LISTED'
  | 'LISTING_MISMATCH'
  | 'EPOCH_MISMATCH'
  | 'LEADER_SIGNATURE'
  | 'MEMBER_SIGNATURE';

/** A refused admission; `message` is the reason the leader sends as `{_group: "error", reason}`. */
export class AdmissionError extends Error {
  constructor(
    readonly code: AdmissionRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'AdmissionError';
  }
}

const refuse = (code: AdmissionRefusal, message: string): never => {
  throw new AdmissionError(code, message);
};

export interface GroupIdentity {
  groupId: string;
  protocolId: string;
  leaderEpoch: number;
}

/** What the leader remembers between its `admission` and the member's `ready`. */
export interface PendingAdmission {
  member_public_key: string;
  join_nonce: string;
  channel_challenge: string;
}

export class LeaderAdmission {
  private readonly leaderPk: string;

  constructor(
    private readonly crypto: Crypto,
    private readonly group: GroupIdentity,
    private readonly leaderSeed: string,
  ) {
    this.leaderPk = toHex(crypto.ed25519PublicKey(fromHex(leaderSeed)));
  }

  /** The member's `join` → the leader's signed `admission` with the given challenge (32 lowercase hex). */
  offer(join: unknown, challenge: string): { admission: Record<string, unknown>; pending: PendingAdmission } {
    let j: { member_public_key: string; join_nonce: string };
    try {
      j = readJoin(join, this.group.groupId);
      checkChannelChallenge(challenge);
    } catch (e) {
      if (e instanceof GroupError) return refuse(e.code === 'GROUP_CHALLENGE' ? 'CHALLENGE_INVALID' : 'JOIN_INVALID', e.message);
      throw e;
    }
    const fields: AdmissionFields = {
      group_id: this.group.groupId,
      leader_public_key: this.leaderPk,
      member_public_key: j.member_public_key,
      protocol_id: this.group.protocolId,
      leader_epoch: this.group.leaderEpoch,
      join_nonce: j.join_nonce,
    };
    const admission = {
      _group: 'admission',
      group_id: this.group.groupId,
      protocol_id: this.group.protocolId,
      leader_public_key: this.leaderPk,
      leader_epoch: this.group.leaderEpoch,
      join_nonce: j.join_nonce,
      channel_challenge: challenge,
      leader_signature: signAdmission(this.crypto, this.leaderSeed, fields),
    };
    return { admission, pending: { ...j, channel_challenge: challenge } };
  }

  /**
   * The member's `ready` → the member record to add. `listed` is the registry's record of this key
   * (undefined when the registry does not list it as active): the proof's member_id and seat must be its.
   */
  accept(pending: PendingAdmission, ready: unknown, listed: GroupMember | undefined): GroupMember {
    const r = typeof ready === 'object' && ready !== null && !Array.isArray(ready) ? (ready as Record<string, unknown>) : {};
    const g = this.group;
    if (
      r['_group'] !== 'ready' ||
      r['group_id'] !== g.groupId ||
      r['protocol_id'] !== g.protocolId ||
      r['leader_epoch'] !== g.leaderEpoch ||
      r['member_public_key'] !== pending.member_public_key ||
      r['join_nonce'] !== pending.join_nonce ||
      r['channel_challenge'] !== pending.channel_challenge
    ) {
      refuse('READY_MISMATCH', 'member did not complete server admission');
    }
    const memberId = r['member_id'];
    const seat = r['seat'];
    const signature = r['member_signature'];
    if (
      typeof memberId !== 'string' ||
      memberId === '' ||
      memberId.length > MAX_MEMBER_ID ||
      typeof seat !== 'number' ||
      !Number.isInteger(seat) ||
      seat < 0 ||
      typeof signature !== 'string'
    ) {
      return refuse('PROOF_INVALID', 'member channel proof is invalid');
    }
    const proof = {
      group_id: g.groupId,
      protocol_id: g.protocolId,
      leader_epoch: g.leaderEpoch,
      member_public_key: pending.member_public_key,
      member_id: memberId,
      seat,
      join_nonce: pending.join_nonce,
      channel_challenge: pending.channel_challenge,
    };
    if (!verifyChannelReady(this.crypto, pending.member_public_key, proof, signature)) refuse('PROOF_SIGNATURE', 'member channel proof signature is invalid');
    if (!listed || listed.status !== 'active' || listed.public_key !== pending.member_public_key)
      return refuse('NOT_LISTED', 'server does not list the admitted member');
    if (listed.member_id !== memberId || listed.seat !== seat) refuse('LISTING_MISMATCH', 'member channel proof does not match server admission');
    return { ...listed };
  }
}

/** The member's admission request to the registry (`POST …/members`). */
export interface AdmissionPost {
  join_nonce: string;
  leader_epoch: number;
  leader_signature: string;
  member_signature: string;
}

/**
 * The registry's (or the in-process arbiter's) check of an admission request: the current epoch, and
 * the admission string signed by the current leader and by the member asking.
 */
export function checkAdmissionPost(crypto: Crypto, group: GroupIdentity & { leaderPublicKey: string }, memberPublicKey: string, post: AdmissionPost): void {
  if (post.leader_epoch !== group.leaderEpoch) refuse('EPOCH_MISMATCH', 'admission is for another leader epoch');
  let fields: AdmissionFields;
  try {
    fields = {
      group_id: group.groupId,
      leader_public_key: group.leaderPublicKey,
      member_public_key: memberPublicKey.toLowerCase(),
      protocol_id: group.protocolId,
      leader_epoch: group.leaderEpoch,
      join_nonce: post.join_nonce,
    };
    if (!verifyAdmission(crypto, group.leaderPublicKey, fields, post.leader_signature)) refuse('LEADER_SIGNATURE', 'leader admission signature is invalid');
    if (!verifyAdmission(crypto, memberPublicKey, fields, post.member_signature)) refuse('MEMBER_SIGNATURE', 'member admission signature is invalid');
  } catch (e) {
    if (e instanceof GroupError) refuse('MEMBER_SIGNATURE', e.message);
    throw e;
  }
}
