/**
 * The agent's Ed25519 identity in `<data_dir>/key.json` (reference layout, NOTES A1):
 * {"public_key": 64 hex, "private_key": 64 hex (the 32-byte seed)}, file mode 0600. The private key is
 * never printed, logged or sent.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Crypto } from '../crypto/backend.js';
import { fromHex, toHex } from '../crypto/encoding.js';
import { checkSecretFile, createFileAtomic, readText, writeFileAtomic } from '../files/index.js';

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

function newKeyFile(crypto: Crypto): { publicKey: string; text: string } {
  const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  try {
    const publicKey = toHex(crypto.ed25519PublicKey(seed));
    return { publicKey, text: `${JSON.stringify({ public_key: publicKey, private_key: toHex(seed) }, null, 2)}\n` };
  } finally {
    seed.fill(0);
  }
}

/**
 * Creates key.json (0600, written whole or not at all) unless it exists. An empty key.json (left by a
 * full disk before writes were atomic) holds no identity and is replaced; any other content that is not
 * an identity is someone's file and is refused with the fix spelled out, never overwritten.
 */
export function ensureIdentity(crypto: Crypto, dataDir: string): { publicKey: string; created: boolean; repaired: boolean } {
  const path = keyPath(dataDir);
  const st = statSync(path, { throwIfNoEntry: false });
  if (st?.isFile() && st.size === 0) {
    const k = newKeyFile(crypto);
    writeFileAtomic(path, k.text, 0o600);
    return { publicKey: k.publicKey, created: true, repaired: true };
  }
  if (st) return { publicKey: loadIdentity(crypto, dataDir).publicKey, created: false, repaired: false };
  const k = newKeyFile(crypto);
  createFileAtomic(path, k.text, 0o600);
  return { publicKey: k.publicKey, created: true, repaired: false };
}

export function loadIdentity(crypto: Crypto, dataDir: string): Identity {
  const path = keyPath(dataDir);
  if (!statSync(path, { throwIfNoEntry: false })) throw new IdentityError('IDENTITY_MISSING', `no identity at ${path}; run: aigenora init`);
  checkSecretFile(path, 'identity');
  const fix = `move it away (mv ${path} ${path}.bak) and run aigenora init for a new identity`;
  let doc: { public_key?: unknown; peer_id?: unknown; private_key?: unknown } | null;
  try {
    doc = JSON.parse(readText(path, { maxBytes: 64 << 10, what: 'identity' }));
  } catch (e) {
    if (e instanceof SyntaxError) throw new IdentityError('IDENTITY_INVALID', `${path} is not JSON; ${fix}`);
    throw e;
  }
  const pub = (doc?.public_key ?? doc?.peer_id) as unknown;
  if (typeof doc?.private_key !== 'string' || !/^[0-9a-f]{64}$/.test(doc.private_key) || typeof pub !== 'string')
    throw new IdentityError('IDENTITY_INVALID', `${path} must hold {"public_key", "private_key"} as 64 lowercase hex each; ${fix}`);
  const seed = fromHex(doc.private_key);
  if (toHex(crypto.ed25519PublicKey(seed)) !== pub) throw new IdentityError('IDENTITY_INVALID', `${path}: public_key does not match private_key; ${fix}`);
  return { publicKey: pub, seed };
}
