/**
 * Crypto for Node: one interface (backend.ts), two interchangeable backends. `wasm` (the default) is
 * the Rust core, with mental poker's RSA private operation run by OpenSSL through node:crypto
 * (node-rsa.ts, byte-identical results) unless AIGENORA_RSA=wasm keeps it in WASM as in a browser;
 * `js` is the pure-JS twin. Bundlers and browsers get browser.ts instead (package.json "browser"
 * condition), which has the same exports.
 */
import type { Crypto, CryptoFeature } from './backend.js';
import { backendName, cryptoFeature } from './common.js';
import { jsBackend } from './js-backend.js';
import { loadWasmNode, loadWasmNodeFeature } from './node.js';
import { withNodeRsa } from './node-rsa.js';

export {
  BACKENDS,
  bytesEqual,
  concatBytes,
  CRYPTO_ERROR_CODES,
  CRYPTO_FEATURES,
  CryptoError,
  fromBase64Url,
  fromHex,
  fromUtf8,
  GO_JSON_ERROR_CODES,
  GoJsonError,
  isBackendName,
  toBase64Url,
  toHex,
  utf8,
  type AeadCipher,
  type BackendName,
  type Crypto,
  type CryptoErrorCode,
  type CryptoFeature,
  type Deck,
  type Ed25519Keypair,
  type GoJsonErrorCode,
  type Ot,
  type OtContextInput,
  type PayloadType,
  type PlayCheck,
  type PlayRejection,
  type PlayVerdict,
  type RsaKey,
  type RsaKeyParts,
  type RsaPublicKey,
  type SenderRole,
  type SignatureItem,
} from './common.js';

let wasmWithNodeRsa: Crypto | undefined;

/**
 * The backend, synchronously: Node loads the WASM core from the package with no fetch. The default is
 * `wasm`, or the AIGENORA_CRYPTO environment variable. On `wasm` the RSA private operation is
 * OpenSSL's unless the AIGENORA_RSA environment variable is `wasm`.
 *
 * @param name - `wasm` (the Rust core) or `js` (the pure-JS twin); anything else throws CryptoError
 * @example
 * ```ts
 * const c = getCrypto();
 * c.ed25519Verify(c.ed25519PublicKey(seed), utf8('hello'), c.ed25519Sign(seed, utf8('hello'))); // true
 * ```
 */
export function getCrypto(name: string = process.env['AIGENORA_CRYPTO'] || 'wasm'): Crypto {
  if (backendName(name) === 'js') return jsBackend;
  if (process.env['AIGENORA_RSA'] === 'wasm') return loadWasmNode();
  return (wasmWithNodeRsa ??= withNodeRsa(loadWasmNode()));
}

/**
 * The same as getCrypto, as a promise: code written against createCrypto runs unchanged in Node and in
 * a browser. `wasmUrl` is used by the browser entry only.
 */
export async function createCrypto(name: string = process.env['AIGENORA_CRYPTO'] || 'wasm', wasmUrl?: string | URL): Promise<Crypto> {
  void wasmUrl;
  return getCrypto(name);
}

/**
 * The same as in a browser, where it fetches a feature module of the wasm backend (CryptoFeature): in
 * Node each loads by itself on first use, so this only loads it now (WASM_UNAVAILABLE if it is not
 * built) and answers getCrypto('wasm'). `wasmUrl` is used by the browser entry only.
 */
export async function loadCryptoFeature(feature: CryptoFeature, wasmUrl?: string | URL): Promise<Crypto> {
  void wasmUrl;
  const c = getCrypto('wasm');
  loadWasmNodeFeature(cryptoFeature(feature));
  return c;
}
