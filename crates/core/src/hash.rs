//! SHA-256 and SHA-512 (`sha2`), and the `"sha256:" + lowerhex` form of agent-trade's `body_hash`.

use sha2::{Digest, Sha256, Sha512};

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

pub fn sha512(data: &[u8]) -> [u8; 64] {
    Sha512::digest(data).into()
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex, the form every hash in these protocols is written in.
pub fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

/// `"sha256:" + lowerhex(SHA-256(data))`: agent-trade's `body_hash` and `object_id` form.
pub fn sha256_prefixed(data: &[u8]) -> String {
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    s.push_str(&to_hex(&sha256(data)));
    s
}
