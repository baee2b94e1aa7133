// What the tests of the group built-ins share before any game is played: the host context their hooks are
// made with, four fixed seats, a refused action read as its text, and the checks of a built-in's spec
// against the reference's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { getCrypto } from '../../ts/crypto/index.js';
import { seeded } from '../../ts/hooks/random.js';
import type { GroupMember, HookContext } from '../../ts/hooks/types.js';
import { BUILTIN_DIR } from '../../ts/protocols/index.js';
import { loadSpec } from '../../ts/spec/index.js';
import { needShared, REFERENCE_SRC } from '../shared/require.js';

/** A host's hook context: `options`, no files, randomness seeded by `seed`. */
export const hostContext = (options: Record<string, unknown> = {}, seed = 1): HookContext => ({
  role: 'host',
  options,
  args: [],
  stateDir: '',
  decision: null,
  random: seeded(seed),
});

/** Four active members: seat i's public key is `letters[i]` 64 times, its member_id `<idPrefix><i>`. */
export const fourSeats = (letters: string, idPrefix: string): GroupMember[] =>
  [0, 1, 2, 3].map((seat) => ({ member_id: `${idPrefix}${seat}`, public_key: letters[seat]!.repeat(64), seat, status: 'active' }));

/** What `run` throws (a refusal's text), or 'accepted'. */
export function refusalOf(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    return (e as Error).message;
  }
  return 'accepted';
}

/** What `fn` returns as {ok}, or the text of what it throws as {error}: the reference scripts' shape of a result. */
export function attempt<T>(fn: () => T): { ok: T } | { error: string } {
  try {
    return { ok: fn() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** The reference's folder of the built-in with protocol id `id`. */
export const referenceProtocolDir = (id: string): string => join(REFERENCE_SRC, 'aigenora/protocols', id.slice(0, 8), id.slice(8));

/**
 * The spec checks, in the calling describe: the spec.json of built-in `folder` loads without issues under
 * protocol id `id`, and (where ../shared holds it) is the reference's file byte for byte. `what` names the
 * reference's file for the notice when it is missing.
 */
export function referenceSpecTests(folder: string, id: string, what: string): void {
  const haveRefSpec = needShared(`reference/aigenora-src/src/aigenora/protocols/${id.slice(0, 8)}/${id.slice(8)}/spec.json`, what);

  it('has the reference protocol id', () => {
    const loaded = loadSpec(getCrypto(), join(BUILTIN_DIR, folder));
    expect(loaded.issues).toEqual([]);
    expect(loaded.protocolId).toBe(id);
  });

  it.skipIf(!haveRefSpec)('is the reference spec byte for byte', () => {
    expect(readFileSync(join(BUILTIN_DIR, folder, 'spec.json')).equals(readFileSync(join(referenceProtocolDir(id), 'spec.json')))).toBe(true);
  });
}
