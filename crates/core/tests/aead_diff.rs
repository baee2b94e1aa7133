//! Our ChaCha20-Poly1305 and XChaCha20-Poly1305 against the RustCrypto `chacha20poly1305` crate as an
//! oracle: every length from 0 to 1100 bytes (each tail of the 4-block keystream path and the
//! single-block path), lengths around 64 KiB, random associated data, and every tag byte tampered.

use aigenora_core::aead::{self, Cipher};
use aigenora_core::Error;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};

/// splitmix64: reproducible inputs without a generator dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn oracle_seal(cipher: Cipher, key: &[u8], nonce: &[u8], msg: &[u8], aad: &[u8]) -> Vec<u8> {
    let p = Payload { msg, aad };
    match cipher {
        Cipher::ChaCha20Poly1305 => ChaCha20Poly1305::new_from_slice(key).unwrap().encrypt(nonce.try_into().unwrap(), p),
        Cipher::XChaCha20Poly1305 => XChaCha20Poly1305::new_from_slice(key).unwrap().encrypt(nonce.try_into().unwrap(), p),
    }
    .unwrap()
}

fn nonce_len(cipher: Cipher) -> usize {
    match cipher {
        Cipher::ChaCha20Poly1305 => aead::NONCE_LEN,
        Cipher::XChaCha20Poly1305 => aead::XNONCE_LEN,
    }
}

fn check(rng: &mut Rng, cipher: Cipher, len: usize, tamper: bool) {
    let key = rng.bytes(32);
    let nonce = rng.bytes(nonce_len(cipher));
    let aad_len = (rng.next() % 70) as usize;
    let aad = rng.bytes(aad_len);
    let msg = rng.bytes(len);
    let want = oracle_seal(cipher, &key, &nonce, &msg, &aad);
    let got = aead::seal(cipher, &key, &nonce, &msg, &aad).unwrap();
    assert!(got == want, "{cipher:?} len {len} aad {aad_len}: seal differs from the oracle");
    let mut in_place = msg.clone();
    aead::seal_in_place(cipher, &key, &nonce, &mut in_place, &aad).unwrap();
    assert!(in_place == want, "{cipher:?} len {len}: seal_in_place differs");
    assert!(aead::open(cipher, &key, &nonce, &want, &aad).unwrap() == msg, "{cipher:?} len {len}: open");
    let mut opened = want.clone();
    aead::open_in_place(cipher, &key, &nonce, &mut opened, &aad).unwrap();
    assert!(opened == msg, "{cipher:?} len {len}: open_in_place");
    if !tamper {
        return;
    }
    for i in len..len + aead::TAG_LEN {
        for bit in [0x01u8, 0x80] {
            let mut bad = want.clone();
            bad[i] ^= bit;
            assert_eq!(aead::open(cipher, &key, &nonce, &bad, &aad), Err(Error::AeadOpenFailed), "tag byte {} bit {bit:#x}", i - len);
            let mut in_place = bad.clone();
            assert_eq!(aead::open_in_place(cipher, &key, &nonce, &mut in_place, &aad), Err(Error::AeadOpenFailed));
            assert!(in_place == bad, "a failed open_in_place leaves the buffer as it was");
        }
    }
    if len > 0 {
        let mut bad = want.clone();
        bad[(rng.next() as usize) % len] ^= 0x10;
        assert_eq!(aead::open(cipher, &key, &nonce, &bad, &aad), Err(Error::AeadOpenFailed), "ciphertext tampered");
    }
    let mut aad2 = aad.clone();
    aad2.push(0);
    assert_eq!(aead::open(cipher, &key, &nonce, &want, &aad2), Err(Error::AeadOpenFailed), "aad extended");
    assert_eq!(aead::open(cipher, &key, &nonce, &want[..want.len() - 1], &aad), Err(Error::AeadOpenFailed), "truncated");
}

#[test]
fn every_length_to_1100_matches_the_oracle() {
    let mut rng = Rng(1);
    for cipher in [Cipher::ChaCha20Poly1305, Cipher::XChaCha20Poly1305] {
        for len in 0..=1100 {
            check(&mut rng, cipher, len, len < 70 || len % 97 == 0);
        }
    }
}

#[test]
fn lengths_around_64_kib_match_the_oracle() {
    let mut rng = Rng(2);
    let k = 65536usize;
    let offsets = [-257i64, -256, -255, -193, -192, -129, -65, -64, -63, -17, -16, -15, -1, 0, 1, 15, 16, 17, 63, 64, 65, 191, 255, 256, 257];
    for off in offsets {
        check(&mut rng, Cipher::ChaCha20Poly1305, (k as i64 + off) as usize, off == 0);
    }
    // XChaCha20 differs only in how the key and nonce are set up, which the short lengths cover.
    for off in [-1i64, 0, 1] {
        check(&mut rng, Cipher::XChaCha20Poly1305, (k as i64 + off) as usize, off == 0);
    }
}

#[test]
fn short_or_empty_sealed_input_fails_to_open() {
    let key = [7u8; 32];
    for cipher in [Cipher::ChaCha20Poly1305, Cipher::XChaCha20Poly1305] {
        let nonce = vec![1u8; nonce_len(cipher)];
        for n in 0..aead::TAG_LEN {
            assert_eq!(aead::open(cipher, &key, &nonce, &vec![0u8; n], b""), Err(Error::AeadOpenFailed));
        }
    }
}

#[test]
fn key_and_nonce_lengths_are_checked_before_the_input() {
    for cipher in [Cipher::ChaCha20Poly1305, Cipher::XChaCha20Poly1305] {
        let nonce = vec![0u8; nonce_len(cipher)];
        let err = aead::open(cipher, &[0u8; 31], &nonce, b"", b"").unwrap_err();
        assert_eq!(err, Error::Length("AEAD key", 32, 31));
        let err = aead::seal(cipher, &[0u8; 32], &nonce[1..], b"x", b"").unwrap_err();
        assert_eq!(err.code(), "BAD_LENGTH");
        let err = aead::open(cipher, &[0u8; 32], &[0u8; 25], b"", b"").unwrap_err();
        assert_eq!(err.code(), "BAD_LENGTH");
    }
}
