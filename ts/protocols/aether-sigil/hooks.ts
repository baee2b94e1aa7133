/**
 * Aether Sigil (authoritative_group): four channelers draw from one 72-card shared pile, keep private
 * hands, summon public units and relics, cast spells and fight until one remains; an empty pile deals
 * growing fatigue. The authority state, events, views, refusal texts and recovery are the reference's
 * field for field, and a seeded deal (the `deal_seed` option) gives the reference's card ids in the
 * reference's order, so a leader of either implementation produces the same frames. Without a seed the
 * deal's seed comes from the session's random source.
 */
import { defineHooks, type GroupHookResult, type GroupMember, type GroupState } from '../../hooks/types.js';
import { fixedSeats, fourActiveMembers } from '../fixed-seats.js';
import {
  createSharedDeck,
  dealSeed,
  discardCards,
  drawCards,
  moveZoneToDiscard,
  privateDeckView,
  putInZone,
  takeFromHand,
  type SharedDeck as Deck,
} from '../shared-deck.js';
import {
  autoplay,
  cardFaces,
  COPIES,
  HAND_SIZE,
  MAX_ENERGY,
  MAX_RELICS,
  MAX_UNITS,
  type AetherCard,
  type AetherFace,
  type AetherView,
  type PlayerState,
  type UnitState,
} from './cards.js';

export { autoplay, legalActions, type AetherAction, type AetherView } from './cards.js';

type SharedDeck = Deck<AetherFace>;
export type AetherState = GroupState & {
  phase: 'playing' | 'completed';
  restart_count: number;
  recovery_notice: string;
  turn_number: number;
  turn_order: string[];
  current_player: string;
  players: Record<string, PlayerState>;
  deck: SharedDeck;
  unit_state: Record<string, UnitState>;
  winner: string;
};
type Events = Record<string, unknown>[];

/** Python's int(): numbers truncate, integer text parses, anything else is refused as Python would. */
function pyInt(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
  throw new Error(`invalid literal for int(): ${JSON.stringify(v)}`);
}

/** Python's truth value of a JSON value. */
function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '' || v === 0n) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

const zoneOf = (state: AetherState, zone: 'units' | 'relics', owner: string): string[] => state.deck.zones[zone]?.[owner] ?? [];
const catalogCard = (state: AetherState, id: string): AetherCard => state.deck.catalog[id]!;

export default defineHooks(
  'authoritative_group',
  (ctx) => {
    const startingLife = (): number => pyInt(Object.hasOwn(ctx.options, 'starting_life') ? ctx.options['starting_life'] : 20);

    function newMatch(members: readonly GroupMember[], restartCount: number, recoveryNotice: string): AetherState {
      const active = fourActiveMembers(members, 'Aether Sigil');
      const seed = dealSeed(ctx.options['deal_seed'], [restartCount], ctx.random);
      const life = startingLife();
      if (life < 10 || life > 50) throw new Error('starting_life must be between 10 and 50');
      const deck = createSharedDeck(cardFaces(), active, HAND_SIZE, seed, COPIES);
      const order = active.map((m) => m.public_key);
      const players: Record<string, PlayerState> = {};
      for (const m of active) players[m.public_key] = { seat: m.seat, life, shield: 0, energy: 1, max_energy: 1, fatigue: 0, defeated: false };
      return {
        phase: 'playing',
        restart_count: restartCount,
        recovery_notice: recoveryNotice,
        turn_number: 1,
        turn_order: order,
        current_player: order[0]!,
        players,
        deck,
        unit_state: {},
        winner: '',
      };
    }

    function relicTotal(state: AetherState, key: string, effect: string): number {
      let total = 0;
      for (const id of zoneOf(state, 'relics', key)) {
        const card = catalogCard(state, id);
        if (card.effect === effect) total += pyInt(card.amount ?? 0);
      }
      return total;
    }

    /** Shield absorbs first; the rest comes off life, and zero life is defeat. Returns the life lost. */
    function damagePlayer(state: AetherState, key: string, amount: number): number {
      const player = state.players[key]!;
      const absorbed = Math.min(player.shield, amount);
      player.shield -= absorbed;
      const damage = amount - absorbed;
      player.life = Math.max(0, player.life - damage);
      if (player.life === 0) player.defeated = true;
      return damage;
    }

    function winnerIfFinished(state: AetherState): string {
      const active = state.turn_order.filter((k) => !state.players[k]!.defeated);
      if (active.length !== 1) return '';
      state.phase = 'completed';
      state.winner = active[0]!;
      return active[0]!;
    }

    function nextActive(state: AetherState, key: string): string {
      const order = state.turn_order;
      const index = order.indexOf(key);
      for (let offset = 1; offset <= order.length; offset++) {
        const candidate = order[(index + offset) % order.length]!;
        if (!state.players[candidate]!.defeated) return candidate;
      }
      throw new Error('no active Member remains');
    }

    function drawOrFatigue(state: AetherState, key: string, count: number): Events {
      const events: Events = [];
      for (let i = 0; i < count; i++) {
        if (state.deck.draw_pile.length) {
          drawCards(state.deck, key, 1);
          events.push({ kind: 'card_drawn', public_key: key });
        } else {
          const player = state.players[key]!;
          player.fatigue += 1;
          events.push({ kind: 'fatigue', public_key: key, amount: damagePlayer(state, key, player.fatigue) });
        }
      }
      return events;
    }

    function beginTurn(state: AetherState, key: string): Events {
      const player = state.players[key]!;
      player.max_energy = Math.min(MAX_ENERGY, player.max_energy + 1);
      player.energy = player.max_energy;
      for (const id of zoneOf(state, 'units', key)) state.unit_state[id]!.exhausted = false;
      return [{ kind: 'turn_started', public_key: key }, ...drawOrFatigue(state, key, 1)];
    }

    /** Hands the turn on past defeated channelers; a draw from an empty pile may defeat the next one too. */
    function beginViableTurn(state: AetherState, after: string): Events {
      const events: Events = [];
      let candidate = nextActive(state, after);
      for (let i = 0; i < state.turn_order.length; i++) {
        state.current_player = candidate;
        events.push(...beginTurn(state, candidate));
        if (!state.players[candidate]!.defeated) return events;
        if (winnerIfFinished(state)) return events;
        candidate = nextActive(state, candidate);
      }
      return events;
    }

    function activeOpponent(state: AetherState, actor: string, target: unknown): string {
      if (typeof target !== 'string' || target === actor || !Object.hasOwn(state.players, target) || state.players[target]!.defeated) {
        throw new Error('target_public_key must identify an active opponent');
      }
      return target;
    }

    function publicUnit(state: AetherState, cardId: unknown): [string, AetherCard] {
      if (typeof cardId !== 'string') throw new Error('target_card_id must be text');
      for (const [owner, cards] of Object.entries(state.deck.zones['units'] ?? {})) if (cards.includes(cardId)) return [owner, catalogCard(state, cardId)];
      throw new Error('target unit does not exist');
    }

    function destroyUnit(state: AetherState, owner: string, cardId: string): void {
      moveZoneToDiscard(state.deck, 'units', owner, cardId);
      delete state.unit_state[cardId];
    }

    const finish = (state: AetherState, events: Events, winner: string): GroupHookResult => {
      events.push({ kind: 'game_over', winner });
      return { state, events, completed: true, outcome: winner };
    };

    function resolveSpell(state: AetherState, key: string, action: Record<string, unknown>, card: AetherCard): Events {
      const effect = card.effect;
      const amount = pyInt(card.amount ?? 0);
      if (effect === 'damage_player') {
        const target = activeOpponent(state, key, action['target_public_key']);
        return [{ kind: 'spell_damage', target, amount: damagePlayer(state, target, amount + relicTotal(state, key, 'spell_power')) }];
      }
      if (effect === 'heal_self') {
        const player = state.players[key]!;
        const before = player.life;
        player.life = Math.min(startingLife(), before + amount);
        return [{ kind: 'healed', public_key: key, amount: player.life - before }];
      }
      if (effect === 'draw') return drawOrFatigue(state, key, amount);
      if (effect === 'destroy_unit') {
        const targetId = action['target_card_id'];
        const [owner, target] = publicUnit(state, targetId);
        const id = targetId as string;
        if (owner === key) throw new Error('Dissolve must target an opposing unit');
        const power = pyInt(target.power) + pyInt(state.unit_state[id]!.power_bonus);
        if (power > pyInt(card.max_power)) throw new Error('the target unit is too powerful for Dissolve');
        destroyUnit(state, owner, id);
        return [{ kind: 'unit_dissolved', owner, card_id: id }];
      }
      if (effect === 'shield_self') {
        state.players[key]!.shield += amount;
        return [{ kind: 'shield_gained', public_key: key, amount }];
      }
      if (effect === 'ready_all') {
        for (const id of zoneOf(state, 'units', key)) state.unit_state[id]!.exhausted = false;
        return [{ kind: 'units_readied', public_key: key }];
      }
      throw new Error('unknown spell effect');
    }

    function playCard(state: AetherState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      const key = actor.public_key;
      const cardId = action['card_id'];
      if (typeof cardId !== 'string') throw new Error('card_id must be text');
      if (!state.deck.hands[key]!.includes(cardId)) throw new Error("card is not in this Member's hand");
      const card = structuredClone(catalogCard(state, cardId));
      const player = state.players[key]!;
      const cost = pyInt(card.cost);
      if (player.energy < cost) throw new Error('not enough Aether');
      const events: Events = [];
      if (card.card_type === 'unit') {
        if (zoneOf(state, 'units', key).length >= MAX_UNITS) throw new Error('the unit row is full');
        takeFromHand(state.deck, key, [cardId]);
        putInZone(state.deck, 'units', key, [cardId]);
        state.unit_state[cardId] = { damage: 0, exhausted: true, power_bonus: relicTotal(state, key, 'unit_power') };
        events.push({ kind: 'unit_summoned', public_key: key, card });
      } else if (card.card_type === 'relic') {
        if (zoneOf(state, 'relics', key).length >= MAX_RELICS) throw new Error('the relic row is full');
        takeFromHand(state.deck, key, [cardId]);
        putInZone(state.deck, 'relics', key, [cardId]);
        if (card.effect === 'max_energy') player.max_energy = Math.min(MAX_ENERGY, player.max_energy + pyInt(card.amount));
        events.push({ kind: 'relic_played', public_key: key, card });
      } else if (card.card_type === 'spell') {
        // The spell resolves while still in hand (a Star Map's draws land before it leaves), as the reference orders it.
        events.push(...resolveSpell(state, key, action, card));
        takeFromHand(state.deck, key, [cardId]);
        discardCards(state.deck, [cardId]);
        events.unshift({ kind: 'spell_cast', public_key: key, card });
      } else {
        throw new Error('unknown card type');
      }
      player.energy -= cost;
      let winner = winnerIfFinished(state);
      if (!winner && state.players[key]!.defeated) {
        events.push(...beginViableTurn(state, key));
        winner = winnerIfFinished(state);
      }
      return winner ? finish(state, events, winner) : { state, events };
    }

    function attack(state: AetherState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
      const key = actor.public_key;
      const unitId = action['unit_id'];
      if (typeof unitId !== 'string' || !zoneOf(state, 'units', key).includes(unitId)) throw new Error('unit_id is not controlled by this Member');
      const unitState = state.unit_state[unitId]!;
      if (unitState.exhausted) throw new Error('this unit is exhausted');
      const attacker = catalogCard(state, unitId);
      const attackPower = pyInt(attacker.power) + pyInt(unitState.power_bonus);
      const targetId = action['target_card_id'];
      const events: Events = [];
      if (truthy(targetId)) {
        const [owner, defender] = publicUnit(state, targetId);
        const id = targetId as string;
        if (owner === key) throw new Error('a unit cannot attack an allied unit');
        const defenderState = state.unit_state[id]!;
        const defendPower = pyInt(defender.power) + pyInt(defenderState.power_bonus);
        defenderState.damage += attackPower;
        unitState.damage += defendPower;
        events.push({ kind: 'unit_combat', attacker: unitId, defender: id, attack_power: attackPower, counter_power: defendPower });
        if (defenderState.damage >= pyInt(defender.guard)) {
          destroyUnit(state, owner, id);
          events.push({ kind: 'unit_destroyed', card_id: id });
        }
        if (unitState.damage >= pyInt(attacker.guard)) {
          destroyUnit(state, key, unitId);
          events.push({ kind: 'unit_destroyed', card_id: unitId });
        } else {
          unitState.exhausted = true;
        }
      } else {
        const target = activeOpponent(state, key, action['target_public_key']);
        const dealt = damagePlayer(state, target, attackPower);
        unitState.exhausted = true;
        events.push({ kind: 'direct_attack', attacker: unitId, target, amount: dealt });
      }
      const winner = winnerIfFinished(state);
      return winner ? finish(state, events, winner) : { state, events };
    }

    function endTurn(state: AetherState, actor: GroupMember): GroupHookResult {
      const key = actor.public_key;
      const healing = relicTotal(state, key, 'end_heal');
      const events: Events = [];
      if (healing) {
        const player = state.players[key]!;
        const before = player.life;
        player.life = Math.min(startingLife(), player.life + healing);
        events.push({ kind: 'relic_heal', public_key: key, amount: player.life - before });
      }
      state.turn_number += 1;
      events.push(...beginViableTurn(state, key));
      const winner = winnerIfFinished(state);
      return winner ? finish(state, events, winner) : { state, events };
    }

    function concede(state: AetherState, actor: GroupMember): GroupHookResult {
      const key = actor.public_key;
      state.players[key]!.defeated = true;
      state.players[key]!.life = 0;
      const events: Events = [{ kind: 'conceded', public_key: key }];
      const winner = winnerIfFinished(state);
      if (winner) return finish(state, events, winner);
      events.push(...beginViableTurn(state, key));
      return { state, events };
    }

    return {
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_host_metadata: () => ['Aether Sigil', 'game,cards,multiplayer,shared-deck,original', 'supply', { starting_life: 20 }],

      proto_group_initial_state(members: GroupMember[]): GroupState {
        return newMatch(members, 0, '');
      },

      ...fixedSeats,

      // A channeler whose turn ran out ends it: nothing is played or attacked in its name, and the
      // next turn begins as it would after any end_turn (conceding is left to the member itself).
      proto_group_timeout_action(s: GroupState, member: GroupMember): Record<string, unknown> | null {
        const state = s as AetherState;
        return state.phase === 'playing' && state.current_player === member.public_key ? { kind: 'end_turn' } : null;
      },

      proto_group_handle(s: GroupState, actor: GroupMember, action: Record<string, unknown>): GroupHookResult {
        const state = s as AetherState;
        if (state.phase !== 'playing') throw new Error('the match is complete');
        if (actor.public_key !== state.current_player) throw new Error("it is not this Member's turn");
        switch (action['kind']) {
          case 'play_card':
            return playCard(state, actor, action);
          case 'attack':
            return attack(state, actor, action);
          case 'end_turn':
            return endTurn(state, actor);
          case 'concede':
            return concede(state, actor);
          default:
            throw new Error('unsupported Aether Sigil action');
        }
      },

      proto_group_view(s: GroupState, viewer: GroupMember): Record<string, unknown> {
        const state = s as AetherState;
        const deck = privateDeckView(state.deck, viewer.public_key);
        // The committed state is frozen and shared: the view copies what it hands out.
        const view: AetherView = {
          phase: state.phase,
          restart_count: state.restart_count,
          recovery_notice: state.recovery_notice,
          turn_number: state.turn_number,
          turn_order: [...state.turn_order],
          current_player: state.current_player,
          players: structuredClone(state.players),
          units: deck.zones['units'] ?? {},
          relics: deck.zones['relics'] ?? {},
          unit_state: structuredClone(state.unit_state),
          draw_count: deck.draw_count,
          discard: deck.discard,
          hand_counts: deck.hand_counts,
          my_hand: deck.my_hand,
          winner: state.winner,
          you: { public_key: viewer.public_key, seat: viewer.seat },
        };
        return view;
      },

      // Only public facts survive a leader change: the hidden deal is never copied to failover candidates.
      proto_group_recovery_snapshot(s: GroupState): GroupState {
        const state = s as AetherState;
        return { restart_count: state.restart_count, public_outcome: state.winner };
      },

      proto_group_restore(checkpoint: GroupState, members: GroupMember[]): GroupState {
        return newMatch(members, pyInt(checkpoint['restart_count'] ?? 0) + 1, 'The previous hidden deal was discarded after a Leader change.');
      },

      proto_group_on_leader_changed(s: GroupState, oldLeader: string, newLeader: string): GroupHookResult {
        const state = s as AetherState;
        state.recovery_notice = `Leader changed from ${oldLeader.slice(0, 8)} to ${newLeader.slice(0, 8)}; a fresh shared deck was dealt.`;
        return {
          state,
          events: [{ kind: 'match_restarted_after_leader_change', old_leader: oldLeader, new_leader: newLeader, restart_count: state.restart_count }],
        };
      },
    };
  },
  autoplay,
);
