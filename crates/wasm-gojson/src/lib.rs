//! wasm-bindgen exports of `aigenora-core`'s Go encoding/json canonical form (rin.host/v2 digests), a
//! module of its own (crates/wasm has the core crypto) since only rin uses it. No logic lives here: a
//! core error becomes a JS `Error` whose message starts with its stable code (`"CODE: message"`).
//!
//! Nothing here may panic: the core checks every length and returns errors instead, and the release
//! profile aborts on panic, so a panic would surface as a trap rather than unwind through JS.

use aigenora_core::{gojson, hash, Error};
use wasm_bindgen::prelude::*;

fn js(e: Error) -> JsError {
    JsError::new(&format!("{}: {}", e.code(), e))
}

/// A gojson refusal as `"CODE: <path as JSON>\n<message>\n<detail>"`; the path's JSON escapes every
/// newline, so the TypeScript layer splits it back into a GoJsonError unambiguously. Running out of
/// memory has no path and goes as any other error.
fn go_js(e: Error) -> JsError {
    match e.go_json_fault() {
        Some(f) => JsError::new(&format!("{}: {}\n{}\n{}", e.code(), f.path_json(), f.message, f.detail)),
        None => js(e),
    }
}

/// Go encoding/json canonical bytes of a wire text, given as UTF-8 bytes (rin.host/v2 digests).
#[wasm_bindgen]
pub fn gojson_canonicalize(text: &[u8]) -> Result<Vec<u8>, JsError> {
    gojson::canonicalize(text).map_err(go_js)
}

/// SHA-256 of the Go canonical form, in one crossing.
#[wasm_bindgen]
pub fn gojson_sha256(text: &[u8]) -> Result<Vec<u8>, JsError> {
    gojson::canonicalize(text).map(|c| hash::sha256(&c).to_vec()).map_err(go_js)
}
