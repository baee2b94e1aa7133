/**
 * Weak Wins All (simultaneous_round): both sides start with total_points and bid part of what they
 * have left each round; the lower bid scores both bids, equal bids score each side its own bid; after
 * total_rounds the higher score wins. The engine commits and reveals; these hooks bid and judge.
 * The judge reads only the ready and the previous round_result, so it is pure: the host's judge and an
 * offline re-judge compute the same round_result.
 */
import type { HookContext, HooksModule, Message, Role, RoundState, RoundValue } from 'aigenora/hooks';
import { roundNarrator } from '../round-game.js';

/** The reference's values when neither the options nor the join name one. */
export const DEFAULT_POINTS = 25;
export const DEFAULT_ROUNDS = 5;
/** spec.parameters bounds: a ready outside them comes from a host not playing these rules. */
const POINTS = { min: 10, max: 1000 };
const ROUNDS = { min: 2, max: 50 };

export interface Settings {
  total_points: number;
  total_rounds: number;
}

export interface RoundResult extends Message {
  action: 'round_result';
  round: number;
  host_bid: number;
  guest_bid: number;
  round_winner: Role | 'draw';
  host_score: number;
  guest_score: number;
  host_remaining: number;
  guest_remaining: number;
  game_over: boolean;
  game_winner: Role | 'draw' | 'none';
}

const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

export function settings(options: HookContext['options']): Settings {
  return { total_points: int(options['total_points']) ?? DEFAULT_POINTS, total_rounds: int(options['total_rounds']) ?? DEFAULT_ROUNDS };
}

/** The settings the host announced, which both sides play by. */
export function agreed(state: RoundState, fallback: Settings): Settings {
  const r = state.ready;
  return {
    total_points: int(r?.['total_points']) ?? fallback.total_points,
    total_rounds: int(r?.['total_rounds']) ?? fallback.total_rounds,
  };
}

/** What each side has left to bid before the next round. */
export function remaining(state: RoundState, s: Settings): Record<Role, number> {
  const last = state.last_result;
  return {
    host: int(last?.['host_remaining']) ?? s.total_points,
    guest: int(last?.['guest_remaining']) ?? s.total_points,
  };
}

/**
 * The round_result for two revealed bids. A bid above what its side has left counts as everything it
 * has left (the reference judges so); the remainder of a final bid that is not all-in is simply lost.
 */
export function judgeRound(round: number, hostValue: RoundValue, guestValue: RoundValue, state: RoundState, s: Settings): RoundResult {
  const left = remaining(state, s);
  const last = state.last_result;
  const clamp = (v: RoundValue, max: number) => Math.max(0, Math.min(int(v) ?? 0, max));
  const host_bid = clamp(hostValue, left.host);
  const guest_bid = clamp(guestValue, left.guest);
  let host_score = int(last?.['host_score']) ?? 0;
  let guest_score = int(last?.['guest_score']) ?? 0;
  const round_winner = host_bid === guest_bid ? 'draw' : host_bid < guest_bid ? 'host' : 'guest';
  if (round_winner === 'draw') {
    host_score += host_bid;
    guest_score += guest_bid;
  } else if (round_winner === 'host') host_score += host_bid + guest_bid;
  else guest_score += host_bid + guest_bid;
  const game_over = round + 1 >= s.total_rounds;
  const game_winner = !game_over ? 'none' : host_score > guest_score ? 'host' : guest_score > host_score ? 'guest' : 'draw';
  return {
    action: 'round_result',
    round,
    host_bid,
    guest_bid,
    round_winner,
    host_score,
    guest_score,
    host_remaining: left.host - host_bid,
    guest_remaining: left.guest - guest_bid,
    game_over,
    game_winner,
  };
}

/** The reference's autonomous bid: an even split of what is left over the rounds left, all-in on the last. */
export function autoBid(round: number, left: number, s: Settings): number {
  const mine = Math.max(0, left);
  if (round >= s.total_rounds - 1) return mine;
  return Math.min(Math.max(1, Math.floor(mine / Math.max(1, s.total_rounds - round))), mine);
}

const inside = (v: unknown, b: { min: number; max: number }) => int(v) !== undefined && (v as number) >= b.min && (v as number) <= b.max;

const hooks: HooksModule<'simultaneous_round'> = {
  mode: 'simultaneous_round',
  narrator: () =>
    roundNarrator({
      ready: (m) => `${String(m['total_rounds'])} rounds, ${String(m['total_points'])} points each to bid: the lower bid scores both`,
      round: (m) => ({
        host: `bids ${String(m['host_bid'])}`,
        guest: `bids ${String(m['guest_bid'])}`,
        score: `score host ${String(m['host_score'])}, guest ${String(m['guest_score'])}; left host ${String(m['host_remaining'])}, guest ${String(m['guest_remaining'])}`,
      }),
    }),
  create(ctx) {
    const mine = settings(ctx.options);
    return {
      proto_guest_join_message: () => ({ action: 'join', ...mine }),
      // The host plays by the settings the guest's join proposes (validated by the spec against the
      // same bounds as the options), as the reference's host does, so either implementation can host.
      proto_host_handle_join: (join) => ({ action: 'ready', ...agreed({ results: [], last_result: null, ready: join }, mine) }),
      proto_guest_handle_ready: (ready) => (inside(ready['total_points'], POINTS) && inside(ready['total_rounds'], ROUNDS) ? null : { abort: true }),
      proto_host_metadata: () => ['Weak Wins All', 'game,weak-wins-all', 'supply', { ...mine }],
      // A person may choose any round's bid through `aigenora session decide`.
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_round_value(round, state) {
        const s = agreed(state, mine);
        return autoBid(round, remaining(state, s)[ctx.role], s);
      },
      proto_round_judge_pure: (round, h, g, state) => judgeRound(round, h, g, state, agreed(state, mine)),
      proto_round_judge(round, h, g, state) {
        const result = judgeRound(round, h, g, state, agreed(state, mine));
        return { response: result, completed: result.game_over };
      },
    };
  },
};

export default hooks;
