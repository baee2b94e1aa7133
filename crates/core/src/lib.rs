//! The performance-critical core of aigenora, in pure Rust: canonical JSON (RFC 8785, and Go
//! encoding/json's form for rin.host/v2), SHA-2, strict
//! Ed25519 (RFC 8032), ChaCha20-Poly1305 / XChaCha20-Poly1305, X25519, commit-reveal and the
//! mental-poker deck layers, the AGBX1 offline box and the registration proof of work.
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
pub mod ot;
pub mod pow;
pub mod pyjson;
pub mod sealed_box;
pub mod x25519;

pub use error::{Error, Result};
