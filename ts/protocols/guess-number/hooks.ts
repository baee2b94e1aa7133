/**
 * Guess the number (session_loop). The host picks a secret in [range_min, range_max] and answers each
 * guess with higher/lower; the guest bisects. A correct guess, or running out of attempts, ends the
 * game with game_over, which reveals the secret so the guest can check every hint afterwards.
 */
import type { HooksModule, Message } from 'aigenora/hooks';

const int = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) ? v : d);

/** Whether a sequence of (guess, hint) pairs is consistent with the revealed secret (rules.cheat_detection). */
export function hintsConsistent(secret: number, history: { number: number; result: string }[]): boolean {
  return history.every(({ number, result }) => (number < secret ? result === 'higher' : number > secret ? result === 'lower' : result === 'correct'));
}

const hooks: HooksModule<'session_loop'> = {
  mode: 'session_loop',
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
