/**
 * Shared scoring for the best-of-N simultaneous-round games (rock-paper-scissors, coin flip): the
 * ready message's settings, win counting and termination. The judge functions are pure, so the host's
 * judge and a guest's shadow check compute the same round_result from the same history. Also the
 * narration every simultaneous-round built-in shares.
 */
import type { HookContext, Message, Narrator, RoundState, Role } from 'aigenora/hooks';

export interface Settings {
  best_of: number;
  rounds_to_win: number;
  termination: 'first_to_win' | 'fixed_rounds';
}

/** A cap on rounds when draws keep a first_to_win game going (each round is a fresh random draw). */
export const DRAW_CAP_FACTOR = 5;

export function settings(options: HookContext['options']): Settings {
  const best_of = typeof options['best_of'] === 'number' ? options['best_of'] : 3;
  const rounds_to_win = typeof options['rounds_to_win'] === 'number' ? options['rounds_to_win'] : Math.floor(best_of / 2) + 1;
  const termination = options['termination'] === 'fixed_rounds' ? 'fixed_rounds' : 'first_to_win';
  return { best_of, rounds_to_win, termination };
}

/** The settings the host announced, which both sides play by. */
export function agreed(state: RoundState, fallback: Settings): Settings {
  const r = state.ready;
  if (!r) return fallback;
  return {
    best_of: r['best_of'] as number,
    rounds_to_win: (r['rounds_to_win'] as number | undefined) ?? Math.floor((r['best_of'] as number) / 2) + 1,
    termination: r['termination'] === 'fixed_rounds' ? 'fixed_rounds' : 'first_to_win',
  };
}

/** The round_result after a round won by `winner` ('draw' for none). */
export function scoreRound(
  round: number,
  winner: Role | 'draw',
  state: RoundState,
  s: Settings,
  values: Record<string, unknown>,
): Message & { game_over: boolean } {
  const last = state.last_result;
  const host_wins = ((last?.['host_wins'] as number | undefined) ?? 0) + (winner === 'host' ? 1 : 0);
  const guest_wins = ((last?.['guest_wins'] as number | undefined) ?? 0) + (winner === 'guest' ? 1 : 0);
  const played = round + 1;
  const decided = s.termination === 'first_to_win' ? host_wins >= s.rounds_to_win || guest_wins >= s.rounds_to_win : played >= s.best_of;
  const game_over = decided || played >= s.best_of * DRAW_CAP_FACTOR;
  const game_winner = !game_over ? 'none' : host_wins > guest_wins ? 'host' : guest_wins > host_wins ? 'guest' : 'draw';
  return { action: 'round_result', round, ...values, round_winner: winner, host_wins, guest_wins, game_over, game_winner };
}

/** What a round game's narrator shows of one round_result: each side's play and the standing after it. */
export interface RoundView {
  host: string;
  guest: string;
  /** e.g. "host 1, guest 0". */
  score: string;
}

const outcomeText = (w: unknown) => (w === 'draw' ? 'a draw' : `${String(w)} wins`);

/**
 * The narrator of a simultaneous-round game: the settings once (from the ready), then one line per
 * round, `round N: host <play> vs guest <play> → <round winner> (<score>)`, and the game's end. The
 * commits and reveals get no line of their own: the round_result shows both plays.
 */
export function roundNarrator(show: { ready(msg: Message): string; round(msg: Message): RoundView }): Narrator {
  return (msg, from) => {
    switch (msg.action) {
      case 'ready':
        return show.ready(msg);
      case 'round_result': {
        const v = show.round(msg);
        const line = `round ${String(msg['round'])}: host ${v.host} vs guest ${v.guest} → ${String(msg['round_winner'])} (${v.score})`;
        // Its own line, so that each round's line reads the same, the last one too.
        return msg['game_over'] === true ? [line, `game over: ${outcomeText(msg['game_winner'])} (${v.score})`] : line;
      }
      case 'error':
        return `${from} reports an error: ${String(msg['reason'])}${typeof msg['round'] === 'number' ? ` (round ${msg['round']})` : ''}`;
      default:
        return undefined;
    }
  };
}

/** The settings line of the best-of games. */
function bestOfText(ready: Message): string {
  return ready['termination'] === 'fixed_rounds'
    ? `${String(ready['best_of'])} rounds: the most wins takes it`
    : `best of ${String(ready['best_of'])}: first to ${String(ready['rounds_to_win'])} wins`;
}

/** The score of the best-of games after a round. */
const winsText = (msg: Message) => `host ${String(msg['host_wins'])}, guest ${String(msg['guest_wins'])}`;

/** The narrator of the best-of games (rock-paper-scissors, coin flip): each side's choice and the wins so far. */
export const bestOfNarrator = (): Narrator =>
  roundNarrator({ ready: bestOfText, round: (m) => ({ host: String(m['host_choice']), guest: String(m['guest_choice']), score: winsText(m) }) });
