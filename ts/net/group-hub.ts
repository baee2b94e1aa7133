/**
 * The leader's side of a group, whichever transport carries it (libp2p: group.ts; iroh with a registry:
 * group-iroh.ts): the pure leader (ts/group/leader.ts) plus what every network leader does around it —
 * one link per admitted member, fan-out of each frame to those links and to its own seat, the start and
 * a successor's resume, late joiners and returning members, disconnects, the leader's own seat (paced
 * by an action delay) and the turn deadlines.
 *
 * Nothing here opens a socket or reads the process clock: a driver hands over a link per member once
 * its admission (transport- and registry-specific) is done, and a clock. So a test drives a whole
 * epoch with in-memory links on a virtual clock, turn deadlines and all.
 */
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';
import type { GroupHooks, GroupMember } from '../hooks/types.js';
import { groupMessages, type GroupMessages } from '../group/action-message.js';
import { GroupLeader, GroupLeaderError, groupConfigFromSpec, type Envelopes, type GroupConfig, type LeaderOptions } from '../group/leader.js';
import { safeEmit, turnTimeoutFor, type GroupEvent, type GroupProtocol } from './group-core.js';

type Envelope = Envelopes[string];
type Checkpoint = GroupLeader['checkpoint'];

/** Opaque to the hub: whatever the clock's setTimer returns, handed back to its clearTimer. */
export type TimerHandle = unknown;

/** Time as the hub sees it: the process clock in the drivers, a virtual one in tests. */
export interface HubClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fire` once, `ms` from now. */
  setTimer(ms: number, fire: () => void): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** One admitted member's channel, as its transport frames it. */
export interface MemberLink {
  /** Sends one envelope; `bootstrap` marks one the member must take as a fresh start (full checkpoint and view). False when the link is gone. */
  deliver(envelope: Envelope, bootstrap: boolean): boolean;
  close(): void;
}

/** The leader's own seat: its replica takes the envelopes directly, its player acts through the hub. */
export interface OwnSeat {
  readonly pending: boolean;
  apply(envelope: unknown, bootstrap: boolean): boolean;
  next(): { client_seq: number; action: Record<string, unknown> } | null;
  accepted(clientSeq: number): void;
  refused(): void;
}

/** How a leader's epoch ended. */
export interface LeaderEnd {
  completed: boolean;
  outcome: string | null;
  reason?: string;
}

/** The leader's answer to one action: its receipt (accepted or duplicate), or a rejection with a reason. */
export type HubReceipt = Record<string, unknown> & { status: string };

export interface GroupHubOptions {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: GroupProtocol;
  options: Record<string, unknown>;
  groupId: string;
  leaderEpoch: number;
  self: OwnSeat;
  random: () => number;
  clock: HubClock;
  onEvent?: GroupEvent;
  /** A pause before each action of the leader's own seat. */
  actionDelayMs?: number;
  /** The turn deadline when the protocol declares none (default DEFAULT_TURN_TIMEOUT_MS; 0: never). */
  turnTimeoutMs?: number;
  /** Every checkpoint the leader signs, as it signs it (a driver that keeps a recovery floor records them). */
  onCheckpoint?: (checkpoint: Checkpoint) => void;
}

/**
 * One timer for a leader's next turn deadline: the leader (a pure state machine) says when, the hub
 * re-arms this after every change, and a firing hands control back to the hub. On the process clock it
 * keeps the process alive on purpose: a leader whose members have all gone must still play out their turns.
 */
export class TurnTimer {
  private handle: TimerHandle | undefined;
  private armed = false;
  private stopped = false;

  constructor(
    private readonly clock: HubClock,
    private readonly fire: () => void,
  ) {}

  /** Fires at `deadline` (the clock's ms), replacing any earlier arming; null disarms. */
  arm(deadline: number | null): void {
    if (this.armed) this.clock.clearTimer(this.handle);
    this.armed = false;
    if (deadline === null || this.stopped) return;
    // setTimeout takes at most 2^31 - 1 ms; a later deadline is re-armed when this fires.
    const delay = Math.min(Math.max(0, deadline - this.clock.now()), 2 ** 31 - 1);
    this.armed = true;
    this.handle = this.clock.setTimer(delay, () => {
      this.armed = false;
      this.fire();
    });
  }

  stop(): void {
    this.stopped = true;
    this.arm(null);
  }
}

/** One leader epoch, its transport behind `L`. */
export class GroupHub<L extends MemberLink = MemberLink> {
  readonly config: GroupConfig;
  readonly messages: GroupMessages;
  readonly publicKey: string;
  readonly done: Promise<LeaderEnd>;
  private current: GroupLeader | undefined;
  private readonly links = new Map<string, L>();
  private readonly turnTimeoutMs: number;
  private readonly turnTimer: TurnTimer;
  private delayed: TimerHandle | undefined;
  private delaying = false;
  private over = false;
  private resolveDone!: (e: LeaderEnd) => void;

  constructor(private readonly o: GroupHubOptions) {
    this.config = groupConfigFromSpec(o.protocol.spec);
    this.turnTimeoutMs = turnTimeoutFor(o.protocol.spec, o.options, o.turnTimeoutMs);
    this.turnTimer = new TurnTimer(o.clock, () => this.turnsDue());
    this.messages = groupMessages(o.protocol.protocolId, o.protocol.spec, o.protocol.specText);
    this.publicKey = toHex(o.crypto.ed25519PublicKey(o.seed));
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  get leader(): GroupLeader | undefined {
    return this.current;
  }

  /** Completed, fenced or stopped: a leader past its end orders nothing more. */
  get ended(): boolean {
    return this.over;
  }

  /** Every link held (a driver's own messages, such as libp2p's roster, go to these). */
  allLinks(): IterableIterator<L> {
    return this.links.values();
  }

  private leaderOptions(membershipVersion: number, members: GroupMember[] | undefined): LeaderOptions {
    const o = this.o;
    const hooks = o.protocol.hooks.create({ role: 'host', options: o.options, args: [], stateDir: '', decision: null, random: o.random }) as GroupHooks;
    return {
      crypto: o.crypto,
      hooks,
      config: this.config,
      groupId: o.groupId,
      leaderSeed: toHex(o.seed),
      leaderEpoch: o.leaderEpoch,
      membershipVersion,
      ...(members && { members }),
      turnTimeoutMs: this.turnTimeoutMs,
      now: o.clock.now(),
    };
  }

  /** Reports an event through the driver's callback (a driver's own events go through here too). */
  emit(type: string, data: Record<string, unknown>): void {
    safeEmit(this.o.onEvent, type, data);
  }

  /** Starts the group with these members (a GroupLeaderError says why it cannot): each gets its bootstrap, then the first turns are played or timed. */
  start(members: GroupMember[], membershipVersion: number): void {
    if (this.current) return;
    this.current = GroupLeader.start(this.leaderOptions(membershipVersion, members));
    this.committed();
    this.markUnlinkedAbsent();
    this.emit('group_started', { members: members.length, membership_version: membershipVersion });
    for (const m of this.current.members) this.bootstrap(m.public_key);
  }

  /**
   * A successor's start: it leads from a checkpoint (`members`, when given, are the room now; else the
   * checkpoint's). Its own seat takes the epoch's first frame; every other member is absent until it attaches.
   */
  resume(checkpoint: Record<string, unknown>, membershipVersion: number, members?: GroupMember[]): void {
    this.current = GroupLeader.fromCheckpoint(this.leaderOptions(membershipVersion, members), checkpoint);
    this.committed();
    this.fanOut(this.current.lastEnvelopes);
    this.markUnlinkedAbsent();
  }

  /** A member's admission is complete: its link replaces any earlier one. */
  connect(member: GroupMember, link: L): void {
    const old = this.links.get(member.public_key);
    this.links.set(member.public_key, link);
    if (old !== link) old?.close();
    this.emit('member_connected', { public_key: member.public_key, seat: member.seat });
  }

  /**
   * A connected member joins the running group: one it lists as active gets a bootstrap and its turns
   * back; a late joiner (or one the group had marked absent) one membership frame, its first a bootstrap,
   * at `membershipVersion` (default: the next). A GroupLeaderError says the group cannot take it.
   */
  welcome(member: GroupMember, membershipVersion?: number): void {
    const leader = this.current;
    if (!leader) return;
    const pk = member.public_key;
    if (leader.member(pk)?.status === 'active') {
      this.bootstrap(pk);
      leader.memberPresent(pk, this.o.clock.now());
      return this.armTurns();
    }
    const envs = leader.addMember(member, membershipVersion ?? leader.membershipVersion + 1, this.o.clock.now());
    this.committed();
    this.fanOut(envs, pk);
    this.afterFrame();
  }

  /** A member's link went away (or could not take a line): its turns no longer wait on it beyond their deadline. */
  disconnect(pk: string, link: L): void {
    if (this.links.get(pk) !== link) return;
    this.links.delete(pk);
    link.close();
    this.emit('member_disconnected', { public_key: pk });
    // No frame comes of this (it may run in the middle of a fan-out).
    this.current?.memberAbsent(pk, this.o.clock.now());
    this.armTurns();
  }

  /** One member action: the leader's receipt, or a rejection with its reason. The frame it makes is already out. */
  input(pk: string, clientSeq: unknown, action: unknown): HubReceipt {
    const rejected = (reason: string): HubReceipt => ({ status: 'rejected', reason, client_seq: clientSeq });
    const leader = this.current;
    if (!leader) return rejected('the group has not started');
    // A fenced leader orders nothing more: its members must move to the next epoch.
    if (this.over && !leader.completed) return rejected("this leader's epoch is over");
    const errors = typeof clientSeq === 'number' ? this.messages.check(clientSeq, action) : [{ code: 'FIELD_TYPE' }];
    if (errors.length) return rejected(`the action fails the spec's ${this.messages.action} message: ${errors.map((e) => e.code).join(', ')}`);
    try {
      const out = leader.applyInput({ actor_public_key: pk, client_seq: clientSeq, action }, this.o.clock.now());
      if (out.receipt.status === 'accepted') {
        this.committed();
        this.fanOut(out.envelopes);
      }
      return out.receipt as unknown as HubReceipt;
    } catch (e) {
      if (e instanceof GroupLeaderError) return rejected(e.message);
      throw e;
    }
  }

  /** After each frame: the leader's own seat may act, a completed group ends, and the turn timer is set for the next deadline. */
  afterFrame(): void {
    if (this.over) return;
    try {
      if (this.o.actionDelayMs && this.current && !this.current.completed && !this.o.self.pending) {
        if (this.delaying) return;
        this.delaying = true;
        this.delayed = this.o.clock.setTimer(this.o.actionDelayMs, () => {
          this.delaying = false;
          if (this.playOwnSeat()) this.afterFrame();
        });
        return;
      }
      for (let guard = 0; guard < 10_000 && this.current && !this.current.completed; guard++) if (!this.playOwnSeat()) break;
      if (this.current?.completed) this.finish({ completed: true, outcome: this.current.outcome });
    } finally {
      this.armTurns();
    }
  }

  /** Ends this epoch (completed, fenced, stopped or unable to start); the links stay open until close(). */
  finish(end: LeaderEnd): void {
    if (this.over) return;
    this.over = true;
    if (this.delaying) this.o.clock.clearTimer(this.delayed);
    this.delaying = false;
    this.turnTimer.stop();
    this.resolveDone(end);
  }

  /** Closes every member link after a grace for the lines still in flight. */
  async close(graceMs: number): Promise<void> {
    this.turnTimer.stop();
    await new Promise<void>((r) => this.o.clock.setTimer(graceMs, r));
    for (const l of this.links.values()) l.close();
    this.links.clear();
  }

  private committed(): void {
    const cp = this.current?.checkpoint;
    if (cp) this.o.onCheckpoint?.(cp);
  }

  private bootstrap(pk: string): void {
    const env = this.current?.bootstrapEnvelope(pk);
    if (!env) return;
    if (pk === this.publicKey) this.o.self.apply(env, true);
    else this.send(pk, env, true);
  }

  /** One frame's envelopes, each to its member; `joiner`'s is its first, a bootstrap. */
  private fanOut(envs: Envelopes, joiner?: string): void {
    for (const [pk, env] of Object.entries(envs)) {
      if (pk === this.publicKey) this.o.self.apply(env, false);
      else this.send(pk, env, pk === joiner);
    }
  }

  private send(pk: string, env: Envelope, bootstrap: boolean): void {
    const link = this.links.get(pk);
    // A link that cannot take a frame is gone: the member is absent until it comes back.
    if (link && !link.deliver(env, bootstrap)) this.disconnect(pk, link);
  }

  /**
   * Members the leader holds no link to (one that left the lobby; every other member when a successor
   * starts) are absent until they attach: a turn of theirs that times out makes them sit out.
   */
  private markUnlinkedAbsent(): void {
    const leader = this.current;
    for (const m of leader?.members ?? [])
      if (m.public_key !== this.publicKey && !this.links.has(m.public_key)) leader!.memberAbsent(m.public_key, this.o.clock.now());
  }

  private armTurns(): void {
    this.turnTimer.arm(this.current && !this.current.completed && !this.over ? this.current.turnDeadline() : null);
  }

  /** The turn timer fired: each turn past its deadline is resolved by the protocol's rule, in frames that go out like any other. */
  private turnsDue(): void {
    const leader = this.current;
    if (!leader || leader.completed || this.over) return;
    const out = leader.onTurnTimer(this.o.clock.now());
    for (const t of out.resolved) {
      this.committed();
      this.emit('turn_timeout', { public_key: t.public_key, seat: t.seat, reason: t.reason });
      this.fanOut(t.envelopes);
    }
    for (const f of out.failed) this.emit('turn_timeout_failed', { public_key: f.public_key, code: f.code, message: f.message });
    this.afterFrame();
  }

  /** One action of the leader's own seat, if it has one; false when it has nothing to do. */
  private playOwnSeat(): boolean {
    if (this.over) return false;
    const a = this.o.self.next();
    if (!a) return false;
    const r = this.input(this.publicKey, a.client_seq, a.action);
    if (r.status === 'rejected') {
      this.o.self.refused();
      this.emit('action_refused', { reason: String(r['reason']) });
    } else this.o.self.accepted(a.client_seq);
    return true;
  }
}
