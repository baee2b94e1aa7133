/**
 * Crazy Eights (mental_poker). The engine deals, draws (by oblivious transfer), checks every play's keys
 * and card face, and audits the game; these hooks hold the rules. A card plays on the discard if it
 * matches the suit to follow or the top rank; an 8 always plays and names the suit to follow. As in the
 * reference (spec.description): no starting discard, so the first play is free, and a draw ends the
 * turn. A side with no card left wins; when the stock is out and both sides pass, fewer cards wins and
 * equal counts have no winner.
 *
 * The autonomous player is the reference's: the lowest id-B (as text) among playable cards that are not
 * 8s, else the lowest playable 8 calling the suit it holds most of (first acquired on a tie), else draw,
 * else pass. Being deterministic, it makes the same plays as the reference from the same hands.
 */
// Types only: a checkout runs this file from source, where the package entry (dist/) may not exist yet.
import type { HooksModule, MentalPokerCard, MentalPokerLegalAction, MentalPokerState, Narrator, Role } from 'aigenora/hooks';
import { byText, cardNarrator, cardText, coerceDecision, displayCommon } from '../card-game.js';

export const RANKS = ['2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K', 'A'] as const;
export const SUITS = ['C', 'D', 'H', 'S'] as const;
/** The rank index of the wild 8. */
export const EIGHT = RANKS.indexOf('8');

/** The 52 cards, rank-major: index 4·rank + suit, which is what the Host's table labels h-<i> number. */
export function makeDeck(): MentalPokerCard[] {
  return RANKS.flatMap((_, r) => SUITS.map((_s, s) => [r, s] as const));
}

/** What the next play must match; both null before the first play. */
export interface Discard {
  topRank: number | null;
  currentSuit: number | null;
}

export function canPlay([rank, suit]: MentalPokerCard, { topRank, currentSuit }: Discard, firstTurn: boolean): boolean {
  if (firstTurn || rank === EIGHT) return true;
  return (currentSuit !== null && suit === currentSuit) || (topRank !== null && rank === topRank);
}

/** The suit held most often among the non-8s, the first acquired on a tie; 0 for a hand of 8s only. */
export function pickCallSuit(hand: ReadonlyMap<string, MentalPokerCard>): number {
  const counts = new Map<number, number>();
  for (const [r, s] of hand.values()) if (r !== EIGHT) counts.set(s, (counts.get(s) ?? 0) + 1);
  let best = 0;
  let most = 0;
  for (const [s, n] of counts) if (n > most) [best, most] = [s, n];
  return best;
}

/** The autonomous choice among playable cards (see the module comment), or null when none plays. */
export function pickPlay(hand: ReadonlyMap<string, MentalPokerCard>, discard: Discard, firstTurn: boolean): { id_b: string; call_suit: number | null } | null {
  const plain: string[] = [];
  const eights: string[] = [];
  for (const [id, card] of hand) if (canPlay(card, discard, firstTurn)) (card[0] === EIGHT ? eights : plain).push(id);
  if (plain.length) return { id_b: plain.sort(byText)[0]!, call_suit: null };
  if (eights.length) return { id_b: eights.sort(byText)[0]!, call_suit: pickCallSuit(hand) };
  return null;
}

/** The stalled tie-break: fewer cards wins, equal counts no winner. */
export function winnerByHandCount(hostCards: number, guestCards: number): Role | null {
  return hostCards < guestCards ? 'host' : guestCards < hostCards ? 'guest' : null;
}

const handSizeOf = (options: Readonly<Record<string, unknown>>): number => {
  const v = options['hand_size'];
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 5;
};

/** No card played yet, by either side: the first play is free. */
const isFirstTurn = (state: Partial<MentalPokerState>): boolean => !state._mp_deck_view || state._mp_deck_view.played.size === 0;
const stockEmpty = (state: Partial<MentalPokerState>): boolean => !state._mp_deck_view || state._mp_deck_view.stock.size === 0;

/**
 * Each card played, with the suit an 8 calls and the cards each side has left; each draw; and the end:
 * a hand played out, or fewer cards winning once both passed with the stock out.
 */
const narrator = (): Narrator =>
  cardNarrator({
    intro: 'follow the suit or the rank on top; an 8 plays on anything and calls the suit',
    play(msg, from, tally) {
      const call = msg['call_suit'];
      const line = `${from} plays ${cardText(RANKS, SUITS, msg['rank'], msg['suit'])}${typeof call === 'number' ? `, calling ${SUITS[call] ?? call}` : ''} — ${tally.toString()}`;
      return tally.hands[from] === 0 ? [line, `${from} has played every card: ${from} wins`] : line;
    },
    draw: (from, tally) => `${from} draws — ${tally.toString()}`,
    pass(_from, tally) {
      if (tally.passes < 2) return undefined;
      const w = winnerByHandCount(tally.hands.host, tally.hands.guest);
      return `both passed: ${w ? `${w} wins, holding fewer cards` : 'equal hands, no winner'}`;
    },
  });

const create: HooksModule<'mental_poker'>['create'] = (ctx) => {
  let handSize = handSizeOf(ctx.options);
  let discard: Discard = { topRank: null, currentSuit: null };
  /** A committed play (own or peer's) becomes the discard top; an 8 sets the suit it calls. */
  const record = (rank: number, suit: number, callSuit: number | null | undefined) => {
    discard = { topRank: rank, currentSuit: rank === EIGHT ? (callSuit ?? null) : suit };
  };
  const cardOf = (state: MentalPokerState, id: string): MentalPokerCard => {
    const card = state._mp_hand_cards.get(id);
    if (!card) throw new Error(`id_b ${id} is not a card in the local hand`);
    return card;
  };
  const legal = (state: MentalPokerState): MentalPokerLegalAction[] => {
    const first = isFirstTurn(state);
    const plays: MentalPokerLegalAction[] = [...state._mp_hand_cards]
      .sort(([a], [b]) => byText(a, b))
      .filter(([, card]) => canPlay(card, discard, first))
      .map(([id, [rank, suit]]) => ({ kind: 'play', id_b: id, rank, suit, call_suit_required: rank === EIGHT }));
    return plays.length ? plays : [{ kind: stockEmpty(state) ? 'pass' : 'draw' }];
  };

  return {
    proto_init(options) {
      handSize = handSizeOf(options);
      discard = { topRank: null, currentSuit: null };
    },
    proto_host_metadata: () => ['Crazy Eights', 'game,crazy-eights,cards', 'supply', { hand_size: handSize }],
    supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
    proto_display(msg) {
      if (msg.action !== 'mp_play') return displayCommon(msg);
      const r = msg['rank'] as number;
      const s = msg['suit'] as number;
      const call = msg['call_suit'];
      const named = (i: number, names: readonly string[]) => names[i] ?? String(i);
      return `play ${named(r, RANKS)}${named(s, SUITS)}${typeof call === 'number' ? ` (call ${named(call, SUITS)})` : ''}`;
    },

    proto_mp_deck_universe: makeDeck,
    proto_mp_initial_deal: () => ({ host: handSize, guest: handSize }),

    proto_mp_choose_action(state) {
      const pick = pickPlay(state._mp_hand_cards, discard, isFirstTurn(state));
      if (pick) {
        const [rank, suit] = cardOf(state, pick.id_b);
        record(rank, suit, pick.call_suit);
        return pick.call_suit === null ? { kind: 'play', id_b: pick.id_b } : { kind: 'play', id_b: pick.id_b, call_suit: pick.call_suit };
      }
      return { kind: stockEmpty(state) ? 'pass' : 'draw' };
    },

    proto_mp_legal_actions: legal,

    proto_mp_coerce_action(state, decision) {
      const action = coerceDecision(state, decision);
      const options = legal(state);
      if (action.kind !== 'play') {
        if (!options.some((o) => o.kind === action.kind)) throw new Error(`${action.kind} is not legal in the current state`);
        return action;
      }
      const play = options.find((o) => o.kind === 'play' && o.id_b === action.id_b);
      if (!play || play.kind !== 'play') throw new Error('selected card is not playable');
      if (play.call_suit_required) {
        if (action.call_suit === undefined || action.call_suit < 0 || action.call_suit >= SUITS.length)
          throw new Error('playing an 8 requires call_suit between 0 and 3');
      } else if (action.call_suit !== undefined) throw new Error('call_suit is only allowed when playing an 8');
      return action;
    },

    proto_mp_apply_local_action(state, action) {
      if (action.kind !== 'play') return;
      const [rank, suit] = cardOf(state, action.id_b);
      record(rank, suit, action.call_suit);
    },

    proto_mp_validate_play(state, _who, play) {
      const card: MentalPokerCard = [play.rank, play.suit];
      const call = play.call_suit ?? null;
      if (!canPlay(card, discard, isFirstTurn(state))) return [false, 'illegal_play'];
      if (play.rank === EIGHT && call === null) return [false, 'missing_call_suit'];
      if (play.rank !== EIGHT && call !== null) return [false, 'unexpected_call_suit'];
      record(play.rank, play.suit, call);
      return [true, ''];
    },

    proto_mp_check_winner(state) {
      const deck = state._mp_deck_view;
      if (!deck) return null;
      const host = deck.hand_of('host').size;
      const guest = deck.hand_of('guest').size;
      if (host === 0) return 'host';
      if (guest === 0) return 'guest';
      return state._mp_stalled ? winnerByHandCount(host, guest) : null;
    },
  };
};

export default { mode: 'mental_poker', create, narrator } satisfies HooksModule<'mental_poker'>;
