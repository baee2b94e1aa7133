// The leader–member channel of a group over the reference's wire (ts/group/channel.ts): which receipt
// settles a member's action in flight, which acknowledgements move the leader's recovery floor, and how
// each side reads the other's lines.
import { describe, expect, it } from 'vitest';
import {
  ActionOutbox,
  CheckpointFloor,
  ackMessage,
  inputMessage,
  isActionId,
  readLeaderMessage,
  readMemberMessage,
  receiptMessage,
  rejectionMessage,
} from '../../ts/group/channel.js';

const ID_A = 'a'.repeat(32);
const ID_B = 'b'.repeat(32);
const H = (n: number) => n.toString(16).padStart(64, '0');
const LEADER = 'f'.repeat(64);
const ALICE = '1'.repeat(64);
const BOB = '2'.repeat(64);

describe('a member’s action in flight', () => {
  it('is settled only by a receipt naming both its client_seq and its action_id', () => {
    const o = new ActionOutbox();
    o.start(3, { kind: 'send' }, ID_A);
    // A late receipt for a refused action that used the same sequence number, and one for another seq.
    expect(o.receipt({ status: 'accepted', client_seq: 3, action_id: ID_B })).toBe('unrelated');
    expect(o.receipt({ status: 'accepted', client_seq: 2, action_id: ID_A })).toBe('unrelated');
    expect(o.pending).toEqual({ client_seq: 3, action_id: ID_A, action: { kind: 'send' } });
    expect(o.receipt({ status: 'accepted', client_seq: 3, action_id: ID_A })).toBe('accepted');
    expect(o.pending).toBeNull();
    expect(o.receipt({ status: 'accepted', client_seq: 3, action_id: ID_A })).toBe('unrelated');
  });

  it('takes a duplicate as accepted, drops a rejected action, and keeps a retryable one', () => {
    const o = new ActionOutbox();
    o.start(1, {}, ID_A);
    expect(o.receipt({ status: 'duplicate', client_seq: 1, action_id: ID_A })).toBe('accepted');
    o.start(2, {}, ID_A);
    expect(o.receipt({ status: 'rejected', retryable: true, client_seq: 2, action_id: ID_A })).toBe('retry');
    expect(o.pending?.client_seq).toBe(2);
    expect(o.receipt({ status: 'weird', client_seq: 2, action_id: ID_A })).toBe('unrelated');
    expect(o.receipt({ status: 'rejected', client_seq: 2, action_id: ID_A })).toBe('rejected');
    expect(o.pending).toBeNull();
  });

  it('is settled by a checkpoint that counts it (its receipt lost with a leader), not by one behind it', () => {
    const o = new ActionOutbox();
    o.start(5, {}, ID_A);
    expect(o.reconcile(4)).toBe(false);
    expect(o.reconcile(5)).toBe(true);
    expect(o.pending).toBeNull();
    expect(o.reconcile(9)).toBe(false);
  });

  it('holds one action at a time, with a well-formed action_id', () => {
    const o = new ActionOutbox();
    expect(() => o.start(1, {}, 'A'.repeat(32))).toThrow(/action_id/);
    o.start(1, {}, ID_A);
    expect(() => o.start(2, {}, ID_B)).toThrow(/in flight/);
    expect([isActionId(ID_A), isActionId('ab'), isActionId(ID_A.toUpperCase())]).toEqual([true, false, false]);
  });
});

describe('the leader’s recovery floor', () => {
  const made = (seq: number) => ({ seq, frame_hash: H(seq), checkpoint_hash: H(1000 + seq) });

  it('is the newest checkpoint a member other than the leader acknowledged exactly', () => {
    const f = new CheckpointFloor(LEADER);
    for (const s of [0, 1, 2, 3]) f.record(made(s));
    expect(f.floor()).toBeUndefined();
    // The leader's own ack proves nothing about who else holds it.
    expect(f.acknowledge(LEADER, 3, H(3), H(1003))).toBe(false);
    // An ack must name the frame and the checkpoint the leader made for that seq.
    expect(f.acknowledge(ALICE, 2, H(3), H(1002))).toBe(false);
    expect(f.acknowledge(ALICE, 2, H(2), H(1003))).toBe(false);
    expect(f.acknowledge(ALICE, 7, H(7), H(1007))).toBe(false);
    expect(f.floor()).toBeUndefined();
    expect(f.acknowledge(ALICE, 2, H(2), H(1002))).toBe(true);
    expect(f.floor()).toEqual({ seq: 2, checkpointHash: H(1002) });
    // A member does not move back, and a slower member does not lower the floor.
    expect(f.acknowledge(ALICE, 1, H(1), H(1001))).toBe(false);
    expect(f.acknowledge(BOB, 1, H(1), H(1001))).toBe(true);
    expect(f.floor()).toEqual({ seq: 2, checkpointHash: H(1002) });
    expect(f.acknowledge(BOB, 3, H(3), H(1003))).toBe(true);
    expect(f.floor()).toEqual({ seq: 3, checkpointHash: H(1003) });
  });

  it('forgets checkpoints beyond the ones it keeps', () => {
    const f = new CheckpointFloor(LEADER, 2);
    for (const s of [0, 1, 2]) f.record(made(s));
    expect(f.acknowledge(ALICE, 0, H(0), H(1000))).toBe(false);
    expect(f.acknowledge(ALICE, 1, H(1), H(1001))).toBe(true);
  });
});

describe('reading the channel', () => {
  const ctx = { groupId: 'g'.repeat(32), leaderEpoch: 2 };

  it('the leader takes an input only for this group, epoch and actor; the rest is refused as retryable', () => {
    const input = inputMessage(ctx, ALICE, { client_seq: 4, action_id: ID_A, action: { kind: 'send', text: 'hi' } });
    expect(readMemberMessage(input, ctx, ALICE)).toEqual({ kind: 'input', clientSeq: 4, actionId: ID_A, action: { kind: 'send', text: 'hi' } });
    expect(readMemberMessage(input, ctx, BOB)).toEqual({ kind: 'misdirected', clientSeq: 4, actionId: ID_A });
    expect(readMemberMessage(input, { ...ctx, leaderEpoch: 3 }, ALICE).kind).toBe('misdirected');
    expect(rejectionMessage('group, epoch, or actor mismatch', 4, ID_A, true)).toEqual({
      _group: 'receipt',
      status: 'rejected',
      reason: 'group, epoch, or actor mismatch',
      client_seq: 4,
      action_id: ID_A,
      retryable: true,
    });
  });

  it('the leader counts only well-formed acks, and answers pings', () => {
    const ack = ackMessage(ctx, { seq: 5, frameHash: H(5), checkpointHash: H(6) });
    expect(readMemberMessage(ack, ctx, ALICE)).toEqual({ kind: 'ack', seq: 5, frameHash: H(5), checkpointHash: H(6) });
    expect(readMemberMessage({ ...ack, seq: -1 }, ctx, ALICE).kind).toBe('other');
    expect(readMemberMessage({ ...ack, frame_hash: 'x' }, ctx, ALICE).kind).toBe('other');
    expect(readMemberMessage({ _group: 'ping', nonce: 'n1' }, ctx, ALICE)).toEqual({ kind: 'ping', nonce: 'n1' });
    expect(
      [readMemberMessage(null, ctx, ALICE), readMemberMessage([], ctx, ALICE), readMemberMessage({ _sys: 'ping' }, ctx, ALICE)].map((m) => m.kind),
    ).toEqual(['other', 'other', 'other']);
  });

  it('a member reads envelopes by their frame kind, receipts, pongs and errors', () => {
    for (const kind of ['snapshot', 'membership', 'epoch_start', 'frame']) expect(readLeaderMessage({ _group: kind, seq: 1 }).kind).toBe('envelope');
    const receipt = receiptMessage({ status: 'accepted', client_seq: 1, authority_seq: 9, frame_hash: H(9), completed: false }, ID_A);
    // The reference's order: its receipt's fields, then the action_id it answers.
    expect(Object.keys(receipt)).toEqual(['_group', 'status', 'client_seq', 'authority_seq', 'frame_hash', 'completed', 'action_id']);
    expect(readLeaderMessage(receipt).kind).toBe('receipt');
    expect(readLeaderMessage({ _group: 'pong' }).kind).toBe('pong');
    expect(readLeaderMessage({ _group: 'error', reason: 'no' })).toEqual({ kind: 'error', reason: 'no' });
    expect(readLeaderMessage({ _group: 'peer_directory' }).kind).toBe('other');
  });
});
