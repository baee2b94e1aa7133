// Aether Sigil: the reference's spec.json byte for byte (so its protocol id is the reference's), every
// rule and refusal on hand-built tables, whole games played by each member from its own view through
// the group leader and four verifying replicas (also across a leader change), and, where python3
// imports the reference, the reference's hooks replaying the same steps: same deal, states, events,
// views, refusals, completion and recovery.
import { describe, expect, it } from 'vitest';
import { needReferencePython } from '../shared/require.js';
import { seeded } from '../../ts/hooks/random.js';
import { getCrypto } from '../../ts/crypto/index.js';
import type { GroupHooks, GroupMember, GroupState } from '../../ts/hooks/types.js';
import aether, { legalActions, type AetherState, type AetherView } from '../../ts/protocols/aether-sigil/hooks.js';
import { cardFaces } from '../../ts/protocols/aether-sigil/cards.js';
import { findBuiltin } from '../../ts/protocols/index.js';
import { expectTheirsCanonical } from './fast-expect.js';
import { fourSeats, hostContext, referenceSpecTests, refusalOf } from './group-fixtures.js';
import { builtinGroupConfig, derivedSeats, startTable } from './group-table.js';
import { build, built, referenceRequests, type Built } from './reference-batch.js';

const ID = 'cbdb124e0db9be540099dbb7f7229bd9075251b5d6838f1ea943083d631570c5';

const mulberry32 = seeded;
const hooks = (options: Record<string, unknown> = {}, seed = 1) => aether.create(hostContext(options, seed)) as GroupHooks;
const MEMBERS = fourSeats('abcd', 'm-');
const [A, B, C, D] = MEMBERS.map((m) => m.public_key) as [string, string, string, string];
const byKey = (key: string) => MEMBERS.find((m) => m.public_key === key)!;
type Action = Record<string, unknown>;

/** Runs one action as the leader does: on a copy, so a refusal leaves the state untouched. */
const act = (h: GroupHooks, s: GroupState, actor: string, action: Action) => h.proto_group_handle(structuredClone(s), byKey(actor), structuredClone(action));
const refusal = (h: GroupHooks, s: GroupState, actor: string, action: Action): string => refusalOf(() => act(h, s, actor, action));
const kinds = (events: unknown[] | undefined) => (events ?? []).map((e) => (e as { kind: string }).kind);

// Hand-built tables: cards move from the draw pile (a copy of the named face) to where a test wants them.
function take(s: AetherState, name: string): string {
  const at = s.deck.draw_pile.findIndex((id) => s.deck.catalog[id]!.name === name);
  if (at < 0) throw new Error(`no ${name} left in the draw pile`);
  return s.deck.draw_pile.splice(at, 1)[0]!;
}
const give = (s: AetherState, key: string, name: string): string => {
  const id = take(s, name);
  s.deck.hands[key]!.push(id);
  return id;
};
function field(s: AetherState, key: string, name: string, zone: 'units' | 'relics' = 'units', ready = true): string {
  const id = take(s, name);
  ((s.deck.zones[zone] ??= {})[key] ??= []).push(id);
  if (zone === 'units') s.unit_state[id] = { damage: 0, exhausted: !ready, power_bonus: 0 };
  return id;
}
function table(options: Record<string, unknown> = {}): { h: GroupHooks; s: AetherState } {
  const h = hooks({ deal_seed: 'table', ...options });
  return { h, s: h.proto_group_initial_state(MEMBERS) as AetherState };
}

describe('Aether Sigil: spec and registration', () => {
  referenceSpecTests('aether-sigil', ID, "the reference's Aether Sigil spec");

  it('is registered under the reference alias with its two profiles', () => {
    expect(findBuiltin('aether-sigil-v1')).toMatchObject({
      folder: 'aether-sigil',
      default_profile: 'standard',
      profiles: { standard: { options: { starting_life: 20 } }, long: { options: { starting_life: 30 } } },
    });
    expect(aether.mode).toBe('authoritative_group');
    expect(typeof aether.autoplay).toBe('function');
  });
});

describe('Aether Sigil: the deal', () => {
  it('deals five private cards each from 72 cards of 18 faces, seat 0 first with one Aether', () => {
    const { s } = table();
    expect(Object.keys(s.deck.catalog)).toHaveLength(72);
    expect(new Set(Object.values(s.deck.catalog).map((c) => c.name)).size).toBe(18);
    expect(cardFaces()).toHaveLength(18);
    expect(Object.values(s.deck.hands).map((x) => x.length)).toEqual([5, 5, 5, 5]);
    expect(s.deck.draw_pile).toHaveLength(52);
    expect(s).toMatchObject({ phase: 'playing', turn_number: 1, turn_order: [A, B, C, D], current_player: A, winner: '', unit_state: {}, restart_count: 0 });
    expect(s.players[A]).toEqual({ seat: 0, life: 20, shield: 0, energy: 1, max_energy: 1, fatigue: 0, defeated: false });
  });

  it('refuses a table that is not four active members and a starting life outside 10..50', () => {
    expect(() => hooks().proto_group_initial_state(MEMBERS.slice(0, 3))).toThrow('Aether Sigil requires exactly four active Members');
    expect(() => hooks().proto_group_initial_state([...MEMBERS.slice(0, 3), { ...MEMBERS[3]!, status: 'left' }])).toThrow(
      'Aether Sigil requires exactly four active Members',
    );
    expect(() => hooks({ starting_life: 9 }).proto_group_initial_state(MEMBERS)).toThrow('starting_life must be between 10 and 50');
    expect(() => hooks({ starting_life: 51 }).proto_group_initial_state(MEMBERS)).toThrow('starting_life must be between 10 and 50');
    expect((hooks({ starting_life: 30 }).proto_group_initial_state(MEMBERS) as AetherState).players[D]!.life).toBe(30);
  });

  it('a deal_seed deals the same cards every time (per restart count); without it the session random decides', () => {
    const deal = (o: Record<string, unknown>, seed = 1) => (hooks(o, seed).proto_group_initial_state(MEMBERS) as AetherState).deck;
    expect(deal({ deal_seed: 'x' }, 1)).toEqual(deal({ deal_seed: 'x' }, 2));
    expect(deal({ deal_seed: 'x' }).draw_pile).not.toEqual(deal({ deal_seed: 'y' }).draw_pile);
    expect(deal({}, 5)).toEqual(deal({}, 5));
    expect(deal({}, 5).draw_pile).not.toEqual(deal({}, 6).draw_pile);
  });
});

describe('Aether Sigil: rules and refusals', () => {
  it('refuses out-of-turn, unknown and malformed actions with the reference texts', () => {
    const { h, s } = table();
    s.players[A]!.energy = 1;
    const lynx = give(s, A, 'Void Lynx');
    expect(refusal(h, s, B, { kind: 'end_turn' })).toBe("it is not this Member's turn");
    expect(refusal(h, s, A, { kind: 'pass' })).toBe('unsupported Aether Sigil action');
    expect(refusal(h, s, A, {})).toBe('unsupported Aether Sigil action');
    expect(refusal(h, s, A, { kind: 'play_card', card_id: 7 })).toBe('card_id must be text');
    expect(refusal(h, s, A, { kind: 'play_card' })).toBe('card_id must be text');
    expect(refusal(h, s, A, { kind: 'play_card', card_id: s.deck.hands[B]![0] })).toBe("card is not in this Member's hand");
    expect(refusal(h, s, A, { kind: 'play_card', card_id: lynx })).toBe('not enough Aether');
    expect(refusal(h, s, A, { kind: 'attack', unit_id: 'nope' })).toBe('unit_id is not controlled by this Member');
    expect(refusal(h, s, A, { kind: 'attack', unit_id: ['x'] })).toBe('unit_id is not controlled by this Member');
  });

  it('summons units exhausted into a row of three, with the Living Forge bonus of the moment', () => {
    const { h, s } = table();
    s.players[A]!.energy = 10;
    field(s, A, 'Living Forge', 'relics');
    const finch = give(s, A, 'Iron Finch');
    const r = act(h, s, A, { kind: 'play_card', card_id: finch });
    const t = r.state as AetherState;
    expect(r.events).toEqual([{ kind: 'unit_summoned', public_key: A, card: s.deck.catalog[finch] }]);
    expect(t.unit_state[finch]).toEqual({ damage: 0, exhausted: true, power_bonus: 1 });
    expect(t.deck.zones['units']![A]).toEqual([finch]);
    expect(t.players[A]!.energy).toBe(9);
    expect(refusal(h, t, A, { kind: 'attack', unit_id: finch, target_public_key: B })).toBe('this unit is exhausted');
    field(t, A, 'Dawnling');
    field(t, A, 'Dawnling');
    expect(refusal(h, t, A, { kind: 'play_card', card_id: give(t, A, 'Glass Hound') })).toBe('the unit row is full');
  });

  it('relics: two a row; Deep Reservoir raises maximum Aether up to ten', () => {
    const { h, s } = table();
    s.players[A]!.energy = 10;
    s.players[A]!.max_energy = 10;
    const res = give(s, A, 'Deep Reservoir');
    let r = act(h, s, A, { kind: 'play_card', card_id: res });
    expect(r.events).toEqual([{ kind: 'relic_played', public_key: A, card: s.deck.catalog[res] }]);
    expect((r.state as AetherState).players[A]).toMatchObject({ max_energy: 10, energy: 8 });
    const t = r.state as AetherState;
    t.players[A]!.max_energy = 3;
    r = act(h, t, A, { kind: 'play_card', card_id: give(t, A, 'Deep Reservoir') });
    expect((r.state as AetherState).players[A]!.max_energy).toBe(4);
    const u = r.state as AetherState;
    expect(refusal(h, u, A, { kind: 'play_card', card_id: give(u, A, 'Sun Dial') })).toBe('the relic row is full');
  });

  it('Cinder Shot: shield absorbs first, Prism Lens adds one, a target must be an active opponent', () => {
    const { h, s } = table();
    s.players[A]!.energy = 10;
    const shot = give(s, A, 'Cinder Shot');
    for (const target of [undefined, 5, A, 'f'.repeat(64)])
      expect(refusal(h, s, A, { kind: 'play_card', card_id: shot, target_public_key: target })).toBe('target_public_key must identify an active opponent');
    s.players[D]!.defeated = true;
    expect(refusal(h, s, A, { kind: 'play_card', card_id: shot, target_public_key: D })).toBe('target_public_key must identify an active opponent');
    field(s, A, 'Prism Lens', 'relics');
    s.players[B]!.shield = 1;
    const r = act(h, s, A, { kind: 'play_card', card_id: shot, target_public_key: B });
    expect(r.events).toEqual([
      { kind: 'spell_cast', public_key: A, card: s.deck.catalog[shot] },
      { kind: 'spell_damage', target: B, amount: 2 },
    ]);
    const t = r.state as AetherState;
    expect(t.players[B]).toMatchObject({ life: 18, shield: 0 });
    expect(t.deck.discard_pile).toEqual([shot]);
    expect(t.players[A]!.energy).toBe(9);
  });

  it('Mending Rain heals up to the starting life; Pulse Shield stacks; Star Map draws before it leaves the hand', () => {
    const { h, s } = table({ starting_life: 30 });
    s.players[A]!.energy = 10;
    s.players[A]!.life = 28;
    const rain = give(s, A, 'Mending Rain');
    let r = act(h, s, A, { kind: 'play_card', card_id: rain });
    expect(r.events!.at(-1)).toEqual({ kind: 'healed', public_key: A, amount: 2 });
    expect((r.state as AetherState).players[A]!.life).toBe(30);
    const t = r.state as AetherState;
    t.players[A]!.shield = 1;
    r = act(h, t, A, { kind: 'play_card', card_id: give(t, A, 'Pulse Shield') });
    expect(r.events!.at(-1)).toEqual({ kind: 'shield_gained', public_key: A, amount: 4 });
    expect((r.state as AetherState).players[A]!.shield).toBe(5);
    const u = r.state as AetherState;
    const map = give(u, A, 'Star Map');
    const hand = [...u.deck.hands[A]!];
    const top = u.deck.draw_pile.slice(-2).reverse();
    r = act(h, u, A, { kind: 'play_card', card_id: map });
    expect(kinds(r.events)).toEqual(['spell_cast', 'card_drawn', 'card_drawn']);
    expect((r.state as AetherState).deck.hands[A]).toEqual([...hand.filter((id) => id !== map), ...top]);
  });

  it('Star Map from an empty pile deals growing fatigue and can defeat its caster, who then loses the turn', () => {
    const { h, s } = table();
    s.players[A]!.energy = 10;
    const map = give(s, A, 'Star Map');
    s.deck.discard_pile.push(...s.deck.draw_pile.splice(0));
    s.players[A]!.life = 2;
    s.players[A]!.fatigue = 1;
    const r = act(h, s, A, { kind: 'play_card', card_id: map });
    expect(r.events).toEqual([
      { kind: 'spell_cast', public_key: A, card: s.deck.catalog[map] },
      { kind: 'fatigue', public_key: A, amount: 2 },
      { kind: 'fatigue', public_key: A, amount: 3 },
      { kind: 'turn_started', public_key: B },
      { kind: 'fatigue', public_key: B, amount: 1 },
    ]);
    const t = r.state as AetherState;
    expect(t.players[A]).toMatchObject({ life: 0, defeated: true, fatigue: 3 });
    expect([t.current_player, t.turn_number, t.players[B]!.max_energy, t.players[B]!.energy]).toEqual([B, 1, 2, 2]);
  });

  it('Dissolve destroys an opposing unit of power three or less (bonus included)', () => {
    const { h, s } = table();
    s.players[A]!.energy = 10;
    const dis = give(s, A, 'Dissolve');
    const mine = field(s, A, 'Dawnling');
    const hound = field(s, B, 'Glass Hound');
    const lynx = field(s, C, 'Void Lynx');
    const scribe = field(s, D, 'Tide Scribe');
    s.unit_state[scribe]!.power_bonus = 2;
    expect(refusal(h, s, A, { kind: 'play_card', card_id: dis })).toBe('target_card_id must be text');
    expect(refusal(h, s, A, { kind: 'play_card', card_id: dis, target_card_id: 'zz' })).toBe('target unit does not exist');
    expect(refusal(h, s, A, { kind: 'play_card', card_id: dis, target_card_id: mine })).toBe('Dissolve must target an opposing unit');
    expect(refusal(h, s, A, { kind: 'play_card', card_id: dis, target_card_id: lynx })).toBe('the target unit is too powerful for Dissolve');
    expect(refusal(h, s, A, { kind: 'play_card', card_id: dis, target_card_id: scribe })).toBe('the target unit is too powerful for Dissolve');
    const r = act(h, s, A, { kind: 'play_card', card_id: dis, target_card_id: hound });
    expect(r.events!.at(-1)).toEqual({ kind: 'unit_dissolved', owner: B, card_id: hound });
    const t = r.state as AetherState;
    expect(t.deck.zones['units']![B]).toEqual([]);
    expect(t.unit_state[hound]).toBeUndefined();
    expect(t.deck.discard_pile).toEqual([hound, dis]);
  });

  it('Rally Spark readies every own unit for a second attack', () => {
    const { h, s } = table();
    s.players[A]!.energy = 10;
    const u1 = field(s, A, 'Dawnling', 'units', false);
    const u2 = field(s, A, 'Iron Finch', 'units', false);
    const r = act(h, s, A, { kind: 'play_card', card_id: give(s, A, 'Rally Spark') });
    expect(r.events!.at(-1)).toEqual({ kind: 'units_readied', public_key: A });
    const t = r.state as AetherState;
    expect([t.unit_state[u1]!.exhausted, t.unit_state[u2]!.exhausted]).toEqual([false, false]);
  });

  it('unit combat: simultaneous damage against guard, damage stays, a survivor is exhausted', () => {
    const { h, s } = table();
    const drake = field(s, A, 'Ember Drake'); // 6/4
    const giant = field(s, B, 'Verdant Giant'); // 4/6
    const guard = field(s, C, 'Aether Guard'); // 2/5
    const own = field(s, A, 'Tide Scribe'); // 2/3
    expect(refusal(h, s, A, { kind: 'attack', unit_id: drake, target_card_id: own })).toBe('a unit cannot attack an allied unit');
    expect(refusal(h, s, A, { kind: 'attack', unit_id: drake, target_card_id: 3 })).toBe('target_card_id must be text');
    expect(refusal(h, s, A, { kind: 'attack', unit_id: drake, target_card_id: 'nope' })).toBe('target unit does not exist');
    let r = act(h, s, A, { kind: 'attack', unit_id: drake, target_card_id: giant });
    expect(r.events).toEqual([
      { kind: 'unit_combat', attacker: drake, defender: giant, attack_power: 6, counter_power: 4 },
      { kind: 'unit_destroyed', card_id: giant },
      { kind: 'unit_destroyed', card_id: drake },
    ]);
    let t = r.state as AetherState;
    expect(t.deck.discard_pile).toEqual([giant, drake]);
    expect(Object.keys(t.unit_state)).toEqual([guard, own]);
    r = act(h, t, A, { kind: 'attack', unit_id: own, target_card_id: guard });
    t = r.state as AetherState;
    expect(kinds(r.events)).toEqual(['unit_combat']);
    expect(t.unit_state[own]).toEqual({ damage: 2, exhausted: true, power_bonus: 0 });
    expect(t.unit_state[guard]).toEqual({ damage: 2, exhausted: false, power_bonus: 0 });
  });

  it('a direct attack spends shield then life; the last channeler standing wins', () => {
    const { h, s } = table();
    const lynx = field(s, A, 'Void Lynx');
    s.unit_state[lynx]!.power_bonus = 1;
    expect(refusal(h, s, A, { kind: 'attack', unit_id: lynx })).toBe('target_public_key must identify an active opponent');
    expect(refusal(h, s, A, { kind: 'attack', unit_id: lynx, target_card_id: '', target_public_key: A })).toBe(
      'target_public_key must identify an active opponent',
    );
    s.players[B]!.shield = 2;
    let r = act(h, s, A, { kind: 'attack', unit_id: lynx, target_public_key: B, target_card_id: '' });
    expect(r.events).toEqual([{ kind: 'direct_attack', attacker: lynx, target: B, amount: 3 }]);
    expect((r.state as AetherState).players[B]).toMatchObject({ life: 17, shield: 0 });
    s.players[C]!.defeated = true;
    s.players[D]!.defeated = true;
    s.players[B]!.shield = 0;
    s.players[B]!.life = 4;
    r = act(h, s, A, { kind: 'attack', unit_id: lynx, target_public_key: B });
    expect(r).toMatchObject({ completed: true, outcome: A });
    expect(r.events!.at(-1)).toEqual({ kind: 'game_over', winner: A });
    const t = r.state as AetherState;
    expect([t.phase, t.winner, t.players[B]!.life, t.players[B]!.defeated]).toEqual(['completed', A, 0, true]);
    expect(refusal(h, t, A, { kind: 'end_turn' })).toBe('the match is complete');
    expect(h.proto_group_recovery_snapshot!(t)).toEqual({ restart_count: 0, public_outcome: A });
  });

  it('ending a turn: Sun Dial heals to the cap, the next active member gains Aether, readies units and draws', () => {
    const { h, s } = table();
    field(s, A, 'Sun Dial', 'relics');
    field(s, A, 'Sun Dial', 'relics');
    s.players[A]!.life = 19;
    const tired = field(s, C, 'Dawnling', 'units', false);
    s.players[B]!.defeated = true;
    s.players[C]!.max_energy = 10;
    const top = s.deck.draw_pile.at(-1)!;
    const r = act(h, s, A, { kind: 'end_turn' });
    expect(r.events).toEqual([
      { kind: 'relic_heal', public_key: A, amount: 1 },
      { kind: 'turn_started', public_key: C },
      { kind: 'card_drawn', public_key: C },
    ]);
    const t = r.state as AetherState;
    expect([t.turn_number, t.current_player, t.players[A]!.life]).toEqual([2, C, 20]);
    expect(t.players[C]).toMatchObject({ max_energy: 10, energy: 10 });
    expect(t.unit_state[tired]!.exhausted).toBe(false);
    expect(t.deck.hands[C]!.at(-1)).toBe(top);
  });

  it('fatigue at a turn start may defeat the next member: the turn passes on, and the last one wins', () => {
    const { h, s } = table();
    s.deck.discard_pile.push(...s.deck.draw_pile.splice(0));
    s.players[B]!.life = 1;
    s.players[C]!.fatigue = 2;
    let r = act(h, s, A, { kind: 'end_turn' });
    expect(r.events).toEqual([
      { kind: 'turn_started', public_key: B },
      { kind: 'fatigue', public_key: B, amount: 1 },
      { kind: 'turn_started', public_key: C },
      { kind: 'fatigue', public_key: C, amount: 3 },
    ]);
    expect((r.state as AetherState).current_player).toBe(C);
    s.players[C]!.life = 3;
    s.players[D]!.defeated = true;
    r = act(h, s, A, { kind: 'end_turn' });
    expect(kinds(r.events)).toEqual(['turn_started', 'fatigue', 'turn_started', 'fatigue', 'game_over']);
    expect([r.completed, r.outcome]).toEqual([true, A]);
  });

  it('conceding eliminates the member and hands the turn on; the last concession ends the match', () => {
    const { h, s } = table();
    let r = act(h, s, A, { kind: 'concede' });
    expect(r.events).toEqual([
      { kind: 'conceded', public_key: A },
      { kind: 'turn_started', public_key: B },
      { kind: 'card_drawn', public_key: B },
    ]);
    let t = r.state as AetherState;
    expect(t.players[A]).toMatchObject({ life: 0, defeated: true });
    expect(t.turn_number).toBe(1);
    t = act(h, t, B, { kind: 'concede' }).state as AetherState;
    expect(t.current_player).toBe(C);
    r = act(h, t, C, { kind: 'concede' });
    expect(r).toMatchObject({
      completed: true,
      outcome: D,
      events: [
        { kind: 'conceded', public_key: C },
        { kind: 'game_over', winner: D },
      ],
    });
  });

  it('views: own hand, public rows and discard, and only counts for other hands', () => {
    const { h, s } = table();
    const unit = field(s, B, 'Dawnling');
    field(s, C, 'Sun Dial', 'relics');
    const v = h.proto_group_view(s, byKey(A)) as AetherView;
    expect(Object.keys(v).sort()).toEqual(
      [
        'current_player',
        'discard',
        'draw_count',
        'hand_counts',
        'my_hand',
        'phase',
        'players',
        'recovery_notice',
        'relics',
        'restart_count',
        'turn_number',
        'turn_order',
        'unit_state',
        'units',
        'winner',
        'you',
      ].sort(),
    );
    expect(v.my_hand.map((c) => c.card_id)).toEqual(s.deck.hands[A]);
    expect(v.hand_counts).toEqual({ [A]: 5, [B]: 5, [C]: 5, [D]: 5 });
    expect(v.units[B]!.map((c) => c.card_id)).toEqual([unit]);
    expect(v.relics[C]![0]!.name).toBe('Sun Dial');
    expect(v.you).toEqual({ public_key: A, seat: 0 });
    const text = JSON.stringify(v);
    for (const id of [...s.deck.hands[B]!, ...s.deck.hands[C]!, ...s.deck.hands[D]!, ...s.deck.draw_pile]) expect(text).not.toContain(id);
  });

  it('legalActions lists only what the leader accepts, from the member view alone', () => {
    const { h, s } = table();
    s.players[A]!.energy = 3;
    field(s, A, 'Glass Hound');
    field(s, B, 'Dawnling');
    give(s, A, 'Dissolve');
    give(s, A, 'Cinder Shot');
    give(s, A, 'Ember Drake');
    const actions = legalActions(h.proto_group_view(s, byKey(A)) as AetherView);
    expect(actions.at(-1)).toEqual({ kind: 'end_turn' });
    expect(actions.some((a) => a.kind === 'play_card' && s.deck.catalog[a.card_id]!.name === 'Ember Drake')).toBe(false);
    for (const a of actions) expect(refusal(h, s, A, a), JSON.stringify(a)).toBe('accepted');
    expect(legalActions(h.proto_group_view(s, byKey(B)) as AetherView)).toEqual([]);
  });
});

describe('Aether Sigil: recovery', () => {
  it('keeps only public facts across a leader change and deals a fresh match', () => {
    const { h, s } = table();
    const snap = h.proto_group_recovery_snapshot!(s);
    expect(snap).toEqual({ restart_count: 0, public_outcome: '' });
    const r = h.proto_group_restore!(structuredClone(snap), MEMBERS, 2) as AetherState;
    expect(r).toMatchObject({
      phase: 'playing',
      restart_count: 1,
      turn_number: 1,
      current_player: A,
      recovery_notice: 'The previous hidden deal was discarded after a Leader change.',
    });
    expect(r.deck.draw_pile).not.toEqual(s.deck.draw_pile);
    const changed = h.proto_group_on_leader_changed!(r, 'a'.repeat(64), 'b'.repeat(64));
    expect((changed.state as AetherState).recovery_notice).toBe('Leader changed from aaaaaaaa to bbbbbbbb; a fresh shared deck was dealt.');
    expect(changed.events).toEqual([{ kind: 'match_restarted_after_leader_change', old_leader: 'a'.repeat(64), new_leader: 'b'.repeat(64), restart_count: 1 }]);
    expect(h.proto_group_member_left(r, MEMBERS[2]!, 'timeout').events).toEqual([{ kind: 'member_disconnected', public_key: C, reason: 'timeout' }]);
    expect(h.proto_group_member_joined(r, MEMBERS[2]!).events).toEqual([{ kind: 'member_rejoined', public_key: C, seat: 2 }]);
  });
});

/**
 * Checks one state: cards conserved, and no view holds another member's hand or the draw order; returns the
 * views (in seat order). It runs at every step of every game: an assertion is built only where its plain
 * check fails.
 */
function checkViews(h: GroupHooks, s: AetherState): AetherView[] {
  return MEMBERS.map((m) => {
    const v = h.proto_group_view(s, m) as AetherView;
    const text = JSON.stringify(v);
    const hidden = [...s.deck.draw_pile, ...Object.entries(s.deck.hands).flatMap(([k, ids]) => (k === m.public_key ? [] : ids))];
    for (const id of hidden) if (text.includes(id)) expect(text.includes(id), `seat ${m.seat} sees a hidden card`).toBe(false);
    const onTable = Object.values(v.units).flat().length + Object.values(v.relics).flat().length;
    const cards = Object.values(v.hand_counts).reduce((a, b) => a + b, 0) + v.discard.length + v.draw_count + onTable;
    if (cards !== 72) expect(cards).toBe(72);
    return v;
  });
}

interface Step {
  actor: string;
  action: Action;
}
/**
 * One seeded game through the hooks: the acting member plays autoplay's choice from its own view (the views
 * checkViews checked); with `fuzz`, a random and often illegal action from any member comes first now and
 * then (recorded too).
 */
function playGame(options: Record<string, unknown>, seed: number, fuzz = false) {
  const h = hooks(options, seed);
  const rnd = mulberry32(seed * 7919);
  let s = h.proto_group_initial_state(MEMBERS) as AetherState;
  const steps: Step[] = [];
  let outcome: string | null | undefined;
  for (let n = 0; n < 5000 && !outcome; n++) {
    const views = checkViews(h, s);
    if (fuzz && rnd() < 0.35) {
      const step = fuzzStep(s, rnd);
      steps.push(step);
      try {
        const r = act(h, s, step.actor, step.action);
        s = r.state as AetherState;
        if (r.completed) outcome = r.outcome;
      } catch {
        // refused: the state stays
      }
      continue;
    }
    const actor = byKey(s.current_player);
    for (const other of MEMBERS) {
      if (other === actor) continue;
      const idle = aether.autoplay!(views[other.seat]!, other, rnd);
      if (idle !== null) expect(idle).toBeNull();
    }
    const action = aether.autoplay!(views[actor.seat]!, actor, rnd);
    if (action === null) expect(action).not.toBeNull();
    steps.push({ actor: actor.public_key, action: action! });
    const r = act(h, s, actor.public_key, action!);
    s = r.state as AetherState;
    if (r.completed) outcome = r.outcome;
  }
  expect(aether.autoplay!(h.proto_group_view(s, byKey(A)), byKey(A), rnd)).toBeNull();
  return { h, s, steps, outcome };
}

function fuzzStep(s: AetherState, rnd: () => number): Step {
  const pickOf = <T>(xs: readonly T[]): T | undefined => (xs.length ? xs[Math.floor(rnd() * xs.length)] : undefined);
  const actor = rnd() < 0.8 ? s.current_player : pickOf([A, B, C, D])!;
  const units = Object.values(s.deck.zones['units'] ?? {}).flat();
  const anyId = pickOf([...(s.deck.hands[actor] ?? []), ...units, ...s.deck.discard_pile, 'x', '']);
  const target = pickOf<unknown>([A, B, C, D, undefined, 3, '']);
  const targetCard = pickOf<unknown>([...units, undefined, '', 0, 'nope', 5]);
  const kind = pickOf(['play_card', 'play_card', 'attack', 'attack', 'end_turn', 'concede', 'dance'])!;
  if (kind === 'concede' && rnd() < 0.8) return { actor, action: { kind: 'attack', unit_id: pickOf(units) ?? 'x' } };
  const action: Action = { kind };
  if (kind === 'play_card') action['card_id'] = rnd() < 0.05 ? 42 : anyId;
  if (kind === 'attack') action['unit_id'] = pickOf(units) ?? anyId;
  if (target !== undefined) action['target_public_key'] = target;
  if (targetCard !== undefined) action['target_card_id'] = targetCard;
  return { actor, action };
}

describe('Aether Sigil: whole games', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('seed %i plays to completion from each member own view, hiding hands', (seed) => {
    const { s, outcome, steps } = playGame({ deal_seed: `g${seed}`, ...(seed % 2 ? {} : { starting_life: 30 }) }, seed);
    expect(s.phase).toBe('completed');
    expect(outcome).toBe(s.winner);
    const alive = s.turn_order.filter((k) => !s.players[k]!.defeated);
    expect(alive).toEqual([outcome]);
    expect(s.players[outcome!]!.life).toBeGreaterThan(0);
    for (const k of s.turn_order) if (k !== outcome) expect(s.players[k]!.life).toBe(0);
    expect(steps.length).toBeGreaterThan(10);
  });
});

describe('Aether Sigil through the group leader: four replicas, each acting from its own verified view', () => {
  const crypto = getCrypto('js');
  const seats = derivedSeats(crypto, 'aether', 4, 'm');
  const { pk, members } = seats;
  const config = builtinGroupConfig('aether-sigil');

  function run(seed: number, failoverAt: number | null) {
    const options = { deal_seed: `leader${seed}` };
    const table = startTable({ crypto, seats, config, groupId: `grp-aether-${seed}`, hooks: aether.create(hostContext(options, seed)) as GroupHooks });
    const { replicas, deliver } = table;
    let { leader } = table;
    const seqs = [0, 0, 0, 0];
    const rnds = members.map((_, i) => mulberry32(seed * 100 + i));
    let failedOver = false;
    for (let n = 0; n < 5000 && !leader.completed; n++) {
      const views = replicas.map((r) => r.view as AetherView);
      // Per step: each assertion is built only where its plain check fails.
      const hands = views.map((v) => v.my_hand.map((c) => c.card_id));
      const distinct = new Set(hands.flat()).size;
      if (distinct !== hands.flat().length) expect(distinct).toBe(hands.flat().length);
      views.forEach((v, i) => {
        const text = JSON.stringify(v);
        hands.forEach((hd, j) => {
          if (j !== i) for (const id of hd) if (text.includes(id)) expect(text.includes(id)).toBe(false);
        });
      });
      const picks = members.map((m, i) => aether.autoplay!(views[i]!, m, rnds[i]!));
      const picked = picks.filter((p) => p !== null);
      if (picked.length !== 1) expect(picked).toHaveLength(1);
      const i = picks.findIndex((p) => p !== null);
      const { envelopes, receipt } = leader.applyInput({ actor_public_key: pk(i), client_seq: ++seqs[i]!, action: picks[i]! });
      if (receipt.status !== 'accepted') expect(receipt.status).toBe('accepted');
      deliver(envelopes);
      const checkpoint = JSON.stringify(replicas[2]!.checkpoint);
      if (checkpoint.includes('card_id')) expect(checkpoint).not.toContain('card_id');
      if (checkpoint.includes('draw_pile')) expect(checkpoint).not.toContain('draw_pile');
      if (failoverAt !== null && n === failoverAt && !leader.completed) {
        failedOver = true;
        const before = (replicas[2]!.view as AetherView).my_hand.map((c) => c.card_id);
        leader = table.failover(aether.create(hostContext(options, seed + 1)) as GroupHooks, 2);
        const v = replicas[2]!.view as AetherView;
        expect(v).toMatchObject({
          phase: 'playing',
          restart_count: 1,
          turn_number: 1,
          current_player: pk(0),
          recovery_notice: `Leader changed from ${pk(0).slice(0, 8)} to ${pk(2).slice(0, 8)}; a fresh shared deck was dealt.`,
        });
        expect(v.my_hand).toHaveLength(5);
        // deal_seed:1 deals other cards than deal_seed:0.
        expect(v.my_hand.map((c) => c.card_id)).not.toEqual(before);
        for (const p of Object.values(v.players)) expect([p.life, p.defeated]).toEqual([20, false]);
      }
    }
    expect(leader.completed).toBe(true);
    const final = replicas[0]!.view as AetherView;
    expect(final.phase).toBe('completed');
    expect(final.winner).toBe(leader.outcome);
    expect(
      Object.entries(final.players)
        .filter(([, p]) => !p.defeated)
        .map(([k]) => k),
    ).toEqual([leader.outcome]);
    for (const r of replicas) expect([r.seq, r.frameHash]).toEqual([leader.seq, leader.frameHash]);
    return failedOver;
  }

  it.each([1, 2])(
    'seed %i: a whole game, every replica verifying every envelope',
    (seed) => {
      expect(run(seed, null)).toBe(false);
    },
    120_000,
  );

  it('a leader change mid-game discards the hidden deal, deals afresh, and the new game completes', () => {
    expect(run(3, 12)).toBe(true);
  }, 120_000);
});

// The reference's own hooks, run by python3, replaying the same steps. Every request of this file is built
// before its first test and answered by one python3 process, which runs while the other tests do; each
// test below then compares its own answer.
const haveRef = needReferencePython(['aigenora.proto.shared_deck', 'aigenora.proto.hooks'], 'the reference cross-check of Aether Sigil');

type Op = Record<string, unknown>;
/** Runs the ops through our hooks exactly as aether-sigil-ref.py runs them through the reference's. */
function ours(h: GroupHooks, ops: Op[]): unknown[] {
  let state: GroupState | null = null;
  const out: unknown[] = [];
  for (const op of ops) {
    try {
      if (op['op'] === 'init') {
        state = h.proto_group_initial_state(structuredClone(op['members'] as GroupMember[]));
        out.push({ state });
      } else if (op['op'] === 'act') {
        const r = h.proto_group_handle(structuredClone(state!), structuredClone(op['actor'] as GroupMember), structuredClone(op['action'] as Action));
        state = r.state;
        out.push({ state, events: r.events ?? [], completed: r.completed ?? false, outcome: r.outcome ?? null });
      } else if (op['op'] === 'views') {
        out.push({ views: (op['members'] as GroupMember[]).map((m) => h.proto_group_view(state!, m)) });
      } else if (op['op'] === 'snapshot') {
        out.push({ snapshot: h.proto_group_recovery_snapshot!(state!) });
      } else if (op['op'] === 'restore') {
        state = h.proto_group_restore!(structuredClone(op['checkpoint'] as GroupState), structuredClone(op['members'] as GroupMember[]), 2);
        out.push({ state });
      } else if (op['op'] === 'load') {
        state = structuredClone(op['state'] as GroupState);
        out.push({ state });
      } else if (op['op'] === 'leader_changed') {
        const r = h.proto_group_on_leader_changed!(structuredClone(state!), op['old'] as string, op['new'] as string);
        state = r.state;
        out.push({ state, events: r.events ?? [] });
      }
    } catch (e) {
      out.push({ error: (e as Error).message });
    }
  }
  return out;
}

/**
 * One comparison: the ops, and the request that asks the reference to run them. Our hooks run them when the
 * test compares (kept from the beforeAll to the test, every state and view of the games would weigh on
 * every test between).
 */
interface Comparison {
  options: Record<string, unknown>;
  ops: Op[];
  seed: number;
  request: unknown;
}
const comparison = (options: Record<string, unknown>, ops: Op[], seed = 1): Comparison => ({ options, ops, seed, request: { options, steps: ops } });

/** The reference's outputs for `c`, each compared with what our hooks make of the same ops; returns ours. */
async function compare(c: Comparison): Promise<unknown[]> {
  const theirs = await reference.answer<unknown[]>(c);
  const mine = ours(hooks(c.options, c.seed), c.ops);
  expect(theirs.length).toBe(mine.length);
  mine.forEach((m, i) => expectTheirsCanonical(theirs[i], m, () => `step ${i}: ${JSON.stringify(c.ops[i]).slice(0, 200)}`));
  return mine;
}

const SEEDS = [1, 2, 3, 4, 5, 6];
/** A seeded game with random refused and accepted actions, replayed op by op with the views after each. */
function seededCase(seed: number) {
  const options = { deal_seed: `cross-${seed}`, ...(seed % 3 === 0 ? { starting_life: 12 } : {}) };
  const { steps, outcome } = playGame(options, seed, true);
  const ops: Op[] = [
    { op: 'init', members: MEMBERS },
    { op: 'views', members: MEMBERS },
  ];
  for (const step of steps) ops.push({ op: 'act', actor: byKey(step.actor), action: step.action }, { op: 'views', members: MEMBERS });
  ops.push({ op: 'snapshot' }, { op: 'act', actor: MEMBERS[0], action: { kind: 'end_turn' } });
  return { outcome, comparison: comparison(options, ops, seed) };
}

/** The hand-built refusals run through the reference too, from its own seeded table state; then the option bounds. */
function refusalCases(): Comparison[] {
  const { s } = table();
  const lynx = s.deck.hands[A]!.find((id) => s.deck.catalog[id]!.name !== 'Dawnling');
  const ops: Op[] = [
    { op: 'init', members: MEMBERS },
    { op: 'act', actor: MEMBERS[1], action: { kind: 'end_turn' } },
    { op: 'act', actor: MEMBERS[0], action: { kind: 'dance' } },
    { op: 'act', actor: MEMBERS[0], action: { kind: 'play_card', card_id: 3 } },
    { op: 'act', actor: MEMBERS[0], action: { kind: 'play_card', card_id: s.deck.hands[B]![0] } },
    { op: 'act', actor: MEMBERS[0], action: { kind: 'attack', unit_id: 'x', target_public_key: B } },
    ...s.deck.hands[A]!.flatMap((id) =>
      [undefined, A, B, 7].map((target) => ({
        op: 'act',
        actor: MEMBERS[0],
        action: { kind: 'play_card', card_id: id, ...(target === undefined ? {} : { target_public_key: target }), target_card_id: 'nope' },
      })),
    ),
    { op: 'views', members: MEMBERS },
    { op: 'act', actor: MEMBERS[0], action: { kind: 'concede' } },
    { op: 'act', actor: MEMBERS[1], action: { kind: 'play_card', card_id: lynx } },
    { op: 'init', members: MEMBERS.slice(0, 3) },
  ];
  return [
    comparison({ deal_seed: 'table' }, ops),
    ...[9, 51, 10, 50].map((life) => comparison({ deal_seed: 'x', starting_life: life }, [{ op: 'init', members: MEMBERS }])),
  ];
}

/** Every action from the same hand-built tables. */
function handBuiltCase(): Comparison {
  const tries = (s: AetherState, actor: string, actions: Action[]): Op[] =>
    actions.flatMap((action) => [
      { op: 'load', state: s },
      { op: 'act', actor: byKey(actor), action },
    ]);
  // A: ten Aether, a full relic row (Living Forge, Prism Lens), a full unit row; B shielded; D defeated.
  const { s: t1 } = table();
  Object.assign(t1.players[A]!, { energy: 10, max_energy: 9, life: 15 });
  Object.assign(t1.players[B]!, { shield: 1, life: 3 });
  Object.assign(t1.players[D]!, { defeated: true, life: 0 });
  field(t1, A, 'Living Forge', 'relics');
  field(t1, A, 'Prism Lens', 'relics');
  const [d1, d2] = [field(t1, A, 'Dawnling'), field(t1, A, 'Ember Drake')];
  const tired = field(t1, A, 'Glass Hound', 'units', false);
  const [lynx, scribe, hound, guard] = [field(t1, B, 'Void Lynx'), field(t1, B, 'Tide Scribe'), field(t1, C, 'Glass Hound'), field(t1, D, 'Aether Guard')];
  t1.unit_state[scribe]!.power_bonus = 2;
  t1.unit_state[d1]!.damage = 0;
  const hand1 = ['Iron Finch', 'Dissolve', 'Cinder Shot', 'Star Map', 'Mending Rain', 'Pulse Shield', 'Rally Spark', 'Deep Reservoir', 'Sun Dial'].map((n) =>
    give(t1, A, n),
  );
  const targets: unknown[] = [undefined, A, B, C, D, 'f'.repeat(64), 1, ''];
  const cards: unknown[] = [undefined, d1, lynx, scribe, hound, guard, 'nope', 2, ''];
  const a1: Action[] = [
    ...hand1.flatMap((card_id) => [
      ...targets.map((t) => ({ kind: 'play_card', card_id, target_public_key: t })),
      ...cards.map((c) => ({ kind: 'play_card', card_id, target_card_id: c })),
    ]),
    ...[d1, d2, tired, lynx, 'x', 5].flatMap((unit_id) => [
      ...targets.map((t) => ({ kind: 'attack', unit_id, target_public_key: t })),
      ...cards.map((c) => ({ kind: 'attack', unit_id, target_card_id: c, target_public_key: C })),
    ]),
    { kind: 'end_turn' },
    { kind: 'concede' },
  ];
  // A second table: an empty pile, a Sun Dial, fragile opponents, so turns hand on through fatigue.
  const { s: t2 } = table({ starting_life: 12 });
  const map = give(t2, A, 'Star Map');
  const rain = give(t2, A, 'Mending Rain');
  const res = give(t2, A, 'Deep Reservoir');
  field(t2, A, 'Sun Dial', 'relics');
  t2.deck.discard_pile.push(...t2.deck.draw_pile.splice(0));
  Object.assign(t2.players[A]!, { energy: 4, max_energy: 10, life: 11, fatigue: 1 });
  Object.assign(t2.players[B]!, { life: 1, fatigue: 0 });
  Object.assign(t2.players[C]!, { life: 2, fatigue: 1, shield: 1 });
  const a2: Action[] = [
    { kind: 'end_turn' },
    { kind: 'play_card', card_id: map },
    { kind: 'play_card', card_id: rain },
    { kind: 'play_card', card_id: res },
    { kind: 'concede' },
  ];
  const t3 = structuredClone(t2);
  Object.assign(t3.players[D]!, { defeated: true, life: 0 });
  t3.players[A]!.life = 2;
  const t4 = structuredClone(t2);
  t4.players[A]!.energy = 1;
  const ops = [...tries(t1, A, a1), ...tries(t2, A, a2), ...tries(t3, A, a2), ...tries(t4, A, a2), ...tries(t1, B, [{ kind: 'end_turn' }])];
  return comparison({ deal_seed: 'table', starting_life: 20 }, ops);
}

/** The snapshot, restores and the leader-change notice. */
function recoveryCase(): Comparison {
  const ops: Op[] = [
    { op: 'init', members: MEMBERS },
    { op: 'act', actor: MEMBERS[0], action: { kind: 'end_turn' } },
    { op: 'snapshot' },
    { op: 'restore', checkpoint: { restart_count: 0, public_outcome: '' }, members: MEMBERS },
    { op: 'leader_changed', old: A, new: C },
    { op: 'views', members: MEMBERS },
    { op: 'restore', checkpoint: { restart_count: 4 }, members: [...MEMBERS.slice(0, 3), { ...MEMBERS[3]!, status: 'left' }] },
    { op: 'restore', checkpoint: {}, members: MEMBERS },
  ];
  return comparison({ deal_seed: 'recover' }, ops);
}

const cases: {
  seeded: Record<number, Built<ReturnType<typeof seededCase>>>;
  refusals?: Built<Comparison[]>;
  handBuilt?: Built<Comparison>;
  recovery?: Built<Comparison>;
} = { seeded: {} };

const reference = referenceRequests(haveRef, 'aether-sigil-ref.py', (requests) => {
  for (const seed of SEEDS) cases.seeded[seed] = build(() => seededCase(seed));
  cases.refusals = build(refusalCases);
  cases.handBuilt = build(handBuiltCase);
  cases.recovery = build(recoveryCase);
  const all: Comparison[] = [];
  for (const c of Object.values(cases.seeded)) if ('ok' in c) all.push(c.ok.comparison);
  if ('ok' in cases.refusals) all.push(...cases.refusals.ok);
  for (const c of [cases.handBuilt, cases.recovery]) if ('ok' in c) all.push(c.ok);
  for (const c of all) requests.add(c, c.request);
});

describe.skipIf(!haveRef)("Aether Sigil against the reference's hooks", () => {
  const seen = new Set<string>();
  it.each(SEEDS)('seeded game %i with random refused and accepted actions: the same deal, states, events, views, refusals and outcome', async (seed) => {
    const { outcome, comparison: c } = built(cases.seeded[seed]);
    const mine = await compare(c);
    for (const r of mine) {
      const x = r as { error?: string; events?: { kind: string; card?: { name: string } }[] };
      if (x.error) seen.add(`refused: ${x.error}`);
      for (const e of x.events ?? []) seen.add(e.card ? `${e.kind}: ${e.card.name}` : e.kind);
    }
    const errors = mine.filter((r) => (r as { error?: string }).error).length;
    expect(errors).toBeGreaterThan(10);
    expect((mine.at(-2) as { snapshot: unknown }).snapshot).toEqual({ restart_count: 0, public_outcome: outcome });
    expect(mine.at(-1)).toEqual({ error: 'the match is complete' });
  });

  it('those games met every card, every event kind and the common refusals', () => {
    const names = cardFaces().map((f) => f.name);
    const summoned = new Set([...seen].filter((k) => /^(unit_summoned|relic_played|spell_cast): /.test(k)).map((k) => k.split(': ')[1]));
    expect(names.filter((n) => !summoned.has(n))).toEqual([]);
    for (const kind of [
      'turn_started',
      'card_drawn',
      'fatigue',
      'spell_damage',
      'healed',
      'unit_dissolved',
      'shield_gained',
      'units_readied',
      'unit_combat',
      'unit_destroyed',
      'direct_attack',
      'relic_heal',
      'conceded',
      'game_over',
    ])
      expect(seen, kind).toContain(kind);
    for (const text of [
      "it is not this Member's turn",
      'unsupported Aether Sigil action',
      'card_id must be text',
      "card is not in this Member's hand",
      'not enough Aether',
      'unit_id is not controlled by this Member',
      'target_public_key must identify an active opponent',
      'target unit does not exist',
      'a unit cannot attack an allied unit',
    ])
      expect(seen, text).toContain(`refused: ${text}`);
  });

  it('every refusal text of the hand-built tables is the reference text', async () => {
    for (const c of built(cases.refusals)) await compare(c);
  });

  it('hand-built tables: every rule and refusal, each action from the same table, as the reference decides', async () => {
    const mine = await compare(built(cases.handBuilt));
    const texts = new Set(mine.map((r) => (r as { error?: string }).error).filter(Boolean));
    for (const text of [
      'the unit row is full',
      'the relic row is full',
      'this unit is exhausted',
      'Dissolve must target an opposing unit',
      'the target unit is too powerful for Dissolve',
      'target_card_id must be text',
      'target unit does not exist',
      'a unit cannot attack an allied unit',
      'target_public_key must identify an active opponent',
      'unit_id is not controlled by this Member',
      'not enough Aether',
    ])
      expect(texts, text).toContain(text);
    expect(mine.filter((r) => (r as { completed?: boolean }).completed).length).toBeGreaterThan(0);
  });

  it('recovery: the snapshot, a restore from it, and the leader-change notice are the reference ones', async () => {
    const mine = await compare(built(cases.recovery));
    expect((mine[3] as { state: AetherState }).state.restart_count).toBe(1);
  });
});
