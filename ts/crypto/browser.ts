/**
 * Crypto for browsers and bundlers: the same exports as index.ts. The WASM core comes from the web
 * build (bindings/web), located with `new URL(…, import.meta.url)` so that vite, webpack and a plain
 * <script type="module"> page find it without configuration. Instantiating WASM is asynchronous in a
 * browser, so `createCrypto` comes first; after it resolves, `getCrypto('wasm')` answers synchronously.
 */
import init, * as bindings from '../../bindings/web/aigenora_wasm.js';
import type { Crypto } from './backend.js';
import { backendName } from './common.js';
import { CryptoError } from './errors.js';
import { jsBackend } from './js-backend.js';
import { wasmBackend, type WasmExports } from './wasm-backend.js';

export {
  BACKENDS,
  bytesEqual,
  concatBytes,
  CRYPTO_ERROR_CODES,
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

let loading: Promise<Crypto> | undefined;
let loaded: Crypto | undefined;

/**
 * The backend once it is loaded; the wasm one is fetched and instantiated on the first call only.
 *
 * @param name - `wasm` (the Rust core) or `js` (the pure-JS twin)
 * @param wasmUrl - where the .wasm file is fetched from (default: beside the bindings in the package)
 * @example
 * ```ts
 * const c = await createCrypto();
 * toHex(c.sha256(utf8('abc')));
 * ```
 */
export function createCrypto(name: string = 'wasm', wasmUrl?: string | URL): Promise<Crypto> {
  if (backendName(name) === 'js') return Promise.resolve(jsBackend);
  loading ??= init({ module_or_path: wasmUrl ?? new URL('../../bindings/web/aigenora_wasm_bg.wasm', import.meta.url) }).then(
    () => (loaded = wasmBackend(bindings as unknown as WasmExports)),
    (e: unknown) => {
      loading = undefined;
      throw new CryptoError('WASM_UNAVAILABLE', `could not load the WASM core: ${e instanceof Error ? e.message : String(e)}`);
    },
  );
  return loading;
}

/** The js backend at any time; the wasm backend once `createCrypto()` has resolved. */
export function getCrypto(name: string = 'wasm'): Crypto {
  if (backendName(name) === 'js') return jsBackend;
  if (!loaded) throw new CryptoError('WASM_UNAVAILABLE', 'in a browser the WASM core loads asynchronously: await createCrypto() first');
  return loaded;
}
