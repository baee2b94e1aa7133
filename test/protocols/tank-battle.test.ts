// Tank Battle: the rules on hand-built worlds, the command validation, whole matches played tick by
// tick as the realtime engine schedules them (commands for tick + input_delay, validated by the host
// when they are sent, applied when their tick is stepped), and, where the reference's Python imports,
// its own simulation run on the same commands.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { needReferencePython } from '../shared/require.js';
import { seeded } from '../../ts/engine/local.js';
import type { RealtimeHooks } from '../../ts/hooks/types.js';
import { BUILTINS } from '../../ts/protocols/index.js';
import tank, {
  DEFAULT_MAP,
  SHORT_MAP,
  initWorld,
  parseMap,
  step,
  validateCommands,
  type Command,
  type Dir,
  type Rules,
  type World,
} from '../../ts/protocols/tank-battle/hooks.js';
import { expectEqual } from './fast-expect.js';
import { build, built, referenceRequests, type Built } from './reference-batch.js';
import { attempt } from './group-fixtures.js';

const SPEC = JSON.parse(readFileSync(new URL('../../ts/protocols/tank-battle/spec.json', import.meta.url), 'utf8')) as {
  flow: { realtime: { input_delay_ticks: number } };
};
const DELAY = SPEC.flow.realtime.input_delay_ticks;
const PROFILES = BUILTINS.find((b) => b.alias === 'tank-battle-v1')!.profiles;

const rules = (o: Partial<Rules> = {}, b: Partial<Rules['balance']> = {}): Rules => ({
  balance: { hp: 4, speed: 180, fire_cooldown: 7, bullet_speed: 560, ...b },
  team_size: 1,
  max_ticks: 1000,
  friendly_fire: false,
  pickup_mode: 'none',
  powerup_duration_ticks: 100,
  ...o,
});
/** A walled square of floor, n cells a side including the border. */
const open = (n: number) => Array.from({ length: n }, (_, r) => (r === 0 || r === n - 1 ? '#'.repeat(n) : `#${'.'.repeat(n - 2)}#`)).join('\n');
/** A world on `map` with tanks moved to the given centres (fixed point). */
function world(map: string, r: Rules, at: Record<string, [number, number]> = {}): World {
  const w = initWorld(map, r);
  for (const [id, [x, y]] of Object.entries(at))
    Object.assign(
      w.tanks.find((t) => t.id === id)!,
      { x, y },
    );
  return w;
}
const cmd = (unit_id: string, move: Dir = 'none', aim: Dir = 'none', fire = false): Command => ({ unit_id, move, aim, fire });
/** The host's hooks with `options`, no files and unseeded randomness. */
const hostHooks = (options: Record<string, unknown>) =>
  tank.create({ role: 'host', options, args: [], stateDir: '/nonexistent', decision: null, random: Math.random });
const tankOf = (w: World, id: string) => w.tanks.find((t) => t.id === id)!;
/** Runs ticks with the same commands each tick (commands persist in the world anyway). */
function run(w: World, n: number, host: Command[] = [], guest: Command[] = []): World {
  for (let i = 0; i < n; i++) w = step(w, host, guest);
  return w;
}

/** Canonical JSON as the realtime wire hashes it: keys sorted, compact. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
/** Every number in `v` is a safe integer (no fixed point drifted into floats). */
function integersOnly(v: unknown): boolean {
  if (typeof v === 'number') return Number.isSafeInteger(v);
  if (Array.isArray(v)) return v.every(integersOnly);
  if (v !== null && typeof v === 'object') return Object.values(v).every(integersOnly);
  return true;
}

describe('the map', () => {
  it('the default battlefield is 31x31 and the same seen from either side', () => {
    const g = parseMap(DEFAULT_MAP);
    expect([g.length, g[0]!.length]).toEqual([31, 31]);
    for (let r = 0; r < 31; r++) for (let c = 0; c < 31; c++) expect(g[r]![c]).toBe(g[30 - r]![30 - c]);
    expect(DEFAULT_MAP).toContain('WWW.WWW.WWW.WWW');
    const s = parseMap(SHORT_MAP);
    for (let r = 0; r < 9; r++) for (let c = 0; c < 9; c++) expect(s[r]![c]).toBe(s[8 - r]![8 - c]);
  });

  it('refuses maps it cannot play, with the reason', () => {
    expect(() => parseMap('#####\n#...#\n#####')).toThrow('map must contain between 5 and 128 non-empty rows');
    expect(() => parseMap('####\n#..#\n#..#\n#..#\n####')).toThrow('map width must be between 5 and 128 cells');
    expect(() => parseMap(open(5).replace('#...#', '#....#'))).toThrow('map row 1 width 6 != 5');
    expect(() => parseMap(open(5).replace('#...#', '#.X?#'))).toThrow("map row 1 contains unsupported tiles: ['?', 'X']");
    expect(() => parseMap(open(5).replace(/^#####/, '##.##'))).toThrow('map top and bottom borders must be steel (#)');
    expect(() => parseMap(open(5).replace('#...#', '....#'))).toThrow('map left and right borders must be steel (#)');
    // Blank lines and CRLF are fine.
    expect(parseMap(`\n${open(5).replace(/\n/g, '\r\n')}\n\n`)).toHaveLength(5);
  });

  it('a map too small for both armies is refused when the hooks start', () => {
    expect(() => hostHooks({ team_size: 5, map_text: open(5) })).toThrow('map has 9 spawnable cells but 10 are required');
    expect(() => hostHooks({ map_text: '#' })).toThrow('map must contain');
  });
});

describe('the initial world', () => {
  it('the guest spawns at the first free cells, the host at the last, facing each other', () => {
    const w = initWorld(open(7), rules({ team_size: 2 }));
    expect(w.tanks.map((t) => [t.id, t.team, t.x, t.y, t.facing, t.hp])).toEqual([
      ['h0', 'host', 5500, 5500, 'up', 4],
      ['h1', 'host', 4500, 5500, 'up', 4],
      ['g0', 'guest', 1500, 1500, 'down', 4],
      ['g1', 'guest', 2500, 1500, 'down', 4],
    ]);
    expect(w).toMatchObject({ schema_version: 1, tick: 0, rows: 7, cols: 7, bullets: [], host_alive: 2, guest_alive: 2, game_over: false, winner: 'none' });
    expect(integersOnly(w)).toBe(true);
  });

  it('pickup cells become floor; with powerups, mirrored pickups get the same kind', () => {
    const map = ['#######', '#P....#', '#..P..#', '#.....#', '#..P..#', '#....P#', '#######'].join('\n');
    const none = initWorld(map, rules());
    expect(none.pickups).toEqual([]);
    expect(none.grid.flat()).not.toContain('P');
    const on = initWorld(map, rules({ pickup_mode: 'powerups' }));
    expect(on.pickups.map((p) => [p.id, p.kind, p.x, p.y, p.active])).toEqual([
      ['p0', 'repair', 1500, 1500, true],
      ['p1', 'speed', 3500, 2500, true],
      ['p2', 'speed', 3500, 4500, true],
      ['p3', 'repair', 5500, 5500, true],
    ]);
  });
});

describe('movement', () => {
  const w0 = () => world(open(9), rules(), { g0: [1500, 1500], h0: [7500, 7500] });

  it('a tank moves its speed each tick until told otherwise, facing its move unless it aims', () => {
    let w = step(w0(), [cmd('h0', 'up')], [cmd('g0', 'right', 'down')]);
    expect([tankOf(w, 'h0').y, tankOf(w, 'h0').facing]).toEqual([7320, 'up']);
    expect([tankOf(w, 'g0').x, tankOf(w, 'g0').facing]).toEqual([1680, 'down']);
    w = run(w, 2);
    expect([tankOf(w, 'h0').y, tankOf(w, 'g0').x]).toEqual([6960, 2040]);
    w = step(w, [cmd('h0', 'none', 'left')], []);
    expect([tankOf(w, 'h0').y, tankOf(w, 'h0').facing, tankOf(w, 'g0').x]).toEqual([6960, 'left', 2220]);
  });

  it('steel, brick and water stop a tank whole; bush does not; nothing moves part way', () => {
    const map = ['#######', '#.....#', '#.B.W.#', '#.....#', '#.S...#', '#.....#', '#######'].join('\n');
    const at = (x: number, y: number) => world(map, rules(), { g0: [x, y], h0: [5500, 5500] });
    expect(tankOf(step(at(1500, 1500), [], [cmd('g0', 'up')]), 'g0').y).toBe(1500); // border steel
    expect(tankOf(step(at(1500, 1500), [], [cmd('g0', 'left')]), 'g0').x).toBe(1500);
    expect(tankOf(step(at(2500, 1500), [], [cmd('g0', 'down')]), 'g0').y).toBe(1500); // brick below
    expect(tankOf(step(at(4500, 1500), [], [cmd('g0', 'down')]), 'g0').y).toBe(1500); // water below
    expect(tankOf(step(at(1500, 1500), [], [cmd('g0', 'down')]), 'g0').y).toBe(1680); // open below
    expect(tankOf(step(at(2500, 3500), [], [cmd('g0', 'down')]), 'g0').y).toBe(3680); // bush below
    // 140 units either side of a lane's middle still fit between walls; 141 do not.
    expect(tankOf(step(at(3640, 1500), [], [cmd('g0', 'down')]), 'g0').y).toBe(1680);
    expect(tankOf(step(at(3641, 1500), [], [cmd('g0', 'down')]), 'g0').y).toBe(1500);
  });

  it('moves are simultaneous: tanks driving into each other both stay, whoever they belong to', () => {
    let w = step(world(open(9), rules(), { g0: [1500, 4500], h0: [2400, 4500] }), [cmd('h0', 'left')], [cmd('g0', 'right')]);
    expect([tankOf(w, 'g0').x, tankOf(w, 'h0').x]).toEqual([1500, 2400]);
    // Only one moving: it stops short of the other, which stays.
    w = step(world(open(9), rules(), { g0: [1500, 4500], h0: [2300, 4500] }), [], [cmd('g0', 'right')]);
    expect(tankOf(w, 'g0').x).toBe(1500);
    // Edges may touch: 720 apart is not an overlap.
    w = step(world(open(9), rules(), { g0: [1500, 4500], h0: [2400, 4500] }), [], [cmd('g0', 'right')]);
    expect(tankOf(w, 'g0').x).toBe(1680);
    // A queue behind a tank stopped by a wall stops too, though its own proposal was free.
    w = world(open(7), rules({ team_size: 2 }), { h0: [5500, 3500], h1: [4780, 3500], g0: [1500, 1500], g1: [1500, 5500] });
    w = step(w, [cmd('h0', 'right'), cmd('h1', 'right')], []);
    expect([tankOf(w, 'h0').x, tankOf(w, 'h1').x]).toEqual([5500, 4780]);
    // Moving apart is fine.
    w = step(world(open(9), rules(), { g0: [1500, 4500], h0: [2300, 4500] }), [cmd('h0', 'right')], [cmd('g0', 'left')]);
    expect([tankOf(w, 'g0').x, tankOf(w, 'h0').x]).toEqual([1500, 2480]);
  });

  it('a speed powerup makes a tank half again as fast until it expires', () => {
    const w = world(open(9), rules(), { g0: [1500, 1500] });
    tankOf(w, 'g0').speed_until = 2;
    const a = step(w, [], [cmd('g0', 'down')]);
    expect(tankOf(a, 'g0').y).toBe(1770);
    expect(tankOf(step(a, [], []), 'g0').y).toBe(1950);
  });
});

describe('firing and bullets', () => {
  it('a held trigger fires from the muzzle every fire_cooldown ticks', () => {
    let w = world(open(9), rules(), { g0: [1500, 1500], h0: [7500, 7500] });
    const fired: number[] = [];
    for (let i = 0; i < 16; i++) {
      w = step(w, i === 0 ? [cmd('h0', 'none', 'up', true)] : [], []);
      if (w.events.some((e) => e.type === 'fire')) fired.push(w.tick);
      if (w.tick === 1) {
        expect(w.events).toEqual([{ type: 'fire', tank: 'h0', x: 7500, y: 7090 }]);
        expect(w.bullets).toEqual([{ id: 'b1-h0', team: 'host', owner_id: 'h0', x: 7500, y: 7090 - 560, dir: 'up' }]);
        expect(tankOf(w, 'h0').fire_cd).toBe(7);
      }
    }
    expect(fired).toEqual([1, 8, 15]);
    // Rapid fire halves the cooldown.
    let r = world(open(9), rules(), { g0: [1500, 1500], h0: [7500, 7500] });
    tankOf(r, 'h0').rapid_until = 100;
    const rapid: number[] = [];
    for (let i = 0; i < 8; i++) if ((r = step(r, [cmd('h0', 'none', 'up', true)], [])).events.some((e) => e.type === 'fire')) rapid.push(r.tick);
    expect(rapid).toEqual([1, 4, 7]);
  });

  it('bullets fly bullet_speed a tick and stop on steel; water and bush do not stop them', () => {
    const map = ['#########', '#.......#', '#.......#', '#.......#', '#.W.S...#', '#.......#', '#.......#', '#.......#', '#########'].join('\n');
    let w = step(world(map, rules(), { h0: [7500, 4500], g0: [1500, 1500] }), [cmd('h0', 'none', 'left', true)], []);
    const xs: number[] = [];
    while (w.bullets.length) (xs.push(w.bullets[0]!.x), (w = step(w, [cmd('h0', 'none', 'left', false)], [])));
    expect(xs).toEqual(Array.from({ length: 10 }, (_, i) => 7090 - 560 * (i + 1)));
    expect(w.tick).toBe(11); // from x 1490 its second sub-step reached the border
  });

  it('a bullet destroys the brick it reaches (one event for every bullet on it)', () => {
    const map = ['#########', '#.......#', '#.......#', '#.......#', '#...B...#', '#.......#', '#.......#', '#.......#', '#########'].join('\n');
    let w = world(map, rules({ team_size: 1 }), { h0: [6500, 4500], g0: [2500, 4500] });
    w = step(w, [cmd('h0', 'none', 'left', true)], [cmd('g0', 'none', 'right', true)]);
    expect(w.grid[4]![4]).toBe('B');
    w = step(w, [cmd('h0', 'none', 'left', false)], [cmd('g0', 'none', 'right', false)]);
    expect(w.events).toEqual([{ type: 'brick_destroyed', bullet: 'b1-g0', bullets: ['b1-g0', 'b1-h0'], row: 4, col: 4 }]);
    expect(w.grid[4]![4]).toBe('.');
    expect(w.bullets).toEqual([]);
  });

  it('a hit costs one HP; friendly fire only when the match says so; the shooter is never hit', () => {
    const at = { h0: [7500, 4500], h1: [4500, 4500], g0: [1500, 4500], g1: [1500, 1500] } as Record<string, [number, number]>;
    let w = world(open(9), rules({ team_size: 2 }), at);
    w = run(step(w, [cmd('h0', 'none', 'left', true)], []), 12, [cmd('h0', 'none', 'left', false)]);
    expect(w.tanks.map((t) => t.hp)).toEqual([4, 4, 3, 4]); // through h1 to g0
    let f = world(open(9), rules({ team_size: 2, friendly_fire: true }), at);
    f = step(f, [cmd('h0', 'none', 'left', true)], []);
    const hits = [];
    for (let i = 0; i < 12; i++) hits.push(...(f = step(f, [cmd('h0', 'none', 'left', false)], [])).events);
    expect(hits).toEqual([{ type: 'hit', attacker: 'h0', victim: 'h1', victim_hp: 3 }]);
    expect(f.tanks.map((t) => t.hp)).toEqual([4, 3, 4, 4]);
  });

  it('the last tank destroyed ends the match; both sides at once is a draw', () => {
    const hooks = hostHooks({ team_size: 1, map_text: open(9) });
    const w = world(open(9), rules(), { h0: [7500, 4500], g0: [1500, 4500] });
    tankOf(w, 'g0').hp = 1;
    let r = hooks.proto_realtime_step(w as never, 1, { host: [cmd('h0', 'none', 'left', true)], guest: [] });
    for (let t = 2; r.outcome === 'none'; t++) r = hooks.proto_realtime_step(r.state, t, { host: [], guest: [] });
    const end = r.state as unknown as World;
    expect(r.outcome).toBe('host');
    expect(end).toMatchObject({ game_over: true, winner: 'host', host_alive: 1, guest_alive: 0 });
    expect(r.events).toEqual([
      { type: 'hit', attacker: 'h0', victim: 'g0', victim_hp: 0 },
      { type: 'destroyed', tank: 'g0', team: 'guest' },
      { type: 'game_over', winner: 'host', reason: 'elimination' },
    ]);
    // A destroyed tank neither moves nor fires nor is hit again.
    expect(() => hooks.proto_realtime_step(r.state, end.tick + 2, { host: [], guest: [] })).toThrow('tank simulation tick discontinuity');

    const both = world(open(9), rules(), { h0: [7500, 4500], g0: [1500, 4500] });
    both.tanks.forEach((t) => (t.hp = 1));
    let b = step(both, [cmd('h0', 'none', 'left', true)], [cmd('g0', 'none', 'right', true)]);
    while (!b.game_over) b = step(b, [], []);
    expect([b.winner, b.host_alive, b.guest_alive]).toEqual(['draw', 0, 0]);
  });

  it('at max_ticks more surviving tanks win, then more HP, else a draw', () => {
    const end = (hp: number[], alive = hp.map((h) => h > 0)) => {
      const w = world(open(9), rules({ team_size: 2, max_ticks: 5 }));
      w.tanks.forEach((t, i) => (t.hp = alive[i] ? hp[i]! : 0));
      const r = run(w, 5);
      expect(r.events.at(-1)).toMatchObject({ type: 'game_over', reason: 'tick_limit' });
      expect(run(w, 4).game_over).toBe(false);
      return r.winner;
    };
    expect(end([4, 4, 4, 4])).toBe('draw');
    expect(end([1, 1, 4, 0])).toBe('host'); // 2 tanks beat 1
    expect(end([1, 1, 4, 4])).toBe('guest'); // equal tanks: 8 HP beat 2
    expect(end([3, 1, 2, 2])).toBe('draw');
  });

  it('a lone tank on a pickup takes it; two on it leave it', () => {
    const map = ['#######', '#.....#', '#.....#', '#..P..#', '#.....#', '#.....#', '#######'].join('\n');
    const r = rules({ pickup_mode: 'powerups' });
    let w = world(map, r, { g0: [3500, 2500], h0: [5500, 5500] });
    tankOf(w, 'g0').hp = 2;
    w = run(w, 4, [], [cmd('g0', 'down')]);
    expect(w.pickups[0]!.active).toBe(false);
    expect(tankOf(w, 'g0').hp).toBe(3);
    // At full HP a repair is still taken (and wasted), on the tick the tank first overlaps it.
    const full = world(map, r, { g0: [3500, 2500], h0: [5500, 5500] });
    expect(run(full, 3, [], [cmd('g0', 'down')]).pickups[0]!.active).toBe(true);
    const taken = run(full, 4, [], [cmd('g0', 'down')]);
    expect(taken.events).toEqual([{ type: 'pickup', tank: 'g0', pickup: 'p0', kind: 'repair' }]);
    expect(tankOf(taken, 'g0').hp).toBe(4);
    const two = world(map, r, { g0: [3500, 3220], h0: [3500, 3780] });
    expect(step(two, [], []).pickups[0]!.active).toBe(true);
  });
});

describe('command validation', () => {
  const w = () => world(open(7), rules({ team_size: 2 }));
  const refuse = (side: string, commands: unknown, reason: string, t = 1, state = w()) =>
    expect(() => validateCommands(side, commands, state, t)).toThrow(reason);

  it('normalises: every field present, missing ones defaulted, sorted by unit', () => {
    expect(
      validateCommands(
        'host',
        [
          { unit_id: 'h1', fire: true },
          { unit_id: 'h0', move: 'up', aim: 'left' },
        ],
        w(),
        3,
      ),
    ).toEqual([
      { unit_id: 'h0', move: 'up', aim: 'left', fire: false },
      { unit_id: 'h1', move: 'none', aim: 'none', fire: true },
    ]);
    expect(validateCommands('guest', [], w(), 1)).toEqual([]);
  });

  it("refuses with the reference's reasons", () => {
    refuse('referee', [], 'side must be host or guest');
    refuse('host', [], 'target_tick must be in the future', 0);
    refuse('host', [cmd('h0')], 'target_tick must be in the future', 2, run(w(), 2));
    refuse('host', [7], 'commands[0] must be an object');
    refuse('host', [cmd('h0'), [1]], 'commands[1] must be an object');
    refuse('host', [{ unit_id: 'h0', kind: 'nuke', boost: 1 }], "commands[0] has unknown fields: ['boost', 'kind']");
    refuse('host', [{ unit_id: 'h9' }], 'commands[0].unit_id is unknown');
    refuse('host', [{ unit_id: 5 }], 'commands[0].unit_id is unknown');
    refuse('host', [{ move: 'up' }], 'commands[0].unit_id is unknown');
    refuse('host', [cmd('h0'), cmd('h0')], 'duplicate command for unit h0');
    refuse('host', [cmd('g0')], 'unit g0 is not owned by host');
    refuse('host', [{ unit_id: 'h0', move: 'north' }], 'commands[0].move is invalid');
    refuse('host', [{ unit_id: 'h0', move: null }], 'commands[0].move is invalid');
    refuse('host', [{ unit_id: 'h0', aim: 1 }], 'commands[0].aim is invalid');
    refuse('host', [{ unit_id: 'h0', fire: 1 }], 'commands[0].fire must be boolean');
    refuse('host', [{ unit_id: 'h0', fire: 'true' }], 'commands[0].fire must be boolean');
    const dead = w();
    tankOf(dead, 'h1').hp = 0;
    refuse('host', [cmd('h1')], 'unit h1 is destroyed', 1, dead);
    refuse('host', { h0: {} }, 'commands must be a list');
    refuse(
      'host',
      Array.from({ length: 65 }, () => cmd('h0')),
      'too many commands',
    );
  });

  it('the hooks refuse the same way and hand back the normalised commands', () => {
    const h = hostHooks({ team_size: 2, map_text: open(7) }) as RealtimeHooks;
    const s = h.proto_realtime_initial_state();
    expect(h.proto_realtime_validate_commands('guest', [{ unit_id: 'g1', move: 'left' }], s, 3)).toEqual([
      { unit_id: 'g1', move: 'left', aim: 'none', fire: false },
    ]);
    expect(() => h.proto_realtime_validate_commands('guest', [{ unit_id: 'h1' }], s, 3)).toThrow('unit h1 is not owned by guest');
  });
});

interface Played {
  ticks: number;
  outcome: string;
  reason: string;
  frames: string[];
  applied: { host: unknown[]; guest: unknown[] }[];
}

/**
 * One match as the realtime engine runs it: at tick t each side chooses commands for t + input delay
 * from the frame it has, the host validates them then, and they are applied when that tick is stepped.
 * A third hooks instance (the guest's auditor) replays every step and must reach the same bytes.
 */
function playMatch(options: Record<string, unknown>, seed: number): Played {
  const mk = (role: 'host' | 'guest', salt: number) =>
    tank.create({ role, options, args: [], stateDir: '/nonexistent', decision: null, random: seeded(seed * 31 + salt) });
  const host = mk('host', 1);
  const guest = mk('guest', 2);
  const auditor = mk('guest', 3);
  let state = host.proto_realtime_initial_state();
  let replay = auditor.proto_realtime_initial_state();
  expect(canon(replay)).toBe(canon(state));
  const limit = (options['max_ticks'] as number | undefined) ?? 1800;
  const queued = new Map<number, { host: unknown[]; guest: unknown[] }>();
  const frames = [canon(state)];
  const applied: Played['applied'] = [];
  for (let t = 0; t <= limit; t++) {
    const target = t + DELAY;
    const hc = host.proto_realtime_commands(state, target) as unknown[];
    const gc = guest.proto_realtime_commands(JSON.parse(frames.at(-1)!) as Record<string, unknown>, target) as unknown[];
    // Per tick: each assertion is built only where its plain check fails.
    if (!integersOnly([hc, gc])) expect(integersOnly([hc, gc])).toBe(true);
    queued.set(target, {
      host: host.proto_realtime_validate_commands('host', hc, state, target),
      guest: host.proto_realtime_validate_commands('guest', gc, state, target),
    });
    const now = queued.get(t + 1) ?? { host: [], guest: [] };
    queued.delete(t + 1);
    applied.push(now);
    const r = host.proto_realtime_step(state, t + 1, now);
    const a = auditor.proto_realtime_step(replay, t + 1, JSON.parse(JSON.stringify(now)) as typeof now);
    state = r.state;
    replay = a.state;
    frames.push(canon(state));
    const audited = canon(replay);
    if (audited !== frames.at(-1)) expect(audited, `tick ${t + 1}`).toBe(frames.at(-1));
    if (!Object.is(a.outcome, r.outcome)) expect(a.outcome).toBe(r.outcome);
    if (!integersOnly(r.events)) expect(integersOnly(r.events)).toBe(true);
    if (r.outcome !== 'none') {
      const w = state as unknown as World;
      expect(host.proto_realtime_audit_outcome!({ state, outcome: r.outcome })).toMatchObject({ status: 'passed' });
      return { ticks: w.tick, outcome: r.outcome!, reason: String(w.events.at(-1)!['reason']), frames, applied };
    }
  }
  throw new Error(`no outcome after ${limit} ticks`);
}

/** The match of a profile and seed, played once per file: several tests look at the same ones (none changes it). */
const matches = new Map<string, Played>();
function matchOf(profile: string, seed: number): Played {
  const key = `${profile} ${seed}`;
  if (!matches.has(key)) matches.set(key, playMatch(PROFILES[profile]!.options, seed));
  return matches.get(key)!;
}

describe('whole matches', () => {
  it('the short profile: every match ends within 100 ticks, most of them by elimination', () => {
    const results = Array.from({ length: 20 }, (_, i) => matchOf('short', i + 1));
    for (const r of results) expect(r.ticks).toBeLessThanOrEqual(100);
    const decided = results.filter((r) => r.reason === 'elimination' && r.outcome !== 'draw');
    expect(decided.length).toBeGreaterThanOrEqual(10);
    expect(new Set(decided.map((r) => r.outcome))).toEqual(new Set(['host', 'guest']));
  });

  it('the same seed plays the same match, byte for byte; another seed plays another', () => {
    // Seeds 7 and 8 as the test above played them, and seed 7 played once more here.
    const a = matchOf('short', 7);
    expect(playMatch(PROFILES['short']!.options, 7).frames).toEqual(a.frames);
    expect(matchOf('short', 8).frames).not.toEqual(a.frames);
  });

  it.each(['quick', 'standard'])('the %s profile plays to a finish on the default battlefield', (name) => {
    const opts = PROFILES[name]!.options;
    for (const seed of [1, 2]) {
      const r = playMatch(opts, seed);
      expect(r.ticks).toBeLessThanOrEqual(opts['max_ticks'] as number);
      expect(r.reason).toBe('elimination');
    }
  });

  it('the state stays compact: no 5v5 world on the default battlefield reaches 16 KiB', () => {
    const r = playMatch(PROFILES['standard']!.options, 3);
    expect(Math.max(...r.frames.map((f) => f.length))).toBeLessThan(16384);
  });
});

// The reference's own simulation, run on the same commands. Every request of this file is built before its
// first test and answered by one python3 process, which runs while the other tests do; each test below
// then compares its own answer.
const haveRef = needReferencePython(['aigenora.proto.hooks'], 'the reference cross-check of tank-battle');

/** Random commands, most of them valid, some partial, for `ticks` ticks. */
function randomTicks(w: World, ticks: number, random: () => number): [unknown[], unknown[]][] {
  const dirs: Dir[] = ['up', 'down', 'left', 'right', 'none'];
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  return Array.from(
    { length: ticks },
    () =>
      (['host', 'guest'] as const).map((side) =>
        w.tanks
          .filter((t) => t.team === side && random() < 0.4)
          .map((t) => {
            const c: Record<string, unknown> = { unit_id: t.id };
            if (random() < 0.9) c['move'] = pick(dirs);
            if (random() < 0.7) c['aim'] = pick(dirs);
            if (random() < 0.8) c['fire'] = random() < 0.5;
            return c;
          }),
      ) as [unknown[], unknown[]],
  );
}

const WORLDS: [string, string, Rules][] = [
  ['open 9x9, 1v1', open(9), rules()],
  ['the short arena, fast bullets', SHORT_MAP, rules({}, { bullet_speed: 1999, speed: 333, fire_cooldown: 2, hp: 3 })],
  [
    'the default map, 5v5, powerups, friendly fire',
    DEFAULT_MAP,
    rules({ team_size: 5, pickup_mode: 'powerups', friendly_fire: true, max_ticks: 400 }, { speed: 400, fire_cooldown: 3, hp: 2 }),
  ],
  [
    'the default map, 32v32, short powerups',
    DEFAULT_MAP,
    rules({ team_size: 32, pickup_mode: 'powerups', powerup_duration_ticks: 10, max_ticks: 300 }, { speed: 1000, bullet_speed: 3000, fire_cooldown: 1, hp: 1 }),
  ],
];

/** Every world of random commands on `map`, ours, and the request that asks the reference for its worlds. */
function worldsCase(map: string, r: Rules) {
  let w = initWorld(map, r);
  const ticks = randomTicks(w, r.max_ticks > 300 ? 300 : r.max_ticks, seeded(42));
  const ours = [canon(w)];
  for (const [h, g] of ticks) {
    if (w.game_over) break;
    w = step(w, h, g);
    ours.push(canon(w));
  }
  return { ours, request: { map, rules: r, ticks: ticks.slice(0, ours.length - 1) } };
}

const PLAYED = [
  ['short', 1],
  ['standard', 4],
] as const;
/** A played match (the short one is the short-profile test's seed 1) and the request for its worlds. */
function playedCase(profile: string, seed: number) {
  const opts = PROFILES[profile]!.options;
  const m = matchOf(profile, seed);
  const r = rules({ team_size: opts['team_size'] as number, max_ticks: opts['max_ticks'] as number, pickup_mode: opts['pickup_mode'] as Rules['pickup_mode'] });
  return {
    frames: m.frames,
    request: { map: (opts['map_text'] as string | undefined) ?? DEFAULT_MAP, rules: r, ticks: m.applied.map((a) => [a.host, a.guest]) },
  };
}

function validateCase() {
  const w = world(open(7), rules({ team_size: 2 }));
  const dead = structuredClone(w);
  tankOf(dead, 'h1').hp = 0;
  const cases: [string, unknown[], World, number][] = [
    [
      'host',
      [
        { unit_id: 'h1', fire: true },
        { unit_id: 'h0', move: 'up', aim: 'left' },
      ],
      w,
      3,
    ],
    ['guest', [], w, 1],
    ['referee', [], w, 1],
    ['host', [], w, 0],
    ['host', [7], w, 1],
    ['host', [{ unit_id: 'h0', kind: 'nuke', boost: 1 }], w, 1],
    ['host', [{ unit_id: "it's" }], w, 1],
    ['host', [{ unit_id: 'h0', "b'ad": 1, 'x"y': 2 }], w, 1],
    ['host', [{ unit_id: 'h9' }], w, 1],
    ['host', [{ unit_id: 'h0' }, { unit_id: 'h0' }], w, 1],
    ['host', [{ unit_id: 'g0' }], w, 1],
    ['host', [{ unit_id: 'h0', move: 'north' }], w, 1],
    ['host', [{ unit_id: 'h0', move: null }], w, 1],
    ['host', [{ unit_id: 'h0', aim: 1 }], w, 1],
    ['host', [{ unit_id: 'h0', fire: 1 }], w, 1],
    ['host', [{ unit_id: 'h1' }], dead, 1],
  ];
  const ours = cases.map(([s, c, st, t]) => attempt(() => validateCommands(s, c, st, t)));
  return { ours, request: { validate: cases } };
}

const cases: {
  worlds: Built<ReturnType<typeof worldsCase>>[];
  played: Built<ReturnType<typeof playedCase>>[];
  validate?: Built<ReturnType<typeof validateCase>>;
} = { worlds: [], played: [] };
const DEFAULT_MAP_REQUEST = { default_map: true };

const reference = referenceRequests(haveRef, 'tank-battle-ref.py', (requests) => {
  cases.worlds = WORLDS.map(([, map, r]) => build(() => worldsCase(map, r)));
  cases.played = PLAYED.map(([profile, seed]) => build(() => playedCase(profile, seed)));
  cases.validate = build(validateCase);
  requests.add(DEFAULT_MAP_REQUEST, DEFAULT_MAP_REQUEST);
  requests.addBuilt([...cases.worlds, ...cases.played, cases.validate]);
});

const answerTo = <T>(key: unknown) => reference.answer<T>(key);

describe.skipIf(!haveRef)("against the reference's simulation", () => {
  it('builds the same default battlefield', async () => {
    expect(await answerTo(DEFAULT_MAP_REQUEST)).toBe(DEFAULT_MAP);
  });

  it.each(WORLDS.map(([name], i) => [name, i] as const))('every world of random commands matches, byte for byte: %s', async (_n, i) => {
    const c = cases.worlds[i];
    const { ours } = built(c);
    const theirs = await answerTo<string[]>(c);
    expect(theirs.length).toBe(ours.length);
    for (let t = 0; t < ours.length; t++) if (ours[t] !== theirs[t]) expect(ours[t], `tick ${t}`).toBe(theirs[t]);
  });

  it('every world of a played match matches, byte for byte', async () => {
    for (const c of cases.played) {
      const { frames } = built(c);
      expectEqual(await answerTo<string[]>(c), frames);
    }
  });

  it('validates commands to the same result or the same reason', async () => {
    const { ours } = built(cases.validate);
    expectEqual(ours, await answerTo(cases.validate));
  });
});
