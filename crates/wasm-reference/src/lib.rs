//! ed25519-dalek's own strict verification (`aigenora_core::ed25519::verify_uncached`: no per-key
//! cache, no lattice reduction) built for WebAssembly as a module of its own: the baseline
//! bench/crypto.bench.ts measures the core module's verification against, and the oracle
//! test/crypto/ed25519-cache.test.ts holds its verdicts to, in the same engine. No backend loads it and
//! it is not shipped: kept out of the core module, dalek's verification tables and code are about a
//! tenth of that module, which every page fetches. No logic lives here.
//!
//! Nothing here may panic: the core checks every length and returns errors instead.

use aigenora_core::{ed25519, Error};
use wasm_bindgen::prelude::*;

fn js(e: Error) -> JsError {
    JsError::new(&format!("{}: {}", e.code(), e))
}

/// The core module's `ed25519_verify` without its cache, on dalek's verification: the same verdicts
/// and errors (`"CODE: message"`).
#[wasm_bindgen]
pub fn ed25519_verify_uncached(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<(), JsError> {
    ed25519::verify_uncached(public_key, message, signature).map_err(js)
}
