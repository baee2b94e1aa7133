/**
 * Crypto for Node: one interface (backend.ts), two interchangeable backends. `wasm` (the default) is
 * the Rust core; `js` is the pure-JS twin. The choice is made once at start-up, from the argument or
 * else the AIGENORA_CRYPTO environment variable.
 */
import type { BackendName, Crypto } from './backend.js';
import { CryptoError } from './errors.js';
import { jsBackend } from './js-backend.js';
import { loadWasmNode } from './node.js';

export type { AeadCipher, BackendName, Crypto, SignatureItem } from './backend.js';
export { CryptoError, type CryptoErrorCode, CRYPTO_ERROR_CODES } from './errors.js';
export * from './encoding.js';
export { jsBackend } from './js-backend.js';

export const BACKENDS: readonly BackendName[] = ['wasm', 'js'];

export function isBackendName(s: string): s is BackendName {
  return (BACKENDS as readonly string[]).includes(s);
}

export function getCrypto(name: string = process.env['AIGENORA_CRYPTO'] || 'wasm'): Crypto {
  if (!isBackendName(name)) throw new CryptoError('WASM_UNAVAILABLE', `unknown crypto backend ${JSON.stringify(name)}; use wasm or js`);
  return name === 'js' ? jsBackend : loadWasmNode();
}
