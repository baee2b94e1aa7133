/**
 * A group member's side, whichever transport and registry carry its group (libp2p with the serverless
 * rule: group.ts; iroh with a registry: group-iroh.ts; in memory on a virtual clock: group-virtual.ts).
 *
 * - `followGroup`: follow the leader until the group completes; when the leader is lost, ask the
 *   succession (the serverless rule, or the registry) whom to follow next, or lead the next epoch.
 * - `playFrames` and `playReference`: one admitted channel to a leader, in each wire's dialect (the
 *   libp2p `_group` lines; the reference's envelopes, acks and pings).
 *
 * Nothing here opens a connection, reads the process clock or draws randomness: the channel is a
 * line link, time is the injected clock, randomness an injected source. So a test runs members
 * through a failover on a virtual clock with the code that runs them over the network.
 */
import { ackMessage, inputMessage, pingMessage, readLeaderMessage, type ActionOutbox, type ChannelContext, type PendingAction } from '../group/channel.js';
import { GroupNetError, parseLine, sendLine, type GroupEvent, type MemberCore } from './group-core.js';
import type { HubClock, TimerHandle } from './group-hub.js';

/** One channel between a member and its leader, one JSON object a line (a LineTransport, or an in-memory pair). */
export interface LineLink {
  /** Sends one line; throws when the channel is gone. */
  send(line: string): void;
  /** The next line; null when the peer left (`timedOut` false) or said nothing for `ms` (`timedOut` true). */
  recv(ms: number): Promise<{ line: string } | { line: null; timedOut: boolean }>;
  close(): void;
  /** Lifts the line limit once the peer is admitted. */
  setMaxLineBytes?(n: number): void;
}

/** Resolves `ms` later on the clock. */
export const sleepOn = (clock: HubClock, ms: number): Promise<void> => new Promise<void>((r) => clock.setTimer(ms, r));

/** How one channel to a leader ended: the group completed, the leader was lost, or its envelope was refused. */
export type Followed = 'completed' | 'lost' | 'fault';

/** One channel to a leader, as a transport's follower reports it. */
export interface FollowedLeader {
  outcome: Followed;
  /** The member's core, when this channel made it (at its first admission). */
  core?: MemberCore;
  /** This channel moved the member to a newer epoch. */
  advanced?: boolean;
  /** The member was admitted on this channel. */
  admitted?: boolean;
  /** Why the leader was lost, when it was. */
  why?: string;
}

/** Where a member whose leader is lost goes: to another leader, to its own lead of the next epoch, or out of the group. */
export type NextLeader<T, E> = { follow: T; advanced?: boolean } | { lead: () => Promise<E> } | { end: string };

export interface FollowGroup<T, E> {
  clock: HubClock;
  /** The leader to follow first. */
  leader: T;
  /** The member's core, when it has one before its first admission (a resumed member). */
  core?: MemberCore;
  /** One channel to `leader`: admission, then its envelopes until completion, loss or fault. */
  follow(leader: T, core: MemberCore | undefined): Promise<FollowedLeader>;
  /** The leader `lost` is gone (since `lostSince` on the clock, across channels that admitted no one): what next. */
  next(lost: T, core: MemberCore, lostSince: number): Promise<NextLeader<T, E>>;
}

/** How a member's part in a group ended, and the epochs it saw. */
export type FollowEnd<E> = { core: MemberCore | undefined; epochs: number } & (
  { how: 'completed' } | { how: 'fault' } | { how: 'ended'; reason: string } | { how: 'led'; end: E }
);

/** Follows the group's leaders until the group completes, this member faults, the succession ends it, or this member leads. */
export async function followGroup<T, E>(o: FollowGroup<T, E>): Promise<FollowEnd<E>> {
  let leader = o.leader;
  let core = o.core;
  let epochs = 1;
  let lostSince: number | undefined;
  for (;;) {
    if (core?.completed) return { how: 'completed', core, epochs };
    if (core?.fault) return { how: 'fault', core, epochs };
    const f = await o.follow(leader, core);
    if (f.core) core = f.core;
    if (f.advanced) epochs++;
    if (f.outcome === 'completed') return { how: 'completed', core, epochs };
    if (f.outcome === 'fault') return { how: 'fault', core, epochs };
    if (f.admitted) lostSince = undefined;
    lostSince ??= o.clock.now();
    // Never admitted: nothing to recover from.
    if (!core) throw new GroupNetError('GROUP_NET_UNREACHABLE', f.why ?? 'the leader cannot be reached');
    const n = await o.next(leader, core, lostSince);
    if ('end' in n) return { how: 'ended', reason: n.end, core, epochs };
    if ('lead' in n) {
      epochs++;
      return { how: 'led', end: await n.lead(), core, epochs };
    }
    leader = n.follow;
    if (n.advanced) epochs++;
  }
}

/** What an admitted channel needs besides the link: the member, its pacing, the clock and events. */
export interface PlayOptions {
  link: LineLink;
  core: MemberCore;
  clock: HubClock;
  emit: GroupEvent;
  /** A pause before each action. */
  actionDelayMs?: number;
}

/** The libp2p dialect: envelopes as the spec's frame message (a bootstrap as `_group: bootstrap`), receipts, errors and the roster. */
export async function playFrames(
  o: PlayOptions & { messages: { action: string; frame: string }; onPeers: (peers: Record<string, unknown>) => void },
): Promise<Followed> {
  const { link: t, core } = o;
  core.pending = false;
  const act = () => {
    const a = core.next();
    if (!a) return;
    const go = () => sendLine(t, { action: o.messages.action, client_seq: a.client_seq, payload: a.action });
    if (o.actionDelayMs) o.clock.setTimer(o.actionDelayMs, go);
    else go();
  };
  for (;;) {
    const r = await t.recv(60_000);
    if (r.line === null) {
      if (r.timedOut) continue;
      return core.completed ? 'completed' : 'lost';
    }
    const m = parseLine(r.line);
    if (!m) continue;
    if (m['_group'] === 'bootstrap' || m['action'] === o.messages.frame) {
      const env = m['_group'] === 'bootstrap' ? m['envelope'] : m['frame'];
      if (!core.apply(env, m['_group'] === 'bootstrap')) return 'fault';
      if (core.completed) return 'completed';
      act();
    } else if (m['_group'] === 'receipt') {
      core.accepted(Number(m['client_seq']));
      act();
    } else if (m['_group'] === 'error') {
      if (m['client_seq'] !== undefined) {
        core.refused();
        o.emit('action_refused', { reason: String(m['reason']).slice(0, 200) });
      } else throw new GroupNetError('GROUP_NET_REFUSED', String(m['reason']).slice(0, 200));
    } else if (m['_group'] === 'peers' && typeof m['peers'] === 'object' && m['peers'] !== null) o.onPeers(m['peers'] as Record<string, unknown>);
  }
}

/** The reference waits 60 s for a member's first envelope. */
const FIRST_ENVELOPE_MS = 60_000;
/** A member pings its leader this often, and takes it for gone after this much silence. */
const PING_MS = 2_000;
const SILENCE_MS = 10_000;

/** The reference's dialect: envelopes (acknowledged), receipts, this seat's actions, and a ping while the leader is quiet. */
export async function playReference(o: PlayOptions & { outbox: ActionOutbox; ctx: ChannelContext; randomHex: (bytes: number) => string }): Promise<Followed> {
  const { link: t, core, outbox, ctx, clock } = o;
  const pk = core.publicKey;
  let first = true;
  let heard = clock.now();
  let retry: TimerHandle | undefined;
  const sendInput = (p: PendingAction) => sendLine(t, inputMessage(ctx, pk, p));
  const act = () => {
    if (outbox.pending) return;
    const a = core.next();
    if (!a) return;
    const p = outbox.start(a.client_seq, a.action, o.randomHex(16));
    if (o.actionDelayMs) clock.setTimer(o.actionDelayMs, () => sendInput(p));
    else sendInput(p);
  };
  /** The checkpoint counts this member's actions: one it counts is settled, even if its receipt never came. */
  const settle = () => {
    if (outbox.pending && outbox.reconcile(core.clientSeq)) core.accepted(core.clientSeq);
  };
  const stopRetry = () => {
    if (retry !== undefined) clock.clearTimer(retry);
    retry = undefined;
  };
  try {
    for (;;) {
      const r = await t.recv(first ? FIRST_ENVELOPE_MS : PING_MS);
      if (r.line === null) {
        if (!r.timedOut) return core.completed ? 'completed' : 'lost';
        if (first) throw new GroupNetError('GROUP_NET_PROTOCOL', 'the leader sent no envelope after admitting this member');
        if (clock.now() - heard > SILENCE_MS) {
          o.emit('leader_silent', { ms: clock.now() - heard });
          return 'lost';
        }
        sendLine(t, pingMessage(o.randomHex(8)));
        continue;
      }
      heard = clock.now();
      const m = readLeaderMessage(parseLine(r.line));
      if (m.kind === 'envelope') {
        if (!core.apply(m.envelope, first)) return 'fault';
        const cp = core.replica.checkpoint;
        if (cp) sendLine(t, ackMessage(ctx, { seq: core.replica.seq, frameHash: core.replica.frameHash, checkpointHash: cp.checkpoint_hash }));
        settle();
        if (core.completed) return 'completed';
        if (first) {
          first = false;
          // An action the previous channel left unanswered goes again, under this epoch: the leader answers a duplicate if it had it.
          if (outbox.pending) {
            core.pending = true;
            sendInput(outbox.pending);
            continue;
          }
        }
        act();
      } else if (first) {
        if (m.kind === 'error') throw new GroupNetError('GROUP_NET_REFUSED', m.reason);
        if (m.kind !== 'pong') throw new GroupNetError('GROUP_NET_PROTOCOL', 'leader did not send an authority snapshot');
      } else if (m.kind === 'receipt') {
        const pending = outbox.pending;
        const outcome = outbox.receipt(m.receipt);
        if (outcome === 'accepted' && pending) core.accepted(pending.client_seq);
        else if (outcome === 'rejected') {
          core.refused();
          o.emit('action_refused', { reason: String(m.receipt['reason']).slice(0, 200) });
        } else if (outcome === 'retry' && pending) {
          stopRetry();
          retry = clock.setTimer(1_000, () => sendInput(pending));
        }
        if (outcome === 'accepted' || outcome === 'rejected') act();
      } else if (m.kind === 'error') return 'lost';
    }
  } finally {
    stopRetry();
  }
}
