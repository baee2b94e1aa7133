/**
 * Hold'em's 52 faces on the shared deck (../shared-deck.ts), and the three moves a hand makes: hole
 * cards to hands, burns and board cards to zones.
 */
import { createSharedDeck, drawCards, faceOf as sharedFaceOf, moveDrawToZone, type Card, type SharedDeck } from '../shared-deck.js';
import { SUITS } from './poker.js';

interface Face {
  code: string;
  suit: string;
  rank: number;
  label: string;
  color: 'red' | 'black';
}
export type CardFace = Card<Face>;
export type Deck = SharedDeck<Face>;

const RANK_LABELS: Record<number, string> = { 11: 'J', 12: 'Q', 13: 'K', 14: 'A' };
const SUIT_SYMBOLS: Record<string, string> = { clubs: 'C', diamonds: 'D', hearts: 'H', spades: 'S' };

function standardFaces(): Face[] {
  return SUITS.flatMap((suit) =>
    Array.from({ length: 13 }, (_, i) => {
      const rank = i + 2;
      const label = `${RANK_LABELS[rank] ?? String(rank)}${SUIT_SYMBOLS[suit]}`;
      return { code: label, suit, rank, label, color: suit === 'diamonds' || suit === 'hearts' ? ('red' as const) : ('black' as const) };
    }),
  );
}

/** A fresh 52-card deck shuffled from `seed`, with an empty hand for each member key (in the order given). */
export function createDeck(seed: string, handOwners: readonly string[]): Deck {
  return createSharedDeck(
    standardFaces(),
    handOwners.map((public_key, seat) => ({ public_key, seat, status: 'active' })),
    0,
    seed,
    1,
  );
}

/** Deals the top card of the draw pile (its end) into a member's hand. */
export function drawTo(deck: Deck, owner: string): void {
  drawCards(deck, owner, 1);
}

/** Moves `count` cards from the draw pile into zone/owner and returns copies of their faces. */
export const drawToZone = (deck: Deck, zone: string, owner: string, count: number): CardFace[] => moveDrawToZone(deck, zone, owner, count);

export const faceOf = (deck: Deck, id: string): CardFace => sharedFaceOf(deck, id);
