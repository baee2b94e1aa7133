//! The two encryption layers of a mental-poker deck, and the check a peer's play must pass.
//!
//! A card is two bytes (rank index, suit index). The Host seals `card ‖ pad(14)` under its per-card key
//! k_inner into blob_A = nonce ‖ ChaCha20-Poly1305 (44 bytes); the Guest seals the whole blob_A under
//! its per-card key k_outer into blob_B (72 bytes). No associated data on either layer. Every blob of a
//! layer has the same length, so a blob's size cannot mark a card: sealing accepts only exact sizes.
//!
//! Opening follows the wire format rather than the sizes this side produces: any blob holding at least
//! a nonce and a tag is tried, so that a peer's odd blob fails authentication like any other bad blob.
//! The caller chooses nonces and pads; this module draws no randomness.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::aead::{self, Cipher, KEY_LEN, NONCE_LEN, TAG_LEN};
use crate::error::{fixed, Error, Result};

pub const CARD_LEN: usize = 2;
pub const PAD_LEN: usize = 14;
pub const PLAINTEXT_LEN: usize = CARD_LEN + PAD_LEN;
pub const BLOB_A_LEN: usize = NONCE_LEN + PLAINTEXT_LEN + TAG_LEN;
pub const BLOB_B_LEN: usize = NONCE_LEN + BLOB_A_LEN + TAG_LEN;
pub const MIN_BLOB_LEN: usize = NONCE_LEN + TAG_LEN;

/// The two bytes of a card; each index must be in 0..=255.
pub fn encode_card(rank: i64, suit: i64) -> Result<[u8; CARD_LEN]> {
    match (u8::try_from(rank), u8::try_from(suit)) {
        (Ok(r), Ok(s)) => Ok([r, s]),
        _ => Err(Error::DeckCardRange),
    }
}

/// [`encode_card`] for indices that arrive as JavaScript numbers: a fraction, NaN or infinity is out of
/// range too, rather than being truncated to some card.
pub fn encode_card_number(rank: f64, suit: f64) -> Result<[u8; CARD_LEN]> {
    let int = |x: f64| if x.fract() == 0.0 && (0.0..=255.0).contains(&x) { Some(x as i64) } else { None };
    match (int(rank), int(suit)) {
        (Some(r), Some(s)) => encode_card(r, s),
        _ => Err(Error::DeckCardRange),
    }
}

/// (rank index, suit index) of a 2-byte card.
pub fn decode_card(card: &[u8]) -> Result<(u8, u8)> {
    let [r, s]: [u8; CARD_LEN] = fixed("card", card)?;
    Ok((r, s))
}

/// The inner plaintext `card ‖ pad`.
pub fn pack_inner(card: &[u8], pad: &[u8]) -> Result<[u8; PLAINTEXT_LEN]> {
    let card: [u8; CARD_LEN] = fixed("card", card)?;
    let pad: [u8; PAD_LEN] = fixed("card pad", pad)?;
    let mut out = [0u8; PLAINTEXT_LEN];
    let (c, p) = out.split_at_mut(CARD_LEN);
    c.copy_from_slice(&card);
    p.copy_from_slice(&pad);
    Ok(out)
}

fn seal_layer<const OUT: usize>(key: &[u8], nonce: &[u8], inner: &[u8]) -> Result<[u8; OUT]> {
    let n: [u8; NONCE_LEN] = fixed("deck nonce", nonce)?;
    let mut out = Vec::with_capacity(OUT);
    out.extend_from_slice(&n);
    out.extend_from_slice(&aead::seal(Cipher::ChaCha20Poly1305, key, &n, inner, &[])?);
    fixed("sealed deck blob", &out)
}

/// blob_A = nonce ‖ ChaCha20-Poly1305(k_inner, nonce, plaintext), for the 16-byte `card ‖ pad`.
pub fn seal_inner(k_inner: &[u8], nonce: &[u8], plaintext: &[u8]) -> Result<[u8; BLOB_A_LEN]> {
    let pt: [u8; PLAINTEXT_LEN] = fixed("inner plaintext (card ‖ pad)", plaintext)?;
    let _: [u8; KEY_LEN] = fixed("k_inner", k_inner)?;
    seal_layer(k_inner, nonce, &pt)
}

/// blob_B = nonce ‖ ChaCha20-Poly1305(k_outer, nonce, blob_A), over the whole 44-byte blob_A.
pub fn seal_outer(k_outer: &[u8], nonce: &[u8], blob_a: &[u8]) -> Result<[u8; BLOB_B_LEN]> {
    let inner: [u8; BLOB_A_LEN] = fixed("blob_A", blob_a)?;
    let _: [u8; KEY_LEN] = fixed("k_outer", k_outer)?;
    seal_layer(k_outer, nonce, &inner)
}

/// Opens one layer (both have the shape nonce ‖ ciphertext ‖ tag): the key's length is checked first,
/// then that the blob can hold a nonce and a tag, then the tag (`AeadOpenFailed`).
pub fn open_layer(key: &[u8], blob: &[u8]) -> Result<Vec<u8>> {
    let _: [u8; KEY_LEN] = fixed("deck key", key)?;
    if blob.len() < MIN_BLOB_LEN {
        return Err(Error::DeckBlobTooShort(blob.len()));
    }
    let (nonce, sealed) = blob.split_at(NONCE_LEN);
    aead::open(Cipher::ChaCha20Poly1305, key, nonce, sealed, &[])
}

/// The first candidate key (its index) under which `blob` authenticates, with the plaintext; `None`
/// when none does or the blob cannot hold a nonce and a tag. Every candidate must be 32 bytes.
pub fn brute_force_open<K: AsRef<[u8]>>(blob: &[u8], candidates: &[K]) -> Result<Option<(usize, Vec<u8>)>> {
    for k in candidates {
        let _: [u8; KEY_LEN] = fixed("candidate key", k.as_ref())?;
    }
    if blob.len() < MIN_BLOB_LEN {
        return Ok(None);
    }
    for (i, k) in candidates.iter().enumerate() {
        match open_layer(k.as_ref(), blob) {
            Ok(pt) => return Ok(Some((i, pt))),
            Err(Error::AeadOpenFailed) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// Why a play fails the check; [`PlayRejection::reason`] is the reason string the protocol uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayRejection {
    CardNotInHand,
    CardAlreadyPlayed,
    InvalidKeysOrBlob,
    CardFaceMismatch,
}

impl PlayRejection {
    pub fn reason(self) -> &'static str {
        match self {
            PlayRejection::CardNotInHand => "card_not_in_hand",
            PlayRejection::CardAlreadyPlayed => "card_already_played",
            PlayRejection::InvalidKeysOrBlob => "invalid_keys_or_blob",
            PlayRejection::CardFaceMismatch => "card_face_mismatch",
        }
    }
}

/// The play check (nullifier rule): `id_b` must be in the player's hand and not yet played, and
/// opening `blob_b` with `k_outer` and then with `k_inner` must give a plaintext that starts with
/// `declared_card`. Checked in that order, first failure wins.
///
/// `Ok(Err(_))` is a rejected play. `Err(_)` is input that is malformed rather than wrong (a key that
/// is not 32 bytes, a blob shorter than nonce + tag): the reference raises there instead of rejecting,
/// so the caller decides; as in the reference, the hand checks come first.
pub fn validate_play<S: AsRef<str>>(
    hand: &[S],
    played: &[S],
    id_b: &str,
    declared_card: &[u8],
    k_inner: &[u8],
    k_outer: &[u8],
    blob_b: &[u8],
) -> Result<core::result::Result<(), PlayRejection>> {
    if !hand.iter().any(|h| h.as_ref() == id_b) {
        return Ok(Err(PlayRejection::CardNotInHand));
    }
    if played.iter().any(|p| p.as_ref() == id_b) {
        return Ok(Err(PlayRejection::CardAlreadyPlayed));
    }
    let opened = open_layer(k_outer, blob_b).and_then(|blob_a| open_layer(k_inner, &blob_a));
    let plaintext = match opened {
        Ok(p) => p,
        Err(Error::AeadOpenFailed) => return Ok(Err(PlayRejection::InvalidKeysOrBlob)),
        Err(e) => return Err(e),
    };
    // The plaintext's first two bytes (all of it if shorter) compared as bytes: a declared card of
    // another length is a mismatch.
    let head = plaintext.get(..CARD_LEN).unwrap_or(&plaintext);
    if head != declared_card {
        return Ok(Err(PlayRejection::CardFaceMismatch));
    }
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_the_wire_sizes() {
        assert_eq!((PLAINTEXT_LEN, BLOB_A_LEN, BLOB_B_LEN, MIN_BLOB_LEN), (16, 44, 72, 28));
    }

    #[test]
    fn fractional_and_non_finite_indices_are_out_of_range() {
        for (r, s) in [(1.5, 0.0), (f64::NAN, 0.0), (0.0, f64::INFINITY), (256.0, 0.0), (0.0, -1.0), (-0.5, 0.0)] {
            assert_eq!(encode_card_number(r, s), Err(Error::DeckCardRange), "{r} {s}");
        }
        assert_eq!(encode_card_number(255.0, -0.0), Ok([255, 0]));
    }
}
