/**
 * What the Node entry (index.ts) and the browser entry (browser.ts) share: the interface, errors,
 * encodings and backend names. Nothing here touches Node or the DOM.
 */
import type { BackendName, CryptoFeature } from './backend.js';
import { CryptoError } from './errors.js';

export type { AeadCipher, BackendName, Crypto, CryptoFeature, Ed25519Keypair, SignatureItem } from './backend.js';
export { CryptoError, type CryptoErrorCode, CRYPTO_ERROR_CODES } from './errors.js';
export { bytesEqual, concatBytes, fromBase64Url, fromHex, fromUtf8, toBase64Url, toHex, utf8 } from './encoding.js';
// The types of Crypto's deck and ot members, and the error its goCanonicalJson throws.
export type { Deck, PlayCheck, PlayRejection, PlayVerdict } from './deck.js';
export type { Ot, OtContextInput, PayloadType, RsaKey, RsaKeyParts, RsaPublicKey, SenderRole } from './ot.js';
export { GO_JSON_ERROR_CODES, GoJsonError, type GoJsonErrorCode } from './gojson.js';

export const BACKENDS: readonly BackendName[] = ['wasm', 'js'];

export function isBackendName(s: string): s is BackendName {
  return (BACKENDS as readonly string[]).includes(s);
}

export function backendName(name: string): BackendName {
  if (!isBackendName(name)) throw new CryptoError('WASM_UNAVAILABLE', `unknown crypto backend ${JSON.stringify(name)}; use wasm or js`);
  return name;
}

export const CRYPTO_FEATURES: readonly CryptoFeature[] = ['mp', 'gojson', 'pyjson'];

export function cryptoFeature(name: string): CryptoFeature {
  if (!(CRYPTO_FEATURES as readonly string[]).includes(name))
    throw new CryptoError('WASM_UNAVAILABLE', `unknown WASM feature module ${JSON.stringify(name)}; use one of ${CRYPTO_FEATURES.join(', ')}`);
  return name as CryptoFeature;
}
