/** Rock-paper-scissors (simultaneous_round): the engine commits and reveals; these hooks choose and judge. */
import type { HooksModule, RoundValue } from 'aigenora/hooks';
import { agreed, bestOfNarrator, scoreRound, settings } from '../round-game.js';

export const CHOICES = ['rock', 'paper', 'scissors'] as const;
type Choice = (typeof CHOICES)[number];
/** What each choice beats (spec rules.win_conditions). */
const BEATS: Record<Choice, Choice> = { rock: 'scissors', paper: 'rock', scissors: 'paper' };

export function winnerOf(host: Choice, guest: Choice): 'host' | 'guest' | 'draw' {
  return host === guest ? 'draw' : BEATS[host] === guest ? 'host' : 'guest';
}

const hooks: HooksModule<'simultaneous_round'> = {
  mode: 'simultaneous_round',
  // `round 0: host rock vs guest paper → guest (host 0, guest 1)`: the demo's test re-judges these lines.
  narrator: bestOfNarrator,
  create(ctx) {
    const mine = settings(ctx.options);
    const roundDelay = typeof ctx.options['round_delay_seconds'] === 'number' ? ctx.options['round_delay_seconds'] : 0;
    const judge = (round: number, h: RoundValue, g: RoundValue, state: Parameters<typeof scoreRound>[2]) =>
      scoreRound(round, winnerOf(h as Choice, g as Choice), state, agreed(state, mine), { host_choice: h, guest_choice: g });
    return {
      proto_guest_join_message: () => ({ action: 'join', best_of: mine.best_of }),
      proto_host_handle_join: () => ({ action: 'ready', ...mine, round_delay_seconds: roundDelay }),
      // A person may choose any round's value through `aigenora session decide`.
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_round_value: () => CHOICES[Math.floor(ctx.random() * 3)]!,
      proto_round_judge_pure: judge,
      proto_round_judge(round, h, g, state) {
        const result = judge(round, h, g, state);
        return { response: result, completed: result.game_over };
      },
    };
  },
};

export default hooks;
