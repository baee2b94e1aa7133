/**
 * An authoritative group over the network: one leader process and member processes, each a libp2p
 * node whose connection is authenticated by its Ed25519 key (Noise), speaking JSON lines.
 *
 * Admission, per connection (the reference's messages, NOTES A18): the member's `join` → the leader's
 * signed `admission` with a fresh channel challenge → the member's `admit` (the admission string signed
 * by both, which a registry would check; without one the leader checks it itself and lists the member)
 * → the leader's `listed` (member_id and seat) → the member's `ready` proof over the challenged channel.
 * A member the group already lists keeps its seat and is sent a bootstrap envelope (full checkpoint and
 * view), which is how a crashed member rejoins; a new one takes the next free seat before the start, or
 * joins late when the spec allows it.
 *
 * Frames go out as the spec's frame message, actions come in as its action message and are checked
 * against the spec before the leader's hooks see them. The leader also sends each member the roster of
 * members' addresses: when the leader's connection dies, every member names the same successor by the
 * serverless rule (arbiter.ts), the successor resumes as leader of the next epoch from the checkpoint
 * its replica holds, and the others dial it there.
 */
import './polyfill.js';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import type { Libp2p } from 'libp2p';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { toHex } from '../crypto/encoding.js';
import type { GroupHooks, GroupMember } from '../hooks/types.js';
import { groupMessages, type GroupMessages } from '../group/action-message.js';
import { AdmissionError, checkAdmissionPost, LeaderAdmission, type PendingAdmission } from '../group/admission.js';
import { serverlessSuccessor } from '../group/arbiter.js';
import { GroupLeader, GroupLeaderError, groupConfigFromSpec, type Envelopes, type GroupConfig } from '../group/leader.js';
import { GroupEpochError } from '../group/member.js';
import { signAdmission, signChannelReady, verifyAdmission } from '../group/wire.js';
import { SocketGuard } from './guard.js';
import { DEFAULT_MAX_LINE_BYTES, LineTransport, type ByteStream } from './line-transport.js';
import { createNode, ipAndPort, peerKeyHex, sessionStream } from './node.js';
import { createInvitation, encodeInvitation, type Invitation, type Ticket } from './invitation.js';
import { ensureWritableDir } from '../files/write.js';
import { autoplayOf, GroupNetError, MemberCore, memberDir, secureRandom, TurnTimer, turnTimeoutFor, type GroupEvent, type GroupProtocol, type GroupRunResult } from './group-core.js';

export { DEFAULT_TURN_TIMEOUT_MS, GroupNetError, MemberCore, secureRandom, type GroupEvent, type GroupProtocol, type GroupRunResult } from './group-core.js';

export const GROUP_NET_PROTOCOL = '/aigenora/group/1.0.0';
type Connection = { remotePeer?: { publicKey?: { raw: Uint8Array } }; remoteAddr?: Multiaddr };
const LISTEN = ['/ip4/127.0.0.1/tcp/0'];
const HANDSHAKE_MS = 10_000;


const parse = (line: string): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(line) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

async function nextLine(t: LineTransport, ms: number): Promise<Record<string, unknown>> {
  const r = await t.recv(ms);
  if (r.line === null) throw new GroupNetError('GROUP_NET_PROTOCOL', r.timedOut ? 'the peer said nothing in time' : 'the peer left');
  const v = parse(r.line);
  if (!v) throw new GroupNetError('GROUP_NET_PROTOCOL', 'a line is not a JSON object');
  return v;
}

const send = (t: LineTransport, v: unknown): boolean => {
  try {
    t.send(JSON.stringify(v));
    return true;
  } catch {
    return false;
  }
};

export interface LeaderHubOptions {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: GroupProtocol;
  options: Record<string, unknown>;
  groupId: string;
  /** The leader's own member (it plays a seat too). */
  self: MemberCore;
  /** Start fresh (epoch 0), or resume from a checkpoint for a later epoch. */
  resume?: { epoch: number; checkpoint: Record<string, unknown>; membershipVersion: number };
  random: () => number;
  onEvent?: GroupEvent;
  actionDelayMs?: number;
  /** The turn deadline when the protocol declares none (default DEFAULT_TURN_TIMEOUT_MS; 0: never). */
  turnTimeoutMs?: number;
  /** The clock turn deadlines are kept on (default Date.now). */
  now?: () => number;
}

/** The leader: admission, ordering, fan-out, turn deadlines; its own seat is played through `self`. */
export class LeaderHub {
  leader: GroupLeader | undefined;
  private readonly config: GroupConfig;
  private readonly messages: GroupMessages;
  private readonly admission: LeaderAdmission;
  private readonly seedHex: string;
  private readonly publicKey: string;
  private readonly epoch: number;
  private readonly conns = new Map<string, LineTransport>();
  private readonly tickets: Record<string, Ticket> = {};
  private readonly waiting: GroupMember[] = [];
  private readonly reserved = new Map<string, GroupMember>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly turnTimeoutMs: number;
  private readonly now: () => number;
  private readonly turnTimer: TurnTimer;
  private resolveDone!: () => void;
  readonly done: Promise<void>;

  constructor(private readonly o: LeaderHubOptions) {
    this.config = groupConfigFromSpec(o.protocol.spec);
    this.turnTimeoutMs = turnTimeoutFor(o.protocol.spec, o.options, o.turnTimeoutMs);
    this.now = o.now ?? Date.now;
    this.turnTimer = new TurnTimer(this.now, () => this.turnsDue());
    this.messages = groupMessages(o.protocol.protocolId, o.protocol.spec, o.protocol.specText);
    this.seedHex = toHex(o.seed);
    this.publicKey = toHex(o.crypto.ed25519PublicKey(o.seed));
    this.epoch = o.resume?.epoch ?? 0;
    this.admission = new LeaderAdmission(o.crypto, { groupId: o.groupId, protocolId: o.protocol.protocolId, leaderEpoch: this.epoch }, this.seedHex);
    this.done = new Promise((r) => (this.resolveDone = r));
    if (o.resume) {
      this.leader = GroupLeader.fromCheckpoint({ crypto: o.crypto, hooks: this.hooks(), config: this.config, groupId: o.groupId, leaderSeed: this.seedHex, leaderEpoch: o.resume.epoch, membershipVersion: o.resume.membershipVersion, turnTimeoutMs: this.turnTimeoutMs, now: this.now() }, o.resume.checkpoint);
      this.fanOut(this.leader.lastEnvelopes);
      this.markUnconnectedAbsent();
    } else {
      this.waiting.push({ member_id: 'seat-0', public_key: this.publicKey, seat: 0, status: 'active' });
      this.maybeStart();
    }
  }

  private hooks(): GroupHooks {
    return this.o.protocol.hooks.create({ role: 'host', options: this.o.options, args: [], stateDir: '', decision: null, random: this.o.random }) as GroupHooks;
  }

  private emit(type: string, data: Record<string, unknown>): void {
    try {
      this.o.onEvent?.(type, data);
    } catch {
      // a reporting callback must not end the leader
    }
  }

  private maybeStart(): void {
    if (this.leader) return;
    const need = this.config.start_policy === 'fixed_full' ? this.config.max_participants : this.config.min_participants;
    if (this.waiting.length < need) return;
    this.leader = GroupLeader.start({ crypto: this.o.crypto, hooks: this.hooks(), config: this.config, groupId: this.o.groupId, leaderSeed: this.seedHex, leaderEpoch: 0, membershipVersion: this.waiting.length, members: this.waiting, turnTimeoutMs: this.turnTimeoutMs, now: this.now() });
    this.emit('group_started', { members: this.waiting.length });
    this.markUnconnectedAbsent();
    for (const m of this.waiting) this.bootstrap(m.public_key);
    this.afterFrame();
  }

  private bootstrap(pk: string): void {
    const env = this.leader?.bootstrapEnvelope(pk);
    if (!env) return;
    if (pk === this.publicKey) this.o.self.apply(env, true);
    else {
      const t = this.conns.get(pk);
      if (t) send(t, { _group: 'bootstrap', envelope: env });
    }
  }

  private fanOut(envs: Envelopes): void {
    for (const [pk, env] of Object.entries(envs)) {
      if (pk === this.publicKey) this.o.self.apply(env, false);
      else {
        const t = this.conns.get(pk);
        if (t && !send(t, { action: this.messages.frame, frame: env })) {
          // A connection that cannot take a frame is gone: the member is absent until it rejoins.
          this.conns.delete(pk);
          t.close();
          this.emit('member_disconnected', { public_key: pk });
          this.leader?.memberAbsent(pk, this.now());
        }
      }
    }
  }

  /** After each frame: the leader's own seat may act, a completed group ends, and the turn timer is set for the next deadline. */
  afterFrame(): void {
    try {
      if (this.o.actionDelayMs && this.leader && !this.leader.completed && !this.o.self.pending) {
        if (this.timer) return;
        this.timer = setTimeout(() => {
          this.timer = undefined;
          if (this.playOwnSeat()) this.afterFrame();
        }, this.o.actionDelayMs);
        return;
      }
      for (let guard = 0; guard < 10_000 && this.leader && !this.leader.completed; guard++) if (!this.playOwnSeat()) break;
      if (this.leader?.completed) this.resolveDone();
    } finally {
      this.armTurns();
    }
  }

  /**
   * The turn timer fired: the leader resolves each turn whose deadline passed (a member silent or gone
   * on its turn) by the protocol's rule, and the frames go out like any other.
   */
  private turnsDue(): void {
    if (!this.leader || this.leader.completed) return;
    const out = this.leader.onTurnTimer(this.now());
    for (const t of out.resolved) {
      this.emit('turn_timeout', { public_key: t.public_key, seat: t.seat, reason: t.reason });
      this.fanOut(t.envelopes);
    }
    for (const f of out.failed) this.emit('turn_timeout_failed', { public_key: f.public_key, code: f.code, message: f.message });
    this.afterFrame();
  }

  /** A member's connection came or went: its turns are its own again, or are timed as absent. No frame comes of it. */
  private presence(pk: string, present: boolean): void {
    if (!this.leader) return;
    if (present) this.leader.memberPresent(pk, this.now());
    else this.leader.memberAbsent(pk, this.now());
    this.armTurns();
  }

  /**
   * Members the leader holds no connection to (one that left the lobby; every other member when a
   * successor starts) are absent until they are admitted: a turn of theirs that times out makes them sit out.
   */
  private markUnconnectedAbsent(): void {
    for (const m of this.leader?.members ?? []) if (m.public_key !== this.publicKey && !this.conns.has(m.public_key)) this.leader!.memberAbsent(m.public_key, this.now());
  }

  private armTurns(): void {
    this.turnTimer.arm(this.leader && !this.leader.completed ? this.leader.turnDeadline() : null);
  }

  /** One action of the leader's own seat, if it has one; false when it has nothing to do. */
  private playOwnSeat(): boolean {
    const a = this.o.self.next();
    if (!a) return false;
    const r = this.input(this.publicKey, a.client_seq, a.action);
    if (r.ok) this.o.self.accepted(a.client_seq);
    else this.o.self.refused();
    return true;
  }

  private input(pk: string, clientSeq: unknown, action: unknown): { ok: true; receipt: Record<string, unknown> } | { ok: false; reason: string } {
    if (!this.leader) return { ok: false, reason: 'the group has not started' };
    const errors = typeof clientSeq === 'number' ? this.messages.check(clientSeq, action) : [{ code: 'FIELD_TYPE' }];
    if (errors.length) return { ok: false, reason: `the action fails the spec's ${this.messages.action} message: ${errors.map((e) => e.code).join(', ')}` };
    try {
      const out = this.leader.applyInput({ actor_public_key: pk, client_seq: clientSeq, action }, this.now());
      if (out.receipt.status === 'accepted') this.fanOut(out.envelopes);
      return { ok: true, receipt: out.receipt as unknown as Record<string, unknown> };
    } catch (e) {
      if (e instanceof GroupLeaderError) return { ok: false, reason: e.message };
      throw e;
    }
  }

  private roster(): void {
    for (const t of this.conns.values()) send(t, { _group: 'peers', peers: this.tickets });
    // The leader's own seat keeps the roster too: after a crash it rejoins as a member and must find its successor.
    writeFileSync(joinPath(this.o.self.record.dir, 'peers.json'), `${JSON.stringify(this.tickets, null, 2)}\n`, { mode: 0o600 });
  }

  /** Serves one member connection: admission, then its actions until it leaves. */
  async serve(stream: unknown, connection: Connection | undefined, guard: SocketGuard): Promise<void> {
    const remoteKey = peerKeyHex(connection?.remotePeer ?? {});
    const t = new LineTransport(sessionStream(stream as ByteStream), { maxLineBytes: 64 << 10, heartbeatIntervalMs: 2_000, heartbeatTimeoutMs: 6_000 });
    const refuse = (reason: string) => {
      send(t, { _group: 'error', reason });
      t.close();
    };
    let pk: string | undefined;
    try {
      const joinMsg = await nextLine(t, HANDSHAKE_MS);
      const challenge = toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
      let offer: { admission: Record<string, unknown>; pending: PendingAdmission };
      try {
        offer = this.admission.offer(joinMsg, challenge);
      } catch (e) {
        if (e instanceof AdmissionError) return refuse(e.message);
        throw e;
      }
      pk = offer.pending.member_public_key;
      if (remoteKey !== pk) return refuse('member_public_key is not the key its connection is authenticated with');
      if (pk === this.publicKey) return refuse('the leader does not admit itself');
      send(t, offer.admission);
      const admit = await nextLine(t, HANDSHAKE_MS);
      try {
        checkAdmissionPost(this.o.crypto, { groupId: this.o.groupId, protocolId: this.o.protocol.protocolId, leaderEpoch: this.epoch, leaderPublicKey: this.publicKey }, pk, {
          join_nonce: offer.pending.join_nonce, leader_epoch: admit['leader_epoch'] as number, leader_signature: String(admit['leader_signature']), member_signature: String(admit['member_signature']),
        });
      } catch (e) {
        if (e instanceof AdmissionError) return refuse(e.message);
        throw e;
      }
      const listed = this.listing(pk);
      if (typeof listed === 'string') return refuse(listed);
      send(t, { _group: 'listed', member_id: listed.member_id, seat: listed.seat });
      const ready = await nextLine(t, HANDSHAKE_MS);
      let member: GroupMember;
      try {
        member = this.admission.accept(offer.pending, ready, listed);
      } catch (e) {
        if (e instanceof AdmissionError) return refuse(e.message);
        throw e;
      }
      const ticket = joinMsg['ticket'];
      if (ticket && typeof ticket === 'object') this.tickets[pk] = ticket as Ticket;
      // Admitted: the socket guard's handshake deadline no longer applies to this connection.
      const endpoint = connection?.remoteAddr && ipAndPort(connection.remoteAddr);
      if (!endpoint || !guard.authenticate(endpoint.address, endpoint.port)) this.emit('warning', { message: `no guarded socket matches ${String(connection?.remoteAddr)}` });
      const old = this.conns.get(pk);
      old?.close();
      this.conns.set(pk, t);
      t.setMaxLineBytes(DEFAULT_MAX_LINE_BYTES);
      this.emit('member_connected', { public_key: pk, seat: member.seat });
      this.roster();
      this.reserved.delete(pk);
      if (!this.leader) {
        if (!this.waiting.some((m) => m.public_key === pk)) this.waiting.push(member);
        this.maybeStart();
      } else if (this.leader.member(pk)?.status === 'active') {
        this.bootstrap(pk);
        // A member back from a crash (join --resume) plays its own seat again.
        this.presence(pk, true);
      } else {
        // A late joiner (or one the group had marked absent): one membership frame, its first is a bootstrap.
        const envs = this.leader.addMember(member, this.leader.membershipVersion + 1, this.now());
        const mine = envs[pk];
        this.fanOut(Object.fromEntries(Object.entries(envs).filter(([k]) => k !== pk)));
        if (mine) send(t, { _group: 'bootstrap', envelope: mine });
        this.afterFrame();
      }
      for (;;) {
        const r = await t.recv(60_000);
        if (r.line === null) {
          if (r.timedOut) continue;
          break;
        }
        const m = parse(r.line);
        if (!m || m['action'] !== this.messages.action) {
          send(t, { _group: 'error', reason: `expected the ${this.messages.action} message` });
          continue;
        }
        const out = this.input(pk, m['client_seq'], m['payload']);
        send(t, out.ok ? { _group: 'receipt', ...out.receipt } : { _group: 'error', client_seq: m['client_seq'], reason: out.reason });
        if (out.ok) this.afterFrame();
      }
    } catch (e) {
      if (!(e instanceof GroupNetError)) this.emit('member_failed', { message: (e as Error)?.message ?? String(e) });
    } finally {
      t.close();
      if (pk) this.reserved.delete(pk);
      if (pk && this.conns.get(pk) === t) {
        this.conns.delete(pk);
        this.emit('member_disconnected', { public_key: pk });
        // Its turns no longer wait on it beyond their deadline (issue 33: a member killed on its turn stalled the table).
        this.presence(pk, false);
      }
    }
  }

  /**
   * The record a member is admitted as: its own if the group lists it, else the next free seat, held
   * for it while its admission completes (two members admitted at once never get one seat).
   */
  private listing(pk: string): GroupMember | string {
    const known = this.leader?.member(pk) ?? this.waiting.find((m) => m.public_key === pk) ?? this.reserved.get(pk);
    if (known) return { ...known, status: 'active' };
    if (this.leader && !this.config.allow_late_join) return 'late join is closed for this group';
    const taken = new Set([...(this.leader?.members ?? this.waiting), ...this.reserved.values()].map((m) => m.seat));
    if (taken.size >= this.config.max_participants) return 'the group is full';
    let seat = 0;
    while (taken.has(seat)) seat++;
    const m = { member_id: `seat-${seat}`, public_key: pk, seat, status: 'active' };
    this.reserved.set(pk, m);
    return m;
  }

  /** Lets a member know the roster it needs for a failover (the leader's own ticket included). */
  setOwnTicket(ticket: Ticket): void {
    this.tickets[this.publicKey] = ticket;
  }

  async close(graceMs = 300): Promise<void> {
    this.turnTimer.stop();
    await new Promise((r) => setTimeout(r, graceMs));
    for (const t of this.conns.values()) t.close();
    this.conns.clear();
  }
}

export interface GroupMemberRun {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: GroupProtocol;
  options: Record<string, unknown>;
  core: MemberCore;
  groupId: string;
  /** Whom to dial first: the invitation's host, or after a resume the latest leader it knew. */
  leader: { publicKey: string; ticket: Ticket | undefined };
  /** Where the roster is kept (peers.json in the member's session directory). */
  dir: string;
  random: () => number;
  onEvent?: GroupEvent;
  /** How long to keep dialing a leader (or its successor) before giving up. */
  reconnectMs?: number;
  /** A pause before each action (to watch a game, or to give a test time to act between moves). */
  actionDelayMs?: number;
  /** The turn deadline this member keeps if it comes to lead (when the protocol declares none). */
  turnTimeoutMs?: number;
}


/**
 * A member process: dials the leader, stays admitted, applies frames and plays its seat; when the
 * leader's connection dies, follows the serverless rule to the successor, or becomes it.
 */
export async function runGroupMember(o: GroupMemberRun): Promise<GroupRunResult> {
  const c = o.crypto;
  const pk = o.core.publicKey;
  const guard = new SocketGuard({ deadlineMs: HANDSHAKE_MS });
  const node: Libp2p = await createNode(o.seed, { listen: LISTEN, guard, crypto: c });
  const ownTicket: Ticket = { peer_id: node.peerId.toString(), addrs: node.getMultiaddrs().map(String) };
  const peersPath = joinPath(o.dir, 'peers.json');
  const peers: Record<string, Ticket> = existsSync(peersPath) ? (JSON.parse(readFileSync(peersPath, 'utf8')) as Record<string, Ticket>) : {};
  if (o.leader.ticket) peers[o.leader.publicKey] = o.leader.ticket;
  const emit = (type: string, data: Record<string, unknown>) => {
    try {
      o.onEvent?.(type, data);
    } catch {
      // reporting must not end the member
    }
  };
  let target = o.leader.publicKey;
  let epochs = 1;
  if (target === pk) {
    // A leader that crashed comes back as a member: its epoch is over, it follows its successor.
    const successor = serverlessSuccessor(o.core.replica.members, pk);
    if (!successor) throw new GroupNetError('GROUP_NET_UNREACHABLE', 'no member is left to lead');
    o.core.advanceEpoch(successor.public_key, o.core.replica.leaderEpoch + 1);
    target = successor.public_key;
  }
  const deadlineMs = o.reconnectMs ?? 30_000;
  try {
    for (;;) {
      if (o.core.completed) break;
      if (o.core.fault) return { completed: false, outcome: null, dir: o.dir, epochs, reason: `the leader's envelope was refused: ${o.core.fault}` };
      if (target === pk) {
        // This member is the successor: lead the next epoch from its own checkpoint.
        const cp = o.core.replica.checkpoint;
        if (!cp) throw new GroupNetError('GROUP_NET_FAULT', 'no checkpoint to lead from');
        const epoch = o.core.replica.leaderEpoch + 1;
        o.core.advanceEpoch(pk, epoch);
        // An action sent to the lost leader got no answer: this seat acts afresh under its own lead.
        o.core.pending = false;
        epochs++;
        const hub = new LeaderHub({ crypto: c, seed: o.seed, protocol: o.protocol, options: o.options, groupId: o.groupId, self: o.core, random: o.random, ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }), ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }), resume: { epoch, checkpoint: cp as unknown as Record<string, unknown>, membershipVersion: o.core.replica.membershipVersion }, ...(o.onEvent && { onEvent: o.onEvent }) });
        hub.setOwnTicket(ownTicket);
        emit('leader_elected', { epoch, public_key: pk });
        await node.handle(GROUP_NET_PROTOCOL, (stream: unknown, connection?: unknown) => void hub.serve(stream, connection as Connection | undefined, guard), { runOnLimitedConnection: false, maxInboundStreams: 64 });
        hub.afterFrame();
        await hub.done;
        await hub.close(1_000);
        break;
      }
      const outcome = await connectAndFollow(o, node, target, peers, ownTicket, deadlineMs, emit);
      if (outcome === 'completed') break;
      if (outcome === 'fault') continue;
      // The leader is gone: the successor by the serverless rule, from this member's own checkpoint.
      if (!o.core.replica.checkpoint) throw new GroupNetError('GROUP_NET_UNREACHABLE', 'the leader went away before the group started');
      const successor = serverlessSuccessor(o.core.replica.members, target);
      if (!successor) throw new GroupNetError('GROUP_NET_UNREACHABLE', 'no member is left to lead');
      emit('leader_lost', { leader: target, successor: successor.public_key });
      if (successor.public_key !== pk) {
        try {
          o.core.advanceEpoch(successor.public_key, o.core.replica.leaderEpoch + 1);
          epochs++;
        } catch (e) {
          if (!(e instanceof GroupEpochError)) throw e;
          throw new GroupNetError('GROUP_NET_FAULT', e.message);
        }
      }
      target = successor.public_key;
    }
  } finally {
    o.core.finish();
    guard.close();
    await node.stop();
  }
  const cp = o.core.replica.checkpoint;
  return { completed: o.core.completed, outcome: (cp?.['outcome'] as string | null | undefined) ?? null, dir: o.dir, epochs };
}

/** One leader connection: 'completed', 'lost' (the leader went away) or 'fault'. */
async function connectAndFollow(o: GroupMemberRun, dialNode: Libp2p, target: string, peers: Record<string, Ticket>, ownTicket: Ticket, deadlineMs: number, emit: GroupEvent): Promise<'completed' | 'lost' | 'fault'> {
  const c = o.crypto;
  const pk = o.core.publicKey;
  const seedHex = toHex(o.seed);
  const until = Date.now() + deadlineMs;
  let t: LineTransport | undefined;
  while (!t) {
    const ticket = peers[target];
    if (!ticket) throw new GroupNetError('GROUP_NET_UNREACHABLE', `no address is known for leader ${target.slice(0, 16)}`);
    try {
      const addr = ticket.addrs.map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${ticket.peer_id}`)).find((a) => a.includes('/tcp/') && !a.includes('/ws')) ?? `${ticket.addrs[0]}/p2p/${ticket.peer_id}`;
      const stream = await dialNode.dialProtocol(multiaddr(addr), GROUP_NET_PROTOCOL);
      const conn = dialNode.getConnections().find((x) => peerKeyHex(x.remotePeer as never) === target);
      if (!conn) throw new Error('the connected peer is not the leader');
      t = new LineTransport(sessionStream(stream as unknown as ByteStream), { maxLineBytes: DEFAULT_MAX_LINE_BYTES, heartbeatIntervalMs: 2_000, heartbeatTimeoutMs: 6_000 });
    } catch (e) {
      if (Date.now() > until) return 'lost';
      emit('dial_retry', { leader: target, message: (e as Error)?.message ?? String(e) });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    const nonce = toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
    send(t, { _group: 'join', group_id: o.groupId, member_public_key: pk, join_nonce: nonce, member_control_mode: 'autonomous', ticket: ownTicket });
    const admission = await nextLine(t, HANDSHAKE_MS);
    if (admission['_group'] === 'error') throw new GroupNetError('GROUP_NET_REFUSED', String(admission['reason']).slice(0, 200));
    const epoch = admission['leader_epoch'];
    const fields = { group_id: o.groupId, leader_public_key: target, member_public_key: pk, protocol_id: o.protocol.protocolId, leader_epoch: epoch as number, join_nonce: nonce };
    if (admission['_group'] !== 'admission' || admission['leader_public_key'] !== target || admission['protocol_id'] !== o.protocol.protocolId || typeof epoch !== 'number') throw new GroupNetError('GROUP_NET_PROTOCOL', 'expected an admission from the leader');
    if (typeof admission['leader_signature'] !== 'string' || !verifyAdmission(c, target, fields, admission['leader_signature'])) throw new GroupNetError('GROUP_NET_PROTOCOL', 'the admission is not signed by the leader');
    if (epoch !== o.core.replica.leaderEpoch) throw new GroupNetError('GROUP_NET_PROTOCOL', `the leader admits for epoch ${epoch}, this member follows epoch ${o.core.replica.leaderEpoch}`);
    send(t, { _group: 'admit', join_nonce: nonce, leader_epoch: epoch, leader_signature: admission['leader_signature'], member_signature: signAdmission(c, seedHex, fields) });
    const listed = await nextLine(t, HANDSHAKE_MS);
    if (listed['_group'] === 'error') throw new GroupNetError('GROUP_NET_REFUSED', String(listed['reason']).slice(0, 200));
    const memberId = listed['member_id'];
    const seat = listed['seat'];
    if (listed['_group'] !== 'listed' || typeof memberId !== 'string' || typeof seat !== 'number') throw new GroupNetError('GROUP_NET_PROTOCOL', 'expected the listing');
    const challenge = String(admission['channel_challenge']);
    send(t, {
      _group: 'ready', group_id: o.groupId, protocol_id: o.protocol.protocolId, leader_epoch: epoch, member_public_key: pk, join_nonce: nonce, channel_challenge: challenge, member_id: memberId, seat,
      member_signature: signChannelReady(c, seedHex, { group_id: o.groupId, protocol_id: o.protocol.protocolId, leader_epoch: epoch, member_public_key: pk, member_id: memberId, seat, join_nonce: nonce, channel_challenge: challenge }),
    });
    emit('admitted', { leader: target, epoch, seat });
    const messages = groupMessages(o.protocol.protocolId, o.protocol.spec, o.protocol.specText);
    o.core.pending = false;
    const act = () => {
      const a = o.core.next();
      if (!a) return;
      const go = () => send(t!, { action: messages.action, client_seq: a.client_seq, payload: a.action });
      if (o.actionDelayMs) setTimeout(go, o.actionDelayMs);
      else go();
    };
    for (;;) {
      const r = await t.recv(60_000);
      if (r.line === null) {
        if (r.timedOut) continue;
        return o.core.completed ? 'completed' : 'lost';
      }
      const m = parse(r.line);
      if (!m) continue;
      if (m['_group'] === 'bootstrap' || m['action'] === messages.frame) {
        const env = m['_group'] === 'bootstrap' ? m['envelope'] : m['frame'];
        if (!o.core.apply(env, m['_group'] === 'bootstrap')) return 'fault';
        if (o.core.completed) return 'completed';
        act();
      } else if (m['_group'] === 'receipt') {
        o.core.accepted(Number(m['client_seq']));
        act();
      } else if (m['_group'] === 'error') {
        if (m['client_seq'] !== undefined) {
          o.core.refused();
          emit('action_refused', { reason: String(m['reason']).slice(0, 200) });
        } else throw new GroupNetError('GROUP_NET_REFUSED', String(m['reason']).slice(0, 200));
      } else if (m['_group'] === 'peers' && typeof m['peers'] === 'object' && m['peers'] !== null) {
        Object.assign(peers, m['peers']);
        writeFileSync(joinPath(o.dir, 'peers.json'), `${JSON.stringify(peers, null, 2)}\n`, { mode: 0o600 });
      }
    }
  } finally {
    t.close();
  }
}


/** The group an invitation opens: one per invitation. */
export const groupIdOf = (postId: string): string => `grp-${postId}`;


export interface GroupHostHandle {
  invitation: Invitation;
  text: string;
  groupId: string;
  dir: string;
  /** Settles when the group completes (the leader's own seat then holds its receipt). */
  done: Promise<GroupRunResult>;
  stop(): Promise<void>;
}

/** Publishes an invitation for a new group and leads it, playing seat 0. */
export async function hostGroup(o: { crypto: Crypto; seed: Uint8Array; protocol: GroupProtocol; options: Record<string, unknown>; sessionsDir: string; ttlMinutes?: number; listen?: string[]; actionDelayMs?: number; turnTimeoutMs?: number; onEvent?: GroupEvent }): Promise<GroupHostHandle> {
  const c = o.crypto;
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const autoplay = autoplayOf(o.protocol);
  const guard = new SocketGuard({ deadlineMs: HANDSHAKE_MS });
  const node = await createNode(o.seed, { listen: o.listen ?? LISTEN, guard, crypto: c });
  const key = c.ed25519Keypair(o.seed);
  const ticket: Ticket = { peer_id: node.peerId.toString(), addrs: node.getMultiaddrs().map(String) };
  let invitation: Invitation;
  try {
    invitation = createInvitation(c, { host: key, protocolId: o.protocol.protocolId, ticket, options: o.options, ttlMinutes: o.ttlMinutes ?? 30, controlMode: 'autonomous' });
  } finally {
    key.dispose();
  }
  const pk = toHex(c.ed25519PublicKey(o.seed));
  const groupId = groupIdOf(invitation.post_id);
  const dir = memberDir(o.sessionsDir, groupId, pk);
  const self = MemberCore.create(c, o.seed, dir, { _group_transcript: 1, protocol_id: o.protocol.protocolId, group_id: groupId, member_public_key: pk, leader_public_key: pk, leader_epoch: 0 }, o.protocol.specText, autoplay, secureRandom);
  const hub = new LeaderHub({ crypto: c, seed: o.seed, protocol: o.protocol, options: o.options, groupId, self, random: secureRandom, ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }), ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }), ...(o.onEvent && { onEvent: o.onEvent }) });
  hub.setOwnTicket(ticket);
  await node.handle(GROUP_NET_PROTOCOL, (stream: unknown, connection?: unknown) => void hub.serve(stream, connection as Connection | undefined, guard), { runOnLimitedConnection: false, maxInboundStreams: 64 });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    guard.close();
    await node.stop();
  };
  const done = hub.done.then(async (): Promise<GroupRunResult> => {
    await hub.close(1_000);
    self.finish();
    const cp = self.replica.checkpoint;
    return { completed: self.completed, outcome: (cp?.['outcome'] as string | null | undefined) ?? null, dir, epochs: 1 };
  });
  return { invitation, text: encodeInvitation(c, invitation), groupId, dir, done, stop };
}

/** Joins (or, with `resumeDir`, rejoins after a crash) the group an invitation opened. */
export async function joinGroup(o: { crypto: Crypto; seed: Uint8Array; protocol: GroupProtocol; invitation: Invitation; sessionsDir: string; resumeDir?: string; reconnectMs?: number; actionDelayMs?: number; turnTimeoutMs?: number; onEvent?: GroupEvent }): Promise<GroupRunResult> {
  const c = o.crypto;
  const inv = o.invitation;
  const autoplay = autoplayOf(o.protocol);
  const pk = toHex(c.ed25519PublicKey(o.seed));
  const groupId = groupIdOf(inv.post_id);
  let core: MemberCore;
  let dir: string;
  if (o.resumeDir) {
    dir = o.resumeDir;
    core = MemberCore.resume(c, o.seed, dir, autoplay, secureRandom);
    if (core.replica.groupId !== groupId) throw new GroupNetError('GROUP_NET_RESUME', `${dir} is group ${core.replica.groupId}, the invitation opens ${groupId}`);
  } else {
    ensureWritableDir(o.sessionsDir, 'sessions directory');
    dir = memberDir(o.sessionsDir, groupId, pk);
    core = MemberCore.create(c, o.seed, dir, { _group_transcript: 1, protocol_id: o.protocol.protocolId, group_id: groupId, member_public_key: pk, leader_public_key: inv.host_public_key, leader_epoch: 0 }, o.protocol.specText, autoplay, secureRandom);
  }
  const leaderPk = core.replica.leaderPublicKey;
  return runGroupMember({
    crypto: c, seed: o.seed, protocol: o.protocol, options: inv.options, core, groupId, dir, random: secureRandom,
    leader: { publicKey: leaderPk, ticket: leaderPk === inv.host_public_key ? inv.ticket : undefined },
    ...(o.reconnectMs !== undefined && { reconnectMs: o.reconnectMs }), ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }), ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }), ...(o.onEvent && { onEvent: o.onEvent }),
  });
}
