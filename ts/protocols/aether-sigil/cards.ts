/**
 * Aether Sigil's card set and the member-side choice of a legal action. The faces, their order and
 * their fields are the reference's: a card's identity is the SHA-256 of its face and index, so any
 * difference here would deal other card ids than the reference's leader from the same seed.
 */
import type { GroupMember } from '../../hooks/types.js';
import type { Card as DeckCard } from '../shared-deck.js';

export type CardType = 'unit' | 'spell' | 'relic';
export type SpellEffect = 'damage_player' | 'heal_self' | 'draw' | 'destroy_unit' | 'shield_self' | 'ready_all';
export type RelicEffect = 'end_heal' | 'spell_power' | 'unit_power' | 'max_energy';

export interface AetherFace {
  name: string;
  card_type: CardType;
  cost: number;
  power?: number;
  guard?: number;
  effect?: SpellEffect | RelicEffect;
  amount?: number;
  max_power?: number;
}
export type AetherCard = DeckCard<AetherFace>;

export const HAND_SIZE = 5;
export const COPIES = 4;
export const MAX_UNITS = 3;
export const MAX_RELICS = 2;
export const MAX_ENERGY = 10;

export function cardFaces(): AetherFace[] {
  return [
    { name: 'Dawnling', card_type: 'unit', cost: 1, power: 2, guard: 1 },
    { name: 'Iron Finch', card_type: 'unit', cost: 1, power: 1, guard: 2 },
    { name: 'Glass Hound', card_type: 'unit', cost: 2, power: 3, guard: 2 },
    { name: 'Tide Scribe', card_type: 'unit', cost: 2, power: 2, guard: 3 },
    { name: 'Aether Guard', card_type: 'unit', cost: 3, power: 2, guard: 5 },
    { name: 'Void Lynx', card_type: 'unit', cost: 3, power: 4, guard: 2 },
    { name: 'Verdant Giant', card_type: 'unit', cost: 4, power: 4, guard: 6 },
    { name: 'Ember Drake', card_type: 'unit', cost: 5, power: 6, guard: 4 },
    { name: 'Cinder Shot', card_type: 'spell', cost: 1, effect: 'damage_player', amount: 2 },
    { name: 'Mending Rain', card_type: 'spell', cost: 2, effect: 'heal_self', amount: 4 },
    { name: 'Star Map', card_type: 'spell', cost: 2, effect: 'draw', amount: 2 },
    { name: 'Dissolve', card_type: 'spell', cost: 3, effect: 'destroy_unit', max_power: 3 },
    { name: 'Pulse Shield', card_type: 'spell', cost: 2, effect: 'shield_self', amount: 4 },
    { name: 'Rally Spark', card_type: 'spell', cost: 2, effect: 'ready_all', amount: 0 },
    { name: 'Sun Dial', card_type: 'relic', cost: 2, effect: 'end_heal', amount: 1 },
    { name: 'Prism Lens', card_type: 'relic', cost: 3, effect: 'spell_power', amount: 1 },
    { name: 'Living Forge', card_type: 'relic', cost: 3, effect: 'unit_power', amount: 1 },
    { name: 'Deep Reservoir', card_type: 'relic', cost: 2, effect: 'max_energy', amount: 1 },
  ];
}

export interface PlayerState {
  seat: number;
  life: number;
  shield: number;
  energy: number;
  max_energy: number;
  fatigue: number;
  defeated: boolean;
}
export interface UnitState {
  damage: number;
  exhausted: boolean;
  power_bonus: number;
}

/** What a member sees (the reference's view, field for field). */
export type AetherView = Record<string, unknown> & {
  phase: 'playing' | 'completed';
  restart_count: number;
  recovery_notice: string;
  turn_number: number;
  turn_order: string[];
  current_player: string;
  players: Record<string, PlayerState>;
  units: Record<string, AetherCard[]>;
  relics: Record<string, AetherCard[]>;
  unit_state: Record<string, UnitState>;
  draw_count: number;
  discard: AetherCard[];
  hand_counts: Record<string, number>;
  my_hand: AetherCard[];
  winner: string;
  you: { public_key: string; seat: number };
};

export type AetherAction =
  | { kind: 'play_card'; card_id: string; target_public_key?: string; target_card_id?: string }
  | { kind: 'attack'; unit_id: string; target_public_key?: string; target_card_id?: string }
  | { kind: 'end_turn' }
  | { kind: 'concede' };

/**
 * Every action the viewer's own view says the leader would accept now (conceding aside), ending the
 * turn last; none when it is not the viewer's turn or the match is over.
 */
export function legalActions(view: AetherView): AetherAction[] {
  const me = view.you.public_key;
  if (view.phase !== 'playing' || view.current_player !== me) return [];
  const player = view.players[me];
  if (!player || player.defeated) return [];
  const opponents = view.turn_order.filter((k) => k !== me && view.players[k] && !view.players[k]!.defeated);
  const enemyUnits = Object.entries(view.units).flatMap(([owner, cards]) => (owner === me ? [] : cards));
  const powerOf = (c: AetherCard) => (c.power ?? 0) + (view.unit_state[c.card_id]?.power_bonus ?? 0);
  const out: AetherAction[] = [];
  for (const card of view.my_hand) {
    if (card.cost > player.energy) continue;
    const card_id = card.card_id;
    if (card.card_type === 'unit') {
      if ((view.units[me]?.length ?? 0) < MAX_UNITS) out.push({ kind: 'play_card', card_id });
    } else if (card.card_type === 'relic') {
      if ((view.relics[me]?.length ?? 0) < MAX_RELICS) out.push({ kind: 'play_card', card_id });
    } else if (card.effect === 'damage_player') {
      for (const target of opponents) out.push({ kind: 'play_card', card_id, target_public_key: target });
    } else if (card.effect === 'destroy_unit') {
      for (const unit of enemyUnits) if (powerOf(unit) <= (card.max_power ?? 0)) out.push({ kind: 'play_card', card_id, target_card_id: unit.card_id });
    } else {
      out.push({ kind: 'play_card', card_id });
    }
  }
  for (const unit of view.units[me] ?? []) {
    if (view.unit_state[unit.card_id]?.exhausted !== false) continue;
    for (const target of opponents) out.push({ kind: 'attack', unit_id: unit.card_id, target_public_key: target });
    for (const defender of enemyUnits) out.push({ kind: 'attack', unit_id: unit.card_id, target_card_id: defender.card_id });
  }
  out.push({ kind: 'end_turn' });
  return out;
}

/**
 * An unattended member's move, from its own view only: a random legal play, or ending the turn about
 * one time in four (and always when nothing else is legal). It never concedes.
 */
export function autoplay(view: Record<string, unknown>, me: GroupMember, random: () => number): Record<string, unknown> | null {
  const v = view as AetherView;
  if (v.you?.public_key !== me.public_key) return null;
  const actions = legalActions(v);
  if (!actions.length) return null;
  const plays = actions.slice(0, -1);
  if (!plays.length || random() < 0.25) return { kind: 'end_turn' };
  return { ...plays[Math.floor(random() * plays.length)]! };
}
