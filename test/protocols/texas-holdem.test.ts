// Four-seat Hold'em: hand ranking, pots, betting legality and refusal texts, whole seeded matches with
// chips conserved and hole cards private, recovery; and a cross-check against the reference's hooks.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REFERENCE_SRC, needReferencePython } from '../shared/require.js';
import { seeded } from '../../ts/hooks/random.js';
import { getCrypto } from '../../ts/crypto/index.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import type { GroupHooks, GroupState } from '../../ts/hooks/types.js';
import hooksModule, { autoplay, legalActions, type HoldemState } from '../../ts/protocols/texas-holdem/hooks.js';
import { playByAutoplay } from './group-autoplay.js';
import { fourSeats, hostContext, refusalOf } from './group-fixtures.js';
import { builtinGroupConfig, derivedSeats, startTable } from './group-table.js';
import { bestPokerHand, buildSidePots, compareRanks, normalizeUncalled, type Card } from '../../ts/protocols/texas-holdem/poker.js';

const SRC = REFERENCE_SRC;

const mulberry32 = seeded;

const MEMBERS = fourSeats('abcd', 'm');
const [A, B, C, D] = MEMBERS.map((m) => m.public_key) as [string, string, string, string];
const byKey = (k: string) => MEMBERS.find((m) => m.public_key === k)!;

function make(options: Record<string, unknown> = {}, seed = 1): GroupHooks {
  return hooksModule.create(hostContext(options, seed)) as GroupHooks;
}

/** Runs one action as the leader does: on a copy, so a refusal leaves the state untouched. */
function act(h: GroupHooks, state: GroupState, actor: string, action: Record<string, unknown>) {
  return h.proto_group_handle(structuredClone(state), byKey(actor), action);
}
const refusal = (h: GroupHooks, state: GroupState, actor: string, action: Record<string, unknown>): string => refusalOf(() => act(h, state, actor, action));

/** A table with chosen stacks, through the recovery path (which redeals from hand-start stacks). */
function table(h: GroupHooks, stacks: number[], buttonIndex = 0): HoldemState {
  const hand_start_stacks = Object.fromEntries(MEMBERS.map((m, i) => [m.public_key, stacks[i]]));
  return h.proto_group_restore!({ hand_number: 1, button_index: buttonIndex, restart_count: 0, hand_start_stacks }, MEMBERS, 2) as HoldemState;
}

const c = (code: string): Card => {
  const r = code.slice(0, -1);
  const rank = ({ T: 10, J: 11, Q: 12, K: 13, A: 14 } as Record<string, number>)[r] ?? Number(r);
  const suit = ({ c: 'clubs', d: 'diamonds', h: 'hearts', s: 'spades' } as Record<string, string>)[code.slice(-1)]!;
  return { rank, suit };
};
const hand = (codes: string) => bestPokerHand(codes.split(' ').map(c));

describe('hand ranking', () => {
  it.each([
    ['As Ks Qs Js Ts 2c 3d', 'straight_flush', [8, 14]],
    ['5h 4h 3h 2h Ah Kc Kd', 'straight_flush', [8, 5]],
    ['9c 9d 9h 9s Kd 2c 3c', 'four_of_a_kind', [7, 9, 13]],
    ['8c 8d 8h Kd Ks Kc 2c', 'full_house', [6, 13, 8]],
    ['2h 7h 9h Jh Kh Ah 3c', 'flush', [5, 14, 13, 11, 9, 7]],
    ['Ac 2d 3h 4s 5c Kd Qd', 'straight', [4, 5]],
    ['Tc Jd Qh Ks Ac 2d 2h', 'straight', [4, 14]],
    ['7c 7d 7h Ks 2c 9d 4h', 'three_of_a_kind', [3, 7, 13, 9]],
    ['Jc Jd 4h 4s 9c 9d Ah', 'two_pair', [2, 11, 9, 14]],
    ['Qc Qd 2h 5s 9c Td 3h', 'one_pair', [1, 12, 10, 9, 5]],
    ['Ac 3d 5h 7s 9c Jd Kh', 'high_card', [0, 14, 13, 11, 9, 7]],
  ])('%s is %s %j', (cards, category, rank) => {
    expect(hand(cards)).toEqual({ category, rank });
  });

  it('orders categories, kickers and ties', () => {
    const r = (s: string) => hand(s).rank;
    expect(compareRanks(r('2c 3d 4h 5s 6c Kd Kh'), r('Ac Ad Ah Ks 2c 7d 9h'))).toBeGreaterThan(0); // straight > trips
    expect(compareRanks(r('Ac Ad 9h 8s 2c 3d 5h'), r('Ah As 9d 7s 2d 3h 5c'))).toBeGreaterThan(0); // kicker 8 > 7
    expect(compareRanks(r('Ac Ad Kh Qs Jc 3d 2h'), r('Ah As Kd Qc Jd 4h 2c'))).toBe(0); // fifth card plays the board
    expect(compareRanks(r('5c 4d 3h 2s Ac 9d 9h'), r('6c 5d 4h 3s 2c 9s 9c'))).toBeLessThan(0); // wheel is the lowest straight
    expect(() => hand('Ac Ac 2d 3d 4d')).toThrow('a standard poker hand cannot repeat a card face');
    expect(() => hand('Ac 2d 3d 4d')).toThrow('poker evaluation requires five to seven cards');
  });
});

describe('pots', () => {
  it('refunds a lone top excess and builds main and side pots; folded chips stay in', () => {
    const n = normalizeUncalled({ [A]: 1000, [B]: 50, [C]: 200, [D]: 30 });
    expect(n.refunds).toEqual({ [A]: 800, [B]: 0, [C]: 0, [D]: 0 });
    const pots = buildSidePots(n.contributions, [D]);
    expect(pots.map((p) => [p.amount, p.eligible])).toEqual([
      [120, [A, B, C]],
      [60, [A, B, C]],
      [300, [A, C]],
    ]);
    expect(pots.reduce((s, p) => s + p.amount, 0)).toBe(200 + 50 + 200 + 30);
    expect(normalizeUncalled({ [A]: 100, [B]: 100 }).refunds).toEqual({ [A]: 0, [B]: 0 });
  });
});

describe('betting legality', () => {
  it('posts blinds and refuses each illegal action with the reference text', () => {
    const h = make({ deal_seed: 'rules' });
    const s = h.proto_group_initial_state(MEMBERS) as HoldemState;
    expect([s.button, s.small_blind_player, s.big_blind_player, s.current_player]).toEqual([A, B, C, D]);
    expect([s.players[B]!.stack, s.players[C]!.stack, s.current_bet]).toEqual([995, 990, 10]);
    expect(refusal(h, s, A, { kind: 'call' })).toBe("it is not this Member's turn to act");
    expect(refusal(h, s, D, { kind: 'check' })).toBe('check is illegal while facing a wager');
    expect(refusal(h, s, D, { kind: 'bet', amount: 40 })).toBe('bet is legal only when no wager exists');
    expect(refusal(h, s, D, { kind: 'raise', amount: '40' })).toBe('bet or raise amount must be an integer target');
    expect(refusal(h, s, D, { kind: 'raise', amount: 15 })).toBe('raise target is below the minimum full raise');
    expect(refusal(h, s, D, { kind: 'raise', amount: 10 })).toBe('raise target must exceed the wager and fit the stack');
    expect(refusal(h, s, D, { kind: 'raise', amount: 1001 })).toBe('raise target must exceed the wager and fit the stack');
    expect(refusal(h, s, D, { kind: 'shove' })).toBe('betting accepts fold, check, call, bet, raise, or all_in');
    // Everyone calls: the big blind may check its option; then post-flop a raise needs a wager.
    let t = act(h, s, D, { kind: 'call' }).state;
    t = act(h, t, A, { kind: 'call' }).state;
    t = act(h, t, B, { kind: 'call' }).state;
    expect(refusal(h, t, C, { kind: 'call' })).toBe('there is no wager to call');
    const flop = act(h, t, C, { kind: 'check' });
    const f = flop.state as HoldemState;
    expect(f.street).toBe('flop');
    expect(flop.events!.map((e) => (e as { kind: string }).kind)).toEqual(['check', 'holdem_street']);
    expect(f.current_player).toBe(B);
    expect(refusal(h, f, B, { kind: 'raise', amount: 20 })).toBe('use bet when no wager exists');
    expect(refusal(h, f, B, { kind: 'bet', amount: 9 })).toBe('raise target is below the minimum full raise');
    expect(refusal(h, f, B, { kind: 'bet', amount: 10 })).toBe('accepted');
  });

  it('a short all-in raises the wager but does not reopen raising for those who acted', () => {
    const h = make({ deal_seed: 'short' });
    let s: GroupState = table(h, [1000, 45, 1000, 1000]);
    s = act(h, s, D, { kind: 'raise', amount: 30 }).state;
    s = act(h, s, A, { kind: 'call' }).state;
    s = act(h, s, B, { kind: 'all_in' }).state; // 45: 15 over 30, less than the full raise of 20
    const st = s as HoldemState;
    expect([st.current_bet, st.last_full_raise, st.current_player]).toEqual([45, 20, C]);
    expect(h.proto_group_view(s, byKey(C))['legal']).toEqual({ to_call: 35, min_raise_to: 65, max_to: 1000, can_raise: true });
    s = act(h, s, C, { kind: 'call' }).state;
    expect((s as HoldemState).current_player).toBe(D);
    expect(h.proto_group_view(s, byKey(D))['legal']).toMatchObject({ to_call: 15, can_raise: false });
    expect(refusal(h, s, D, { kind: 'raise', amount: 100 })).toBe("a short all-in did not reopen this Member's raise");
    expect(refusal(h, s, D, { kind: 'all_in' })).toBe("a short all-in did not reopen this Member's raise");
    expect(refusal(h, s, D, { kind: 'call' })).toBe('accepted');
  });

  it('all-ins of different sizes split into side pots and chips are conserved', () => {
    const h = make({ deal_seed: 'side' });
    let s: GroupState = table(h, [1000, 100, 300, 1000]);
    for (const [k, a] of [
      [D, { kind: 'all_in' }],
      [A, { kind: 'call' }],
      [B, { kind: 'all_in' }],
    ] as const)
      s = act(h, s, k, a).state;
    const r = act(h, s, C, { kind: 'all_in' });
    const show = r.events!.find((e) => (e as { kind: string }).kind === 'holdem_showdown') as {
      pots: { amount: number; eligible: string[] }[];
      uncalled_refunds: Record<string, number>;
    };
    expect(show.pots.map((p) => [p.amount, p.eligible])).toEqual([
      [400, [A, B, C, D]],
      [600, [A, C, D]],
      [1400, [A, D]],
    ]);
    expect(show.uncalled_refunds).toEqual({ [A]: 0, [B]: 0, [C]: 0, [D]: 0 });
    const st = r.state as HoldemState;
    // Paid out: the pot is in the stacks (the contributions stay as the hand's record).
    const total =
      Object.values(st.players).reduce((x, p) => x + p.stack, 0) + (st.phase === 'completed' ? 0 : Object.values(st.contributions).reduce((x, v) => x + v, 0));
    expect(total).toBe(2400);
  });

  it('a split pot shares evenly and its odd chip goes to the first winner clockwise from the button', () => {
    // Blinds 5/10, the small blind folds: a 35-chip pot. The first seeded deal that checks down to a
    // two- or three-way tie splits it with odd chips.
    for (let i = 0; i < 3000; i++) {
      const h = make({ deal_seed: `split${i}` });
      let r = act(h, h.proto_group_initial_state(MEMBERS), D, { kind: 'call' });
      r = act(h, r.state, A, { kind: 'call' });
      r = act(h, r.state, B, { kind: 'fold' });
      r = act(h, r.state, C, { kind: 'check' });
      while ((r.state as HoldemState).hand_number === 1) r = act(h, r.state, (r.state as HoldemState).current_player, { kind: 'check' });
      const show = r.events!.find((e) => (e as { kind: string }).kind === 'holdem_showdown') as {
        pots: { amount: number; winners: string[]; share: number; odd_chips: string[] }[];
      };
      // The folded small blind's 5 makes a 20-chip main pot (4 x 5) and a 15-chip side pot (3 x 5).
      expect(show.pots.map((p) => p.amount)).toEqual([20, 15]);
      const pot = show.pots[1]!;
      if (pot.winners.length !== 2) continue;
      const won: Record<string, number> = { [A]: 0, [C]: 0, [D]: 0 };
      for (const p of show.pots) {
        expect(p.share).toBe(Math.floor(p.amount / p.winners.length));
        // Clockwise from the button (A): B (folded), C, D, then A.
        const expectedOdd = [C, D, A].filter((k) => p.winners.includes(k)).slice(0, p.amount % p.winners.length);
        expect(p.odd_chips).toEqual(expectedOdd);
        for (const k of p.winners) won[k] = (won[k] as number) + p.share + (expectedOdd.includes(k) ? 1 : 0);
      }
      const next = r.state as HoldemState;
      for (const k of [A, C, D]) expect(next.hand_start_stacks[k]).toBe(990 + (won[k] as number));
      return;
    }
    throw new Error('no split pot in 3000 seeded deals');
  });

  it('refuses bad options and actions after the match', () => {
    expect(() => make({ small_blind: 10, big_blind: 10 }).proto_group_initial_state(MEMBERS)).toThrow('small_blind must be lower than big_blind');
    expect(() => make({ starting_stack: 100, big_blind: 200 }).proto_group_initial_state(MEMBERS)).toThrow('big_blind cannot exceed starting_stack');
    expect(() => make({ max_hands: 0 }).proto_group_initial_state(MEMBERS)).toThrow('max_hands must be between 1 and 100');
    expect(() => make().proto_group_initial_state(MEMBERS.slice(0, 3))).toThrow("Texas Hold'em requires exactly four active Members");
    const h = make({ deal_seed: 'end', max_hands: 1 });
    let s = h.proto_group_initial_state(MEMBERS);
    let r = act(h, s, D, { kind: 'fold' });
    r = act(h, r.state, A, { kind: 'fold' });
    r = act(h, r.state, B, { kind: 'fold' });
    expect([r.completed, r.outcome]).toEqual([true, C]);
    s = r.state;
    expect(refusal(h, s, C, { kind: 'check' })).toBe("the Hold'em match is complete");
  });
});

type Action = Record<string, unknown>;
interface Step {
  actor: string;
  action: Action;
}
/** Plays one seeded match to the end through the hooks, checking invariants at every step. */
function playMatch(seed: number, options: Record<string, unknown>): { steps: Step[]; outcome: string } {
  const rnd = mulberry32(seed);
  const h = make(options, seed);
  let s = h.proto_group_initial_state(MEMBERS) as HoldemState;
  const total = 4 * ((options['starting_stack'] as number | undefined) ?? 1000);
  const steps: Step[] = [];
  for (let n = 0; n < 5000; n++) {
    const chips =
      Object.values(s.players).reduce((x, p) => x + p.stack, 0) + (s.phase === 'completed' ? 0 : Object.values(s.contributions).reduce((x, v) => x + v, 0));
    expect(chips, `seed ${seed} step ${n}`).toBe(total);
    if (s.phase === 'betting') {
      for (const m of MEMBERS) {
        const text = JSON.stringify(h.proto_group_view(s, m));
        const own = new Set(s.deck.hands[m.public_key]);
        const hidden = [
          ...Object.values(s.deck.hands)
            .flat()
            .filter((id) => !own.has(id)),
          ...s.deck.draw_pile,
          ...(s.deck.zones['burn']?.['table'] ?? []),
        ];
        for (const id of hidden) expect(text.includes(id), `seed ${seed}: ${m.seat} sees a hidden card`).toBe(false);
        expect(text.includes('"draw_pile"')).toBe(false);
      }
    }
    const actor = s.current_player;
    const view = h.proto_group_view(s, byKey(actor));
    const options2 = legalActions(view, rnd);
    // Folding is rare so hands reach showdowns.
    const pick = rnd() < 0.1 ? options2[0]! : options2[1 + Math.floor(rnd() * (options2.length - 1))]!;
    const r = act(h, s, actor, pick);
    steps.push({ actor, action: pick });
    s = r.state as HoldemState;
    if (r.completed) {
      const stacks = Object.values(s.players).map((p) => p.stack);
      expect(stacks.reduce((x, y) => x + y, 0)).toBe(total);
      expect(s.players[r.outcome as string]!.stack).toBe(Math.max(...stacks));
      return { steps, outcome: r.outcome as string };
    }
  }
  throw new Error(`seed ${seed}: the match did not end`);
}

describe('whole matches', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i plays to completion from legal actions only', (seed) => {
    const { steps } = playMatch(seed, { deal_seed: `s${seed}`, starting_stack: 200, max_hands: 20 });
    expect(steps.length).toBeGreaterThan(0);
  });

  it('without deal_seed the deal comes from ctx.random: same seed, same deal; other seed, other deal', () => {
    const deal = (seed: number) => JSON.stringify((make({}, seed).proto_group_initial_state(MEMBERS) as HoldemState).deck.draw_pile);
    expect(deal(5)).toBe(deal(5));
    expect(deal(5)).not.toBe(deal(6));
  });
});

describe('recovery', () => {
  it('the snapshot holds no cards; restore refunds to hand-start stacks and redeals', () => {
    const h = make({ deal_seed: 'rec' });
    let s = h.proto_group_initial_state(MEMBERS);
    s = act(h, s, D, { kind: 'raise', amount: 100 }).state;
    const snap = h.proto_group_recovery_snapshot!(s);
    expect(snap).toEqual({ hand_number: 1, button_index: 0, restart_count: 0, hand_start_stacks: { [A]: 1000, [B]: 1000, [C]: 1000, [D]: 1000 } });
    const r = h.proto_group_restore!(structuredClone(snap), MEMBERS, 2) as HoldemState;
    expect([r.restart_count, r.hand_number, r.players[D]!.stack, r.players[B]!.stack]).toEqual([1, 1, 1000, 995]);
    expect(r.deck.draw_pile).not.toEqual((s as HoldemState).deck.draw_pile);
    const changed = h.proto_group_on_leader_changed!(r, 'f'.repeat(64), 'e'.repeat(64));
    expect((changed.state as HoldemState).recovery_notice).toBe('Leader changed from ffffffff to eeeeeeee; the interrupted hand was refunded.');
  });
});

const haveRef = needReferencePython(['aigenora.proto.poker'], "the reference cross-check of Texas Hold'em");
function reference(req: unknown): Record<string, unknown>[] {
  const r = spawnSync('python3', [new URL('./texas-holdem-ref.py', import.meta.url).pathname, SRC], {
    cwd: SRC,
    input: JSON.stringify(req),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Record<string, unknown>[];
}

describe.skipIf(!haveRef)("against the reference's hooks", () => {
  it('ranks random seven-card hands and splits random pots as the reference does', () => {
    const rnd = mulberry32(99);
    const deck = ['c', 'd', 'h', 's'].flatMap((s) => ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'].map((r) => c(`${r}${s}`)));
    const steps: Record<string, unknown>[] = [];
    const ours: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      const cards = [...deck].sort(() => rnd() - 0.5).slice(0, 7);
      steps.push({ op: 'rank', cards });
      ours.push(bestPokerHand(cards));
    }
    for (let i = 0; i < 100; i++) {
      const contributions = Object.fromEntries(MEMBERS.map((m) => [m.public_key, Math.floor(rnd() * 4) * 50]));
      contributions[A] = (contributions[A] as number) + 10;
      const folded = MEMBERS.map((m) => m.public_key).filter((k) => k !== A && rnd() < 0.3);
      steps.push({ op: 'pots', contributions, folded });
      const normalized = normalizeUncalled(contributions);
      try {
        ours.push({ normalized, pots: buildSidePots(normalized.contributions, folded) });
      } catch (e) {
        ours.push({ error: (e as Error).message });
      }
    }
    const theirs = reference({ steps });
    expect(
      theirs.map((t) => ('rank' in t ? { category: (t['rank'] as { category: string }).category, rank: (t['rank'] as { rank: number[] }).rank } : t)),
    ).toEqual(ours);
  });

  it.each([11, 12, 13])("seed %i: every state, event, view and outcome equals the reference leader's", (seed) => {
    const options = { deal_seed: `x${seed}`, starting_stack: 300, max_hands: 6 };
    const { steps, outcome } = playMatch(seed, options);
    const h = make(options, seed);
    let s = h.proto_group_initial_state(MEMBERS);
    const ours: unknown[] = [{ state: s }];
    const req: Record<string, unknown>[] = [];
    for (const step of steps) {
      // A refused action on the way: the same text, and the state unchanged.
      const wrong = MEMBERS.find((m) => m.public_key !== step.actor)!.public_key;
      req.push({ op: 'act', actor: wrong, action: { kind: 'check' } });
      ours.push({ error: refusal(h, s, wrong, { kind: 'check' }) });
      for (const m of MEMBERS) {
        req.push({ op: 'view', viewer: m.public_key });
        ours.push({ view: h.proto_group_view(s, m) });
      }
      req.push({ op: 'act', ...step });
      const r = act(h, s, step.actor, step.action);
      s = r.state;
      ours.push({ state: s, events: r.events ?? [], completed: r.completed ?? false, outcome: r.outcome ?? null });
    }
    const theirs = reference({ options, members: MEMBERS, steps: req });
    expect(theirs.length).toBe(ours.length);
    for (let i = 0; i < ours.length; i++) expect(theirs[i], `step ${i}`).toEqual(ours[i]);
    expect(outcome).toBe((theirs.at(-1) as { outcome: string }).outcome);
  });
});

describe('through the group leader: four replicas, each acting from its own verified view', () => {
  const crypto = getCrypto('js');
  const seats = derivedSeats(crypto, 'holdem', 4, 'm');
  const { pk, members } = seats;
  const config = builtinGroupConfig('texas-holdem');
  const hooksOf = (seed: number) => hooksModule.create(hostContext({ deal_seed: 'leader', starting_stack: 1000, max_hands: 3 }, seed)) as GroupHooks;

  it('plays a match with a leader change mid-hand: the hand is refunded and redealt, views stay private', () => {
    const table = startTable({ crypto, seats, config, groupId: 'grp-holdem', hooks: hooksOf(1) });
    const { replicas, deliver } = table;
    let { leader } = table;
    const seqs = [0, 0, 0, 0];
    const rnd = mulberry32(7);
    let failedOver = false;
    for (let n = 0; n < 2000 && !leader.completed; n++) {
      const views = replicas.map((r) => r.view!);
      if (views[0]!['phase'] === 'betting') {
        const hands = views.map((v) => (v['my_hand'] as { card_id: string }[]).map((c) => c.card_id));
        expect(new Set(hands.flat()).size).toBe(hands.flat().length);
        views.forEach((v, i) => {
          const text = JSON.stringify(v);
          hands.forEach((h, j) => {
            if (j !== i) for (const id of h) expect(text.includes(id)).toBe(false);
          });
        });
        const chips =
          Object.values(views[0]!['players'] as Record<string, { stack: number }>).reduce((x, p) => x + p.stack, 0) + (views[0]!['pot_total'] as number);
        expect(chips).toBe(4000);
      }
      const actor = views[0]!['current_player'] as string;
      const i = members.findIndex((m) => m.public_key === actor);
      const choices = legalActions(views[i]!, rnd);
      const pick = rnd() < 0.1 ? choices[0]! : choices[1 + Math.floor(rnd() * (choices.length - 1))]!;
      deliver(leader.applyInput({ actor_public_key: actor, client_seq: ++seqs[i]!, action: pick }).envelopes);
      if (!failedOver && n === 1 && !leader.completed) {
        failedOver = true;
        const before = replicas[2]!.checkpoint!;
        expect(JSON.stringify(before)).not.toContain('draw_pile');
        const startStacks = (before['protocol_state'] as { hand_start_stacks: Record<string, number> }).hand_start_stacks;
        leader = table.failover(hooksOf(2), 2, before);
        const v = replicas[0]!.view!;
        expect([v['restart_count'], v['recovery_notice']]).toEqual([
          1,
          `Leader changed from ${pk(0).slice(0, 8)} to ${pk(2).slice(0, 8)}; the interrupted hand was refunded.`,
        ]);
        const players = v['players'] as Record<string, { stack: number; total_contribution: number }>;
        for (const k of Object.keys(startStacks)) expect(players[k]!.stack + players[k]!.total_contribution).toBe(startStacks[k]);
      }
    }
    expect(failedOver).toBe(true);
    expect(leader.completed).toBe(true);
    const final = replicas[0]!.view!['players'] as Record<string, { stack: number }>;
    expect(Object.values(final).reduce((x, p) => x + p.stack, 0)).toBe(4000);
    expect(final[leader.outcome as string]!.stack).toBe(Math.max(...Object.values(final).map((p) => p.stack)));
    for (const r of replicas) expect([r.seq, r.frameHash]).toEqual([leader.seq, leader.frameHash]);
  }, 120_000);
});

describe('every seat by autoplay, through the group leader', () => {
  const spec = JSON.parse(readFileSync(join(BUILTIN_DIR, 'texas-holdem', 'spec.json'), 'utf8')) as unknown;
  it('seeds 1-6: every match completes, each member acting only from its own view', () => {
    const kinds = new Set<unknown>();
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const { leader, replicas, actions } = playByAutoplay({
        crypto: getCrypto(),
        module: hooksModule,
        spec,
        options: { starting_stack: 500 },
        seats: 4,
        seed,
        maxActions: 3000,
      });
      expect(leader.completed).toBe(true);
      const players = replicas[0]!.view!['players'] as Record<string, { stack: number }>;
      const stacks = Object.values(players).map((p) => p.stack);
      expect(stacks.reduce((x, y) => x + y, 0)).toBe(2000);
      expect(players[leader.outcome as string]!.stack).toBe(Math.max(...stacks));
      expect(new Set(stacks).size, `seed ${seed}: chips changed hands`).toBeGreaterThan(1);
      for (const a of actions) kinds.add(a['kind']);
    }
    // Not just checking down: the autoplay also folds, raises and moves all in.
    expect([...kinds].sort()).toEqual(['all_in', 'bet', 'call', 'check', 'fold', 'raise']);
  }, 120_000);

  it('waits when it is not its turn or the match is over', () => {
    const h = make({ deal_seed: 'wait' });
    const s = h.proto_group_initial_state(MEMBERS) as HoldemState;
    const idle = MEMBERS.filter((m) => m.public_key !== s.current_player);
    for (const m of idle) expect(autoplay(h.proto_group_view(s, m), m, mulberry32(1))).toBeNull();
    const actor = byKey(s.current_player);
    expect(autoplay(h.proto_group_view(s, actor), actor, mulberry32(1))).not.toBeNull();
    expect(autoplay({ ...h.proto_group_view(s, actor), phase: 'completed' }, actor, mulberry32(1))).toBeNull();
  });
});
