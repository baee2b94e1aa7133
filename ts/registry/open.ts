/** A RegistryClient for an agent's data directory: its identity and the server it names or remembers. */
import type { Crypto } from '../crypto/backend.js';
import { loadIdentity } from '../library/identity.js';
import { RegistryClient, type RegistryClientOptions } from './client.js';
import { resolveServer, type ServerChoice } from './config.js';

export function openRegistry(
  crypto: Crypto,
  dataDir: string,
  serverFlag?: string,
  opts: RegistryClientOptions = {},
): { client: RegistryClient; server: ServerChoice } {
  const server = resolveServer(serverFlag, dataDir);
  const { seed } = loadIdentity(crypto, dataDir);
  return { client: new RegistryClient(server.url, seed, crypto, opts), server };
}
