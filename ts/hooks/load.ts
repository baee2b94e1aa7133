/** Loading a protocol's local hooks module, refusing pristine skeletons and modules of the wrong flow mode. */
import { existsSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Crypto } from '../crypto/backend.js';
import { readText } from '../files/read.js';
import { flowMode, type Spec } from '../spec/types.js';
import { checkPristine, skeletonBypassFromEnv } from './skeleton.js';
import { HooksError } from './instantiate.js';
import type { HooksModule } from './types.js';

export { HooksError, instantiateHooks, type HooksErrorCode } from './instantiate.js';

/** .mts/.mjs first: they are ES modules wherever they live; .ts/.js only inside a "type": "module" package. */
export const HOOK_FILES = ['hooks.mts', 'hooks.mjs', 'hooks.ts', 'hooks.js'];

export function findHooksFile(dir: string): string | undefined {
  return HOOK_FILES.map((f) => join(dir, f)).find((p) => existsSync(p));
}

export interface LoadHooksOptions {
  /** --allow-skeleton-hooks; AIGENORA_ALLOW_SKELETON_HOOKS=1 also allows it. */
  allowSkeleton?: boolean;
  /** A hooks file that resolves (through symbolic links) outside its protocol directory; AIGENORA_ALLOW_OUTSIDE_HOOKS=1 also allows it. */
  allowOutside?: boolean;
}

/** Hooks modules larger than this are refused before they are read. */
export const MAX_HOOKS_BYTES = 4 << 20;

/** Imports the hooks module beside spec.json after the skeleton checks. */
export async function loadHooks<M extends Spec>(crypto: Crypto, dir: string, spec: M, opts: LoadHooksOptions = {}): Promise<HooksModule> {
  const file = findHooksFile(dir);
  if (!file) throw new HooksError('HOOKS_MISSING', `no hooks module (${HOOK_FILES.join(', ')}) in ${dir}; run: aigenora protocol scaffold ${dir}`);
  // The code that runs is the code the protocol directory holds: a link to elsewhere is refused.
  const realDir = realpathSync(dir);
  const realFile = realpathSync(file);
  if (!realFile.startsWith(realDir + sep) && !(opts.allowOutside || process.env['AIGENORA_ALLOW_OUTSIDE_HOOKS'] === '1'))
    throw new HooksError(
      'HOOKS_OUTSIDE',
      `${file} resolves to ${realFile}, outside the protocol directory ${realDir}; copy it in (or, knowingly, AIGENORA_ALLOW_OUTSIDE_HOOKS=1)`,
    );
  const text = readText(file, { maxBytes: MAX_HOOKS_BYTES, what: 'hooks module' });
  const check = checkPristine(crypto, dir, text, spec);
  if (check.pristine && !(opts.allowSkeleton || skeletonBypassFromEnv())) {
    throw new HooksError(
      'HOOKS_SKELETON',
      `${file} is an unimplemented skeleton (${check.reasons.join('; ')}). Hooks still to write: ${check.pending.join(', ')}. ` +
        'Implement them and delete the AIGENORA_SKELETON line (tests only: --allow-skeleton-hooks or AIGENORA_ALLOW_SKELETON_HOOKS=1).',
      check.pending,
    );
  }
  const mod = await importHooksModule(file);
  const hooks = mod.default as Partial<HooksModule> | undefined;
  if (!hooks || typeof hooks !== 'object' || typeof hooks.create !== 'function' || typeof hooks.mode !== 'string')
    throw new HooksError('HOOKS_INVALID', `${file} must default-export defineHooks(mode, create) (an object {mode, create})`);
  const mode = flowMode(spec);
  if (hooks.mode !== mode) throw new HooksError('HOOKS_MODE_MISMATCH', `${file} implements ${hooks.mode} hooks but the spec's flow mode is ${mode}`);
  return hooks as HooksModule;
}

/**
 * Plain Node (20) cannot import TypeScript. A .mjs/.js module is imported as is; a .ts/.mts one (or a
 * module that re-exports one) goes through tsx's loader, the package's one dependency for that purpose,
 * loaded only when such a file is met. A runtime that already handles TypeScript (tsx, vitest) never
 * reaches the fallback.
 */
async function importHooksModule(file: string): Promise<{ default?: unknown }> {
  const url = pathToFileURL(file).href;
  try {
    return (await import(url)) as { default?: unknown };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
  }
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport(url, import.meta.url)) as { default?: unknown };
}
