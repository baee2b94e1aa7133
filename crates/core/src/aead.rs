//! ChaCha20-Poly1305 (RFC 8439, 12-byte nonce) and XChaCha20-Poly1305 (24-byte nonce), both with
//! associated data and a 16-byte tag appended to the ciphertext (`chacha20poly1305`).

use crate::error::{fixed, Error, Result};
use chacha20poly1305::aead::{Aead, AeadInOut, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};

pub const KEY_LEN: usize = 32;
pub const NONCE_LEN: usize = 12;
pub const XNONCE_LEN: usize = 24;
pub const TAG_LEN: usize = 16;

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
/// copy of the message (the WASM binding does: wasm-bindgen copied it into WASM memory).
pub fn seal_in_place(cipher: Cipher, key: &[u8], nonce: &[u8], buf: &mut Vec<u8>, aad: &[u8]) -> Result<()> {
    let key: [u8; 32] = fixed("AEAD key", key)?;
    let len = buf.len();
    // Encryption only fails for messages over 256 GiB, which cannot be allocated on any target we run on.
    let sealed = match cipher {
        Cipher::ChaCha20Poly1305 => {
            let n: [u8; NONCE_LEN] = fixed("ChaCha20-Poly1305 nonce", nonce)?;
            ChaCha20Poly1305::new(&key.into()).encrypt_in_place(&n.into(), aad, buf)
        }
        Cipher::XChaCha20Poly1305 => {
            let n: [u8; XNONCE_LEN] = fixed("XChaCha20-Poly1305 nonce", nonce)?;
            XChaCha20Poly1305::new(&key.into()).encrypt_in_place(&n.into(), aad, buf)
        }
    };
    sealed.map_err(|_| Error::Length("AEAD plaintext (at most 2^38 - 64)", 0, len))
}

/// The plaintext, or `AeadOpenFailed` if anything does not authenticate. Key and nonce lengths are
/// checked first (`Length`), so that the error does not depend on the sealed input.
pub fn open(cipher: Cipher, key: &[u8], nonce: &[u8], sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    let key: [u8; 32] = fixed("AEAD key", key)?;
    let payload = Payload { msg: sealed, aad };
    let opened = match cipher {
        Cipher::ChaCha20Poly1305 => {
            let n: [u8; NONCE_LEN] = fixed("ChaCha20-Poly1305 nonce", nonce)?;
            ChaCha20Poly1305::new(&key.into()).decrypt(&n.into(), payload)
        }
        Cipher::XChaCha20Poly1305 => {
            let n: [u8; XNONCE_LEN] = fixed("XChaCha20-Poly1305 nonce", nonce)?;
            XChaCha20Poly1305::new(&key.into()).decrypt(&n.into(), payload)
        }
    };
    // A sealed input shorter than the tag fails here too: the crate refuses it without panicking.
    opened.map_err(|_| Error::AeadOpenFailed)
}
