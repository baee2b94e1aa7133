/**
 * A member's replica of an authoritative group: it checks every envelope the leader sends it before
 * taking anything from it, in the reference's order and with its refusal texts (GroupReplica.apply):
 * epoch fencing (group, leader, epoch, viewer, wire version), the frame hash over the core fields, the
 * events hash, the view hash over its private payload, the leader's signature binding frame, view and
 * viewer, then a contiguous seq chained by previous_hash, then the checkpoint (full, or a delta on the
 * last one) whose hash, certificate signature and recovery state hash must match, and the view (full or
 * a delta) whose hash must match. A refused envelope leaves the replica as it was.
 *
 * Every applied envelope is kept, in order, as the member's transcript.
 */
import type { Crypto } from '../crypto/backend.js';
import type { GroupMember } from '../hooks/types.js';
import { applyDelta } from './delta.js';
import { GroupError } from './errors.js';
import { groupCanonical, groupJsonHash, textHash, type GroupObject } from './json.js';
import {
  GROUP_WIRE_VERSION,
  checkpointState,
  frameCore,
  isHash,
  privatePayloadOf,
  stripCheckpoint,
  validateCheckpointState,
  verifyCheckpointCertificate,
  verifyView,
  type Checkpoint,
} from './wire.js';

export type ReplicaRefusal =
  | 'ENVELOPE_NOT_OBJECT'
  | 'GROUP_MISMATCH'
  | 'LEADER_MISMATCH'
  | 'EPOCH_MISMATCH'
  | 'VIEWER_MISMATCH'
  | 'WIRE_VERSION'
  | 'FRAME_HASH'
  | 'EVENTS_HASH'
  | 'VIEW_HASH'
  | 'SIGNATURE_MISSING'
  | 'SIGNATURE_INVALID'
  | 'SEQ_INVALID'
  | 'SEQ_BACKWARDS'
  | 'SEQ_GAP'
  | 'CHAIN_MISMATCH'
  | 'NOT_BOOTSTRAP'
  | 'CHECKPOINT_PAYLOAD'
  | 'CHECKPOINT_DELTA'
  | 'CHECKPOINT_STATE'
  | 'CHECKPOINT_HASH'
  | 'CHECKPOINT_FRAME'
  | 'RECOVERY_STATE_HASH'
  | 'CHECKPOINT_SIGNATURE'
  | 'VIEW_PAYLOAD'
  | 'VIEW_DELTA'
  | 'VIEW_STATE_HASH'
  | 'NOT_EPOCH_START';

/** `applied`: the replica moved to this frame; `ignored`: the frame it already holds, repeated; `refused`: nothing changed. */
export type ApplyResult = { status: 'applied' } | { status: 'ignored' } | { status: 'refused'; code: ReplicaRefusal; reason: string };

class Refused extends Error {
  constructor(
    readonly code: ReplicaRefusal,
    message: string,
  ) {
    super(message);
  }
}

const refuse = (code: ReplicaRefusal, reason: string): never => {
  throw new Refused(code, reason);
};

export class GroupEpochError extends Error {
  constructor(
    readonly code: 'EPOCH_NOT_NEWER' | 'LEADER_NOT_MEMBER',
    message: string,
  ) {
    super(message);
    this.name = 'GroupEpochError';
  }
}

/** A member's transcript: every envelope it applied, and each leader change it was fenced to, in order. */
export type TranscriptEntry =
  { kind: 'envelope'; bootstrap: boolean; envelope: Record<string, unknown> } | { kind: 'epoch'; leader_public_key: string; leader_epoch: number };

export interface ReplicaOptions {
  crypto: Crypto;
  groupId: string;
  viewerPublicKey: string;
  leaderPublicKey: string;
  leaderEpoch: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

export class GroupReplica {
  readonly groupId: string;
  readonly viewerPublicKey: string;
  private readonly crypto: Crypto;
  private leaderPk: string;
  private epoch: number;
  private current: { seq: number; frameHash: string; membershipVersion: number; checkpoint: Checkpoint; view: GroupObject } | null = null;
  private readonly entries: TranscriptEntry[] = [];
  /** Set by advanceEpoch: the next frame (unless a bootstrap) must open the epoch. */
  private awaitingEpochStart = false;

  constructor(o: ReplicaOptions) {
    this.crypto = o.crypto;
    this.groupId = o.groupId;
    this.viewerPublicKey = o.viewerPublicKey.toLowerCase();
    this.leaderPk = o.leaderPublicKey.toLowerCase();
    this.epoch = o.leaderEpoch;
  }

  get leaderPublicKey(): string {
    return this.leaderPk;
  }
  get leaderEpoch(): number {
    return this.epoch;
  }
  get seq(): number | null {
    return this.current?.seq ?? null;
  }
  get frameHash(): string | null {
    return this.current?.frameHash ?? null;
  }
  get membershipVersion(): number {
    return this.current?.membershipVersion ?? 0;
  }
  get checkpoint(): Checkpoint | null {
    return this.current ? clone(this.current.checkpoint) : null;
  }
  get view(): GroupObject | null {
    return this.current ? clone(this.current.view) : null;
  }
  get members(): GroupMember[] {
    return this.current ? clone(this.current.checkpoint.members) : [];
  }
  /** The envelopes applied, in order. */
  get envelopes(): Record<string, unknown>[] {
    return this.entries.flatMap((e) => (e.kind === 'envelope' ? [clone(e.envelope)] : []));
  }
  /** Envelopes and leader changes, in order: what replayGroupTranscript checks offline. */
  get transcript(): TranscriptEntry[] {
    return clone(this.entries);
  }

  /**
   * Fences the replica to a new leader epoch (a failover the arbiter granted): from now on only that
   * leader's frames, chained from the last frame held, are accepted.
   */
  advanceEpoch(leaderPublicKey: string, leaderEpoch: number): void {
    if (!(leaderEpoch > this.epoch)) throw new GroupEpochError('EPOCH_NOT_NEWER', 'new leader epoch must increase');
    const pk = leaderPublicKey.toLowerCase();
    // A successor is one of the group's active members as the last checkpoint lists them.
    if (this.current && !this.current.checkpoint.members.some((m) => m.public_key === pk && m.status === 'active')) {
      throw new GroupEpochError('LEADER_NOT_MEMBER', 'new leader is not an active group member');
    }
    this.leaderPk = pk;
    this.epoch = leaderEpoch;
    this.awaitingEpochStart = this.current !== null;
    this.entries.push({ kind: 'epoch', leader_public_key: pk, leader_epoch: leaderEpoch });
  }

  /** Checks one envelope and applies it; a bootstrap (the first, or a reconnect) must carry full checkpoint and view. */
  apply(envelope: unknown, opts: { bootstrap?: boolean } = {}): ApplyResult {
    try {
      return this.check(envelope, opts.bootstrap === true);
    } catch (e) {
      if (e instanceof Refused) return { status: 'refused', code: e.code, reason: e.message };
      throw e;
    }
  }

  private hash(v: unknown, code: ReplicaRefusal, reason: string): string {
    try {
      return groupJsonHash(this.crypto, v);
    } catch (e) {
      if (e instanceof GroupError) return refuse(code, reason);
      throw e;
    }
  }

  private check(envelope: unknown, bootstrap: boolean): ApplyResult {
    if (!isObject(envelope)) return refuse('ENVELOPE_NOT_OBJECT', 'group envelope must be an object');
    const e = envelope;
    if (e['group_id'] !== this.groupId) refuse('GROUP_MISMATCH', 'group envelope group_id mismatch');
    if (e['leader_public_key'] !== this.leaderPk) refuse('LEADER_MISMATCH', 'group envelope leader mismatch');
    if (e['leader_epoch'] !== this.epoch) refuse('EPOCH_MISMATCH', 'group envelope epoch mismatch');
    if (e['viewer_public_key'] !== this.viewerPublicKey) refuse('VIEWER_MISMATCH', 'group envelope viewer mismatch');
    if (e['wire_version'] !== GROUP_WIRE_VERSION) refuse('WIRE_VERSION', 'group envelope wire version mismatch');
    const frameHash = e['frame_hash'];
    if (!isHash(frameHash) || this.hash(frameCore(e), 'FRAME_HASH', 'group frame hash mismatch') !== frameHash)
      refuse('FRAME_HASH', 'group frame hash mismatch');
    const events = e['events'];
    if (!Array.isArray(events) || this.hash(events, 'EVENTS_HASH', 'group events hash mismatch') !== e['events_hash'])
      refuse('EVENTS_HASH', 'group events hash mismatch');
    const viewHash = e['view_hash'];
    if (!isHash(viewHash) || this.hash(privatePayloadOf(e), 'VIEW_HASH', 'group view hash mismatch') !== viewHash)
      refuse('VIEW_HASH', 'group view hash mismatch');
    const signature = e['signature'];
    if (typeof signature !== 'string') refuse('SIGNATURE_MISSING', 'group envelope signature is missing');
    if (!verifyView(this.crypto, this.leaderPk, frameHash as string, viewHash as string, this.viewerPublicKey, signature as string))
      refuse('SIGNATURE_INVALID', 'group envelope signature is invalid');
    if (this.awaitingEpochStart && !bootstrap && e['_group'] !== 'epoch_start') refuse('NOT_EPOCH_START', 'a new leader epoch must open with epoch_start');
    const seq = e['seq'];
    if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0) return refuse('SEQ_INVALID', 'group frame seq is invalid');
    const cur = this.current;
    if (cur) {
      if (seq === cur.seq && frameHash === cur.frameHash) return { status: 'ignored' };
      if (seq <= cur.seq) refuse('SEQ_BACKWARDS', 'group frame sequence moved backwards');
      if (!bootstrap && seq !== cur.seq + 1) refuse('SEQ_GAP', 'group frame sequence has a gap');
      if (!bootstrap && e['previous_hash'] !== cur.frameHash) refuse('CHAIN_MISMATCH', 'group frame hash chain mismatch');
    } else if (!bootstrap) {
      refuse('NOT_BOOTSTRAP', 'first group frame must be a bootstrap');
    }
    const checkpoint = this.decodeCheckpoint(e, seq, frameHash as string, bootstrap);
    const view = this.decodeView(e, bootstrap);
    const mv = e['membership_version'];
    this.current = { seq, frameHash: frameHash as string, membershipVersion: typeof mv === 'number' ? mv : 0, checkpoint, view };
    this.awaitingEpochStart = false;
    this.entries.push({ kind: 'envelope', bootstrap, envelope: clone(e) });
    return { status: 'applied' };
  }

  private decodeCheckpoint(e: Record<string, unknown>, seq: number, frameHash: string, bootstrap: boolean): Checkpoint {
    const mode = e['checkpoint_mode'];
    const delta = e['checkpoint_delta'];
    if (!Array.isArray(delta)) return refuse('CHECKPOINT_PAYLOAD', 'group checkpoint delta must be an array');
    let checkpoint: Record<string, unknown>;
    if (mode === 'full') {
      const full = e['checkpoint'];
      if (!isObject(full) || delta.length > 0) return refuse('CHECKPOINT_PAYLOAD', 'full group checkpoint payload is invalid');
      checkpoint = clone(full);
    } else if (mode === 'delta') {
      if (bootstrap || e['checkpoint'] !== null) refuse('CHECKPOINT_PAYLOAD', 'bootstrap requires a full group checkpoint');
      if (!this.current) return refuse('CHECKPOINT_PAYLOAD', 'group checkpoint delta has no replay base');
      let state: unknown;
      try {
        state = applyDelta(checkpointState(this.current.checkpoint as unknown as Record<string, unknown>), delta);
      } catch (err) {
        if (err instanceof GroupError) return refuse('CHECKPOINT_DELTA', `group checkpoint delta is invalid: ${err.message}`);
        throw err;
      }
      this.validState(state);
      checkpoint = {
        version: 1,
        group_id: this.groupId,
        leader_public_key: this.leaderPk,
        leader_epoch: this.epoch,
        seq,
        frame_hash: frameHash,
        membership_version: e['membership_version'],
        ...(state as Record<string, unknown>),
        checkpoint_hash: e['checkpoint_hash'],
        checkpoint_signature: e['checkpoint_signature'],
      };
    } else {
      return refuse('CHECKPOINT_PAYLOAD', 'group checkpoint mode is invalid');
    }
    const expected = checkpoint['checkpoint_hash'];
    const signature = checkpoint['checkpoint_signature'];
    if (
      checkpoint['version'] !== 1 ||
      !isHash(expected) ||
      this.hash(stripCheckpoint(checkpoint), 'CHECKPOINT_HASH', 'group checkpoint hash mismatch') !== expected ||
      e['checkpoint_hash'] !== expected ||
      e['checkpoint_signature'] !== signature
    ) {
      refuse('CHECKPOINT_HASH', 'group checkpoint hash mismatch');
    }
    if (
      checkpoint['group_id'] !== this.groupId ||
      checkpoint['leader_public_key'] !== this.leaderPk ||
      checkpoint['leader_epoch'] !== this.epoch ||
      checkpoint['seq'] !== seq ||
      checkpoint['frame_hash'] !== frameHash ||
      checkpoint['membership_version'] !== e['membership_version'] ||
      checkpoint['completed'] !== e['completed'] ||
      checkpoint['outcome'] !== e['outcome']
    ) {
      refuse('CHECKPOINT_FRAME', 'group checkpoint does not certify this frame');
    }
    let state: Record<string, unknown>;
    try {
      state = checkpointState(checkpoint);
    } catch (err) {
      if (err instanceof GroupError) return refuse('CHECKPOINT_STATE', err.message);
      throw err;
    }
    // A checkpoint made from a delta holds the state validated above, field for field.
    if (mode === 'full') this.validState(state);
    if (this.hash(state, 'RECOVERY_STATE_HASH', 'group recovery state hash mismatch') !== e['recovery_state_hash'])
      refuse('RECOVERY_STATE_HASH', 'group recovery state hash mismatch');
    if (typeof signature !== 'string') refuse('CHECKPOINT_SIGNATURE', 'group checkpoint signature is missing');
    let certified = false;
    try {
      // Its hash was checked above; what remains is the leader's signature over its certificate.
      certified = verifyCheckpointCertificate(this.crypto, this.leaderPk, checkpoint);
    } catch (err) {
      if (!(err instanceof GroupError)) throw err;
    }
    if (!certified) refuse('CHECKPOINT_SIGNATURE', 'group checkpoint certificate is invalid');
    return checkpoint as unknown as Checkpoint;
  }

  private validState(state: unknown): void {
    try {
      validateCheckpointState(state);
    } catch (err) {
      if (err instanceof GroupError) refuse('CHECKPOINT_STATE', err.message);
      throw err;
    }
  }

  private decodeView(e: Record<string, unknown>, bootstrap: boolean): GroupObject {
    const mode = e['view_mode'];
    const delta = e['view_delta'];
    if (!Array.isArray(delta)) return refuse('VIEW_PAYLOAD', 'group view delta must be an array');
    let view: unknown;
    if (mode === 'full') {
      const full = e['view'];
      if (!isObject(full) || delta.length > 0) return refuse('VIEW_PAYLOAD', 'full group view payload is invalid');
      view = clone(full);
    } else if (mode === 'delta') {
      if (bootstrap || e['view'] !== null) refuse('VIEW_PAYLOAD', 'bootstrap requires a full group view');
      if (!this.current) return refuse('VIEW_PAYLOAD', 'group view delta has no replay base');
      try {
        view = applyDelta(this.current.view, delta);
      } catch (err) {
        if (err instanceof GroupError) return refuse('VIEW_DELTA', `group view delta is invalid: ${err.message}`);
        throw err;
      }
      if (!isObject(view)) refuse('VIEW_DELTA', 'group view delta produced a non-object');
    } else {
      return refuse('VIEW_PAYLOAD', 'group view mode is invalid');
    }
    // Checked and written in one walk: its first fault is the one checkGroupJson reports.
    let text: string;
    try {
      text = groupCanonical(view);
    } catch (err) {
      if (err instanceof GroupError) return refuse('VIEW_PAYLOAD', err.message);
      throw err;
    }
    if (textHash(this.crypto, text) !== e['view_state_hash']) refuse('VIEW_STATE_HASH', 'group view state hash mismatch');
    return view as GroupObject;
  }
}

export interface ReplayResult {
  ok: boolean;
  /** Entries replayed before the first that failed (all of them when ok). */
  applied: number;
  /** Why the entry at `applied` failed. */
  reason?: string;
  seq: number | null;
  frame_hash: string | null;
  checkpoint_hash: string | null;
  completed: boolean;
  outcome: string | null;
}

/**
 * Re-checks a member's transcript from scratch, offline: every envelope must apply (a repeat is a
 * fault here: a transcript holds each frame once) and every leader change must be a legitimate epoch
 * fence. The result is where the member ended, for a receipt to be compared with.
 */
export function replayGroupTranscript(crypto: Crypto, start: Omit<ReplicaOptions, 'crypto'>, entries: readonly TranscriptEntry[]): ReplayResult {
  const r = new GroupReplica({ crypto, ...start });
  const end = (applied: number, reason?: string): ReplayResult => {
    const cp = r.checkpoint;
    return {
      ok: reason === undefined,
      applied,
      ...(reason === undefined ? {} : { reason }),
      seq: r.seq,
      frame_hash: r.frameHash,
      checkpoint_hash: cp?.checkpoint_hash ?? null,
      completed: cp?.completed === true,
      outcome: cp?.outcome ?? null,
    };
  };
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e === null || typeof e !== 'object') return end(i, 'transcript entry is not an object');
    if (e.kind === 'epoch') {
      try {
        r.advanceEpoch(String(e.leader_public_key), Number(e.leader_epoch));
      } catch (err) {
        if (err instanceof GroupEpochError) return end(i, err.message);
        throw err;
      }
      continue;
    }
    if (e.kind !== 'envelope') return end(i, 'unknown transcript entry');
    const result = r.apply(e.envelope, { bootstrap: e.bootstrap === true });
    if (result.status === 'refused') return end(i, result.reason);
    if (result.status === 'ignored') return end(i, 'a frame appears twice');
  }
  return end(entries.length);
}
