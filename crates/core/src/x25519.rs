//! X25519 (RFC 7748) on `curve25519-dalek`'s Montgomery ladder.
//!
//! Policy for low-order peer keys: the all-zero shared secret is refused with `X25519LowOrder`, as
//! libsodium's `crypto_scalarmult` does, so that a key exchanged with a hostile peer can never be a
//! value the peer knows in advance. Wycheproof labels those cases `acceptable`; every other case,
//! including twist points and non-canonical `u` (the high bit is masked, as RFC 7748 §5 says), computes.

use crate::error::{fixed, Error, Result};
use curve25519_dalek::montgomery::MontgomeryPoint;
use subtle::ConstantTimeEq;

/// `X25519(private, public)`.
pub fn shared_secret(private_key: &[u8], public_key: &[u8]) -> Result<[u8; 32]> {
    let sk: [u8; 32] = fixed("X25519 private key", private_key)?;
    let pk: [u8; 32] = fixed("X25519 public key", public_key)?;
    let shared = MontgomeryPoint(pk).mul_clamped(sk).to_bytes();
    if bool::from(shared.ct_eq(&[0u8; 32])) {
        return Err(Error::X25519LowOrder);
    }
    Ok(shared)
}

/// `X25519(private, 9)`: the public key for a private key.
pub fn public_key(private_key: &[u8]) -> Result<[u8; 32]> {
    let sk: [u8; 32] = fixed("X25519 private key", private_key)?;
    Ok(MontgomeryPoint::mul_base_clamped(sk).to_bytes())
}
