/**
 * Crypto for browsers and bundlers: the same exports as index.ts. The WASM core comes from the web
 * build (bindings/web), located with `new URL(…, import.meta.url)` so that vite, webpack and a plain
 * <script type="module"> page find it without configuration. Instantiating WASM is asynchronous in a
 * browser, so `createCrypto` comes first; after it resolves, `getCrypto('wasm')` answers synchronously.
 * The feature modules (backend.ts, CryptoFeature) are fetched only by `loadCryptoFeature`: a page that
 * plays no mental poker never downloads the RSA arithmetic.
 */
import init, * as bindings from '../../bindings/web/aigenora_wasm.js';
import type { Crypto, CryptoFeature } from './backend.js';
import { backendName, cryptoFeature } from './common.js';
import { CryptoError } from './errors.js';
import { jsBackend } from './js-backend.js';
import { wasmBackend, type WasmExports, type WasmFeatureExports, type WasmFeatureLoader } from './wasm-backend.js';

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

let loading: Promise<Crypto> | undefined;
let loaded: Crypto | undefined;

/** The feature modules instantiated so far, and those being fetched. */
const features: Partial<WasmFeatureExports> = {};
const featuresLoading: Partial<Record<CryptoFeature, Promise<void>>> = {};

const featureLoader: WasmFeatureLoader = (feature, method) => {
  const f = features[feature];
  if (!f) throw new CryptoError('WASM_FEATURE_NOT_LOADED', `${method} needs the '${feature}' WASM module; await loadCryptoFeature('${feature}') first`);
  return f;
};

/**
 * Each feature module's glue and .wasm, by literal paths so that bundlers see them: the glue is imported
 * when the feature is first loaded (a bundler may split it off), the .wasm fetched from beside it.
 */
const FEATURE_MODULES: { [F in CryptoFeature]: () => Promise<{ glue: FeatureGlue<WasmFeatureExports[F]>; url: URL }> } = {
  mp: async () => ({
    glue: await import('../../bindings/web/aigenora_wasm_mp.js'),
    url: new URL('../../bindings/web/aigenora_wasm_mp_bg.wasm', import.meta.url),
  }),
  gojson: async () => ({
    glue: await import('../../bindings/web/aigenora_wasm_gojson.js'),
    url: new URL('../../bindings/web/aigenora_wasm_gojson_bg.wasm', import.meta.url),
  }),
  pyjson: async () => ({
    glue: await import('../../bindings/web/aigenora_wasm_pyjson.js'),
    url: new URL('../../bindings/web/aigenora_wasm_pyjson_bg.wasm', import.meta.url),
  }),
};

/** A web-target glue module: its init, and its exports once init has resolved. */
type FeatureGlue<T> = T & { default(options: { module_or_path: string | URL }): Promise<unknown> };

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
    () => (loaded = wasmBackend(bindings as unknown as WasmExports, featureLoader)),
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

/**
 * Fetches and instantiates one feature module of the wasm backend (CryptoFeature: `mp` for
 * `Crypto.deck` and `Crypto.ot`, `gojson` for goCanonicalJson, `pyjson` for protocolId), loading the
 * core first from its default place if `createCrypto` has not. Resolves to the wasm backend, the one
 * getCrypto('wasm') answers, whose calls of that feature work from then on; before, they throw
 * CryptoError WASM_FEATURE_NOT_LOADED. Loading a feature twice fetches it once.
 *
 * @param feature - `mp`, `gojson` or `pyjson`; anything else throws CryptoError WASM_UNAVAILABLE
 * @param wasmUrl - where the module's .wasm is fetched from (default: beside the bindings in the package)
 * @example
 * ```ts
 * const c = await loadCryptoFeature('pyjson');
 * c.protocolId(specText);
 * ```
 */
export async function loadCryptoFeature(feature: CryptoFeature, wasmUrl?: string | URL): Promise<Crypto> {
  const f = cryptoFeature(feature);
  // The core and the feature module are fetched at the same time.
  const core = createCrypto('wasm');
  featuresLoading[f] ??= FEATURE_MODULES[f]()
    .then(async ({ glue, url }) => {
      await glue.default({ module_or_path: wasmUrl ?? url });
      (features as Record<CryptoFeature, unknown>)[f] = glue;
    })
    .catch((e: unknown) => {
      delete featuresLoading[f];
      throw new CryptoError('WASM_UNAVAILABLE', `could not load the '${f}' WASM module: ${e instanceof Error ? e.message : String(e)}`);
    });
  const [crypto] = await Promise.all([core, featuresLoading[f]]);
  return crypto;
}
