/** Loads the Node build of the WASM core (bindings/node), synchronously. */
import { createRequire } from 'node:module';
import { CryptoError } from './errors.js';
import { wasmBackend, type WasmExports } from './wasm-backend.js';
import type { Crypto } from './backend.js';

export const NODE_BINDINGS = '../../bindings/node/aigenora_wasm.js';

let cached: Crypto | undefined;

export function loadWasmNode(): Crypto {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  let exports: WasmExports;
  try {
    exports = require(NODE_BINDINGS) as WasmExports;
  } catch (e) {
    throw new CryptoError('WASM_UNAVAILABLE', `the WASM core is not built (${(e as Error).message.split('\n')[0]}); run: npm run build:wasm`);
  }
  cached = wasmBackend(exports);
  return cached;
}
