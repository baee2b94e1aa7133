// Issue 33 item 5: a member killed (or silent) on its turn stalled a whole table. The leader now times
// every turn the group waits on, on the driver's clock (virtual here, so a minute-long deadline costs
// nothing), and past the deadline resolves the turn by the protocol's own rule
// (proto_group_timeout_action), as one ordinary frame that every member's replica verifies. A member that
// is gone sits out its later turns (resolved at once) until it comes back; then it plays its seat again.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { fromHex, toHex, utf8 } from '../../ts/crypto/encoding.js';
import { GroupLeader, groupConfigFromSpec, type Envelopes } from '../../ts/group/leader.js';
import { runGroupLocal, type GroupAbsence } from '../../ts/group/local.js';
import { GroupReplica } from '../../ts/group/member.js';
import { verifyGroupSessionAt } from '../../ts/group/session-dir.js';
import { seeded } from '../../ts/hooks/random.js';
import type { GroupHooks, GroupMember, HookContext, HooksModule } from '../../ts/hooks/types.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import aetherSigil from '../../ts/protocols/aether-sigil/hooks.js';
import mahjong from '../../ts/protocols/classical-mahjong/hooks.js';
import communityRoom from '../../ts/protocols/community-room/hooks.js';
import bridge from '../../ts/protocols/contract-bridge/hooks.js';
import landlord from '../../ts/protocols/landlord/hooks.js';
import meetingRoom from '../../ts/protocols/meeting-room/hooks.js';
import holdem from '../../ts/protocols/texas-holdem/hooks.js';
import tractor from '../../ts/protocols/upgrade-tractor/hooks.js';
import { loadSpec } from '../../ts/spec/index.js';
import { tempDir } from '../shared/tmp.js';

const crypto = getCrypto('wasm');
const MINUTE = 60_000;
const ctx = (options: Record<string, unknown>, seed = 1): HookContext => ({
  role: 'host',
  options,
  args: [],
  stateDir: '',
  decision: null,
  random: seeded(seed),
});
const keySeed = (i: number) => toHex(crypto.sha256(utf8(`turn-timeout seat ${i}`)));
const MEMBERS: GroupMember[] = [0, 1, 2, 3].map((i) => ({
  member_id: `m-${i}`,
  public_key: toHex(crypto.ed25519PublicKey(fromHex(keySeed(i)))),
  seat: i,
  status: 'active',
}));
const PK = MEMBERS.map((m) => m.public_key);
const spec = (folder: string) => loadSpec(crypto, join(BUILTIN_DIR, folder));

/** A Hold'em leader on the virtual clock, with a verifying replica per member. */
function holdemTable(hooks: GroupHooks = holdem.create(ctx({ max_hands: 2, deal_seed: 'turns' }))) {
  const groupId = 'grp-turn-timeout';
  const leader = GroupLeader.start({
    crypto,
    hooks,
    config: groupConfigFromSpec(spec('texas-holdem').spec),
    groupId,
    leaderSeed: keySeed(0),
    leaderEpoch: 0,
    membershipVersion: 4,
    members: MEMBERS,
    turnTimeoutMs: MINUTE,
    now: 1_000,
  });
  const replicas = MEMBERS.map(
    (m) => new GroupReplica({ crypto, groupId, viewerPublicKey: m.public_key, leaderPublicKey: leader.leaderPublicKey, leaderEpoch: 0 }),
  );
  const boot = leader.bootstrapEnvelopes();
  for (const r of replicas) expect(r.apply(boot[r.viewerPublicKey], { bootstrap: true })).toEqual({ status: 'applied' });
  /** Every member not `away` verifies the frame. */
  const deliver = (envs: Envelopes, away: string[] = []) => {
    for (const r of replicas) if (!away.includes(r.viewerPublicKey)) expect(r.apply(envs[r.viewerPublicKey])).toEqual({ status: 'applied' });
  };
  const view = (i = 0) => replicas[i]!.view as Record<string, unknown> & { current_player: string; hand_number: number; legal: { to_call: number } };
  return { leader, replicas, deliver, view };
}

describe('the leader times the turns the group waits on', () => {
  it("Hold'em: an absent member's turn is resolved at its deadline by the protocol's rule, it sits out after, and once back it has a full deadline and plays", () => {
    const { leader, replicas, deliver, view } = holdemTable();
    const seqs = [0, 0, 0, 0];
    // Seat 3 is under the gun: the hand waits on it from the start (t = 1 s).
    expect(view().current_player).toBe(PK[3]);
    expect(leader.awaitedTurns).toEqual([{ public_key: PK[3], deadline: 1_000 + MINUTE, reason: 'silent' }]);
    expect(leader.turnDeadline()).toBe(1_000 + MINUTE);
    // Its connection drops mid-turn: the deadline still runs from the turn's start.
    leader.memberAbsent(PK[3]!, 30_000);
    expect(leader.awaitedTurns).toEqual([{ public_key: PK[3], deadline: 1_000 + MINUTE, reason: 'absent' }]);
    expect(leader.onTurnTimer(MINUTE)).toEqual({ resolved: [], failed: [] });
    const seq = leader.seq;
    const fired = leader.onTurnTimer(1_000 + MINUTE);
    expect(fired.failed).toEqual([]);
    expect(fired.resolved.map(({ public_key, seat, reason, action }) => ({ public_key, seat, reason, action }))).toEqual([
      { public_key: PK[3], seat: 3, reason: 'absent', action: { kind: 'fold' } },
    ]);
    expect(leader.seq).toBe(seq + 1);
    const env = fired.resolved[0]!.envelopes[PK[0]!]!;
    expect(env['_group']).toBe('frame');
    expect((env['events'] as Record<string, unknown>[]).slice(0, 2)).toMatchObject([
      { kind: 'turn_timeout', public_key: PK[3], seat: 3, reason: 'absent' },
      { kind: 'fold', public_key: PK[3] },
    ]);
    // An ordinary frame: the members still here verify it; the absent member's client_seq is untouched.
    deliver(fired.resolved[0]!.envelopes, [PK[3]!]);
    expect(leader.checkpoint.last_client_seq).toEqual({});
    // The next turn (the button's) is timed from the timeout's frame.
    expect(leader.awaitedTurns).toEqual([{ public_key: PK[0], deadline: 1_000 + 2 * MINUTE, reason: 'silent' }]);

    // The others play the hand out passively; in the next hand seat 3's turn is resolved at once.
    let now = 70_000;
    // The member on turn calls or checks, from its own view.
    const passiveAction = () => {
      const i = PK.indexOf(view().current_player);
      return { i, action: { kind: view(i).legal.to_call > 0 ? 'call' : 'check' } };
    };
    const passive = (away: string[]) => {
      const { i, action } = passiveAction();
      deliver(leader.applyInput({ actor_public_key: PK[i]!, client_seq: ++seqs[i]!, action }, (now += 1_000)).envelopes, away);
    };
    while (view().hand_number === 1) passive([PK[3]!]);
    while (view().current_player !== PK[3]) passive([PK[3]!]);
    expect(leader.turnDeadline()).toBe(now);
    const sitOut = leader.onTurnTimer(now);
    expect(sitOut.resolved.map((t) => [t.seat, t.reason])).toEqual([[3, 'absent']]);
    deliver(sitOut.resolved[0]!.envelopes, [PK[3]!]);

    // Seat 3 comes back (join --resume): a bootstrap, and from now on its turns wait a full deadline again.
    leader.memberPresent(PK[3]!, (now += 500));
    expect(replicas[3]!.apply(leader.bootstrapEnvelope(PK[3]!), { bootstrap: true })).toEqual({ status: 'applied' });
    while (!leader.completed && view().current_player !== PK[3]) passive([]);
    expect(leader.completed).toBe(false);
    expect(leader.awaitedTurns).toEqual([{ public_key: PK[3], deadline: now + MINUTE, reason: 'silent' }]);
    expect(leader.onTurnTimer(now + MINUTE - 1).resolved).toEqual([]);
    // And it plays its own seat: its first action is client_seq 1.
    const v3 = view(3);
    const own = leader.applyInput({ actor_public_key: PK[3]!, client_seq: 1, action: { kind: v3.legal.to_call > 0 ? 'call' : 'check' } }, now + 2_000);
    expect(own.receipt.status).toBe('accepted');
    deliver(own.envelopes);
  });

  it("a silent member that acts in time restarts no one else's clock, and its own next turn starts afresh", () => {
    const { leader, deliver, view } = holdemTable();
    // Seat 3 acts at 50 s: seat 0's turn is timed from then, not from the hand's start.
    deliver(leader.applyInput({ actor_public_key: PK[3]!, client_seq: 1, action: { kind: 'call' } }, 50_000).envelopes);
    expect(view().current_player).toBe(PK[0]);
    expect(leader.turnDeadline()).toBe(50_000 + MINUTE);
    // Seat 0 stays connected and silent: its turn is resolved as `silent`, by the same rule (it faces the big blind: fold).
    const fired = leader.onTurnTimer(50_000 + MINUTE);
    expect(fired.resolved.map((t) => [t.seat, t.reason, t.action])).toEqual([[0, 'silent', { kind: 'fold' }]]);
    deliver(fired.resolved[0]!.envelopes);
    // A silent (present) member does not sit out: the small blind's turn waits a whole deadline.
    expect(leader.turnDeadline()).toBe(50_000 + 2 * MINUTE);
  });

  it('a timeout action the hooks refuse is reported (HOOK_REJECTED), changes nothing, and is not retried until the state moves', () => {
    const base = holdem.create(ctx({ max_hands: 2, deal_seed: 'turns' }));
    // Seat 3 faces the big blind, and this rule would check: the hooks refuse it.
    const refusing = holdemTable({ ...base, proto_group_timeout_action: (st, m, why) => base.proto_group_timeout_action!(st, m, why) && { kind: 'check' } });
    const seq = refusing.leader.seq;
    const frame = refusing.leader.frameHash;
    const out = refusing.leader.onTurnTimer(1_000 + MINUTE);
    expect(out.resolved).toEqual([]);
    expect(out.failed).toEqual([{ public_key: PK[3], code: 'HOOK_REJECTED', message: 'check is illegal while facing a wager' }]);
    expect([refusing.leader.seq, refusing.leader.frameHash]).toEqual([seq, frame]);
    expect(refusing.leader.turnDeadline()).toBeNull();
    // A hook that throws is not hidden either: its turn fails at the deadline with the hook's message.
    const throwing = holdemTable({
      ...base,
      proto_group_timeout_action: (st, m, why) => {
        if (base.proto_group_timeout_action!(st, m, why)) throw new Error('no rule here');
        return null;
      },
    });
    expect(throwing.leader.onTurnTimer(1_000 + MINUTE).failed).toMatchObject([{ public_key: PK[3], code: 'HOOK_REJECTED', message: 'no rule here' }]);
  });

  it('nothing is timed without a deadline, or in a protocol with no turns (Community Room)', () => {
    const noDeadline = GroupLeader.start({
      crypto,
      hooks: holdem.create(ctx({ deal_seed: 'x' })),
      config: groupConfigFromSpec(spec('texas-holdem').spec),
      groupId: 'g',
      leaderSeed: keySeed(0),
      leaderEpoch: 0,
      membershipVersion: 4,
      members: MEMBERS,
    });
    expect([noDeadline.turnDeadline(), noDeadline.awaitedTurns]).toEqual([null, []]);
    const room = GroupLeader.start({
      crypto,
      hooks: communityRoom.create(ctx({})),
      config: groupConfigFromSpec(spec('community-room').spec),
      groupId: 'g',
      leaderSeed: keySeed(0),
      leaderEpoch: 0,
      membershipVersion: 4,
      members: MEMBERS,
      turnTimeoutMs: MINUTE,
    });
    room.memberAbsent(PK[1]!, 5);
    expect([room.turnDeadline(), room.onTurnTimer(10 * MINUTE)]).toEqual([null, { resolved: [], failed: [] }]);
  });
});

describe('each built-in resolves a timed-out turn by its own rule', () => {
  it('Meeting Room: a disconnected speaker yields the floor; a connected one keeps it; Community Room has no turns', () => {
    const h = meetingRoom.create(ctx({}));
    let state = h.proto_group_initial_state(MEMBERS);
    state = h.proto_group_handle(state, MEMBERS[2]!, { kind: 'request_to_speak' }).state;
    expect(state['active_speaker']).toBe(PK[2]);
    expect(h.proto_group_timeout_action!(state, MEMBERS[2]!, 'silent')).toBeNull();
    expect(h.proto_group_timeout_action!(state, MEMBERS[1]!, 'absent')).toBeNull();
    const action = h.proto_group_timeout_action!(state, MEMBERS[2]!, 'absent');
    expect(action).toEqual({ kind: 'yield_speaker' });
    expect(h.proto_group_handle(structuredClone(state), MEMBERS[2]!, action!).state['active_speaker']).toBe('');
    expect(communityRoom.create(ctx({})).proto_group_timeout_action).toBeUndefined();
  });

  // Played by the autoplay through the hooks; at every step, every member the group waits on must have a
  // timeout action the protocol accepts, and the rules must be the conservative ones.
  const GAMES: { name: string; module: HooksModule; options: Record<string, unknown>; steps: number; kinds: string[] }[] = [
    { name: "Texas Hold'em: check, else fold", module: holdem, options: { max_hands: 3, deal_seed: 'rules' }, steps: 400, kinds: ['check', 'fold'] },
    {
      name: 'Landlord: bid 0, pass, else lead the lowest single',
      module: landlord,
      options: { deal_seed: 'rules' },
      steps: 400,
      kinds: ['bid', 'pass', 'play'],
    },
    { name: 'Aether Sigil: end the turn', module: aetherSigil, options: { deal_seed: 'rules' }, steps: 400, kinds: ['end_turn'] },
    { name: 'Contract Bridge: pass, else the lowest legal card', module: bridge, options: { deal_seed: 'rules' }, steps: 400, kinds: ['pass', 'play'] },
    {
      name: 'Classical Mahjong: discard the newest tile, pass a claim',
      module: mahjong,
      options: { deal_seed: 'rules' },
      steps: 250,
      kinds: ['discard', 'pass_claim'],
    },
    {
      name: 'Upgrade: pass the declaration, bury the weakest, lead the weakest, follow legally',
      module: tractor,
      options: { deal_seed: 'rules' },
      steps: 250,
      kinds: ['pass_declare', 'bury', 'play'],
    },
  ];
  it.each(GAMES)('$name', ({ module, options, steps, kinds }) => {
    const h = module.create(ctx(options, 7)) as GroupHooks;
    const random = seeded(11);
    let state = h.proto_group_initial_state(structuredClone(MEMBERS));
    const seen = new Set<string>();
    let completed = false;
    for (let step = 0; step < steps && !completed; step++) {
      const awaited = MEMBERS.filter((m) => {
        const action = h.proto_group_timeout_action!(state, m, 'absent');
        if (action === null) return false;
        seen.add(String(action['kind']));
        if (action['kind'] === 'bid') expect(action['value']).toBe(0);
        if (action['kind'] === 'bury') expect((action['card_ids'] as string[]).length).toBe(8);
        expect(() => h.proto_group_handle(structuredClone(state), m, structuredClone(action)), JSON.stringify(action)).not.toThrow();
        return true;
      });
      // Someone is always waited on until the game ends: no turn can stall the table.
      expect(awaited.length).toBeGreaterThan(0);
      const m = awaited[Math.floor(random() * awaited.length)]!;
      const choice = module.autoplay!(h.proto_group_view(state, m), m, random) ?? h.proto_group_timeout_action!(state, m, 'absent')!;
      let r;
      try {
        r = h.proto_group_handle(structuredClone(state), m, choice);
      } catch {
        r = h.proto_group_handle(structuredClone(state), m, h.proto_group_timeout_action!(state, m, 'absent')!);
      }
      state = r.state;
      completed = r.completed === true;
    }
    expect([...seen].sort()).toEqual([...kinds].sort());
  });
});

describe('a game with a member gone on its turn completes, on the virtual clock', () => {
  const play = async (folder: string, module: HooksModule, options: Record<string, unknown>, absence: GroupAbsence, seed = 3) => {
    const l = spec(folder);
    // Each move takes a virtual second, so a member away for minutes misses part of the game.
    const r = await runGroupLocal({
      crypto,
      spec: l.spec,
      specText: l.text,
      protocolId: l.protocolId!,
      hooks: module,
      options,
      seed,
      outDir: tempDir(`turns-${folder}`),
      turnTimeoutMs: MINUTE,
      actionMs: 1_000,
      absences: [absence],
    });
    expect(r.reason).toBeUndefined();
    expect(r.completed).toBe(true);
    expect(r.timeouts.length).toBeGreaterThan(0);
    expect(new Set(r.timeouts.map((t) => t.seat))).toEqual(new Set([absence.seat]));
    expect(new Set(r.timeouts.map((t) => t.reason))).toEqual(new Set([absence.kind ?? 'absent']));
    // Every member still there verifies its own directory offline, all ending on one frame.
    const stayed = r.members.filter((m) => m.present);
    for (const m of stayed) expect(verifyGroupSessionAt(crypto, m.dir), m.dir).toMatchObject({ ok: true, receipt: true, completed: true, outcome: r.outcome });
    expect(new Set(stayed.map((m) => m.receipt.frame_hash)).size).toBe(1);
    return r;
  };
  /** The member came back and played: the leader accepted actions of its own after the bootstrap it returned to. */
  const playedAfterReturn = (dir: string, pk: string) => {
    const entries = readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as { bootstrap: boolean; envelope: { checkpoint: { last_client_seq: Record<string, number> } } });
    const back = entries.findLastIndex((e) => e.bootstrap);
    expect(back).toBeGreaterThan(0);
    // The last frame completes the group, so its checkpoint is a full one.
    expect(entries.at(-1)!.envelope.checkpoint.last_client_seq[pk]).toBeGreaterThan(entries[back]!.envelope.checkpoint.last_client_seq[pk] ?? 0);
  };

  it("Hold'em: seat 2 is gone for good on its turn; one deadline is waited, then it sits out, and the match ends", async () => {
    const r = await play('texas-holdem', holdem, { max_hands: 3, deal_seed: 'gone' }, { seat: 2, afterActions: 2 });
    // One deadline waited once: later turns of the absent seat were resolved at once.
    expect(r.timeouts.length).toBeGreaterThan(1);
    expect(r.timeouts.slice(1).every((t) => t.at - r.timeouts[0]!.at < MINUTE)).toBe(true);
    expect(r.elapsedMs).toBeLessThan(MINUTE + (r.actions + 1) * 1_000);
    const gone = r.members[2]!;
    expect(gone.present).toBe(false);
    expect(verifyGroupSessionAt(crypto, gone.dir)).toMatchObject({ ok: true, receipt: true, completed: false });
  });

  it("Hold'em: seat 1 comes back with its transcript (join --resume) and plays its seat to the end", async () => {
    const r = await play('texas-holdem', holdem, { max_hands: 4, deal_seed: 'back' }, { seat: 1, afterActions: 1, returnAfterMs: 90_000 });
    expect(r.members[1]!.present).toBe(true);
    playedAfterReturn(r.members[1]!.dir, r.members[1]!.public_key);
  });

  it('Landlord: a member that stays connected but silent has its turns passed or played for it', async () => {
    await play('landlord', landlord, { deal_seed: 'silent' }, { seat: 3, afterActions: 6, kind: 'silent' });
  });

  it('Contract Bridge: a member gone in the auction comes back for the play and the board completes', async () => {
    const r = await play('contract-bridge', bridge, { deal_seed: 'back' }, { seat: 1, afterActions: 1, returnAfterMs: 90_000 });
    expect(r.members[1]!.present).toBe(true);
  });

  it('Aether Sigil: a channeler gone on its turn has its turns ended, and the match is decided', async () => {
    await play('aether-sigil', aetherSigil, { deal_seed: 'gone' }, { seat: 3, afterActions: 5 });
  });
});
