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
import type { GroupMember } from '../hooks/types.js';
import { groupMessages } from '../group/action-message.js';
import { AdmissionError, checkAdmissionPost, LeaderAdmission, type PendingAdmission } from '../group/admission.js';
import { serverlessSuccessor } from '../group/arbiter.js';
import type { GroupLeader } from '../group/leader.js';
import { GroupEpochError } from '../group/member.js';
import { signAdmission, signChannelReady, verifyAdmission } from '../group/wire.js';
import { SocketGuard } from './guard.js';
import { DEFAULT_MAX_LINE_BYTES, LineTransport, type ByteStream } from './line-transport.js';
import { createNode, ipAndPort, peerKeyHex, sessionStream } from './node.js';
import { createInvitation, encodeInvitation, type Invitation, type Ticket } from './invitation.js';
import { ensureWritableDir } from '../files/write.js';
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
import { followGroup, playFrames, sleepOn, type Followed, type FollowEnd } from './group-follower.js';
import { GroupHub, type HubClock, type LeaderEnd, type MemberLink } from './group-hub.js';

export { DEFAULT_TURN_TIMEOUT_MS, GroupNetError, MemberCore, secureRandom, type GroupEvent, type GroupProtocol, type GroupRunResult } from './group-core.js';

export const GROUP_NET_PROTOCOL = '/aigenora/group/1.0.0';
type Connection = { remotePeer?: { publicKey?: { raw: Uint8Array } }; remoteAddr?: Multiaddr };
const LISTEN = ['/ip4/127.0.0.1/tcp/0'];
const HANDSHAKE_MS = 10_000;

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
  /** The clock turn deadlines and the own seat's pacing are kept on (default: the process clock). */
  clock?: HubClock;
}

/** A member's libp2p channel: a bootstrap as `_group: bootstrap`, every other envelope as the spec's frame message. */
class Libp2pLink implements MemberLink {
  constructor(
    readonly t: LineTransport,
    private readonly frameMessage: string,
  ) {}

  deliver(envelope: unknown, bootstrap: boolean): boolean {
    return sendLine(this.t, bootstrap ? { _group: 'bootstrap', envelope } : { action: this.frameMessage, frame: envelope });
  }

  close(): void {
    this.t.close();
  }
}

/**
 * The leader over libp2p: admission without a registry (it lists members itself and holds the start
 * until enough are in), the roster members need for a failover, and the shared hub (group-hub.ts) for
 * the rest; its own seat is played through `self`.
 */
export class LeaderHub {
  readonly done: Promise<LeaderEnd>;
  private readonly hub: GroupHub<Libp2pLink>;
  private readonly admission: LeaderAdmission;
  private readonly publicKey: string;
  private readonly epoch: number;
  private readonly tickets: Record<string, Ticket> = {};
  private readonly waiting: GroupMember[] = [];
  private readonly reserved = new Map<string, GroupMember>();

  constructor(private readonly o: LeaderHubOptions) {
    this.epoch = o.resume?.epoch ?? 0;
    this.hub = new GroupHub({
      crypto: o.crypto,
      seed: o.seed,
      protocol: o.protocol,
      options: o.options,
      groupId: o.groupId,
      leaderEpoch: this.epoch,
      self: o.self,
      random: o.random,
      clock: o.clock ?? processClock,
      ...(o.onEvent && { onEvent: o.onEvent }),
      ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
      ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }),
    });
    this.publicKey = this.hub.publicKey;
    this.admission = new LeaderAdmission(o.crypto, { groupId: o.groupId, protocolId: o.protocol.protocolId, leaderEpoch: this.epoch }, toHex(o.seed));
    this.done = this.hub.done;
    if (o.resume) this.hub.resume(o.resume.checkpoint, o.resume.membershipVersion);
    else {
      this.waiting.push({ member_id: 'seat-0', public_key: this.publicKey, seat: 0, status: 'active' });
      this.maybeStart();
    }
  }

  get leader(): GroupLeader | undefined {
    return this.hub.leader;
  }

  private maybeStart(): void {
    if (this.hub.leader) return;
    const config = this.hub.config;
    const need = config.start_policy === 'fixed_full' ? config.max_participants : config.min_participants;
    if (this.waiting.length < need) return;
    this.hub.start(this.waiting, this.waiting.length);
    this.hub.afterFrame();
  }

  /** After each frame: the leader's own seat may act, a completed group ends, and the turn timer is set for the next deadline. */
  afterFrame(): void {
    this.hub.afterFrame();
  }

  private roster(): void {
    for (const l of this.hub.allLinks()) sendLine(l.t, { _group: 'peers', peers: this.tickets });
    // The leader's own seat keeps the roster too: after a crash it rejoins as a member and must find its successor.
    writeFileSync(joinPath(this.o.self.record.dir, 'peers.json'), `${JSON.stringify(this.tickets, null, 2)}\n`, { mode: 0o600 });
  }

  /** Serves one member connection: admission, then its actions until it leaves. */
  async serve(stream: unknown, connection: Connection | undefined, guard: SocketGuard): Promise<void> {
    const remoteKey = peerKeyHex(connection?.remotePeer ?? {});
    const t = new LineTransport(sessionStream(stream as ByteStream), { maxLineBytes: 64 << 10, heartbeatIntervalMs: 2_000, heartbeatTimeoutMs: 6_000 });
    const refuse = (reason: string) => {
      sendLine(t, { _group: 'error', reason });
      t.close();
    };
    const messages = this.hub.messages;
    let pk: string | undefined;
    let link: Libp2pLink | undefined;
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
      sendLine(t, offer.admission);
      const admit = await nextLine(t, HANDSHAKE_MS);
      try {
        checkAdmissionPost(
          this.o.crypto,
          { groupId: this.o.groupId, protocolId: this.o.protocol.protocolId, leaderEpoch: this.epoch, leaderPublicKey: this.publicKey },
          pk,
          {
            join_nonce: offer.pending.join_nonce,
            leader_epoch: admit['leader_epoch'] as number,
            leader_signature: String(admit['leader_signature']),
            member_signature: String(admit['member_signature']),
          },
        );
      } catch (e) {
        if (e instanceof AdmissionError) return refuse(e.message);
        throw e;
      }
      const listed = this.listing(pk);
      if (typeof listed === 'string') return refuse(listed);
      sendLine(t, { _group: 'listed', member_id: listed.member_id, seat: listed.seat });
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
      if (!endpoint || !guard.authenticate(endpoint.address, endpoint.port))
        this.hub.emit('warning', { message: `no guarded socket matches ${String(connection?.remoteAddr)}` });
      link = new Libp2pLink(t, messages.frame);
      t.setMaxLineBytes(DEFAULT_MAX_LINE_BYTES);
      this.hub.connect(member, link);
      this.roster();
      this.reserved.delete(pk);
      if (!this.hub.leader) {
        if (!this.waiting.some((m) => m.public_key === pk)) this.waiting.push(member);
        this.maybeStart();
      } else this.hub.welcome(member);
      for (;;) {
        const r = await t.recv(60_000);
        if (r.line === null) {
          if (r.timedOut) continue;
          break;
        }
        const m = parseLine(r.line);
        if (!m || m['action'] !== messages.action) {
          sendLine(t, { _group: 'error', reason: `expected the ${messages.action} message` });
          continue;
        }
        const out = this.hub.input(pk, m['client_seq'], m['payload']);
        const ok = out.status !== 'rejected';
        sendLine(t, ok ? { _group: 'receipt', ...out } : { _group: 'error', client_seq: m['client_seq'], reason: out['reason'] });
        if (ok) this.hub.afterFrame();
      }
    } catch (e) {
      if (!(e instanceof GroupNetError)) this.hub.emit('member_failed', { message: (e as Error)?.message ?? String(e) });
    } finally {
      t.close();
      if (pk) this.reserved.delete(pk);
      // Its turns no longer wait on it beyond their deadline (issue 33: a member killed on its turn stalled the table).
      if (pk && link) this.hub.disconnect(pk, link);
    }
  }

  /**
   * The record a member is admitted as: its own if the group lists it, else the next free seat, held
   * for it while its admission completes (two members admitted at once never get one seat).
   */
  private listing(pk: string): GroupMember | string {
    const leader = this.hub.leader;
    const known = leader?.member(pk) ?? this.waiting.find((m) => m.public_key === pk) ?? this.reserved.get(pk);
    if (known) return { ...known, status: 'active' };
    if (leader && !this.hub.config.allow_late_join) return 'late join is closed for this group';
    const taken = new Set([...(leader?.members ?? this.waiting), ...this.reserved.values()].map((m) => m.seat));
    if (taken.size >= this.hub.config.max_participants) return 'the group is full';
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
    await this.hub.close(graceMs);
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
  /** The clock dial retries, pacing and a successor's turn deadlines are kept on (default: the process clock). */
  clock?: HubClock;
}

/**
 * A member process: dials the leader, stays admitted, applies frames and plays its seat; when the
 * leader's connection dies, follows the serverless rule to the successor, or becomes it.
 */
export async function runGroupMember(o: GroupMemberRun): Promise<GroupRunResult> {
  const c = o.crypto;
  const pk = o.core.publicKey;
  const clock = o.clock ?? processClock;
  const guard = new SocketGuard({ deadlineMs: HANDSHAKE_MS });
  const node: Libp2p = await createNode(o.seed, { listen: LISTEN, guard, crypto: c });
  const ownTicket: Ticket = { peer_id: node.peerId.toString(), addrs: node.getMultiaddrs().map(String) };
  const peersPath = joinPath(o.dir, 'peers.json');
  const peers: Record<string, Ticket> = existsSync(peersPath) ? (JSON.parse(readFileSync(peersPath, 'utf8')) as Record<string, Ticket>) : {};
  if (o.leader.ticket) peers[o.leader.publicKey] = o.leader.ticket;
  const emit = (type: string, data: Record<string, unknown>) => safeEmit(o.onEvent, type, data);
  let first = o.leader.publicKey;
  if (first === pk) {
    // A leader that crashed comes back as a member: its epoch is over, it follows its successor.
    const successor = serverlessSuccessor(o.core.replica.members, pk);
    if (!successor) throw new GroupNetError('GROUP_NET_UNREACHABLE', 'no member is left to lead');
    o.core.advanceEpoch(successor.public_key, o.core.replica.leaderEpoch + 1);
    first = successor.public_key;
  }
  const deadlineMs = o.reconnectMs ?? 30_000;
  /** This member is the successor: it leads the next epoch from its own checkpoint. */
  const lead = async (): Promise<void> => {
    const cp = o.core.replica.checkpoint;
    if (!cp) throw new GroupNetError('GROUP_NET_FAULT', 'no checkpoint to lead from');
    const epoch = o.core.replica.leaderEpoch + 1;
    o.core.advanceEpoch(pk, epoch);
    // An action sent to the lost leader got no answer: this seat acts afresh under its own lead.
    o.core.pending = false;
    const hub = new LeaderHub({
      crypto: c,
      seed: o.seed,
      protocol: o.protocol,
      options: o.options,
      groupId: o.groupId,
      self: o.core,
      random: o.random,
      clock,
      ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
      ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }),
      resume: { epoch, checkpoint: cp as unknown as Record<string, unknown>, membershipVersion: o.core.replica.membershipVersion },
      ...(o.onEvent && { onEvent: o.onEvent }),
    });
    hub.setOwnTicket(ownTicket);
    emit('leader_elected', { epoch, public_key: pk });
    await node.handle(GROUP_NET_PROTOCOL, (stream: unknown, connection?: unknown) => void hub.serve(stream, connection as Connection | undefined, guard), {
      runOnLimitedConnection: false,
      maxInboundStreams: 64,
    });
    hub.afterFrame();
    await hub.done;
    await hub.close(1_000);
  };
  let end: FollowEnd<void>;
  try {
    end = await followGroup<string, void>({
      clock,
      leader: first,
      core: o.core,
      follow: async (target) => ({ outcome: await connectAndFollow(o, node, target, peers, ownTicket, deadlineMs, clock, emit) }),
      // The leader is gone: the successor by the serverless rule, from this member's own checkpoint.
      next: async (target) => {
        if (!o.core.replica.checkpoint) throw new GroupNetError('GROUP_NET_UNREACHABLE', 'the leader went away before the group started');
        const successor = serverlessSuccessor(o.core.replica.members, target);
        if (!successor) throw new GroupNetError('GROUP_NET_UNREACHABLE', 'no member is left to lead');
        emit('leader_lost', { leader: target, successor: successor.public_key });
        if (successor.public_key === pk) return { lead };
        try {
          o.core.advanceEpoch(successor.public_key, o.core.replica.leaderEpoch + 1);
        } catch (e) {
          if (!(e instanceof GroupEpochError)) throw e;
          throw new GroupNetError('GROUP_NET_FAULT', e.message);
        }
        return { follow: successor.public_key, advanced: true };
      },
    });
  } finally {
    o.core.finish();
    guard.close();
    await node.stop();
  }
  if (end.how === 'fault')
    return { completed: false, outcome: null, dir: o.dir, epochs: end.epochs, reason: `the leader's envelope was refused: ${o.core.fault}` };
  const cp = o.core.replica.checkpoint;
  return { completed: o.core.completed, outcome: (cp?.['outcome'] as string | null | undefined) ?? null, dir: o.dir, epochs: end.epochs };
}

/** One leader connection: dialled (retrying until `deadlineMs`), admitted, then followed to 'completed', 'lost' or 'fault'. */
async function connectAndFollow(
  o: GroupMemberRun,
  dialNode: Libp2p,
  target: string,
  peers: Record<string, Ticket>,
  ownTicket: Ticket,
  deadlineMs: number,
  clock: HubClock,
  emit: GroupEvent,
): Promise<Followed> {
  const c = o.crypto;
  const pk = o.core.publicKey;
  const seedHex = toHex(o.seed);
  const until = clock.now() + deadlineMs;
  let t: LineTransport | undefined;
  while (!t) {
    const ticket = peers[target];
    if (!ticket) throw new GroupNetError('GROUP_NET_UNREACHABLE', `no address is known for leader ${target.slice(0, 16)}`);
    try {
      const addr =
        ticket.addrs.map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${ticket.peer_id}`)).find((a) => a.includes('/tcp/') && !a.includes('/ws')) ??
        `${ticket.addrs[0]}/p2p/${ticket.peer_id}`;
      const stream = await dialNode.dialProtocol(multiaddr(addr), GROUP_NET_PROTOCOL);
      const conn = dialNode.getConnections().find((x) => peerKeyHex(x.remotePeer as never) === target);
      if (!conn) throw new Error('the connected peer is not the leader');
      t = new LineTransport(sessionStream(stream as unknown as ByteStream), {
        maxLineBytes: DEFAULT_MAX_LINE_BYTES,
        heartbeatIntervalMs: 2_000,
        heartbeatTimeoutMs: 6_000,
      });
    } catch (e) {
      if (clock.now() > until) return 'lost';
      emit('dial_retry', { leader: target, message: (e as Error)?.message ?? String(e) });
      await sleepOn(clock, 500);
    }
  }
  try {
    const nonce = toHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
    sendLine(t, { _group: 'join', group_id: o.groupId, member_public_key: pk, join_nonce: nonce, member_control_mode: 'autonomous', ticket: ownTicket });
    const admission = await nextLine(t, HANDSHAKE_MS);
    if (admission['_group'] === 'error') throw new GroupNetError('GROUP_NET_REFUSED', String(admission['reason']).slice(0, 200));
    const epoch = admission['leader_epoch'];
    const fields = {
      group_id: o.groupId,
      leader_public_key: target,
      member_public_key: pk,
      protocol_id: o.protocol.protocolId,
      leader_epoch: epoch as number,
      join_nonce: nonce,
    };
    if (
      admission['_group'] !== 'admission' ||
      admission['leader_public_key'] !== target ||
      admission['protocol_id'] !== o.protocol.protocolId ||
      typeof epoch !== 'number'
    )
      throw new GroupNetError('GROUP_NET_PROTOCOL', 'expected an admission from the leader');
    if (typeof admission['leader_signature'] !== 'string' || !verifyAdmission(c, target, fields, admission['leader_signature']))
      throw new GroupNetError('GROUP_NET_PROTOCOL', 'the admission is not signed by the leader');
    if (epoch !== o.core.replica.leaderEpoch)
      throw new GroupNetError('GROUP_NET_PROTOCOL', `the leader admits for epoch ${epoch}, this member follows epoch ${o.core.replica.leaderEpoch}`);
    sendLine(t, {
      _group: 'admit',
      join_nonce: nonce,
      leader_epoch: epoch,
      leader_signature: admission['leader_signature'],
      member_signature: signAdmission(c, seedHex, fields),
    });
    const listed = await nextLine(t, HANDSHAKE_MS);
    if (listed['_group'] === 'error') throw new GroupNetError('GROUP_NET_REFUSED', String(listed['reason']).slice(0, 200));
    const memberId = listed['member_id'];
    const seat = listed['seat'];
    if (listed['_group'] !== 'listed' || typeof memberId !== 'string' || typeof seat !== 'number')
      throw new GroupNetError('GROUP_NET_PROTOCOL', 'expected the listing');
    const challenge = String(admission['channel_challenge']);
    sendLine(t, {
      _group: 'ready',
      group_id: o.groupId,
      protocol_id: o.protocol.protocolId,
      leader_epoch: epoch,
      member_public_key: pk,
      join_nonce: nonce,
      channel_challenge: challenge,
      member_id: memberId,
      seat,
      member_signature: signChannelReady(c, seedHex, {
        group_id: o.groupId,
        protocol_id: o.protocol.protocolId,
        leader_epoch: epoch,
        member_public_key: pk,
        member_id: memberId,
        seat,
        join_nonce: nonce,
        channel_challenge: challenge,
      }),
    });
    emit('admitted', { leader: target, epoch, seat });
    return await playFrames({
      link: t,
      core: o.core,
      clock,
      emit,
      ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
      messages: groupMessages(o.protocol.protocolId, o.protocol.spec, o.protocol.specText),
      onPeers: (m) => {
        Object.assign(peers, m);
        writeFileSync(joinPath(o.dir, 'peers.json'), `${JSON.stringify(peers, null, 2)}\n`, { mode: 0o600 });
      },
    });
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
export async function hostGroup(o: {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: GroupProtocol;
  options: Record<string, unknown>;
  sessionsDir: string;
  ttlMinutes?: number;
  listen?: string[];
  actionDelayMs?: number;
  turnTimeoutMs?: number;
  onEvent?: GroupEvent;
}): Promise<GroupHostHandle> {
  const c = o.crypto;
  ensureWritableDir(o.sessionsDir, 'sessions directory');
  const autoplay = autoplayOf(o.protocol);
  const guard = new SocketGuard({ deadlineMs: HANDSHAKE_MS });
  const node = await createNode(o.seed, { listen: o.listen ?? LISTEN, guard, crypto: c });
  const key = c.ed25519Keypair(o.seed);
  const ticket: Ticket = { peer_id: node.peerId.toString(), addrs: node.getMultiaddrs().map(String) };
  let invitation: Invitation;
  try {
    invitation = createInvitation(c, {
      host: key,
      protocolId: o.protocol.protocolId,
      ticket,
      options: o.options,
      ttlMinutes: o.ttlMinutes ?? 30,
      controlMode: 'autonomous',
    });
  } finally {
    key.dispose();
  }
  const pk = toHex(c.ed25519PublicKey(o.seed));
  const groupId = groupIdOf(invitation.post_id);
  const dir = memberDir(o.sessionsDir, groupId, pk);
  const self = MemberCore.create(
    c,
    o.seed,
    dir,
    { _group_transcript: 1, protocol_id: o.protocol.protocolId, group_id: groupId, member_public_key: pk, leader_public_key: pk, leader_epoch: 0 },
    o.protocol.specText,
    autoplay,
    secureRandom,
  );
  const hub = new LeaderHub({
    crypto: c,
    seed: o.seed,
    protocol: o.protocol,
    options: o.options,
    groupId,
    self,
    random: secureRandom,
    ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
    ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }),
    ...(o.onEvent && { onEvent: o.onEvent }),
  });
  hub.setOwnTicket(ticket);
  await node.handle(GROUP_NET_PROTOCOL, (stream: unknown, connection?: unknown) => void hub.serve(stream, connection as Connection | undefined, guard), {
    runOnLimitedConnection: false,
    maxInboundStreams: 64,
  });
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
export async function joinGroup(o: {
  crypto: Crypto;
  seed: Uint8Array;
  protocol: GroupProtocol;
  invitation: Invitation;
  sessionsDir: string;
  resumeDir?: string;
  reconnectMs?: number;
  actionDelayMs?: number;
  turnTimeoutMs?: number;
  onEvent?: GroupEvent;
}): Promise<GroupRunResult> {
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
    if (core.replica.groupId !== groupId)
      throw new GroupNetError('GROUP_NET_RESUME', `${dir} is group ${core.replica.groupId}, the invitation opens ${groupId}`);
  } else {
    ensureWritableDir(o.sessionsDir, 'sessions directory');
    dir = memberDir(o.sessionsDir, groupId, pk);
    core = MemberCore.create(
      c,
      o.seed,
      dir,
      {
        _group_transcript: 1,
        protocol_id: o.protocol.protocolId,
        group_id: groupId,
        member_public_key: pk,
        leader_public_key: inv.host_public_key,
        leader_epoch: 0,
      },
      o.protocol.specText,
      autoplay,
      secureRandom,
    );
  }
  const leaderPk = core.replica.leaderPublicKey;
  return runGroupMember({
    crypto: c,
    seed: o.seed,
    protocol: o.protocol,
    options: inv.options,
    core,
    groupId,
    dir,
    random: secureRandom,
    leader: { publicKey: leaderPk, ticket: leaderPk === inv.host_public_key ? inv.ticket : undefined },
    ...(o.reconnectMs !== undefined && { reconnectMs: o.reconnectMs }),
    ...(o.actionDelayMs && { actionDelayMs: o.actionDelayMs }),
    ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }),
    ...(o.onEvent && { onEvent: o.onEvent }),
  });
}
