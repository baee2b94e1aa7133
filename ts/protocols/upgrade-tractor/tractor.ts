/**
 * Upgrade's card rules as the reference's tractor helpers define them: effective suits (jokers, level
 * cards and the trump suit are all "trump"), card strength, classifying a play as single, pair, tractor
 * (consecutive identical pairs) or throw, the follower's obligations, and the winner of a trick of
 * compatible plays. Pure functions on card faces; a broken rule throws TractorRuleError with the
 * reference's text, which the hooks pass on as the refusal.
 */

export const SUITS = ['clubs', 'diamonds', 'hearts', 'spades'] as const;

export interface Face {
  code: string;
  suit: string;
  rank: number;
  label: string;
  color: 'red' | 'black';
}

export interface Signature {
  suit: string;
  rank: number;
  count: number;
}

/** A classified play; `mixed` only ever describes a follower's off-suit discard. */
export interface Shape {
  kind: 'single' | 'pair' | 'tractor' | 'throw' | 'mixed';
  count: number;
  suit: string;
  pair_count: number;
  signatures?: Signature[];
  tractor_length?: number;
}

export interface TrumpContext {
  level_rank: number;
  trump_suit: string | null;
}

export class TractorRuleError extends Error {
  override name = 'TractorRuleError';
}

type FaceKey = readonly [string, number];

const RANK_LABELS: Record<number, string> = { 11: 'J', 12: 'Q', 13: 'K', 14: 'A' };
const SUIT_SYMBOLS: Record<string, string> = { clubs: 'C', diamonds: 'D', hearts: 'H', spades: 'S' };

/** One 54-card deck in the reference's order (suits, ranks 2..A, then the small and big joker); the order feeds card ids. */
export function standardFacesWithJokers(): Face[] {
  const faces: Face[] = SUITS.flatMap((suit) =>
    Array.from({ length: 13 }, (_, i) => {
      const rank = i + 2;
      const label = `${RANK_LABELS[rank] ?? String(rank)}${SUIT_SYMBOLS[suit]}`;
      return { code: label, suit, rank, label, color: suit === 'diamonds' || suit === 'hearts' ? ('red' as const) : ('black' as const) };
    }),
  );
  faces.push(
    { code: 'SJ', suit: 'joker', rank: 16, label: 'Small Joker', color: 'black' },
    { code: 'BJ', suit: 'joker', rank: 17, label: 'Big Joker', color: 'red' },
  );
  return faces;
}

function faceKey(card: { suit: unknown; rank: unknown }): FaceKey {
  const { suit, rank } = card;
  const valid =
    typeof suit === 'string' &&
    ((SUITS as readonly string[]).includes(suit) || suit === 'joker') &&
    typeof rank === 'number' &&
    Number.isInteger(rank) &&
    ((rank >= 2 && rank <= 14) || rank === 16 || rank === 17) &&
    (suit === 'joker') === (rank === 16 || rank === 17);
  if (!valid) throw new TractorRuleError('card face is invalid');
  return [suit, rank];
}

function validateContext({ level_rank, trump_suit }: TrumpContext): void {
  if (!Number.isInteger(level_rank) || level_rank < 2 || level_rank > 14) throw new TractorRuleError('level_rank must be between 2 and 14');
  if (trump_suit !== null && !(SUITS as readonly string[]).includes(trump_suit)) throw new TractorRuleError('trump_suit must be a standard suit or null');
}

export function effectiveSuit(card: { suit: string; rank: number }, ctx: TrumpContext): string {
  const [suit, rank] = faceKey(card);
  validateContext(ctx);
  return suit === 'joker' || rank === ctx.level_rank || suit === ctx.trump_suit ? 'trump' : suit;
}

/** [class, strength]: class 1 is trump; compared as a pair, first by class then strength. */
export function cardStrength(card: { suit: string; rank: number }, ctx: TrumpContext): [number, number] {
  const [suit, rank] = faceKey(card);
  if (effectiveSuit(card, ctx) !== 'trump') return [0, rank];
  if (rank === 17) return [1, 1000];
  if (rank === 16) return [1, 990];
  if (rank === ctx.level_rank && ctx.trump_suit !== null && suit === ctx.trump_suit) return [1, 980];
  if (rank === ctx.level_rank) return [1, 970];
  return [1, rank];
}

/** Python's tuple order on the (suit, rank) faces. */
const byFace = (a: FaceKey, b: FaceKey) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]);

function faceCounts(cards: readonly { suit: string; rank: number }[]): [FaceKey, number][] {
  const counts = new Map<string, [FaceKey, number]>();
  for (const c of cards) {
    const f = faceKey(c);
    const k = `${f[0]}:${f[1]}`;
    const entry = counts.get(k);
    if (entry) entry[1] += 1;
    else counts.set(k, [f, 1]);
  }
  return [...counts.values()];
}

export const pairCount = (cards: readonly { suit: string; rank: number }[]) => faceCounts(cards).reduce((n, [, c]) => n + Math.floor(c / 2), 0);

/** A pair's place in its effective suit's sequence: consecutive places make a tractor. */
export function pairPosition(face: FaceKey, ctx: TrumpContext, category: string): number {
  const [suit, rank] = face;
  const { level_rank: level, trump_suit: trump } = ctx;
  const plain = Array.from({ length: 13 }, (_, i) => i + 2).filter((v) => v !== level);
  if (category !== 'trump') {
    if (suit !== category || rank === level) throw new TractorRuleError('card face is outside the effective suit');
    return plain.indexOf(rank);
  }
  const regular = trump !== null ? plain : [];
  if (trump !== null && suit === trump && regular.includes(rank)) return regular.indexOf(rank);
  const offLevel = regular.length;
  if (rank === level && suit !== trump) return offLevel;
  if (rank === level && suit === trump) return offLevel + 1;
  const jokerOffset = trump !== null ? 2 : 1;
  if (suit === 'joker' && rank === 16) return offLevel + jokerOffset;
  if (suit === 'joker' && rank === 17) return offLevel + jokerOffset + 1;
  throw new TractorRuleError('card face is outside the trump sequence');
}

export function classifyPlay(cards: readonly { suit: string; rank: number }[], ctx: TrumpContext): Shape {
  if (!cards.length) throw new TractorRuleError('a play must contain at least one card');
  validateContext(ctx);
  const categories = new Set(cards.map((c) => effectiveSuit(c, ctx)));
  if (categories.size !== 1) throw new TractorRuleError('all cards in a play must share an effective suit');
  const category = [...categories][0]!;
  const counts = faceCounts(cards).sort(([a], [b]) => byFace(a, b));
  const shape: Shape = {
    kind: 'throw',
    count: cards.length,
    suit: category,
    pair_count: counts.reduce((n, [, c]) => n + Math.floor(c / 2), 0),
    signatures: counts.map(([[suit, rank], count]) => ({ suit, rank, count })),
  };
  if (cards.length === 1) shape.kind = 'single';
  else if (cards.length === 2 && counts.length === 1) shape.kind = 'pair';
  else if (cards.length >= 4 && cards.length % 2 === 0 && counts.every(([, c]) => c === 2)) {
    const positions = counts.map(([f]) => pairPosition(f, ctx, category)).sort((a, b) => a - b);
    if (positions.every((p, i) => i === 0 || p === positions[i - 1]! + 1)) {
      shape.kind = 'tractor';
      shape.tractor_length = positions.length;
    }
  }
  return shape;
}

/** Whether `cards` (all of `category`) hold `length` consecutive pairs. */
export function hasTractor(cards: readonly { suit: string; rank: number }[], length: number, category: string, ctx: TrumpContext): boolean {
  const positions = faceCounts(cards)
    .filter(([, c]) => c >= 2)
    .map(([f]) => pairPosition(f, ctx, category))
    .sort((a, b) => a - b);
  let run = 1;
  for (let i = 1; i < positions.length; i++) {
    run = positions[i] === positions[i - 1]! + 1 ? run + 1 : 1;
    if (run >= length) return true;
  }
  return length <= 1 && positions.length > 0;
}

/** The follower's obligations: the same count, the led effective suit first, then its pairs and tractor. */
export function validateFollow(
  hand: readonly { suit: string; rank: number }[],
  selected: readonly { suit: string; rank: number }[],
  lead: Shape,
  ctx: TrumpContext,
): void {
  const { count, suit: category, kind } = lead;
  if (
    !Number.isInteger(count) ||
    count < 1 ||
    !([...SUITS, 'trump'] as string[]).includes(category) ||
    !['single', 'pair', 'tractor', 'throw'].includes(kind)
  ) {
    throw new TractorRuleError('lead classification is invalid');
  }
  if (selected.length !== count) throw new TractorRuleError('a follower must play the same number of cards');
  const categoryHand = hand.filter((c) => effectiveSuit(c, ctx) === category);
  const categorySelected = selected.filter((c) => effectiveSuit(c, ctx) === category);
  if (categorySelected.length !== Math.min(count, categoryHand.length)) throw new TractorRuleError('the follower must exhaust the led effective suit');
  if (categoryHand.length < count) return;
  const shape = classifyPlay(selected, ctx);
  const available = pairCount(categoryHand);
  if (shape.pair_count < Math.min(lead.pair_count, available)) throw new TractorRuleError('the follower must preserve available pairs');
  if (kind === 'pair' && available > 0 && shape.kind !== 'pair') throw new TractorRuleError('an available pair must follow a pair');
  if (kind === 'tractor') {
    const length = lead.tractor_length ?? 0;
    if (length < 2) throw new TractorRuleError('tractor lead length is invalid');
    if (hasTractor(categoryHand, length, category, ctx) && !(shape.kind === 'tractor' && shape.tractor_length === length)) {
      throw new TractorRuleError('an available tractor must follow a tractor');
    }
  }
}

function playStrength(cards: readonly { suit: string; rank: number }[], shape: Shape, ctx: TrumpContext): [number, number] {
  if (shape.kind === 'single') return cardStrength(cards[0]!, ctx);
  const best = Math.max(...faceCounts(cards).map(([f]) => pairPosition(f, ctx, shape.suit)));
  return [shape.suit === 'trump' ? 1 : 0, best];
}

const greater = (a: [number, number], b: [number, number]) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

/** The index of the winning play among compatible single, pair or tractor plays (a throw lead is the hooks' to resolve). */
export function winningPlayIndex(plays: readonly (readonly { suit: string; rank: number }[])[], ctx: TrumpContext): number {
  if (!plays.length) throw new TractorRuleError('a trick must contain at least one play');
  const lead = classifyPlay(plays[0]!, ctx);
  if (lead.kind === 'throw') throw new TractorRuleError('throw resolution must be handled by the protocol profile');
  let winner = 0;
  let winnerShape = lead;
  let winnerStrength = playStrength(plays[0]!, lead, ctx);
  for (let i = 1; i < plays.length; i++) {
    const shape = classifyPlay(plays[i]!, ctx);
    if (shape.count !== lead.count || shape.kind !== lead.kind) continue;
    if (shape.suit !== lead.suit && shape.suit !== 'trump') continue;
    const strength = playStrength(plays[i]!, shape, ctx);
    if ((shape.suit === 'trump' && winnerShape.suit !== 'trump') || (shape.suit === winnerShape.suit && greater(strength, winnerStrength))) {
      winner = i;
      winnerShape = shape;
      winnerStrength = strength;
    }
  }
  return winner;
}
