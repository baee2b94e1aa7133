/**
 * The agent's Ed25519 identity in `<data_dir>/key.json` (reference layout, NOTES A1):
 * {"public_key": 64 hex, "private_key": 64 hex (the 32-byte seed)}, file mode 0600. The private key is
 * never printed, logged or sent.
 */
import { chmodSync, closeSync, existsSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex } from '../crypto/encoding.js';

export interface Identity {
  publicKey: string;
  /** The 32-byte seed. Keep it in memory only as long as needed. */
  seed: Uint8Array;
}

export class IdentityError extends Error {
  override readonly name = 'IdentityError';
  constructor(
    readonly code: 'IDENTITY_MISSING' | 'IDENTITY_INVALID',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export const keyPath = (dataDir: string) => join(dataDir, 'key.json');

/** Creates key.json (0600) unless it exists; returns the public key and whether it was created. */
export function ensureIdentity(crypto: Crypto, dataDir: string): { publicKey: string; created: boolean } {
  const path = keyPath(dataDir);
  if (existsSync(path)) return { publicKey: loadIdentity(crypto, dataDir).publicKey, created: false };
  const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  const publicKey = toHex(crypto.ed25519PublicKey(seed));
  const fd = openSync(path, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ public_key: publicKey, private_key: toHex(seed) }, null, 2)}\n`);
  } finally {
    closeSync(fd);
    seed.fill(0);
  }
  chmodSync(path, 0o600); // in case the umask widened it
  return { publicKey, created: true };
}

export function loadIdentity(crypto: Crypto, dataDir: string): Identity {
  const path = keyPath(dataDir);
  if (!existsSync(path)) throw new IdentityError('IDENTITY_MISSING', `no identity at ${path}; run: aigenora init`);
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  let doc: { public_key?: unknown; peer_id?: unknown; private_key?: unknown };
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new IdentityError('IDENTITY_INVALID', `${path} is not JSON`);
  }
  const pub = (doc.public_key ?? doc.peer_id) as unknown;
  if (typeof doc.private_key !== 'string' || !/^[0-9a-f]{64}$/.test(doc.private_key) || typeof pub !== 'string')
    throw new IdentityError('IDENTITY_INVALID', `${path} must hold {"public_key", "private_key"} as 64 lowercase hex each`);
  const seed = fromHex(doc.private_key);
  if (toHex(crypto.ed25519PublicKey(seed)) !== pub) throw new IdentityError('IDENTITY_INVALID', `${path}: public_key does not match private_key`);
  return { publicKey: pub, seed };
}
