/**
 * A whole group on a virtual clock, run by the code that runs it over the network: the host
 * (hostGroupIroh) and each member (joinGroupIroh) with the shared hub and follower, over in-memory
 * channels, against an in-memory registry that applies the server's rules (admission by the current
 * leader's signature, lease renewal and fencing, one claim per epoch once the lease is over, from a
 * checkpoint the replaced leader certified, at or above the recovery floor).
 *
 * Time moves only when nothing else can: once every promise in flight has settled, the earliest timer
 * fires. So a 60-second turn deadline or a 15-second lease costs no real time. Faults are injected per
 * envelope a member is sent (replayed, tampered, dropped, truncated, or the channel cut), and the host
 * can die mid-session, after which the members claim and follow the next epoch through the registry.
 */
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex, utf8 } from '../crypto/encoding.js';
import { ENVELOPE_KINDS } from '../group/channel.js';
import type { ReplicaRefusal } from '../group/member.js';
import { admissionCanonical, checkpointCertificate, transportBindingCanonical } from '../group/wire.js';
import { seeded } from '../hooks/random.js';
import type { GroupMember } from '../hooks/types.js';
import { RegistryError } from '../registry/errors.js';
import type { GroupAdmission, GroupPolicy, GroupRecord } from '../registry/client.js';
import type { InvitationBody } from '../registry/invitation.js';
import type { GroupProtocol } from './group-core.js';
import type { LineLink } from './group-follower.js';
import type { HubClock, TimerHandle } from './group-hub.js';
import {
  hostGroupIroh,
  joinGroupIroh,
  type GroupEndpoint,
  type GroupHostRegistry,
  type GroupTransport,
  type IrohGroupRunResult,
  type IrohLeaderHub,
} from './group-iroh.js';

/** 2026-01-01: where virtual time starts (the registry's lease times are ISO dates). */
const T0 = Date.UTC(2026, 0, 1);
const ZERO_HASH = '0'.repeat(64);
const LEASE_SECONDS = 15;

/** Time that moves only when run() finds nothing else to do; timers fire in due order (ties in the order they were set). */
export class VirtualClock implements HubClock {
  private t = T0;
  private next = 0;
  private readonly timers = new Map<number, { at: number; fire: () => void }>();

  now(): number {
    return this.t;
  }

  setTimer(ms: number, fire: () => void): TimerHandle {
    const id = ++this.next;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fire });
    return id;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Virtual ms since the start. */
  get elapsed(): number {
    return this.t - T0;
  }

  /** Runs until `done()` holds: settles what is in flight, then fires the earliest timer; false if it ran past `maxMs` or out of timers first. */
  async run(done: () => boolean, maxMs: number): Promise<boolean> {
    for (;;) {
      // Every channel and registry call is in memory: one macrotask turn lets each promise chain run as far as it can.
      await new Promise<void>((r) => setImmediate(r));
      if (done()) return true;
      let id: number | undefined;
      let at = Infinity;
      for (const [k, x] of this.timers) if (x.at < at) [id, at] = [k, x.at];
      if (id === undefined || at - T0 > maxMs) return false;
      const x = this.timers.get(id)!;
      this.timers.delete(id);
      this.t = x.at;
      x.fire();
    }
  }
}

/** A fault on the nth envelope (0-based) a member is sent: the lines to deliver instead, or 'disconnect' to cut its channel. */
export type EnvelopeFault = (seat: number, line: string, n: number) => string[] | 'disconnect';

/** One end of an in-memory channel; recv waits on the virtual clock. */
class MemoryEnd implements LineLink {
  peer!: MemoryEnd;
  closed = false;
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;

  constructor(
    private readonly clock: HubClock,
    /** What a line sent from this end becomes on the way (the leader's end injects faults). */
    private readonly onSend: (line: string) => string[] | 'disconnect' = (l) => [l],
  ) {}

  send(line: string): void {
    if (this.closed || this.peer.closed) throw new Error('the channel is closed');
    const out = this.onSend(line);
    // The sender may have died on this very line (a host killed mid-fan-out).
    if (this.closed) throw new Error('the channel is closed');
    if (out === 'disconnect') return this.close();
    this.peer.lines.push(...out);
    this.peer.poke();
  }

  async recv(ms: number): Promise<{ line: string } | { line: null; timedOut: boolean }> {
    if (!this.lines.length && !this.closed) {
      let timer: TimerHandle;
      await new Promise<void>((r) => {
        this.wake = r;
        timer = this.clock.setTimer(ms, r);
      });
      this.clock.clearTimer(timer!);
      this.wake = undefined;
    }
    const line = this.lines.shift();
    if (line !== undefined) return { line };
    return { line: null, timedOut: !this.closed };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.poke();
    this.peer.closed = true;
    this.peer.poke();
  }

  private poke(): void {
    this.wake?.();
  }
}

/** Endpoints by ticket; each agent's transport dials from its seat, so faults know whose channel a line is on. */
class MemoryNetwork {
  private readonly endpoints = new Map<string, { accept(l: LineLink): void; links: Set<MemoryEnd> }>();
  private n = 0;
  /** Envelopes each seat has been sent so far. */
  private readonly envelopes = new Map<number, number>();

  constructor(
    private readonly clock: HubClock,
    private readonly fault: EnvelopeFault | undefined,
    private readonly onEnvelope: (seat: number, n: number) => void,
  ) {}

  transport(seat: number): GroupTransport {
    return {
      dial: async (ticket) => {
        const ep = this.endpoints.get(ticket);
        if (!ep) throw new Error('no endpoint answers at this ticket');
        const member = new MemoryEnd(this.clock);
        const leader = new MemoryEnd(this.clock, (line) => this.leaderLine(seat, line));
        member.peer = leader;
        leader.peer = member;
        ep.links.add(leader);
        ep.accept(leader);
        return { link: member, release: async () => undefined };
      },
      listen: async (): Promise<GroupEndpoint> => {
        const ticket = `memory-${++this.n}`;
        let hub: IrohLeaderHub | undefined;
        const early: LineLink[] = [];
        const ep = { accept: (l: LineLink) => (hub ? void hub.serve(l) : early.push(l)), links: new Set<MemoryEnd>() };
        this.endpoints.set(ticket, ep);
        return {
          ticket,
          handTo(h) {
            hub = h;
            for (const l of early.splice(0)) void h.serve(l);
          },
          shutdown: async () => this.shutdown(ticket),
        };
      },
    };
  }

  /** The endpoint goes away with every channel it accepted (a process that died, or one that shut it down). */
  shutdown(ticket: string): void {
    const ep = this.endpoints.get(ticket);
    this.endpoints.delete(ticket);
    for (const l of ep?.links ?? []) l.close();
  }

  private leaderLine(seat: number, line: string): string[] | 'disconnect' {
    let kind: unknown;
    try {
      kind = (JSON.parse(line) as Record<string, unknown>)['_group'];
    } catch {
      return [line];
    }
    if (typeof kind !== 'string' || !ENVELOPE_KINDS.includes(kind)) return [line];
    const n = this.envelopes.get(seat) ?? 0;
    this.envelopes.set(seat, n + 1);
    this.onEnvelope(seat, n);
    return this.fault ? this.fault(seat, line, n) : [line];
  }
}

interface GroupRow {
  record: GroupRecord;
  post: string;
  leaseExpiresAt: number;
  members: (GroupMember & { status: string })[];
}

const conflict = (code: string, message: string) => new RegistryError('REGISTRY_HTTP_409', message, 409, code);
const forbidden = (code: string, message: string) => new RegistryError('REGISTRY_HTTP_403', message, 403, code);
const notFound = (message: string) => new RegistryError('REGISTRY_HTTP_404', message, 404, 'NOT_FOUND');

/** The registry's groups API in memory, with the server's rules (ts/server/routes/groups.ts); `client(seed)` is one agent's view of it. */
export class MemoryRegistry {
  private readonly invitations = new Map<string, InvitationBody & { public_key: string }>();
  private readonly groups = new Map<string, GroupRow>();
  private ids = 0;

  constructor(
    private readonly crypto: Crypto,
    private readonly clock: HubClock,
  ) {}

  /** The options an invitation carries. */
  invitationOptions(postId: string): Record<string, unknown> {
    return { ...(this.invitations.get(postId)?.options ?? {}) };
  }

  private id(): string {
    return toHex(this.crypto.sha256(utf8(`virtual registry id ${++this.ids}`))).slice(0, 32);
  }

  private row(groupId: string): GroupRow {
    const g = this.groups.get(groupId);
    if (!g) throw notFound(`no group ${groupId}`);
    return g;
  }

  private view(g: GroupRow): GroupRecord {
    const now = this.clock.now();
    const members = g.members.filter((m) => m.status === 'active').map(({ member_id, public_key, seat, status }) => ({ member_id, public_key, seat, status }));
    return structuredClone({
      ...g.record,
      participant_count: members.length,
      members,
      leader_lease_seconds: LEASE_SECONDS,
      leader_lease_expires_at: new Date(g.leaseExpiresAt).toISOString(),
      server_time: new Date(now).toISOString(),
    });
  }

  private open(g: GroupRow): void {
    if (g.record.status === 'closed' || g.record.status === 'failed') throw conflict('GROUP_CLOSED', `the group is ${g.record.status}`);
  }

  private verify(pk: string, statement: string, sig: string): boolean {
    return /^[0-9a-f]{128}$/.test(sig) && this.crypto.ed25519Verify(fromHex(pk), utf8(statement), fromHex(sig));
  }

  /** The registry as the agent holding `seed` calls it. */
  client(seed: Uint8Array): GroupHostRegistry {
    const c = this.crypto;
    const caller = toHex(c.ed25519PublicKey(seed));
    const sign = (text: string) => toHex(c.ed25519Sign(seed, utf8(text)));
    const binding = (ticket: string, protocolId: string) => sign(transportBindingCanonical(caller, 'iroh', ticket, protocolId));
    const leaseMs = LEASE_SECONDS * 1000;
    const r = {
      postInvitation: async (body: InvitationBody) => {
        const postId = this.id();
        this.invitations.set(postId, { ...body, public_key: caller });
        return { postId };
      },
      renewInvitation: async () => undefined,
      cancelInvitation: async (postId: string) => void this.invitations.delete(postId),
      createGroup: async (postId: string, p: GroupPolicy): Promise<GroupRecord> => {
        const inv = this.invitations.get(postId);
        if (!inv) throw notFound(`no invitation ${postId}`);
        if (inv.public_key !== caller) throw forbidden('NOT_INVITATION_HOST', 'only the host of the invitation can open its group');
        const groupId = this.id();
        const now = this.clock.now();
        const row: GroupRow = {
          post: postId,
          leaseExpiresAt: now + leaseMs,
          members: [{ member_id: this.id(), public_key: caller, seat: 0, status: 'active' }],
          record: {
            group_id: groupId,
            post_id: postId,
            protocol_id: String(inv.protocol_id),
            leader_public_key: caller,
            leader_epoch: 0,
            membership_version: 1,
            participant_count: 1,
            min_participants: p.min_participants,
            max_participants: p.max_participants,
            allow_late_join: p.allow_late_join,
            recovery_mode: p.recovery_mode,
            status: 'lobby',
            checkpoint_seq: 0,
            checkpoint_hash: ZERO_HASH,
            iroh_ticket: inv.iroh_ticket,
            transport_binding_signature: inv.transport_binding_signature,
            leader_lease_seconds: LEASE_SECONDS,
            leader_lease_expires_at: undefined,
            server_time: undefined,
            members: [],
          },
        };
        this.groups.set(groupId, row);
        return this.view(row);
      },
      getGroup: async (groupId: string) => this.view(this.row(groupId)),
      getGroupByPost: async (postId: string) => {
        const g = [...this.groups.values()].find((x) => x.post === postId);
        if (!g) throw notFound(`invitation ${postId} has no group`);
        return this.view(g);
      },
      admitGroupMember: async (
        group: Pick<GroupRecord, 'group_id' | 'leader_public_key' | 'protocol_id' | 'leader_epoch'>,
        joinNonce: string,
        leaderSignature: string,
      ): Promise<GroupAdmission> => {
        const g = this.row(group.group_id);
        this.open(g);
        const rec = g.record;
        if (group.leader_epoch !== rec.leader_epoch) throw conflict('STALE_EPOCH', `leader epoch ${group.leader_epoch} is not the group's current epoch`);
        const statement = admissionCanonical({
          group_id: rec.group_id,
          leader_public_key: rec.leader_public_key,
          member_public_key: caller,
          protocol_id: rec.protocol_id,
          leader_epoch: rec.leader_epoch,
          join_nonce: joinNonce,
        });
        if (!this.verify(rec.leader_public_key, statement, leaderSignature))
          throw forbidden('ADMISSION_INVALID', "leader_signature is not the current Leader's over this admission");
        const answer = (m: GroupMember) => ({
          group_id: rec.group_id,
          member_id: m.member_id,
          public_key: m.public_key,
          seat: m.seat,
          status: m.status,
          leader_epoch: rec.leader_epoch,
          membership_version: rec.membership_version,
        });
        const existing = g.members.find((m) => m.public_key === caller);
        // A member reconnecting (after a channel loss or a leader change) keeps its id and seat.
        if (existing?.status === 'active') return answer(existing);
        if (rec.status === 'active' && !rec.allow_late_join) throw conflict('LATE_JOIN_CLOSED', 'the game has started and this group takes no late joiners');
        const seats = new Set(g.members.filter((m) => m.status === 'active').map((m) => m.seat));
        if (seats.size >= rec.max_participants) throw conflict('GROUP_FULL', `the group has its ${rec.max_participants} participants`);
        let seat = 0;
        while (seats.has(seat)) seat++;
        const m = { member_id: existing?.member_id ?? this.id(), public_key: caller, seat, status: 'active' };
        g.members = [...g.members.filter((x) => x.public_key !== caller), m];
        rec.membership_version++;
        return answer(m);
      },
      groupHeartbeat: async (
        groupId: string,
        o: { protocolId: string; leaderEpoch: number; checkpointSeq: number; checkpointHash: string; ticket: string },
      ) => {
        const g = this.row(groupId);
        this.open(g);
        const rec = g.record;
        if (rec.leader_public_key !== caller) throw conflict('NOT_LEADER', 'the caller is not the Leader of the current epoch');
        if (o.leaderEpoch !== rec.leader_epoch) throw conflict('STALE_EPOCH', `leader epoch ${o.leaderEpoch} is not the group's current epoch`);
        if (o.checkpointSeq < rec.checkpoint_seq) throw conflict('CHECKPOINT_REGRESSION', `checkpoint_seq ${o.checkpointSeq} is behind the recorded one`);
        if (o.checkpointSeq === rec.checkpoint_seq && o.checkpointHash !== rec.checkpoint_hash && rec.checkpoint_hash !== ZERO_HASH)
          throw conflict('CHECKPOINT_CONFLICT', `a different checkpoint is recorded for seq ${o.checkpointSeq}`);
        Object.assign(rec, {
          checkpoint_seq: o.checkpointSeq,
          checkpoint_hash: o.checkpointHash,
          iroh_ticket: o.ticket,
          transport_binding_signature: binding(o.ticket, o.protocolId),
        });
        g.leaseExpiresAt = this.clock.now() + leaseMs;
        return this.view(g);
      },
      groupMemberHeartbeat: async (groupId: string) => {
        const g = this.row(groupId);
        this.open(g);
        if (!g.members.some((m) => m.public_key === caller && m.status === 'active')) throw forbidden('NOT_A_MEMBER', 'the caller is not an active member');
      },
      claimGroupLeader: async (
        groupId: string,
        o: {
          protocolId: string;
          expectedEpoch: number;
          checkpoint: { seq: number; checkpoint_hash: string; frame_hash: string; membership_version: number; checkpoint_signature: string };
          ticket: string;
        },
      ) => {
        const g = this.row(groupId);
        this.open(g);
        const rec = g.record;
        const cp = o.checkpoint;
        if (!g.members.some((m) => m.public_key === caller && m.status === 'active'))
          throw forbidden('NOT_A_MEMBER', 'only an active member can claim leadership');
        if (o.expectedEpoch !== rec.leader_epoch)
          throw conflict('STALE_EPOCH', `leader epoch ${o.expectedEpoch} is not the group's current epoch ${rec.leader_epoch}`);
        if (this.clock.now() < g.leaseExpiresAt) throw conflict('LEASE_ACTIVE', "the Leader's lease has not run out");
        if (cp.seq < rec.checkpoint_seq) throw conflict('CHECKPOINT_BEHIND', `checkpoint_seq ${cp.seq} is behind the recovery floor ${rec.checkpoint_seq}`);
        const certificate = checkpointCertificate({
          group_id: groupId,
          leader_public_key: rec.leader_public_key,
          leader_epoch: rec.leader_epoch,
          seq: cp.seq,
          frame_hash: cp.frame_hash,
          membership_version: cp.membership_version,
          checkpoint_hash: cp.checkpoint_hash,
        });
        if (!this.verify(rec.leader_public_key, certificate, cp.checkpoint_signature))
          throw forbidden('CHECKPOINT_SIGNATURE_INVALID', 'the checkpoint is not certified by the Leader of the epoch it replaces');
        Object.assign(rec, {
          leader_public_key: caller,
          leader_epoch: rec.leader_epoch + 1,
          checkpoint_seq: cp.seq,
          checkpoint_hash: cp.checkpoint_hash,
          iroh_ticket: o.ticket,
          transport_binding_signature: binding(o.ticket, o.protocolId),
        });
        g.leaseExpiresAt = this.clock.now() + leaseMs;
        return this.view(g);
      },
      setGroupStatus: async (groupId: string, leaderEpoch: number, status: string) => {
        const g = this.row(groupId);
        this.open(g);
        if (g.record.leader_public_key !== caller || g.record.leader_epoch !== leaderEpoch)
          throw conflict('NOT_LEADER', 'the caller is not the Leader of the current epoch');
        g.record.status = status;
        return this.view(g);
      },
    };
    return r as unknown as GroupHostRegistry;
  }
}

export interface GroupVirtualRun {
  crypto: Crypto;
  protocol: GroupProtocol;
  options?: Record<string, unknown>;
  /** Session directories go under here, one per member as over the network. */
  outDir: string;
  /** Seats, the host's included (default: the spec's min_participants). */
  members: number;
  seed?: number;
  /** Rewrites an envelope on its way to a member (seat 1.. is the nth joiner). */
  fault?: EnvelopeFault;
  /** The host dies (its process, channels and lease renewal gone) as it sends member 1 its envelope of this index (0-based). */
  leaderDiesAfter?: number;
  /** The turn deadline when the protocol declares none (default: the drivers' 60 s). */
  turnTimeoutMs?: number;
  /** Give up after this much virtual time (default: 6 hours). */
  maxVirtualMs?: number;
}

export interface GroupVirtualSeat {
  /** 0: the host; then the members in the order they joined. */
  index: number;
  publicKey: string;
  result?: IrohGroupRunResult;
  /** The run threw (its message), or never ended in the virtual time given. */
  error?: string;
  /** The replica's refusal code, for a member the leader's envelope faulted. */
  fault?: ReplicaRefusal;
}

export interface GroupVirtualResult {
  seats: GroupVirtualSeat[];
  elapsedMs: number;
  /** The group's record at the registry when the run ended. */
  group: GroupRecord | undefined;
}

/** Runs a group to its end on the virtual clock: the host leads, members join in seat order, each with its own session directory. */
export async function runGroupVirtual(r: GroupVirtualRun): Promise<GroupVirtualResult> {
  const c = r.crypto;
  const seed = r.seed ?? 1;
  const clock = new VirtualClock();
  const registry = new MemoryRegistry(c, clock);
  const seeds = Array.from({ length: r.members }, (_, i) => c.sha256(utf8(`group-virtual ${seed} seat ${i}`)));
  let killHost: (() => void) | undefined;
  const network = new MemoryNetwork(clock, r.fault, (seat, n) => {
    // At once, in the middle of the fan-out: the envelope on its way is lost with the host.
    if (seat === 1 && r.leaderDiesAfter !== undefined && n === r.leaderDiesAfter && killHost) {
      const kill = killHost;
      killHost = undefined;
      kill();
    }
  });
  const sessionsDir = join(r.outDir, 'sessions');
  const common = {
    crypto: c,
    protocol: r.protocol,
    sessionsDir,
    clock,
    ...(r.turnTimeoutMs !== undefined && { turnTimeoutMs: r.turnTimeoutMs }),
  };
  const seats: GroupVirtualSeat[] = seeds.map((s, index) => ({ index, publicKey: toHex(c.ed25519PublicKey(s)) }));
  const settled = new Set<number>();
  const track = (i: number, p: Promise<IrohGroupRunResult>) =>
    p.then(
      (res) => {
        seats[i]!.result = res;
        if (res.fault) seats[i]!.fault = res.fault;
        settled.add(i);
      },
      (e: unknown) => {
        seats[i]!.error = (e as Error)?.message ?? String(e);
        settled.add(i);
      },
    );
  const host = await hostGroupIroh({
    ...common,
    seed: seeds[0]!,
    options: r.options ?? {},
    client: registry.client(seeds[0]!),
    transport: network.transport(0),
    random: seeded(seed * 1000),
  });
  killHost = () => {
    // The host's process dies: its channels and endpoint go, it renews no lease and its hub orders nothing more.
    void host.stop();
  };
  void track(0, host.done);
  // A member plays with the options the invitation carries (the host's hooks may add defaults).
  const invitationOptions = registry.invitationOptions(host.postId);
  // Members join one after another, as the registry seats them in order of admission.
  for (let i = 1; i < r.members; i++) {
    void track(
      i,
      joinGroupIroh({
        ...common,
        seed: seeds[i]!,
        options: invitationOptions,
        postId: host.postId,
        client: registry.client(seeds[i]!),
        transport: network.transport(i),
        random: seeded(seed * 1000 + i),
        reconnectMs: 10 * 60_000,
      }),
    );
    await clock.run(() => true, 0);
  }
  const maxMs = r.maxVirtualMs ?? 6 * 3600_000;
  const finished = await clock.run(() => settled.size === seats.length, maxMs);
  if (!finished) for (const s of seats) if (!settled.has(s.index)) s.error = `no end within ${maxMs} virtual ms`;
  let group: GroupRecord | undefined;
  try {
    group = await registry.client(seeds[0]!).getGroup(host.groupId);
  } catch {
    group = undefined;
  }
  return { seats, elapsedMs: clock.elapsed, group };
}
