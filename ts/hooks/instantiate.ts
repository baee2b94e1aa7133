/**
 * Creating one session's hooks from a hooks module, with no file access: the part of hook loading a
 * browser page shares with the CLI (load.ts finds, checks and imports the module from disk).
 */
import { HOOK_NAMES, type HookContext, type HooksByMode, type HooksModule } from './types.js';

export type HooksErrorCode = 'HOOKS_MISSING' | 'HOOKS_SKELETON' | 'HOOKS_INVALID' | 'HOOKS_MODE_MISMATCH' | 'HOOKS_INCOMPLETE' | 'HOOKS_OUTSIDE';

export class HooksError extends Error {
  override readonly name = 'HooksError';
  constructor(
    readonly code: HooksErrorCode,
    message: string,
    /** Hooks still to write, for HOOKS_SKELETON and HOOKS_INCOMPLETE. */
    readonly pending: string[] = [],
  ) {
    super(`${code}: ${message}`);
  }
}

/** Creates one session's hooks and checks that every required hook of the mode is a function. */
export function instantiateHooks<M extends keyof HooksByMode>(module: HooksModule<M>, ctx: HookContext): HooksByMode[M] {
  const h = module.create(ctx) as unknown as Record<string, unknown>;
  const missing = HOOK_NAMES[module.mode].required.filter((n) => typeof h[n] !== 'function');
  if (missing.length) throw new HooksError('HOOKS_INCOMPLETE', `the ${module.mode} hooks lack ${missing.join(', ')}`, missing);
  return h as unknown as HooksByMode[M];
}
