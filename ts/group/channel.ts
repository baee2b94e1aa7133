/**
 * The leader–member channel once a member is admitted, on the reference's wire (proto/group_runtime.py),
 * without I/O. The leader sends envelopes as they are (their `_group` is the frame kind), receipts
 * and pongs; a member sends `input` (its action with a contiguous `client_seq` and a random
 * `action_id`), `ack` for every envelope it applied, and `ping`.
 *
 * - `ActionOutbox`: a member's one action in flight. A receipt settles it only when it names both its
 *   client_seq and its action_id, so a late receipt for an action the leader refused cannot settle a
 *   newer action that reused the sequence number; a checkpoint that counts the client_seq settles it too
 *   (the receipt was lost with a leader). Unsettled, the same input is sent again on the next channel.
 * - `CheckpointFloor`: the leader's record of which checkpoints a member other than itself holds. Only
 *   those are advertised to the registry as the recovery floor, so a successor can always meet it.
 */
import { isHash } from './wire.js';

/** An action_id: 16 random bytes as 32 lowercase hex. */
export const isActionId = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{32}$/.test(v);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

export const ENVELOPE_KINDS: readonly string[] = ['snapshot', 'membership', 'epoch_start', 'frame'];

export interface ChannelContext {
  groupId: string;
  leaderEpoch: number;
}

// ---- member → leader ----

export interface PendingAction {
  client_seq: number;
  action_id: string;
  action: Record<string, unknown>;
}

export const inputMessage = (c: ChannelContext, actor: string, p: PendingAction) => ({
  _group: 'input',
  group_id: c.groupId,
  leader_epoch: c.leaderEpoch,
  actor_public_key: actor,
  client_seq: p.client_seq,
  action_id: p.action_id,
  action: p.action,
});

export const ackMessage = (c: ChannelContext, at: { seq: number | null; frameHash: string | null; checkpointHash: string }) => ({
  _group: 'ack',
  group_id: c.groupId,
  leader_epoch: c.leaderEpoch,
  seq: at.seq,
  frame_hash: at.frameHash,
  checkpoint_hash: at.checkpointHash,
});

export const pingMessage = (nonce: string) => ({ _group: 'ping', nonce });

/** What a leader makes of one line from an admitted member. */
export type MemberMessage =
  | { kind: 'input'; clientSeq: unknown; actionId: unknown; action: unknown }
  /** An input for another group, epoch or actor: refused as retryable, as the reference does. */
  | { kind: 'misdirected'; clientSeq: unknown; actionId: unknown }
  | { kind: 'ack'; seq: number; frameHash: string; checkpointHash: string }
  | { kind: 'ping'; nonce: unknown }
  | { kind: 'other' };

export function readMemberMessage(m: unknown, c: ChannelContext, member: string): MemberMessage {
  if (!isObject(m)) return { kind: 'other' };
  const kind = m['_group'];
  if (kind === 'input') {
    if (m['group_id'] !== c.groupId || m['leader_epoch'] !== c.leaderEpoch || m['actor_public_key'] !== member)
      return { kind: 'misdirected', clientSeq: m['client_seq'], actionId: m['action_id'] };
    return { kind: 'input', clientSeq: m['client_seq'], actionId: m['action_id'], action: m['action'] };
  }
  if (kind === 'ack') {
    const { seq, frame_hash: frameHash, checkpoint_hash: checkpointHash } = m;
    if (!isCount(seq) || !isHash(frameHash) || !isHash(checkpointHash)) return { kind: 'other' };
    return { kind: 'ack', seq, frameHash, checkpointHash };
  }
  if (kind === 'ping') return { kind: 'ping', nonce: m['nonce'] };
  return { kind: 'other' };
}

// ---- leader → member ----

/** A receipt as the reference's hub sends it: the leader's receipt, then the action_id it answers. */
export const receiptMessage = (receipt: Record<string, unknown>, actionId: unknown) => ({ _group: 'receipt', ...receipt, action_id: actionId });

export const rejectionMessage = (reason: string, clientSeq: unknown, actionId: unknown, retryable = false) => ({
  _group: 'receipt',
  status: 'rejected',
  reason: reason.slice(0, 256),
  client_seq: clientSeq,
  action_id: actionId,
  ...(retryable && { retryable: true }),
});

export const pongMessage = (c: ChannelContext, nonce: unknown) => ({
  _group: 'pong',
  group_id: c.groupId,
  leader_epoch: c.leaderEpoch,
  nonce: typeof nonce === 'string' ? nonce.slice(0, 64) : null,
});

/** What a member makes of one line from its leader. */
export type LeaderMessage =
  | { kind: 'envelope'; envelope: Record<string, unknown> }
  | { kind: 'receipt'; receipt: Record<string, unknown> }
  | { kind: 'pong' }
  | { kind: 'error'; reason: string }
  | { kind: 'other' };

export function readLeaderMessage(m: unknown): LeaderMessage {
  if (!isObject(m)) return { kind: 'other' };
  const kind = m['_group'];
  if (typeof kind === 'string' && ENVELOPE_KINDS.includes(kind)) return { kind: 'envelope', envelope: m };
  if (kind === 'receipt') return { kind: 'receipt', receipt: m };
  if (kind === 'pong') return { kind: 'pong' };
  if (kind === 'error') return { kind: 'error', reason: String(m['reason']).slice(0, 256) };
  return { kind: 'other' };
}

// ---- the member's action in flight ----

/** How a receipt settles the action in flight. */
export type ReceiptOutcome = 'accepted' | 'rejected' | 'retry' | 'unrelated';

export class ActionOutbox {
  private current: PendingAction | null = null;

  get pending(): PendingAction | null {
    return this.current;
  }

  /** Puts an action in flight (the caller chose its client_seq: the last accepted one plus one). */
  start(clientSeq: number, action: Record<string, unknown>, actionId: string): PendingAction {
    if (this.current) throw new Error('an action is already in flight');
    if (!isActionId(actionId)) throw new Error('action_id must be 32 lowercase hex characters');
    this.current = { client_seq: clientSeq, action_id: actionId, action };
    return this.current;
  }

  /**
   * A receipt from the leader: `accepted` (accepted or duplicate), `rejected` (the action is dropped),
   * `retry` (a retryable refusal: the same input goes again), or `unrelated` (it names another action).
   */
  receipt(r: Record<string, unknown>): ReceiptOutcome {
    const p = this.current;
    if (!p || r['client_seq'] !== p.client_seq || r['action_id'] !== p.action_id) return 'unrelated';
    const status = r['status'];
    if (status === 'rejected' && r['retryable'] === true) return 'retry';
    if (status !== 'accepted' && status !== 'duplicate' && status !== 'rejected') return 'unrelated';
    this.current = null;
    return status === 'rejected' ? 'rejected' : 'accepted';
  }

  /** The leader's checkpoint counts `acceptedClientSeq` for this member: true when that settles the action in flight. */
  reconcile(acceptedClientSeq: number): boolean {
    if (!this.current || this.current.client_seq > acceptedClientSeq) return false;
    this.current = null;
    return true;
  }
}

// ---- the leader's recovery floor ----

interface Held {
  frameHash: string;
  checkpointHash: string;
}

/**
 * Checkpoints the leader made, by seq (the latest `keep`), and the newest one a member other than the
 * leader acknowledged: that member holds it, so a claim from it can meet the floor the server records.
 */
export class CheckpointFloor {
  private readonly made = new Map<number, Held>();
  private readonly acked = new Map<string, number>();
  private best: { seq: number; checkpointHash: string } | undefined;

  constructor(
    private readonly leaderPublicKey: string,
    private readonly keep = 1024,
  ) {}

  record(checkpoint: { seq: number; frame_hash: string; checkpoint_hash: string }): void {
    this.made.set(checkpoint.seq, { frameHash: checkpoint.frame_hash, checkpointHash: checkpoint.checkpoint_hash });
    if (this.made.size > this.keep) this.made.delete(this.made.keys().next().value as number);
  }

  /** A member's ack; counted only for a checkpoint this leader made, and never moving that member back. */
  acknowledge(member: string, seq: number, frameHash: string, checkpointHash: string): boolean {
    if (member === this.leaderPublicKey) return false;
    const held = this.made.get(seq);
    if (!held || held.frameHash !== frameHash || held.checkpointHash !== checkpointHash) return false;
    if (seq < (this.acked.get(member) ?? -1)) return false;
    this.acked.set(member, seq);
    if (!this.best || seq > this.best.seq) this.best = { seq, checkpointHash };
    return true;
  }

  /** The newest checkpoint some other member holds, if any. */
  floor(): { seq: number; checkpointHash: string } | undefined {
    return this.best;
  }
}
