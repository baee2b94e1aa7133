// The two builds of the WASM module the AEAD tests load side by side: the shipped one (+simd128) and
// the nosimd one (`bash scripts/build-wasm.sh --no-simd`, not shipped); and the reference module
// the verification tests hold the core's verdicts to (also built by build-wasm.sh, not shipped).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { WasmExports } from '../../ts/crypto/wasm-backend.js';

const root = new URL('../../', import.meta.url);
export const MODULES = {
  simd: new URL('bindings/node/', root),
  nosimd: new URL('target/wasm-nosimd/node/', root),
} as const;

/** A fresh require of one build's bindings; a missing build fails with the command that makes it. */
export function load(dir: URL): WasmExports {
  const js = new URL('aigenora_wasm.js', dir);
  if (!existsSync(js)) throw new Error(`${js.pathname} is absent; build it first: bash scripts/build-wasm.sh${dir === MODULES.nosimd ? ' --no-simd' : ''}`);
  return createRequire(import.meta.url)(js.pathname) as WasmExports;
}

/** ed25519-dalek's own verification in WebAssembly (crates/wasm-reference), the core module's oracle. */
export interface ReferenceExports {
  ed25519_verify_uncached(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): void;
}

export function loadReference(): ReferenceExports {
  const js = new URL('bindings/reference/aigenora_wasm_reference.js', root);
  if (!existsSync(js)) throw new Error(`${js.pathname} is absent; build it first: bash scripts/build-wasm.sh`);
  return createRequire(import.meta.url)(js.pathname) as ReferenceExports;
}
