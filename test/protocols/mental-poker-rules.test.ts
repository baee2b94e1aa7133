// The rules of the two mental_poker card games, on their hooks alone: hand-built states for each rule,
// whole games at a table that stands in for the engine's play loop (one shared deck ledger, faces known
// to their holder only), the reference's recorded Crazy Eights game replayed play by play from
// aigenora-mp-audit-vectors.json, and the reference's own hooks (python3, the sources in ../shared; a
// missing one fails unless AIGENORA_SKIP_CORPORA=1) playing the same deals (every action and the outcome must agree).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { needCommand, needShared, REFERENCE_SRC, SHARED, sharedPath } from '../shared/require.js';
import type { HooksModule, MentalPokerCard, MentalPokerDeckView, MentalPokerHooks, MentalPokerOutcome, MentalPokerPlay, Role } from '../../ts/hooks/types.js';
import briscola, { BRISCOLA, HAND_SIZE, makeDeck as briscolaDeck, pickFollow, pickLead, trickWinner } from '../../ts/protocols/briscola/hooks.js';
import crazyEights, { canPlay, EIGHT, makeDeck as eightsDeck, pickCallSuit, pickPlay, winnerByHandCount } from '../../ts/protocols/crazy-eights/hooks.js';

const CORPUS_REL = 'conformance/aigenora-reference/aigenora-mp-audit-vectors.json';
const CORPUS = sharedPath(CORPUS_REL);
const REF_SRC = REFERENCE_SRC;
const REF_HOOKS = {
  'crazy-eights': join(REF_SRC, 'aigenora/protocols/3a3c352a/c09a83a3c0877a5585fcd8c03fa4b85b873601f2fe3ba734474a64ae/hooks.py'),
  briscola: join(REF_SRC, 'aigenora/protocols/f508d605/c7dc9c8aeffd7bf1441e283ebe9ed83c768e36c05d02e056cdd51867/hooks.py'),
};
const other = (r: Role): Role => (r === 'host' ? 'guest' : 'host');

class Ledger implements MentalPokerDeckView {
  readonly stock = new Set<string>();
  readonly played = new Set<string>();
  readonly hands = { host: new Set<string>(), guest: new Set<string>() };
  hand_of(who: Role) {
    return this.hands[who];
  }
}

interface State {
  _mp_role: Role;
  _mp_hand: Set<string>;
  _mp_hand_cards: Map<string, MentalPokerCard>;
  _mp_deck_view: Ledger;
  _mp_stalled?: boolean;
}

function start(module: HooksModule<'mental_poker'>, role: Role, options: Record<string, unknown> = {}): MentalPokerHooks {
  const h = module.create({ role, options, args: [], stateDir: '', decision: null, random: () => 0.5 });
  void h.proto_init?.(options, role, [], '', null);
  return h;
}

/** A side's state: its hand (in acquisition order), the peer's hidden hand, the stock and played id-Bs. */
function stateOf(role: Role, mine: [string, MentalPokerCard][], o: { peer?: string[]; stock?: string[]; played?: string[]; stalled?: boolean } = {}): State {
  const deck = new Ledger();
  for (const [id] of mine) deck.hands[role].add(id);
  for (const id of o.peer ?? ['39']) deck.hands[other(role)].add(id);
  for (const id of o.stock ?? []) deck.stock.add(id);
  for (const id of o.played ?? []) deck.played.add(id);
  return {
    _mp_role: role,
    _mp_hand: new Set(deck.hands[role]),
    _mp_hand_cards: new Map(mine),
    _mp_deck_view: deck,
    ...(o.stalled ? { _mp_stalled: true } : {}),
  };
}

const play = (id_b: string, [rank, suit]: MentalPokerCard, call_suit?: number): MentalPokerPlay => ({
  action: 'mp_play',
  id_b,
  rank,
  suit,
  k_inner: '0'.repeat(64),
  k_outer: '0'.repeat(64),
  ...(call_suit === undefined ? {} : { call_suit }),
});

/** A seeded permutation of 0..n-1 (mulberry32 + Fisher-Yates). */
function permutation(n: number, seed: number): number[] {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const p = [...Array(n).keys()];
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

type LogEntry = ['play', Role, string, number | null] | ['draw', Role, string] | ['pass', Role] | ['rejected', Role, string];
interface Table {
  log: LogEntry[];
  outcome: [MentalPokerOutcome, MentalPokerOutcome];
  metadata: unknown[];
}

/**
 * A whole game as the engine's play loop runs it: id-B j holds universe card perm[j]; the Guest is dealt
 * the first id-Bs, the Host the next; the Host acts first and turns alternate; a play is validated by
 * the peer's hooks; a draw takes the lowest stock id-B; two passes in a row stall; each side asks its
 * own check_winner after every turn. (The same loop as the Python twin below.)
 */
async function playTable(module: HooksModule<'mental_poker'>, options: Record<string, unknown>, perm: number[]): Promise<Table> {
  const hooks = { host: start(module, 'host', options), guest: start(module, 'guest', options) };
  const universe = hooks.host.proto_mp_deck_universe();
  const ids = perm.map((_, j) => String(j));
  const face = (id: string) => universe[perm[Number(id)]!]!;
  const deck = new Ledger();
  for (const id of ids) deck.stock.add(id);
  const side = (role: Role): State => ({ _mp_role: role, _mp_hand: new Set(), _mp_hand_cards: new Map(), _mp_deck_view: deck });
  const st = { host: side('host'), guest: side('guest') };
  const take = (who: Role, id: string) => {
    deck.stock.delete(id);
    deck.hands[who].add(id);
    st[who]._mp_hand.add(id);
    st[who]._mp_hand_cards.set(id, face(id));
  };
  const plan = hooks.host.proto_mp_initial_deal({});
  ids.slice(0, plan.guest).forEach((id) => take('guest', id));
  ids.slice(plan.guest, plan.guest + plan.host).forEach((id) => take('host', id));
  const log: LogEntry[] = [];
  let outcome: Table['outcome'] = [null, null];
  for (let turn = 0, passes = 0; turn < 2000; turn++) {
    const actor: Role = turn % 2 === 0 ? 'host' : 'guest';
    const peer = other(actor);
    const a = await hooks[actor].proto_mp_choose_action(st[actor]);
    if (a.kind === 'play') {
      passes = 0;
      const verdict = hooks[peer].proto_mp_validate_play(st[peer], actor, play(a.id_b, st[actor]._mp_hand_cards.get(a.id_b)!, a.call_suit));
      if (!verdict[0]) {
        log.push(['rejected', actor, verdict[1]]);
        break;
      }
      deck.hands[actor].delete(a.id_b);
      deck.played.add(a.id_b);
      st[actor]._mp_hand.delete(a.id_b);
      st[actor]._mp_hand_cards.delete(a.id_b);
      log.push(['play', actor, a.id_b, a.call_suit ?? null]);
    } else if (a.kind === 'draw') {
      passes = 0;
      const id = ids.find((x) => deck.stock.has(x))!;
      take(actor, id);
      log.push(['draw', actor, id]);
    } else {
      passes += 1;
      log.push(['pass', actor]);
    }
    if (passes >= 2) st.host._mp_stalled = st.guest._mp_stalled = true;
    outcome = [hooks.host.proto_mp_check_winner(st.host), hooks.guest.proto_mp_check_winner(st.guest)];
    if (outcome[0] !== null || outcome[1] !== null || passes >= 2) break;
    if (deck.hands.host.size === 0 && deck.hands.guest.size === 0) break;
  }
  return { log, outcome, metadata: [hooks.host.proto_host_metadata!(), hooks.guest.proto_host_metadata!()] };
}

describe('Crazy Eights rules', () => {
  const C = (rank: string, suit: 'C' | 'D' | 'H' | 'S'): MentalPokerCard => [
    ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'].indexOf(rank),
    'CDHS'.indexOf(suit),
  ];

  it('has 52 distinct cards, rank-major (h-<i> is card 4·rank + suit), and deals hand_size to each side', () => {
    const deck = eightsDeck();
    expect(deck).toHaveLength(52);
    expect(new Set(deck.map(([r, s]) => `${r}/${s}`)).size).toBe(52);
    expect(deck[0]).toEqual([0, 0]);
    expect(deck[1]).toEqual([0, 1]);
    expect(deck[26]).toEqual(C('8', 'H'));
    expect(deck[51]).toEqual(C('A', 'S'));
    expect(EIGHT).toBe(6);
    for (const [opts, n] of [
      [{ hand_size: 3 }, 3],
      [{ hand_size: 7 }, 7],
      [{}, 5],
    ] as const)
      expect(start(crazyEights, 'guest', opts).proto_mp_initial_deal({})).toEqual({ host: n, guest: n });
    expect(start(crazyEights, 'host', { hand_size: 7 }).proto_host_metadata!()).toEqual([
      'Crazy Eights',
      'game,crazy-eights,cards',
      'supply',
      { hand_size: 7 },
    ]);
    expect(start(crazyEights, 'host').supported_control_modes!()).toEqual(['autonomous', 'hybrid', 'human']);
  });

  it('plays a card on the same suit or rank, an 8 on anything, and anything first', () => {
    const top = { topRank: C('5', 'H')[0], currentSuit: C('5', 'H')[1] };
    expect(canPlay(C('K', 'H'), top, false)).toBe(true);
    expect(canPlay(C('5', 'C'), top, false)).toBe(true);
    expect(canPlay(C('8', 'C'), top, false)).toBe(true);
    expect(canPlay(C('K', 'C'), top, false)).toBe(false);
    expect(canPlay(C('K', 'C'), top, true)).toBe(true);
    // After an 8 calling spades, spades and 8s play, hearts do not.
    const called = { topRank: EIGHT, currentSuit: 3 };
    expect(canPlay(C('2', 'S'), called, false)).toBe(true);
    expect(canPlay(C('8', 'D'), called, false)).toBe(true);
    expect(canPlay(C('2', 'H'), called, false)).toBe(false);
  });

  it('lists legal plays by id-B as text, marks 8s as needing call_suit, else draw, or pass on an empty stock', () => {
    const h = start(crazyEights, 'guest');
    const mine: [string, MentalPokerCard][] = [
      ['2', C('7', 'C')],
      ['10', C('9', 'D')],
      ['3', C('8', 'S')],
      ['4', C('Q', 'H')],
    ];
    // The host opened with the 9 of clubs.
    expect(h.proto_mp_validate_play(stateOf('guest', mine), 'host', play('30', C('9', 'C')))).toEqual([true, '']);
    const legal = h.proto_mp_legal_actions!(stateOf('guest', mine, { stock: ['20'], played: ['30'] }));
    expect(legal).toEqual([
      { kind: 'play', id_b: '10', rank: C('9', 'D')[0], suit: 1, call_suit_required: false },
      { kind: 'play', id_b: '2', rank: C('7', 'C')[0], suit: 0, call_suit_required: false },
      { kind: 'play', id_b: '3', rank: EIGHT, suit: 3, call_suit_required: true },
    ]);
    const stuck: [string, MentalPokerCard][] = [['4', C('Q', 'H')]];
    expect(h.proto_mp_legal_actions!(stateOf('guest', stuck, { stock: ['20'], played: ['30'] }))).toEqual([{ kind: 'draw' }]);
    expect(h.proto_mp_legal_actions!(stateOf('guest', stuck, { played: ['30'] }))).toEqual([{ kind: 'pass' }]);
    // Nothing is played yet: every card is legal.
    expect(start(crazyEights, 'host').proto_mp_legal_actions!(stateOf('host', stuck, { stock: ['20'] }))).toHaveLength(1);
  });

  it('chooses the lowest id-B as text among non-8s, keeps 8s for last, and then draws or passes', async () => {
    const h = start(crazyEights, 'host');
    const mine: [string, MentalPokerCard][] = [
      ['9', C('K', 'H')],
      ['11', C('3', 'C')],
      ['5', C('8', 'D')],
    ];
    expect(await h.proto_mp_choose_action(stateOf('host', mine, { stock: ['20'] }))).toEqual({ kind: 'play', id_b: '11' });
    // That play set the discard: 3 of clubs. The K of hearts does not follow it, the 8 does.
    const rest: [string, MentalPokerCard][] = [
      ['9', C('K', 'H')],
      ['5', C('8', 'D')],
    ];
    const after = await h.proto_mp_choose_action(stateOf('host', rest, { stock: ['20'], played: ['11'] }));
    expect(after).toEqual({ kind: 'play', id_b: '5', call_suit: 2 }); // hearts, the one suit besides the 8
    const stuck: [string, MentalPokerCard][] = [['9', C('K', 'C')]];
    expect(await h.proto_mp_choose_action(stateOf('host', stuck, { stock: ['20'], played: ['11', '5'] }))).toEqual({ kind: 'draw' });
    expect(await h.proto_mp_choose_action(stateOf('host', stuck, { played: ['11', '5'] }))).toEqual({ kind: 'pass' });
  });

  it('an 8 calls the suit held most, the first acquired on a tie, clubs with only 8s', () => {
    const hand = (cards: [string, MentalPokerCard][]) => new Map(cards);
    expect(
      pickCallSuit(
        hand([
          ['1', C('2', 'D')],
          ['2', C('3', 'S')],
          ['3', C('4', 'S')],
          ['4', C('8', 'H')],
        ]),
      ),
    ).toBe(3);
    expect(
      pickCallSuit(
        hand([
          ['7', C('2', 'D')],
          ['2', C('3', 'S')],
          ['4', C('8', 'H')],
        ]),
      ),
    ).toBe(1);
    expect(
      pickCallSuit(
        hand([
          ['2', C('3', 'S')],
          ['7', C('2', 'D')],
          ['4', C('8', 'H')],
        ]),
      ),
    ).toBe(3);
    expect(
      pickCallSuit(
        hand([
          ['4', C('8', 'H')],
          ['5', C('8', 'C')],
        ]),
      ),
    ).toBe(0);
    expect(
      pickPlay(
        hand([
          ['4', C('8', 'H')],
          ['12', C('8', 'C')],
        ]),
        { topRank: 0, currentSuit: 1 },
        false,
      ),
    ).toEqual({ id_b: '12', call_suit: 0 });
    expect(pickPlay(hand([['4', C('K', 'H')]]), { topRank: 0, currentSuit: 1 }, false)).toBeNull();
  });

  it('validates a peer play with the reference reasons and follows the suit an 8 called', () => {
    const h = start(crazyEights, 'host');
    const s = (played: string[]) => stateOf('host', [['1', C('A', 'C')]], { played });
    expect(h.proto_mp_validate_play(s([]), 'guest', play('30', C('5', 'H')))).toEqual([true, '']);
    expect(h.proto_mp_validate_play(s(['30']), 'guest', play('31', C('6', 'C')))).toEqual([false, 'illegal_play']);
    expect(h.proto_mp_validate_play(s(['30']), 'guest', play('31', C('8', 'C')))).toEqual([false, 'missing_call_suit']);
    expect(h.proto_mp_validate_play(s(['30']), 'guest', play('31', C('5', 'C'), 2))).toEqual([false, 'unexpected_call_suit']);
    // Refused plays changed nothing: the 5 of hearts is still on top.
    expect(h.proto_mp_validate_play(s(['30']), 'guest', play('31', C('8', 'C'), 0))).toEqual([true, '']);
    expect(h.proto_mp_validate_play(s(['30', '31']), 'guest', play('32', C('K', 'H')))).toEqual([false, 'illegal_play']);
    expect(h.proto_mp_validate_play(s(['30', '31']), 'guest', play('32', C('K', 'C')))).toEqual([true, '']);
    // The first play of a game may be anything, an 8 still needs its call.
    const fresh = start(crazyEights, 'guest');
    expect(fresh.proto_mp_validate_play(stateOf('guest', []), 'host', play('0', C('8', 'S')))).toEqual([false, 'missing_call_suit']);
    expect(fresh.proto_mp_validate_play(stateOf('guest', []), 'host', play('0', C('J', 'S')))).toEqual([true, '']);
  });

  it("refuses a person's decision that is not legal, with the reference messages, and applies one that is", () => {
    const h = start(crazyEights, 'guest');
    const mine: [string, MentalPokerCard][] = [
      ['2', C('7', 'C')],
      ['3', C('8', 'S')],
      ['4', C('Q', 'H')],
    ];
    h.proto_mp_validate_play(stateOf('guest', mine), 'host', play('30', C('9', 'C')));
    const s = stateOf('guest', mine, { stock: ['20'], played: ['30'] });
    const coerce = (d: unknown) => () => h.proto_mp_coerce_action!(s, d);
    expect(coerce('play')).toThrow('action decision must be an object');
    expect(coerce({ kind: 'fold' })).toThrow('kind must be play, draw, or pass');
    expect(coerce({ kind: 'play', id_b: '9' })).toThrow('id_b is not a card in the local hand');
    expect(coerce({ kind: 'play', id_b: '4' })).toThrow('selected card is not playable');
    expect(coerce({ kind: 'play', id_b: '3' })).toThrow('playing an 8 requires call_suit between 0 and 3');
    expect(coerce({ kind: 'play', id_b: '3', call_suit: 4 })).toThrow('playing an 8 requires call_suit between 0 and 3');
    expect(coerce({ kind: 'play', id_b: '2', call_suit: 1 })).toThrow('call_suit is only allowed when playing an 8');
    expect(coerce({ kind: 'draw' })).toThrow('draw is not legal in the current state');
    expect(coerce({ kind: 'pass' })).toThrow('pass is not legal in the current state');
    expect(h.proto_mp_coerce_action!(s, { kind: 'play', id_b: '3', call_suit: '1' })).toEqual({ kind: 'play', id_b: '3', call_suit: 1 });
    const chosen = h.proto_mp_coerce_action!(s, { kind: 'play', id_b: '3', call_suit: 1 });
    h.proto_mp_apply_local_action!(s, chosen);
    // The 8 called diamonds: the peer's diamond plays, its club does not.
    const next = stateOf('guest', [['2', C('7', 'C')]], { played: ['30', '3'] });
    expect(h.proto_mp_validate_play(next, 'host', play('31', C('9', 'C')))).toEqual([false, 'illegal_play']);
    expect(h.proto_mp_validate_play(next, 'host', play('31', C('2', 'D')))).toEqual([true, '']);
  });

  it("an empty hand wins (the host's first); a stall goes to fewer cards, equal counts no winner", () => {
    const h = start(crazyEights, 'host');
    expect(h.proto_mp_check_winner(stateOf('host', [], { peer: ['3'] }))).toBe('host');
    expect(h.proto_mp_check_winner(stateOf('host', [['1', C('2', 'C')]], { peer: [] }))).toBe('guest');
    expect(h.proto_mp_check_winner(stateOf('host', [], { peer: [] }))).toBe('host');
    expect(h.proto_mp_check_winner(stateOf('host', [['1', C('2', 'C')]], { peer: ['3', '4'] }))).toBeNull();
    expect(h.proto_mp_check_winner(stateOf('host', [['1', C('2', 'C')]], { peer: ['3', '4'], stalled: true }))).toBe('host');
    expect(
      h.proto_mp_check_winner(
        stateOf(
          'host',
          [
            ['1', C('2', 'C')],
            ['2', C('3', 'C')],
          ],
          { peer: ['3'], stalled: true },
        ),
      ),
    ).toBe('guest');
    expect(h.proto_mp_check_winner(stateOf('host', [['1', C('2', 'C')]], { peer: ['3'], stalled: true }))).toBeNull();
    expect([winnerByHandCount(1, 2), winnerByHandCount(2, 1), winnerByHandCount(2, 2)]).toEqual(['host', 'guest', null]);
  });

  it('shows plays, calls, passes and errors', () => {
    const h = start(crazyEights, 'host');
    expect(h.proto_display!(play('1', C('10', 'H')), 'received')).toBe('play 10H');
    expect(h.proto_display!(play('1', C('8', 'D'), 3), 'sent')).toBe('play 8D (call S)');
    expect(h.proto_display!({ action: 'mp_pass' }, 'sent')).toBe('PASS');
    expect(h.proto_display!({ action: 'error', reason: 'rule_rejected' }, 'received')).toBe('illegal: rule_rejected');
    expect(h.proto_display!({ action: 'mp_opening', openings: [] }, 'sent')).toBeUndefined();
  });

  it('whole games end, both sides agree, and the winner is the side that emptied its hand or held fewer cards at a stall', async () => {
    for (const hand_size of [3, 5, 7]) {
      for (let seed = 1; seed <= 40; seed++) {
        const t = await playTable(crazyEights, { hand_size }, permutation(52, seed * 7 + hand_size));
        expect(
          t.log.some((e) => e[0] === 'rejected'),
          `seed ${seed}`,
        ).toBe(false);
        expect(t.outcome[0]).toBe(t.outcome[1]);
        const left = { host: hand_size, guest: hand_size };
        for (const e of t.log)
          if (e[0] === 'play') left[e[1]] -= 1;
          else if (e[0] === 'draw') left[e[1]] += 1;
        const stalled = t.log.length >= 2 && t.log.at(-1)![0] === 'pass' && t.log.at(-2)![0] === 'pass';
        if (stalled) expect(t.outcome[0]).toBe(left.host < left.guest ? 'host' : left.guest < left.host ? 'guest' : null);
        else expect(left[t.outcome[0] as Role]).toBe(0);
      }
    }
  });
});

describe('Briscola rules', () => {
  const B = (rank: string, suit: 'C' | 'D' | 'H' | 'S'): MentalPokerCard => [
    ['A', '2', '3', '4', '5', '6', '7', 'J', 'Q', 'K'].indexOf(rank),
    'CDHS'.indexOf(suit),
  ];
  const POINTS: Record<string, number> = { A: 11, '3': 10, K: 4, Q: 3, J: 2 };
  const pointsOf = ([r]: MentalPokerCard) => POINTS[['A', '2', '3', '4', '5', '6', '7', 'J', 'Q', 'K'][r]!] ?? 0;

  it('has 40 distinct cards, rank-major, clubs as trump every game, 3 cards each', () => {
    const deck = briscolaDeck();
    expect(deck).toHaveLength(40);
    expect(new Set(deck.map(([r, s]) => `${r}/${s}`)).size).toBe(40);
    expect(deck[5]).toEqual(B('2', 'D'));
    expect(deck[39]).toEqual(B('K', 'S'));
    expect(BRISCOLA).toBe(0);
    expect(deck.reduce((n, c) => n + pointsOf(c), 0)).toBe(120);
    expect(start(briscola, 'host').proto_mp_initial_deal({})).toEqual({ host: 3, guest: 3 });
    expect(HAND_SIZE).toBe(3);
    expect(start(briscola, 'guest').proto_host_metadata!()).toEqual(['Briscola', 'game,briscola,cards,trick-taking', 'supply', {}]);
  });

  it('gives a trick to the stronger card of one suit, else to the follower only if it trumps', () => {
    expect(trickWinner(B('3', 'H'), B('K', 'H'))).toBe('host'); // 3 outranks K
    expect(trickWinner(B('K', 'H'), B('A', 'H'))).toBe('guest');
    expect(trickWinner(B('7', 'H'), B('J', 'H'))).toBe('guest'); // J outranks 7
    expect(trickWinner(B('2', 'H'), B('A', 'D'))).toBe('host'); // off suit, no trump
    expect(trickWinner(B('A', 'H'), B('2', 'C'))).toBe('guest'); // trumped
    expect(trickWinner(B('4', 'C'), B('A', 'H'))).toBe('host'); // trump led, not followed
    expect(trickWinner(B('4', 'C'), B('5', 'C'))).toBe('guest');
  });

  it('leads the cheapest non-trump and follows by winning as cheaply as it can, else throwing its cheapest card', () => {
    const hand = (cards: [string, MentalPokerCard][]) => new Map(cards);
    expect(
      pickLead(
        hand([
          ['1', B('2', 'C')],
          ['2', B('K', 'H')],
          ['3', B('5', 'D')],
        ]),
      ),
    ).toBe('3');
    expect(
      pickLead(
        hand([
          ['1', B('2', 'C')],
          ['2', B('A', 'C')],
        ]),
      ),
    ).toBe('1');
    expect(
      pickLead(
        hand([
          ['12', B('4', 'D')],
          ['3', B('4', 'H')],
        ]),
      ),
    ).toBe('12'); // tie: id-B as text
    expect(
      pickFollow(
        hand([
          ['1', B('6', 'C')],
          ['2', B('A', 'H')],
          ['3', B('5', 'H')],
        ]),
        B('4', 'H'),
      ),
    ).toBe('3'); // the 5 wins weaker than the trump 6
    expect(
      pickFollow(
        hand([
          ['1', B('2', 'C')],
          ['2', B('A', 'H')],
          ['3', B('5', 'H')],
        ]),
        B('4', 'H'),
      ),
    ).toBe('1');
    expect(
      pickFollow(
        hand([
          ['1', B('2', 'C')],
          ['2', B('A', 'H')],
        ]),
        B('3', 'H'),
      ),
    ).toBe('1'); // A beats 3 but the 2 of clubs trumps cheaper
    expect(
      pickFollow(
        hand([
          ['1', B('K', 'D')],
          ['2', B('J', 'S')],
        ]),
        B('3', 'H'),
      ),
    ).toBe('2');
  });

  it('refills before the next lead while the stock lasts, and draw is then the only legal action', async () => {
    const h = start(briscola, 'host');
    const lead: [string, MentalPokerCard][] = [
      ['1', B('2', 'D')],
      ['2', B('K', 'H')],
      ['3', B('5', 'C')],
    ];
    expect(await h.proto_mp_choose_action(stateOf('host', lead, { stock: ['10'] }))).toEqual({ kind: 'play', id_b: '1' });
    expect(h.proto_mp_validate_play(stateOf('host', lead.slice(1)), 'guest', play('30', B('4', 'D')))).toEqual([true, '']);
    const two = stateOf('host', lead.slice(1), { stock: ['10'], played: ['1', '30'] });
    expect(h.proto_mp_check_winner(two)).toBeNull();
    expect(h.proto_mp_legal_actions!(two)).toEqual([{ kind: 'draw' }]);
    expect(await h.proto_mp_choose_action(two)).toEqual({ kind: 'draw' });
    expect(() => h.proto_mp_coerce_action!(two, { kind: 'play', id_b: '2' })).toThrow('selected card is not legal in the current state');
    expect(h.proto_mp_coerce_action!(two, { kind: 'draw' })).toEqual({ kind: 'draw' });
    // With the stock out, the short hand plays on.
    const out = stateOf('host', lead.slice(1), { played: ['1', '30'] });
    expect(h.proto_mp_legal_actions!(out)).toEqual([
      { kind: 'play', id_b: '2', rank: B('K', 'H')[0], suit: 2 },
      { kind: 'play', id_b: '3', rank: B('5', 'C')[0], suit: 0 },
    ]);
    expect(() => h.proto_mp_coerce_action!(out, { kind: 'draw' })).toThrow('draw is not legal in the current state');
    expect(() => h.proto_mp_coerce_action!(out, { kind: 'pass' })).toThrow('Briscola only supports play and refill draw actions');
    expect(() => h.proto_mp_coerce_action!(out, { kind: 'play', id_b: '2', call_suit: 1 })).toThrow('call_suit is not part of a Briscola play');
  });

  it('scores tricks in check_winner and decides on points once stock and hands are empty: host, guest or draw', () => {
    // Both sides hold their cards of every trick (stock empty) and play them as explicit decisions.
    const finish = (tricks: [MentalPokerCard, MentalPokerCard][]) => {
      const hooks = { host: start(briscola, 'host'), guest: start(briscola, 'guest') };
      const deck = new Ledger();
      const side = (role: Role): State => ({ _mp_role: role, _mp_hand: new Set(), _mp_hand_cards: new Map(), _mp_deck_view: deck });
      const st = { host: side('host'), guest: side('guest') };
      const hold = (who: Role, id: string, card: MentalPokerCard) => {
        deck.hands[who].add(id);
        st[who]._mp_hand.add(id);
        st[who]._mp_hand_cards.set(id, card);
      };
      tricks.forEach(([lead, follow], i) => (hold('host', `h${i}`, lead), hold('guest', `g${i}`, follow)));
      const outcomes: [MentalPokerOutcome, MentalPokerOutcome][] = [];
      const turn = (who: Role, id: string) => {
        const card = st[who]._mp_hand_cards.get(id)!;
        hooks[who].proto_mp_apply_local_action!(st[who], hooks[who].proto_mp_coerce_action!(st[who], { kind: 'play', id_b: id }));
        expect(hooks[other(who)].proto_mp_validate_play(st[other(who)], who, play(id, card))).toEqual([true, '']);
        for (const set of [deck.hands[who], st[who]._mp_hand]) set.delete(id);
        st[who]._mp_hand_cards.delete(id);
        deck.played.add(id);
        outcomes.push([hooks.host.proto_mp_check_winner(st.host), hooks.guest.proto_mp_check_winner(st.guest)]);
      };
      tricks.forEach((_, i) => (turn('host', `h${i}`), turn('guest', `g${i}`)));
      expect(outcomes.slice(0, -1).every(([h, g]) => h === null && g === null)).toBe(true);
      return outcomes.at(-1);
    };
    expect(
      finish([
        [B('A', 'D'), B('2', 'D')],
        [B('2', 'H'), B('A', 'H')],
      ]),
    ).toEqual(['draw', 'draw']);
    expect(
      finish([
        [B('A', 'D'), B('2', 'D')],
        [B('2', 'H'), B('3', 'H')],
      ]),
    ).toEqual(['host', 'host']);
    expect(
      finish([
        [B('A', 'D'), B('2', 'C')],
        [B('2', 'H'), B('3', 'H')],
      ]),
    ).toEqual(['guest', 'guest']);
  });

  it('whole games play all 40 cards in 20 tricks, both sides agree, and the outcome is the points the tricks earned', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const perm = permutation(40, seed);
      const t = await playTable(briscola, {}, perm);
      const plays = t.log.filter((e): e is ['play', Role, string, null] => e[0] === 'play');
      expect(plays).toHaveLength(40);
      expect(t.log.filter((e) => e[0] === 'draw')).toHaveLength(34);
      expect(plays.map((e) => e[1])).toEqual(plays.map((_, i) => (i % 2 ? 'guest' : 'host')));
      const deck = briscolaDeck();
      const score = { host: 0, guest: 0 };
      for (let i = 0; i < 40; i += 2) {
        const lead = deck[perm[Number(plays[i]![2])]!]!;
        const follow = deck[perm[Number(plays[i + 1]![2])]!]!;
        const [ls, fs] = [lead[1], follow[1]];
        const rank = (c: MentalPokerCard) => [10, 1, 9, 2, 3, 4, 5, 6, 7, 8][c[0]]!; // A, 2, 3, …: 2 < 4 < … < K < 3 < A
        const guestTakes = ls === fs ? rank(follow) > rank(lead) : fs === 0;
        score[guestTakes ? 'guest' : 'host'] += pointsOf(lead) + pointsOf(follow);
      }
      expect(score.host + score.guest).toBe(120);
      const expected = score.host > score.guest ? 'host' : score.guest > score.host ? 'guest' : 'draw';
      expect(t.outcome, `seed ${seed}`).toEqual([expected, expected]);
    }
  });
});

interface GameVector {
  kind: string;
  options: Record<string, unknown>;
  messages: { direction: 'host_to_guest' | 'guest_to_host'; message: Record<string, unknown> & { action: string } }[];
  derived: {
    id_b_to_id_a: Record<string, string>;
    guest_deal_id_b: string[];
    host_deal_id_b: string[];
    ot_id_to_id_b: { host_view: Record<string, string>; guest_view: Record<string, string> };
    final_hands: { host: string[]; guest: string[] };
    played: string[];
    stock_left: string[];
  };
  expect: { host_result: { outcome: unknown; metadata: unknown }; guest_result: { outcome: unknown; metadata: unknown } };
}

describe("the reference's recorded Crazy Eights game (aigenora-mp-audit-vectors.json)", () => {
  const present = needShared(CORPUS_REL, "the reference's recorded Crazy Eights game (mental-poker audit vectors)");

  it.skipIf(!present)(
    "replays play by play: each choice is the reference's, each play passes the receiver's rules, the outcome and metadata match",
    async () => {
      const game = (JSON.parse(readFileSync(CORPUS, 'utf8')) as { cases: GameVector[] }).cases.find((c) => c.kind === 'game')!;
      const d = game.derived;
      const hooks = { host: start(crazyEights, 'host', game.options), guest: start(crazyEights, 'guest', game.options) };
      const universe = hooks.host.proto_mp_deck_universe();
      const face = (id: string) => universe[Number(d.id_b_to_id_a[id])]!;
      const ids = Object.keys(d.id_b_to_id_a).sort((a, b) => Number(a) - Number(b));
      expect(ids).toEqual([...Array(52).keys()].map(String));
      const deck = new Ledger();
      ids.forEach((id) => deck.stock.add(id));
      const st = { host: stateOf('host', [], { peer: [] }), guest: stateOf('guest', [], { peer: [] }) };
      st.host._mp_deck_view = st.guest._mp_deck_view = deck;
      const take = (who: Role, id: string) => {
        expect(deck.stock.delete(id), `${id} in stock`).toBe(true);
        deck.hands[who].add(id);
        st[who]._mp_hand.add(id);
        st[who]._mp_hand_cards.set(id, face(id));
      };
      const plan = hooks.host.proto_mp_initial_deal({});
      expect(ids.slice(0, plan.guest)).toEqual(d.guest_deal_id_b);
      expect(ids.slice(plan.guest, plan.guest + plan.host)).toEqual(d.host_deal_id_b);
      d.guest_deal_id_b.forEach((id) => take('guest', id));
      d.host_deal_id_b.forEach((id) => take('host', id));

      const loop = game.messages.slice(
        game.messages.findIndex((m) => m.message.action === 'mp_ot_request' && m.message['id'] === 'host-4') + 2,
        game.messages.findIndex((m) => m.message.action === 'mp_opening'),
      );
      let turns = 0;
      let last: [MentalPokerOutcome, MentalPokerOutcome] = [null, null];
      for (const { direction, message: m } of loop) {
        if (m.action === 'mp_ot_response') continue;
        const actor: Role = direction === 'host_to_guest' ? 'host' : 'guest';
        expect(actor, `turn ${turns}`).toBe(turns % 2 === 0 ? 'host' : 'guest');
        expect(last, `turn ${turns}: the game had already ended`).toEqual([null, null]);
        const chosen = await hooks[actor].proto_mp_choose_action(st[actor]);
        if (m.action === 'mp_play') {
          const id = m['id_b'] as string;
          expect(chosen, `turn ${turns}`).toEqual({ kind: 'play', id_b: id, ...(m['call_suit'] === undefined ? {} : { call_suit: m['call_suit'] }) });
          // The card on the wire is the universe card its id-B was shuffled from: the card order is the reference's.
          expect([m['rank'], m['suit']]).toEqual(face(id));
          const verdict = hooks[other(actor)].proto_mp_validate_play(st[other(actor)], actor, m as MentalPokerPlay);
          expect(verdict, `turn ${turns}`).toEqual([true, '']);
          deck.hands[actor].delete(id);
          deck.played.add(id);
          st[actor]._mp_hand.delete(id);
          st[actor]._mp_hand_cards.delete(id);
        } else if (m.action === 'mp_ot_request') {
          expect(chosen, `turn ${turns}`).toEqual({ kind: 'draw' });
          const id = ids.find((x) => deck.stock.has(x))!;
          expect(d.ot_id_to_id_b.host_view[m['id'] as string]).toBe(id);
          take(actor, id);
        } else {
          expect(m.action).toBe('mp_pass');
          expect(chosen).toEqual({ kind: 'pass' });
        }
        last = [hooks.host.proto_mp_check_winner(st.host), hooks.guest.proto_mp_check_winner(st.guest)];
        turns += 1;
      }
      expect(turns).toBe(26);
      expect(last).toEqual([game.expect.host_result.outcome, game.expect.guest_result.outcome]);
      expect(hooks.host.proto_host_metadata!()).toEqual(game.expect.host_result.metadata);
      expect(hooks.guest.proto_host_metadata!()).toEqual(game.expect.guest_result.metadata);
      expect({ host: [...deck.hands.host].sort(), guest: [...deck.hands.guest].sort() }).toEqual({
        host: [...d.final_hands.host].sort(),
        guest: [...d.final_hands.guest].sort(),
      });
      expect([...deck.played].sort()).toEqual([...d.played].sort());
      expect([...deck.stock].sort()).toEqual([...d.stock_left].sort());
      // The same deal at the table gives the same game.
      const table = await playTable(
        crazyEights,
        game.options,
        ids.map((id) => Number(d.id_b_to_id_a[id])),
      );
      expect(table.outcome).toEqual(last);
      expect(table.log).toHaveLength(26);
    },
  );
});

// The Python twin of playTable, driving the reference's own hooks classes.
const SIM_PY = String.raw`
import importlib.util, json, sys, tempfile
from aigenora.proto.mental_poker import DeckState

def load(path):
    spec = importlib.util.spec_from_file_location('ref_hooks', path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

def game(m, opts, perm, tmp):
    hooks, states, my = {}, {}, {}
    for r in ('host', 'guest'):
        h = m.Hooks()
        h.proto_init(opts, r, [], tempfile.mkdtemp(dir=tmp), None)
        hooks[r], states[r], my[r] = h, {}, (set(), {})
    universe = hooks['host'].proto_mp_deck_universe()
    ids = [str(j) for j in range(len(perm))]
    faces = {ids[j]: tuple(universe[perm[j]]) for j in range(len(perm))}
    deck = DeckState()
    deck.stock.update(ids)
    plan = hooks['host'].proto_mp_initial_deal({})
    g, n = int(plan['guest']), int(plan['host'])
    for who, dealt in (('guest', ids[:g]), ('host', ids[g:g + n])):
        for i in dealt:
            deck.deal_to(who, i)
            my[who][0].add(i)
            my[who][1][i] = faces[i]
    for r in ('host', 'guest'):
        states[r].update(_mp_role=r, _mp_hand=my[r][0], _mp_hand_cards=my[r][1], _mp_deck_view=deck)
    log, turn, passes, out = [], 0, 0, [None, None]
    while turn < 2000:
        actor = 'host' if turn % 2 == 0 else 'guest'
        peer = 'guest' if actor == 'host' else 'host'
        a = hooks[actor].proto_mp_choose_action(states[actor])
        if a['kind'] == 'play':
            passes = 0
            i = a['id_b']
            rank, suit = my[actor][1][i]
            msg = {'action': 'mp_play', 'id_b': i, 'rank': rank, 'suit': suit}
            if a.get('call_suit') is not None:
                msg['call_suit'] = a['call_suit']
            vr = hooks[peer].proto_mp_validate_play(states[peer], actor, msg)
            if not vr.ok:
                log.append(['rejected', actor, vr.reason])
                break
            deck.play(actor, i)
            my[actor][0].discard(i)
            my[actor][1].pop(i)
            log.append(['play', actor, i, msg.get('call_suit')])
        elif a['kind'] == 'draw':
            passes = 0
            i = next(x for x in ids if x in deck.stock)
            deck.deal_to(actor, i)
            my[actor][0].add(i)
            my[actor][1][i] = faces[i]
            log.append(['draw', actor, i])
        else:
            passes += 1
            log.append(['pass', actor])
        if passes >= 2:
            for r in ('host', 'guest'):
                states[r]['_mp_stalled'] = True
        out = [hooks['host'].proto_mp_check_winner(states['host']), hooks['guest'].proto_mp_check_winner(states['guest'])]
        if out[0] is not None or out[1] is not None or passes >= 2:
            break
        turn += 1
        if not deck.host_hand and not deck.guest_hand:
            break
    return {'log': log, 'outcome': out, 'metadata': [list(hooks[r].proto_host_metadata()) for r in ('host', 'guest')]}

def winner(m, opts, case, tmp):
    host_n, guest_n, stock_n, stalled = case
    h = m.Hooks()
    h.proto_init(opts, 'host', [], tempfile.mkdtemp(dir=tmp), None)
    deck = DeckState()
    deck.host_hand.update('h%d' % i for i in range(host_n))
    deck.guest_hand.update('g%d' % i for i in range(guest_n))
    deck.stock.update('s%d' % i for i in range(stock_n))
    state = {'_mp_role': 'host', '_mp_hand': set(deck.host_hand), '_mp_hand_cards': {}, '_mp_deck_view': deck}
    if stalled:
        state['_mp_stalled'] = True
    return h.proto_mp_check_winner(state)

req = json.load(sys.stdin)
m = load(req['hooks'])
with tempfile.TemporaryDirectory() as tmp:
    print(json.dumps({'games': [game(m, req['options'], p, tmp) for p in req['perms']],
                      'winners': [winner(m, req['options'], c, tmp) for c in req['winner_cases']]}))
`;

describe("against the reference's own hooks (python3)", () => {
  const live =
    [join(REF_SRC, 'aigenora/proto/mental_poker.py'), ...Object.values(REF_HOOKS)].every((p) =>
      needShared(relative(SHARED, p), "the reference's mental-poker sources and Briscola / Crazy Eights hooks"),
    ) && needCommand('python3', "the live cross-check against the reference's own hooks", 'install python3 (>= 3.10)');

  const cases: [string, HooksModule<'mental_poker'>, keyof typeof REF_HOOKS, number, Record<string, unknown>][] = [
    ['Briscola', briscola, 'briscola', 40, {}],
    ['Crazy Eights, hand_size 3', crazyEights, 'crazy-eights', 52, { hand_size: 3 }],
    ['Crazy Eights, hand_size 5', crazyEights, 'crazy-eights', 52, { hand_size: 5 }],
    ['Crazy Eights, hand_size 7', crazyEights, 'crazy-eights', 52, { hand_size: 7 }],
  ];
  it.skipIf(!live).each(cases)(
    '%s: the same deals give the same actions, outcomes and metadata; check_winner agrees on ledgers',
    async (_name, module, ref, n, options) => {
      const perms = Array.from({ length: 60 }, (_, i) => permutation(n, 1000 + i * 13 + n));
      // [host cards, guest cards, stock cards, stalled]: random games almost never stall, so the tie-break
      // and the empty-hand rules are also compared on ledgers built for them.
      const winnerCases: [number, number, number, boolean][] = [];
      for (const h of [0, 1, 2])
        for (const g of [0, 1, 2]) for (const stock of [0, 3]) for (const stalled of [false, true]) winnerCases.push([h, g, stock, stalled]);
      const r = spawnSync('python3', ['-c', SIM_PY], {
        input: JSON.stringify({ hooks: REF_HOOKS[ref], options, perms, winner_cases: winnerCases }),
        encoding: 'utf8',
        env: { ...process.env, PYTHONPATH: REF_SRC },
        maxBuffer: 1 << 28,
      });
      expect(r.status, r.stderr).toBe(0);
      const theirs = JSON.parse(r.stdout) as { games: Table[]; winners: MentalPokerOutcome[] };
      expect(theirs.games).toHaveLength(perms.length);
      for (const [i, perm] of perms.entries()) expect(await playTable(module, options, perm), `deal ${i}`).toEqual(theirs.games[i]);
      const ids = (prefix: string, k: number) => Array.from({ length: k }, (_, i) => `${prefix}${i}`);
      const ours = winnerCases.map(([h, g, stock, stalled]) => {
        const s = stateOf('host', [], { peer: ids('g', g), stock: ids('s', stock), stalled });
        for (const id of ids('h', h)) (s._mp_deck_view.hands.host.add(id), s._mp_hand.add(id));
        return start(module, 'host', options).proto_mp_check_winner(s);
      });
      expect(ours).toEqual(theirs.winners);
      expect(new Set(ours).size).toBeGreaterThan(1);
    },
    120_000,
  );
});
