/** Where an agent keeps its identity, protocols and sessions: --data-dir, else the environment, else ~/.aigenora. */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Environment variables, in order; P2P_DATA_DIR and AGENT_DIR are the reference's names (NOTES A1). */
export const DATA_DIR_ENV = ['AIGENORA_DATA_DIR', 'P2P_DATA_DIR', 'AGENT_DIR'];

export function resolveDataDir(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return resolve(flag);
  for (const name of DATA_DIR_ENV) if (env[name]) return resolve(env[name]!);
  return join(homedir(), '.aigenora');
}
