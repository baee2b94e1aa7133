/**
 * Tank Battle (authoritative_realtime). The host steps the world at the spec's tick rate; both sides'
 * commands ({unit_id, move, aim, fire}) take effect at their target tick. The world is the reference's
 * JSON world, field for field and integer-only (fixed point, 1000 units a map cell), so a frame's
 * state_hash is the same whichever implementation computed it, and either side can audit the other.
 *
 * One tick: cooldowns count down and commands set each live tank's persistent move/fire and facing
 * (aim, else the move's direction); moves are resolved simultaneously (a move into a blocking tile is
 * dropped, overlapping proposals drop every mover involved, repeated until stable); ready tanks fire a
 * bullet; bullets fly in sub-steps of at most 250 units, stopping on steel, destroying brick, or hitting
 * an enemy (or, with friendly_fire, any other) tank for 1 HP; then powerups; then the outcome: a side
 * with no tank left loses (both: draw); at max_ticks more surviving tanks, then more total HP, wins.
 */
// The types straight from the source: the realtime hook signatures are newer than a built dist/.
import type { HooksModule, Narrator, Role } from '../../hooks/types.js';

export const SCALE = 1000;
export const TANK_HALF = 360;
/** A fired bullet starts this far ahead of the tank's centre. */
const MUZZLE = TANK_HALF + 50;
/** The longest distance a bullet covers between two collision checks. */
const BULLET_SUBSTEP = 250;

export type Dir = 'up' | 'down' | 'left' | 'right' | 'none';
export const DIRECTIONS: readonly Dir[] = ['up', 'down', 'left', 'right', 'none'];
const CARDINAL: readonly Dir[] = ['up', 'down', 'left', 'right'];
const VEC: Record<Dir, readonly [number, number]> = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0], none: [0, 0] };

const STEEL = '#';
const BRICK = 'B';
const WATER = 'W';
const BUSH = 'S';
const PICKUP = 'P';
const FLOOR = '.';
const TILES = new Set([STEEL, BRICK, WATER, BUSH, PICKUP, FLOOR]);
const BLOCKS_MOVE = new Set([STEEL, BRICK, WATER]);
const PICKUP_KINDS = ['repair', 'speed', 'rapid'] as const;

export interface Balance {
  hp: number;
  speed: number;
  fire_cooldown: number;
  bullet_speed: number;
}
export const DEFAULT_BALANCE: Balance = { hp: 4, speed: 180, fire_cooldown: 7, bullet_speed: 560 };

export interface Rules {
  balance: Balance;
  team_size: number;
  max_ticks: number;
  friendly_fire: boolean;
  pickup_mode: 'none' | 'powerups';
  powerup_duration_ticks: number;
}

export interface Tank {
  id: string;
  team: Role;
  x: number;
  y: number;
  facing: Dir;
  hp: number;
  fire_cd: number;
  last_move: Dir;
  last_fire: boolean;
  speed_until: number;
  rapid_until: number;
}
export interface Bullet {
  id: string;
  team: Role;
  owner_id: string;
  x: number;
  y: number;
  dir: Dir;
}
export interface Pickup {
  id: string;
  kind: (typeof PICKUP_KINDS)[number];
  x: number;
  y: number;
  active: boolean;
}
export type Event = Record<string, unknown> & { type: string };
export type Outcome = 'none' | Role | 'draw';

export interface World {
  schema_version: 1;
  tick: number;
  rows: number;
  cols: number;
  grid: string[][];
  tanks: Tank[];
  bullets: Bullet[];
  pickups: Pickup[];
  events: Event[];
  host_alive: number;
  guest_alive: number;
  game_over: boolean;
  winner: Outcome;
  rules: Rules;
}

export interface Command {
  unit_id: string;
  move: Dir;
  aim: Dir;
  fire: boolean;
}

/**
 * The reference's default 31x31 battlefield: steel border, a river across the middle segment of the
 * middle row broken by three bridges, brick bunkers, bush patches and pickup cells, every placement
 * mirrored through the centre so neither side has the better half. (The reference places its
 * "strongpoints" with the bush letter, so they are bush here too: the map must be the same.)
 */
export function buildDefaultMap(n = 31): string {
  const g: string[][] = Array.from({ length: n }, (_, r) =>
    Array.from({ length: n }, (_, c): string => (r === 0 || c === 0 || r === n - 1 || c === n - 1 ? STEEL : FLOOR)),
  );
  const mid = n >> 1;
  const put = (r: number, c: number, t: string) => {
    g[r]![c] = t;
    g[n - 1 - r]![n - 1 - c] = t;
  };
  for (let c = 8; c < 23; c++) if (c !== 11 && c !== 15 && c !== 19) g[mid]![c] = WATER;
  const bunkers = [
    [3, 3],
    [3, 4],
    [4, 3],
    [3, 11],
    [3, 12],
    [4, 12],
    [3, 18],
    [3, 19],
    [4, 19],
    [3, 26],
    [3, 27],
    [4, 27],
    [8, 7],
    [8, 8],
    [9, 7],
    [8, 22],
    [8, 23],
    [9, 23],
  ];
  const bushes = [
    [mid - 1, mid - 1],
    [mid - 1, mid + 1],
    [6, mid],
    [10, 6],
    [10, n - 7],
    [6, 4],
    [6, 5],
    [5, 4],
    [11, 10],
    [11, 11],
  ];
  const pickups = [
    [2, mid],
    [mid - 2, mid],
    [5, 9],
  ];
  for (const [r, c] of bunkers) put(r!, c!, BRICK);
  for (const [r, c] of bushes) put(r!, c!, BUSH);
  for (const [r, c] of pickups) put(r!, c!, PICKUP);
  return g.map((row) => row.join('')).join('\n');
}
export const DEFAULT_MAP = buildDefaultMap();

/** A 9x9 arena for a quick 1v1 (the `short` profile): two brick pairs and a bush, mirrored. */
export const SHORT_MAP = ['#########', '#.......#', '#..B.B..#', '#.......#', '#...S...#', '#.......#', '#..B.B..#', '#.......#', '#########'].join('\n');

/** Map text → grid; throws (with the reference's wording) on a map the game cannot use. */
export function parseMap(text: string): string[][] {
  const rows = text.split(/\r\n|\r|\n/).filter((l) => l.trim() !== '');
  if (rows.length < 5 || rows.length > 128) throw new Error('map must contain between 5 and 128 non-empty rows');
  const width = rows[0]!.length;
  if (width < 5 || width > 128) throw new Error('map width must be between 5 and 128 cells');
  const grid = rows.map((row, i) => {
    if (row.length !== width) throw new Error(`map row ${i} width ${row.length} != ${width}`);
    const bad = [...new Set(row)].filter((t) => !TILES.has(t)).sort();
    if (bad.length) throw new Error(`map row ${i} contains unsupported tiles: ${pyList(bad)}`);
    return [...row];
  });
  if ([...grid[0]!, ...grid.at(-1)!].some((t) => t !== STEEL)) throw new Error('map top and bottom borders must be steel (#)');
  if (grid.some((row) => row[0] !== STEEL || row.at(-1) !== STEEL)) throw new Error('map left and right borders must be steel (#)');
  return grid;
}

/** A list of strings as Python prints it, for reasons worded like the reference's. */
function pyList(items: readonly string[]): string {
  return `[${items.map((s) => (s.includes("'") && !s.includes('"') ? `"${s}"` : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`)).join(', ')}]`;
}

/** Spawn cells, row-major over the walkable interior: the guest takes the first ones, the host the last. */
export function spawnCells(grid: string[][], teamSize: number): { host: [number, number][]; guest: [number, number][] } {
  const free: [number, number][] = [];
  for (let r = 1; r < grid.length - 1; r++) for (let c = 1; c < grid[0]!.length - 1; c++) if ([FLOOR, BUSH, PICKUP].includes(grid[r]![c]!)) free.push([r, c]);
  if (free.length < teamSize * 2) throw new Error(`map has ${free.length} spawnable cells but ${teamSize * 2} are required`);
  return { guest: free.slice(0, teamSize), host: free.slice(-teamSize).reverse() };
}

const centre = (rc: number) => rc * SCALE + SCALE / 2;

export function initWorld(mapText: string, rules: Rules): World {
  const grid = parseMap(mapText);
  const spawns = spawnCells(grid, rules.team_size);
  const tank = (team: Role, i: number, [r, c]: [number, number]): Tank => ({
    id: `${team[0]}${i}`,
    team,
    x: centre(c),
    y: centre(r),
    facing: team === 'host' ? 'up' : 'down',
    hp: rules.balance.hp,
    fire_cd: 0,
    last_move: 'none',
    last_fire: false,
    speed_until: 0,
    rapid_until: 0,
  });
  const cells: [number, number][] = [];
  grid.forEach((row, r) =>
    row.forEach((t, c) => {
      if (t === PICKUP) (cells.push([r, c]), (row[c] = FLOOR));
    }),
  );
  // Pickups facing each other across the centre get the same kind.
  const pickups: Pickup[] =
    rules.pickup_mode !== 'powerups'
      ? []
      : cells.map(([r, c], i) => ({
          id: `p${i}`,
          kind: PICKUP_KINDS[Math.min(i, cells.length - 1 - i) % PICKUP_KINDS.length]!,
          x: centre(c),
          y: centre(r),
          active: true,
        }));
  return {
    schema_version: 1,
    tick: 0,
    rows: grid.length,
    cols: grid[0]!.length,
    grid,
    tanks: [...spawns.host.map((rc, i) => tank('host', i, rc)), ...spawns.guest.map((rc, i) => tank('guest', i, rc))],
    bullets: [],
    pickups,
    events: [],
    host_alive: rules.team_size,
    guest_alive: rules.team_size,
    game_over: false,
    winner: 'none',
    rules: structuredClone(rules),
  };
}

/** The tile under a point; off the map counts as steel. */
function tileAt(grid: string[][], x: number, y: number): string {
  const r = Math.floor(y / SCALE);
  const c = Math.floor(x / SCALE);
  return grid[r]?.[c] ?? STEEL;
}

/**
 * Whether a tank centred at (x, y) would stand on a blocking tile. The one-unit inset lets an edge lie
 * exactly on a tile boundary, and keeps positions mirrored through the centre equally blocked.
 */
export function blocked(grid: string[][], x: number, y: number): boolean {
  const e = TANK_HALF - 1;
  for (const dx of [-e, 0, e]) for (const dy of [-e, 0, e]) if (BLOCKS_MOVE.has(tileAt(grid, x + dx, y + dy))) return true;
  return false;
}

const overlap = (a: readonly [number, number], b: readonly [number, number]) => Math.abs(a[0] - b[0]) < 2 * TANK_HALF && Math.abs(a[1] - b[1]) < 2 * TANK_HALF;
const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const isDir = (v: unknown): v is Dir => typeof v === 'string' && (DIRECTIONS as readonly string[]).includes(v);
const isCardinal = (v: unknown): v is Dir => isDir(v) && v !== 'none';

/** Simultaneous movement: no tank gets priority by id or side. Mutates the live tanks. */
function move(tanks: Tank[], grid: string[][], tick: number, speed: number): void {
  const live = tanks.filter((t) => t.hp > 0);
  const now = new Map(live.map((t) => [t.id, [t.x, t.y] as const]));
  const next = new Map<string, readonly [number, number]>();
  const movers = new Set<string>();
  for (const t of live) {
    const [vx, vy] = VEC[t.last_move];
    const s = tick < t.speed_until ? Math.floor((speed * 3) / 2) : speed;
    const p = [t.x + vx * s, t.y + vy * s] as const;
    next.set(t.id, p);
    if (t.last_move !== 'none' && !blocked(grid, p[0], p[1])) movers.add(t.id);
  }
  // Dropping a move can leave that tank where it blocks another proposal, so repeat until stable.
  for (;;) {
    const dropped = new Set<string>();
    const at = (id: string) => (movers.has(id) ? next.get(id)! : now.get(id)!);
    for (let i = 0; i < live.length; i++) {
      for (let j = i + 1; j < live.length; j++) {
        const a = live[i]!.id;
        const b = live[j]!.id;
        if (!overlap(at(a), at(b))) continue;
        if (movers.has(a)) dropped.add(a);
        if (movers.has(b)) dropped.add(b);
      }
    }
    if (!dropped.size) break;
    for (const id of dropped) movers.delete(id);
  }
  for (const t of live) if (movers.has(t.id)) [t.x, t.y] = next.get(t.id)!;
}

/** The commands of one side, by unit: only that side's own units count; a later command for a unit wins. */
function commandsOf(commands: unknown, side: Role): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  if (!Array.isArray(commands)) return out;
  for (const c of commands) {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) continue;
    const id = (c as Record<string, unknown>)['unit_id'];
    if (typeof id === 'string' && id.startsWith(side[0]!)) out.set(id, c as Record<string, unknown>);
  }
  return out;
}

/** One tick of the simulation; `world` is left unchanged. */
export function step(world: World, host: unknown, guest: unknown): World {
  const s = structuredClone(world);
  const tick = world.tick + 1;
  s.tick = tick;
  const events: Event[] = (s.events = []);
  const { tanks, grid, rules } = s;
  const { balance } = rules;
  const commands = new Map([...commandsOf(host, 'host'), ...commandsOf(guest, 'guest')]);

  for (const t of tanks) {
    if (t.hp <= 0) continue;
    if (t.fire_cd > 0) t.fire_cd -= 1;
    const c = commands.get(t.id);
    if (!c || Object.keys(c).length === 0) continue;
    const mv = 'move' in c ? c['move'] : 'none';
    const aim = 'aim' in c ? c['aim'] : 'none';
    t.last_move = isDir(mv) ? mv : 'none';
    t.last_fire = Boolean(c['fire'] ?? false);
    if (isCardinal(aim)) t.facing = aim;
    else if (t.last_move !== 'none') t.facing = t.last_move;
  }

  move(tanks, grid, tick, balance.speed);

  for (const t of [...tanks].sort(byId)) {
    if (t.hp <= 0 || !t.last_fire || t.fire_cd > 0) continue;
    const [vx, vy] = VEC[t.facing];
    const b: Bullet = { id: `b${tick}-${t.id}`, team: t.team, owner_id: t.id, x: t.x + vx * MUZZLE, y: t.y + vy * MUZZLE, dir: t.facing };
    s.bullets.push(b);
    t.fire_cd = tick < t.rapid_until ? Math.max(1, Math.floor(balance.fire_cooldown / 2)) : balance.fire_cooldown;
    events.push({ type: 'fire', tank: t.id, x: b.x, y: b.y });
  }

  // Bullets see the walls and tanks as they were when the volley started: two bullets may take the
  // same brick, and a tank is hit whatever else hits it this tick.
  const targets = tanks.filter((t) => t.hp > 0).sort(byId);
  const hits: [bullet: string, attacker: string, victim: string][] = [];
  const bricks = new Map<string, { row: number; col: number; bullets: string[] }>();
  const substeps = Math.max(1, Math.ceil(balance.bullet_speed / BULLET_SUBSTEP));
  const base = Math.floor(balance.bullet_speed / substeps);
  const extra = balance.bullet_speed % substeps;
  const flying: Bullet[] = [];
  for (const b of [...s.bullets].sort(byId)) {
    const [vx, vy] = VEC[b.dir];
    let alive = true;
    for (let i = 0; i < substeps && alive; i++) {
      const d = base + (i < extra ? 1 : 0);
      const x = b.x + vx * d;
      const y = b.y + vy * d;
      const tile = tileAt(world.grid, x, y);
      if (tile === STEEL) {
        alive = false;
      } else if (tile === BRICK) {
        const row = Math.floor(y / SCALE);
        const col = Math.floor(x / SCALE);
        const key = `${row},${col}`;
        const entry = bricks.get(key) ?? { row, col, bullets: [] };
        entry.bullets.push(b.id);
        bricks.set(key, entry);
        alive = false;
      } else {
        const victim = targets.find(
          (t) => t.id !== b.owner_id && (rules.friendly_fire || t.team !== b.team) && Math.abs(x - t.x) < TANK_HALF && Math.abs(y - t.y) < TANK_HALF,
        );
        if (victim) {
          hits.push([b.id, b.owner_id, victim.id]);
          alive = false;
        } else {
          b.x = x;
          b.y = y;
        }
      }
    }
    if (alive) flying.push(b);
  }
  s.bullets = flying;

  for (const br of [...bricks.values()].sort((a, b) => a.row - b.row || a.col - b.col)) {
    grid[br.row]![br.col] = FLOOR;
    const ids = [...br.bullets].sort();
    events.push({ type: 'brick_destroyed', bullet: ids[0]!, bullets: ids, row: br.row, col: br.col });
  }

  const shown = new Map(targets.map((t) => [t.id, t.hp]));
  const damage = new Map<string, number>();
  for (const [, attacker, victim] of [...hits].sort((a, b) => cmpTuple(a, b))) {
    shown.set(victim, Math.max(0, shown.get(victim)! - 1));
    damage.set(victim, (damage.get(victim) ?? 0) + 1);
    events.push({ type: 'hit', attacker, victim, victim_hp: shown.get(victim)! });
  }
  for (const id of [...damage.keys()].sort()) {
    const t = tanks.find((u) => u.id === id)!;
    const before = t.hp;
    t.hp = Math.max(0, t.hp - damage.get(id)!);
    if (before > 0 && t.hp === 0) events.push({ type: 'destroyed', tank: t.id, team: t.team });
  }

  if (rules.pickup_mode === 'powerups') {
    for (const p of s.pickups) {
      if (!p.active) continue;
      const on = tanks.filter((t) => t.hp > 0 && Math.abs(t.x - p.x) < TANK_HALF && Math.abs(t.y - p.y) < TANK_HALF);
      // A contested pickup stays until one tank has it alone.
      if (on.length !== 1) continue;
      const t = on[0]!;
      p.active = false;
      if (p.kind === 'repair') t.hp = Math.min(balance.hp, t.hp + 1);
      else if (p.kind === 'speed') t.speed_until = tick + rules.powerup_duration_ticks;
      else t.rapid_until = tick + rules.powerup_duration_ticks;
      events.push({ type: 'pickup', tank: t.id, pickup: p.id, kind: p.kind });
    }
  }

  const alive = (team: Role) => tanks.filter((t) => t.team === team && t.hp > 0).length;
  const hpOf = (team: Role) => tanks.filter((t) => t.team === team).reduce((n, t) => n + t.hp, 0);
  s.host_alive = alive('host');
  s.guest_alive = alive('guest');
  const timeUp = tick >= rules.max_ticks;
  if (s.host_alive === 0 || s.guest_alive === 0 || timeUp) {
    s.game_over = true;
    let winner: Outcome;
    if (s.host_alive === 0 || s.guest_alive === 0) winner = s.host_alive === s.guest_alive ? 'draw' : s.host_alive === 0 ? 'guest' : 'host';
    else {
      const d = s.host_alive - s.guest_alive || hpOf('host') - hpOf('guest');
      winner = d > 0 ? 'host' : d < 0 ? 'guest' : 'draw';
    }
    s.winner = winner;
    events.push({ type: 'game_over', winner, reason: timeUp ? 'tick_limit' : 'elimination' });
  }
  return s;
}

function cmpTuple(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

/**
 * A side's commands as the host applies them: every field known, each unit the side's own, alive and
 * commanded once; missing fields default to no move, no aim, no fire; sorted by unit. Throws the
 * reference's reason otherwise.
 */
export function validateCommands(side: string, commands: unknown, world: World, targetTick: number, maxCommands = 64): Command[] {
  if (side !== 'host' && side !== 'guest') throw new Error('side must be host or guest');
  if (!Number.isInteger(targetTick) || targetTick <= world.tick) throw new Error('target_tick must be in the future');
  if (!Array.isArray(commands)) throw new Error('commands must be a list');
  if (commands.length > maxCommands) throw new Error('too many commands');
  const seen = new Set<string>();
  const out: Command[] = [];
  commands.forEach((c: unknown, i) => {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new Error(`commands[${i}] must be an object`);
    const o = c as Record<string, unknown>;
    const unknown = Object.keys(o)
      .filter((k) => !['unit_id', 'move', 'aim', 'fire'].includes(k))
      .sort();
    if (unknown.length) throw new Error(`commands[${i}] has unknown fields: ${pyList(unknown)}`);
    const id = o['unit_id'];
    const tank = typeof id === 'string' ? world.tanks.find((t) => t.id === id) : undefined;
    if (!tank) throw new Error(`commands[${i}].unit_id is unknown`);
    if (seen.has(tank.id)) throw new Error(`duplicate command for unit ${tank.id}`);
    if (tank.team !== side) throw new Error(`unit ${tank.id} is not owned by ${side}`);
    if (tank.hp <= 0) throw new Error(`unit ${tank.id} is destroyed`);
    const mv = 'move' in o ? o['move'] : 'none';
    const aim = 'aim' in o ? o['aim'] : 'none';
    const fire = 'fire' in o ? o['fire'] : false;
    if (!isDir(mv)) throw new Error(`commands[${i}].move is invalid`);
    if (!isDir(aim)) throw new Error(`commands[${i}].aim is invalid`);
    if (typeof fire !== 'boolean') throw new Error(`commands[${i}].fire must be boolean`);
    seen.add(tank.id);
    out.push({ unit_id: tank.id, move: mv, aim, fire });
  });
  return out.sort((a, b) => (a.unit_id < b.unit_id ? -1 : a.unit_id > b.unit_id ? 1 : 0));
}

/** Whether `t` can shoot `e` now: in its lane (row or column) with no steel or brick between them. */
export function lineOfFire(world: World, t: Tank, e: Tank): boolean {
  const dx = e.x - t.x;
  const dy = e.y - t.y;
  const clear = (from: number, to: number, at: (v: number) => string) => {
    const d = to > from ? 1 : -1;
    for (let v = from + (d * SCALE) / 2; d > 0 ? v < to : v > to; v += (d * SCALE) / 2) if (at(v) === STEEL || at(v) === BRICK) return false;
    return true;
  };
  if (Math.abs(dx) < TANK_HALF) return clear(t.y, e.y, (y) => tileAt(world.grid, t.x, y));
  if (Math.abs(dy) < TANK_HALF) return clear(t.x, e.x, (x) => tileAt(world.grid, x, t.y));
  return false;
}

const towards = (t: Tank, e: { x: number; y: number }): Dir => {
  const dx = e.x - t.x;
  const dy = e.y - t.y;
  return Math.abs(dx) >= Math.abs(dy) ? (dx > 0 ? 'right' : 'left') : dy > 0 ? 'down' : 'up';
};
const cellOf = (t: { x: number; y: number }): [number, number] => [Math.floor(t.y / SCALE), Math.floor(t.x / SCALE)];

/**
 * The first step of a shortest walk over the cell graph from `from` to any cell where `goal` holds.
 * Brick cells cost extra rather than being walls, since a tank can shoot its way through them.
 */
function firstStep(world: World, from: [number, number], goal: (r: number, c: number) => boolean, avoid: Set<string>, order: readonly Dir[]): Dir | null {
  const { rows, cols, grid } = world;
  const cost = new Map<number, number>();
  const first = new Map<number, Dir>();
  // A tiny bucketed Dijkstra: costs are 1 (open), 6 (brick) and +3 (another tank's cell).
  const buckets: number[][] = [[from[0] * cols + from[1]]];
  cost.set(from[0] * cols + from[1], 0);
  for (let d = 0; d < buckets.length; d++) {
    for (const k of buckets[d] ?? []) {
      if (cost.get(k) !== d) continue;
      const r = Math.floor(k / cols);
      const c = k % cols;
      if (d > 0 && goal(r, c)) return first.get(k)!;
      for (const dir of order) {
        const [vx, vy] = VEC[dir];
        const nr = r + vy;
        const nc = c + vx;
        if (nr < 1 || nc < 1 || nr >= rows - 1 || nc >= cols - 1) continue;
        const tile = grid[nr]![nc]!;
        if (tile === STEEL || tile === WATER) continue;
        const nk = nr * cols + nc;
        const nd = d + (tile === BRICK ? 6 : 1) + (avoid.has(`${nr},${nc}`) ? 3 : 0);
        if (nd >= (cost.get(nk) ?? Infinity)) continue;
        cost.set(nk, nd);
        first.set(nk, d === 0 ? dir : first.get(k)!);
        (buckets[nd] ??= []).push(nk);
      }
    }
  }
  return null;
}

/** The free cells from which a shot along a row or column would reach cell (r, c) unobstructed. */
function firingCells(world: World, r: number, c: number, taken: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const d of CARDINAL) {
    const [vx, vy] = VEC[d];
    for (let k = 1; ; k++) {
      const tile = world.grid[r + vy * k]?.[c + vx * k];
      if (tile === undefined || tile === STEEL || tile === BRICK) break;
      const key = `${r + vy * k},${c + vx * k}`;
      if (tile !== WATER && !taken.has(key)) out.add(key);
    }
  }
  return out;
}

/** What the autonomous player remembers of a tank: where it has been, and a detour under way. */
interface Memory {
  trail: [number, number][];
  detour: Dir;
  until: number;
}
/** A tank that has not left a cell's distance in this many ticks is stalled and takes a detour. */
const STALL_TICKS = 10;

/**
 * The autonomous player, per own tank: shoot the nearest enemy in a clear lane (sometimes stepping
 * aside while reloading); otherwise head for the nearest cell with a clear shot at the nearest enemy
 * (shooting through brick on the way), keeping to the middle of the lane so the tank fits between
 * walls. A stalled tank takes a short random detour, so tanks do not block each other for good.
 */
function chooseCommands(world: World, side: Role, random: () => number, memory: Map<string, Memory>): Command[] {
  const own = world.tanks.filter((t) => t.team === side && t.hp > 0).sort(byId);
  const enemies = world.tanks.filter((t) => t.team !== side && t.hp > 0).sort(byId);
  if (!enemies.length) return own.map((t) => ({ unit_id: t.id, move: 'none', aim: 'none', fire: false }));
  const taken = new Set(world.tanks.filter((t) => t.hp > 0).map((t) => cellOf(t).join(',')));
  return own.map((t) => {
    // Equal routes are broken at random: a fixed order would play the mirrored map identically for
    // both sides, and mirrored armies trade every shot into a draw.
    const order = shuffle(CARDINAL, random);
    const dist = (e: Tank) => Math.abs(e.x - t.x) + Math.abs(e.y - t.y);
    const nearest = (list: Tank[]) => list.reduce((a, b) => (dist(b) < dist(a) ? b : a));
    const visible = enemies.filter((e) => lineOfFire(world, t, e));
    const m = memory.get(t.id) ?? { trail: [], detour: 'none' as Dir, until: -1 };
    m.trail.push([t.x, t.y]);
    if (m.trail.length > STALL_TICKS) m.trail.shift();
    // Standing still or rocking in place (two tanks can mirror each other's sidesteps for good).
    const stalled = m.trail.length === STALL_TICKS && m.trail.every(([x, y]) => Math.abs(x - t.x) + Math.abs(y - t.y) < SCALE);
    memory.set(t.id, m);
    if (visible.length) {
      const e = nearest(visible);
      const aim = towards(t, e);
      // Reloading in the enemy's lane: now and then step out of it, trading tempo for the next shot.
      if (t.fire_cd > 2 && random() < 0.5) {
        const sides = (aim === 'up' || aim === 'down' ? ['left', 'right'] : ['up', 'down']) as Dir[];
        const free = sides.filter((d) => !blocked(world.grid, t.x + VEC[d][0] * world.rules.balance.speed, t.y + VEC[d][1] * world.rules.balance.speed));
        if (free.length) return { unit_id: t.id, move: free[Math.floor(random() * free.length)]!, aim, fire: false };
      }
      return { unit_id: t.id, move: 'none', aim, fire: true };
    }
    if (stalled && m.until < world.tick) {
      m.detour = CARDINAL[Math.floor(random() * 4)]!;
      m.until = world.tick + 2 + Math.floor(random() * 4);
      m.trail = [];
    }
    if (m.until >= world.tick) return { unit_id: t.id, move: m.detour, aim: m.detour, fire: false };
    const e = nearest(enemies);
    const [er, ec] = cellOf(e);
    const here = cellOf(t);
    const mine = new Set([...taken].filter((k) => k !== here.join(',')));
    const lanes = firingCells(world, er, ec, mine);
    // In a clear lane to the enemy but beside its line: slide across, first to the lane's middle
    // (two tanks each sliding towards the other would only swap sides), then towards the enemy.
    if (lanes.has(here.join(','))) {
      const slide = (own: number, mid: number, other: number, less: Dir, more: Dir): Dir => {
        const to = Math.abs(own - mid) > SCALE / 2 - TANK_HALF ? mid : other;
        return to > own ? more : less;
      };
      if (here[1] === ec && Math.abs(e.x - t.x) >= TANK_HALF)
        return { unit_id: t.id, move: slide(t.x, centre(ec), e.x, 'left', 'right'), aim: towards(t, e), fire: false };
      if (here[0] === er && Math.abs(e.y - t.y) >= TANK_HALF)
        return { unit_id: t.id, move: slide(t.y, centre(er), e.y, 'up', 'down'), aim: towards(t, e), fire: false };
    }
    const goal = lanes.size ? (r: number, c: number) => lanes.has(`${r},${c}`) : (r: number, c: number) => (r === er || c === ec) && !mine.has(`${r},${c}`);
    const dir = firstStep(world, here, goal, mine, order) ?? towards(t, e);
    // Keep to the lane's middle before going sideways, or the tank's edge catches on the next wall.
    const slack = SCALE / 2 - TANK_HALF;
    let mv = dir;
    if (dir === 'left' || dir === 'right') {
      const off = t.y - centre(here[0]);
      if (Math.abs(off) > slack) mv = off > 0 ? 'up' : 'down';
    } else if (dir === 'up' || dir === 'down') {
      const off = t.x - centre(here[1]);
      if (Math.abs(off) > slack) mv = off > 0 ? 'left' : 'right';
    }
    const [vx, vy] = VEC[dir];
    const ahead = world.grid[here[0] + vy]?.[here[1] + vx];
    return { unit_id: t.id, move: mv, aim: ahead === BRICK ? dir : mv, fire: ahead === BRICK && mv === dir };
  });
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * The world as it will be when commands for `targetTick` apply (after tick targetTick - 1): this
 * side's commands already sent for the ticks in between applied, the other side's tanks carrying on
 * as they move now. Choosing on the present world would make every turn and stop overshoot by the
 * input delay.
 */
function foresee(world: World, side: Role, targetTick: number, sent: Map<number, Command[]>): World {
  let w = world;
  for (let k = world.tick + 1; k < targetTick && !w.game_over; k++) {
    const mine = sent.get(k) ?? [];
    w = step(w, side === 'host' ? mine : [], side === 'guest' ? mine : []);
  }
  return w;
}

function optionsToRules(o: Readonly<Record<string, unknown>>): { rules: Rules; map: string } {
  const table = o['balance'];
  const row = table && typeof table === 'object' ? (table as Record<string, unknown>)['tank'] : undefined;
  const model = (row && typeof row === 'object' ? row : {}) as Partial<Record<keyof Balance, unknown>>;
  const int = (v: unknown, d: number) => (Number.isInteger(v) ? (v as number) : d);
  const balance: Balance = {
    hp: int(model.hp, DEFAULT_BALANCE.hp),
    speed: int(model.speed, DEFAULT_BALANCE.speed),
    fire_cooldown: int(model.fire_cooldown, DEFAULT_BALANCE.fire_cooldown),
    bullet_speed: int(model.bullet_speed, DEFAULT_BALANCE.bullet_speed),
  };
  return {
    rules: {
      balance,
      team_size: Math.max(1, Math.min(32, int(o['team_size'], 5))),
      max_ticks: int(o['max_ticks'], 1800),
      friendly_fire: o['friendly_fire'] === true,
      pickup_mode: o['pickup_mode'] === 'powerups' ? 'powerups' : 'none',
      powerup_duration_ticks: int(o['powerup_duration_ticks'], 100),
    },
    map: typeof o['map_text'] === 'string' && o['map_text'] ? o['map_text'] : DEFAULT_MAP,
  };
}

/** Seconds of play between two lines on the state of the battle when nothing else is said. */
const STATUS_SECONDS = 10;

/** One event as a person says it, or nothing: shots and broken bricks are most of them, and no news. */
function eventText(e: Event): string | undefined {
  switch (e.type) {
    case 'hit':
      return `${String(e['attacker'])} hits ${String(e['victim'])} (${String(e['victim_hp'])} HP left)`;
    case 'destroyed':
      return `${String(e['tank'])} destroyed`;
    case 'pickup':
      return `${String(e['tank'])} picks up ${String(e['kind'])}`;
    case 'game_over':
      return `battle over: ${e['winner'] === 'draw' ? 'a draw' : `${String(e['winner'])} wins`} (${e['reason'] === 'tick_limit' ? 'time is up' : 'elimination'})`;
    default:
      return undefined;
  }
}

/** Each side's tanks still standing and the HP they have left. */
function standing(w: World): string {
  const side = (team: Role) => {
    const alive = w.tanks.filter((t) => t.team === team && t.hp > 0);
    return `${team} ${alive.length} tank${alive.length === 1 ? '' : 's'} (${alive.reduce((s, t) => s + t.hp, 0)} HP)`;
  };
  return `${side('host')}, ${side('guest')}`;
}

/**
 * A match told by what happens in it, not frame by frame (ten a second): a line for each frame with a
 * hit, a kill, a pickup or the end, with the tanks left; the state of the battle every STATUS_SECONDS
 * of play; the host's refusals. Commands and their acknowledgements get no line.
 */
function narrator(): Narrator {
  let every = 10 * STATUS_SECONDS;
  return (msg) => {
    switch (msg.action) {
      case 'rt_ready': {
        const hz = (msg['config'] as { tick_rate_hz?: unknown } | undefined)?.tick_rate_hz;
        if (typeof hz === 'number' && hz > 0) every = Math.max(1, Math.round(hz * STATUS_SECONDS));
        const w = (msg['frame'] as { state: World }).state;
        const team = w.rules.team_size;
        return `battle on a ${w.cols}×${w.rows} map: ${team} tank${team === 1 ? '' : 's'} a side, at most ${w.rules.max_ticks} ticks${typeof hz === 'number' ? ` (${hz} a second)` : ''}`;
      }
      case 'rt_reject':
        return `host refuses the match: ${String(msg['reason'])}`;
      case 'rt_command_ack':
        return msg['status'] === 'rejected'
          ? `host rejects the guest's commands for tick ${String(msg['target_tick'])}${typeof msg['reason'] === 'string' ? `: ${msg['reason']}` : ''}`
          : undefined;
      case 'rt_frame': {
        const f = msg['frame'] as { tick: number; state: World; events: Event[] };
        const said = f.events.map(eventText).filter((t): t is string => t !== undefined);
        if (said.length) return `tick ${f.tick}: ${said.join('; ')} — ${standing(f.state)}`;
        return f.tick % every === 0 ? `tick ${f.tick}: ${standing(f.state)}` : undefined;
      }
      default:
        return undefined;
    }
  };
}

const hooks: HooksModule<'authoritative_realtime'> = {
  mode: 'authoritative_realtime',
  narrator,
  create(ctx) {
    let { rules, map } = optionsToRules(ctx.options);
    const memory = new Map<string, Memory>();
    /** This side's commands sent for ticks not yet stepped, by target tick. */
    const sent = new Map<number, Command[]>();
    const configure = (o: Readonly<Record<string, unknown>>) => {
      ({ rules, map } = optionsToRules(o));
      // Refuse a map that cannot hold both armies before any peer is involved.
      spawnCells(parseMap(map), rules.team_size);
    };
    configure(ctx.options);
    return {
      proto_init: (options) => configure(options),
      proto_host_metadata: () => [
        'Tank Battle · Realtime',
        'game,tank-battle,rts,realtime',
        'supply',
        {
          team_size: rules.team_size,
          max_ticks: rules.max_ticks,
          friendly_fire: rules.friendly_fire,
          pickup_mode: rules.pickup_mode,
        },
      ],
      supported_control_modes: () => ['autonomous'],
      proto_realtime_initial_state: () => initWorld(map, rules) as unknown as Record<string, unknown>,
      proto_realtime_commands(state, targetTick) {
        const now = state as unknown as World;
        for (const k of sent.keys()) if (k <= now.tick) sent.delete(k);
        const cmds = chooseCommands(foresee(now, ctx.role, targetTick, sent), ctx.role, ctx.random, memory);
        sent.set(targetTick, cmds);
        return cmds;
      },
      proto_realtime_validate_commands: (side, commands, state, targetTick) => validateCommands(side, commands, state as unknown as World, targetTick),
      proto_realtime_step(state, tick, commands) {
        const w = state as unknown as World;
        if (tick !== w.tick + 1) throw new Error('tank simulation tick discontinuity');
        const next = step(w, commands.host, commands.guest);
        return { state: next as unknown as Record<string, unknown>, events: [...next.events], outcome: next.game_over ? next.winner : 'none' };
      },
      proto_realtime_snapshot(state, frame) {
        const w = state as unknown as World;
        const events = ((frame as { events?: Event[] } | null)?.events ?? []) as Event[];
        return {
          phase: w.game_over ? 'game_over' : 'battle',
          team_size: w.rules.team_size,
          host_alive: w.host_alive,
          guest_alive: w.guest_alive,
          world: w,
          combat_events: events,
          ...(events.length && { last_event: { summary: SUMMARY[events.at(-1)!.type] ?? events.at(-1)!.type, structured: events.at(-1) } }),
        };
      },
      proto_realtime_audit_outcome(frame) {
        const f = frame as { state: World; outcome: string };
        const alive = (team: Role) => f.state.tanks.filter((t) => t.team === team && t.hp > 0).length;
        const h = alive('host');
        const g = alive('guest');
        const consistent = h === f.state.host_alive && g === f.state.guest_alive && f.state.game_over && f.state.winner === f.outcome;
        const decisive = h === 0 || g === 0 || f.state.tick >= f.state.rules.max_ticks;
        return { status: consistent && decisive ? 'passed' : 'failed', check: 'terminal_condition', host_alive: h, guest_alive: g };
      },
    };
  },
};

const SUMMARY: Record<string, string> = {
  fire: 'Tank fired',
  hit: 'Shell hit',
  destroyed: 'Tank destroyed',
  brick_destroyed: 'Brick wall destroyed',
  pickup: 'Tank collected a power-up',
  game_over: 'Battle ended',
};

export default hooks;
