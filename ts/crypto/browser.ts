/**
 * Crypto for browsers: the same interface as index.ts, with the WASM core loaded from the web build
 * (bindings/web). Loading is asynchronous in a browser, so the factory returns a promise.
 */
import init, * as bindings from '../../bindings/web/aigenora_wasm.js';
import type { BackendName, Crypto } from './backend.js';
import { jsBackend } from './js-backend.js';
import { wasmBackend, type WasmExports } from './wasm-backend.js';

export type { AeadCipher, BackendName, Crypto, SignatureItem } from './backend.js';
export { CryptoError } from './errors.js';
export * from './encoding.js';

let wasm: Promise<Crypto> | undefined;

/** `wasmUrl` defaults to the .wasm file beside the bindings, resolved by the bundler or the page. */
export function createCrypto(name: BackendName = 'wasm', wasmUrl?: string | URL): Promise<Crypto> {
  if (name === 'js') return Promise.resolve(jsBackend);
  wasm ??= init({ module_or_path: wasmUrl ?? new URL('../../bindings/web/aigenora_wasm_bg.wasm', import.meta.url) }).then(() =>
    wasmBackend(bindings as unknown as WasmExports),
  );
  return wasm;
}
