/**
 * Hero duel (simultaneous_round with shadow_judge). Each round both sides commit a move (normal,
 * skill_a, skill_b, ult); damage resolves simultaneously from the declarative balance table in
 * options.balance, which both sides hold identically. The judge is pure: every number of a
 * round_result follows from the previous round_result (or the heroes' starting values) and the two
 * moves, so a guest recomputes each round and catches a host that bends the numbers.
 *
 * Rules (spec rules): a skill resolves only when mana >= cost and its cooldown counter is 0, otherwise
 * it falls back to a normal attack dealing atk. Casting sets the skill's counter to its cd; at the end
 * of the round every counter ticks down by 1 (floor 0) and mana regenerates by mana_regen up to the
 * hero's mana. First to drop the foe's HP to 0 wins; both at 0 in one round is a draw; at max_rounds
 * the higher HP wins (draw if equal). round_winner is the side that dealt more damage that round.
 */
import type { HookContext, HooksModule, Message, RoundState, RoundValue } from 'aigenora/hooks';
import { roundNarrator } from '../round-game.js';

export interface Skill {
  dmg: number;
  cost: number;
  cd: number;
}
export interface Hero {
  hp: number;
  mana: number;
  mana_regen: number;
  atk: number;
  skill_a: Skill;
  skill_b: Skill;
  ult: Skill;
}
export type Move = 'normal' | 'skill_a' | 'skill_b' | 'ult';

/** The round_result fields a guest's shadow judge compares (NOTES A11): the numbers and the verdicts. */
export const SHADOW_FIELDS = [
  'host_hp',
  'guest_hp',
  'host_mana',
  'guest_mana',
  'host_damage_dealt',
  'guest_damage_dealt',
  'host_cd_a',
  'host_cd_b',
  'host_cd_ult',
  'guest_cd_a',
  'guest_cd_b',
  'guest_cd_ult',
  'round_winner',
  'game_over',
  'game_winner',
];

interface Side {
  hp: number;
  mana: number;
  cd_a: number;
  cd_b: number;
  cd_ult: number;
}

const CD_KEY = { skill_a: 'cd_a', skill_b: 'cd_b', ult: 'cd_ult' } as const;

/**
 * The balance played when the options carry none (or an empty one): the reference's DEFAULT_BALANCE in its
 * hero-duel hooks.py, which is also its "standard" profile in index.json. The reference conveys a balance
 * only as the invitation's options.balance (join and ready carry heroes and max_rounds, nothing about the
 * numbers) and compares it only through the guest's shadow judge, so a default that differs by one number
 * ends a game without options.balance in balance_mismatch on one side. test/protocols/hero-duel-reference.test.ts
 * compares these numbers with the reference's files.
 */
export const STANDARD_BALANCE: Record<string, Hero> = {
  warrior: {
    hp: 250,
    mana: 80,
    mana_regen: 15,
    atk: 25,
    skill_a: { dmg: 50, cost: 20, cd: 2 },
    skill_b: { dmg: 70, cost: 35, cd: 3 },
    ult: { dmg: 120, cost: 60, cd: 5 },
  },
  mage: {
    hp: 150,
    mana: 120,
    mana_regen: 20,
    atk: 12,
    skill_a: { dmg: 60, cost: 25, cd: 2 },
    skill_b: { dmg: 90, cost: 45, cd: 3 },
    ult: { dmg: 180, cost: 80, cd: 5 },
  },
  assassin: {
    hp: 180,
    mana: 60,
    mana_regen: 12,
    atk: 35,
    skill_a: { dmg: 45, cost: 15, cd: 1 },
    skill_b: { dmg: 65, cost: 30, cd: 2 },
    ult: { dmg: 110, cost: 50, cd: 4 },
  },
  tank: {
    hp: 350,
    mana: 70,
    mana_regen: 14,
    atk: 18,
    skill_a: { dmg: 35, cost: 18, cd: 2 },
    skill_b: { dmg: 55, cost: 30, cd: 3 },
    ult: { dmg: 90, cost: 55, cd: 5 },
  },
};

export interface DuelSetup {
  host: Hero;
  guest: Hero;
  maxRounds: number;
}

function sideOf(result: Message | null, who: 'host' | 'guest', hero: Hero): Side {
  if (!result) return { hp: hero.hp, mana: hero.mana, cd_a: 0, cd_b: 0, cd_ult: 0 };
  const n = (k: string) => result[`${who}_${k}`] as number;
  return { hp: n('hp'), mana: n('mana'), cd_a: n('cd_a'), cd_b: n('cd_b'), cd_ult: n('cd_ult') };
}

/** What a move actually does given the side's mana and cooldowns: the move in effect, damage dealt and the side after casting. */
function resolve(side: Side, hero: Hero, move: Move): { move: Move; dmg: number; after: Side } {
  const normal = { move: 'normal' as const, dmg: hero.atk, after: { ...side } };
  if (move === 'normal') return normal;
  const skill = hero[move];
  const key = CD_KEY[move];
  if (side.mana < skill.cost || side[key] !== 0) return normal;
  return { move, dmg: skill.dmg, after: { ...side, mana: side.mana - skill.cost, [key]: skill.cd } };
}

function endOfRound(s: Side, hero: Hero, hp: number): Side {
  const tick = (x: number) => Math.max(0, x - 1);
  return { hp, mana: Math.min(hero.mana, s.mana + hero.mana_regen), cd_a: tick(s.cd_a), cd_b: tick(s.cd_b), cd_ult: tick(s.cd_ult) };
}

/** The round_result for one round, from the previous one (pure). */
export function judgeRound(setup: DuelSetup, round: number, hostMove: Move, guestMove: Move, previous: Message | null): Message & { game_over: boolean } {
  const h0 = sideOf(previous, 'host', setup.host);
  const g0 = sideOf(previous, 'guest', setup.guest);
  const h = resolve(h0, setup.host, hostMove);
  const g = resolve(g0, setup.guest, guestMove);
  const host = endOfRound(h.after, setup.host, Math.max(0, h0.hp - g.dmg));
  const guest = endOfRound(g.after, setup.guest, Math.max(0, g0.hp - h.dmg));
  const last = round + 1 >= setup.maxRounds;
  const game_over = host.hp === 0 || guest.hp === 0 || last;
  const game_winner = !game_over ? 'none' : host.hp === guest.hp ? 'draw' : host.hp > guest.hp ? 'host' : 'guest';
  const round_winner = h.dmg === g.dmg ? 'draw' : h.dmg > g.dmg ? 'host' : 'guest';
  // The moves in effect, as the reference reports them: a skill that could not be cast shows as normal.
  const out: Record<string, unknown> = { action: 'round_result', round, host_move: h.move, guest_move: g.move };
  for (const [who, s] of [
    ['host', host],
    ['guest', guest],
  ] as const) {
    out[`${who}_hp`] = s.hp;
    out[`${who}_mana`] = s.mana;
  }
  out['host_damage_dealt'] = h.dmg;
  out['guest_damage_dealt'] = g.dmg;
  for (const [who, s] of [
    ['host', host],
    ['guest', guest],
  ] as const)
    for (const k of ['cd_a', 'cd_b', 'cd_ult'] as const) out[`${who}_${k}`] = s[k];
  return { ...(out as Message), round_winner, game_over, game_winner };
}

/** The strongest move the side can actually cast this round. */
export function chooseMove(side: Side, hero: Hero): Move {
  for (const move of ['ult', 'skill_b', 'skill_a'] as const) if (side.mana >= hero[move].cost && side[CD_KEY[move]] === 0) return move;
  return 'normal';
}

/** options.balance, or the default when it is absent or empty (as the reference reads it). */
function balance(ctx: HookContext): Record<string, Hero> {
  const b = ctx.options['balance'];
  return b && typeof b === 'object' && !Array.isArray(b) && Object.keys(b).length > 0 ? (b as Record<string, Hero>) : STANDARD_BALANCE;
}

const hooks: HooksModule<'simultaneous_round'> = {
  mode: 'simultaneous_round',
  // Each move as the round_result reports it, with the damage it did; the HP left is the score.
  narrator: () =>
    roundNarrator({
      ready: (m) => `the host's ${String(m['host_hero'])} against the guest's ${String(m['guest_hero'])}, at most ${String(m['max_rounds'])} rounds`,
      round: (m) => ({
        host: `${String(m['host_move'])} (${String(m['host_damage_dealt'])} damage)`,
        guest: `${String(m['guest_move'])} (${String(m['guest_damage_dealt'])} damage)`,
        score: `HP host ${String(m['host_hp'])}, guest ${String(m['guest_hp'])}`,
      }),
    }),
  create(ctx) {
    const heroes = balance(ctx);
    const names = Object.keys(heroes);
    const pick = (key: string) => {
      const v = ctx.options[key];
      return typeof v === 'string' && v in heroes ? v : names[Math.floor(ctx.random() * names.length)]!;
    };
    const myHero = pick(ctx.role === 'host' ? 'host_hero' : 'guest_hero');
    const maxRounds = typeof ctx.options['max_rounds'] === 'number' ? ctx.options['max_rounds'] : 30;
    const setupOf = (state: RoundState): DuelSetup => {
      const r = state.ready!;
      return { host: heroes[r['host_hero'] as string]!, guest: heroes[r['guest_hero'] as string]!, maxRounds: r['max_rounds'] as number };
    };
    const judge = (round: number, h: RoundValue, g: RoundValue, state: RoundState) =>
      judgeRound(setupOf(state), round, h as Move, g as Move, state.last_result);
    return {
      proto_guest_join_message: () => ({ action: 'join', hero: myHero, max_rounds: maxRounds }),
      proto_host_handle_join(msg) {
        const guestHero = msg['hero'] as string;
        // Both sides must hold the same balance row for each hero; an unknown hero cannot be judged.
        if (!(guestHero in heroes)) return { response: { action: 'error', reason: 'invalid_move' }, abort: true };
        return { action: 'ready', host_hero: myHero, guest_hero: guestHero, max_rounds: Math.min(maxRounds, msg['max_rounds'] as number) };
      },
      proto_guest_handle_ready(msg) {
        return (msg['host_hero'] as string) in heroes && msg['guest_hero'] === myHero ? null : { abort: true };
      },
      // A person may choose any round's value through `aigenora session decide`.
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_round_value(_round, state) {
        const setup = setupOf(state);
        const who = ctx.role;
        return chooseMove(sideOf(state.last_result, who, setup[who]), setup[who]);
      },
      proto_round_judge_pure: judge,
      proto_round_shadow_fields: () => SHADOW_FIELDS,
      proto_round_judge(round, h, g, state) {
        const result = judge(round, h, g, state);
        return { response: result, completed: result.game_over };
      },
    };
  },
};

export default hooks;
