//! SHA-256 and SHA-512 (`sha2`), and the `"sha256:" + lowerhex` form of agent-trade's `body_hash`.

use sha2::{Digest, Sha256, Sha512};

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// SHA-256 of `prefix ‖ rest` for each rest, `rests` holding them one after the other with the lengths
/// in `rest_lengths`: the prefix is absorbed once and its state copied for each rest, so texts that
/// share most of their bytes (a group frame's payloads, one per member) cost their own rests only.
/// The digests are returned one after the other; `None` when the lengths do not add up to `rests`.
pub fn sha256_shared(prefix: &[u8], rests: &[u8], rest_lengths: &[u32]) -> Option<Vec<u8>> {
    let mut base = Sha256::new();
    base.update(prefix);
    let mut out = Vec::with_capacity(32 * rest_lengths.len());
    let mut at = 0usize;
    for &len in rest_lengths {
        let end = at.checked_add(usize::try_from(len).ok()?)?;
        let mut h = base.clone();
        h.update(rests.get(at..end)?);
        out.extend_from_slice(&h.finalize());
        at = end;
    }
    (at == rests.len()).then_some(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_prefix_hashes_are_each_texts_own() {
        let prefix = [7u8; 100];
        let rests: Vec<Vec<u8>> = vec![vec![], vec![1], (0..200u8).collect(), vec![9; 64]];
        let lengths: Vec<u32> = rests.iter().map(|r| r.len() as u32).collect();
        let joined = rests.concat();
        let got = sha256_shared(&prefix, &joined, &lengths).unwrap_or_default();
        let want: Vec<u8> = rests.iter().flat_map(|r| sha256(&[&prefix[..], r].concat())).collect();
        assert_eq!(got, want);
        assert_eq!(sha256_shared(&[], &[], &[]), Some(vec![]));
        // Lengths that overrun the rests, or leave some of them over, are refused.
        assert_eq!(sha256_shared(&prefix, &joined, &[1, 2]), None);
        assert_eq!(sha256_shared(&prefix, &joined[..3], &[1, 2, 1]), None);
        assert_eq!(sha256_shared(&prefix, &joined, &[u32::MAX]), None);
    }
}
