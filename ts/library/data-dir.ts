/** Where an agent keeps its identity, protocols and sessions: --data-dir, else the environment, else ~/.aigenora. */
import { chmodSync, existsSync, lstatSync, mkdirSync, readlinkSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Environment variables, in order; P2P_DATA_DIR and AGENT_DIR are the reference's names (NOTES A1). */
export const DATA_DIR_ENV = ['AIGENORA_DATA_DIR', 'P2P_DATA_DIR', 'AGENT_DIR'];

export function resolveDataDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return resolve(flag);
  for (const name of DATA_DIR_ENV) if (env[name]) return resolve(env[name]!);
  return join(homedir(), '.aigenora');
}

export class DataDirError extends Error {
  override readonly name = 'DataDirError';
  readonly code = 'DATA_DIR_INVALID';
  constructor(message: string) {
    super(`DATA_DIR_INVALID: ${message}`);
  }
}

/**
 * Creates the data directory (and protocols/ in it) with mode 0700, and narrows an existing one to 0700:
 * it holds the private key. A path that is a file, or a symbolic link to nothing, is refused.
 */
export function prepareDataDir(dir: string): { created: boolean; narrowed: boolean } {
  const link = lstatSync(dir, { throwIfNoEntry: false });
  if (link?.isSymbolicLink() && !existsSync(dir)) throw new DataDirError(`${dir} is a symbolic link to ${readlinkSync(dir)}, which does not exist`);
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st && !st.isDirectory()) throw new DataDirError(`${dir} exists and is not a directory`);
  try {
    mkdirSync(join(dir, 'protocols'), { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new DataDirError(`cannot create ${dir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const mode = statSync(dir).mode & 0o777;
  if (mode !== 0o700) chmodSync(dir, 0o700);
  return { created: !st, narrowed: !!st && mode !== 0o700 };
}
