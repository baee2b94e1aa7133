//! ChaCha20-Poly1305 (RFC 8439, 12-byte nonce) and XChaCha20-Poly1305 (24-byte nonce), both with
//! associated data and a 16-byte tag appended to the ciphertext.
//!
//! The primitives are ours (`crate::chacha`: ChaCha20 four blocks per step and Poly1305 two chains
//! per step in wasm simd128 lanes, which no maintained crate offers for wasm32); the construction
//! follows RFC 8439 §2.8 and is checked against the RFC, Wycheproof and the `chacha20poly1305` crate
//! (tests/aead_diff.rs).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use crate::chacha::poly1305::Poly1305;
use crate::chacha::{hchacha20, ChaCha20};
use crate::error::{fixed, Error, Result};
use subtle::ConstantTimeEq;

pub const KEY_LEN: usize = 32;
pub const NONCE_LEN: usize = 12;
pub const XNONCE_LEN: usize = 24;
pub const TAG_LEN: usize = 16;

/// RFC 8439's limit on one message: the 32-bit block counter starts at 1 after the Poly1305 key.
const MAX_LEN: u64 = (1 << 38) - 64;

/// Which of the two constructions; they differ only in nonce length and the HChaCha20 subkey step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cipher {
    ChaCha20Poly1305,
    XChaCha20Poly1305,
}

/// `ciphertext || tag`.
pub fn seal(cipher: Cipher, key: &[u8], nonce: &[u8], plaintext: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(plaintext.len() + TAG_LEN);
    buf.extend_from_slice(plaintext);
    seal_in_place(cipher, key, nonce, &mut buf, aad)?;
    Ok(buf)
}

/// Like [`seal`], but encrypts `buf` where it is and appends the tag, for callers that already own a
/// copy of the message.
pub fn seal_in_place(cipher: Cipher, key: &[u8], nonce: &[u8], buf: &mut Vec<u8>, aad: &[u8]) -> Result<()> {
    let tag = seal_detached(cipher, key, nonce, buf, aad)?;
    buf.extend_from_slice(&tag);
    Ok(())
}

/// Like [`seal_in_place`], but answers the tag instead of appending it, for a caller whose buffer
/// cannot grow (the WASM binding's scratch, which JavaScript writes into and reads from directly).
pub fn seal_detached(cipher: Cipher, key: &[u8], nonce: &[u8], buf: &mut [u8], aad: &[u8]) -> Result<[u8; TAG_LEN]> {
    let chacha = cipher_for(cipher, key, nonce)?;
    let len = buf.len();
    if len as u64 > MAX_LEN {
        return Err(Error::Length("AEAD plaintext (at most 2^38 - 64)", 0, len));
    }
    chacha.apply(1, buf);
    Ok(mac(&chacha, aad, buf))
}

/// The plaintext, or `AeadOpenFailed` if anything does not authenticate. Key and nonce lengths are
/// checked first (`Length`), so that the error does not depend on the sealed input.
pub fn open(cipher: Cipher, key: &[u8], nonce: &[u8], sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    let chacha = cipher_for(cipher, key, nonce)?;
    let ct = authenticate(&chacha, sealed, aad)?;
    let mut out = ct.to_vec();
    chacha.apply(1, &mut out);
    Ok(out)
}

/// Like [`open`], but decrypts `buf` where it is and drops the tag, for callers that already own a
/// copy of the sealed message. On failure `buf` is left as it was.
pub fn open_in_place(cipher: Cipher, key: &[u8], nonce: &[u8], buf: &mut Vec<u8>, aad: &[u8]) -> Result<()> {
    let chacha = cipher_for(cipher, key, nonce)?;
    let len = authenticate(&chacha, buf, aad)?.len();
    buf.truncate(len);
    chacha.apply(1, buf);
    Ok(())
}

/// Like [`open_in_place`], with the tag apart from the ciphertext (see [`seal_detached`]). A tag
/// of any length other than 16 bytes fails like a wrong one. On failure `buf` is left as it was.
pub fn open_detached(cipher: Cipher, key: &[u8], nonce: &[u8], buf: &mut [u8], tag: &[u8], aad: &[u8]) -> Result<()> {
    let chacha = cipher_for(cipher, key, nonce)?;
    check_tag(&chacha, buf, tag, aad)?;
    chacha.apply(1, buf);
    Ok(())
}

/// The ciphertext part of `sealed` once its tag has been checked over it and `aad`.
fn authenticate<'a>(chacha: &ChaCha20, sealed: &'a [u8], aad: &[u8]) -> Result<&'a [u8]> {
    let Some(split) = sealed.len().checked_sub(TAG_LEN) else { return Err(Error::AeadOpenFailed) };
    let (ct, tag) = sealed.split_at(split);
    check_tag(chacha, ct, tag, aad)?;
    Ok(ct)
}

/// Compares in constant time (a tag of another length compares unequal).
fn check_tag(chacha: &ChaCha20, ct: &[u8], tag: &[u8], aad: &[u8]) -> Result<()> {
    if ct.len() as u64 > MAX_LEN {
        return Err(Error::AeadOpenFailed);
    }
    if !bool::from(mac(chacha, aad, ct).ct_eq(tag)) {
        return Err(Error::AeadOpenFailed);
    }
    Ok(())
}

/// The ChaCha20 instance of the construction: XChaCha20 derives its subkey with HChaCha20 from the
/// first 16 nonce bytes and uses `0^4 || last 8 nonce bytes` as the 96-bit nonce.
fn cipher_for(cipher: Cipher, key: &[u8], nonce: &[u8]) -> Result<ChaCha20> {
    let key: [u8; KEY_LEN] = fixed("AEAD key", key)?;
    Ok(match cipher {
        Cipher::ChaCha20Poly1305 => ChaCha20::new(&key, &fixed("ChaCha20-Poly1305 nonce", nonce)?),
        Cipher::XChaCha20Poly1305 => {
            let n: [u8; XNONCE_LEN] = fixed("XChaCha20-Poly1305 nonce", nonce)?;
            let (head, tail) = n.split_at(16);
            let mut n12 = [0u8; NONCE_LEN];
            n12.get_mut(4..).into_iter().for_each(|d| d.copy_from_slice(tail));
            ChaCha20::new(&hchacha20(&key, &fixed("XChaCha20-Poly1305 nonce", head)?), &n12)
        }
    })
}

/// RFC 8439 §2.8: Poly1305 keyed by the first half of block 0, over
/// `aad || pad16 || ciphertext || pad16 || le64(aad len) || le64(ciphertext len)`.
fn mac(chacha: &ChaCha20, aad: &[u8], ct: &[u8]) -> [u8; TAG_LEN] {
    let block0 = chacha.block(0);
    let mut otk = [0u8; 32];
    otk.iter_mut().zip(block0).for_each(|(o, b)| *o = b);
    let mut poly = Poly1305::new(&otk);
    poly.update_padded(aad);
    poly.update_padded(ct);
    let mut lens = [0u8; 16];
    let (a, c) = lens.split_at_mut(8);
    a.copy_from_slice(&(aad.len() as u64).to_le_bytes());
    c.copy_from_slice(&(ct.len() as u64).to_le_bytes());
    poly.update_padded(&lens);
    poly.finalize()
}
