/**
 * The authoritative_group leader as a pure state machine (no I/O, no clock, no randomness): it orders
 * member actions, runs the protocol's hooks, and turns each accepted change into one frame, chained by
 * previous_hash, with a signed checkpoint and one privately viewed, signed envelope per active member.
 * The caller (a network hub, a test, the in-process runner) delivers `envelopes[pk]` to member `pk`.
 *
 * Wire shapes, field for field and byte for byte, are the reference's (NOTES A18; the group vectors'
 * `session` case). Unlike the reference, a refused action or a failing hook leaves the leader exactly
 * as it was: every change is computed on a draft and committed only once every envelope is built.
 */
import type { Crypto, Ed25519Keypair } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import type { GroupHookResult, GroupHooks, GroupMember, GroupState, TurnTimeoutReason } from '../hooks/types.js';
import { compareCodePoints } from '../crypto/unicode.js';
import { GroupLeaderError, type GroupConfig, type LeaderErrorCode } from './config.js';
import { boundedDelta, copyJson, diffAt, jsonEqual, makeDelta, type DeltaMemo, type DeltaOp, type EqualityHint } from './delta.js';
import { GroupError } from './errors.js';
import {
  canonicalPart,
  checkGroupJson,
  MAX_GROUP_JSON_DEPTH,
  sortedKeys,
  groupCanonical,
  groupCanonicalBytes,
  groupJsonHash,
  objectPart,
  freshPart,
  headHashes,
  objectParts,
  sharedMembers,
  textHashes,
  utf8ByteLength,
  type CanonicalPart,
  type WrittenObject,
  type GroupJson,
  type GroupObject,
  type TextCache,
} from './json.js';
import {
  CHECKPOINT_DELTA_MARGIN,
  CHECKPOINT_STATE_FIELDS,
  GROUP_WIRE_VERSION,
  PRIVATE_PAYLOAD_FIELDS,
  VIEW_DELTA_MARGIN,
  ZERO_HASH,
  checkpointCertificate,
  checkpointForcedFull,
  checkpointState,
  frameCore,
  isHash,
  normalizeMembers,
  envelopeOf,
  leaderSignaturePayload,
  signedCheckpointOf,
  unsignedCheckpoint,
  validateCheckpointState,
  verifyCheckpoint,
  type Checkpoint,
  type CheckpointState,
  type Envelope,
  type FrameCore,
  type FrameKind,
  type PrivatePayload,
} from './wire.js';

export type { FrameKind, TurnTimeoutReason };
export { GroupLeaderError, groupConfigFromSpec, type GroupConfig, type LeaderErrorCode } from './config.js';

export interface GroupInput {
  actor_public_key: string;
  client_seq: unknown;
  action: unknown;
}

export type Receipt =
  | { status: 'accepted'; client_seq: number; authority_seq: number; frame_hash: string; completed: boolean }
  | { status: 'duplicate'; client_seq: number; authority_seq: number };

/** Envelopes keyed by the viewer's lowercase public key. */
export type Envelopes = Record<string, Envelope>;

export interface LeaderOptions {
  crypto: Crypto;
  hooks: GroupHooks;
  config: GroupConfig;
  groupId: string;
  /** The leader's Ed25519 seed (32 bytes as hex); its public key is the leader_public_key. */
  leaderSeed: string;
  leaderEpoch: number;
  membershipVersion: number;
  /** Member records (seat 0–31, unique keys and seats); for a failover, the checkpoint's when omitted. */
  members?: unknown[];
  /**
   * How long (ms on the driver's clock) the group waits on a member whose turn it is before the leader
   * resolves the turn by the protocol's proto_group_timeout_action; 0 or absent: turns are never timed.
   */
  turnTimeoutMs?: number;
  /** The driver's clock (ms) as the leader starts: the first turns are timed from here. */
  now?: number;
}

/** A turn the leader resolved in a member's place: the frame it made (`envelopes`, like any other). */
export interface TurnTimeout {
  public_key: string;
  seat: number;
  reason: TurnTimeoutReason;
  action: Record<string, unknown>;
  envelopes: Envelopes;
}

/** A timed turn the protocol could not resolve (its timeout action was refused); it is not retried until the state moves. */
export interface TurnTimeoutFailure {
  public_key: string;
  code: LeaderErrorCode;
  message: string;
}

/** What one firing of the turn timer did, in order. */
export interface TurnTimerResult {
  resolved: TurnTimeout[];
  failed: TurnTimeoutFailure[];
}

/**
 * The turn deadline a protocol declares: its `turn_timeout_seconds` option when its spec has that
 * parameter, else its spec's decision.timeout_seconds; undefined when it declares none (the driver's
 * own default applies).
 */
export function declaredTurnTimeoutMs(spec: unknown, options: Record<string, unknown>): number | undefined {
  const s = (typeof spec === 'object' && spec !== null ? spec : {}) as Record<string, unknown>;
  const params = s['parameters'];
  const option = options['turn_timeout_seconds'];
  if (typeof params === 'object' && params !== null && Object.hasOwn(params, 'turn_timeout_seconds') && isInt(option) && option >= 0) return option * 1000;
  const decision = s['decision'];
  const declared = typeof decision === 'object' && decision !== null ? (decision as Record<string, unknown>)['timeout_seconds'] : undefined;
  return isInt(declared) && declared > 0 ? declared * 1000 : undefined;
}

/** At most this many turns are resolved by one timer firing; the rest wait for the next (the driver fires again at once). */
const MAX_TIMEOUTS_PER_FIRING = 64;

/** A turn the group waits on: since when (its start, or the member's last own action), and what the protocol would do in its place. */
interface AwaitedTurn {
  since: number;
  reason: TurnTimeoutReason;
  action?: Record<string, unknown>;
  /** The timeout hook threw for this member: reported at the deadline as HOOK_REJECTED. */
  error?: string;
}

/**
 * The leader's turn clock. It is not part of the signed state: presence is what this leader sees of
 * its connections, and a successor starts its own clock (every turn it opens is timed from its start).
 */
interface TurnClock {
  now: number;
  awaited: Map<string, AwaitedTurn>;
  absent: Set<string>;
  /**
   * Absent members whose turn has already been timed out once: their later turns are resolved at once
   * (no second full wait per turn while they stay away), until they come back.
   */
  sittingOut: Set<string>;
  /** Turns whose timeout action the hooks refused: not retried until the state moves. */
  stuck: Set<string>;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

const fail = (code: LeaderErrorCode, message: string): never => {
  throw new GroupLeaderError(code, message);
};

/** Everything a step changes; a step works on a copy and commits it whole. */
interface LeaderState {
  members: GroupMember[];
  membershipVersion: number;
  state: GroupState;
  completed: boolean;
  outcome: string | null;
  lastClientSeq: Record<string, number>;
  seq: number;
  previousHash: string;
  lastViews: Record<string, GroupObject>;
  lastCore: FrameCore | null;
  lastEvents: GroupJson[];
  checkpointState: CheckpointState | null;
  checkpoint: Checkpoint | null;
  lastEnvelopes: Envelopes;
}

interface Normalized {
  state: GroupState;
  events: GroupJson[];
  direct: Record<string, GroupJson>;
  completed: boolean;
  outcome: string | null;
}

const clone = <T>(v: T): T => structuredClone(v);

/**
 * The copy of a checked state (or action) that a hook may change: what structuredClone makes of it,
 * made directly (several times faster for plain objects and arrays). A value met twice is copied once,
 * as structuredClone does; anything but a plain object or array is left to structuredClone.
 */
function copyState<T>(v: T): T {
  return copyValue(v, new Map()) as T;
}

function copyValue(v: unknown, seen: Map<object, unknown>): unknown {
  if (typeof v !== 'object' || v === null) return v;
  const known = seen.get(v);
  if (known !== undefined) return known;
  const proto = Object.getPrototypeOf(v);
  if (proto === Array.prototype) {
    const a = v as unknown[];
    const out = new Array<unknown>(a.length);
    seen.set(v, out);
    for (let i = 0; i < a.length; i++) out[i] = copyValue(a[i], seen);
    return out;
  }
  if (proto === Object.prototype || proto === null) {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    seen.set(v, out);
    for (const k of Object.keys(o)) {
      const x = copyValue(o[k], seen);
      // Assignment would set the prototype for this one key.
      if (k === '__proto__') Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
      else out[k] = x;
    }
    return out;
  }
  const out = structuredClone(v);
  seen.set(v, out);
  return out;
}

/**
 * What the leader has committed (state, views, checkpoints, envelopes) is frozen, so it can be shared
 * between envelopes, steps and callers without copies; hooks that change state get their own copy.
 */
function freeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    if (Array.isArray(v)) {
      // By index: Object.keys would make a string of each.
      for (let i = 0; i < v.length; i++) freeze(v[i]);
    } else for (const k of Object.keys(v)) freeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

/**
 * `next` (checked) with each member or item that equals the one at the same place in `prev` (the
 * last state: frozen, its texts known) replaced by `prev`'s; `prev` itself when all of it is equal.
 * Hooks change a copy of the state, so without this every frame's state would be new objects
 * throughout, written, compared and frozen anew. Equal: the same keys in the same order and the same
 * values (Object.is), so that a hook reading its state later sees exactly what it would have seen. An
 * object is changed only where it holds a plain writable member (not frozen, no setter).
 */
function shareUnchanged(next: unknown, prev: unknown, depth: number): unknown {
  if (Object.is(next, prev)) return prev;
  if (typeof next !== 'object' || next === null || typeof prev !== 'object' || prev === null || depth > MAX_GROUP_JSON_DEPTH) return next;
  const proto = Object.getPrototypeOf(next);
  if (proto !== Object.getPrototypeOf(prev) || (proto !== Object.prototype && proto !== Array.prototype && proto !== null)) return next;
  const n = next as Record<string, unknown>;
  const p = prev as Record<string, unknown>;
  let equal: boolean;
  if (proto === Array.prototype) {
    const a = n as unknown as unknown[];
    const b = p as unknown as unknown[];
    equal = a.length === b.length;
    const common = Math.min(a.length, b.length);
    for (let i = 0; i < common; i++) if (!share(a, i, b[i], depth)) equal = false;
  } else {
    const keys = Object.keys(n);
    const prevKeys = Object.keys(p);
    equal = keys.length === prevKeys.length;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (equal && prevKeys[i] !== k) equal = false;
      if (!Object.hasOwn(p, k) || !share(n, k, p[k], depth)) equal = false;
    }
  }
  return equal ? prev : next;
}

/** Shares `next[k]` with `prev` where equal; whether it is equal. */
function share(next: Record<string, unknown> | unknown[], k: string | number, prev: unknown, depth: number): boolean {
  const value = (next as Record<string, unknown>)[k];
  const kept = shareUnchanged(value, prev, depth + 1);
  if (kept !== prev) return false;
  if (kept !== value) {
    const desc = Object.getOwnPropertyDescriptor(next, k);
    if (desc !== undefined && desc.writable === true) (next as Record<string, unknown>)[k] = kept;
  }
  return true;
}

/** The draft shares the member records until a step that changes them takes its own (membersOf). */
function draftOf(s: LeaderState): LeaderState {
  return { ...s, lastClientSeq: { ...s.lastClientSeq } };
}

/** The draft's own member records, to change. A record holds strings and a number only, so a shallow copy is a full one. */
function membersOf(d: LeaderState): GroupMember[] {
  d.members = d.members.map((m) => ({ ...m }));
  return d.members;
}

export class GroupLeader {
  readonly groupId: string;
  readonly leaderPublicKey: string;
  readonly leaderEpoch: number;
  readonly config: GroupConfig;
  private readonly crypto: Crypto;
  private readonly hooks: GroupHooks;
  private readonly key: Ed25519Keypair;
  /** Texts of the frozen values the leader has written (its states, and the views sharing them). */
  private readonly texts: TextCache = new WeakMap();
  /** Two values whose texts are known are equal JSON exactly when the texts are equal. */
  private readonly same: EqualityHint = (a, b) => {
    // Views, member by member: their members' texts are mostly the same strings, which compare at once.
    const p = this.written.get(a);
    const q = p && this.written.get(b);
    if (q && p!.keys.length > 0 && q.keys.length > 0) return sameMembers(p!, q);
    const x = this.texts.get(a);
    const y = x && this.texts.get(b);
    return y ? x!.text === y.text : undefined;
  };
  /** The views written member by member. */
  private readonly written = new WeakMap<object, WrittenObject>();
  private s: LeaderState;
  private readonly turnTimeoutMs: number;
  private turns: TurnClock;

  private constructor(o: LeaderOptions, members: GroupMember[]) {
    this.crypto = o.crypto;
    this.hooks = o.hooks;
    this.config = o.config;
    this.groupId = o.groupId;
    this.key = o.crypto.ed25519Keypair(fromHex(o.leaderSeed));
    this.leaderPublicKey = toHex(this.key.publicKey);
    this.leaderEpoch = o.leaderEpoch;
    const t = o.turnTimeoutMs ?? 0;
    if (!isInt(t) || t < 0) fail('GROUP_CONFIG', 'turnTimeoutMs must be a non-negative integer');
    this.turnTimeoutMs = t;
    this.turns = { now: o.now ?? 0, awaited: new Map(), absent: new Set(), sittingOut: new Set(), stuck: new Set() };
    this.s = {
      members,
      membershipVersion: o.membershipVersion,
      state: {},
      completed: false,
      outcome: null,
      lastClientSeq: {},
      seq: 0,
      previousHash: ZERO_HASH,
      lastViews: {},
      lastCore: null,
      lastEvents: [],
      checkpointState: null,
      checkpoint: null,
      lastEnvelopes: {},
    };
  }

  /** A new group's first leader: the initial state and its `snapshot` frame at seq 0. */
  static start(o: LeaderOptions): GroupLeader {
    const leader = new GroupLeader(o, normalizeMembersOrFail(o.members ?? []));
    return leader.orDispose(() => leader.first());
  }

  private first(): GroupLeader {
    const min = this.config.min_participants;
    if (this.s.members.filter((m) => m.status === 'active').length < min) fail('TOO_FEW_MEMBERS', `group needs at least ${min} active members to start`);
    if (this.s.members.length > this.config.max_participants) fail('GROUP_FULL', 'group is full');
    const d = draftOf(this.s);
    const initial = this.call(() => this.hooks.proto_group_initial_state(clone(d.members)));
    d.state = freeze(this.objectOrFail(initial, 'group authority state must be an object'));
    this.commit(d, this.build(d, { events: [], direct: {}, kind: 'snapshot', advance: false }));
    return this;
  }

  /**
   * A new epoch's leader from the latest signed checkpoint (failover): the checkpoint must verify
   * under its own leader's key; the frame that opens the epoch (`epoch_start`) chains from its frame.
   * Members that joined or left since the checkpoint are passed to the hooks first.
   */
  static fromCheckpoint(o: LeaderOptions, raw: unknown): GroupLeader {
    const cp = verifyCheckpointOrFail(o.crypto, raw, o.groupId);
    if (!(o.leaderEpoch > cp.leader_epoch)) fail('CHECKPOINT_INVALID', 'new leader epoch must increase');
    const leader = new GroupLeader(o, normalizeMembersOrFail(o.members ?? (cp.members as unknown[])));
    return leader.orDispose(() => leader.resume(o.leaderEpoch, cp));
  }

  private resume(epoch: number, cp: Checkpoint): GroupLeader {
    if (this.member(this.leaderPublicKey)?.status !== 'active') fail('NOT_ACTIVE_MEMBER', 'new leader is not an active group member');
    const d = draftOf(this.s);
    d.seq = cp.seq;
    d.previousHash = cp.frame_hash;
    for (const [k, v] of Object.entries(cp.last_client_seq)) if (isInt(v) && v >= 0) d.lastClientSeq[k] = v;
    d.completed = cp.completed === true;
    d.outcome = typeof cp.outcome === 'string' ? cp.outcome : null;
    const restore = this.hooks.proto_group_restore?.bind(this.hooks) ?? ((state: GroupState) => state);
    const restored = this.call(() => restore(clone(cp.protocol_state as GroupState), clone(d.members), epoch));
    d.state = freeze(this.objectOrFail(restored, 'proto_group_restore must return an object'));
    // As the reference does: membership changes since the checkpoint reach the state, but the frame's
    // events are the leader change's alone; and a member whose status in the checkpoint is not
    // "active" is passed to proto_group_member_joined again. Both shape the epoch_start frame, so a
    // successor of either implementation must do the same for the frames to agree.
    this.reconcile(d, cp.members as unknown as GroupMember[]);
    const onChange = this.hooks.proto_group_on_leader_changed?.bind(this.hooks);
    const changed = this.normalize(
      onChange
        ? this.call(() => onChange(copyState(d.state), cp.leader_public_key, this.leaderPublicKey))
        : { state: d.state, events: [{ kind: 'leader_changed', old_leader: cp.leader_public_key, new_leader: this.leaderPublicKey }] },
      d.state,
    );
    d.state = changed.state;
    d.completed = changed.completed;
    d.outcome = changed.outcome;
    this.commit(d, this.build(d, { events: changed.events, direct: changed.direct, kind: 'epoch_start', advance: true }));
    return this;
  }

  get seq(): number {
    return this.s.seq;
  }
  get frameHash(): string {
    return this.s.previousHash;
  }
  get membershipVersion(): number {
    return this.s.membershipVersion;
  }
  get completed(): boolean {
    return this.s.completed;
  }
  get outcome(): string | null {
    return this.s.outcome;
  }
  get members(): GroupMember[] {
    return clone(this.s.members);
  }
  /** The signed checkpoint of the latest frame (what a successor restores from); read-only. */
  get checkpoint(): Checkpoint {
    return this.s.checkpoint as Checkpoint;
  }
  /** The envelopes of the latest frame; read-only. */
  get lastEnvelopes(): Envelopes {
    return this.s.lastEnvelopes;
  }

  /** Wipes the leader's signing key; the leader cannot make frames afterwards. */
  dispose(): void {
    this.key.dispose();
  }

  /** An independent copy (same hooks object): to try inputs without touching this leader. */
  fork(): GroupLeader {
    const copy = Object.create(GroupLeader.prototype) as GroupLeader;
    Object.assign(copy, this);
    copy.s = clone(this.s);
    copy.turns = clone(this.turns);
    return copy;
  }

  member(publicKey: string): GroupMember | undefined {
    const pk = publicKey.toLowerCase();
    return this.s.members.find((m) => m.public_key === pk);
  }

  /**
   * One member action. A `client_seq` already accepted answers a `duplicate` receipt (and the last
   * envelopes, for a resend); a gap, an oversize action or a hook's refusal is a GroupLeaderError.
   */
  applyInput(input: GroupInput, now?: number): { envelopes: Envelopes; receipt: Receipt } {
    const s = this.s;
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return fail('INPUT_INVALID', 'group input must be an object');
    if (s.completed) fail('GROUP_COMPLETED', 'group is already completed');
    const actor = typeof input.actor_public_key === 'string' ? this.member(input.actor_public_key) : undefined;
    if (!actor || actor.status !== 'active') return fail('NOT_ACTIVE_MEMBER', 'actor is not an active group member');
    const clientSeq = input.client_seq;
    if (!isInt(clientSeq) || clientSeq < 1) return fail('CLIENT_SEQ_INVALID', 'client_seq must be a positive integer');
    const previous = s.lastClientSeq[actor.public_key] ?? 0;
    if (clientSeq <= previous) return { envelopes: s.lastEnvelopes, receipt: { status: 'duplicate', client_seq: clientSeq, authority_seq: s.seq } };
    if (clientSeq !== previous + 1) fail('CLIENT_SEQ_GAP', `client_seq gap: expected ${previous + 1}, got ${clientSeq}`);
    const action = input.action;
    if (typeof action !== 'object' || action === null || Array.isArray(action)) return fail('ACTION_NOT_OBJECT', 'group action must be an object');
    let size: number;
    try {
      size = groupCanonicalBytes(action).length;
    } catch (e) {
      if (e instanceof GroupError) return fail('ACTION_INVALID', e.message);
      throw e;
    }
    if (size > this.config.max_action_bytes) fail('ACTION_TOO_LARGE', 'group action exceeds max_action_bytes');

    const d = draftOf(s);
    const r = this.normalize(
      this.runHook(() => this.hooks.proto_group_handle(copyState(d.state), { ...actor }, copyState(action as Record<string, unknown>))),
      d.state,
    );
    d.state = r.state;
    d.completed = r.completed;
    d.outcome = r.outcome;
    d.lastClientSeq[actor.public_key] = clientSeq;
    const built = this.build(d, { events: r.events, direct: r.direct, kind: 'frame', advance: true });
    // Only a frame that is made moves the clock (a refusal leaves the leader as it was). The actor
    // spoke: its deadline, if the group still waits on it, starts again from now.
    this.tick(now);
    const envelopes = this.commit(d, built, actor.public_key);
    return {
      envelopes,
      receipt: { status: 'accepted', client_seq: clientSeq, authority_seq: d.seq, frame_hash: d.previousHash, completed: d.completed },
    };
  }

  /** An admitted member joins (or an absent one returns to `active`): one `membership` frame. */
  addMember(raw: unknown, membershipVersion: number, now?: number): Envelopes {
    const [member] = normalizeMembersOrFail([raw]) as [GroupMember];
    const d = draftOf(this.s);
    membersOf(d);
    const existing = d.members.find((m) => m.public_key === member.public_key);
    if (!existing) {
      // A member already on the roll may always come back (recovery); a new one only if the spec allows late join.
      if (!this.config.allow_late_join) fail('LATE_JOIN_CLOSED', 'group does not allow late join');
      if (d.members.length >= this.config.max_participants) fail('GROUP_FULL', 'group is full');
      if (d.members.some((m) => m.seat === member.seat)) fail('SEAT_TAKEN', 'member seat is already occupied');
      d.members.push(member);
      d.members.sort((a, b) => a.seat - b.seat);
    } else {
      if (existing.seat !== member.seat && d.members.some((m) => m !== existing && m.seat === member.seat))
        fail('SEAT_TAKEN', 'member seat is already occupied');
      Object.assign(existing, member, { status: 'active' });
      d.members.sort((a, b) => a.seat - b.seat);
    }
    d.membershipVersion = membershipVersion;
    const r = this.normalize(
      this.runHook(() => this.hooks.proto_group_member_joined(copyState(d.state), clone(member))),
      d.state,
    );
    d.state = r.state;
    const built = this.build(d, { events: r.events, direct: r.direct, kind: 'membership', advance: true });
    this.tick(now);
    const envelopes = this.commit(d, built, member.public_key);
    // A member the group lists again is here: it plays its own turns again.
    this.markPresent(member.public_key);
    return envelopes;
  }

  /** A member leaves (its status becomes `left`; it gets no more envelopes): one `membership` frame. */
  removeMember(publicKey: string, membershipVersion: number, reason: string, now?: number): Envelopes {
    const d = draftOf(this.s);
    const member = membersOf(d).find((m) => m.public_key === publicKey.toLowerCase());
    if (!member) return fail('UNKNOWN_MEMBER', 'unknown group member');
    member.status = 'left';
    d.membershipVersion = membershipVersion;
    const r = this.normalize(
      this.runHook(() => this.hooks.proto_group_member_left(copyState(d.state), clone(member), reason)),
      d.state,
    );
    d.state = r.state;
    d.completed = r.completed;
    d.outcome = r.outcome;
    const built = this.build(d, { events: r.events, direct: r.direct, kind: 'membership', advance: true });
    this.tick(now);
    return this.commit(d, built);
  }

  /** Self-contained envelopes of the current frame (full view, full checkpoint) for every active member. */
  bootstrapEnvelopes(): Envelopes {
    return this.bootstraps(this.s.members.filter((m) => m.status === 'active'));
  }

  /** One member's bootstrap (a reconnect, or a joiner's first state), or undefined for a non-member. */
  bootstrapEnvelope(publicKey: string): Envelope | undefined {
    const member = this.member(publicKey);
    return member?.status === 'active' ? this.bootstraps([member])[member.public_key] : undefined;
  }

  private bootstraps(members: GroupMember[]): Envelopes {
    const s = this.s;
    if (!s.lastCore || !s.checkpoint) return {};
    const checkpoint = { value: s.checkpoint, part: canonicalPart(s.checkpoint, this.texts) };
    return this.sealed({ core: s.lastCore, events: s.lastEvents, checkpoint, checkpointDelta: undefined }, s.state, members, undefined, {}).envelopes;
  }

  // --- turn deadlines ---------------------------------------------------------------------------
  //
  // The leader holds no clock: the driver passes its own time (`now`, ms) with the inputs and fires the
  // turn timer at turnDeadline(). A turn is timed from when the group began waiting on the member (or
  // from the member's last own action), so a member that is slow but present is never cut short by
  // frames others make in between.

  /** The driver's clock moves on (never back: a late or missing `now` keeps the last one). */
  private tick(now?: number): void {
    if (now !== undefined && Number.isFinite(now) && now > this.turns.now) this.turns.now = now;
  }

  /** A member's connection is gone (the driver saw it close): once its turn's deadline passes, the turn is resolved as `absent`. */
  memberAbsent(publicKey: string, now?: number): void {
    this.tick(now);
    const pk = publicKey.toLowerCase();
    if (this.turns.absent.has(pk)) return;
    this.turns.absent.add(pk);
    this.refreshTurns();
  }

  /** A member is connected again (a resume): it plays its own turns again, each with a full deadline from now. */
  memberPresent(publicKey: string, now?: number): void {
    this.tick(now);
    this.markPresent(publicKey.toLowerCase());
  }

  private markPresent(pk: string): void {
    const t = this.turns;
    const wasAbsent = t.absent.delete(pk);
    t.sittingOut.delete(pk);
    if (!wasAbsent) return;
    t.stuck.delete(pk);
    this.refreshTurns(pk);
  }

  /** The members the group waits on now, each with its deadline on the driver's clock (empty when turns are not timed). */
  get awaitedTurns(): { public_key: string; deadline: number; reason: TurnTimeoutReason }[] {
    return [...this.turns.awaited].map(([pk, turn]) => ({ public_key: pk, deadline: this.deadlineOf(pk, turn), reason: turn.reason }));
  }

  /** When the driver must fire the turn timer next (its clock, ms), or null when no turn is timed. */
  turnDeadline(): number | null {
    let next: number | null = null;
    for (const [pk, turn] of this.turns.awaited) {
      if (this.turns.stuck.has(pk)) continue;
      const at = this.deadlineOf(pk, turn);
      if (next === null || at < next) next = at;
    }
    return next;
  }

  /**
   * The turn timer fired at `now`: every turn whose deadline has passed is resolved, earliest first (ties
   * in seat order), by the protocol's timeout action taken in the member's place through
   * proto_group_handle, each as one ordinary frame that every member verifies like any other; its events
   * open with `{kind: "turn_timeout", public_key, seat, reason}`. The member's client_seq is not touched:
   * an action it sends late is judged by the hooks against the new state. An absent member whose turn was
   * resolved sits out: its later turns are resolved at once until it is present again.
   */
  onTurnTimer(now: number): TurnTimerResult {
    this.tick(now);
    const out: TurnTimerResult = { resolved: [], failed: [] };
    for (let i = 0; i < MAX_TIMEOUTS_PER_FIRING && !this.s.completed; i++) {
      const due = this.dueTurn();
      if (!due) break;
      try {
        out.resolved.push(this.resolveTurn(due.pk, due.turn));
      } catch (e) {
        if (!(e instanceof GroupLeaderError)) throw e;
        this.turns.stuck.add(due.pk);
        out.failed.push({ public_key: due.pk, code: e.code, message: e.message });
      }
    }
    return out;
  }

  private deadlineOf(pk: string, turn: AwaitedTurn): number {
    return turn.reason === 'absent' && this.turns.sittingOut.has(pk) ? turn.since : turn.since + this.turnTimeoutMs;
  }

  private dueTurn(): { pk: string; turn: AwaitedTurn } | undefined {
    let best: { pk: string; turn: AwaitedTurn; at: number; seat: number } | undefined;
    for (const [pk, turn] of this.turns.awaited) {
      if (this.turns.stuck.has(pk)) continue;
      const at = this.deadlineOf(pk, turn);
      if (at > this.turns.now) continue;
      const seat = this.member(pk)?.seat ?? 0;
      if (!best || at < best.at || (at === best.at && seat < best.seat)) best = { pk, turn, at, seat };
    }
    return best;
  }

  private resolveTurn(pk: string, turn: AwaitedTurn): TurnTimeout {
    const member = this.member(pk);
    if (!member || member.status !== 'active') return fail('NOT_ACTIVE_MEMBER', 'actor is not an active group member');
    if (turn.error !== undefined) return fail('HOOK_REJECTED', turn.error);
    const action = turn.action as Record<string, unknown>;
    const d = draftOf(this.s);
    const r = this.normalize(
      this.runHook(() => this.hooks.proto_group_handle(copyState(d.state), clone(member), clone(action))),
      d.state,
    );
    d.state = r.state;
    d.completed = r.completed;
    d.outcome = r.outcome;
    // The leader's own event first: every member sees why a frame came without a move of that member's.
    const events: GroupJson[] = [{ kind: 'turn_timeout', public_key: pk, seat: member.seat, reason: turn.reason }, ...r.events];
    const envelopes = this.commit(d, this.build(d, { events, direct: r.direct, kind: 'frame', advance: true }), pk);
    if (turn.reason === 'absent') this.turns.sittingOut.add(pk);
    return { public_key: pk, seat: member.seat, reason: turn.reason, action, envelopes };
  }

  /**
   * Which members the group waits on, asked of the protocol after every change (state or presence). A
   * turn keeps its start while the member stays awaited, and starts again when the member itself acted
   * (`acted`) or came back. A hook that throws is recorded as the turn's failure, reported when its
   * deadline passes rather than hidden.
   */
  private refreshTurns(acted?: string): void {
    const t = this.turns;
    const hook = this.hooks.proto_group_timeout_action?.bind(this.hooks);
    if (!this.turnTimeoutMs || !hook || this.s.completed) {
      t.awaited.clear();
      return;
    }
    const next = new Map<string, AwaitedTurn>();
    for (const m of this.s.members) {
      if (m.status !== 'active') continue;
      const pk = m.public_key;
      const reason: TurnTimeoutReason = t.absent.has(pk) ? 'absent' : 'silent';
      let action: unknown;
      let error: string | undefined;
      try {
        action = hook(this.s.state, { ...m }, reason);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      if (error === undefined && (typeof action !== 'object' || action === null || Array.isArray(action))) continue;
      const before = t.awaited.get(pk);
      const since = before === undefined || pk === acted ? t.now : before.since;
      next.set(pk, error === undefined ? { since, reason, action: action as Record<string, unknown> } : { since, reason, error });
    }
    t.awaited = next;
  }

  // ---------------------------------------------------------------------------------------------

  /** Makes a draft the leader's state; the envelopes returned (and kept for resends) are read-only. `acted`: whose own move this was. */
  private commit(d: LeaderState, envelopes: Envelopes, acted?: string): Envelopes {
    d.lastEnvelopes = freeze(envelopes);
    this.s = d;
    // The state moved: a turn the hooks could not resolve before may be resolvable now.
    this.turns.stuck.clear();
    this.refreshTurns(acted);
    return d.lastEnvelopes;
  }

  private runHook(f: () => GroupHookResult): GroupHookResult {
    return this.call(f);
  }

  /** Runs a hook: what it throws is its refusal (HOOK_REJECTED with its message). */
  private call<T>(f: () => T): T {
    try {
      return f();
    } catch (e) {
      if (e instanceof GroupLeaderError) throw e;
      return fail('HOOK_REJECTED', e instanceof Error ? e.message : String(e));
    }
  }

  /** A leader that failed to start must not keep its signing key. */
  private orDispose(f: () => GroupLeader): GroupLeader {
    try {
      return f();
    } catch (e) {
      this.key.dispose();
      throw e;
    }
  }

  private objectOrFail(v: unknown, message: string): GroupState {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail('HOOK_RESULT', message);
    this.checkJson(v);
    return v as GroupState;
  }

  private checkJson(v: unknown): void {
    try {
      checkGroupJson(v);
    } catch (e) {
      if (e instanceof GroupError) fail('HOOK_RESULT', e.message);
      throw e;
    }
  }

  /** A hook's result, checked and frozen; what its state keeps of `before` unchanged is `before`'s own (shareUnchanged). */
  private normalize(result: unknown, before: GroupState): Normalized {
    if (typeof result !== 'object' || result === null || Array.isArray(result)) return fail('HOOK_RESULT', 'group hook result must be an object');
    const r = result as Record<string, unknown>;
    const state = r['state'];
    const events = r['events'] ?? [];
    const direct = r['direct'] ?? {};
    const completed = r['completed'] ?? false;
    const outcome = r['outcome'] ?? null;
    if (typeof state !== 'object' || state === null || Array.isArray(state)) fail('HOOK_RESULT', 'group hook result.state must be an object');
    if (!Array.isArray(events)) return fail('HOOK_RESULT', 'group hook result.events must be an array');
    if (events.length > this.config.max_events_per_action) fail('HOOK_RESULT', 'group hook emitted too many events');
    if (typeof direct !== 'object' || direct === null || Array.isArray(direct)) fail('HOOK_RESULT', 'group hook result.direct must be an object');
    if (typeof completed !== 'boolean') fail('HOOK_RESULT', 'group hook result.completed must be boolean');
    if (outcome !== null && typeof outcome !== 'string') fail('HOOK_RESULT', 'group hook result.outcome must be string or null');
    // What the state shares with `before` was checked as part of it; the rest is checked as the whole
    // would be (the same first fault), by the writer, which knows the shared parts' texts.
    const kept = shareUnchanged(state, before, 0);
    let written: ReturnType<typeof freshPart>;
    try {
      written = freshPart(kept, this.texts);
    } catch (e) {
      if (e instanceof GroupError) return fail('HOOK_RESULT', e.message);
      throw e;
    }
    this.checkJson(events);
    this.checkJson(direct);
    // Frozen, so that nothing (a hook keeping a reference, included) changes what is about to be signed.
    const normalized = freeze({
      state: kept as GroupState,
      events: events as GroupJson[],
      direct: direct as Record<string, GroupJson>,
      completed: completed as boolean,
      outcome: outcome as string | null,
    });
    // Written, then frozen with nothing run in between: the texts are the frozen state's.
    for (const [value, part] of written.fresh) this.texts.set(value, part);
    return normalized;
  }

  private reconcile(d: LeaderState, previousRaw: GroupMember[]): Normalized[] {
    const previous = new Map(normalizeMembersOrFail(previousRaw).map((m) => [m.public_key, m]));
    const current = new Map(d.members.map((m) => [m.public_key, m]));
    const results: Normalized[] = [];
    for (const [pk, old] of previous) {
      if (old.status === 'active' && !current.has(pk)) {
        const r = this.normalize(
          this.runHook(() => this.hooks.proto_group_member_left(copyState(d.state), clone(old), 'membership_changed_during_failover')),
          d.state,
        );
        d.state = r.state;
        d.completed = r.completed;
        d.outcome = r.outcome;
        results.push(r);
      }
    }
    for (const [pk, m] of current) {
      const old = previous.get(pk);
      if (!old || old.status !== 'active') {
        const r = this.normalize(
          this.runHook(() => this.hooks.proto_group_member_joined(copyState(d.state), clone(m))),
          d.state,
        );
        d.state = r.state;
        d.completed = r.completed;
        d.outcome = r.outcome;
        results.push(r);
      }
    }
    return results;
  }

  /** The checkpoint state, with each field written once (its texts make the recovery state hash and the checkpoint's). */
  private checkpointStateOf(d: LeaderState, statePart: CanonicalPart): { cs: CheckpointState; parts: Record<string, CanonicalPart>; part: CanonicalPart } {
    const snapshot = this.hooks.proto_group_recovery_snapshot ? this.runSnapshot(d.state) : d.state;
    // Unchanged members are the last checkpoint's (frozen, so their text is written once).
    const lastMembers = d.checkpointState?.members;
    const cs: CheckpointState = {
      members: lastMembers !== undefined && jsonEqual(lastMembers, d.members) ? lastMembers : clone(d.members),
      last_client_seq: { ...d.lastClientSeq },
      recovery_mode: this.config.recovery_mode,
      protocol_state: snapshot as GroupObject,
      completed: d.completed,
      outcome: d.outcome,
    };
    // Field by field in the object's order, so the first fault is the one a check of cs would find.
    const parts: Record<string, CanonicalPart> = {};
    let part: CanonicalPart;
    try {
      for (const k of CHECKPOINT_STATE_FIELDS) {
        // The members' sequence numbers are a new object every frame, of the same keys: written member by member.
        if (k === 'protocol_state' && snapshot === d.state) parts[k] = statePart;
        else parts[k] = k === 'last_client_seq' ? objectParts(cs[k], this.texts).part : canonicalPart(cs[k], this.texts);
      }
      part = objectPart(parts);
    } catch (e) {
      if (e instanceof GroupError) return fail('HOOK_RESULT', e.message);
      throw e;
    }
    return { cs: freeze(cs), parts, part };
  }

  private runSnapshot(state: GroupState): GroupState {
    const snapshot = this.hooks.proto_group_recovery_snapshot?.bind(this.hooks) ?? ((s: GroupState) => s);
    const snap = this.call(() => snapshot(state));
    // The state itself is checked and frozen already (as the hooks' result it came in).
    return snap === state ? state : freeze(this.objectOrFail(snap, 'proto_group_recovery_snapshot must return an object'));
  }

  /** The signed checkpoint, its canonical text and that text's length in UTF-8 bytes, put together from the state's parts. */
  private signedCheckpoint(
    d: LeaderState,
    cs: CheckpointState,
    csParts: Record<string, CanonicalPart>,
    frameHash: string,
  ): Written<Checkpoint> & { bytes: number } {
    const meta = {
      group_id: this.groupId,
      leader_public_key: this.leaderPublicKey,
      leader_epoch: this.leaderEpoch,
      seq: d.seq,
      frame_hash: frameHash,
      membership_version: d.membershipVersion,
    };
    const unsigned = unsignedCheckpoint(meta, cs);
    const parts: Record<string, CanonicalPart> = { ...csParts };
    for (const k of Object.keys(unsigned)) parts[k] ??= canonicalPart((unsigned as unknown as Record<string, unknown>)[k], this.texts);
    const unsignedText = objectPart(parts, UNSIGNED_CHECKPOINT_ORDER).text;
    const {
      hashes: [checkpointHash],
      lengths: [unsignedBytes],
    } = textHashes(this.crypto, [unsignedText]);
    const signature = toHex(this.key.sign(utf8(checkpointCertificate({ ...meta, checkpoint_hash: checkpointHash }))));
    parts['checkpoint_hash'] = canonicalPart(checkpointHash);
    parts['checkpoint_signature'] = canonicalPart(signature);
    const part = objectPart(parts, CHECKPOINT_ORDER);
    // The two members added are ASCII: as many bytes as UTF-16 units.
    return { value: freeze(signedCheckpointOf(unsigned, checkpointHash!, signature)), part, bytes: unsignedBytes! + part.text.length - unsignedText.length };
  }

  /**
   * A member's view from the hooks, checked and written member by member (the members it shares with
   * the other views are found by their texts), then frozen; its members' texts are kept for the next
   * frame's delta to compare.
   */
  private writtenView(state: GroupState, member: GroupMember): WrittenView {
    let v: unknown;
    try {
      // A member record holds strings and a number only, so a shallow copy is a full one.
      v = this.hooks.proto_group_view(state, { ...member });
    } catch (e) {
      return fail('HOOK_REJECTED', e instanceof Error ? e.message : String(e));
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail('HOOK_RESULT', 'proto_group_view must return an object');
    let written: WrittenObject;
    try {
      written = objectParts(v as object, this.texts);
    } catch (e) {
      if (e instanceof GroupError) return fail('HOOK_RESULT', e.message);
      throw e;
    }
    const value = freeze(v as GroupObject);
    // Written and then frozen with nothing run in between: the texts are the frozen view's.
    this.written.set(value, written);
    return { value, part: written.part, written };
  }

  /**
   * The envelopes of a frame for these members (in their order), and the views they carry. The views'
   * texts are hashed together, as are the payloads' (texts that share the state's or the checkpoint's
   * text); in between, member by member, the view's delta from `viewsBefore` when smaller and the
   * payload's text. Then one signature per member.
   */
  private sealed(
    share: FrameShare,
    state: GroupState,
    members: readonly GroupMember[],
    viewsBefore: Record<string, GroupObject> | undefined,
    direct: Record<string, GroupJson>,
  ): { envelopes: Envelopes; views: Record<string, GroupObject> } {
    const { core, events, checkpoint, checkpointDelta } = share;
    const checkpointParts = {
      checkpoint_mode: plain(checkpointDelta ? 'delta' : 'full'),
      checkpoint: checkpointDelta ? NULL_PART : checkpoint.part,
      checkpoint_delta: checkpointDelta ? checkpointDelta.part : EMPTY_PART,
      checkpoint_hash: plain(checkpoint.value.checkpoint_hash),
      checkpoint_signature: plain(checkpoint.value.checkpoint_signature),
    };
    // The first fault is the one a member-by-member run meets: a view that failed is thrown once the
    // earlier members' deltas and payloads are made.
    const written: WrittenView[] = [];
    let refused: { error: unknown } | undefined;
    try {
      for (const m of members) written.push(this.writtenView(state, m));
    } catch (error) {
      refused = { error };
    }
    const { head: viewHead, tails: viewTails } = sharedMembers(written.map((v) => v.written));
    const viewHashes = headHashes(this.crypto, viewHead, viewTails, viewHead === '');
    const views: Record<string, GroupObject> = {};
    // The members' views share the state's parts: what changed in them is found once.
    const known: DeltaMemo = new WeakMap();
    const memo: ViewDeltaMemo = { pairs: new Map(), known, ids: new Map(), deltas: new Map() };
    const payloads: PrivatePayload[] = [];
    // Every payload's text starts with the checkpoint's members and the key of `direct`: written once.
    const head = `{"checkpoint":${checkpointParts.checkpoint.text},"checkpoint_delta":${checkpointParts.checkpoint_delta.text},"checkpoint_hash":${checkpointParts.checkpoint_hash.text},"checkpoint_mode":${checkpointParts.checkpoint_mode.text},"checkpoint_signature":${checkpointParts.checkpoint_signature.text},"direct":`;
    const tails: string[] = [];
    const checkpointHeight = Math.max(...Object.values(checkpointParts).map((p) => p.height));
    for (const [i, view] of written.entries()) {
      const pk = members[i]!.public_key;
      views[pk] = view.value;
      const viewStateHash = viewHashes.hashes[i];
      const viewBytes = viewHashes.lengths[i];
      const before = viewsBefore?.[pk];
      const viewDelta = before !== undefined ? this.guard(() => this.writtenViewDelta(before, view, viewBytes!, memo)) : undefined;
      const d = Object.hasOwn(direct, pk) ? freeze(direct[pk] as GroupJson) : NO_ITEMS;
      payloads.push({
        viewer_public_key: pk,
        view_mode: viewDelta ? 'delta' : 'full',
        view: viewDelta ? null : view.value,
        view_delta: viewDelta ? viewDelta.value : NO_ITEMS,
        view_state_hash: viewStateHash!,
        direct: d,
        checkpoint_mode: checkpointDelta ? 'delta' : 'full',
        checkpoint: checkpointDelta ? null : checkpoint.value,
        checkpoint_delta: checkpointDelta ? checkpointDelta.value : NO_ITEMS,
        checkpoint_hash: checkpoint.value.checkpoint_hash,
        checkpoint_signature: checkpoint.value.checkpoint_signature,
      });
      const directPart = Array.isArray(d) && d.length === 0 ? EMPTY_PART : canonicalPart(d, this.texts);
      const viewPart = viewDelta ? NULL_PART : view.part;
      const deltaPart = viewDelta ? viewDelta.part : EMPTY_PART;
      // The payload's text is head + tail (objectPart's, with PAYLOAD_ORDER); objectPart itself is asked
      // only to refuse a payload too deep, as it would.
      if (Math.max(checkpointHeight, directPart.height, viewPart.height, deltaPart.height) + 1 > MAX_GROUP_JSON_DEPTH) {
        objectPart(
          {
            viewer_public_key: plain(pk),
            view_mode: plain(viewDelta ? 'delta' : 'full'),
            view: viewPart,
            view_delta: deltaPart,
            view_state_hash: plain(viewStateHash!),
            direct: directPart,
            ...checkpointParts,
          },
          PAYLOAD_ORDER,
        );
      }
      // The mode, the hash and the key are the leader's own ASCII (hex), written as they are.
      tails.push(
        `${directPart.text},"view":${viewPart.text},"view_delta":${deltaPart.text},"view_mode":"${viewDelta ? 'delta' : 'full'}","view_state_hash":"${viewStateHash!}","viewer_public_key":"${pk}"}`,
      );
    }
    if (refused) throw refused.error;
    const { hashes } = headHashes(this.crypto, head, tails);
    const frameHash = checkpoint.value.frame_hash;
    const envelopes: Envelopes = {};
    const signatures = this.key.signMany(signatureMessages(frameHash, hashes, payloads));
    freeze(events);
    for (let i = 0; i < payloads.length; i++) {
      const p = payloads[i]!;
      // Everything in it is frozen already, so the commit's deep freeze stops at the envelope.
      envelopes[p.viewer_public_key] = Object.freeze(envelopeOf(core, frameHash, events, p, hashes[i]!, toHex(signatures[i]!)));
    }
    return { envelopes, views };
  }

  /** deltaIfSmaller (wire.ts) of a view written member by member (`fullBytes` long), with its text. */
  private writtenViewDelta(before: GroupObject, after: WrittenView, fullBytes: number, memo: ViewDeltaMemo): Written<DeltaOp[]> | undefined {
    const { ops, made } = this.viewOps(before, after, memo);
    // The same operations (the same lists found in this frame) are the same delta, written once.
    let found = made === undefined ? undefined : memo.deltas.get(made);
    if (found === undefined) {
      const value = freeze(ops);
      const part = canonicalPart(value, this.texts);
      found = { delta: { value, part }, bytes: utf8ByteLength(part.text) };
      if (made !== undefined) memo.deltas.set(made, found);
    }
    return found.bytes + VIEW_DELTA_MARGIN < fullBytes ? found.delta : undefined;
  }

  /**
   * makeDelta(before, after) of two views written member by member: a member whose text is unchanged
   * has no operations, and those of a member that changed are found once per pair of texts in a frame
   * (the members' views mostly change alike).
   */
  private viewOps(before: GroupObject, after: WrittenView, memo: ViewDeltaMemo): { ops: DeltaOp[]; made: string | undefined } {
    const { known, ids } = memo;
    const b = this.written.get(before);
    const a = after.written;
    const av = after.value;
    if (b === undefined || b.keys.length === 0 || a.keys.length === 0) return { ops: makeDelta(before, av, this.same, known), made: undefined };
    // Which lists found in this frame the operations are made of, or undefined if any is not one of them.
    let made: string | undefined = '';
    // makeDelta's order: the keys only `before` has, those both have, then those only `after` has, each
    // in code-point order (the order the keys were written in).
    const ops: DeltaOp[] = [];
    if (a.keys === b.keys) {
      // The same keys (the writer's one array for a shape): member by member, equal texts being equal JSON.
      for (let i = 0; i < a.keys.length; i++) {
        if (b.values[i] === a.values[i]) continue;
        const list = this.memberOps(memo, before, av, a.keys[i]!, b.values[i]!, a.values[i]!);
        for (const op of list) ops.push(op);
        made += `${ids.get(list)!},`;
      }
      const bounded = boundedDelta(ops, av);
      return { ops: bounded, made: bounded === ops ? made : undefined };
    }
    for (const k of b.keys) {
      if (!Object.hasOwn(av, k)) {
        ops.push({ op: 'remove', path: [k] });
        made = undefined;
      }
    }
    let j = 0;
    for (let i = 0; i < b.keys.length; i++) {
      const k = b.keys[i]!;
      while (j < a.keys.length && compareCodePoints(a.keys[j]!, k) < 0) j++;
      if (a.keys[j] !== k) continue;
      const x = b.values[i]!;
      const y = a.values[j]!;
      // Equal texts are equal JSON.
      if (x === y) continue;
      const list = this.memberOps(memo, before, av, k, x, y);
      for (const op of list) ops.push(op);
      if (made !== undefined) made += `${ids.get(list)!},`;
    }
    for (const k of a.keys) {
      if (!Object.hasOwn(before, k)) {
        ops.push({ op: 'set', path: [k], value: copyJson(av[k]!) });
        made = undefined;
      }
    }
    const bounded = boundedDelta(ops, av);
    // Past the bound the delta is a copy of this view: its own.
    return { ops: bounded, made: bounded === ops ? made : undefined };
  }

  /** The operations of one member of a view whose text changed from `x` to `y`: found once per frame for each such pair. */
  private memberOps(memo: ViewDeltaMemo, before: GroupObject, after: GroupObject, k: string, x: string, y: string): DeltaOp[] {
    let byBefore = memo.pairs.get(k);
    if (byBefore === undefined) memo.pairs.set(k, (byBefore = new Map()));
    let byAfter = byBefore.get(x);
    if (byAfter === undefined) byBefore.set(x, (byAfter = new Map()));
    let list = byAfter.get(y);
    if (list === undefined) {
      byAfter.set(y, (list = diffAt(before[k], after[k], [k], this.same, memo.known)));
      memo.ids.set(list, memo.ids.size);
    }
    return list;
  }

  /** Builds the next frame on the draft (advancing seq unless it is the first snapshot) and its envelopes. */
  private build(d: LeaderState, f: { events: GroupJson[]; direct: Record<string, GroupJson>; kind: FrameKind; advance: boolean }): Envelopes {
    if (f.advance) d.seq += 1;
    const statePart = canonicalPart(d.state, this.texts);
    const { cs, parts: csParts, part: csPart } = this.checkpointStateOf(d, statePart);
    // The three texts share nothing at their start: hashed in one call, each from its first byte.
    const {
      hashes: [stateHash, recoveryHash, eventsHash],
    } = headHashes(this.crypto, '', [statePart.text, csPart.text, groupCanonical(f.events)], false);
    const core = frameCore({
      _group: f.kind,
      wire_version: GROUP_WIRE_VERSION,
      group_id: this.groupId,
      leader_public_key: this.leaderPublicKey,
      leader_epoch: this.leaderEpoch,
      seq: d.seq,
      previous_hash: d.previousHash,
      membership_version: d.membershipVersion,
      authority_state_hash: stateHash,
      recovery_state_hash: recoveryHash,
      events_hash: eventsHash,
      completed: d.completed,
      outcome: d.outcome,
    });
    const frameHash = groupJsonHash(this.crypto, core);
    const checkpoint = this.signedCheckpoint(d, cs, csParts, frameHash);
    const forced = checkpointForcedFull({
      first: d.checkpointState === null,
      kind: f.kind,
      completed: d.completed,
      seq: d.seq,
      every: this.config.checkpoint_every_events,
    });
    const checkpointDelta = forced
      ? undefined
      : this.guard(() =>
          writtenDeltaIfSmaller(
            d.checkpointState as unknown as GroupJson,
            cs as unknown as GroupJson,
            checkpoint.bytes,
            CHECKPOINT_DELTA_MARGIN,
            this.same,
            this.texts,
          ),
        );
    // The views' texts are put together from the state's members' texts, and each member's tail is
    // encoded on its own: a text left as the many pieces it was written from would be walked piece by
    // piece every time. Made flat once here (reading it as a number flattens it in place).
    for (const v of Object.values(d.state)) {
      const t = typeof v === 'object' && v !== null ? this.texts.get(v) : undefined;
      if (t !== undefined) Number(t.text);
    }
    const active = d.members.filter((m) => m.status === 'active');
    const { envelopes, views } = this.sealed(
      { core, events: f.events, checkpoint, checkpointDelta },
      d.state,
      active,
      f.kind === 'frame' ? d.lastViews : undefined,
      f.direct,
    );
    d.previousHash = frameHash;
    d.lastViews = views;
    d.lastCore = core;
    d.lastEvents = f.events;
    d.checkpointState = cs;
    d.checkpoint = checkpoint.value;
    return envelopes;
  }

  /** Runs a wire computation over hook-produced values: a GroupError there is the hooks' fault. */
  private guard<T>(f: () => T): T {
    try {
      return f();
    } catch (e) {
      if (e instanceof GroupError) return fail('HOOK_RESULT', e.message);
      throw e;
    }
  }
}

/** Whether two objects written member by member are the same JSON: the same keys, with the same texts. */
function sameMembers(p: WrittenObject, q: WrittenObject): boolean {
  if (p.keys.length !== q.keys.length) return false;
  for (let j = 0; j < p.keys.length; j++) if (p.keys[j] !== q.keys[j] || p.values[j] !== q.values[j]) return false;
  return true;
}

/** The text of a string the leader made itself (hex, a mode name): nothing in it for the check to refuse. */
const plain = (s: string): CanonicalPart => ({ text: JSON.stringify(s), height: 0 });
const PAYLOAD_ORDER = sortedKeys(PRIVATE_PAYLOAD_FIELDS);
// A checkpoint's keys, without and with its hash and signature (objectPart sorts any other set itself).
const UNSIGNED_CHECKPOINT_ORDER = sortedKeys([
  'version',
  'group_id',
  'leader_public_key',
  'leader_epoch',
  'seq',
  'frame_hash',
  'membership_version',
  ...CHECKPOINT_STATE_FIELDS,
]);
const CHECKPOINT_ORDER = sortedKeys([...UNSIGNED_CHECKPOINT_ORDER, 'checkpoint_hash', 'checkpoint_signature']);
const NULL_PART: CanonicalPart = { text: 'null', height: 0 };
/** The empty list an envelope carries where it has no operations or direct messages; frozen, so shared. */
const NO_ITEMS = Object.freeze([]) as unknown as never[];

const HEX_LENGTH = 64;
/**
 * leaderSignaturePayload(frameHash, viewHashes[i], payloads[i]'s viewer) for each member of a frame,
 * signed together: the payload is written once, with placeholders that are not hex to find where each
 * member's view hash and key (lowercase hex, ASCII) go, and copied into one buffer per member with
 * those written in.
 */
function signatureMessages(frameHash: string, viewHashes: readonly string[], payloads: readonly { viewer_public_key: string }[]): Uint8Array[] {
  const viewMark = 'v'.repeat(HEX_LENGTH);
  const viewerMark = 'k'.repeat(HEX_LENGTH);
  const template = leaderSignaturePayload(frameHash, viewMark, viewerMark);
  const text = new TextDecoder().decode(template);
  const viewAt = text.indexOf(viewMark);
  const viewerAt = text.indexOf(viewerMark);
  // Byte offsets are string offsets only in an ASCII payload.
  const fits = text.length === template.length && viewAt >= 0 && viewerAt >= 0;
  const n = template.length;
  // One buffer for all of them, each message a view of it: a buffer each would cost more than the copy.
  const all = new Uint8Array(n * payloads.length);
  return payloads.map(({ viewer_public_key: viewer }, i) => {
    const viewHash = viewHashes[i]!;
    if (!fits || viewHash.length !== HEX_LENGTH || viewer.length !== HEX_LENGTH) return leaderSignaturePayload(frameHash, viewHash, viewer);
    const bytes = all.subarray(i * n, i * n + n);
    bytes.set(template);
    for (let j = 0; j < HEX_LENGTH; j++) {
      bytes[viewAt + j] = viewHash.charCodeAt(j);
      bytes[viewerAt + j] = viewer.charCodeAt(j);
    }
    return bytes;
  });
}
const EMPTY_PART: CanonicalPart = { text: '[]', height: 0 };

/** A value with its canonical text. */
interface Written<T> {
  value: T;
  part: CanonicalPart;
}

/** What the views' deltas of a frame share. */
interface ViewDeltaMemo {
  /** The operations found for a view's member: by key, text before and text after. */
  pairs: Map<string, Map<string, Map<string, DeltaOp[]>>>;
  known: DeltaMemo;
  /** Each list in `pairs`, numbered. */
  ids: Map<DeltaOp[], number>;
  /** The deltas written, by the numbers of the lists they are made of. */
  deltas: Map<string, { delta: Written<DeltaOp[]>; bytes: number }>;
}

/** A view with its text, written member by member. */
interface WrittenView extends Written<GroupObject> {
  written: WrittenObject;
}

/** What every envelope of a frame carries alike: its core and events, and its checkpoint, in full or as a delta. */
interface FrameShare {
  core: FrameCore;
  events: GroupJson[];
  checkpoint: Written<Checkpoint>;
  checkpointDelta: Written<DeltaOp[]> | undefined;
}

/**
 * deltaIfSmaller (wire.ts) for a value already written (`fullBytes` long): the delta with its text when
 * smaller by the margin. Frozen, so that operations `known` shares between deltas are written once.
 */
function writtenDeltaIfSmaller(
  before: GroupJson,
  after: GroupJson,
  fullBytes: number,
  margin: number,
  same: EqualityHint,
  texts: TextCache,
  known?: DeltaMemo,
): Written<DeltaOp[]> | undefined {
  const delta = freeze(makeDelta(before, after, same, known));
  const part = canonicalPart(delta, texts);
  return utf8ByteLength(part.text) + margin < fullBytes ? { value: delta, part } : undefined;
}

function normalizeMembersOrFail(raw: unknown[]): GroupMember[] {
  try {
    return normalizeMembers(raw);
  } catch (e) {
    if (e instanceof GroupError) fail(e.code === 'GROUP_MEMBER_DUPLICATE' ? 'SEAT_TAKEN' : 'MEMBER_INVALID', e.message);
    throw e;
  }
}

/** A checkpoint a successor may restore from: its hash, its previous leader's signature, its group and state. */
export function verifyCheckpointOrFail(crypto: Crypto, raw: unknown, groupId: string): Checkpoint {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail('CHECKPOINT_INVALID', 'checkpoint must be an object');
  const cp = raw as Record<string, unknown>;
  const toLeader = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      if (e instanceof GroupError) return fail('CHECKPOINT_INVALID', e.message);
      throw e;
    }
  };
  const { checkpoint_hash: expected, checkpoint_signature: signature, ...unsigned } = cp;
  if (typeof expected !== 'string' || toLeader(() => groupJsonHash(crypto, unsigned)) !== expected) fail('CHECKPOINT_HASH', 'checkpoint hash mismatch');
  if (typeof signature !== 'string') fail('CHECKPOINT_SIGNATURE', 'checkpoint signature is missing');
  const leaderPk = typeof cp['leader_public_key'] === 'string' ? cp['leader_public_key'] : '';
  if (!toLeader(() => verifyCheckpoint(crypto, leaderPk, cp))) fail('CHECKPOINT_SIGNATURE', 'checkpoint certificate is invalid');
  if (cp['group_id'] !== groupId) fail('CHECKPOINT_INVALID', 'checkpoint group_id mismatch');
  if (cp['version'] !== 1) fail('CHECKPOINT_INVALID', 'checkpoint version is invalid');
  toLeader(() => validateCheckpointState(checkpointState(cp)));
  if (!isInt(cp['seq']) || (cp['seq'] as number) < 0) fail('CHECKPOINT_INVALID', 'checkpoint seq is invalid');
  if (!isHash(cp['frame_hash'])) fail('CHECKPOINT_INVALID', 'checkpoint frame_hash is invalid');
  return clone(cp) as unknown as Checkpoint;
}
