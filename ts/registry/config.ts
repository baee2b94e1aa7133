/**
 * Which registry server a command talks to, and remembering it. The reference's order (NOTES A1):
 * --server, then the environment, then a config file; its public default is not used, so nothing is
 * sent anywhere the user did not name. `register` remembers the server in `<data_dir>/config.json`.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { FileError, readText, writeFileAtomic } from '../files/index.js';
import { RegistryError } from './errors.js';
import { normalizeBaseUrl } from './http.js';

/** Environment variables naming the server, in order; P2P_SERVER is the reference's name. */
export const SERVER_ENV = ['AIGENORA_SERVER', 'P2P_SERVER'];

export const configPath = (dataDir: string) => join(dataDir, 'config.json');

function readConfig(path: string): Record<string, unknown> {
  if (!statSync(path, { throwIfNoEntry: false })) return {};
  let doc: unknown;
  try {
    doc = JSON.parse(readText(path, { maxBytes: 64 << 10, what: 'config' }));
  } catch (e) {
    if (e instanceof SyntaxError || e instanceof FileError)
      throw new RegistryError('REGISTRY_CONFIG_INVALID', `${path} cannot be read as JSON (${e.message.split('\n')[0]})`);
    throw e;
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new RegistryError('REGISTRY_CONFIG_INVALID', `${path} is not a JSON object`);
  return doc as Record<string, unknown>;
}

export interface ServerChoice {
  url: string;
  /** Where it came from, for messages: "--server", an environment variable or a config file path. */
  from: string;
}

/** The server to use, or REGISTRY_NO_SERVER saying how to name one. */
export function resolveServer(flag: string | undefined, dataDir: string, env: NodeJS.ProcessEnv = process.env): ServerChoice {
  if (flag !== undefined) return { url: normalizeBaseUrl(flag), from: '--server' };
  for (const name of SERVER_ENV) if (env[name]) return { url: normalizeBaseUrl(env[name]!), from: name };
  const files = [env['AIGENORA_CONFIG'], configPath(dataDir)].filter((p): p is string => !!p);
  for (const path of files) {
    const server = readConfig(path)['server'];
    if (typeof server === 'string' && server !== '') return { url: normalizeBaseUrl(server), from: path };
  }
  throw new RegistryError(
    'REGISTRY_NO_SERVER',
    `no registry server named: pass --server URL, set AIGENORA_SERVER, or register once with --server (it is remembered in ${configPath(dataDir)})`,
  );
}

/** Records the server in the data directory's config, keeping any other settings there. */
export function rememberServer(dataDir: string, url: string): void {
  const path = configPath(dataDir);
  const doc = { ...readConfig(path), server: normalizeBaseUrl(url) };
  writeFileAtomic(path, `${JSON.stringify(doc, null, 2)}\n`, 0o600);
}
