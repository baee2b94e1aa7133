/**
 * Loads the Node build of the WASM core (bindings/node), synchronously: the core module at once, each
 * feature module (wasm-backend.ts) on the first call that needs it, so that a process that never plays
 * mental poker never compiles the RSA arithmetic.
 */
import { createRequire } from 'node:module';
import { CryptoError } from './errors.js';
import { wasmBackend, type WasmExports, type WasmFeature, type WasmFeatureExports } from './wasm-backend.js';
import type { Crypto } from './backend.js';

export const NODE_BINDINGS = '../../bindings/node/aigenora_wasm.js';

/** The Node glue of a feature module, relative to this file as NODE_BINDINGS is. */
export function nodeFeatureBindings(feature: WasmFeature): string {
  return `../../bindings/node/aigenora_wasm_${feature}.js`;
}

let cached: Crypto | undefined;

function requireBindings<T>(path: string): T {
  try {
    return createRequire(import.meta.url)(path) as T;
  } catch (e) {
    throw new CryptoError('WASM_UNAVAILABLE', `the WASM core is not built (${(e as Error).message.split('\n')[0]}); run: npm run build:wasm`);
  }
}

/** A feature module's exports (Node's require keeps one instance of each per process). */
export function loadWasmNodeFeature<F extends WasmFeature>(feature: F): WasmFeatureExports[F] {
  return requireBindings<WasmFeatureExports[F]>(nodeFeatureBindings(feature));
}

export function loadWasmNode(): Crypto {
  return (cached ??= wasmBackend(requireBindings<WasmExports>(NODE_BINDINGS), loadWasmNodeFeature));
}
