/**
 * The leader's private deck for the card-table group protocols, laid out as the reference's shared
 * deck (catalog, draw_pile, hands, discard_pile, zones, total_cards), with the same card identities
 * (SHA-256 of the canonical {seed, copy, face_index, face}) and the same SHA-256-driven Fisher–Yates
 * shuffle, so that a seed deals the same card ids to the same places in both implementations and a
 * checkpointed state reads the same to either. Every mutation re-checks conservation: each catalog
 * card is in exactly one place. Only the leader's hooks mutate a deck; members see it through
 * `privateDeckView`.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { toHex, utf8 } from '../crypto/encoding.js';
import { isWellFormed } from '../crypto/unicode.js';
import { rtCanonical } from '../realtime/json.js';

export type CardFace = object;
/** A catalog entry: the face plus its identity and which physical copy it is. */
export type Card<F extends CardFace = CardFace> = F & { card_id: string; copy: number };

export interface SharedDeck<F extends CardFace = CardFace> {
  catalog: Record<string, Card<F>>;
  draw_pile: string[];
  hands: Record<string, string[]>;
  discard_pile: string[];
  zones: Record<string, Record<string, string[]>>;
  total_cards: number;
}

export interface DeckMember {
  public_key: string;
  seat: number;
  status?: string;
}

/** A deck operation the rules should never attempt; hooks turn it into a refusal or a bug report. */
export class SharedDeckError extends Error {
  override name = 'SharedDeckError';
}

const copyCard = <F extends CardFace>(c: Card<F>): Card<F> => structuredClone(c);

function cardOf<F extends CardFace>(deck: SharedDeck<F>, id: string): Card<F> {
  const card = deck.catalog[id];
  if (!card) throw new SharedDeckError('deck catalog is invalid');
  return copyCard(card);
}

/** Fisher–Yates driven by SHA-256 of the seed and a counter (never the runtime's RNG), as the reference does. */
export function deterministicShuffle(values: readonly string[], seed: string): string[] {
  const out = [...values];
  let counter = 0;
  for (let index = out.length - 1; index > 0; index--) {
    const digest = sha256(utf8(`aigenora-shared-deck-v1:${seed}:${counter}`));
    const target = Number(BigInt(`0x${toHex(digest)}`) % BigInt(index + 1));
    [out[index], out[target]] = [out[target] as string, out[index] as string];
    counter += 1;
  }
  return out;
}

/**
 * The seed of a deal: the `deal_seed` option joined with the deal's numbers (each hand, and each redeal
 * after a leader change, its own), or 24 random bytes as hex where the option is absent or empty.
 */
export function dealSeed(configured: unknown, numbers: readonly number[], random: () => number): string {
  if (typeof configured === 'string' && configured) return [configured, ...numbers].join(':');
  let out = '';
  for (let i = 0; i < 24; i++)
    out += Math.floor(random() * 256)
      .toString(16)
      .padStart(2, '0');
  return out;
}

/**
 * `copies` copies of `faces`, shuffled from `seed`, with a hand for every active member (in seat order)
 * dealt `handSize` cards round-robin from the top (the end) of the draw pile.
 */
export function createSharedDeck<F extends CardFace>(
  faces: readonly F[],
  members: readonly DeckMember[],
  handSize: number,
  seed: string,
  copies = 1,
): SharedDeck<F> {
  if (typeof seed !== 'string' || !seed || !isWellFormed(seed) || utf8(seed).length > 256) throw new SharedDeckError('seed must be 1-256 UTF-8 bytes');
  if (!Number.isInteger(handSize) || handSize < 0) throw new SharedDeckError('hand_size must be a non-negative integer');
  if (!Number.isInteger(copies) || copies < 1 || copies > 8) throw new SharedDeckError('copies must be between 1 and 8');
  if (!faces.length) throw new SharedDeckError('card_faces must not be empty');
  const catalog: Record<string, Card<F>> = {};
  const ids: string[] = [];
  for (let copy = 0; copy < copies; copy++) {
    faces.forEach((face, faceIndex) => {
      const identity = toHex(sha256(utf8(rtCanonical({ seed, copy, face_index: faceIndex, face })))).slice(0, 24);
      if (catalog[identity]) throw new SharedDeckError('card identity collision');
      catalog[identity] = { ...structuredClone(face), card_id: identity, copy };
      ids.push(identity);
    });
  }
  const drawPile = deterministicShuffle(ids, seed);
  const hands: Record<string, string[]> = {};
  for (const m of [...members].sort((a, b) => a.seat - b.seat)) if (m.status === 'active') hands[m.public_key] = [];
  const owners = Object.keys(hands);
  if (handSize * owners.length > drawPile.length) throw new SharedDeckError('initial deal exceeds the shared deck');
  for (let i = 0; i < handSize; i++) for (const owner of owners) hands[owner]!.push(drawPile.pop()!);
  const deck: SharedDeck<F> = { catalog, draw_pile: drawPile, hands, discard_pile: [], zones: {}, total_cards: ids.length };
  validateConservation(deck);
  return deck;
}

function handOf(deck: SharedDeck<CardFace>, publicKey: string): string[] {
  const hand = Object.hasOwn(deck.hands, publicKey) ? deck.hands[publicKey] : undefined;
  if (!hand) throw new SharedDeckError('unknown hand owner');
  return hand;
}

function checkCardIds(cardIds: readonly string[]): void {
  if (
    !Array.isArray(cardIds) ||
    !cardIds.length ||
    cardIds.length > 64 ||
    cardIds.some((id) => typeof id !== 'string' || !id) ||
    new Set(cardIds).size !== cardIds.length
  ) {
    throw new SharedDeckError('card_ids must be a non-empty unique array');
  }
}

function zoneCards(deck: SharedDeck<CardFace>, zone: string, owner: string, create: boolean): string[] {
  if (typeof zone !== 'string' || !zone || zone.length > 64) throw new SharedDeckError('zone is invalid');
  if (typeof owner !== 'string' || !owner || owner.length > 256) throw new SharedDeckError('zone owner is invalid');
  if (create) return ((deck.zones[zone] ??= {})[owner] ??= []);
  const cards = deck.zones[zone]?.[owner];
  if (!cards) throw new SharedDeckError('zone card does not exist');
  return cards;
}

/** Moves `count` cards from the top of the draw pile into a hand; returns copies of their faces. */
export function drawCards<F extends CardFace>(deck: SharedDeck<F>, publicKey: string, count = 1): Card<F>[] {
  if (!Number.isInteger(count) || count < 1 || count > 32) throw new SharedDeckError('draw count must be between 1 and 32');
  const hand = handOf(deck, publicKey);
  if (deck.draw_pile.length < count) throw new SharedDeckError('shared draw pile does not have enough cards');
  const drawn: Card<F>[] = [];
  for (let i = 0; i < count; i++) {
    const id = deck.draw_pile.pop()!;
    hand.push(id);
    drawn.push(cardOf(deck, id));
  }
  validateConservation(deck);
  return drawn;
}

/**
 * Removes cards from a hand and returns them, leaving the deck unconserved until the caller puts
 * them somewhere (`discardCards`, `putInZone`): the reference's two-step move.
 */
export function takeFromHand<F extends CardFace>(deck: SharedDeck<F>, publicKey: string, cardIds: readonly string[]): Card<F>[] {
  if (!cardIds.length || cardIds.length > 64 || new Set(cardIds).size !== cardIds.length)
    throw new SharedDeckError('card_ids must be a non-empty unique array');
  const hand = handOf(deck, publicKey);
  if (cardIds.some((id) => !hand.includes(id))) throw new SharedDeckError("card is not in the player's hand");
  return cardIds.map((id) => {
    hand.splice(hand.indexOf(id), 1);
    return cardOf(deck, id);
  });
}

export function discardCards(deck: SharedDeck<CardFace>, cardIds: readonly string[]): void {
  deck.discard_pile.push(...cardIds);
  validateConservation(deck);
}

export function putInZone(deck: SharedDeck<CardFace>, zone: string, owner: string, cardIds: readonly string[]): void {
  zoneCards(deck, zone, owner, true).push(...cardIds);
  validateConservation(deck);
}

/** Moves cards from a hand to the discard pile, in the order given, all or none. */
export function playToDiscard(deck: SharedDeck<CardFace>, publicKey: string, cardIds: readonly string[]): void {
  takeFromHand(deck, publicKey, cardIds);
  discardCards(deck, cardIds);
}

/** Moves unique cards from a hand into zone/owner, all or none; returns copies of their faces. */
export function moveHandToZone<F extends CardFace>(deck: SharedDeck<F>, publicKey: string, zone: string, owner: string, cardIds: readonly string[]): Card<F>[] {
  checkCardIds(cardIds);
  const hand = handOf(deck, publicKey);
  if (cardIds.some((id) => !hand.includes(id))) throw new SharedDeckError("card is not in the player's hand");
  const target = zoneCards(deck, zone, owner, true);
  for (const id of cardIds) {
    hand.splice(hand.indexOf(id), 1);
    target.push(id);
  }
  validateConservation(deck);
  return cardIds.map((id) => cardOf(deck, id));
}

/** Moves `count` cards from the top of the draw pile into zone/owner; returns copies of their faces. */
export function moveDrawToZone<F extends CardFace>(deck: SharedDeck<F>, zone: string, owner: string, count: number): Card<F>[] {
  if (!Number.isInteger(count) || count < 1 || count > 64) throw new SharedDeckError('zone draw count must be between 1 and 64');
  if (deck.draw_pile.length < count) throw new SharedDeckError('shared draw pile does not have enough cards');
  const target = zoneCards(deck, zone, owner, true);
  const ids = Array.from({ length: count }, () => deck.draw_pile.pop()!);
  target.push(...ids);
  validateConservation(deck);
  return ids.map((id) => cardOf(deck, id));
}

/** Claims one public discard into zone/owner. */
export function moveDiscardToZone<F extends CardFace>(deck: SharedDeck<F>, zone: string, owner: string, cardId: string): Card<F> {
  const at = deck.discard_pile.indexOf(cardId);
  if (at < 0) throw new SharedDeckError('discard card does not exist');
  if (!deck.catalog[cardId]) throw new SharedDeckError('deck catalog is invalid');
  const target = zoneCards(deck, zone, owner, true);
  deck.discard_pile.splice(at, 1);
  target.push(cardId);
  validateConservation(deck);
  return cardOf(deck, cardId);
}

export function moveZoneToDiscard(deck: SharedDeck<CardFace>, zone: string, owner: string, cardId: string): void {
  const cards = zoneCards(deck, zone, owner, false);
  const at = cards.indexOf(cardId);
  if (at < 0) throw new SharedDeckError('zone card does not exist');
  cards.splice(at, 1);
  deck.discard_pile.push(cardId);
  validateConservation(deck);
}

export const faceOf = <F extends CardFace>(deck: SharedDeck<F>, id: string): Card<F> => cardOf(deck, id);

export interface PrivateDeckView<F extends CardFace> {
  draw_count: number;
  discard: Card<F>[];
  my_hand: Card<F>[];
  hand_counts: Record<string, number>;
  zones: Record<string, Record<string, Card<F>[]>>;
  zone_counts: Record<string, Record<string, number>>;
  total_cards: number;
}

/** What one hand's owner may see: its own cards, every hand's size, the discard and the zones not hidden. */
export function privateDeckView<F extends CardFace>(deck: SharedDeck<F>, viewer: string, hiddenZones: readonly string[] = []): PrivateDeckView<F> {
  validateConservation(deck);
  const hand = handOf(deck, viewer);
  if (hiddenZones.some((z) => typeof z !== 'string' || !z)) throw new SharedDeckError('hidden_zones must contain non-empty strings');
  const hidden = new Set(hiddenZones);
  const handCounts: Record<string, number> = {};
  for (const [key, ids] of Object.entries(deck.hands)) handCounts[key] = ids.length;
  const zones: Record<string, Record<string, Card<F>[]>> = {};
  const zoneCounts: Record<string, Record<string, number>> = {};
  for (const [zone, owners] of Object.entries(deck.zones)) {
    zoneCounts[zone] = Object.fromEntries(Object.entries(owners).map(([o, ids]) => [o, ids.length]));
    if (!hidden.has(zone)) zones[zone] = Object.fromEntries(Object.entries(owners).map(([o, ids]) => [o, ids.map((id) => cardOf(deck, id))]));
  }
  return {
    draw_count: deck.draw_pile.length,
    discard: deck.discard_pile.map((id) => cardOf(deck, id)),
    my_hand: hand.map((id) => cardOf(deck, id)),
    hand_counts: handCounts,
    zones,
    zone_counts: zoneCounts,
    total_cards: deck.total_cards,
  };
}

export function validateConservation(deck: SharedDeck<CardFace>): void {
  const expected = Object.keys(deck.catalog);
  if (!expected.length) throw new SharedDeckError('catalog must be a non-empty object');
  const seen = [...deck.draw_pile, ...deck.discard_pile, ...Object.values(deck.hands).flat()];
  for (const owners of Object.values(deck.zones)) for (const ids of Object.values(owners)) seen.push(...ids);
  const set = new Set(seen);
  if (set.size !== seen.length) throw new SharedDeckError('a card appears in more than one deck zone');
  if (set.size !== expected.length || expected.some((id) => !set.has(id))) throw new SharedDeckError('deck conservation failed');
  if (deck.total_cards !== expected.length) throw new SharedDeckError('total_cards does not match catalog size');
}
