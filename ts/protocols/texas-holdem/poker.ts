/**
 * Poker arithmetic the Hold'em leader needs: seven-card evaluation, the refund of an unmatched top
 * contribution, and main/side pots. Ranks, categories, pot order and eligibility order are the
 * reference's (a rank is a comparable integer list; pots list members in sorted public-key order), so
 * both implementations write the same showdown into the authority state.
 */

export const SUITS = ['clubs', 'diamonds', 'hearts', 'spades'] as const;
export type Suit = (typeof SUITS)[number];

export interface Card {
  rank: number;
  suit: string;
}

export const CATEGORY_NAMES = [
  'high_card',
  'one_pair',
  'two_pair',
  'three_of_a_kind',
  'straight',
  'flush',
  'full_house',
  'four_of_a_kind',
  'straight_flush',
] as const;
export type Category = (typeof CATEGORY_NAMES)[number];

/** Lexicographic order of two ranks, as Python compares tuples. */
export function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}

const desc = (xs: number[]): number[] => [...xs].sort((x, y) => y - x);

function validated(cards: readonly Card[]): void {
  const seen = new Set<string>();
  for (const c of cards) {
    if (typeof c !== 'object' || c === null) throw new Error('every card must be an object');
    if (!Number.isInteger(c.rank) || c.rank < 2 || c.rank > 14 || !(SUITS as readonly string[]).includes(c.suit))
      throw new Error('poker card rank or suit is invalid');
    const face = `${c.suit}:${c.rank}`;
    if (seen.has(face)) throw new Error('a standard poker hand cannot repeat a card face');
    seen.add(face);
  }
}

/** The high card of a five-card straight (a wheel counts as 5), or 0. */
function straightHigh(ranks: number[]): number {
  const unique = desc([...new Set(ranks)]);
  if (unique.length !== 5) return 0;
  if (unique.join() === '14,5,4,3,2') return 5;
  return (unique[0] as number) - (unique[4] as number) === 4 ? (unique[0] as number) : 0;
}

/** The comparable rank of exactly five cards: [category, tie-breakers...]. */
export function evaluateFive(cards: readonly Card[]): number[] {
  if (cards.length !== 5) throw new Error('a five-card hand must contain exactly five cards');
  validated(cards);
  const ranks = cards.map((c) => c.rank);
  const counts = new Map<number, number>();
  for (const r of ranks) counts.set(r, (counts.get(r) ?? 0) + 1);
  const ofCount = (n: number) => desc([...counts].filter(([, c]) => c === n).map(([r]) => r));
  const flush = new Set(cards.map((c) => c.suit)).size === 1;
  const high = straightHigh(ranks);
  const quads = ofCount(4);
  const trips = ofCount(3);
  const pairs = ofCount(2);
  if (flush && high) return [8, high];
  if (quads.length) return [7, quads[0] as number, Math.max(...ranks.filter((r) => r !== quads[0]))];
  if (trips.length && pairs.length) return [6, trips[0] as number, pairs[0] as number];
  if (flush) return [5, ...desc(ranks)];
  if (high) return [4, high];
  if (trips.length) return [3, trips[0] as number, ...desc(ranks.filter((r) => r !== trips[0]))];
  if (pairs.length === 2) return [2, pairs[0] as number, pairs[1] as number, Math.max(...ranks.filter((r) => !pairs.includes(r)))];
  if (pairs.length === 1) return [1, pairs[0] as number, ...desc(ranks.filter((r) => r !== pairs[0]))];
  return [0, ...desc(ranks)];
}

/** The best five of five to seven cards: its category name and rank. */
export function bestPokerHand(cards: readonly Card[]): { category: Category; rank: number[] } {
  if (cards.length < 5 || cards.length > 7) throw new Error('poker evaluation requires five to seven cards');
  validated(cards);
  let best: number[] | null = null;
  const n = cards.length;
  for (let a = 0; a < n; a++)
    for (let b = a + 1; b < n; b++)
      for (let c = b + 1; c < n; c++)
        for (let d = c + 1; d < n; d++)
          for (let e = d + 1; e < n; e++) {
            const rank = evaluateFive([cards[a], cards[b], cards[c], cards[d], cards[e]] as Card[]);
            if (best === null || compareRanks(rank, best) > 0) best = rank;
          }
  const rank = best as number[];
  return { category: CATEGORY_NAMES[rank[0] as number] as Category, rank };
}

/** Python's sorted() order of public keys (code points; hex keys are ASCII). */
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function checkedLedger(contributions: Record<string, number>): void {
  const keys = Object.keys(contributions);
  if (!keys.length) throw new Error('contributions must be a non-empty object');
  for (const k of keys) {
    if (!k) throw new Error('contribution owner is invalid');
    const v = contributions[k];
    if (!Number.isInteger(v) || (v as number) < 0) throw new Error('contributions must be non-negative integers');
  }
}

/** A copy of the ledger with a single top contributor's unmatched excess taken back as a refund. */
export function normalizeUncalled(contributions: Record<string, number>): { contributions: Record<string, number>; refunds: Record<string, number> } {
  checkedLedger(contributions);
  const normalized = { ...contributions };
  const refunds: Record<string, number> = {};
  for (const k of Object.keys(normalized)) refunds[k] = 0;
  const ranked = Object.entries(normalized).sort((x, y) => y[1] - x[1] || byKey(x[0], y[0]));
  if (ranked.length >= 2 && ranked[0]![1] > ranked[1]![1]) {
    const [key, highest] = ranked[0]!;
    const refund = highest - ranked[1]![1];
    normalized[key] = highest - refund;
    refunds[key] = refund;
  }
  return { contributions: normalized, refunds };
}

export interface Pot {
  amount: number;
  cap: number;
  contributors: string[];
  eligible: string[];
}

/** The main pot and side pots, lowest cap first; folded members pay in but cannot win. */
export function buildSidePots(contributions: Record<string, number>, folded: Iterable<string>): Pot[] {
  checkedLedger(contributions);
  const foldedSet = new Set(folded);
  for (const k of foldedSet) if (!(k in contributions)) throw new Error('folded player is missing from contributions');
  const levels = [...new Set(Object.values(contributions).filter((v) => v > 0))].sort((x, y) => x - y);
  const pots: Pot[] = [];
  let previous = 0;
  for (const level of levels) {
    const contributors = Object.keys(contributions)
      .filter((k) => (contributions[k] as number) >= level)
      .sort(byKey);
    const amount = (level - previous) * contributors.length;
    const eligible = contributors.filter((k) => !foldedSet.has(k));
    if (amount > 0) {
      if (!eligible.length) throw new Error('a side pot has no eligible winner');
      pots.push({ amount, cap: level, contributors, eligible });
    }
    previous = level;
  }
  return pots;
}
