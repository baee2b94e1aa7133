/**
 * Contract bridge rules without state: the 52 faces (the reference's standard catalog, so a seed deals
 * the same card ids), call ranking, follow suit, the trick winner and duplicate scoring.
 */
export const SUITS = ['clubs', 'diamonds', 'hearts', 'spades'] as const;
export const DENOMINATIONS = ['clubs', 'diamonds', 'hearts', 'spades', 'nt'] as const;
export type Denomination = (typeof DENOMINATIONS)[number];
export const COMPASS = ['north', 'east', 'south', 'west'] as const;
export type Partnership = 'ns' | 'ew';
/** The duplicate board cycle: vulnerability of boards 1..16, repeating. */
export const VULNERABILITY = ['none', 'ns', 'ew', 'both', 'ns', 'ew', 'both', 'none', 'ew', 'both', 'none', 'ns', 'both', 'none', 'ns', 'ew'] as const;

export interface CardFace {
  code: string;
  suit: string;
  rank: number;
  label: string;
  color: 'red' | 'black';
}

const RANK_LABELS: Record<number, string> = { 11: 'J', 12: 'Q', 13: 'K', 14: 'A' };
const SUIT_SYMBOLS: Record<string, string> = { clubs: 'C', diamonds: 'D', hearts: 'H', spades: 'S' };

/** The 52 faces in the reference's catalog order (suit by suit, 2 to ace). */
export function standardFaces(): CardFace[] {
  return SUITS.flatMap((suit) =>
    Array.from({ length: 13 }, (_, i) => {
      const rank = i + 2;
      const label = `${RANK_LABELS[rank] ?? String(rank)}${SUIT_SYMBOLS[suit]}`;
      return { code: label, suit, rank, label, color: suit === 'diamonds' || suit === 'hearts' ? ('red' as const) : ('black' as const) };
    }),
  );
}

export const partnershipOf = (seat: number): Partnership => (seat % 2 === 0 ? 'ns' : 'ew');
export const otherSide = (p: Partnership): Partnership => (p === 'ns' ? 'ew' : 'ns');

/** 1C is 0, 1D 1, ... 7NT 34: a bid must rank above the last one. */
export const bidValue = (level: number, denomination: Denomination): number => (level - 1) * DENOMINATIONS.length + DENOMINATIONS.indexOf(denomination);

export function isDenomination(x: unknown): x is Denomination {
  return typeof x === 'string' && (DENOMINATIONS as readonly string[]).includes(x);
}

/** Refuses an off-suit card while the hand still holds the led suit. */
export function checkFollowSuit(hand: readonly { suit: string }[], played: { suit: string }, ledSuit: string): void {
  if (played.suit === ledSuit) return;
  if (hand.some((c) => c.suit === ledSuit)) throw new Error('the player must follow the led suit');
}

/** The index of the card that wins a trick: the highest trump, else the highest card of the led suit. */
export function winningTrickIndex(cards: readonly { suit: string; rank: number }[], ledSuit: string, trump: string | null): number {
  const strength = (c: { suit: string; rank: number }) => (trump !== null && c.suit === trump ? 2 : c.suit === ledSuit ? 1 : 0) * 100 + c.rank;
  let best = 0;
  cards.forEach((c, i) => {
    if (strength(c) > strength(cards[best]!)) best = i;
  });
  return best;
}

export interface ScoreInput {
  level: number;
  denomination: Denomination;
  /** 0 undoubled, 1 doubled, 2 redoubled. */
  doubled: number;
  /** Tricks the declaring side took. */
  tricks: number;
  vulnerable: boolean;
}

/** The declaring side's duplicate score: positive when the contract makes, minus the defenders' award when it fails. */
export function duplicateScore({ level, denomination, doubled, tricks, vulnerable }: ScoreInput): number {
  const delta = tricks - (level + 6);
  const redoubled = doubled === 2 ? 2 : 1;
  if (delta < 0) {
    const under = -delta;
    if (doubled === 0) return -under * (vulnerable ? 100 : 50);
    let penalty: number;
    if (vulnerable) penalty = 200 + Math.max(0, under - 1) * 300;
    else {
      penalty = 100;
      if (under >= 2) penalty += Math.min(under - 1, 2) * 200;
      if (under >= 4) penalty += (under - 3) * 300;
    }
    return -penalty * redoubled;
  }
  const minor = denomination === 'clubs' || denomination === 'diamonds';
  const base = minor ? level * 20 : denomination === 'nt' ? 40 + Math.max(0, level - 1) * 30 : level * 30;
  const contractPoints = base * [1, 2, 4][doubled]!;
  let total = contractPoints;
  if (contractPoints >= 100) total += vulnerable ? 500 : 300;
  else total += 50;
  if (level === 6) total += vulnerable ? 750 : 500;
  else if (level === 7) total += vulnerable ? 1500 : 1000;
  if (doubled === 1) total += 50;
  else if (doubled === 2) total += 100;
  if (delta) total += doubled === 0 ? delta * (minor ? 20 : 30) : delta * (vulnerable ? 200 : 100) * redoubled;
  return total;
}
