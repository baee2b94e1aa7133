//! X25519 (RFC 7748) on `curve25519-dalek`'s Montgomery ladder.
//!
//! Policy for low-order peer keys: the all-zero shared secret is refused with `X25519LowOrder`, as
//! libsodium's `crypto_scalarmult` does, so that a key exchanged with a hostile peer can never be a
//! value the peer knows in advance. Wycheproof labels those cases `acceptable`; every other case,
//! including twist points and non-canonical `u` (the high bit is masked, as RFC 7748 §5 says), computes.

use crate::error::{fixed, Error, Result};
use curve25519_dalek::montgomery::MontgomeryPoint;
use curve25519_dalek::scalar::{clamp_integer, Scalar};
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

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

/// `X25519(private, 9)`: the public key for a private key. On the Edwards base point and its table
/// (`ed25519::mul_base`, kept out of the .wasm as a constant), then mapped to `u`: the base point has
/// order L, so the clamped scalar reduced mod L gives the point `MontgomeryPoint::mul_base_clamped` does.
pub fn public_key(private_key: &[u8]) -> Result<[u8; 32]> {
    let sk: [u8; 32] = fixed("X25519 private key", private_key)?;
    let mut clamped = clamp_integer(sk);
    let mut scalar = Scalar::from_bytes_mod_order(clamped);
    let public = crate::ed25519::mul_base(&scalar).to_montgomery().to_bytes();
    clamped.zeroize();
    scalar.zeroize();
    Ok(public)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The public key on the Edwards table is curve25519-dalek's Montgomery one, byte for byte.
    #[test]
    fn public_key_is_dalek_mul_base_clamped() {
        let mut sk = [0u8; 32];
        for i in 0..300u32 {
            sk = if i == 1 { [0xff; 32] } else { crate::hash::sha256(&[&sk[..], &i.to_be_bytes()].concat()) };
            assert_eq!(public_key(&sk).unwrap(), MontgomeryPoint::mul_base_clamped(sk).to_bytes(), "key {sk:?}");
        }
    }
}
