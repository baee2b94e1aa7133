/**
 * The authority thread of a game: every read or write of game state runs inside `dispatch`, one piece of
 * work at a time, in submission order. Network and model work must stay outside it, so a slow control
 * plane can never hold the game's state hostage.
 */
export interface AuthorityDispatcher {
  dispatch<T>(work: () => T | Promise<T>): Promise<T>;
}

/**
 * A serial queue: work runs strictly one after another even when it is asynchronous, and a failing piece
 * of work rejects only its own promise. `dispatched` counts the work that ran (the conformance suite uses
 * it to prove an adapter was reached through the dispatcher).
 */
export class SerialDispatcher implements AuthorityDispatcher {
  private tail: Promise<unknown> = Promise.resolve();
  private count = 0;
  private running = false;

  get dispatched(): number {
    return this.count;
  }

  /** True while a piece of work runs: lets an adapter assert it is on the authority thread. */
  get active(): boolean {
    return this.running;
  }

  dispatch<T>(work: () => T | Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.count += 1;
      this.running = true;
      try {
        return await work();
      } finally {
        this.running = false;
      }
    };
    const result = this.tail.then(run, run);
    // The chain must continue after a failure; the caller still sees the rejection through `result`.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
