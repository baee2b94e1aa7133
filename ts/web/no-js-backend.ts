/**
 * The agent page's stand-in for the pure-JS crypto backend (scripts/build-web.mjs bundles it in place of
 * ts/crypto/js-backend.ts): the page runs on the WASM backend only (createCrypto('wasm') in page.ts), so
 * the twin's code (its Ed25519, OT, deck and serialisers) would only weigh on the page. Any use of it,
 * `then` included (so createCrypto('js') rejects), throws.
 */
import type { Crypto } from '../crypto/backend.js';
import { CryptoError } from '../crypto/errors.js';

export const jsBackend: Crypto = new Proxy({} as Crypto, {
  get() {
    throw new CryptoError('WASM_UNAVAILABLE', 'the agent page carries the WASM backend only, not the pure-JS one');
  },
});
