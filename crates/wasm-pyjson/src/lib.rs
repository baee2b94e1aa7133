//! wasm-bindgen exports of `aigenora-core`'s protocol_id (a spec's contract subset as Python's
//! json.dumps writes it, hashed), a module of its own (crates/wasm has the core crypto) since only what
//! checks or serves specs uses it. No logic lives here: a core error becomes a JS `Error` whose message
//! starts with its stable code (`"CODE: message"`).
//!
//! Nothing here may panic: the core checks every length and returns errors instead, and the release
//! profile aborts on panic, so a panic would surface as a trap rather than unwind through JS.

use aigenora_core::{pyjson, Error};
use wasm_bindgen::prelude::*;

fn js(e: Error) -> JsError {
    JsError::new(&format!("{}: {}", e.code(), e))
}

/// protocol_id of a spec text (64 lowercase hex digits), in one crossing. Refusals are
/// `"CODE: message"` with the TypeScript twin's code and message.
#[wasm_bindgen]
pub fn protocol_id(spec_text: &str) -> Result<String, JsError> {
    pyjson::protocol_id_hex(spec_text).map_err(js)
}
