//! Ed25519 (RFC 8032) with `ed25519-dalek`: key pairs from a 32-byte seed, deterministic signing, and
//! verification under one strict policy, the one libsodium and dalek's `verify_strict` apply and
//! agent-trade/0.2 requires:
//!
//! - `S` must be reduced (`S < L`);
//! - `A` and `R` must be canonical encodings (`y < p`; `x = 0` with the sign bit set only occurs for
//!   `y = ±1`, which are small-order points and fall under the next rule);
//! - `A` and `R` must not be of small order (the eight points whose order divides 8);
//! - the cofactorless equation `[S]B = R + [k]A` must hold, `k = SHA-512(R || A || M) mod L`.
//!
//! Points with a small-order *component* (mixed order) are accepted when the equation holds, exactly as
//! libsodium does; a batch equation would not be exact for them, which is why [`verify_many`] checks
//! each item on its own.

use crate::error::{fixed, Error, Result};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

pub const SEED_LEN: usize = 32;
pub const PUBLIC_KEY_LEN: usize = 32;
pub const SIGNATURE_LEN: usize = 64;

/// The public key of the key pair derived from `seed` (RFC 8032 §5.1.5).
pub fn public_key(seed: &[u8]) -> Result<[u8; 32]> {
    let seed: [u8; 32] = fixed("Ed25519 seed", seed)?;
    Ok(SigningKey::from_bytes(&seed).verifying_key().to_bytes())
}

/// Deterministic RFC 8032 signature of `message` by the key pair derived from `seed`.
pub fn sign(seed: &[u8], message: &[u8]) -> Result<[u8; 64]> {
    let seed: [u8; 32] = fixed("Ed25519 seed", seed)?;
    Ok(SigningKey::from_bytes(&seed).sign(message).to_bytes())
}

/// Whether a point encoding is non-canonical: `y >= p` (the sign bit aside), or `x = 0` with the sign
/// bit set, which only happens for `y = 1` and `y = p - 1`. `curve25519-dalek` accepts both forms when
/// decompressing, so the strict policy checks them here, on the bytes, before decoding.
fn is_non_canonical(enc: &[u8; 32]) -> bool {
    let mid = &enc[1..31];
    let (low, high) = (enc[0], enc[31] & 0x7f);
    let sign = enc[31] & 0x80 != 0;
    // p = 2^255 - 19 is ed ff .. ff 7f in little-endian bytes.
    let all_ones = high == 0x7f && mid.iter().all(|&b| b == 0xff);
    let y_ge_p = all_ones && low >= 0xed;
    let y_is_one = high == 0 && low == 1 && mid.iter().all(|&b| b == 0);
    let y_is_p_minus_one = all_ones && low == 0xec;
    y_ge_p || (sign && (y_is_one || y_is_p_minus_one))
}

/// Strict verification (see the module docs). `Err(SignatureInvalid)` for a signature that does not
/// verify, `Err(Length)` for inputs of the wrong size, `Err(PublicKeyInvalid)` for a key that is not a
/// canonical point encoding.
pub fn verify(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<()> {
    let pk: [u8; 32] = fixed("Ed25519 public key", public_key)?;
    let sig: [u8; 64] = fixed("Ed25519 signature", signature)?;
    if is_non_canonical(&pk) {
        return Err(Error::PublicKeyInvalid);
    }
    let r: &[u8; 32] = sig[..32].try_into().expect("64-byte signature has a 32-byte R");
    if is_non_canonical(r) {
        return Err(Error::SignatureInvalid);
    }
    let key = VerifyingKey::from_bytes(&pk).map_err(|_| Error::PublicKeyInvalid)?;
    key.verify_strict(message, &Signature::from_bytes(&sig)).map_err(|_| Error::SignatureInvalid)
}

/// `verify` as a boolean: true only for a signature that verifies. Malformed inputs are false.
pub fn is_valid(public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    verify(public_key, message, signature).is_ok()
}

/// One item of [`verify_many`].
pub struct Item<'a> {
    pub public_key: &'a [u8],
    pub message: &'a [u8],
    pub signature: &'a [u8],
}

/// Verifies each item on its own under the strict policy; one boolean per item, in order.
pub fn verify_many(items: &[Item<'_>]) -> Vec<bool> {
    items.iter().map(|it| is_valid(it.public_key, it.message, it.signature)).collect()
}
