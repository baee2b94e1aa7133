/**
 * The groups tables as the groups routes (groups.ts) read and change them: the rows, the view every
 * route answers with, the checks every write makes of the row, and a change to one group under its
 * row lock.
 */
import type { ServerContext } from '../context.js';
import type { Db } from '../db.js';
import { conflict, notFound } from '../errors.js';
import { iso } from './input.js';

/** Statuses a group never leaves. */
export const FINAL = new Set(['closed', 'failed']);

export interface GroupRow {
  group_id: string;
  post_id: string;
  protocol_id: string;
  leader_public_key: string;
  leader_epoch: number;
  membership_version: number;
  min_participants: number;
  max_participants: number;
  allow_late_join: boolean;
  recovery_mode: string;
  status: string;
  checkpoint_seq: number;
  checkpoint_hash: string;
  iroh_ticket: string;
  transport_binding_signature: string;
  lease_expires_at: number;
  created_at: number;
}

export interface MemberRow {
  member_id: string;
  public_key: string;
  seat: number;
  status: string;
  joined_at: number;
  last_seen_at: number;
}

export const memberView = (m: MemberRow) => ({
  member_id: m.member_id,
  public_key: m.public_key,
  seat: m.seat,
  status: m.status,
  joined_at: iso(m.joined_at),
  last_seen_at: iso(m.last_seen_at),
});

export async function groupRow(db: Db, groupId: string, lock: boolean): Promise<GroupRow> {
  const [g] = await db.query<GroupRow>(`SELECT * FROM groups WHERE group_id = $1${lock ? ' FOR UPDATE' : ''}`, [groupId]);
  if (!g) throw notFound('GROUP_NOT_FOUND', `no group ${groupId}`);
  return g;
}

export async function activeMembers(db: Db, groupId: string): Promise<MemberRow[]> {
  return db.query<MemberRow>(
    `SELECT member_id, public_key, seat, status, joined_at, last_seen_at FROM group_members WHERE group_id = $1 AND status = 'active' ORDER BY seat`,
    [groupId],
  );
}

/** What GET answers and every write returns: the fields the reference client reads, server_time included for its lease check. */
export async function view(db: Db, g: GroupRow, limits: { leaseSeconds: number }, now: number) {
  const members = await activeMembers(db, g.group_id);
  return {
    group_id: g.group_id,
    post_id: g.post_id,
    protocol_id: g.protocol_id,
    leader_public_key: g.leader_public_key,
    leader_epoch: g.leader_epoch,
    membership_version: g.membership_version,
    participant_count: members.length,
    min_participants: g.min_participants,
    max_participants: g.max_participants,
    allow_late_join: g.allow_late_join,
    recovery_mode: g.recovery_mode,
    status: g.status,
    checkpoint_seq: g.checkpoint_seq,
    checkpoint_hash: g.checkpoint_hash,
    iroh_ticket: g.iroh_ticket,
    transport_binding_signature: g.transport_binding_signature,
    leader_lease_seconds: limits.leaseSeconds,
    leader_lease_expires_at: iso(g.lease_expires_at),
    server_time: iso(now),
    created_at: iso(g.created_at),
    members: members.map(memberView),
  };
}

export function open(g: GroupRow): void {
  if (FINAL.has(g.status)) throw conflict('GROUP_CLOSED', `the group is ${g.status}`);
}

export function currentEpoch(g: GroupRow, claimed: number): void {
  if (claimed !== g.leader_epoch) throw conflict('STALE_EPOCH', `leader epoch ${claimed} is not the group's current epoch ${g.leader_epoch}`);
}

/** Runs a change to one group under its row lock and answers with what the change returns. */
export function change<T>(ctx: ServerContext, groupId: string, fn: (tx: Db, g: GroupRow, now: number) => Promise<T>): Promise<T> {
  return ctx.db.transaction(async (tx) => {
    const g = await groupRow(tx, groupId, true);
    return fn(tx, g, ctx.now());
  });
}

/** A live room keeps its discovery post alive; a finished one takes it down. */
export async function touchInvitation(db: Db, postId: string, ctx: ServerContext, now: number): Promise<void> {
  await db.query(`UPDATE invitations SET expires_at = GREATEST(expires_at, $2) WHERE post_id = $1 AND status = 'active' AND expires_at > $3`, [
    postId,
    now + ctx.config.invitationTtlSeconds * 1000,
    now,
  ]);
}
