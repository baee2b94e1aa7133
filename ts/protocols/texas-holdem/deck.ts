/**
 * The leader's private deck, laid out as the reference's shared deck (catalog, draw pile, hands, zones),
 * with the same card identities and the same SHA-256-driven Fisher–Yates shuffle, so that a seed deals
 * the same cards in both implementations and a checkpointed state reads the same to either.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { SUITS } from './poker.js';

export interface CardFace {
  code: string;
  suit: string;
  rank: number;
  label: string;
  color: 'red' | 'black';
  card_id: string;
  copy: number;
}

export interface Deck {
  catalog: Record<string, CardFace>;
  draw_pile: string[];
  hands: Record<string, string[]>;
  discard_pile: string[];
  zones: Record<string, Record<string, string[]>>;
  total_cards: number;
}

const RANK_LABELS: Record<number, string> = { 11: 'J', 12: 'Q', 13: 'K', 14: 'A' };
const SUIT_SYMBOLS: Record<string, string> = { clubs: 'C', diamonds: 'D', hearts: 'H', spades: 'S' };
const utf8 = new TextEncoder();
const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

function standardFaces(): Omit<CardFace, 'card_id' | 'copy'>[] {
  return SUITS.flatMap((suit) =>
    Array.from({ length: 13 }, (_, i) => {
      const rank = i + 2;
      const label = `${RANK_LABELS[rank] ?? String(rank)}${SUIT_SYMBOLS[suit]}`;
      return { code: label, suit, rank, label, color: suit === 'diamonds' || suit === 'hearts' ? ('red' as const) : ('black' as const) };
    }),
  );
}

/**
 * Python's json.dumps(sort_keys=True, ensure_ascii=False, separators=(",", ":")) of the identity
 * object. Its keys are fixed ASCII, written in sorted order; JSON.stringify escapes strings the same
 * way for every well-formed string.
 */
function identityJson(seed: string, faceIndex: number, face: Omit<CardFace, 'card_id' | 'copy'>): string {
  const f = `{"code":${JSON.stringify(face.code)},"color":${JSON.stringify(face.color)},"label":${JSON.stringify(face.label)},"rank":${face.rank},"suit":${JSON.stringify(face.suit)}}`;
  return `{"copy":0,"face":${f},"face_index":${faceIndex},"seed":${JSON.stringify(seed)}}`;
}

/** The reference's deterministic shuffle: step k swaps index i with sha256("…:seed:k") mod (i+1). */
export function deterministicShuffle(values: readonly string[], seed: string): string[] {
  const out = [...values];
  let counter = 0;
  for (let i = out.length - 1; i > 0; i--) {
    const digest = sha256(utf8.encode(`aigenora-shared-deck-v1:${seed}:${counter}`));
    const target = Number(BigInt(`0x${hex(digest)}`) % BigInt(i + 1));
    [out[i], out[target]] = [out[target] as string, out[i] as string];
    counter += 1;
  }
  return out;
}

/** A fresh 52-card deck shuffled from `seed`, with an empty hand for each member key (in seat order). */
export function createDeck(seed: string, handOwners: readonly string[]): Deck {
  if (!seed || /[\uD800-\uDFFF]/u.test(seed) || utf8.encode(seed).length > 256) throw new Error('seed must be 1-256 UTF-8 bytes');
  const catalog: Record<string, CardFace> = {};
  const ids: string[] = [];
  standardFaces().forEach((face, i) => {
    const id = hex(sha256(utf8.encode(identityJson(seed, i, face)))).slice(0, 24);
    if (id in catalog) throw new Error('card identity collision');
    catalog[id] = { ...face, card_id: id, copy: 0 };
    ids.push(id);
  });
  const hands: Record<string, string[]> = {};
  for (const k of handOwners) hands[k] = [];
  return { catalog, draw_pile: deterministicShuffle(ids, seed), hands, discard_pile: [], zones: {}, total_cards: ids.length };
}

function pop(deck: Deck): string {
  const id = deck.draw_pile.pop();
  if (id === undefined) throw new Error('shared draw pile does not have enough cards');
  return id;
}

/** Deals the top card of the draw pile (its end) into a member's hand. */
export function drawTo(deck: Deck, owner: string): void {
  const hand = deck.hands[owner];
  if (!hand) throw new Error('unknown hand owner');
  hand.push(pop(deck));
}

/** Moves `count` cards from the draw pile into zone/owner and returns copies of their faces. */
export function drawToZone(deck: Deck, zone: string, owner: string, count: number): CardFace[] {
  if (deck.draw_pile.length < count) throw new Error('shared draw pile does not have enough cards');
  const cards = ((deck.zones[zone] ??= {})[owner] ??= []);
  const ids = Array.from({ length: count }, () => pop(deck));
  cards.push(...ids);
  return ids.map((id) => ({ ...(deck.catalog[id] as CardFace) }));
}

export const faceOf = (deck: Deck, id: string): CardFace => ({ ...(deck.catalog[id] as CardFace) });
