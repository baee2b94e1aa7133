//! Commit-reveal as the protocol engine uses it: `commit = lowerhex(SHA-256(utf8(choice + ":" + nonce)))`.

use crate::hash::{sha256, to_hex};
use subtle::ConstantTimeEq;

pub fn commit(choice: &str, nonce: &str) -> String {
    let mut input = Vec::with_capacity(choice.len() + 1 + nonce.len());
    input.extend_from_slice(choice.as_bytes());
    input.push(b':');
    input.extend_from_slice(nonce.as_bytes());
    to_hex(&sha256(&input))
}

/// Whether `(choice, nonce)` opens `commitment`. The comparison runs in constant time over the 64 hex
/// characters so that a timing side channel does not tell a cheater how much of a forged reveal matched;
/// a commitment of any other length (or upper-case hex, which `commit` never produces) is simply false.
pub fn verify_reveal(commitment: &str, choice: &str, nonce: &str) -> bool {
    let expected = commit(choice, nonce);
    commitment.len() == expected.len() && bool::from(expected.as_bytes().ct_eq(commitment.as_bytes()))
}
