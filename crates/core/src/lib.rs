//! The performance-critical core of aigenora, in pure Rust: canonical JSON (RFC 8785, Go
//! encoding/json's form for rin.host/v2, Python json.dumps's for protocol_id), SHA-2, strict
//! Ed25519 (RFC 8032), ChaCha20-Poly1305 / XChaCha20-Poly1305, X25519, commit-reveal, the
//! mental-poker deck layers and blind-RSA token oblivious transfer, the AGBX1 offline box and the
//! registration proof of work.
//!
//! Nothing here knows about WebAssembly; `aigenora-wasm` exposes it to JavaScript without adding logic.
//! Every fallible function returns [`Error`], whose [`Error::code`] is stable across releases.

pub mod aead;
mod chacha;
pub mod commit;
pub mod deck;
pub mod ed25519;
mod error;
pub mod hash;
pub mod gojson;
pub mod jcs;
mod json_text;
pub mod ot;
pub mod pow;
pub mod pyjson;
pub mod sealed_box;
pub mod x25519;

pub use error::{Error, Result};
