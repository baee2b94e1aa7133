/**
 * The authoritative_group wire (the reference's proto/group.py, proto/group_control.py and the channel
 * admission of agent/group.py), without I/O: admission strings and signatures, the channel-ready proof,
 * the transport binding, frame cores and frame hashes, checkpoints and their certificates, each
 * member's private payload with its view hash and the Leader's signature over it, and member records.
 *
 * Keys and signatures are lowercase hex; seeds are the 32-byte Ed25519 seeds as hex.
 */
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex, utf8, concatBytes } from '../crypto/encoding.js';
import { makeDelta, type DeltaOp } from './delta.js';
import { GroupError } from './errors.js';
import { checkGroupJson, groupCanonicalBytes, groupJsonHash, type GroupJson, type GroupObject } from './json.js';

export const GROUP_WIRE_VERSION = 2;
export const ZERO_HASH = '0'.repeat(64);
export const MAX_SEAT = 31;
export const MAX_JOIN_NONCE = 64;
export const MAX_MEMBER_ID = 128;
/** A delta replaces a full checkpoint / view only when it is smaller by this many bytes. */
export const CHECKPOINT_DELTA_MARGIN = 256;
export const VIEW_DELTA_MARGIN = 96;

export const FRAME_KINDS = ['snapshot', 'frame', 'membership', 'epoch_start'] as const;
export type FrameKind = (typeof FRAME_KINDS)[number];

export const CORE_FIELDS = [
  '_group',
  'wire_version',
  'group_id',
  'leader_public_key',
  'leader_epoch',
  'seq',
  'previous_hash',
  'membership_version',
  'authority_state_hash',
  'recovery_state_hash',
  'events_hash',
  'completed',
  'outcome',
] as const;
export const CHECKPOINT_STATE_FIELDS = ['members', 'last_client_seq', 'recovery_mode', 'protocol_state', 'completed', 'outcome'] as const;
export const PRIVATE_PAYLOAD_FIELDS = [
  'viewer_public_key',
  'view_mode',
  'view',
  'view_delta',
  'view_state_hash',
  'direct',
  'checkpoint_mode',
  'checkpoint',
  'checkpoint_delta',
  'checkpoint_hash',
  'checkpoint_signature',
] as const;
export const RECOVERY_MODES = ['exact', 'restart_round', 'abort'] as const;

const HEX64 = /^[0-9a-f]{64}$/;
const HEX64_ANY_CASE = /^[0-9a-fA-F]{64}$/;
const CHALLENGE = /^[0-9a-f]{32}$/;

/** 64 hex characters of either case, as the reference's hash check accepts. */
export const isHash = (v: unknown): v is string => typeof v === 'string' && HEX64_ANY_CASE.test(v);
/** A public key as the wire carries it: 64 lowercase hex. */
export const isPublicKey = (v: unknown): v is string => typeof v === 'string' && HEX64.test(v);
/** A channel challenge: 16 bytes as 32 lowercase hex. */
export const isChannelChallenge = (v: unknown): v is string => typeof v === 'string' && CHALLENGE.test(v);

function str(o: Record<string, unknown>, key: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new GroupError('GROUP_FIELD', `${key} must be a string`);
  return v;
}

function count(o: Record<string, unknown>, key: string): number | bigint {
  const v = o[key];
  if ((typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) || (typeof v === 'bigint' && v >= 0n)) return typeof v === 'number' ? v + 0 : v;
  throw new GroupError('GROUP_FIELD', `${key} must be a non-negative integer`);
}

const sign = (c: Crypto, seedHex: string, bytes: Uint8Array) => toHex(c.ed25519Sign(fromHex(seedHex), bytes));
const verify = (c: Crypto, publicKeyHex: string, bytes: Uint8Array, signatureHex: string) =>
  /^[0-9a-fA-F]{128}$/.test(signatureHex) && HEX64_ANY_CASE.test(publicKeyHex) && c.ed25519Verify(fromHex(publicKeyHex), bytes, fromHex(signatureHex));

// ---- members ----

export interface GroupMember {
  member_id: string;
  public_key: string;
  seat: number;
  status: string;
}

/**
 * Member records as the checkpoint carries them: public keys lowercased, seats 0–31, sorted by seat,
 * member_id defaulting to the key and status to "active". Unlike the reference, which compares keys
 * before lowercasing them, one key in two cases is one member and is refused as a duplicate.
 */
export function normalizeMembers(members: readonly unknown[]): GroupMember[] {
  const keys = new Set<string>();
  const seats = new Set<number>();
  const out: GroupMember[] = [];
  for (const raw of members) {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new GroupError('GROUP_MEMBER_NOT_OBJECT', 'group member must be an object');
    const m = raw as Record<string, unknown>;
    const pk = m['public_key'];
    const seat = m['seat'];
    if (typeof pk !== 'string' || !HEX64_ANY_CASE.test(pk)) throw new GroupError('GROUP_MEMBER_KEY', 'group member public_key must be 64-char hex');
    if (typeof seat !== 'number' || !Number.isInteger(seat) || seat < 0 || seat > MAX_SEAT)
      throw new GroupError('GROUP_MEMBER_SEAT', 'group member seat must be between 0 and 31');
    const lower = pk.toLowerCase();
    if (keys.has(lower) || seats.has(seat)) throw new GroupError('GROUP_MEMBER_DUPLICATE', 'group members must have unique identity and seat');
    keys.add(lower);
    seats.add(seat);
    // Python's `str(x or default)`: an empty or missing value takes the default.
    const id = m['member_id'];
    const status = m['status'];
    out.push({
      member_id: typeof id === 'string' && id !== '' ? id : pk,
      public_key: lower,
      seat: seat + 0,
      status: typeof status === 'string' && status !== '' ? status : 'active',
    });
  }
  return out.sort((a, b) => a.seat - b.seat);
}

// ---- admission ----

export interface AdmissionFields {
  group_id: string;
  leader_public_key: string;
  member_public_key: string;
  protocol_id: string;
  leader_epoch: number | bigint;
  join_nonce: string;
}

/** `aigenora-group-admission-v1:{group_id}:{leader_pk}:{member_pk}:{protocol_id}:{leader_epoch}:{join_nonce}`, signed by Leader and Member. */
export function admissionCanonical(f: AdmissionFields): string {
  const o = f as unknown as Record<string, unknown>;
  return `aigenora-group-admission-v1:${str(o, 'group_id')}:${str(o, 'leader_public_key')}:${str(o, 'member_public_key')}:${str(o, 'protocol_id')}:${count(o, 'leader_epoch')}:${str(o, 'join_nonce')}`;
}

export const signAdmission = (c: Crypto, seedHex: string, f: AdmissionFields): string => sign(c, seedHex, utf8(admissionCanonical(f)));
export const verifyAdmission = (c: Crypto, publicKeyHex: string, f: AdmissionFields, signatureHex: string): boolean =>
  verify(c, publicKeyHex, utf8(admissionCanonical(f)), signatureHex);

/** The Leader's transport binding the Member checks before connecting: four lines, no trailing newline. */
export function transportBindingCanonical(publicKey: string, transport: string, ticket: string, protocolId: string | null): string {
  return `public_key:${publicKey}\ntransport:${transport}\niroh_ticket:${ticket}\nprotocol_id:${protocolId ?? ''}`;
}

export interface ChannelReadyFields {
  group_id: string;
  protocol_id: string;
  leader_epoch: number | bigint;
  member_public_key: string;
  member_id: string;
  seat: number;
  join_nonce: string;
  channel_challenge: string;
}

const READY_PREFIX = utf8('aigenora-group-channel-ready-v1:');

/** What the Member signs in `ready`: the prefix ‖ canonical JSON of the eight fields, binding its key to this challenged channel. */
export function channelReadyBytes(f: ChannelReadyFields): Uint8Array {
  const o = f as unknown as Record<string, unknown>;
  const body = {
    group_id: str(o, 'group_id'),
    protocol_id: str(o, 'protocol_id'),
    leader_epoch: count(o, 'leader_epoch'),
    member_public_key: str(o, 'member_public_key'),
    member_id: str(o, 'member_id'),
    seat: count(o, 'seat'),
    join_nonce: str(o, 'join_nonce'),
    channel_challenge: str(o, 'channel_challenge'),
  };
  return concatBytes(READY_PREFIX, groupCanonicalBytes(body));
}

export const signChannelReady = (c: Crypto, seedHex: string, f: ChannelReadyFields): string => sign(c, seedHex, channelReadyBytes(f));
export const verifyChannelReady = (c: Crypto, publicKeyHex: string, f: ChannelReadyFields, signatureHex: string): boolean =>
  verify(c, publicKeyHex, channelReadyBytes(f), signatureHex);

/** A Member's first frame, as the Leader reads it: the key lowercased, a nonce of 1–64 characters. */
export function readJoin(message: unknown, groupId: string): { member_public_key: string; join_nonce: string } {
  if (typeof message !== 'object' || message === null || (message as Record<string, unknown>)['_group'] !== 'join') {
    throw new GroupError('GROUP_FIELD', 'first multiplayer frame must be group join');
  }
  const m = message as Record<string, unknown>;
  if (m['group_id'] !== groupId) throw new GroupError('GROUP_FIELD', 'group join targets a different group');
  const pk = typeof m['member_public_key'] === 'string' ? m['member_public_key'].toLowerCase() : '';
  if (!isPublicKey(pk)) throw new GroupError('GROUP_FIELD', 'member_public_key must be 64-char hex');
  const nonce = m['join_nonce'];
  if (typeof nonce !== 'string' || nonce === '' || nonce.length > MAX_JOIN_NONCE) throw new GroupError('GROUP_JOIN_NONCE', 'join_nonce is invalid');
  return { member_public_key: pk, join_nonce: nonce };
}

/** The challenge in the Leader's `admission`, as the Member checks it. */
export function checkChannelChallenge(v: unknown): string {
  if (!isChannelChallenge(v)) throw new GroupError('GROUP_CHALLENGE', 'group channel challenge is invalid');
  return v;
}

// ---- frames ----

export type FrameCore = { [K in (typeof CORE_FIELDS)[number]]: GroupJson };

/** The core fields of a frame or envelope (a missing one is null, as the reference's `.get` reads it). */
export function frameCore(o: Record<string, unknown>): FrameCore {
  const core = {} as Record<string, unknown>;
  for (const k of CORE_FIELDS) core[k] = k in o ? o[k] : null;
  return core as FrameCore;
}

export const frameHash = (c: Crypto, core: FrameCore): string => groupJsonHash(c, core);

// ---- checkpoints ----

export interface CheckpointState {
  members: GroupMember[];
  last_client_seq: Record<string, number>;
  recovery_mode: string;
  protocol_state: GroupObject;
  completed: boolean;
  outcome: string | null;
}

export interface CheckpointMeta {
  group_id: string;
  leader_public_key: string;
  leader_epoch: number;
  seq: number;
  frame_hash: string;
  membership_version: number;
}

export type UnsignedCheckpoint = { version: 1 } & CheckpointMeta & CheckpointState;
export type Checkpoint = UnsignedCheckpoint & { checkpoint_hash: string; checkpoint_signature: string };

/** The six state fields of a checkpoint, or GroupError naming the first missing one. */
export function checkpointState(checkpoint: Record<string, unknown>): Record<(typeof CHECKPOINT_STATE_FIELDS)[number], unknown> {
  const out = {} as Record<string, unknown>;
  for (const k of CHECKPOINT_STATE_FIELDS) {
    if (!(k in checkpoint)) throw new GroupError('GROUP_CHECKPOINT_STATE', `group checkpoint state is missing ${k}`);
    out[k] = checkpoint[k];
  }
  return out as Record<(typeof CHECKPOINT_STATE_FIELDS)[number], unknown>;
}

/** The reference's checks of a checkpoint state (as a replica makes them after a delta), with its texts. */
export function validateCheckpointState(v: unknown): asserts v is CheckpointState {
  const bad = (m: string): never => {
    throw new GroupError('GROUP_CHECKPOINT_STATE', m);
  };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return bad('group checkpoint state fields are invalid');
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length !== CHECKPOINT_STATE_FIELDS.length || !CHECKPOINT_STATE_FIELDS.every((k) => k in o)) bad('group checkpoint state fields are invalid');
  if (!Array.isArray(o['members'])) bad('group checkpoint members must be an array');
  normalizeMembers(o['members'] as unknown[]);
  const lcs = o['last_client_seq'];
  if (
    typeof lcs !== 'object' ||
    lcs === null ||
    Array.isArray(lcs) ||
    Object.values(lcs).some((s) => !(typeof s === 'number' && Number.isInteger(s) && s >= 0) && !(typeof s === 'bigint' && s >= 0n))
  ) {
    bad('group checkpoint last_client_seq is invalid');
  }
  if (!(RECOVERY_MODES as readonly unknown[]).includes(o['recovery_mode'])) bad('group checkpoint recovery_mode is invalid');
  const ps = o['protocol_state'];
  if (typeof ps !== 'object' || ps === null || Array.isArray(ps)) bad('group checkpoint protocol_state must be an object');
  if (typeof o['completed'] !== 'boolean') bad('group checkpoint completed is invalid');
  if (o['outcome'] !== null && typeof o['outcome'] !== 'string') bad('group checkpoint outcome is invalid');
  checkGroupJson(v);
}

/** The checkpoint object that is hashed: version 1, the frame it certifies, then the state. */
export function unsignedCheckpoint(meta: CheckpointMeta, state: CheckpointState): UnsignedCheckpoint {
  return {
    version: 1,
    group_id: meta.group_id,
    leader_public_key: meta.leader_public_key,
    leader_epoch: meta.leader_epoch,
    seq: meta.seq,
    frame_hash: meta.frame_hash,
    membership_version: meta.membership_version,
    members: state.members,
    last_client_seq: state.last_client_seq,
    recovery_mode: state.recovery_mode,
    protocol_state: state.protocol_state,
    completed: state.completed,
    outcome: state.outcome,
  };
}

/** A checkpoint without its hash and signature (what checkpoint_hash is over). */
export function stripCheckpoint(checkpoint: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...checkpoint };
  delete out['checkpoint_hash'];
  delete out['checkpoint_signature'];
  return out;
}

export const checkpointHash = (c: Crypto, unsigned: Record<string, unknown>): string => groupJsonHash(c, stripCheckpoint(unsigned));

/** `aigenora-group-checkpoint-v1:{group_id}:{leader_pk}:{epoch}:{seq}:{frame_hash}:{membership_version}:{checkpoint_hash}`. */
export function checkpointCertificate(checkpoint: Record<string, unknown>): string {
  const o = checkpoint;
  return `aigenora-group-checkpoint-v1:${str(o, 'group_id')}:${str(o, 'leader_public_key')}:${count(o, 'leader_epoch')}:${count(o, 'seq')}:${str(o, 'frame_hash')}:${count(o, 'membership_version')}:${str(o, 'checkpoint_hash')}`;
}

/** The checkpoint with its hash and the Leader's signature over its certificate. */
export function signCheckpoint(c: Crypto, leaderSeedHex: string, unsigned: UnsignedCheckpoint): Checkpoint {
  const hash = checkpointHash(c, unsigned as unknown as Record<string, unknown>);
  return signedCheckpointOf(unsigned, hash, sign(c, leaderSeedHex, utf8(checkpointCertificate({ ...unsigned, checkpoint_hash: hash }))));
}

/** The checkpoint object: the unsigned fields, then its hash and signature. */
export function signedCheckpointOf(u: UnsignedCheckpoint, checkpointHash: string, signature: string): Checkpoint {
  // Written out field by field: a spread of this many fields builds the object key by key, many times slower.
  return {
    version: u.version,
    group_id: u.group_id,
    leader_public_key: u.leader_public_key,
    leader_epoch: u.leader_epoch,
    seq: u.seq,
    frame_hash: u.frame_hash,
    membership_version: u.membership_version,
    members: u.members,
    last_client_seq: u.last_client_seq,
    recovery_mode: u.recovery_mode,
    protocol_state: u.protocol_state,
    completed: u.completed,
    outcome: u.outcome,
    checkpoint_hash: checkpointHash,
    checkpoint_signature: signature,
  };
}

/** Whether the checkpoint's hash is its content's and its signature the given Leader's over its certificate. */
export function verifyCheckpoint(c: Crypto, leaderPublicKey: string, checkpoint: Record<string, unknown>): boolean {
  const sig = checkpoint['checkpoint_signature'];
  if (typeof sig !== 'string' || !isHash(checkpoint['checkpoint_hash'])) return false;
  if (checkpointHash(c, checkpoint) !== checkpoint['checkpoint_hash']) return false;
  return verify(c, leaderPublicKey, utf8(checkpointCertificate(checkpoint)), sig);
}

/** Whether the checkpoint's signature is the given Leader's over its certificate (its hash checked by the caller). */
export function verifyCheckpointCertificate(c: Crypto, leaderPublicKey: string, checkpoint: Record<string, unknown>): boolean {
  const sig = checkpoint['checkpoint_signature'];
  return typeof sig === 'string' && verify(c, leaderPublicKey, utf8(checkpointCertificate(checkpoint)), sig);
}

/**
 * Whether a frame carries its checkpoint in full: the first frame, every kind but "frame", completion,
 * and every `every`-th seq. Otherwise a delta is sent when smaller (deltaIfSmaller).
 */
export function checkpointForcedFull(f: { first: boolean; kind: string; completed: boolean; seq: number; every: number }): boolean {
  return f.first || f.kind !== 'frame' || f.completed || f.seq % f.every === 0;
}

/** The delta from `before` to `after` when its canonical bytes plus `margin` are fewer than `full`'s; otherwise undefined. */
export function deltaIfSmaller(before: GroupJson, after: GroupJson, full: GroupJson, margin: number): DeltaOp[] | undefined {
  const delta = makeDelta(before, after);
  return groupCanonicalBytes(delta).length + margin < groupCanonicalBytes(full).length ? delta : undefined;
}

// ---- private payloads and envelopes ----

export interface PrivatePayload {
  viewer_public_key: string;
  view_mode: 'full' | 'delta';
  view: GroupObject | null;
  view_delta: DeltaOp[];
  view_state_hash: string;
  direct: GroupJson;
  checkpoint_mode: 'full' | 'delta';
  checkpoint: Checkpoint | null;
  checkpoint_delta: DeltaOp[];
  checkpoint_hash: string;
  checkpoint_signature: string;
}

/** One member's private payload: its view (full, or a delta with `view` null), its direct messages, and the checkpoint (full or delta). */
export function privatePayload(
  c: Crypto,
  p: {
    viewer_public_key: string;
    view: GroupObject;
    view_delta?: DeltaOp[] | undefined;
    direct: GroupJson;
    checkpoint: Checkpoint;
    checkpoint_delta?: DeltaOp[] | undefined;
    /** The view's hash when the caller has it already. */
    view_state_hash?: string;
  },
): PrivatePayload {
  return {
    viewer_public_key: p.viewer_public_key,
    view_mode: p.view_delta ? 'delta' : 'full',
    view: p.view_delta ? null : p.view,
    view_delta: p.view_delta ?? [],
    view_state_hash: p.view_state_hash ?? groupJsonHash(c, p.view),
    direct: p.direct,
    checkpoint_mode: p.checkpoint_delta ? 'delta' : 'full',
    checkpoint: p.checkpoint_delta ? null : p.checkpoint,
    checkpoint_delta: p.checkpoint_delta ?? [],
    checkpoint_hash: p.checkpoint.checkpoint_hash,
    checkpoint_signature: p.checkpoint.checkpoint_signature,
  };
}

/** The private-payload fields of an envelope (a missing one is null). */
export function privatePayloadOf(envelope: Record<string, unknown>): Record<(typeof PRIVATE_PAYLOAD_FIELDS)[number], unknown> {
  const out = {} as Record<string, unknown>;
  for (const k of PRIVATE_PAYLOAD_FIELDS) out[k] = k in envelope ? envelope[k] : null;
  return out as Record<(typeof PRIVATE_PAYLOAD_FIELDS)[number], unknown>;
}

export const viewHash = (c: Crypto, payload: unknown): string => groupJsonHash(c, payload);

/** Canonical {frame_hash, view_hash, viewer_public_key}: what the Leader signs for each member. */
export function signaturePayload(frameHashHex: string, viewHashHex: string, viewerPublicKey: string): Uint8Array {
  return groupCanonicalBytes({ frame_hash: frameHashHex, view_hash: viewHashHex, viewer_public_key: viewerPublicKey });
}

/**
 * signaturePayload of values the Leader made itself: lowercase hex, which canonical JSON writes as it
 * is, so the text is put together without a walk.
 */
export function leaderSignaturePayload(frameHashHex: string, viewHashHex: string, viewerPublicKey: string): Uint8Array {
  return utf8(`{"frame_hash":"${frameHashHex}","view_hash":"${viewHashHex}","viewer_public_key":"${viewerPublicKey}"}`);
}

export const signView = (c: Crypto, leaderSeedHex: string, frameHashHex: string, viewHashHex: string, viewer: string): string =>
  sign(c, leaderSeedHex, signaturePayload(frameHashHex, viewHashHex, viewer));
export const verifyView = (c: Crypto, leaderPublicKey: string, frameHashHex: string, viewHashHex: string, viewer: string, signatureHex: string): boolean =>
  verify(c, leaderPublicKey, signaturePayload(frameHashHex, viewHashHex, viewer), signatureHex);

export type Envelope = FrameCore & PrivatePayload & { frame_hash: string; events: GroupJson[]; view_hash: string; signature: string };

/** The envelope one member receives: core, frame hash, events, its private payload, view hash and the Leader's signature. */
export function buildEnvelope(c: Crypto, leaderSeedHex: string, core: FrameCore, events: GroupJson[], payload: PrivatePayload): Envelope {
  const fh = frameHash(c, core);
  const vh = viewHash(c, payload);
  return envelopeOf(core, fh, events, payload, vh, signView(c, leaderSeedHex, fh, vh, payload.viewer_public_key));
}

/** The envelope object from its parts, fields in the wire's order. */
export function envelopeOf(core: FrameCore, frameHashHex: string, events: GroupJson[], p: PrivatePayload, viewHashHex: string, signature: string): Envelope {
  // Written out field by field: a spread of this many fields builds the object key by key, many times slower.
  return {
    _group: core._group,
    wire_version: core.wire_version,
    group_id: core.group_id,
    leader_public_key: core.leader_public_key,
    leader_epoch: core.leader_epoch,
    seq: core.seq,
    previous_hash: core.previous_hash,
    membership_version: core.membership_version,
    authority_state_hash: core.authority_state_hash,
    recovery_state_hash: core.recovery_state_hash,
    events_hash: core.events_hash,
    completed: core.completed,
    outcome: core.outcome,
    frame_hash: frameHashHex,
    events,
    viewer_public_key: p.viewer_public_key,
    view_mode: p.view_mode,
    view: p.view,
    view_delta: p.view_delta,
    view_state_hash: p.view_state_hash,
    direct: p.direct,
    checkpoint_mode: p.checkpoint_mode,
    checkpoint: p.checkpoint,
    checkpoint_delta: p.checkpoint_delta,
    checkpoint_hash: p.checkpoint_hash,
    checkpoint_signature: p.checkpoint_signature,
    view_hash: viewHashHex,
    signature,
  };
}
