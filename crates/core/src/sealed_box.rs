//! The reference's AGBX1 offline box: an anonymous sealed box to an Ed25519 identity.
//!
//! `"AGBX1"` ‖ ephemeral X25519 public key (32) ‖ nonce (12) ‖ ChaCha20-Poly1305(key, plaintext, no AAD)
//! with key = HKDF-SHA256(X25519(ephemeral, recipient), no salt, info `aigenora-inbox-v1`, 32 bytes).
//! The recipient's X25519 keys are derived from its Ed25519 identity: the public key by the
//! Edwards → Montgomery map `u = (1 + y) / (1 - y)`, the private key as SHA-512(seed)[0..32], clamped.
//!
//! The core carries no random generator: the caller supplies the ephemeral private key and nonce (the
//! TypeScript layer draws them from the platform's CSPRNG), which also makes the vectors reproducible.

use crate::error::{fixed, Error, Result};
use crate::{aead, ed25519, hash, x25519};
use curve25519_dalek::edwards::CompressedEdwardsY;
use hkdf::Hkdf;
use sha2::Sha256;

pub const MAGIC: &[u8; 5] = b"AGBX1";
pub const INFO: &[u8] = b"aigenora-inbox-v1";
/// Magic, ephemeral key, nonce and tag: an empty plaintext seals to exactly this many bytes.
pub const MIN_LEN: usize = MAGIC.len() + 32 + aead::NONCE_LEN + aead::TAG_LEN;

/// The X25519 public key of an Ed25519 public key. The key must be a canonical point encoding
/// (`PublicKeyInvalid` otherwise), so a typo in a recipient's key is refused rather than sealed to a
/// value nobody can open.
pub fn x25519_public_from_ed25519(public_key: &[u8]) -> Result<[u8; 32]> {
    let pk: [u8; 32] = fixed("Ed25519 public key", public_key)?;
    if ed25519::is_non_canonical(&pk) {
        return Err(Error::PublicKeyInvalid);
    }
    let point = CompressedEdwardsY(pk).decompress().ok_or(Error::PublicKeyInvalid)?;
    Ok(point.to_montgomery().to_bytes())
}

/// The X25519 private key of an Ed25519 seed: SHA-512(seed)[0..32] with the standard clamping.
pub fn x25519_private_from_ed25519_seed(seed: &[u8]) -> Result<[u8; 32]> {
    let seed: [u8; 32] = fixed("Ed25519 seed", seed)?;
    let digest = hash::sha512(&seed);
    let mut sk = [0u8; 32];
    sk.copy_from_slice(&digest[..32]);
    sk[0] &= 248;
    sk[31] &= 127;
    sk[31] |= 64;
    Ok(sk)
}

fn derive_key(shared: &[u8; 32]) -> [u8; 32] {
    let mut key = [0u8; 32];
    // 32 bytes is far below HKDF-SHA256's 255 × 32 output limit, so expand cannot fail.
    Hkdf::<Sha256>::new(None, shared).expand(INFO, &mut key).expect("32-byte HKDF output");
    key
}

/// Seals `plaintext` to the holder of the Ed25519 `recipient_public_key`, with the given ephemeral
/// X25519 private key and 12-byte nonce (both must be fresh random values for every message).
pub fn seal(recipient_public_key: &[u8], ephemeral_private: &[u8], nonce: &[u8], plaintext: &[u8]) -> Result<Vec<u8>> {
    let recipient = x25519_public_from_ed25519(recipient_public_key)?;
    let nonce: [u8; aead::NONCE_LEN] = fixed("box nonce", nonce)?;
    let ephemeral_public = x25519::public_key(ephemeral_private)?;
    let shared = x25519::shared_secret(ephemeral_private, &recipient)?;
    let key = derive_key(&shared);
    let mut out = Vec::with_capacity(MIN_LEN + plaintext.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&ephemeral_public);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&aead::seal(aead::Cipher::ChaCha20Poly1305, &key, &nonce, plaintext, &[])?);
    Ok(out)
}

/// Opens a box with the recipient's Ed25519 seed. The layout is checked before any cryptography:
/// `BoxTooShort` under [`MIN_LEN`] bytes, `BoxBadMagic` without the `AGBX1` prefix; then an
/// ephemeral key of small order is `X25519LowOrder` and anything that does not authenticate
/// (tampering, or a box sealed to someone else) `AeadOpenFailed`.
pub fn open(recipient_seed: &[u8], boxed: &[u8]) -> Result<Vec<u8>> {
    let sk = x25519_private_from_ed25519_seed(recipient_seed)?;
    if boxed.len() < MIN_LEN {
        return Err(Error::BoxTooShort(boxed.len()));
    }
    if &boxed[..MAGIC.len()] != MAGIC {
        return Err(Error::BoxBadMagic);
    }
    let (ephemeral, rest) = boxed[MAGIC.len()..].split_at(32);
    let (nonce, sealed) = rest.split_at(aead::NONCE_LEN);
    let shared = x25519::shared_secret(&sk, ephemeral)?;
    aead::open(aead::Cipher::ChaCha20Poly1305, &derive_key(&shared), nonce, sealed, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let seed = [7u8; 32];
        let pk = ed25519::public_key(&seed).unwrap();
        let boxed = seal(&pk, &[9u8; 32], &[1u8; 12], b"hello").unwrap();
        assert_eq!(boxed.len(), MIN_LEN + 5);
        assert_eq!(open(&seed, &boxed).unwrap(), b"hello");
        assert_eq!(open(&[8u8; 32], &boxed), Err(Error::AeadOpenFailed));
        assert_eq!(open(&seed, &boxed[..MIN_LEN - 1]), Err(Error::BoxTooShort(MIN_LEN - 1)));
        let mut bad = boxed.clone();
        bad[4] = b'2';
        assert_eq!(open(&seed, &bad), Err(Error::BoxBadMagic));
        let mut zero = boxed.clone();
        zero[5..37].fill(0);
        assert_eq!(open(&seed, &zero), Err(Error::X25519LowOrder));
        // y = p is not a canonical encoding, and a key of the wrong size is a length error.
        let mut y_p = [0xffu8; 32];
        y_p[0] = 0xed;
        y_p[31] = 0x7f;
        assert_eq!(seal(&y_p, &[9u8; 32], &[1u8; 12], b""), Err(Error::PublicKeyInvalid));
        assert!(matches!(seal(&pk[..31], &[9u8; 32], &[1u8; 12], b""), Err(Error::Length(..))));
    }
}
