//! Ed25519 (RFC 8032): key pairs from a 32-byte seed and deterministic signing on `curve25519-dalek`
//! ([`Keypair`], byte for byte `ed25519-dalek`'s, whose own signing would link a 30 KiB table into the
//! .wasm), and verification under one strict policy, the one libsodium and dalek's `verify_strict` apply and
//! agent-trade/0.2 requires:
//!
//! - `S` must be reduced (`S < L`);
//! - `A` and `R` must be canonical encodings (`y < p`; `x = 0` with the sign bit set only occurs for
//!   `y = ±1`, which are small-order points and fall under the next rule);
//! - `A` and `R` must not be of small order (the eight points whose order divides 8);
//! - the cofactorless equation `[S]B = R + [k]A` must hold, `k = SHA-512(R || A || M) mod L`.
//!
//! Points with a small-order *component* (mixed order) are accepted when the equation holds, exactly as
//! libsodium does; a batch equation would not be exact for them, which is why [`verify_many`] checks
//! each item on its own.
//!
//! [`verify`] decides the cofactorless equation with its own arithmetic (`ed25519/field.rs` on
//! fiat-crypto's verified field code, `point.rs`, `reduced.rs`): a lattice reduction of `k` halves the
//! doublings, which makes a key seen for the first time about 1.3x faster than ed25519-dalek's
//! verification on wasm32 (on x86-64, where dalek has AVX2 code, about 1.2x slower; the native build
//! serves the tests). It keeps per-key precomputation in a bounded process-wide cache ([`VerifyCache`],
//! bounds in [`DEFAULT_ENTRIES`] and [`DEFAULT_TABLES`]): the decompressed key for every key seen
//! recently, and a window table for `[k]A` for keys used [`BUILD_AFTER_USES`] times or more (more
//! while recent tables were evicted before paying back their building: see the cache's module docs),
//! which makes verification under a repeated key about twice as fast as libsodium. It is transparent:
//! same policy, same results, same errors as [`verify_uncached`], ed25519-dalek's, which the tests hold
//! it to. Its arithmetic is variable time, which is sound only because verification handles public data.

use crate::error::{fixed, Error, Result};
use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsBasepointTable, EdwardsPoint};
use curve25519_dalek::scalar::{clamp_integer, Scalar};
use curve25519_dalek::traits::BasepointTable;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use sha2::{Digest, Sha512};
use std::sync::OnceLock;
use zeroize::{Zeroize, Zeroizing};

mod cache;
mod field;
mod point;
mod reduced;
pub use cache::{VerifyCache, BUILD_AFTER_USES, DECAY_CALLS, DEFAULT_ENTRIES, DEFAULT_TABLES, MAX_BUILD_AFTER_USES, PAYBACK_USES, TABLE_BYTES};

pub const SEED_LEN: usize = 32;
pub const PUBLIC_KEY_LEN: usize = 32;
pub const SIGNATURE_LEN: usize = 64;

/// `[s]B` in constant time, on a table of multiples of the base point built at the first call.
///
/// The same table and multiplication as ed25519-dalek's signing (`EdwardsPoint::mul_base`), whose copy
/// of the table is a 30 KiB constant: built here instead, it stays out of the core .wasm that every page
/// fetches (a third of the 120 KiB gzipped budget), for a one-time cost of about 256 point additions.
pub(crate) fn mul_base(s: &Scalar) -> EdwardsPoint {
    static TABLE: OnceLock<EdwardsBasepointTable> = OnceLock::new();
    TABLE.get_or_init(|| EdwardsBasepointTable::create(&ED25519_BASEPOINT_POINT)).mul_base(s)
}

/// The public key of the key pair derived from `seed` (RFC 8032 §5.1.5).
pub fn public_key(seed: &[u8]) -> Result<[u8; 32]> {
    Ok(Keypair::from_seed(seed)?.public_key())
}

/// Deterministic RFC 8032 signature of `message` by the key pair derived from `seed`.
pub fn sign(seed: &[u8], message: &[u8]) -> Result<[u8; 64]> {
    Ok(Keypair::from_seed(seed)?.sign(message))
}

/// Whether a point encoding is non-canonical: `y >= p` (the sign bit aside), or `x = 0` with the sign
/// bit set, which only happens for `y = 1` and `y = p - 1`. `curve25519-dalek` accepts both forms when
/// decompressing, so the strict policy checks them here, on the bytes, before decoding.
pub(crate) fn is_non_canonical(enc: &[u8; 32]) -> bool {
    let mid = &enc[1..31];
    let (low, high) = (enc[0], enc[31] & 0x7f);
    let sign = enc[31] & 0x80 != 0;
    // p = 2^255 - 19 is ed ff .. ff 7f in little-endian bytes.
    let all_ones = high == 0x7f && mid.iter().all(|&b| b == 0xff);
    let y_ge_p = all_ones && low >= 0xed;
    let y_is_one = high == 0 && low == 1 && mid.iter().all(|&b| b == 0);
    let y_is_p_minus_one = all_ones && low == 0xec;
    y_ge_p || (sign && (y_is_one || y_is_p_minus_one))
}

/// The canonical encodings of the eight points of small order. With non-canonical encodings already
/// refused, a small-order `R` is exactly one of these, so `R` never needs decompressing (the equation
/// below compares encodings): that saves a field square root per verification.
pub(crate) const SMALL_ORDER_ENCODINGS: [[u8; 32]; 8] = [
    hex32("0000000000000000000000000000000000000000000000000000000000000000"),
    hex32("0000000000000000000000000000000000000000000000000000000000000080"),
    hex32("0100000000000000000000000000000000000000000000000000000000000000"),
    hex32("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
    hex32("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"),
    hex32("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
    hex32("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"),
    hex32("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
];

const fn hex32(s: &str) -> [u8; 32] {
    let b = s.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        let hi = (b[2 * i] as char).to_digit(16).expect("hex") as u8;
        let lo = (b[2 * i + 1] as char).to_digit(16).expect("hex") as u8;
        out[i] = hi << 4 | lo;
        i += 1;
    }
    out
}

/// Strict verification (see the module docs). `Err(SignatureInvalid)` for a signature that does not
/// verify, `Err(Length)` for inputs of the wrong size, `Err(PublicKeyInvalid)` for a key that is not a
/// canonical point encoding. Uses the process-wide [`VerifyCache`].
pub fn verify(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<()> {
    cache::GLOBAL.verify(public_key, message, signature)
}

/// The lengths are checked key first, then signature.
fn sized(public_key: &[u8], signature: &[u8]) -> Result<([u8; 32], [u8; 64])> {
    Ok((fixed("Ed25519 public key", public_key)?, fixed("Ed25519 signature", signature)?))
}

/// [`verify`] without the cache, on ed25519-dalek's own verification: the reference the cached path
/// is tested against, and the baseline the bench measures it against (`ed25519_verify_uncached` in
/// crates/wasm-reference, a module of its own so that the core module carries no second verifier).
pub fn verify_uncached(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<()> {
    let (pk, sig) = sized(public_key, signature)?;
    // The key is judged whole before the signature, so that a bad key is PUBLIC_KEY_INVALID whatever
    // the signature holds (the js backend decodes A first too).
    if is_non_canonical(&pk) {
        return Err(Error::PublicKeyInvalid);
    }
    let key = VerifyingKey::from_bytes(&pk).map_err(|_| Error::PublicKeyInvalid)?;
    let r: &[u8; 32] = sig[..32].try_into().expect("64-byte signature has a 32-byte R");
    if is_non_canonical(r) || SMALL_ORDER_ENCODINGS.contains(r) || key.is_weak() {
        return Err(Error::SignatureInvalid);
    }
    // dalek's plain `verify` is the rest of the policy: it refuses S >= L and checks the cofactorless
    // equation by comparing the encoding of [S]B - [k]A with R's bytes. (`verify_strict` would also
    // decompress R only to test its order, which the byte check above has done.)
    key.verify(message, &Signature::from_bytes(&sig)).map_err(|_| Error::SignatureInvalid)
}

/// An Ed25519 key pair expanded once from its seed, for signing many messages: signing from a bare
/// seed must first derive the public key, a second scalar multiplication per signature. RFC 8032
/// §5.1.5-6 as ed25519-dalek's `SigningKey` computes it (the tests hold the two to each other), on
/// `mul_base`'s table; the secret scalar and prefix are zeroized on drop.
pub struct Keypair {
    scalar: Scalar,
    prefix: [u8; 32],
    public: [u8; 32],
}

impl Drop for Keypair {
    fn drop(&mut self) {
        self.scalar.zeroize();
        self.prefix.zeroize();
    }
}

/// SHA-512 of the parts, reduced mod L.
fn hash_scalar(parts: &[&[u8]]) -> Scalar {
    let mut h = Sha512::new();
    parts.iter().for_each(|p| h.update(p));
    let wide = Zeroizing::new(<[u8; 64]>::from(h.finalize()));
    Scalar::from_bytes_mod_order_wide(&wide)
}

impl Keypair {
    pub fn from_seed(seed: &[u8]) -> Result<Self> {
        let seed: [u8; 32] = fixed("Ed25519 seed", seed)?;
        let h = Zeroizing::new(<[u8; 64]>::from(Sha512::digest(seed)));
        let mut low = Zeroizing::new([0u8; 32]);
        low.copy_from_slice(&h[..32]);
        let scalar = Scalar::from_bytes_mod_order(clamp_integer(*low));
        let mut prefix = [0u8; 32];
        prefix.copy_from_slice(&h[32..]);
        let public = mul_base(&scalar).compress().to_bytes();
        Ok(Keypair { scalar, prefix, public })
    }

    pub fn public_key(&self) -> [u8; 32] {
        self.public
    }

    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        let mut r = hash_scalar(&[&self.prefix, message]);
        let big_r = mul_base(&r).compress();
        let signature = self.finish(message, &r, &big_r);
        r.zeroize();
        signature
    }

    /// R ‖ S, S = k·a + r with k = SHA-512(R ‖ A ‖ M) mod L, for the nonce `r` and R = [r]B.
    fn finish(&self, message: &[u8], r: &Scalar, big_r: &CompressedEdwardsY) -> [u8; 64] {
        let big_r = big_r.to_bytes();
        let k = hash_scalar(&[&big_r, &self.public, message]);
        let s = k * self.scalar + r;
        let mut signature = [0u8; 64];
        signature[..32].copy_from_slice(&big_r);
        signature[32..].copy_from_slice(s.as_bytes());
        signature
    }

    /// [`Keypair::sign`] of each message, the same signatures, for less: the points `R` are brought to
    /// affine coordinates together, one field inversion for the batch (Montgomery's trick) where each
    /// signature alone pays one, about a third of its cost on wasm32. A leader signing its members'
    /// envelopes signs many messages at a time.
    pub fn sign_many(&self, messages: &[&[u8]]) -> Vec<[u8; 64]> {
        let mut rs: Vec<Scalar> = messages.iter().map(|m| hash_scalar(&[&self.prefix, m])).collect();
        let points: Vec<EdwardsPoint> = rs.iter().map(mul_base).collect();
        let big_rs = EdwardsPoint::compress_batch_alloc(&points);
        let out = messages.iter().zip(&rs).zip(&big_rs).map(|((message, r), big_r)| self.finish(message, r, big_r)).collect();
        rs.iter_mut().for_each(Zeroize::zeroize);
        out
    }
}

/// `verify` as a boolean: true only for a signature that verifies. Malformed inputs are false.
pub fn is_valid(public_key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    verify(public_key, message, signature).is_ok()
}

/// One item of [`verify_many`].
pub struct Item<'a> {
    pub public_key: &'a [u8],
    pub message: &'a [u8],
    pub signature: &'a [u8],
}

/// Verifies each item on its own under the strict policy; one boolean per item, in order, as
/// [`is_valid`] would answer. Items under keys that hold a table in the cache share one field
/// inversion (their last step), which is why an envelope's signatures go through here together.
pub fn verify_many(items: &[Item<'_>]) -> Vec<bool> {
    cache::GLOBAL.verify_many(items).into_iter().map(|r| r.is_ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::edwards::CompressedEdwardsY;

    /// The hard-coded list is exactly the set of canonical small-order encodings.
    #[test]
    fn small_order_encodings_are_the_eight_small_order_points() {
        let mut seen = std::collections::BTreeSet::new();
        for enc in SMALL_ORDER_ENCODINGS {
            assert!(!is_non_canonical(&enc));
            let p = CompressedEdwardsY(enc).decompress().expect("decodes");
            assert!(p.is_small_order());
            assert_eq!(p.compress().to_bytes(), enc, "canonical");
            seen.insert(enc);
        }
        assert_eq!(seen.len(), 8);
    }

    /// The signing on our table gives ed25519-dalek's `SigningKey` keys and signatures, byte for byte.
    #[test]
    fn signs_as_ed25519_dalek() {
        use ed25519_dalek::{Signer, SigningKey};
        let mut seed = [0u8; 32];
        let mut message = Vec::new();
        for i in 0..300u32 {
            // A deterministic walk over seeds (all-zero and all-0xff among them) and message lengths.
            seed = if i == 1 { [0xff; 32] } else { crate::hash::sha256(&[&seed[..], &i.to_be_bytes()].concat()) };
            let dalek = SigningKey::from_bytes(&seed);
            let kp = Keypair::from_seed(&seed).unwrap();
            assert_eq!(kp.public_key(), dalek.verifying_key().to_bytes());
            assert_eq!(kp.sign(&message), dalek.sign(&message).to_bytes(), "seed {seed:?}, message of {} bytes", message.len());
            message.push(seed[0]);
        }
    }

    /// Batches of every size a leader meets (none, one, a full group and more) sign each message as
    /// `sign` does, the empty message and long ones among them.
    #[test]
    fn sign_many_signs_each_message_as_sign_does() {
        let kp = Keypair::from_seed(&[7u8; 32]).unwrap();
        let messages: Vec<Vec<u8>> = (0..70u32).map(|i| (0..(i * 37) % 600).map(|j| (i ^ j) as u8).collect()).collect();
        for n in [0usize, 1, 2, 3, 33, 70] {
            let batch: Vec<&[u8]> = messages[..n].iter().map(Vec::as_slice).collect();
            let signed = kp.sign_many(&batch);
            assert_eq!(signed.len(), n);
            for (m, s) in batch.iter().zip(&signed) {
                assert_eq!(*s, kp.sign(m), "batch of {n}, message of {} bytes", m.len());
            }
        }
    }

    #[test]
    fn keypair_signs_like_sign() {
        let kp = Keypair::from_seed(&[9u8; 32]).unwrap();
        assert_eq!(kp.public_key(), public_key(&[9u8; 32]).unwrap());
        assert_eq!(kp.sign(b"m"), sign(&[9u8; 32], b"m").unwrap());
        assert!(is_valid(&kp.public_key(), b"m", &kp.sign(b"m")));
        assert_eq!(Keypair::from_seed(&[0u8; 31]).err(), Some(Error::Length("Ed25519 seed", 32, 31)));
    }
}
