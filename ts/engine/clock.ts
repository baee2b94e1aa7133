/**
 * Time as the engine's decision windows see it. The system clock is the default; tests pass a clock
 * they advance by hand, so that a window closes when the test says so and not when a loaded machine
 * happens to be slow.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves once `now()` has moved on by `ms`. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};
