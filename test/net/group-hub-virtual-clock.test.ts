// The leader hub both transports share (ts/net/group-hub.ts), driven as a driver drives it but with
// in-memory member links and a virtual clock: a minute-long turn deadline costs no real time, and what
// happens at the deadline is checked to the millisecond. Every member is a real MemberCore (replica,
// transcript, autoplay), so each frame the hub sends is verified as a member process would verify it.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { toHex, utf8 } from '../../ts/crypto/encoding.js';
import { serverlessSuccessor } from '../../ts/group/arbiter.js';
import { verifyGroupSessionAt } from '../../ts/group/session-dir.js';
import { seeded } from '../../ts/hooks/random.js';
import type { GroupMember } from '../../ts/hooks/types.js';
import { memberDir, MemberCore, type GroupProtocol } from '../../ts/net/group-core.js';
import { GroupHub, type HubClock, type MemberLink } from '../../ts/net/group-hub.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import holdem from '../../ts/protocols/texas-holdem/hooks.js';
import { loadSpec } from '../../ts/spec/index.js';
import { tempDir } from '../shared/tmp.js';

const c = getCrypto();
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1);

/** Time that moves only on advance(); a timer fires with now() at its own due time, in due order. */
class VirtualClock implements HubClock {
  private t = T0;
  private next = 0;
  private readonly timers = new Map<number, { at: number; fire: () => void }>();
  now(): number {
    return this.t;
  }
  setTimer(ms: number, fire: () => void): number {
    const id = ++this.next;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fire });
    return id;
  }
  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** The earliest pending timer's due time, if any. */
  get due(): number | undefined {
    let at: number | undefined;
    for (const x of this.timers.values()) if (at === undefined || x.at < at) at = x.at;
    return at;
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let id: number | undefined;
      for (const [k, x] of this.timers) if (x.at <= end && (id === undefined || x.at < this.timers.get(id)!.at)) id = k;
      if (id === undefined) break;
      const x = this.timers.get(id)!;
      this.timers.delete(id);
      this.t = x.at;
      x.fire();
    }
    this.t = end;
  }
}

/** A member's channel in memory: envelopes wait in its inbox until the test delivers them, as a socket would hold them. */
class MemoryLink implements MemberLink {
  open = true;
  readonly inbox: { envelope: unknown; bootstrap: boolean }[] = [];
  deliver(envelope: unknown, bootstrap: boolean): boolean {
    if (!this.open) return false;
    this.inbox.push({ envelope, bootstrap });
    return true;
  }
  close(): void {
    this.open = false;
  }
}

interface Seat {
  seed: Uint8Array;
  pk: string;
  core: MemberCore;
  link?: MemoryLink;
  /** A member that has gone silent reads what it is sent but sends nothing. */
  silent: boolean;
}

function holdemProtocol(): GroupProtocol {
  const l = loadSpec(c, join(BUILTIN_DIR, 'texas-holdem'));
  return { spec: l.spec, specText: l.text, protocolId: l.protocolId!, hooks: holdem };
}

/** Four seats of Hold'em, seat 0 leading epoch 0 on the virtual clock; members 1–3 are linked before the start. */
function table(tag: string) {
  const protocol = holdemProtocol();
  const options = { max_hands: 2, deal_seed: tag };
  const groupId = `grp-${tag}`;
  const sessions = tempDir(`group-hub-${tag}`);
  const seeds = [0, 1, 2, 3].map((i) => c.sha256(utf8(`${tag} seat ${i}`)));
  const leaderPk = toHex(c.ed25519PublicKey(seeds[0]!));
  const seats: Seat[] = seeds.map((seed, i) => {
    const pk = toHex(c.ed25519PublicKey(seed));
    const header = {
      _group_transcript: 1 as const,
      protocol_id: protocol.protocolId,
      group_id: groupId,
      member_public_key: pk,
      leader_public_key: leaderPk,
      leader_epoch: 0,
    };
    return {
      seed,
      pk,
      core: MemberCore.create(c, seed, memberDir(sessions, groupId, pk), header, protocol.specText, holdem.autoplay!, seeded(100 + i)),
      silent: false,
    };
  });
  const clock = new VirtualClock();
  const events: { type: string; data: Record<string, unknown>; at: number }[] = [];
  const hubFor = (leader: Seat, epoch: number) =>
    new GroupHub<MemoryLink>({
      crypto: c,
      seed: leader.seed,
      protocol,
      options,
      groupId,
      leaderEpoch: epoch,
      self: leader.core,
      random: seeded(7),
      clock,
      turnTimeoutMs: MINUTE,
      onEvent: (type, data) => events.push({ type, data, at: clock.now() }),
    });
  const members: GroupMember[] = seats.map((s, i) => ({ member_id: `seat-${i}`, public_key: s.pk, seat: i, status: 'active' }));
  return { protocol, seats, clock, events, hubFor, members };
}

/**
 * What the drivers do between clock ticks: each linked member applies what it was sent, then (unless
 * silent) sends its next action; the hub's receipt settles it. Runs until no one has anything to do, or
 * `maxActions` member actions have been taken (what was sent is still delivered).
 */
function settle(hub: GroupHub<MemoryLink>, seats: Seat[], maxActions = Infinity): void {
  let actions = 0;
  for (let round = 0; round < 10_000; round++) {
    let moved = false;
    for (const s of seats) {
      while (s.link?.inbox.length) {
        const d = s.link.inbox.shift()!;
        expect(s.core.apply(d.envelope, d.bootstrap), `seat ${seats.indexOf(s)}: ${s.core.fault}`).toBe(true);
        moved = true;
      }
    }
    for (const s of seats) {
      if (!s.link?.open || s.silent || actions >= maxActions) continue;
      const a = s.core.next();
      if (!a) continue;
      actions++;
      const r = hub.input(s.pk, a.client_seq, a.action);
      if (r.status === 'rejected') s.core.refused();
      else {
        s.core.accepted(a.client_seq);
        hub.afterFrame();
      }
      moved = true;
    }
    if (!moved) return;
  }
  throw new Error('the table never settled');
}

const onTurn = (s: Seat) => (s.core.replica.view as { current_player?: string } | null)?.current_player === s.pk;
const timeouts = (events: { type: string; data: Record<string, unknown>; at: number }[]) => events.filter((e) => e.type === 'turn_timeout');

/** Moves the clock to each next timer until `stop` holds or the epoch ends; no real time passes. */
async function runClock(hub: GroupHub<MemoryLink>, clock: VirtualClock, seats: Seat[], stop: () => boolean = () => false): Promise<void> {
  let ended = false;
  void hub.done.then(() => (ended = true));
  for (let i = 0; i < 1_000; i++) {
    settle(hub, seats);
    await Promise.resolve();
    if (ended || stop()) return;
    const due = clock.due;
    if (due === undefined) throw new Error('the group waits on nothing, yet has not ended');
    clock.advance(due - clock.now());
  }
  throw new Error('the group never ended');
}

/** Each seat's receipt verifies offline, and all end on one final frame. */
function allVerify(seats: Seat[]): void {
  expect(new Set(seats.map((s) => s.core.replica.frameHash)).size).toBe(1);
  for (const s of seats) {
    s.core.finish();
    expect(verifyGroupSessionAt(c, s.core.record.dir), s.core.record.dir).toMatchObject({ ok: true, receipt: true, completed: true });
  }
}

/** Epoch 0 led by seat 0, the other three linked in the lobby, the first hand dealt. */
function started(tag: string) {
  const t = table(tag);
  const hub = t.hubFor(t.seats[0]!, 0);
  for (const [i, s] of t.seats.entries()) {
    if (i === 0) continue;
    s.link = new MemoryLink();
    hub.connect(t.members[i]!, s.link);
  }
  hub.start(t.members, 4);
  hub.afterFrame();
  return { ...t, hub };
}

describe('the shared leader hub on a virtual clock', () => {
  it('a member silent on its turn is timed out at the deadline (not a millisecond before), in a frame every member verifies; the table completes', async () => {
    const { seats, clock, events, hub } = started('hub-silent');
    const victim = seats[3]!;
    // The victim plays its first turn a second after it comes, then goes silent on its second.
    victim.silent = true;
    settle(hub, seats);
    expect(onTurn(victim)).toBe(true);
    clock.advance(1_000);
    const a = victim.core.next()!;
    expect(hub.input(victim.pk, a.client_seq, a.action).status).toBe('accepted');
    victim.core.accepted(a.client_seq);
    hub.afterFrame();
    settle(hub, seats);
    expect(onTurn(victim)).toBe(true);
    const deadline = clock.now() + MINUTE;
    expect(hub.leader!.turnDeadline()).toBe(deadline);
    const seq = victim.core.replica.seq!;

    clock.advance(MINUTE - 1);
    settle(hub, seats);
    expect(timeouts(events)).toEqual([]);
    expect(victim.core.replica.seq).toBe(seq);

    clock.advance(1);
    expect(timeouts(events)).toEqual([{ type: 'turn_timeout', data: { public_key: victim.pk, seat: 3, reason: 'silent' }, at: deadline }]);
    settle(hub, seats);
    // Every member, the silent one too, verified the leader's frame for it: its events open with turn_timeout.
    for (const s of seats) {
      expect(s.core.replica.seq).toBeGreaterThan(seq);
      expect(JSON.stringify(s.core.replica.envelopes)).toContain(`{"kind":"turn_timeout","public_key":"${victim.pk}"`);
    }

    // Still silent (but connected): each later turn of its waits out a full deadline, and the match ends on the virtual clock.
    const real = Date.now();
    await runClock(hub, clock, seats);
    await expect(hub.done).resolves.toMatchObject({ completed: true });
    expect(Date.now() - real).toBeLessThan(20_000);
    expect(clock.now() - T0).toBeGreaterThanOrEqual(timeouts(events).length * MINUTE);
    expect(timeouts(events).every((e) => e.data['public_key'] === victim.pk && e.data['reason'] === 'silent')).toBe(true);
    allVerify(seats);
    // The links close after the grace for lines in flight, on the hub's clock too.
    const closed = hub.close(1_000);
    clock.advance(999);
    expect(seats[1]!.link!.open).toBe(true);
    clock.advance(1);
    await closed;
    expect(seats.slice(1).map((s) => s.link!.open)).toEqual([false, false, false]);
  });

  it('a member whose link drops on its turn is timed out as absent at the deadline; back on a new link (join --resume) it is bootstrapped and plays its seat again', async () => {
    const { seats, clock, events, hub, members, protocol } = started('hub-absent');
    const victim = seats[2]!;
    victim.silent = true;
    settle(hub, seats);
    expect(onTurn(victim)).toBe(true);
    const deadline = hub.leader!.turnDeadline()!;
    // The transport saw the socket close: the driver tells the hub.
    hub.disconnect(victim.pk, victim.link!);
    expect(victim.link!.open).toBe(false);
    expect(events.filter((e) => e.type === 'member_disconnected').map((e) => e.data)).toEqual([{ public_key: victim.pk }]);
    // The deadline still runs from the turn's start.
    expect(hub.leader!.turnDeadline()).toBe(deadline);
    clock.advance(deadline - clock.now() - 1);
    expect(timeouts(events)).toEqual([]);
    clock.advance(1);
    expect(timeouts(events)).toEqual([{ type: 'turn_timeout', data: { public_key: victim.pk, seat: 2, reason: 'absent' }, at: deadline }]);
    settle(hub, seats);
    expect(hub.leader!.completed).toBe(false);

    // The member process restarts from its own directory, dials again, is admitted: a bootstrap, and its seat is its own again.
    const seqBefore = victim.core.clientSeq;
    victim.core.record.close();
    victim.core = MemberCore.resume(c, victim.seed, victim.core.record.dir, protocol.hooks.autoplay!, seeded(42));
    victim.link = new MemoryLink();
    victim.silent = false;
    hub.connect(members[2]!, victim.link);
    hub.welcome(members[2]!);
    expect(victim.link.inbox.map((d) => d.bootstrap)).toEqual([true]);
    await runClock(hub, clock, seats);
    await expect(hub.done).resolves.toMatchObject({ completed: true });
    expect(victim.core.clientSeq).toBeGreaterThan(seqBefore);
    allVerify(seats);
  });

  it("the leader dies mid-hand: the successor by the serverless rule leads epoch 1 from its own checkpoint, the others follow, the old leader's turns are timed out until it rejoins as a member", async () => {
    const { seats, clock, events, hub, members, hubFor } = started('hub-failover');
    settle(hub, seats, 5);
    expect(hub.leader!.completed).toBe(false);
    // The leader's process dies: its links drop and its timers die with it.
    hub.finish({ completed: false, outcome: null, reason: 'crashed' });
    for (const s of seats) s.link = undefined;
    clock.advance(10_000);

    const old = seats[0]!;
    const next = seats[1]!;
    expect(serverlessSuccessor(next.core.replica.members, old.pk)?.public_key).toBe(next.pk);
    const cp = next.core.replica.checkpoint!;
    next.core.advanceEpoch(next.pk, 1);
    next.core.pending = false;
    const hub1 = hubFor(next, 1);
    hub1.resume(cp as unknown as Record<string, unknown>, next.core.replica.membershipVersion);
    for (const i of [2, 3]) {
      const s = seats[i]!;
      s.core.advanceEpoch(next.pk, 1);
      s.core.pending = false;
      s.link = new MemoryLink();
      hub1.connect(members[i]!, s.link);
      hub1.welcome(members[i]!);
    }
    hub1.afterFrame();
    // The new epoch's first frame refunds and redeals the interrupted hand.
    settle(hub1, seats);
    expect(JSON.stringify(seats[3]!.core.replica.envelopes.filter((e) => e['leader_epoch'] === 1)[0])).toMatch(/refunded/);

    // The old leader never attached: its turns resolve at their deadlines, on the virtual clock.
    const resumedAt = clock.now();
    await runClock(hub1, clock, seats, () => timeouts(events).some((e) => e.data['public_key'] === old.pk));
    const first = timeouts(events).find((e) => e.data['public_key'] === old.pk)!;
    expect(first).toMatchObject({ data: { reason: 'absent' } });
    expect(first.at - resumedAt).toBeLessThanOrEqual(MINUTE);

    // It comes back as a member of its successor, and plays.
    old.core.advanceEpoch(next.pk, 1);
    old.core.pending = false;
    old.link = new MemoryLink();
    hub1.connect(members[0]!, old.link);
    hub1.welcome(members[0]!);
    const seqBefore = old.core.clientSeq;
    await runClock(hub1, clock, seats);
    await expect(hub1.done).resolves.toMatchObject({ completed: true });
    expect(old.core.clientSeq).toBeGreaterThan(seqBefore);
    for (const s of seats) expect(s.core.replica.leaderEpoch).toBe(1);
    allVerify(seats);
  });
});
