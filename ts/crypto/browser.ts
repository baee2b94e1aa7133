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

export * from './common.js';

let loading: Promise<Crypto> | undefined;
let loaded: Crypto | undefined;

/** `wasmUrl` overrides where the .wasm file is fetched from (default: beside the bindings in the package). */
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
