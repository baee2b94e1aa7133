/**
 * An authoritative group over iroh with a registry's groups API: the reference's way (agent/group.py,
 * proto/group_runtime.py, docs/multiplayer.md), so that its agents and ours lead and join each other's
 * groups.
 *
 * The registry holds the room: its members (id and seat, assigned there), the leader's endpoint (an
 * iroh ticket bound by the leader's signature), its lease and fencing epoch, and the recovery floor
 * (the digest of a checkpoint some member holds). No game traffic passes through it.
 *
 * - The leader posts the invitation, opens the group (it holds seat 0), renews its lease every third of
 *   it, and admits each channel: the member's `join` → the leader's signed `admission` with a fresh
 *   challenge → the member posts the admission (signed by both) to the registry, which gives it a
 *   member id and seat → the member's `ready`, signed over the challenge, the id and the seat, which the
 *   leader checks against the registry's listing. A lobby starts once the registry counts the members
 *   its start policy needs; later joiners get a membership frame, returning ones a bootstrap.
 * - A member's channel is an iroh connection from a throwaway node key: the channel proof, not the
 *   connection, says who it is. It acknowledges every envelope it applies and pings the leader; when
 *   the leader goes silent or away, it asks the registry: a newer epoch is followed, a live lease is
 *   waited out, an expired one is claimed (the registry grants one claim per epoch) from the member's
 *   own signed checkpoint, and the winner leads the next epoch from it on a new endpoint.
 *
 * Envelopes, checkpoints and views are the leader's (leader.ts), checked by each member's replica
 * (member.ts) and recorded in its session directory (session-dir.ts), as over libp2p.
 */
import { existsSync } from 'node:fs';
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { ensureWritableDir } from '../files/write.js';
import type { GroupHooks, GroupMember } from '../hooks/types.js';
import { AdmissionError, LeaderAdmission } from '../group/admission.js';
import {
  ActionOutbox,
  CheckpointFloor,
  isActionId,
  pongMessage,
  readMemberMessage,
  receiptMessage,
  rejectionMessage,
  type ChannelContext,
} from '../group/channel.js';
import { GroupLeaderError, groupConfigFromSpec, type GroupLeader } from '../group/leader.js';
import { GroupEpochError, type ReplicaRefusal } from '../group/member.js';
import { checkChannelChallenge, signChannelReady, transportBindingCanonical, verifyAdmission } from '../group/wire.js';
import { buildInvitation, RegistryError, type GroupRecord, type RegistryClient } from '../registry/client.js';
import { GROUP_FINAL_STATUSES, leaseExpired, leaseSecondsOf, listedMember, startReady } from '../registry/group.js';
import { INVITATION_TYPES, type InvitationType } from '../registry/invitation.js';
import {
  autoplayOf,
  GroupNetError,
  MemberCore,
  memberDir,
  nextLine,
  parseLine,
  processClock,
  safeEmit,
  secureRandom,
  sendLine,
  type GroupEvent,
  type GroupProtocol,
  type GroupRunResult,
} from './group-core.js';
import { followGroup, playReference, sleepOn, type FollowedLeader, type LineLink } from './group-follower.js';
import { GroupHub, type HubClock, type LeaderEnd, type MemberLink, type TimerHandle } from './group-hub.js';
import { createIrohEndpoint } from './iroh-node.js';
import { decodeNodeTicket, encodeNodeTicket } from './iroh-ticket.js';
import { DEFAULT_MAX_LINE_BYTES, LineTransport, type ByteStream } from './line-transport.js';

/** The reference waits 30 s for each admission frame. */
const ADMISSION_MS = 30_000;
/** Admission frames are small; a peer not yet admitted gets no more. */
const ADMISSION_LINE_BYTES = 64 << 10;
/** The reference's member heartbeat and invitation renewal periods. */
const MEMBER_HEARTBEAT_MS = 5_000;
const RENEW_MS = 120_000;
/** How long a member dials a leader before asking the registry again. */
const DIAL_MS = 10_000;
/** Receipts still in flight when a group completes get this long before the leader closes its channels. */
const CLOSE_GRACE_MS = 1_000;

export interface IrohGroupRunResult extends GroupRunResult {
  groupId: string;
  /** The role this agent ended in (a member that won a claim ends as leader). */
  role: 'leader' | 'member';
  /** The status this agent set on the registry, when it did (a leader at the end of a completed group). */
  statusPosted?: string;
  /** The replica's refusal code, when the leader's envelope was refused. */
  fault?: ReplicaRefusal;
}

const randomHex = (n: number) => toHex(globalThis.crypto.getRandomValues(new Uint8Array(n)));

/** The reference's channels carry no heartbeat frames: a `_sys` line where it expects `join` or `ready` fails its admission. */
const channel = (stream: ByteStream) => new LineTransport(stream, { maxLineBytes: ADMISSION_LINE_BYTES, heartbeatIntervalMs: 0 });

const message = (e: unknown) => ((e as Error)?.message ?? String(e)).split('\n')[0]!.slice(0, 200);

/** What a leader and its members ask of the registry's groups API: the RegistryClient, or an in-memory registry (group-virtual.ts). */
export type GroupRegistry = Pick<
  RegistryClient,
  'getGroup' | 'getGroupByPost' | 'admitGroupMember' | 'groupHeartbeat' | 'groupMemberHeartbeat' | 'claimGroupLeader' | 'setGroupStatus'
>;

/** What a host asks besides: its invitation, and the group it opens. */
export type GroupHostRegistry = GroupRegistry & Pick<RegistryClient, 'postInvitation' | 'createGroup' | 'cancelInvitation' | 'renewInvitation'>;

/** An endpoint of this agent's whose accepted channels wait until a hub takes them. */
export interface GroupEndpoint {
  ticket: string;
  handTo(hub: IrohLeaderHub): void;
  shutdown(): Promise<void>;
}

/** How channels are opened: iroh endpoints (irohTransport), or in-memory pairs (group-virtual.ts). */
export interface GroupTransport {
  /** A channel to the endpoint a ticket names; `release` frees what the dial took. */
  dial(ticket: string): Promise<{ link: LineLink; release(): Promise<void> }>;
  /** An endpoint for this seed, to lead from. */
  listen(seed: Uint8Array, bind?: string): Promise<GroupEndpoint>;
}

/** The reference's transport: a member dials from a throwaway node key (the channel proof, not the connection, says who it is). */
export const irohTransport: GroupTransport = {
  async dial(ticket) {
    const ep = await createIrohEndpoint(globalThis.crypto.getRandomValues(new Uint8Array(32)));
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const gaveUp = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${DIAL_MS} ms`)), DIAL_MS)));
      const link = channel((await Promise.race([ep.connect(decodeNodeTicket(ticket)), gaveUp])).stream);
      return { link, release: () => ep.shutdown() };
    } catch (e) {
      await ep.shutdown();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  },
  async listen(seed, bind) {
    let hub: IrohLeaderHub | undefined;
    const early: LineLink[] = [];
    const ep = await createIrohEndpoint(seed, { ...(bind && { bind }), onStream: (s) => (hub ? void hub.serve(channel(s)) : early.push(channel(s))) });
    try {
      const ticket = encodeNodeTicket(await ep.address());
      return {
        ticket,
        handTo(h) {
          hub = h;
          for (const l of early.splice(0)) void h.serve(l);
        },
        shutdown: () => ep.shutdown(),
      };
    } catch (e) {
      await ep.shutdown();
      throw e;
    }
  },
};

/**
 * A timer that fires every `ms` on the clock until stopped. It is background work (a poll, a heartbeat,
 * a renewal): on the process clock it does not keep Node running by itself.
 */
function every(clock: HubClock, ms: number, fire: () => void): () => void {
  let handle: TimerHandle;
  let stopped = false;
  const arm = () => {
    handle = clock.setTimer(ms, () => {
      if (stopped) return;
      arm();
      fire();
    });
    (handle as { unref?: () => void } | undefined)?.unref?.();
  };
  arm();
  return () => {
    stopped = true;
    clock.clearTimer(handle);
  };
}

export interface IrohLeaderOptions {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: GroupProtocol;
  options: Record<string, unknown>;
  client: GroupRegistry;
  /** The registry's record as this leader's epoch begins: a lobby, or the record a granted claim answered. */
  group: GroupRecord;
  /** The leader's own seat. */
  self: MemberCore;
  /** A successor's start: the checkpoint (certified by the previous leader) its epoch resumes from. */
  checkpoint?: Record<string, unknown>;
  random: () => number;
  onEvent?: GroupEvent;
  actionDelayMs?: number;
  /** The turn deadline when the protocol declares none (default DEFAULT_TURN_TIMEOUT_MS; 0: never). */
  turnTimeoutMs?: number;
  /** The clock turn deadlines and the own seat's pacing are kept on (default: the process clock). */
  clock?: HubClock;
}

export type { LeaderEnd } from './group-hub.js';

/** A member's channel as the reference frames it: every envelope as it is (a member takes its first as its bootstrap). */
class IrohLink implements MemberLink {
  constructor(readonly t: LineLink) {}

  deliver(envelope: unknown): boolean {
    return sendLine(this.t, envelope);
  }

  close(): void {
    this.t.close();
  }
}

/**
 * One leader epoch over iroh: admission through the registry (which lists the members and counts the
 * lobby), the reference's channel (acks into the recovery floor, pings), and the shared hub
 * (group-hub.ts) for ordering, fan-out, turn deadlines and its own seat.
 */
export class IrohLeaderHub {
  readonly floor: CheckpointFloor;
  readonly done: Promise<LeaderEnd>;
  private readonly hub: GroupHub<IrohLink>;
  private readonly admission: LeaderAdmission;
  private readonly publicKey: string;
  private readonly ctx: ChannelContext;
  private group: GroupRecord;
  private readonly clock: HubClock;
  private stopLobbyPoll: (() => void) | undefined;

  constructor(private readonly o: IrohLeaderOptions) {
    this.group = o.group;
    this.clock = o.clock ?? processClock;
    this.ctx = { groupId: o.group.group_id, leaderEpoch: o.group.leader_epoch };
    this.hub = new GroupHub({
      crypto: o.crypto,
      seed: o.seed,
      protocol: o.protocol,
      options: o.options,
      groupId: o.group.group_id,
      leaderEpoch: o.group.leader_epoch,
      self: o.self,
      random: o.random,
      clock: this.clock,
      onCheckpoint: (cp) => this.floor.record(cp),
      ...(o.onEvent && { onEvent: o.onEvent }),
      ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
      ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }),
    });
    this.publicKey = this.hub.publicKey;
    this.admission = new LeaderAdmission(
      o.crypto,
      { groupId: o.group.group_id, protocolId: o.protocol.protocolId, leaderEpoch: o.group.leader_epoch },
      toHex(o.seed),
    );
    this.floor = new CheckpointFloor(this.publicKey);
    this.done = this.hub.done;
    if (o.checkpoint) {
      // The server's members are the room now; the leader reconciles them with the checkpoint's (as the reference's GroupAuthority does).
      this.hub.resume(o.checkpoint, this.group.membership_version, this.group.members);
    } else {
      // The registry's count decides the start; a member admitted there whose channel is still on its way counts too.
      this.stopLobbyPoll = every(this.clock, 1_000, () => void this.refreshLobby());
    }
  }

  get leader(): GroupLeader | undefined {
    return this.hub.leader;
  }

  get groupId(): string {
    return this.ctx.groupId;
  }

  get epoch(): number {
    return this.ctx.leaderEpoch;
  }

  private async refreshLobby(): Promise<void> {
    if (this.hub.leader || this.hub.ended) return;
    try {
      this.group = await this.o.client.getGroup(this.ctx.groupId);
    } catch (e) {
      this.hub.emit('registry_failed', { message: message(e) });
      return;
    }
    this.maybeStart();
  }

  private maybeStart(): void {
    if (this.hub.leader || this.hub.ended || !startReady(this.group, this.hub.config.start_policy)) return;
    this.stopLobbyPoll?.();
    try {
      this.hub.start(this.group.members, this.group.membership_version);
    } catch (e) {
      if (!(e instanceof GroupLeaderError)) throw e;
      return this.finish({ completed: false, outcome: null, reason: `the group cannot start: ${e.message}` });
    }
    this.o.client.setGroupStatus(this.ctx.groupId, this.ctx.leaderEpoch, 'active').then(
      () => undefined,
      (e: unknown) => this.hub.emit('group_status_failed', { status: 'active', message: message(e) }),
    );
    this.hub.afterFrame();
  }

  /** After each frame: the leader's own seat may act, a completed group ends, and the turn timer is set for the next deadline. */
  afterFrame(): void {
    this.hub.afterFrame();
  }

  /** Ends this epoch (completed, fenced by the registry, or unable to start); the channels stay open until close(). */
  finish(end: LeaderEnd): void {
    this.stopLobbyPoll?.();
    this.hub.finish(end);
  }

  /** Serves one accepted channel: admission, then the member's inputs, acks and pings. */
  async serve(t: LineLink): Promise<void> {
    const refuse = (reason: string) => {
      this.hub.emit('group_join_rejected', { reason });
      sendLine(t, { _group: 'error', reason });
      t.close();
    };
    let pk: string | undefined;
    let link: IrohLink | undefined;
    try {
      if (this.hub.ended) return refuse('the group has ended');
      const join = await nextLine(t, ADMISSION_MS, 'group join');
      const challenge = randomHex(16);
      let offer;
      try {
        offer = this.admission.offer(join, challenge);
      } catch (e) {
        if (e instanceof AdmissionError) return refuse(e.message);
        throw e;
      }
      const member = offer.pending.member_public_key;
      if (member === this.publicKey) return refuse('the leader does not admit itself');
      // Fencing: an epoch the registry has moved past admits no one.
      const current = await this.o.client.getGroup(this.ctx.groupId);
      if (current.leader_public_key !== this.publicKey || current.leader_epoch !== this.ctx.leaderEpoch)
        return refuse('this process is not the current leader epoch');
      sendLine(t, offer.admission);
      const ready = await nextLine(t, ADMISSION_MS, 'group ready');
      const latest = await this.o.client.getGroup(this.ctx.groupId);
      let admitted: GroupMember;
      try {
        admitted = this.admission.accept(offer.pending, ready, listedMember(latest, member));
      } catch (e) {
        if (e instanceof AdmissionError) return refuse(e.message);
        throw e;
      }
      if (this.hub.ended) return refuse('the group has ended');
      pk = member;
      this.group = latest;
      t.setMaxLineBytes?.(DEFAULT_MAX_LINE_BYTES);
      link = new IrohLink(t);
      this.attach(admitted, link);
      await this.follow(pk, t);
    } catch (e) {
      if (e instanceof RegistryError || e instanceof GroupNetError) this.hub.emit('group_join_rejected', { reason: message(e) });
      else if (!(e instanceof GroupLeaderError)) this.hub.emit('member_failed', { message: message(e) });
      t.close();
    } finally {
      if (pk && link) this.hub.disconnect(pk, link);
      else t.close();
    }
  }

  private attach(member: GroupMember, link: IrohLink): void {
    this.hub.connect(member, link);
    if (!this.hub.leader) return this.maybeStart();
    try {
      this.hub.welcome(member, this.group.membership_version);
    } catch (e) {
      if (!(e instanceof GroupLeaderError)) throw e;
      this.hub.emit('group_join_rejected', { reason: e.message });
      sendLine(link.t, { _group: 'error', reason: e.message });
      this.hub.disconnect(member.public_key, link);
    }
  }

  private async follow(pk: string, t: LineLink): Promise<void> {
    for (;;) {
      const r = await t.recv(60_000);
      if (r.line === null) {
        if (r.timedOut) continue;
        return;
      }
      const m = readMemberMessage(parseLine(r.line), this.ctx, pk);
      if (m.kind === 'input') {
        const receipt = isActionId(m.actionId)
          ? this.hub.input(pk, m.clientSeq, m.action)
          : { status: 'rejected', reason: 'action_id must be 32-char lowercase hex', client_seq: m.clientSeq };
        const accepted = receipt['status'] === 'accepted';
        if (receipt['status'] === 'rejected') {
          sendLine(t, rejectionMessage(String(receipt['reason']), m.clientSeq, m.actionId));
          this.hub.emit('action_refused', { public_key: pk, reason: String(receipt['reason']) });
        } else sendLine(t, receiptMessage(receipt, m.actionId));
        if (accepted) this.hub.afterFrame();
      } else if (m.kind === 'misdirected') sendLine(t, rejectionMessage('group, epoch, or actor mismatch', m.clientSeq, m.actionId, true));
      else if (m.kind === 'ack') this.floor.acknowledge(pk, m.seq, m.frameHash, m.checkpointHash);
      else if (m.kind === 'ping') sendLine(t, pongMessage(this.ctx, m.nonce));
    }
  }

  /** Closes every member channel after a grace for the lines still in flight. */
  async close(graceMs = CLOSE_GRACE_MS): Promise<void> {
    await this.hub.close(graceMs);
  }
}

/**
 * Renews the lease every third of it, advertising the newest checkpoint a member acknowledged. A
 * refusal by the registry that names another epoch or leader (409) fences the leader at once; failing
 * to renew for a whole lease does too, since a member may then have claimed.
 */
function leaseLoop(o: {
  client: GroupRegistry;
  hub: IrohLeaderHub;
  group: GroupRecord;
  ticket: string;
  protocolId: string;
  clock: HubClock;
  onEvent?: GroupEvent;
}): () => void {
  const leaseMs = leaseSecondsOf(o.group) * 1000;
  let advertised = { seq: o.group.checkpoint_seq, checkpointHash: o.group.checkpoint_hash };
  let lastSuccess = o.clock.now();
  let stopped = false;
  let timer: TimerHandle | undefined;
  const tick = async () => {
    const floor = o.hub.floor.floor();
    const next = floor && floor.seq >= advertised.seq ? floor : advertised;
    try {
      await o.client.groupHeartbeat(o.hub.groupId, {
        protocolId: o.protocolId,
        leaderEpoch: o.hub.epoch,
        checkpointSeq: next.seq,
        checkpointHash: next.checkpointHash,
        ticket: o.ticket,
      });
      lastSuccess = o.clock.now();
      advertised = next;
    } catch (e) {
      safeEmit(o.onEvent, 'group_leader_lease_renew_failed', { message: message(e) });
      if ((e instanceof RegistryError && e.status === 409) || o.clock.now() - lastSuccess >= leaseMs) {
        safeEmit(o.onEvent, 'group_leader_fenced', { epoch: o.hub.epoch });
        o.hub.finish({ completed: false, outcome: null, reason: 'leader_lease_lost' });
        stopped = true;
      }
    }
    if (!stopped) timer = o.clock.setTimer(Math.max(1_000, leaseMs / 3), () => void tick());
  };
  timer = o.clock.setTimer(Math.max(1_000, leaseMs / 3), () => void tick());
  return () => {
    stopped = true;
    if (timer !== undefined) o.clock.clearTimer(timer);
  };
}

type LeadOptions = IrohLeaderOptions & { ticket: string; clock: HubClock };

/** Runs one leader epoch to its end: lease renewal while it runs, the closed status when it completes. */
async function leadEpoch(o: LeadOptions, hub: IrohLeaderHub): Promise<LeaderEnd & { statusPosted?: string }> {
  const stopLease = leaseLoop({
    client: o.client,
    hub,
    group: o.group,
    ticket: o.ticket,
    protocolId: o.protocol.protocolId,
    clock: o.clock,
    ...(o.onEvent && { onEvent: o.onEvent }),
  });
  let end: LeaderEnd;
  try {
    end = await hub.done;
  } finally {
    stopLease();
  }
  let statusPosted: string | undefined;
  if (end.completed) {
    try {
      await o.client.setGroupStatus(hub.groupId, hub.epoch, 'closed');
      statusPosted = 'closed';
    } catch (e) {
      safeEmit(o.onEvent, 'group_status_failed', { status: 'closed', message: message(e) });
    }
  }
  await hub.close();
  return { ...end, ...(statusPosted && { statusPosted }) };
}

export interface IrohGroupHostHandle {
  postId: string;
  groupId: string;
  ticket: string;
  dir: string;
  done: Promise<IrohGroupRunResult>;
  stop(): Promise<void>;
}

/**
 * Posts the invitation for a new group, opens it at the registry and leads it, playing seat 0. The
 * invitation carries the hooks' host metadata (name, tags, type) and their default options under the
 * given ones, as the reference's host posts them: a successor leads with the same options.
 */
export async function hostGroupIroh(o: {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: GroupProtocol;
  options: Record<string, unknown>;
  sessionsDir: string;
  client: GroupHostRegistry;
  controlMode?: string;
  ttlMinutes?: number;
  bind?: string;
  actionDelayMs?: number;
  /** The turn deadline when the protocol declares none (default DEFAULT_TURN_TIMEOUT_MS; 0: never). */
  turnTimeoutMs?: number;
  onEvent?: GroupEvent;
  /** Where channels come from (default: iroh). */
  transport?: GroupTransport;
  /** The clock lease renewals, pacing and turn deadlines are kept on (default: the process clock). */
  clock?: HubClock;
  /** Randomness for the leader's hooks and its own seat (default: the OS CSPRNG). */
  random?: () => number;
}): Promise<IrohGroupHostHandle> {
  const c = o.crypto;
  const clock = o.clock ?? processClock;
  const random = o.random ?? secureRandom;
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const autoplay = autoplayOf(o.protocol);
  const config = groupConfigFromSpec(o.protocol.spec);
  const meta = (
    o.protocol.hooks.create({ role: 'host', options: o.options, args: [], stateDir: '', decision: null, random }) as GroupHooks
  ).proto_host_metadata?.();
  const [name, tags, type, defaults] = meta ?? [o.protocol.spec.name, '', 'supply', {}];
  const options = { ...(defaults ?? {}), ...o.options };
  const pk = toHex(c.ed25519PublicKey(o.seed));
  const ep = await (o.transport ?? irohTransport).listen(o.seed, o.bind);
  const ticket = ep.ticket;
  let stopRenew = () => {};
  try {
    const { postId } = await o.client.postInvitation(
      buildInvitation(c, o.seed, {
        message: String(name),
        tags: String(tags).split(','),
        ticket,
        protocolId: o.protocol.protocolId,
        controlMode: o.controlMode ?? 'autonomous',
        options,
        transport: 'iroh',
        type: (INVITATION_TYPES as readonly string[]).includes(type) ? (type as InvitationType) : 'supply',
      }),
    );
    let group: GroupRecord;
    try {
      group = await o.client.createGroup(postId, {
        min_participants: config.min_participants,
        max_participants: config.max_participants,
        allow_late_join: config.allow_late_join,
        recovery_mode: config.recovery_mode,
      });
    } catch (e) {
      // No group behind it: the post would only send members to a leader that admits no one.
      await o.client.cancelInvitation(postId).catch(() => undefined);
      throw e;
    }
    if (group.leader_public_key !== pk || group.protocol_id !== o.protocol.protocolId)
      throw new GroupNetError('GROUP_NET_PROTOCOL', 'the registry opened the group for another leader or protocol');
    safeEmit(o.onEvent, 'invite_created', { post_id: postId, group_id: group.group_id });
    const dir = memberDir(o.sessionsDir, group.group_id, pk);
    const self = MemberCore.create(
      c,
      o.seed,
      dir,
      {
        _group_transcript: 1,
        protocol_id: o.protocol.protocolId,
        group_id: group.group_id,
        member_public_key: pk,
        leader_public_key: pk,
        leader_epoch: group.leader_epoch,
      },
      o.protocol.specText,
      autoplay,
      random,
    );
    const lo: LeadOptions = {
      crypto: c,
      seed: o.seed,
      protocol: o.protocol,
      options,
      client: o.client,
      group,
      self,
      random,
      ticket,
      clock,
      ...(o.onEvent && { onEvent: o.onEvent }),
      ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
      ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }),
    };
    const hub = new IrohLeaderHub(lo);
    ep.handTo(hub);
    stopRenew = renewLoop(o.client, postId, (o.ttlMinutes ?? 30) * 60_000, clock, o.onEvent);
    const done = leadEpoch(lo, hub).then((end): IrohGroupRunResult => {
      stopRenew();
      self.finish();
      return {
        completed: end.completed && self.completed,
        outcome: end.outcome,
        dir,
        epochs: 1,
        groupId: group.group_id,
        role: 'leader',
        ...(end.reason && { reason: end.reason }),
        ...(end.statusPosted && { statusPosted: end.statusPosted }),
      };
    });
    let stopped = false;
    return {
      postId,
      groupId: group.group_id,
      ticket,
      dir,
      done,
      async stop() {
        if (stopped) return;
        stopped = true;
        stopRenew();
        hub.finish({ completed: false, outcome: null, reason: 'stopped' });
        await ep.shutdown();
      },
    };
  } catch (e) {
    stopRenew();
    await ep.shutdown();
    throw e;
  }
}

/** Renews a group's invitation every 120 s for at most `forMs` (the reference stops at its first failure). */
function renewLoop(client: GroupHostRegistry, postId: string, forMs: number, clock: HubClock, onEvent?: GroupEvent): () => void {
  const until = clock.now() + forMs;
  const stop = every(clock, RENEW_MS, () => {
    if (clock.now() > until) return stop();
    client.renewInvitation(postId).then(
      () => safeEmit(onEvent, 'invitation_renewed', {}),
      (e: unknown) => {
        safeEmit(onEvent, 'invitation_renew_failed', { message: message(e) });
        stop();
      },
    );
  });
  return stop;
}

/**
 * A directory no earlier run of this member wrote: a leader that crashed and comes back as a member
 * starts a new transcript (its replica takes the successor's bootstrap), and keeps the one it led.
 */
function freshDir(base: string): string {
  let dir = base;
  for (let n = 2; existsSync(dir); n++) dir = `${base}-${n}`;
  return dir;
}

/** The leader's ticket is only taken from the registry when the leader's own signature binds it to this protocol. */
function checkLeaderBinding(c: Crypto, g: GroupRecord): void {
  const canonical = transportBindingCanonical(g.leader_public_key, 'iroh', g.iroh_ticket, g.protocol_id);
  const sig = g.transport_binding_signature;
  if (!/^[0-9a-fA-F]{128}$/.test(sig) || !c.ed25519Verify(fromHex(g.leader_public_key), utf8(canonical), fromHex(sig.toLowerCase())))
    throw new GroupNetError('GROUP_NET_PROTOCOL', "the group's leader ticket is not signed by its leader");
}

export interface IrohGroupJoin {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: GroupProtocol;
  client: GroupRegistry;
  postId: string;
  /** The invitation's options (a successor leads with them). */
  options: Record<string, unknown>;
  sessionsDir: string;
  /** How long the group may go without a reachable leader before this member gives up (default 120 s). */
  reconnectMs?: number;
  controlMode?: string;
  actionDelayMs?: number;
  /** The turn deadline this member keeps if it comes to lead (when the protocol declares none). */
  turnTimeoutMs?: number;
  onEvent?: GroupEvent;
  /** Where channels come from (default: iroh). */
  transport?: GroupTransport;
  /** The clock silences, waits, heartbeats and (as a successor) turn deadlines are kept on (default: the process clock). */
  clock?: HubClock;
  /** Randomness for this seat's player, its claim offset and (as a successor) the leader's hooks (default: the OS CSPRNG). */
  random?: () => number;
}

/** A member's run, with what it needs on every channel. */
interface Joined {
  o: IrohGroupJoin;
  clock: HubClock;
  transport: GroupTransport;
  random: () => number;
  dir: string;
  outbox: ActionOutbox;
  emit: GroupEvent;
}

/**
 * Joins the group a registry post opened and plays this member's seat until the group completes:
 * through a failover too, following the registry's newer epoch, or claiming it and leading.
 */
export async function joinGroupIroh(o: IrohGroupJoin): Promise<IrohGroupRunResult> {
  const c = o.crypto;
  const pk = toHex(c.ed25519PublicKey(o.seed));
  // An unattended member needs the protocol's player before it takes a seat.
  autoplayOf(o.protocol);
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const group = await o.client.getGroupByPost(o.postId);
  if (group.protocol_id !== o.protocol.protocolId)
    throw new GroupNetError('GROUP_NET_PROTOCOL', `the group plays protocol ${group.protocol_id}, the invitation names ${o.protocol.protocolId}`);
  if (GROUP_FINAL_STATUSES.includes(group.status)) throw new GroupNetError('GROUP_NET_REFUSED', `the group is ${group.status}`);
  if (group.leader_public_key === pk) throw new GroupNetError('GROUP_NET_REFUSED', 'this agent leads the group');
  const groupId = group.group_id;
  const clock = o.clock ?? processClock;
  const j: Joined = {
    o,
    clock,
    transport: o.transport ?? irohTransport,
    random: o.random ?? secureRandom,
    dir: freshDir(memberDir(o.sessionsDir, groupId, pk)),
    outbox: new ActionOutbox(),
    emit: (type, data) => safeEmit(o.onEvent, type, data),
  };
  let core: MemberCore | undefined;
  let heartbeatFailed = false;
  const stopHeartbeat = every(clock, MEMBER_HEARTBEAT_MS, () => {
    o.client.groupMemberHeartbeat(groupId).then(
      () => (heartbeatFailed = false),
      (e: unknown) => {
        if (!heartbeatFailed) j.emit('group_member_heartbeat_failed', { message: message(e) });
        heartbeatFailed = true;
      },
    );
  });
  const result = (epochs: number, r: Partial<IrohGroupRunResult>): IrohGroupRunResult => {
    const cp = core?.replica.checkpoint;
    return {
      completed: core?.completed ?? false,
      outcome: (cp?.['outcome'] as string | null | undefined) ?? null,
      dir: j.dir,
      epochs,
      groupId,
      role: 'member',
      ...r,
    };
  };
  try {
    const end = await followGroup<GroupRecord, (LeaderEnd & { statusPosted?: string }) | undefined>({
      clock,
      leader: group,
      follow: async (g, known) => {
        const f = await followLeader(j, g, known);
        if (f.core) core = f.core;
        return f;
      },
      next: (lost, known, lostSince) => afterLoss(j, lost, known, lostSince),
    });
    core = end.core;
    if (end.how === 'fault')
      return result(end.epochs, { reason: `the leader's envelope was refused: ${core?.fault ?? 'fault'}`, ...(core?.faultCode && { fault: core.faultCode }) });
    if (end.how === 'ended') return result(end.epochs, { reason: end.reason });
    if (end.how === 'led') {
      const led = end.end!;
      return {
        ...result(end.epochs, { role: 'leader' }),
        ...(led.reason && { reason: led.reason }),
        ...(led.statusPosted && { statusPosted: led.statusPosted }),
        completed: led.completed && (core?.completed ?? false),
      };
    }
    return result(end.epochs, {});
  } finally {
    stopHeartbeat();
    core?.finish();
  }
}

/**
 * The leader is lost: the registry says what became of it. A newer epoch is followed, a live lease
 * waited out, an expired one claimed; whoever wins the claim leads the next epoch.
 */
async function afterLoss(
  j: Joined,
  lost: GroupRecord,
  core: MemberCore,
  lostSince: number,
): Promise<{ follow: GroupRecord } | { lead: () => Promise<LeaderEnd & { statusPosted?: string }> } | { end: string }> {
  const { o, clock, emit } = j;
  const giveUpMs = o.reconnectMs ?? 120_000;
  emit('group_leader_disconnected', { epoch: core.replica.leaderEpoch, seq: core.replica.seq });
  for (;;) {
    if (clock.now() - lostSince > giveUpMs) throw new GroupNetError('GROUP_NET_UNREACHABLE', `no leader for ${Math.round(giveUpMs / 1000)} s`);
    let g: GroupRecord;
    try {
      g = await o.client.getGroup(lost.group_id);
    } catch (e) {
      emit('registry_failed', { message: message(e) });
      await sleepOn(clock, 1_000);
      continue;
    }
    if (GROUP_FINAL_STATUSES.includes(g.status)) return { end: `the group is ${g.status}` };
    if (g.leader_epoch > core.replica.leaderEpoch || !leaseExpired(g)) {
      await sleepOn(clock, 500);
      return { follow: g };
    }
    if (!core.replica.checkpoint) throw new GroupNetError('GROUP_NET_FAULT', 'no checkpoint to claim leadership from');
    // A random arrival offset, as the reference's, so that no seat always wins the race.
    await sleepOn(clock, Math.floor(j.random() * 250));
    const claimed = await claim(j, g, core);
    if (claimed) return { lead: claimed };
    await sleepOn(clock, 200);
  }
}

/** Claims the next epoch with a new endpoint; if the registry grants it, the lead of that epoch to run. */
async function claim(j: Joined, g: GroupRecord, core: MemberCore): Promise<(() => Promise<LeaderEnd & { statusPosted?: string }>) | undefined> {
  const { o, emit } = j;
  const cp = core.replica.checkpoint!;
  const ep = await j.transport.listen(o.seed);
  let claimed: GroupRecord;
  try {
    claimed = await o.client.claimGroupLeader(g.group_id, {
      protocolId: o.protocol.protocolId,
      expectedEpoch: g.leader_epoch,
      checkpoint: cp,
      ticket: ep.ticket,
    });
  } catch (e) {
    await ep.shutdown();
    if (!(e instanceof RegistryError)) throw e;
    emit('group_claim_refused', { message: message(e) });
    return undefined;
  }
  return async () => {
    try {
      try {
        core.advanceEpoch(core.publicKey, claimed.leader_epoch);
      } catch (e) {
        if (!(e instanceof GroupEpochError)) throw e;
        throw new GroupNetError('GROUP_NET_FAULT', e.message);
      }
      // Its action to the lost leader got no receipt: under its own lead the seat acts afresh.
      core.pending = false;
      emit('leader_elected', { epoch: claimed.leader_epoch, public_key: core.publicKey });
      const lo: LeadOptions = {
        crypto: o.crypto,
        seed: o.seed,
        protocol: o.protocol,
        options: o.options,
        client: o.client,
        group: claimed,
        self: core,
        checkpoint: cp as unknown as Record<string, unknown>,
        random: j.random,
        ticket: ep.ticket,
        clock: j.clock,
        ...(o.onEvent && { onEvent: o.onEvent }),
        ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
        ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }),
      };
      let hub: IrohLeaderHub;
      try {
        hub = new IrohLeaderHub(lo);
      } catch (e) {
        if (!(e instanceof GroupLeaderError)) throw e;
        throw new GroupNetError('GROUP_NET_FAULT', `cannot lead from the checkpoint: ${e.message}`);
      }
      ep.handTo(hub);
      hub.afterFrame();
      return await leadEpoch(lo, hub);
    } finally {
      await ep.shutdown();
    }
  };
}

/**
 * One channel to the group's current leader (as the registry names it): admission, then envelopes,
 * receipts and this seat's actions until the group completes or the leader is lost.
 */
async function followLeader(j: Joined, group: GroupRecord, known: MemberCore | undefined): Promise<FollowedLeader> {
  try {
    return await channelToLeader(j, group, known);
  } catch (e) {
    // A member already playing does not give up on one leader's refusal or fault: the registry is asked again.
    if (known && e instanceof GroupNetError) {
      j.emit('group_reconnect_failed', { epoch: group.leader_epoch, message: message(e) });
      return { outcome: 'lost', why: message(e) };
    }
    throw e;
  }
}

async function channelToLeader(j: Joined, group: GroupRecord, known: MemberCore | undefined): Promise<FollowedLeader> {
  const { o, emit } = j;
  const c = o.crypto;
  const pk = toHex(c.ed25519PublicKey(o.seed));
  checkLeaderBinding(c, group);
  let dialed: { link: LineLink; release(): Promise<void> };
  try {
    dialed = await j.transport.dial(group.iroh_ticket);
  } catch (e) {
    emit('dial_failed', { leader: group.leader_public_key, message: message(e) });
    return { outcome: 'lost', why: `cannot reach the leader (${message(e)})` };
  }
  const t = dialed.link;
  try {
    const seedHex = toHex(o.seed);
    const nonce = randomHex(16);
    const ctx: ChannelContext = { groupId: group.group_id, leaderEpoch: group.leader_epoch };
    sendLine(t, { _group: 'join', group_id: group.group_id, member_public_key: pk, join_nonce: nonce, member_control_mode: o.controlMode ?? 'autonomous' });
    let admission: Record<string, unknown>;
    try {
      admission = await nextLine(t, ADMISSION_MS, 'group admission');
    } catch (e) {
      return { outcome: 'lost', why: message(e) };
    }
    if (admission['_group'] === 'error') throw new GroupNetError('GROUP_NET_REFUSED', String(admission['reason']).slice(0, 200));
    if (
      admission['_group'] !== 'admission' ||
      admission['group_id'] !== group.group_id ||
      admission['protocol_id'] !== group.protocol_id ||
      admission['leader_public_key'] !== group.leader_public_key ||
      admission['leader_epoch'] !== group.leader_epoch ||
      admission['join_nonce'] !== nonce
    )
      throw new GroupNetError('GROUP_NET_PROTOCOL', 'group admission does not match server state');
    let challenge: string;
    try {
      challenge = checkChannelChallenge(admission['channel_challenge']);
    } catch {
      throw new GroupNetError('GROUP_NET_PROTOCOL', 'group channel challenge is invalid');
    }
    const leaderSignature = String(admission['leader_signature'] ?? '');
    const fields = {
      group_id: group.group_id,
      leader_public_key: group.leader_public_key,
      member_public_key: pk,
      protocol_id: group.protocol_id,
      leader_epoch: group.leader_epoch,
      join_nonce: nonce,
    };
    if (!verifyAdmission(c, group.leader_public_key, fields, leaderSignature))
      throw new GroupNetError('GROUP_NET_PROTOCOL', 'the admission is not signed by the leader');
    let listed;
    try {
      listed = await o.client.admitGroupMember(group, nonce, leaderSignature);
    } catch (e) {
      if (!(e instanceof RegistryError)) throw e;
      // The registry refuses (a full or started group, a stale epoch): as the leader would.
      if (e.status === 409 || e.status === 403) throw new GroupNetError('GROUP_NET_REFUSED', message(e));
      return { outcome: 'lost', why: message(e) };
    }
    sendLine(t, {
      _group: 'ready',
      group_id: group.group_id,
      protocol_id: group.protocol_id,
      leader_epoch: group.leader_epoch,
      member_public_key: pk,
      member_id: listed.member_id,
      seat: listed.seat,
      join_nonce: nonce,
      channel_challenge: challenge,
      member_signature: signChannelReady(c, seedHex, {
        group_id: group.group_id,
        protocol_id: group.protocol_id,
        leader_epoch: group.leader_epoch,
        member_public_key: pk,
        member_id: listed.member_id,
        seat: listed.seat,
        join_nonce: nonce,
        channel_challenge: challenge,
      }),
    });
    t.setMaxLineBytes?.(DEFAULT_MAX_LINE_BYTES);
    let core = known;
    let advanced = false;
    if (!core) {
      core = MemberCore.create(
        c,
        o.seed,
        j.dir,
        {
          _group_transcript: 1,
          protocol_id: o.protocol.protocolId,
          group_id: group.group_id,
          member_public_key: pk,
          leader_public_key: group.leader_public_key,
          leader_epoch: group.leader_epoch,
        },
        o.protocol.specText,
        autoplayOf(o.protocol),
        j.random,
      );
    } else if (group.leader_epoch > core.replica.leaderEpoch) {
      try {
        core.advanceEpoch(group.leader_public_key, group.leader_epoch);
        advanced = true;
      } catch (e) {
        if (!(e instanceof GroupEpochError)) throw e;
        throw new GroupNetError('GROUP_NET_FAULT', e.message);
      }
    }
    emit('admitted', { leader: group.leader_public_key, epoch: group.leader_epoch, seat: listed.seat });
    try {
      const outcome = await playReference({
        link: t,
        core,
        clock: j.clock,
        emit,
        outbox: j.outbox,
        ctx,
        randomHex,
        ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
      });
      return { outcome, core, advanced, admitted: true };
    } catch (e) {
      // Once admitted this member has a replica to go on with, whatever this leader did.
      if (!(e instanceof GroupNetError)) throw e;
      emit('group_reconnect_failed', { epoch: group.leader_epoch, message: message(e) });
      return { outcome: 'lost', core, advanced, admitted: true, why: message(e) };
    }
  } finally {
    t.close();
    await dialed.release();
  }
}
