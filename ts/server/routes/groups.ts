/**
 * The authoritative_group control plane (NOTES A18, the reference's docs/multiplayer.md): room
 * membership, the current Leader's endpoint and lease, the fencing epoch and the recovery checkpoint
 * digest. No game traffic passes through here.
 *
 * Fencing: `leader_epoch` only grows, and every write a Leader makes names its epoch, so a Leader that
 * lost its lease is refused (409) the moment a Member claims the next epoch. A claim names the epoch
 * it replaces (`expected_epoch`, as the reference client sends it), needs an expired lease, a Member's
 * key, and a checkpoint certified by the replaced Leader that is not behind the server's floor. Every
 * change to one group runs in a transaction holding that group's row lock, so of two concurrent claims
 * for one epoch exactly one wins, on PGlite and across server processes on one PostgreSQL.
 */
import type { Context, Hono } from 'hono';
import { RECOVERY_MODES, ZERO_HASH, admissionCanonical, checkpointCertificate, transportBindingCanonical } from '../../group/wire.js';
import { groupConfigFromSpec } from '../../group/config.js';
import { fromHex, utf8 } from '../../crypto/encoding.js';
import { requireRegistered } from '../auth.js';
import type { AppEnv, RouteModule, ServerContext } from '../context.js';
import type { Db } from '../db.js';
import { badRequest, conflict, forbidden, notFound } from '../errors.js';
import { oneOf, readJsonObject, str, type JsonObject } from '../request.js';
import { FINAL, activeMembers, change, currentEpoch, groupRow, memberView, open, touchInvitation, view, type GroupRow, type MemberRow } from './group-rows.js';
import { bool, hexParam, int, iso, randomId } from './input.js';
import { effectiveStatus, loadInvitation } from './invitations.js';

export interface GroupLimits {
  /** The Leader's lease; the reference client accepts 3..300 s and renews every third of it. */
  leaseSeconds: number;
}

export const DEFAULT_GROUP_LIMITS: GroupLimits = { leaseSeconds: 15 };

/** Seats are 0–31 on the wire, so no room holds more than 32. */
export const MAX_PARTICIPANTS = 32;

const ID32 = /^[0-9a-f]{32}$/;
const HEX64_ANY = /^[0-9a-fA-F]{64}$/;
const MAX_TICKET = 4096;
const MAX_COUNT = Number.MAX_SAFE_INTEGER;
const STATUS_CHANGES = ['active', 'closed', 'failed'] as const;

/** What every route works with: the server, and the limits with the lease they give a Leader. */
interface Groups {
  ctx: ServerContext;
  limits: GroupLimits;
  leaseMs: number;
}

function sig(ctx: ServerContext, publicKey: string, message: string, signature: string): boolean {
  return ctx.crypto.ed25519Verify(fromHex(publicKey), utf8(message), fromHex(signature.toLowerCase()));
}

const signatureField = (b: JsonObject, field: string) => str(b, field, { min: 128, max: 128, pattern: /^[0-9a-fA-F]{128}$/ });

/** The Leader's new endpoint, bound by its own signature to this protocol (what Members verify before connecting). */
function endpoint(ctx: ServerContext, b: JsonObject, publicKey: string, protocolId: string): { ticket: string; signature: string } {
  const ticket = str(b, 'iroh_ticket', { min: 1, max: MAX_TICKET });
  const signature = signatureField(b, 'transport_binding_signature');
  if (!sig(ctx, publicKey, transportBindingCanonical(publicKey, 'iroh', ticket, protocolId), signature))
    throw badRequest('BINDING_INVALID', 'transport_binding_signature does not verify for this key, ticket and protocol');
  return { ticket, signature: signature.toLowerCase() };
}

/** When the protocol is registered here, the room must be created with the spec's own participant and recovery policy. */
async function checkPolicy(db: Db, protocolId: string, p: { min: number; max: number; lateJoin: boolean; recovery: string }): Promise<void> {
  const [row] = await db.query<{ spec_text: string }>('SELECT spec_text FROM protocols WHERE protocol_id = $1', [protocolId]);
  if (!row) return;
  const spec: unknown = JSON.parse(row.spec_text);
  const flow = (spec as { flow?: { mode?: unknown } }).flow;
  if (flow?.mode !== 'authoritative_group') throw conflict('PROTOCOL_NOT_GROUP', `protocol ${protocolId} is not an authoritative_group protocol`);
  let c;
  try {
    c = groupConfigFromSpec(spec);
  } catch {
    throw conflict('GROUP_POLICY_MISMATCH', `protocol ${protocolId} has no usable flow.group`);
  }
  if (c.min_participants !== p.min || c.max_participants !== p.max || c.allow_late_join !== p.lateJoin || c.recovery_mode !== p.recovery)
    throw conflict(
      'GROUP_POLICY_MISMATCH',
      `the spec says min ${c.min_participants}, max ${c.max_participants}, allow_late_join ${c.allow_late_join}, recovery_mode ${c.recovery_mode}`,
    );
}

/** A room's policy as its host asks for it. */
interface RoomPolicy {
  min: number;
  max: number;
  lateJoin: boolean;
  recovery: string;
}

/** POST /api/v1/groups: the host of an active invitation opens its room, and takes seat 0 as its first Leader. */
async function createGroup(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const ctx = api.ctx;
  const b = await readJsonObject(c);
  const postId = str(b, 'post_id', { min: 1, max: 64 });
  const min = int(b, 'min_participants', 1, MAX_PARTICIPANTS);
  const max = int(b, 'max_participants', 1, MAX_PARTICIPANTS);
  if (min > max) throw badRequest('FIELD_INVALID', 'min_participants must not exceed max_participants');
  const lateJoin = bool(b, 'allow_late_join', false);
  const recovery = oneOf(b, 'recovery_mode', RECOVERY_MODES, 'exact');
  const caller = c.get('publicKey');
  const now = ctx.now();
  const inv = await loadInvitation(ctx.db, postId);
  if (!inv) throw notFound('INVITATION_NOT_FOUND', `no invitation ${postId}`);
  if (inv.public_key !== caller) throw forbidden('NOT_INVITATION_HOST', 'only the host of the invitation can open its group');
  const status = effectiveStatus(inv, now);
  if (status !== 'active') throw conflict('INVITATION_NOT_ACTIVE', `the invitation is ${status}`);
  const policy: RoomPolicy = { min, max, lateJoin, recovery };
  await checkPolicy(ctx.db, inv.protocol_id, policy);
  const groupId = randomId();
  const g = await ctx.db.transaction((tx) => insertGroup(tx, { groupId, postId, caller, policy, now, leaseExpiresAt: now + api.leaseMs, invitation: inv }));
  ctx.log.info('group_created', { group_id: groupId, post_id: postId });
  return c.json(await view(ctx.db, g, api.limits, now), 201);
}

/** The new room's row and its Leader's seat, or GROUP_EXISTS when the invitation has a room already. */
async function insertGroup(
  tx: Db,
  n: {
    groupId: string;
    postId: string;
    caller: string;
    policy: RoomPolicy;
    now: number;
    leaseExpiresAt: number;
    invitation: { protocol_id: string; iroh_ticket: string; transport_binding_signature: string };
  },
): Promise<GroupRow> {
  const { groupId, postId, caller, policy, now, invitation: inv } = n;
  const [row] = await tx.query<GroupRow>(
    `INSERT INTO groups (group_id, post_id, protocol_id, leader_public_key, leader_epoch, membership_version, min_participants, max_participants,
       allow_late_join, recovery_mode, status, checkpoint_seq, checkpoint_hash, iroh_ticket, transport_binding_signature, lease_expires_at, created_at)
     VALUES ($1, $2, $3, $4, 0, 1, $5, $6, $7, $8, 'lobby', 0, $9, $10, $11, $12, $13)
     ON CONFLICT (post_id) DO NOTHING RETURNING *`,
    [
      groupId,
      postId,
      inv.protocol_id,
      caller,
      policy.min,
      policy.max,
      policy.lateJoin,
      policy.recovery,
      ZERO_HASH,
      inv.iroh_ticket,
      inv.transport_binding_signature,
      n.leaseExpiresAt,
      now,
    ],
  );
  if (!row) throw conflict('GROUP_EXISTS', `invitation ${postId} already has a group`);
  // The Leader plays a seat of its own: seat 0.
  await tx.query(
    `INSERT INTO group_members (group_id, public_key, member_id, seat, status, joined_at, last_seen_at) VALUES ($1, $2, $3, 0, 'active', $4, $4)`,
    [groupId, caller, randomId(), now],
  );
  return row;
}

/** GET /api/v1/groups/by-post/:post_id */
async function groupByPost(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const postId = hexParam(c, 'post_id', ID32);
  const [g] = await api.ctx.db.query<GroupRow>('SELECT * FROM groups WHERE post_id = $1', [postId]);
  if (!g) throw notFound('GROUP_NOT_FOUND', `invitation ${postId} has no group`);
  return c.json(await view(api.ctx.db, g, api.limits, api.ctx.now()));
}

/** GET /api/v1/groups/:id */
async function groupById(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const g = await groupRow(api.ctx.db, hexParam(c, 'id', ID32), false);
  return c.json(await view(api.ctx.db, g, api.limits, api.ctx.now()));
}

/** What an admission names beside the group: who is admitted, under which epoch and nonce, and both signatures. */
interface Admission {
  groupId: string;
  caller: string;
  epoch: number;
  joinNonce: string;
  leaderSignature: string;
  memberSignature: string;
}

/** POST /api/v1/groups/:id/members: a Member admitted by the current Leader takes (or keeps) a seat. */
async function admitMember(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const groupId = hexParam(c, 'id', ID32);
  const b = await readJsonObject(c);
  const joinNonce = str(b, 'join_nonce', { min: 1, max: 64 });
  const epoch = int(b, 'leader_epoch', 0, MAX_COUNT);
  const leaderSignature = signatureField(b, 'leader_signature');
  const memberSignature = signatureField(b, 'member_signature');
  const caller = c.get('publicKey');
  const a: Admission = { groupId, caller, epoch, joinNonce, leaderSignature, memberSignature };
  const [status, body] = await change(api.ctx, groupId, (tx, g, now) => admit(api.ctx, tx, g, now, a));
  return c.json(body, status);
}

/** Under the group's lock: both signatures over the admission, then the caller's seat (its own again when it reconnects). */
async function admit(ctx: ServerContext, tx: Db, g: GroupRow, now: number, a: Admission) {
  const { groupId, caller, epoch } = a;
  open(g);
  currentEpoch(g, epoch);
  const statement = admissionCanonical({
    group_id: g.group_id,
    leader_public_key: g.leader_public_key,
    member_public_key: caller,
    protocol_id: g.protocol_id,
    leader_epoch: epoch,
    join_nonce: a.joinNonce,
  });
  if (!sig(ctx, g.leader_public_key, statement, a.leaderSignature))
    throw forbidden('ADMISSION_INVALID', "leader_signature is not the current Leader's over this admission");
  if (!sig(ctx, caller, statement, a.memberSignature)) throw forbidden('ADMISSION_INVALID', "member_signature is not the caller's over this admission");
  const answer = (m: MemberRow, version: number) => ({
    group_id: g.group_id,
    ...memberView(m),
    leader_epoch: g.leader_epoch,
    membership_version: version,
  });
  const [existing] = await tx.query<MemberRow>('SELECT * FROM group_members WHERE group_id = $1 AND public_key = $2', [groupId, caller]);
  // A Member reconnecting (after a channel loss or a Leader change) keeps its id and seat.
  if (existing?.status === 'active') return [200, answer(existing, g.membership_version)] as const;
  if (g.status === 'active' && !g.allow_late_join) throw conflict('LATE_JOIN_CLOSED', 'the game has started and this group takes no late joiners');
  const seats = new Set((await activeMembers(tx, groupId)).map((m) => m.seat));
  if (seats.size >= g.max_participants) throw conflict('GROUP_FULL', `the group has its ${g.max_participants} participants`);
  let seat = 0;
  while (seats.has(seat)) seat++;
  const [m] = await tx.query<MemberRow>(
    `INSERT INTO group_members (group_id, public_key, member_id, seat, status, joined_at, last_seen_at) VALUES ($1, $2, $3, $4, 'active', $5, $5)
     ON CONFLICT (group_id, public_key) DO UPDATE SET seat = $4, status = 'active', joined_at = $5, last_seen_at = $5 RETURNING *`,
    [groupId, caller, existing?.member_id ?? randomId(), seat, now],
  );
  const [v] = await tx.query<{ membership_version: number }>(
    'UPDATE groups SET membership_version = membership_version + 1 WHERE group_id = $1 RETURNING membership_version',
    [groupId],
  );
  return [201, answer(m!, v!.membership_version)] as const;
}

/** POST /api/v1/groups/:id/heartbeat: the Leader renews its lease, raises the recovery floor and names its endpoint. */
async function leaderHeartbeat(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const ctx = api.ctx;
  const groupId = hexParam(c, 'id', ID32);
  const b = await readJsonObject(c);
  const epoch = int(b, 'leader_epoch', 0, MAX_COUNT);
  const seq = int(b, 'checkpoint_seq', 0, MAX_COUNT);
  const hash = str(b, 'checkpoint_hash', { min: 64, max: 64, pattern: HEX64_ANY });
  const caller = c.get('publicKey');
  const body = await change(ctx, groupId, async (tx, g, now) => {
    open(g);
    if (g.leader_public_key !== caller) throw conflict('NOT_LEADER', 'the caller is not the Leader of the current epoch');
    currentEpoch(g, epoch);
    // The digest is a recovery floor: it never moves back, and one seq has one checkpoint.
    if (seq < g.checkpoint_seq) throw conflict('CHECKPOINT_REGRESSION', `checkpoint_seq ${seq} is behind the recorded ${g.checkpoint_seq}`);
    if (seq === g.checkpoint_seq && hash !== g.checkpoint_hash && g.checkpoint_hash !== ZERO_HASH)
      throw conflict('CHECKPOINT_CONFLICT', `a different checkpoint is recorded for seq ${seq}`);
    const ep = endpoint(ctx, b, caller, g.protocol_id);
    const [row] = await tx.query<GroupRow>(
      'UPDATE groups SET checkpoint_seq = $2, checkpoint_hash = $3, iroh_ticket = $4, transport_binding_signature = $5, lease_expires_at = $6 WHERE group_id = $1 RETURNING *',
      [groupId, seq, hash, ep.ticket, ep.signature, now + api.leaseMs],
    );
    await touchInvitation(tx, g.post_id, ctx, now);
    return view(tx, row!, api.limits, now);
  });
  return c.json(body);
}

/** POST /api/v1/groups/:id/members/heartbeat: a Member shows it is still there. */
async function memberHeartbeat(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const groupId = hexParam(c, 'id', ID32);
  const caller = c.get('publicKey');
  const body = await change(api.ctx, groupId, async (tx, g, now) => {
    open(g);
    const [m] = await tx.query<MemberRow>(
      `UPDATE group_members SET last_seen_at = $3 WHERE group_id = $1 AND public_key = $2 AND status = 'active' RETURNING *`,
      [groupId, caller, now],
    );
    if (!m) throw forbidden('NOT_A_MEMBER', 'the caller is not an active member of this group');
    return { group_id: groupId, ...memberView(m), leader_epoch: g.leader_epoch, server_time: iso(now) };
  });
  return c.json(body);
}

/** The checkpoint a claim recovers from, as the Leader of the replaced epoch certified it. */
interface Claim {
  groupId: string;
  caller: string;
  expected: number;
  seq: number;
  hash: string;
  frameHash: string;
  membershipVersion: number;
  checkpointSignature: string;
  body: JsonObject;
}

/** POST /api/v1/groups/:id/claim-leader: a Member takes the next epoch once the Leader's lease has run out. */
async function claimLeader(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const groupId = hexParam(c, 'id', ID32);
  const b = await readJsonObject(c);
  const expected = int(b, 'expected_epoch', 0, MAX_COUNT - 1);
  const seq = int(b, 'checkpoint_seq', 0, MAX_COUNT);
  const hash = str(b, 'checkpoint_hash', { min: 64, max: 64, pattern: HEX64_ANY });
  const frameHash = str(b, 'checkpoint_frame_hash', { min: 64, max: 64, pattern: HEX64_ANY });
  const membershipVersion = int(b, 'checkpoint_membership_version', 0, MAX_COUNT);
  const checkpointSignature = signatureField(b, 'checkpoint_signature');
  const caller = c.get('publicKey');
  const claim: Claim = { groupId, caller, expected, seq, hash, frameHash, membershipVersion, checkpointSignature, body: b };
  const body = await change(api.ctx, groupId, (tx, g, now) => takeEpoch(api, tx, g, now, claim));
  return c.json(body);
}

/** Under the group's lock: the fencing rule's checks in order, then the next epoch with the claimant's endpoint and lease. */
async function takeEpoch(api: Groups, tx: Db, g: GroupRow, now: number, a: Claim) {
  const { ctx, limits } = api;
  const { groupId, caller, expected, seq, hash } = a;
  open(g);
  const [m] = await tx.query(`SELECT 1 AS ok FROM group_members WHERE group_id = $1 AND public_key = $2 AND status = 'active'`, [groupId, caller]);
  if (!m) throw forbidden('NOT_A_MEMBER', 'only an active member can claim leadership');
  currentEpoch(g, expected);
  if (now < g.lease_expires_at) throw conflict('LEASE_ACTIVE', `the Leader's lease runs until ${iso(g.lease_expires_at)}`);
  if (seq < g.checkpoint_seq) throw conflict('CHECKPOINT_BEHIND', `checkpoint_seq ${seq} is behind the recovery floor ${g.checkpoint_seq}`);
  const certificate = checkpointCertificate({
    group_id: groupId,
    leader_public_key: g.leader_public_key,
    leader_epoch: g.leader_epoch,
    seq,
    frame_hash: a.frameHash,
    membership_version: a.membershipVersion,
    checkpoint_hash: hash,
  });
  if (!sig(ctx, g.leader_public_key, certificate, a.checkpointSignature))
    throw forbidden('CHECKPOINT_SIGNATURE_INVALID', 'the checkpoint is not certified by the Leader of the epoch it replaces');
  const ep = endpoint(ctx, a.body, caller, g.protocol_id);
  const [row] = await tx.query<GroupRow>(
    `UPDATE groups SET leader_public_key = $3, leader_epoch = leader_epoch + 1, checkpoint_seq = $4, checkpoint_hash = $5, iroh_ticket = $6,
       transport_binding_signature = $7, lease_expires_at = $8 WHERE group_id = $1 AND leader_epoch = $2 RETURNING *`,
    [groupId, expected, caller, seq, hash, ep.ticket, ep.signature, now + api.leaseMs],
  );
  // The row lock makes this unreachable; the compare-and-set stays as the rule's second statement.
  if (!row) throw conflict('STALE_EPOCH', 'another claim took this epoch');
  await touchInvitation(tx, g.post_id, ctx, now);
  ctx.log.info('group_leader_claimed', { group_id: groupId, leader_epoch: row.leader_epoch });
  return view(tx, row, limits, now);
}

/** POST /api/v1/groups/:id/leave */
async function leaveGroup(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const groupId = hexParam(c, 'id', ID32);
  const caller = c.get('publicKey');
  const body = await change(api.ctx, groupId, async (tx, _g, now) => {
    const left = await tx.query(
      `UPDATE group_members SET status = 'left', last_seen_at = $3 WHERE group_id = $1 AND public_key = $2 AND status = 'active' RETURNING seat`,
      [groupId, caller, now],
    );
    if (left.length === 0) throw forbidden('NOT_A_MEMBER', 'the caller is not an active member of this group');
    // A Leader that leaves gives up its lease at once, so a Member can claim without waiting it out.
    const [row] = await tx.query<GroupRow>(
      'UPDATE groups SET membership_version = membership_version + 1, lease_expires_at = CASE WHEN leader_public_key = $2 THEN LEAST(lease_expires_at, $3) ELSE lease_expires_at END WHERE group_id = $1 RETURNING *',
      [groupId, caller, now],
    );
    return view(tx, row!, api.limits, now);
  });
  return c.json(body);
}

/** POST /api/v1/groups/:id/status: the Leader starts the game or ends the room (which takes its invitation down). */
async function changeStatus(api: Groups, c: Context<AppEnv>): Promise<Response> {
  const groupId = hexParam(c, 'id', ID32);
  const b = await readJsonObject(c);
  const epoch = int(b, 'leader_epoch', 0, MAX_COUNT);
  const next = oneOf(b, 'status', STATUS_CHANGES);
  const caller = c.get('publicKey');
  const body = await change(api.ctx, groupId, async (tx, g, now) => {
    open(g);
    if (g.leader_public_key !== caller) throw conflict('NOT_LEADER', 'the caller is not the Leader of the current epoch');
    currentEpoch(g, epoch);
    const [row] = await tx.query<GroupRow>('UPDATE groups SET status = $2 WHERE group_id = $1 RETURNING *', [groupId, next]);
    if (FINAL.has(next)) await tx.query(`UPDATE invitations SET status = 'cancelled' WHERE post_id = $1 AND status = 'active'`, [g.post_id]);
    return view(tx, row!, api.limits, now);
  });
  return c.json(body);
}

export function groupRoutesWith(overrides: Partial<GroupLimits> = {}): RouteModule {
  const limits: GroupLimits = { ...DEFAULT_GROUP_LIMITS, ...overrides };
  const leaseMs = limits.leaseSeconds * 1000;

  function register(app: Hono<AppEnv>, ctx: ServerContext): void {
    const registered = requireRegistered(ctx);
    const api: Groups = { ctx, limits, leaseMs };
    app.post('/api/v1/groups', registered, (c) => createGroup(api, c));
    app.get('/api/v1/groups/by-post/:post_id', (c) => groupByPost(api, c));
    app.get('/api/v1/groups/:id', (c) => groupById(api, c));
    app.post('/api/v1/groups/:id/members', registered, (c) => admitMember(api, c));
    app.post('/api/v1/groups/:id/heartbeat', registered, (c) => leaderHeartbeat(api, c));
    app.post('/api/v1/groups/:id/members/heartbeat', registered, (c) => memberHeartbeat(api, c));
    app.post('/api/v1/groups/:id/claim-leader', registered, (c) => claimLeader(api, c));
    app.post('/api/v1/groups/:id/leave', registered, (c) => leaveGroup(api, c));
    app.post('/api/v1/groups/:id/status', registered, (c) => changeStatus(api, c));
  }

  return {
    name: 'groups',
    migrations: [
      {
        id: 'groups/001',
        sql: `CREATE TABLE groups (
  group_id text PRIMARY KEY,
  post_id text NOT NULL UNIQUE,
  protocol_id text NOT NULL,
  leader_public_key text NOT NULL,
  leader_epoch bigint NOT NULL,
  membership_version bigint NOT NULL,
  min_participants integer NOT NULL,
  max_participants integer NOT NULL,
  allow_late_join boolean NOT NULL,
  recovery_mode text NOT NULL,
  status text NOT NULL,
  checkpoint_seq bigint NOT NULL,
  checkpoint_hash text NOT NULL,
  iroh_ticket text NOT NULL,
  transport_binding_signature text NOT NULL,
  lease_expires_at bigint NOT NULL,
  created_at bigint NOT NULL
);
CREATE TABLE group_members (
  group_id text NOT NULL REFERENCES groups (group_id) ON DELETE CASCADE,
  public_key text NOT NULL,
  member_id text NOT NULL UNIQUE,
  seat integer NOT NULL,
  status text NOT NULL,
  joined_at bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  PRIMARY KEY (group_id, public_key)
);
CREATE UNIQUE INDEX group_members_seat ON group_members (group_id, seat) WHERE status = 'active';`,
      },
    ],
    register,
  };
}

export const groupRoutes = groupRoutesWith();
