/**
 * Every seat of a group protocol in one process: `protocol test` for authoritative_group, and the
 * group tests. Seat 0 leads epoch 0; each member holds its own replica, verifies every envelope the
 * leader sends it, acts only from its own verified view (through the protocol's autoplay), and writes
 * its own session directory (session-dir.ts). Each action is checked against the spec's action message
 * before the leader's hooks see it.
 *
 * A failover can be staged: after a number of accepted actions the leader stops; the members agree on
 * its successor by the serverless rule, the arbiter grants that successor the next epoch, and the
 * successor resumes from the checkpoint its own replica holds. The old leader's seat stays a member.
 *
 * Members can drop out (`absences`): on its turn a member goes silent or disconnects, and may come back
 * later, rebuilt from its own transcript as `join --resume` does. Time is virtual: each action takes
 * `actionMs`, and when no one has anything to do it jumps to the next turn deadline (or return), so a
 * minute-long deadline costs nothing to wait out.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';
import type { GroupAutoplay, GroupHooks, GroupMember, HookContext, HooksModule } from '../hooks/types.js';
import type { Spec } from '../spec/types.js';
import { seeded } from '../hooks/random.js';
import { groupMessages, type GroupMessages } from './action-message.js';
import { LocalArbiter, serverlessSuccessor } from './arbiter.js';
import type { GroupConfig } from './config.js';
import { GroupLeader, GroupLeaderError, groupConfigFromSpec, type Envelopes, type TurnTimeoutReason } from './leader.js';
import { GroupReplica, type TranscriptEntry } from './member.js';
import { groupProofOf } from './proof.js';
import { GroupSessionRecord, type GroupReceipt } from './session-dir.js';

export interface GroupLocalRun {
  crypto: Crypto;
  spec: Spec;
  specText: string;
  protocolId: string;
  hooks: HooksModule;
  options?: Record<string, unknown>;
  seed?: number;
  outDir: string;
  /** Seats to fill (default: the spec's min_participants). */
  members?: number;
  /** 32-byte key seeds per seat (default: random). */
  keySeeds?: Uint8Array[];
  /** Stop after this many actions offered to the leader (default 20,000). */
  maxActions?: number;
  /** Stage a leader failure after this many accepted actions; the failed leader's seat plays on as a member. */
  failoverAfter?: number;
  /** Each member's turn deadline in virtual ms, applied by the leader (default: turns are not timed). */
  turnTimeoutMs?: number;
  /** Virtual ms each action takes (default 0): lets time pass while the others play on. */
  actionMs?: number;
  /** Members that drop out on their turn. */
  absences?: GroupAbsence[];
  onAction?: (seat: number, action: Record<string, unknown>, accepted: boolean, reason?: string) => void;
}

/** A member that drops out when it is next to act (its autoplay has a move) after `afterActions` accepted actions in all. */
export interface GroupAbsence {
  seat: number;
  afterActions?: number;
  /** `absent` (default): its connection is gone, it receives nothing; `silent`: it stays connected and does not act. */
  kind?: TurnTimeoutReason;
  /** Come back after this many virtual ms: an absent member rebuilds its replica from its own transcript and gets a bootstrap envelope. */
  returnAfterMs?: number;
}

export interface GroupMemberResult {
  seat: number;
  public_key: string;
  dir: string;
  /** Still in the group at the end. */
  present: boolean;
  completed: boolean;
  outcome: string | null;
  receipt: GroupReceipt;
}

export interface GroupLocalResult {
  completed: boolean;
  outcome: string | null;
  /** Why the run stopped short of completion. */
  reason?: string;
  groupId: string;
  actions: number;
  refusals: number;
  frames: number;
  epochs: number;
  /** Turns the leader resolved in a member's place. */
  timeouts: { seat: number; reason: TurnTimeoutReason; at: number }[];
  /** Virtual time the run took (ms). */
  elapsedMs: number;
  members: GroupMemberResult[];
}

export class GroupRunError extends Error {
  constructor(
    readonly code: 'GROUP_NOT_GROUP' | 'GROUP_NO_AUTOPLAY' | 'GROUP_SEATS',
    message: string,
  ) {
    super(message);
    this.name = 'GroupRunError';
  }
}

interface Seat {
  seat: number;
  seed: Uint8Array;
  publicKey: string;
  record: GroupMember;
  replica: GroupReplica;
  session: GroupSessionRecord;
  random: () => number;
  clientSeq: number;
  present: boolean;
  fault?: string;
  /** The last envelope applied: what a refused one is compared with for a proof. */
  last?: Record<string, unknown>;
  /** Dropped out: how, and the virtual time it comes back (Infinity: never). */
  away?: { kind: TurnTimeoutReason; until: number };
  /** Its absence still to come. */
  absence?: GroupAbsence;
}

/** A run's request, checked, with what every part of the run derives from it. */
interface RunSetup {
  r: GroupLocalRun;
  autoplay: GroupAutoplay;
  config: GroupConfig;
  n: number;
  messages: GroupMessages;
  /** What every seeded draw of the run derives from. */
  seed: number;
  groupId: string;
  keySeeds: Uint8Array[];
  records: GroupMember[];
  turnTimeoutMs: number;
  absences: Map<number, GroupAbsence>;
  /** A fresh hooks instance for the leader of `epoch`. */
  hooksFor: (epoch: number) => GroupHooks;
}

export async function runGroupLocal(r: GroupLocalRun): Promise<GroupLocalResult> {
  const run = new LocalGroupRun(setUp(r));
  run.play();
  return run.finish();
}

function setUp(r: GroupLocalRun): RunSetup {
  const c = r.crypto;
  if (r.hooks.mode !== 'authoritative_group') throw new GroupRunError('GROUP_NOT_GROUP', `the hooks are for ${r.hooks.mode}, not authoritative_group`);
  const autoplay: GroupAutoplay | undefined = r.hooks.autoplay;
  if (!autoplay) throw new GroupRunError('GROUP_NO_AUTOPLAY', 'the hooks module has no autoplay (defineHooks third argument), so no seat can play unattended');
  const config = groupConfigFromSpec(r.spec);
  const n = r.members ?? config.min_participants;
  if (!Number.isInteger(n) || n < config.min_participants || n > config.max_participants) {
    throw new GroupRunError('GROUP_SEATS', `the spec takes ${config.min_participants}–${config.max_participants} members, not ${n}`);
  }
  const messages = groupMessages(r.protocolId, r.spec, r.specText);
  const seed = r.seed ?? 1;
  const options = r.options ?? {};
  const groupId = `grp-${toHex(globalThis.crypto.getRandomValues(new Uint8Array(8)))}`;
  const keySeeds = Array.from({ length: n }, (_, i) => r.keySeeds?.[i] ?? globalThis.crypto.getRandomValues(new Uint8Array(32)));
  const publicKeys = keySeeds.map((s) => toHex(c.ed25519PublicKey(s)));
  const records: GroupMember[] = publicKeys.map((public_key, seat) => ({ member_id: `seat-${seat}`, public_key, seat, status: 'active' }));
  const hooksFor = (epoch: number): GroupHooks => {
    const ctx: HookContext = {
      role: 'host',
      options,
      args: [],
      stateDir: join(r.outDir, `leader-epoch-${epoch}`),
      decision: null,
      random: seeded(seed * 7919 + epoch),
    };
    return r.hooks.create(ctx) as GroupHooks;
  };

  const turnTimeoutMs = r.turnTimeoutMs ?? 0;
  const absences = new Map<number, GroupAbsence>();
  for (const a of r.absences ?? []) {
    if (!Number.isInteger(a.seat) || a.seat < 1 || a.seat >= n)
      throw new GroupRunError('GROUP_SEATS', `an absence needs a member seat from 1 to ${n - 1} (seat 0 leads), not ${a.seat}`);
    absences.set(a.seat, a);
  }
  return { r, autoplay, config, n, messages, seed, groupId, keySeeds, records, turnTimeoutMs, absences, hooksFor };
}

/** One seat's member: its replica and its own session directory, starting at epoch 0 under the first leader. */
function seatOf(s: RunSetup, m: GroupMember, seed: Uint8Array, leaderPublicKey: string): Seat {
  const { r, groupId } = s;
  return {
    seat: m.seat,
    seed,
    publicKey: m.public_key,
    record: m,
    replica: new GroupReplica({ crypto: r.crypto, groupId, viewerPublicKey: m.public_key, leaderPublicKey, leaderEpoch: 0 }),
    session: new GroupSessionRecord(
      join(r.outDir, `seat-${m.seat}`),
      {
        _group_transcript: 1,
        protocol_id: r.protocolId,
        group_id: groupId,
        member_public_key: m.public_key,
        leader_public_key: leaderPublicKey,
        leader_epoch: 0,
      },
      r.specText,
    ),
    random: seeded(s.seed * 1000 + m.seat + 1),
    clientSeq: 0,
    present: true,
    ...(s.absences.has(m.seat) && { absence: s.absences.get(m.seat)! }),
  };
}

/** The run in progress: the leader of the current epoch, every seat, the virtual clock and the counts. */
class LocalGroupRun {
  /** Virtual time (ms): it moves only when no one has a move (see wake). */
  private now = 0;
  private leader: GroupLeader;
  private readonly arbiter = new LocalArbiter();
  private epochs = 1;
  private readonly seats: Seat[];
  private readonly bySeat: Map<string, Seat>;
  private frames = 0;
  private readonly maxActions: number;
  private actions = 0;
  private accepted = 0;
  private refusals = 0;
  private reason: string | undefined;
  private turn = 0;
  private idle = 0;
  private readonly timeouts: GroupLocalResult['timeouts'] = [];
  private timeoutFailure: string | undefined;

  constructor(private readonly s: RunSetup) {
    const { r, groupId, keySeeds, records } = s;
    this.leader = GroupLeader.start({
      crypto: r.crypto,
      hooks: s.hooksFor(0),
      config: s.config,
      groupId,
      leaderSeed: toHex(keySeeds[0]!),
      leaderEpoch: 0,
      membershipVersion: s.n,
      members: records,
      turnTimeoutMs: s.turnTimeoutMs,
      now: this.now,
    });
    this.arbiter.open(groupId, this.leader.leaderPublicKey, 0);
    this.seats = records.map((m, i) => seatOf(s, m, keySeeds[i]!, this.leader.leaderPublicKey));
    this.bySeat = new Map(this.seats.map((seat) => [seat.publicKey, seat]));
    for (const seat of this.seats) this.deliverTo(seat, this.leader.bootstrapEnvelope(seat.publicKey), true);
    this.frames++;
    this.maxActions = r.maxActions ?? 20_000;
  }

  private deliverTo(s: Seat, env: unknown, bootstrap: boolean): void {
    if (!s.present || s.fault) return;
    const before = s.last;
    const res = s.replica.apply(env, { bootstrap });
    if (res.status === 'applied') {
      s.session.entry({ kind: 'envelope', bootstrap, envelope: env as Record<string, unknown> });
      s.last = env as Record<string, unknown>;
      return;
    }
    if (res.status === 'ignored') return;
    s.fault = `${res.code}: ${res.reason}`;
    const proof = before && typeof env === 'object' && env !== null ? groupProofOf(this.s.r.crypto, before, env as Record<string, unknown>) : undefined;
    if (proof) s.session.proof(proof);
  }

  private deliver(envs: Envelopes, bootstrap = false): void {
    this.frames++;
    for (const [pk, env] of Object.entries(envs)) {
      const s = this.bySeat.get(pk);
      if (s) this.deliverTo(s, env, bootstrap);
    }
  }

  play(): void {
    const r = this.s.r;
    while (!this.leader.completed) {
      const actors = this.seats.filter((s) => s.present && !s.fault && !s.away);
      // Turns resolved by the leader count too: a table of absent members must end as surely as a played one.
      if (this.actions + this.timeouts.length >= this.maxActions) {
        this.reason = `no completion after ${this.maxActions} actions`;
        break;
      }
      if (!actors.length || this.idle > actors.length) {
        this.idle = 0;
        if (this.wake()) continue;
        this.reason = actors.length ? (this.timeoutFailure ?? 'no member has anything to do, and the group has not completed') : 'no member is left';
        break;
      }
      const s = actors[this.turn++ % actors.length]!;
      const action = this.moveOf(s);
      if (action === null) {
        this.idle++;
        continue;
      }
      if (s.absence && this.accepted >= (s.absence.afterActions ?? 0)) {
        // Its turn has come, and it drops out instead of moving.
        this.dropOut(s, s.absence);
        continue;
      }
      this.idle = 0;
      this.offer(s, action);
      if (this.refusals > 200) {
        this.reason = 'the leader refused over 200 actions';
        break;
      }
      // The time the move took: whatever fell due meanwhile (a return, another member's deadline) happens now.
      if (r.actionMs) {
        this.now += r.actionMs;
        this.fireDue();
      }
      if (r.failoverAfter !== undefined && this.accepted === r.failoverAfter && this.epochs === 1 && !this.leader.completed) this.failover();
    }
  }

  /** What the seat's autoplay does from its own verified view, if it is an active member with a view. */
  private moveOf(s: Seat): Record<string, unknown> | null {
    const view = s.replica.view;
    const me = s.replica.members.find((m) => m.public_key === s.publicKey) ?? s.record;
    return view && me.status === 'active' ? this.s.autoplay(view, me, s.random) : null;
  }

  /** One action: the spec's action message first, then the leader; the envelopes it answers go out at once. */
  private offer(s: Seat, action: Record<string, unknown>): void {
    const { r, messages } = this.s;
    this.actions++;
    const clientSeq = s.clientSeq + 1;
    const errors = messages.check(clientSeq, action);
    if (errors.length) {
      this.refusals++;
      r.onAction?.(s.seat, action, false, `the spec refuses the ${messages.action} message: ${errors.map((e) => e.code).join(', ')}`);
      return;
    }
    try {
      const out = this.leader.applyInput({ actor_public_key: s.publicKey, client_seq: clientSeq, action }, this.now);
      s.clientSeq = clientSeq;
      this.accepted++;
      r.onAction?.(s.seat, action, true);
      this.deliver(out.envelopes);
    } catch (e) {
      if (!(e instanceof GroupLeaderError)) throw e;
      this.refusals++;
      r.onAction?.(s.seat, action, false, e.message);
    }
  }

  private failover(): void {
    const { r, groupId } = this.s;
    const failed = this.bySeat.get(this.leader.leaderPublicKey)!;
    this.leader.dispose();
    // The failed leader's process comes back as a plain member: its replica still holds the chain.
    const live = this.seats.filter((s) => s.present && !s.fault);
    // Each member names the successor from its own checkpoint; they must agree.
    const named = new Set(live.map((s) => serverlessSuccessor(s.replica.members, failed.publicKey)?.public_key));
    if (named.size !== 1) throw new Error('members disagree on the successor');
    const successor = this.bySeat.get([...named][0]!)!;
    // Over the network the others would find it unreachable and apply the rule again; this runner does not stage that.
    if (successor.away) throw new Error('the successor by the serverless rule is away: a staged failover does not combine with its absence');
    const checkpoint = successor.replica.checkpoint!;
    const epoch = this.leader.leaderEpoch + 1;
    const grant = this.arbiter.claim({ groupId, epoch, claimant: successor.publicKey, checkpointHash: String(checkpoint['checkpoint_hash']) });
    if (!grant.granted) throw new Error(`the arbiter refused the successor: ${grant.reason}`);
    this.leader = GroupLeader.fromCheckpoint(
      {
        crypto: r.crypto,
        hooks: this.s.hooksFor(epoch),
        config: this.s.config,
        groupId,
        leaderSeed: toHex(successor.seed),
        leaderEpoch: epoch,
        membershipVersion: successor.replica.membershipVersion,
        turnTimeoutMs: this.s.turnTimeoutMs,
        now: this.now,
      },
      checkpoint,
    );
    this.epochs++;
    for (const s of live) {
      s.replica.advanceEpoch(this.leader.leaderPublicKey, epoch);
      s.session.entry({ kind: 'epoch', leader_public_key: this.leader.leaderPublicKey, leader_epoch: epoch });
    }
    // The successor sees no connection from a member that is away.
    for (const s of this.seats) if (!s.present) this.leader.memberAbsent(s.publicKey, this.now);
    this.deliver(this.leader.lastEnvelopes);
  }

  private dropOut(s: Seat, a: GroupAbsence): void {
    const kind = a.kind ?? 'absent';
    s.away = { kind, until: a.returnAfterMs === undefined ? Infinity : this.now + a.returnAfterMs };
    delete s.absence;
    if (kind === 'absent') {
      s.present = false;
      this.leader.memberAbsent(s.publicKey, this.now);
    }
  }

  /** An absent member comes back as `join --resume` does: a fresh replica from its own transcript, then the leader's bootstrap. */
  private comeBack(s: Seat): void {
    const away = s.away!;
    delete s.away;
    if (away.kind !== 'absent') return;
    const header = s.session.header;
    s.session.close();
    const lines = readFileSync(s.session.transcriptPath, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
    const entries = lines.slice(1).map((l) => JSON.parse(l) as TranscriptEntry);
    const replica = new GroupReplica({
      crypto: this.s.r.crypto,
      groupId: this.s.groupId,
      viewerPublicKey: s.publicKey,
      leaderPublicKey: header.leader_public_key,
      leaderEpoch: header.leader_epoch,
    });
    for (const e of entries) {
      if (e.kind === 'epoch') replica.advanceEpoch(e.leader_public_key, e.leader_epoch);
      else if (replica.apply(e.envelope, { bootstrap: e.bootstrap }).status !== 'applied') s.fault = 'its own transcript does not replay';
      else s.last = e.envelope;
    }
    s.replica = replica;
    s.session = GroupSessionRecord.reopen(s.session.dir, header, entries.length);
    s.present = true;
    this.leader.memberPresent(s.publicKey, this.now);
    this.deliverTo(s, this.leader.bootstrapEnvelope(s.publicKey), true);
  }

  /** What is due by now: members coming back, then the turn timer if a deadline has passed. */
  private fireDue(): void {
    const now = this.now;
    for (const s of this.seats) if (s.away && s.away.until <= now) this.comeBack(s);
    if (this.leader.completed || (this.leader.turnDeadline() ?? Infinity) > now) return;
    const out = this.leader.onTurnTimer(now);
    for (const t of out.resolved) {
      this.timeouts.push({ seat: t.seat, reason: t.reason, at: now });
      this.deliver(t.envelopes);
    }
    for (const f of out.failed) this.timeoutFailure = `the timeout action for seat ${this.bySeat.get(f.public_key)?.seat} was refused: ${f.message}`;
  }

  /** No one has a move: the clock jumps to what comes next (a turn deadline, a return); false when nothing will. */
  private wake(): boolean {
    const next = Math.min(this.leader.turnDeadline() ?? Infinity, ...this.seats.map((s) => s.away?.until ?? Infinity));
    if (next === Infinity) return false;
    this.now = Math.max(this.now, next);
    this.fireDue();
    return true;
  }

  /** Each member closes its session directory with its own receipt; the leader goes. */
  finish(): GroupLocalResult {
    const c = this.s.r.crypto;
    const faulted = this.seats.find((s) => s.fault);
    if (faulted && !this.reason) this.reason = `seat ${faulted.seat} refused the leader's envelope: ${faulted.fault}`;

    const members = this.seats.map((s): GroupMemberResult => {
      const receipt = s.session.finish(c, s.seed, s.replica);
      return { seat: s.seat, public_key: s.publicKey, dir: s.session.dir, present: s.present, completed: receipt.completed, outcome: receipt.outcome, receipt };
    });
    this.leader.dispose();
    const reason = this.reason;
    return {
      completed: this.leader.completed && !faulted,
      outcome: this.leader.outcome,
      ...(reason && { reason }),
      groupId: this.s.groupId,
      actions: this.actions,
      refusals: this.refusals,
      frames: this.frames,
      epochs: this.epochs,
      timeouts: this.timeouts,
      elapsedMs: this.now,
      members,
    };
  }
}
