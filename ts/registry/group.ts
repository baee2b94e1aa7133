/**
 * The registry's group records (NOTES A18, the reference's proto/group_control.py), read without I/O.
 * The server is not trusted: a record is parsed strictly, its members normalised as a checkpoint
 * holds them, and nothing in it is acted on until a signature checks it (the leader's ticket is bound
 * by the leader's own signature; admissions and checkpoints carry theirs). Also the rules the
 * reference's agents apply to a record: when a lobby may start and when a leader's lease is over.
 */
import { GroupError } from '../group/errors.js';
import { isHash, isPublicKey, normalizeMembers, RECOVERY_MODES, type GroupMember } from '../group/wire.js';
import { RegistryError } from './errors.js';

/** The server's record of one group: the fields the reference's agents read, typed. */
export interface GroupRecord {
  group_id: string;
  post_id: string;
  protocol_id: string;
  leader_public_key: string;
  leader_epoch: number;
  membership_version: number;
  participant_count: number;
  min_participants: number;
  max_participants: number;
  allow_late_join: boolean;
  recovery_mode: string;
  /** lobby, active, closed or failed (another value is kept as it is, and is neither open nor final). */
  status: string;
  checkpoint_seq: number;
  checkpoint_hash: string;
  iroh_ticket: string;
  transport_binding_signature: string;
  /** The lease the server grants, when it says (the reference falls back to 15 s). */
  leader_lease_seconds: number | undefined;
  leader_lease_expires_at: string | undefined;
  server_time: string | undefined;
  /** The active members, as a checkpoint holds them (sorted by seat, keys lowercased). */
  members: GroupMember[];
}

/** What POST …/members answers: the member record the server admitted (or already had). */
export interface GroupAdmission {
  group_id: string;
  member_id: string;
  public_key: string;
  seat: number;
  status: string;
  leader_epoch: number;
  membership_version: number;
}

/** Group ids and post ids the server makes: 32 lowercase hex (anything else would be put into a path). */
const ID32 = /^[0-9a-f]{32}$/;
const MAX_TICKET = 4096;

function bad(what: string, status: number): never {
  throw new RegistryError('REGISTRY_BAD_RESPONSE', `group record: ${what}`, status);
}

function objectOf(v: unknown, what: string, status: number): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) bad(`${what} is not a JSON object`, status);
  return v as Record<string, unknown>;
}

const count = (o: Record<string, unknown>, k: string, status: number): number => {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) bad(`${k} is not a non-negative integer`, status);
  return v as number;
};

const text = (o: Record<string, unknown>, k: string, status: number, max = 256): string => {
  const v = o[k];
  if (typeof v !== 'string' || v === '' || v.length > max) bad(`${k} is not a string of 1..${max} characters`, status);
  return v as string;
};

const optText = (o: Record<string, unknown>, k: string): string | undefined =>
  typeof o[k] === 'string' && (o[k] as string).length <= 64 ? (o[k] as string) : undefined;

/** A group id fit for a request path. */
export function checkGroupId(groupId: string): string {
  if (!ID32.test(groupId)) throw new RegistryError('REGISTRY_BAD_ARGUMENT', 'a group id is 32 lowercase hex characters');
  return groupId;
}

export function asGroupRecord(body: unknown, status: number): GroupRecord {
  const o = objectOf(body, 'the answer', status);
  const groupId = text(o, 'group_id', status, 32);
  if (!ID32.test(groupId)) bad('group_id is not 32 lowercase hex', status);
  const leader = text(o, 'leader_public_key', status, 64).toLowerCase();
  if (!isPublicKey(leader)) bad('leader_public_key is not 64 hex', status);
  const protocolId = text(o, 'protocol_id', status, 64);
  if (!isPublicKey(protocolId)) bad('protocol_id is not 64 lowercase hex', status);
  const checkpointHash = text(o, 'checkpoint_hash', status, 64);
  if (!isHash(checkpointHash)) bad('checkpoint_hash is not 64 hex', status);
  const rawMembers = o['members'] ?? [];
  if (!Array.isArray(rawMembers) || rawMembers.length > 64) bad('members is not a bounded array', status);
  let members: GroupMember[];
  try {
    // The reference's agents keep only the active ones (agent/group.py `_active_members`).
    members = normalizeMembers(
      (rawMembers as unknown[]).filter((m) => typeof m === 'object' && m !== null && (m as Record<string, unknown>)['status'] === 'active'),
    );
  } catch (e) {
    if (e instanceof GroupError) bad(`members: ${e.message}`, status);
    throw e;
  }
  const lease = o['leader_lease_seconds'];
  const recovery = text(o, 'recovery_mode', status, 32);
  if (!(RECOVERY_MODES as readonly string[]).includes(recovery)) bad('recovery_mode is not exact, restart_round or abort', status);
  const lateJoin = o['allow_late_join'];
  if (typeof lateJoin !== 'boolean') bad('allow_late_join is not a boolean', status);
  return {
    group_id: groupId,
    post_id: text(o, 'post_id', status, 128),
    protocol_id: protocolId,
    leader_public_key: leader,
    leader_epoch: count(o, 'leader_epoch', status),
    membership_version: count(o, 'membership_version', status),
    participant_count: count(o, 'participant_count', status),
    min_participants: count(o, 'min_participants', status),
    max_participants: count(o, 'max_participants', status),
    allow_late_join: lateJoin as boolean,
    recovery_mode: recovery,
    status: text(o, 'status', status, 32),
    checkpoint_seq: count(o, 'checkpoint_seq', status),
    checkpoint_hash: checkpointHash,
    iroh_ticket: text(o, 'iroh_ticket', status, MAX_TICKET),
    transport_binding_signature: text(o, 'transport_binding_signature', status, 128),
    // As the reference reads it: an integer of 3..300, else the default.
    leader_lease_seconds: typeof lease === 'number' && Number.isInteger(lease) && lease >= 3 && lease <= 300 ? lease : undefined,
    leader_lease_expires_at: optText(o, 'leader_lease_expires_at'),
    server_time: optText(o, 'server_time'),
    members,
  };
}

export function asGroupAdmission(body: unknown, status: number): GroupAdmission {
  const o = objectOf(body, 'the admission', status);
  const pk = text(o, 'public_key', status, 64).toLowerCase();
  if (!isPublicKey(pk)) bad('public_key is not 64 hex', status);
  const seat = count(o, 'seat', status);
  if (seat > 31) bad('seat is above 31', status);
  return {
    group_id: text(o, 'group_id', status, 32),
    member_id: text(o, 'member_id', status, 128),
    public_key: pk,
    seat,
    status: text(o, 'status', status, 32),
    leader_epoch: count(o, 'leader_epoch', status),
    membership_version: count(o, 'membership_version', status),
  };
}

/** The lease the reference's leader renews (every third of it) and its members wait out. */
export const leaseSecondsOf = (g: GroupRecord): number => g.leader_lease_seconds ?? 15;

/** Whether a lobby has the members its start policy needs (the reference's `_start_ready`). */
export function startReady(g: GroupRecord, startPolicy: string): boolean {
  return g.participant_count >= (startPolicy === 'full' || startPolicy === 'fixed_full' ? g.max_participants : g.min_participants);
}

/**
 * Whether the leader's lease is over, by the server's own clock (its `server_time`), so that a member's
 * clock does not decide who may claim; a record without both times is taken as not expired.
 */
export function leaseExpired(g: GroupRecord): boolean {
  if (!g.leader_lease_expires_at || !g.server_time) return false;
  const expiry = Date.parse(g.leader_lease_expires_at);
  const now = Date.parse(g.server_time);
  return Number.isFinite(expiry) && Number.isFinite(now) && now >= expiry;
}

export const GROUP_FINAL_STATUSES: readonly string[] = ['closed', 'failed'];

/** The member record the server lists as active for a key. */
export const listedMember = (g: GroupRecord, publicKey: string): GroupMember | undefined => g.members.find((m) => m.public_key === publicKey.toLowerCase());
