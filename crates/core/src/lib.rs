//! The core of aigenora's crypto, in pure Rust (behind ts/crypto's `wasm` backend; its pure-JS twin gives the
//! same answers): canonical JSON (RFC 8785, and Go encoding/json's form for rin.host/v2's digests),
//! protocol_id (the contract subset of a spec as Python's json.dumps writes it, hashed), SHA-256 and
//! SHA-512, strict Ed25519 (RFC 8032), ChaCha20-Poly1305 / XChaCha20-Poly1305, X25519, commit-reveal,
//! the mental-poker deck layers and blind-RSA token oblivious transfer, the AGBX1 offline box and the
//! registration proof of work.
//!
//! Nothing here knows about WebAssembly; `aigenora-wasm` (the core crypto) and `aigenora-wasm-mp`,
//! `-gojson` and `-pyjson` (modules loaded when used) expose it to JavaScript without adding logic.
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
