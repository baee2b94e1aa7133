/**
 * Guess the number (session_loop). The host picks a secret in [range_min, range_max] and answers each
 * guess with higher/lower; the guest bisects. A correct guess, or running out of attempts, ends the
 * game with game_over, which reveals the secret so the guest can check every hint afterwards.
 */
import type { HooksModule, Message, Narrator } from 'aigenora/hooks';

const int = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) ? v : d);

/** Whether a sequence of (guess, hint) pairs is consistent with the revealed secret (rules.cheat_detection). */
export function hintsConsistent(secret: number, history: { number: number; result: string }[]): boolean {
  return history.every(({ number, result }) => (number < secret ? result === 'higher' : number > secret ? result === 'lower' : result === 'correct'));
}

/** One line per guess, hint and ending; the hint names the guess it answers (the hint itself does not). */
function narrator(): Narrator {
  let allowed: number | undefined;
  let guessed: number | undefined;
  return (msg, from) => {
    switch (msg.action) {
      case 'ready':
        allowed = msg['max_attempts'] as number;
        return `guess a number from ${String(msg['range_min'])} to ${String(msg['range_max'])} in ${allowed} attempts`;
      case 'guess':
        guessed = msg['number'] as number;
        return `guest guesses ${guessed} (attempt ${String(msg['attempt'])})`;
      case 'hint': {
        const what = msg['result'] === 'correct' ? 'correct' : `the number is ${String(msg['result'])}${guessed === undefined ? '' : ` than ${guessed}`}`;
        return `host: ${what} (${String(msg['attempts_used'])}${allowed === undefined ? '' : ` of ${allowed}`} attempts used)`;
      }
      case 'game_over':
        return msg['winner'] === 'guest'
          ? `guest found it: the number was ${String(msg['secret_number'])} (${String(msg['total_attempts'])} attempts) — guest wins`
          : `host wins: the number was ${String(msg['secret_number'])}, not found in ${String(msg['total_attempts'])} attempts`;
      case 'error':
        return `${from} reports an error: ${String(msg['reason'])}`;
      default:
        return undefined;
    }
  };
}

const hooks: HooksModule<'session_loop'> = {
  mode: 'session_loop',
  narrator,
  create(ctx) {
    const rangeMin = int(ctx.options['range_min'], 1);
    const rangeMax = int(ctx.options['range_max'], 100);
    const maxAttempts = int(ctx.options['max_attempts'], 7);
    // host
    let secret = 0;
    let used = 0;
    // guest
    let lo = rangeMin;
    let hi = rangeMax;
    let attempt = 0;
    let allowed = maxAttempts;
    const history: { number: number; result: string }[] = [];
    let lastGuess = 0;
    const nextGuess = (): Message => {
      attempt += 1;
      lastGuess = Math.floor((lo + hi) / 2);
      return { action: 'guess', attempt, number: lastGuess };
    };
    return {
      proto_guest_join_message: () => ({ action: 'join', max_attempts: maxAttempts }),
      proto_host_handle_join() {
        secret = rangeMin + Math.floor(ctx.random() * (rangeMax - rangeMin + 1));
        return { action: 'ready', range_min: rangeMin, range_max: rangeMax, max_attempts: maxAttempts };
      },
      proto_host_handle(msg) {
        if (msg.action !== 'guess') return { response: { action: 'error', reason: 'unexpected_action' }, abort: true };
        const n = msg['number'] as number;
        used += 1;
        if (n === secret) return { response: { action: 'game_over', winner: 'guest', secret_number: secret, total_attempts: used }, completed: true };
        if (used >= maxAttempts) return { response: { action: 'game_over', winner: 'host', secret_number: secret, total_attempts: used }, completed: true };
        return { action: 'hint', attempt: msg['attempt'] as number, result: n < secret ? 'higher' : 'lower', attempts_used: used };
      },
      proto_guest_handle_ready(msg) {
        lo = msg['range_min'] as number;
        hi = msg['range_max'] as number;
        allowed = msg['max_attempts'] as number;
        return null;
      },
      proto_guest_first_action: () => nextGuess(),
      supported_control_modes: () => ['autonomous', 'hybrid', 'human'],
      // A person guessed instead: bisect from their number.
      proto_on_decision(decided) {
        if (decided.action !== 'guess') return;
        lastGuess = decided['number'] as number;
        attempt = decided['attempt'] as number;
      },
      proto_guest_handle(msg) {
        if (msg.action === 'game_over') {
          // The revealed secret must agree with every hint; a host that lied is caught here.
          if (!hintsConsistent(msg['secret_number'] as number, history)) return { abort: true };
          return { completed: true };
        }
        if (msg.action !== 'hint') return { abort: true };
        const guessed = lastGuess;
        history.push({ number: guessed, result: msg['result'] as string });
        if (msg['result'] === 'higher') lo = guessed + 1;
        else if (msg['result'] === 'lower') hi = guessed - 1;
        if (lo > hi || attempt >= allowed) return { abort: true };
        return nextGuess();
      },
    };
  },
};

export default hooks;
