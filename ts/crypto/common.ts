/**
 * What the Node entry (index.ts) and the browser entry (browser.ts) share: the interface, errors,
 * encodings, the pure-JS backend and backend names. Nothing here touches Node or the DOM.
 */
import type { BackendName } from './backend.js';
import { CryptoError } from './errors.js';

export type { AeadCipher, BackendName, Crypto, Ed25519Keypair, SignatureItem } from './backend.js';
export { CryptoError, type CryptoErrorCode, CRYPTO_ERROR_CODES } from './errors.js';
export * from './encoding.js';
export type { Deck, PlayCheck, PlayRejection, PlayVerdict } from './deck.js';
export { BLOB_A_LEN, BLOB_B_LEN, CARD_LEN, MIN_BLOB_LEN, PAD_LEN, PLAINTEXT_LEN, PLAY_REJECTIONS } from './deck.js';
export type { Ot, OtContextInput, PayloadType, RsaKey, RsaKeyParts, RsaPublicKey, SenderRole } from './ot.js';
export {
  intFromHex,
  intToHex,
  isWireInt,
  wideIntFromHex,
  OT_NONCE_LEN,
  PAYLOAD_K_INNER,
  PAYLOAD_K_OUTER,
  ROLE_GUEST,
  ROLE_HOST,
  RSA_BYTES,
  RSA_E,
} from './ot.js';
export { BOX_MAGIC, BOX_MIN_LEN, POW_MAX_DIFFICULTY } from './box.js';
export {
  canonicalGoJson,
  compareUtf8,
  GO_JSON_ERROR_CODES,
  GO_MAX_BYTES,
  GO_MAX_DEPTH,
  GoJsonError,
  type GoJsonErrorCode,
  goJsonEncode,
  goJsonString,
  parseWireJson,
  RawJson,
  type WireNode,
  type WireParseOptions,
} from './gojson.js';
export { jsBackend } from './js-backend.js';

export const BACKENDS: readonly BackendName[] = ['wasm', 'js'];

export function isBackendName(s: string): s is BackendName {
  return (BACKENDS as readonly string[]).includes(s);
}

export function backendName(name: string): BackendName {
  if (!isBackendName(name)) throw new CryptoError('WASM_UNAVAILABLE', `unknown crypto backend ${JSON.stringify(name)}; use wasm or js`);
  return name;
}
