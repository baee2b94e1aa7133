/**
 * Coin flip (simultaneous_round). The spec's rules disagree with themselves ("setup": same side → host
 * wins; "win_conditions": guest wins iff the choices match); these hooks follow win_conditions, the
 * rule stated as the win condition.
 */
import type { HooksModule, RoundValue } from 'aigenora/hooks';
import { agreed, bestOfNarrator, scoreRound, settings } from '../round-game.js';

export function winnerOf(host: RoundValue, guest: RoundValue): 'host' | 'guest' {
  return host === guest ? 'guest' : 'host';
}

const hooks: HooksModule<'simultaneous_round'> = {
  mode: 'simultaneous_round',
  narrator: bestOfNarrator,
  create(ctx) {
    const mine = settings(ctx.options);
    const judge = (round: number, h: RoundValue, g: RoundValue, state: Parameters<typeof scoreRound>[2]) => {
      const { best_of, rounds_to_win } = agreed(state, mine);
      // Coin flip has no termination parameter: first to rounds_to_win.
      return scoreRound(round, winnerOf(h, g), state, { best_of, rounds_to_win, termination: 'first_to_win' }, { host_choice: h, guest_choice: g });
    };
    return {
      proto_guest_join_message: () => ({ action: 'join', best_of: mine.best_of }),
      proto_host_handle_join: () => ({ action: 'ready', best_of: mine.best_of, rounds_to_win: mine.rounds_to_win }),
      // A person may choose any round's value through `aigenora session decide`.
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      proto_round_value: () => (ctx.random() < 0.5 ? 'heads' : 'tails'),
      proto_round_judge_pure: judge,
      proto_round_judge(round, h, g, state) {
        const result = judge(round, h, g, state);
        return { response: result, completed: result.game_over };
      },
    };
  },
};

export default hooks;
