/**
 * A deterministic PRNG (mulberry32) for HookContext.random, so that a seed replays the same game.
 * Not for secrets: a deal that must not be guessed draws from the OS (see the network drivers).
 */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
