/**
 * A shared draw pile with private hands, as the reference's proto/shared_deck.py lays it out (catalog,
 * draw_pile, hands, discard_pile, zones, total_cards), so that a seeded deal gives the same card ids in
 * the same places as a reference leader and either can read the other's state. Only the operations a
 * Landlord table needs are here. Every mutation re-checks conservation: each catalog card is in exactly
 * one place.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { toHex, utf8 } from '../../crypto/encoding.js';
import { rtCanonical } from '../../realtime/json.js';

export interface CardFace {
  rank: string;
  value: number;
  suit: string;
}
export interface Card extends CardFace {
  card_id: string;
  copy: number;
}
export interface SharedDeck {
  catalog: Record<string, Card>;
  draw_pile: string[];
  hands: Record<string, string[]>;
  discard_pile: string[];
  zones: Record<string, Record<string, string[]>>;
  total_cards: number;
}
interface DeckMember {
  public_key: string;
  seat: number;
  status?: string;
}

export class SharedDeckError extends Error {}

const copyCard = (c: Card): Card => ({ ...c });

/** Fisher-Yates driven by SHA-256 of the seed and a counter (never the runtime's RNG), as the reference does. */
export function deterministicShuffle(values: readonly string[], seed: string): string[] {
  const out = [...values];
  let counter = 0;
  for (let index = out.length - 1; index > 0; index--) {
    const digest = sha256(utf8(`aigenora-shared-deck-v1:${seed}:${counter}`));
    const target = Number(BigInt(`0x${toHex(digest)}`) % BigInt(index + 1));
    [out[index], out[target]] = [out[target]!, out[index]!];
    counter += 1;
  }
  return out;
}

export function createSharedDeck(faces: readonly CardFace[], members: readonly DeckMember[], handSize: number, seed: string, copies: number): SharedDeck {
  if (typeof seed !== 'string' || !seed || utf8(seed).length > 256) throw new SharedDeckError('seed must be 1-256 UTF-8 bytes');
  const catalog: Record<string, Card> = {};
  const ids: string[] = [];
  for (let copy = 0; copy < copies; copy++) {
    faces.forEach((face, faceIndex) => {
      const identity = toHex(sha256(utf8(rtCanonical({ seed, copy, face_index: faceIndex, face })))).slice(0, 24);
      if (catalog[identity]) throw new SharedDeckError('card identity collision');
      catalog[identity] = { ...face, card_id: identity, copy };
      ids.push(identity);
    });
  }
  const drawPile = deterministicShuffle(ids, seed);
  const hands: Record<string, string[]> = {};
  for (const m of [...members].sort((a, b) => a.seat - b.seat)) if (m.status === 'active') hands[m.public_key] = [];
  const owners = Object.keys(hands);
  if (handSize * owners.length > drawPile.length) throw new SharedDeckError('initial deal exceeds the shared deck');
  for (let i = 0; i < handSize; i++) for (const owner of owners) hands[owner]!.push(drawPile.pop()!);
  const deck: SharedDeck = { catalog, draw_pile: drawPile, hands, discard_pile: [], zones: {}, total_cards: ids.length };
  validateConservation(deck);
  return deck;
}

/** Moves `count` cards from the top (end) of the draw pile into a hand; returns their faces. */
export function drawCards(deck: SharedDeck, publicKey: string, count: number): Card[] {
  if (!Number.isInteger(count) || count < 1 || count > 32) throw new SharedDeckError('draw count must be between 1 and 32');
  const hand = deck.hands[publicKey];
  if (!hand) throw new SharedDeckError('unknown hand owner');
  if (deck.draw_pile.length < count) throw new SharedDeckError('shared draw pile does not have enough cards');
  const drawn: Card[] = [];
  for (let i = 0; i < count; i++) {
    const id = deck.draw_pile.pop()!;
    hand.push(id);
    drawn.push(copyCard(deck.catalog[id]!));
  }
  validateConservation(deck);
  return drawn;
}

/** Moves cards from a hand to the discard pile, in the order given. */
export function playToDiscard(deck: SharedDeck, publicKey: string, cardIds: readonly string[]): void {
  const hand = deck.hands[publicKey];
  if (!hand) throw new SharedDeckError('unknown hand owner');
  if (!cardIds.length || cardIds.length > 64 || new Set(cardIds).size !== cardIds.length) throw new SharedDeckError('card_ids must be a non-empty unique array');
  if (cardIds.some((id) => !hand.includes(id))) throw new SharedDeckError("card is not in the player's hand");
  for (const id of cardIds) hand.splice(hand.indexOf(id), 1);
  deck.discard_pile.push(...cardIds);
  validateConservation(deck);
}

/** What one hand's owner may see: its own cards, every hand's size, the public discard. */
export function privateDeckView(deck: SharedDeck, viewer: string) {
  validateConservation(deck);
  const hand = deck.hands[viewer];
  if (!hand) throw new SharedDeckError('viewer does not own a hand');
  const handCounts: Record<string, number> = {};
  for (const [key, ids] of Object.entries(deck.hands)) handCounts[key] = ids.length;
  return {
    draw_count: deck.draw_pile.length,
    discard: deck.discard_pile.map((id) => copyCard(deck.catalog[id]!)),
    my_hand: hand.map((id) => copyCard(deck.catalog[id]!)),
    hand_counts: handCounts,
  };
}

export function validateConservation(deck: SharedDeck): void {
  const expected = Object.keys(deck.catalog);
  if (!expected.length) throw new SharedDeckError('catalog must be a non-empty object');
  const seen = [...deck.draw_pile, ...deck.discard_pile, ...Object.values(deck.hands).flat()];
  for (const owners of Object.values(deck.zones)) for (const ids of Object.values(owners)) seen.push(...ids);
  const set = new Set(seen);
  if (set.size !== seen.length) throw new SharedDeckError('a card appears in more than one deck zone');
  if (set.size !== expected.length || expected.some((id) => !set.has(id))) throw new SharedDeckError('deck conservation failed');
  if (deck.total_cards !== expected.length) throw new SharedDeckError('total_cards does not match catalog size');
}
