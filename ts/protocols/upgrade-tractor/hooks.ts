/**
 * Upgrade (Tractor), authoritative_group: four fixed seats in two partnerships by seat parity, two
 * 54-card decks dealt 25 each with an eight-card kitty, trump declarations, a buried kitty, structured
 * trick following (pairs, tractors, throws), point capture and level progression over several hands.
 * The authority state, events, views and refusal texts are the reference's field for field, and a
 * seeded deal (`deal_seed`) gives the reference's card ids in the reference's order, so a leader of
 * either implementation can take over from the other. Without a seed the deal's seed comes from the
 * session's random source. Only the leader holds the deal: a member's view has its own hand, counts
 * and public tricks; the kitty stays hidden until the hand's end.
 */
import { defineHooks, type GroupHookResult, type GroupMember, type GroupState } from '../../hooks/types.js';
import { fixedSeats, fourActiveMembers } from '../fixed-seats.js';
import {
  createSharedDeck,
  dealSeed,
  discardCards,
  drawCards,
  moveHandToZone,
  privateDeckView,
  takeFromHand,
  type Card as DeckCard,
  type DeckMember,
  type SharedDeck,
} from '../shared-deck.js';
import {
  cardStrength,
  classifyPlay,
  standardFacesWithJokers,
  TractorRuleError,
  validateFollow,
  winningPlayIndex,
  type Face,
  type Shape,
  type TrumpContext,
} from './tractor.js';
import { chooseAction, follow } from './autoplay.js';

export type Card = DeckCard<Face>;
export type Team = 'team0' | 'team1';
type Teams = Record<Team, number>;

export interface Play {
  public_key: string;
  seat: number;
  team: Team;
  cards: Card[];
  shape: Shape;
}
export interface Declaration {
  kind: 'pass_declare' | 'declare_trump';
  public_key: string;
  seat: number;
  strength: number;
  trump_suit?: string | null;
  card_ids?: string[];
  cards?: Card[];
}
export interface TrickRecord {
  number: number;
  winner: string;
  team: Team;
  points: number;
  plays: Play[];
}
export interface HandResult {
  defender_points: number;
  kitty_points: number;
  kitty_multiplier: number;
  kitty_award: number;
  controlling_team: Team;
  level_steps: number;
  levels: Teams;
}
/** The public part of the authority state (everything but the deck). */
interface TableFields {
  phase: 'declaration' | 'bury' | 'playing' | 'completed';
  hand_number: number;
  restart_count: number;
  recovery_notice: string;
  players: Record<string, { seat: number; team: Team }>;
  turn_order: string[];
  current_player: string;
  starter: string;
  declarer: string;
  declarer_team: Team;
  levels: Teams;
  level_rank: number;
  trump_suit: string | null;
  declarations: Record<string, Declaration>;
  winning_declaration: Declaration | null;
  kitty_count: number;
  kitty_revealed: Card[];
  current_trick: Play[];
  trick_history: TrickRecord[];
  captured_points: Teams;
  defender_points: number;
  match_points: Teams;
  last_result: HandResult | null;
}
export type UpgradeState = GroupState & TableFields & { deck: SharedDeck<Face> };
export type UpgradeView = Record<string, unknown> &
  Omit<TableFields, 'kitty_count'> & {
    kitty_count: number;
    my_hand: Card[];
    hand_counts: Record<string, number>;
    you: { public_key: string; seat: number; team: Team; is_declarer: boolean };
  };

const HAND_SIZE = 25;
const KITTY = 8;

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** Python's int() on a checkpoint field: an integer, or the decimal text of one. */
function pyInt(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  const n = typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v) ? Number.parseInt(v, 10) : typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : v;
  if (!isInt(n)) throw new Error(`invalid literal for int(): ${JSON.stringify(v)}`);
  return n;
}

export const teamOfSeat = (seat: number): Team => (seat % 2 === 0 ? 'team0' : 'team1');
const nextKey = (order: readonly string[], key: string): string => order[(order.indexOf(key) + 1) % order.length]!;

/** Captured 5s score five, 10s and Ks ten. */
export function cardPoints(card: { rank: number }): number {
  if (card.rank === 5) return 5;
  return card.rank === 10 || card.rank === 13 ? 10 : 0;
}

const activeMembers = (members: readonly DeckMember[]): DeckMember[] => fourActiveMembers(members, 'Upgrade');

/** Python's tuple order on two descending strength lists. */
/** Orders two cards' strengths (trump class, then rank position), weakest first. */
const compareStrength = (a: [number, number], b: [number, number]): number => a[0] - b[0] || a[1] - b[1];

function compareStrengths(a: [number, number][], b: [number, number][]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = a[i]![0] - b[i]![0] || a[i]![1] - b[i]![1];
    if (d) return d;
  }
  return a.length - b.length;
}

function throwStrength(cards: readonly Card[], ctx: TrumpContext): [number, number][] {
  return cards.map((c) => cardStrength(c, ctx)).sort((x, y) => y[0] - x[0] || y[1] - x[1]);
}

/** The index of the trick's winning play: plays matching the lead's structure compete; a throw is beaten by a stronger same-suit or trump throw. */
export function trickWinner(trick: readonly Play[], ctx: TrumpContext): number {
  let winner = 0;
  if (trick[0]!.shape.kind !== 'throw') {
    for (let i = 1; i < trick.length; i++) {
      try {
        if (winningPlayIndex([trick[winner]!.cards, trick[i]!.cards], ctx) === 1) winner = i;
      } catch (e) {
        if (!(e instanceof TractorRuleError)) throw e;
      }
    }
    return winner;
  }
  const leadSuit = trick[0]!.shape.suit;
  for (let i = 1; i < trick.length; i++) {
    const suit = trick[i]!.shape.suit;
    const winnerSuit = trick[winner]!.shape.suit;
    if (suit !== leadSuit && suit !== 'trump') continue;
    if (winnerSuit !== 'trump' && suit === 'trump') {
      winner = i;
      continue;
    }
    if (suit === winnerSuit && compareStrengths(throwStrength(trick[i]!.cards, ctx), throwStrength(trick[winner]!.cards, ctx)) > 0) winner = i;
  }
  return winner;
}

/** A follower's shape; an off-suit discard is `mixed`. */
function safeShape(cards: readonly Card[], ctx: TrumpContext): Shape {
  try {
    return classifyPlay(cards, ctx);
  } catch (e) {
    if (!(e instanceof TractorRuleError)) throw e;
    const counts = new Map<string, number>();
    for (const c of cards) counts.set(`${c.suit}:${c.rank}`, (counts.get(`${c.suit}:${c.rank}`) ?? 0) + 1);
    return { kind: 'mixed', count: cards.length, suit: 'mixed', pair_count: [...counts.values()].reduce((n, c) => n + Math.floor(c / 2), 0) };
  }
}

export default defineHooks(
  'authoritative_group',
  (ctx) => {
    function optionInt(name: string, fallback: number, min: number, max: number): number {
      const v = Object.hasOwn(ctx.options, name) ? ctx.options[name] : fallback;
      if (!isInt(v) || v < min || v > max) throw new Error(`${name} must be between ${min} and ${max}`);
      return v;
    }
    const targetLevel = () => optionInt('target_level', 14, 3, 14);
    const maxHands = () => optionInt('max_hands', 16, 1, 64);

    interface HandSetup {
      levels: Teams;
      declarer_team: string;
      starter: string;
      hand_number: number;
      restart_count: number;
      match_points: Teams;
      recovery_notice: string;
    }

    function newHand(members: readonly DeckMember[], h: HandSetup): UpgradeState {
      if (members.length !== 4) throw new Error('Upgrade requires exactly four active Members');
      const order = members.map((m) => m.public_key);
      if (!order.includes(h.starter)) throw new Error('starter must be an active Member');
      if (h.declarer_team !== 'team0' && h.declarer_team !== 'team1') throw new Error('declarer_team is invalid');
      const seed = dealSeed(ctx.options['deal_seed'], [h.hand_number, h.restart_count], ctx.random);
      const deck = createSharedDeck(standardFacesWithJokers(), members, HAND_SIZE, seed, 2);
      const players: UpgradeState['players'] = {};
      for (const m of members) players[m.public_key] = { seat: m.seat, team: teamOfSeat(m.seat) };
      return {
        phase: 'declaration',
        hand_number: h.hand_number,
        restart_count: h.restart_count,
        recovery_notice: h.recovery_notice,
        players,
        turn_order: order,
        current_player: '',
        starter: h.starter,
        declarer: '',
        declarer_team: h.declarer_team,
        levels: { team0: h.levels.team0, team1: h.levels.team1 },
        level_rank: h.levels[h.declarer_team],
        trump_suit: null,
        declarations: {},
        winning_declaration: null,
        kitty_count: KITTY,
        kitty_revealed: [],
        current_trick: [],
        trick_history: [],
        captured_points: { team0: 0, team1: 0 },
        defender_points: 0,
        match_points: { team0: h.match_points.team0, team1: h.match_points.team1 },
        last_result: null,
        deck,
      };
    }

    /** The selected cards, checked as the reference does: count, uniqueness, ownership. */
    function handCards(state: UpgradeState, key: string, ids: unknown, min: number, max: number): Card[] {
      if (!Array.isArray(ids) || ids.length < min || ids.length > max || new Set(ids).size !== ids.length || ids.some((id) => typeof id !== 'string')) {
        throw new Error(`card_ids must contain ${min}-${max} unique ids`);
      }
      const hand = state.deck.hands[key]!;
      if (ids.some((id: string) => !hand.includes(id))) throw new Error("a selected card is not in this Member's hand");
      return (ids as string[]).map((id) => structuredClone(state.deck.catalog[id]!));
    }

    const contextOf = (state: UpgradeState): TrumpContext => ({ level_rank: state.level_rank, trump_suit: state.trump_suit });

    function declarationFromCards(state: UpgradeState, actor: GroupMember, cards: Card[]): Declaration {
      let strength: number;
      let trump: string | null;
      if (cards.length === 1) {
        const card = cards[0]!;
        if (card.rank !== state.level_rank || card.suit === 'joker') throw new Error('a single declaration must be one level card');
        strength = 1;
        trump = card.suit;
      } else {
        const [first, second] = cards as [Card, Card];
        if (first.suit !== second.suit || first.rank !== second.rank) throw new Error('a pair declaration needs identical card faces');
        if (first.rank === state.level_rank && first.suit !== 'joker') [strength, trump] = [2, first.suit];
        else if (first.rank === 16 && first.suit === 'joker') [strength, trump] = [3, null];
        else if (first.rank === 17 && first.suit === 'joker') [strength, trump] = [4, null];
        else throw new Error('a pair declaration needs level cards or identical jokers');
      }
      return { kind: 'declare_trump', public_key: actor.public_key, seat: actor.seat, strength, trump_suit: trump };
    }

    function handleDeclaration(state: UpgradeState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      const key = actor.public_key;
      if (Object.hasOwn(state.declarations, key)) throw new Error('this Member has already declared or passed');
      let declaration: Declaration;
      if (action['kind'] === 'pass_declare') {
        declaration = { kind: 'pass_declare', public_key: key, seat: actor.seat, strength: 0 };
      } else if (action['kind'] === 'declare_trump') {
        const ids = action['card_ids'];
        const cards = handCards(state, key, ids, 1, 2);
        declaration = declarationFromCards(state, actor, cards);
        declaration.card_ids = [...(ids as string[])];
        declaration.cards = cards;
        if (declaration.strength <= (state.winning_declaration?.strength ?? 0)) throw new Error('the declaration must be stronger than the current one');
        state.winning_declaration = structuredClone(declaration);
      } else {
        throw new Error('declaration accepts pass_declare or declare_trump');
      }
      state.declarations[key] = declaration;
      // The reference spreads the declaration over kind 'upgrade_declaration', so the event's kind is the declaration's own.
      const events: unknown[] = [{ ...structuredClone(declaration) }];
      if (Object.keys(state.declarations).length < 4) return { state, events };
      const winning = state.winning_declaration;
      const declarer = winning ? winning.public_key : state.starter;
      state.trump_suit = winning ? (winning.trump_suit ?? null) : null;
      state.declarer = declarer;
      state.declarer_team = state.players[declarer]!.team;
      drawCards(state.deck, declarer, state.deck.draw_pile.length);
      state.phase = 'bury';
      state.current_player = declarer;
      events.push({
        kind: 'upgrade_declarer_selected',
        declarer,
        declarer_team: state.declarer_team,
        trump_suit: state.trump_suit,
        level_rank: state.level_rank,
      });
      return { state, events };
    }

    function handleBury(state: UpgradeState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      if (action['kind'] !== 'bury') throw new Error('the declarer must bury exactly eight cards');
      const ids = action['card_ids'];
      handCards(state, actor.public_key, ids, KITTY, KITTY);
      const cardIds = ids as string[];
      const protectedIds = state.winning_declaration?.card_ids ?? [];
      if (cardIds.some((id) => protectedIds.includes(id))) throw new Error('the winning declaration cards cannot be buried');
      moveHandToZone(state.deck, actor.public_key, 'kitty', 'table', cardIds);
      state.phase = 'playing';
      state.current_player = actor.public_key;
      return { state, events: [{ kind: 'upgrade_kitty_buried', declarer: actor.public_key, count: KITTY }] };
    }

    function handlePlay(state: UpgradeState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      if (action['kind'] !== 'play') throw new Error('trick play accepts only play');
      const key = actor.public_key;
      const ids = action['card_ids'];
      const cards = handCards(state, key, ids, 1, HAND_SIZE);
      const cardIds = ids as string[];
      const context = contextOf(state);
      let shape: Shape;
      if (state.current_trick.length) {
        const hand = state.deck.hands[key]!.map((id) => state.deck.catalog[id]!);
        validateFollow(hand, cards, state.current_trick[0]!.shape, context);
        shape = safeShape(cards, context);
      } else {
        shape = classifyPlay(cards, context);
      }
      takeFromHand(state.deck, key, cardIds);
      discardCards(state.deck, cardIds);
      const play: Play = { public_key: key, seat: actor.seat, team: teamOfSeat(actor.seat), cards, shape };
      state.current_trick.push(play);
      const events: unknown[] = [{ kind: 'upgrade_play', ...structuredClone(play) }];
      if (state.current_trick.length < 4) {
        state.current_player = nextKey(state.turn_order, key);
        return { state, events };
      }
      const trick = state.current_trick;
      const winner = trick[trickWinner(trick, context)]!.public_key;
      const team = state.players[winner]!.team;
      const points = trick.reduce((n, p) => n + p.cards.reduce((m, c) => m + cardPoints(c), 0), 0);
      state.captured_points[team] += points;
      if (team !== state.declarer_team) state.defender_points += points;
      const leadCount = trick[0]!.shape.count;
      state.trick_history.push({ number: state.trick_history.length + 1, winner, team, points, plays: structuredClone(trick) });
      state.current_trick = [];
      events.push({ kind: 'upgrade_trick_won', winner, team, points, trick_number: state.trick_history.length });
      if (state.turn_order.every((k) => !state.deck.hands[k]!.length)) return finishHand(state, winner, leadCount, events);
      state.current_player = winner;
      return { state, events };
    }

    function finishHand(state: UpgradeState, finalWinner: string, finalLeadCount: number, events: unknown[]): GroupHookResult {
      const kitty = state.deck.zones['kitty']!['table']!.map((id) => structuredClone(state.deck.catalog[id]!));
      state.kitty_revealed = kitty;
      const finalTeam = state.players[finalWinner]!.team;
      const kittyPoints = kitty.reduce((n, c) => n + cardPoints(c), 0);
      const multiplier = 2 * finalLeadCount;
      let award = 0;
      if (finalTeam !== state.declarer_team) {
        award = kittyPoints * multiplier;
        state.captured_points[finalTeam] += award;
        state.defender_points += award;
      }
      const defenders: Team = state.declarer_team === 'team0' ? 'team1' : 'team0';
      const dp = state.defender_points;
      let controlling: Team;
      let steps: number;
      if (dp >= 80) {
        controlling = defenders;
        steps = 1 + Math.floor((dp - 80) / 40);
      } else {
        controlling = state.declarer_team;
        steps = dp === 0 ? 3 : dp < 40 ? 2 : 1;
      }
      const target = targetLevel();
      state.levels[controlling] = Math.min(target, state.levels[controlling] + steps);
      for (const t of ['team0', 'team1'] as const) state.match_points[t] += state.captured_points[t];
      state.last_result = {
        defender_points: dp,
        kitty_points: kittyPoints,
        kitty_multiplier: multiplier,
        kitty_award: award,
        controlling_team: controlling,
        level_steps: steps,
        levels: { ...state.levels },
      };
      events.push({ kind: 'upgrade_hand_complete', ...structuredClone(state.last_result) });
      if (state.levels[controlling] >= target || state.hand_number >= maxHands()) {
        state.phase = 'completed';
        events.push({ kind: 'upgrade_match_complete', winner: controlling, levels: { ...state.levels } });
        return { state, events, completed: true, outcome: controlling };
      }
      const members = state.turn_order.map((public_key) => ({ public_key, seat: state.players[public_key]!.seat, status: 'active' }));
      const candidates = state.turn_order.filter((k) => state.players[k]!.team === controlling);
      const replacement = newHand(members, {
        levels: state.levels,
        declarer_team: controlling,
        starter: candidates.includes(finalWinner) ? finalWinner : candidates[0]!,
        hand_number: state.hand_number + 1,
        restart_count: state.restart_count,
        match_points: state.match_points,
        recovery_notice: state.recovery_notice,
      });
      replacement.last_result = state.last_result;
      events.push({ kind: 'upgrade_hand_started', hand_number: replacement.hand_number, starter: replacement.starter });
      return { state: replacement, events };
    }

    return {
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_host_metadata: () => ['Upgrade (Tractor)', 'game,cards,multiplayer,upgrade,tractor,partnership', 'supply', {}],

      proto_group_initial_state(members: GroupMember[]): GroupState {
        const start = optionInt('start_level', 2, 2, 14);
        const target = targetLevel();
        if (target <= start) throw new Error('target_level must be higher than start_level');
        maxHands();
        const active = activeMembers(members);
        return newHand(active, {
          levels: { team0: start, team1: start },
          declarer_team: 'team0',
          starter: active[0]!.public_key,
          hand_number: 1,
          restart_count: 0,
          match_points: { team0: 0, team1: 0 },
          recovery_notice: '',
        });
      },

      ...fixedSeats,

      // A member whose turn ran out passes the declaration; as declarer it buries its eight weakest
      // cards (never the winning declaration's); leading, it plays its weakest single card; following,
      // a follow that keeps every obligation of the led shape (checked here with the rules themselves).
      proto_group_timeout_action(s: GroupState, member: GroupMember): Record<string, unknown> | null {
        const state = s as UpgradeState;
        const key = member.public_key;
        if (state.phase === 'declaration') return Object.hasOwn(state.declarations, key) ? null : { kind: 'pass_declare' };
        if (state.current_player !== key || (state.phase !== 'bury' && state.phase !== 'playing')) return null;
        const ctx = contextOf(state);
        const hand = (state.deck.hands[key] ?? []).map((id) => state.deck.catalog[id]!);
        const weakestFirst = (cards: Card[]) =>
          [...cards].sort((a, b) => compareStrength(cardStrength(a, ctx), cardStrength(b, ctx)) || (a.card_id < b.card_id ? -1 : 1));
        if (state.phase === 'bury') {
          const kept = new Set(state.winning_declaration?.card_ids ?? []);
          return {
            kind: 'bury',
            card_ids: weakestFirst(hand.filter((c) => !kept.has(c.card_id)))
              .slice(0, KITTY)
              .map((c) => c.card_id),
          };
        }
        const led = state.current_trick[0];
        if (!led) {
          const weakest = weakestFirst(hand)[0];
          return weakest ? { kind: 'play', card_ids: [weakest.card_id] } : null;
        }
        // The autoplay's follow, on a fixed sequence of choices: the first that the rules accept.
        let x = 0x2545f491;
        const random = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
        for (let attempt = 0; attempt < 16; attempt++) {
          const ids = follow(hand, led.shape, ctx, random);
          try {
            validateFollow(
              hand,
              ids.map((id) => state.deck.catalog[id]!),
              led.shape,
              ctx,
            );
            return { kind: 'play', card_ids: ids };
          } catch (e) {
            if (!(e instanceof TractorRuleError)) throw e;
          }
        }
        return null;
      },

      proto_group_handle(s: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
        const state = s as UpgradeState;
        if (state.phase === 'completed') throw new Error('the Upgrade match is complete');
        if (state.phase === 'declaration') return handleDeclaration(state, actor, action);
        if (actor.public_key !== state.current_player) throw new Error("it is not this Member's turn");
        if (state.phase === 'bury') return handleBury(state, actor, action);
        if (state.phase === 'playing') return handlePlay(state, actor, action);
        throw new Error('the Upgrade table is not accepting actions');
      },

      proto_group_view(s: GroupState, viewer: GroupMember): Record<string, unknown> {
        const state = s as UpgradeState;
        const deck = privateDeckView(state.deck, viewer.public_key, ['kitty']);
        // The committed state is frozen and shared: the view copies what it hands out.
        const view: UpgradeView = {
          phase: state.phase,
          hand_number: state.hand_number,
          restart_count: state.restart_count,
          recovery_notice: state.recovery_notice,
          players: structuredClone(state.players),
          turn_order: [...state.turn_order],
          current_player: state.current_player,
          starter: state.starter,
          declarer: state.declarer,
          declarer_team: state.declarer_team,
          levels: { ...state.levels },
          level_rank: state.level_rank,
          trump_suit: state.trump_suit,
          declarations: structuredClone(state.declarations),
          winning_declaration: structuredClone(state.winning_declaration),
          kitty_count: state.kitty_count,
          kitty_revealed: structuredClone(state.kitty_revealed),
          current_trick: structuredClone(state.current_trick),
          trick_history: structuredClone(state.trick_history),
          captured_points: { ...state.captured_points },
          defender_points: state.defender_points,
          match_points: { ...state.match_points },
          my_hand: deck.my_hand,
          hand_counts: deck.hand_counts,
          last_result: structuredClone(state.last_result),
          you: { public_key: viewer.public_key, seat: viewer.seat, team: teamOfSeat(viewer.seat), is_declarer: viewer.public_key === state.declarer },
        };
        return view;
      },

      // Only public facts survive a leader change: the hidden deal and kitty are never copied to failover candidates.
      proto_group_recovery_snapshot(s: GroupState): GroupState {
        const state = s as UpgradeState;
        return {
          hand_number: state.hand_number,
          restart_count: state.restart_count,
          levels: { ...state.levels },
          declarer_team: state.declarer_team,
          starter: state.starter,
          match_points: { ...state.match_points },
        };
      },

      proto_group_restore(checkpoint: GroupState, members: GroupMember[]): GroupState {
        const active = activeMembers(members);
        const order = active.map((m) => m.public_key);
        const saved = checkpoint['starter'];
        const starter = typeof saved === 'string' && order.includes(saved) ? saved : order[0]!;
        const levels = (checkpoint['levels'] ?? {}) as Record<string, unknown>;
        const points = (checkpoint['match_points'] ?? {}) as Record<string, unknown>;
        return newHand(active, {
          levels: { team0: pyInt(levels['team0'] ?? 2), team1: pyInt(levels['team1'] ?? 2) },
          declarer_team: String(checkpoint['declarer_team'] ?? 'team0'),
          starter,
          hand_number: pyInt(checkpoint['hand_number'] ?? 1),
          restart_count: pyInt(checkpoint['restart_count'] ?? 0) + 1,
          match_points: { team0: pyInt(points['team0'] ?? 0), team1: pyInt(points['team1'] ?? 0) },
          recovery_notice: 'The interrupted private deal and kitty were discarded after a Leader change.',
        });
      },

      proto_group_on_leader_changed(s: GroupState, oldLeader: string, newLeader: string): GroupHookResult {
        const state = s as UpgradeState;
        state.recovery_notice = `Leader changed from ${oldLeader.slice(0, 8)} to ${newLeader.slice(0, 8)}; the private hand was redealt.`;
        return {
          state,
          events: [{ kind: 'upgrade_hand_restarted_after_leader_change', old_leader: oldLeader, new_leader: newLeader, hand_number: state.hand_number }],
        };
      },
    };
  },
  (view, me, random) => chooseAction(view as UpgradeView, me, random),
);
