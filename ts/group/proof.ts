/**
 * A portable proof that a group leader misbehaved, built from two envelopes it signed and checkable by
 * anyone who knows its public key: two different frames for one seq of one epoch (equivocation, also
 * across members: a frame hash does not depend on the viewer), or a frame that does not chain from the
 * one it signed just before (a broken chain).
 *
 * The proof carries no private view: the leader signs {frame_hash, view_hash, viewer_public_key}, so a
 * frame's core fields, its view hash and the signature suffice.
 */
import type { Crypto } from '../crypto/backend.js';
import { GroupError } from './errors.js';
import { groupJsonHash } from './json.js';
import { type CORE_FIELDS, frameCore, isHash, verifyView } from './wire.js';

export const GROUP_PROOF_KIND = 'aigenora-group-proof-v1';
export type GroupFault = 'equivocation' | 'broken_chain';

/** One signed frame as a proof carries it. */
export type SignedFrame = Record<(typeof CORE_FIELDS)[number] | 'frame_hash' | 'view_hash' | 'viewer_public_key' | 'signature', unknown>;

export interface GroupProof {
  kind: typeof GROUP_PROOF_KIND;
  fault: GroupFault;
  group_id: string;
  leader_public_key: string;
  leader_epoch: number;
  frames: [SignedFrame, SignedFrame];
}

export type ProofVerdict = { ok: true; fault: GroupFault } | { ok: false; reason: string };

/** The parts of an envelope a proof keeps. */
export function signedFrame(envelope: Record<string, unknown>): SignedFrame {
  return {
    ...frameCore(envelope),
    frame_hash: envelope['frame_hash'],
    view_hash: envelope['view_hash'],
    viewer_public_key: envelope['viewer_public_key'],
    signature: envelope['signature'],
  } as SignedFrame;
}

function frameOk(crypto: Crypto, f: SignedFrame, leader: string): string | undefined {
  if (typeof f !== 'object' || f === null) return 'a frame is not an object';
  let hash: string;
  try {
    hash = groupJsonHash(crypto, frameCore(f));
  } catch (e) {
    if (e instanceof GroupError) return `a frame is not canonical JSON: ${e.message}`;
    throw e;
  }
  if (!isHash(f.frame_hash) || hash !== f.frame_hash) return 'a frame hash is not the hash of its core';
  if (!isHash(f.view_hash) || typeof f.viewer_public_key !== 'string' || typeof f.signature !== 'string')
    return 'a frame lacks its view hash, viewer or signature';
  if (!verifyView(crypto, leader, f.frame_hash, f.view_hash, f.viewer_public_key, f.signature)) return 'a frame is not signed by the leader';
  return undefined;
}

/** Checks a proof: both frames signed by its leader in its group and epoch, and the fault it names. */
export function verifyGroupProof(crypto: Crypto, proof: unknown): ProofVerdict {
  if (typeof proof !== 'object' || proof === null) return { ok: false, reason: 'proof is not an object' };
  const p = proof as Partial<GroupProof>;
  if (p.kind !== GROUP_PROOF_KIND) return { ok: false, reason: 'not a group proof' };
  if (p.fault !== 'equivocation' && p.fault !== 'broken_chain') return { ok: false, reason: 'unknown fault' };
  if (typeof p.leader_public_key !== 'string' || !Array.isArray(p.frames) || p.frames.length !== 2)
    return { ok: false, reason: 'proof needs a leader and two frames' };
  const [a, b] = p.frames as [SignedFrame, SignedFrame];
  for (const f of [a, b]) {
    const bad = frameOk(crypto, f, p.leader_public_key);
    if (bad) return { ok: false, reason: bad };
    if (f.group_id !== p.group_id || f.leader_public_key !== p.leader_public_key || f.leader_epoch !== p.leader_epoch)
      return { ok: false, reason: 'a frame is from another group, leader or epoch' };
  }
  if (p.fault === 'equivocation') {
    if (a.seq !== b.seq) return { ok: false, reason: 'the frames are for different seqs' };
    if (a.frame_hash === b.frame_hash) return { ok: false, reason: 'the frames are the same frame' };
    return { ok: true, fault: 'equivocation' };
  }
  if (typeof a.seq !== 'number' || b.seq !== a.seq + 1) return { ok: false, reason: 'the second frame does not follow the first' };
  if (b.previous_hash === a.frame_hash) return { ok: false, reason: 'the frames chain' };
  return { ok: true, fault: 'broken_chain' };
}

/**
 * The proof two envelopes of one leader and epoch make, if any: the same seq with different frames,
 * or consecutive seqs that do not chain. Undefined when they are consistent (or not both valid).
 */
export function groupProofOf(crypto: Crypto, first: Record<string, unknown>, second: Record<string, unknown>): GroupProof | undefined {
  const [a, b] = [signedFrame(first), signedFrame(second)].sort((x, y) => Number(x.seq) - Number(y.seq)) as [SignedFrame, SignedFrame];
  for (const fault of ['equivocation', 'broken_chain'] as const) {
    const proof: GroupProof = {
      kind: GROUP_PROOF_KIND,
      fault,
      group_id: String(a.group_id),
      leader_public_key: String(a.leader_public_key),
      leader_epoch: a.leader_epoch as number,
      frames: [a, b],
    };
    if (verifyGroupProof(crypto, proof).ok) return proof;
  }
  return undefined;
}
