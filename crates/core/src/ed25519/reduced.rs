//! The cofactorless check `[S]B = R + [k]A` with half the doublings, for keys without a table: after
//! T. Pornin, "Optimized Lattice Basis Reduction In Dimension 2, and Fast Schnorr and EdDSA Signature
//! Verification" (ePrint 2020/454).
//!
//! With `P = [S]B - [k]A - R`, the signature is valid exactly when `P` is the identity. A reduction of
//! the lattice `{(d0, d1) : d0 ≡ d1·k (mod 8L)}` gives `d0` and `d1` of about 128 bits each, and
//!
//! `[d1]P = [d1·S mod L]B - [d0]A - [d1]R`
//!
//! holds for *every* `A` and `R` on the curve, small-order components included, because the modulus
//! is the group order `8L`, not `L` (B alone has order L). `[d1]P` is the identity exactly when `P` is,
//! as long as `d1` is odd and `0 < |d1| < L`: then no point of order 2, 4, 8, L or a product of them is
//! killed by `d1`. Of two consecutive Euclidean coefficients at least one is odd, and that one is used,
//! so the equation decided is the cofactorless one, exactly, with no cofactor multiplication.
//!
//! `[d1·S mod L]B` is split at bit 128 over `B` and `[2^128]B` (fixed tables), so all four scalars
//! have about 128 bits and one Straus loop of about 128 doublings replaces the 253 of
//! `vartime_double_scalar_mul_basepoint`. `R` is decompressed (a square root) where the usual check
//! compresses the result (an inversion): the same cost.
//!
//! Variable time, like the rest of verification: everything here is public.

use super::point::{odd_multiples, Niels, Point, Projective, BASEPOINT};
use curve25519_dalek::scalar::Scalar;
use std::sync::OnceLock;

/// Width-8 tables of B and of [2^128]B, built on first use (about 250 point operations).
fn base_tables() -> &'static [[Niels; 64]; 2] {
    static T: OnceLock<[[Niels; 64]; 2]> = OnceLock::new();
    T.get_or_init(|| {
        let b = Point::decompress(&BASEPOINT).unwrap_or(Point::IDENTITY);
        let mut b128 = b.projective();
        for _ in 0..127 {
            b128 = b128.double().projective();
        }
        let b128 = b128.double().extended();
        [odd_multiples::<64>(&b), odd_multiples::<64>(&b128)]
    })
}

// ------------------------------------------------------------------ integers below 2^256

/// Little-endian 64-bit limbs.
type U256 = [u64; 4];

fn u256(bytes: &[u8; 32]) -> U256 {
    let mut out = [0u64; 4];
    for (limb, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        *limb = u64::from_le_bytes(b);
    }
    out
}

fn to_bytes(x: &U256) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (chunk, limb) in out.chunks_exact_mut(8).zip(x) {
        chunk.copy_from_slice(&limb.to_le_bytes());
    }
    out
}

fn bits(x: &U256) -> u32 {
    for i in (0..4).rev() {
        if x[i] != 0 {
            return 64 * i as u32 + 64 - x[i].leading_zeros();
        }
    }
    0
}

/// `x · 2^s`, for results below 2^256.
fn shl(x: &U256, s: u32) -> U256 {
    let (limbs, bits) = ((s / 64) as usize, s % 64);
    let mut out = [0u64; 4];
    for i in (limbs..4).rev() {
        let lo = x[i - limbs];
        let below = if bits > 0 && i > limbs { x[i - limbs - 1] >> (64 - bits) } else { 0 };
        out[i] = lo << bits | below;
    }
    out
}

fn ge(a: &U256, b: &U256) -> bool {
    for i in (0..4).rev() {
        if a[i] != b[i] {
            return a[i] > b[i];
        }
    }
    true
}

fn sub_in_place(a: &mut U256, b: &U256) {
    let mut borrow = false;
    for (x, y) in a.iter_mut().zip(b) {
        let (d, b1) = x.overflowing_sub(*y);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        *x = d;
        borrow = b1 || b2;
    }
}

fn add_in_place(a: &mut U256, b: &U256) {
    let mut c = false;
    for (x, y) in a.iter_mut().zip(b) {
        let (s, c1) = x.overflowing_add(*y);
        let (s, c2) = s.overflowing_add(c as u64);
        *x = s;
        c = c1 || c2;
    }
}

/// 8L, the order of the curve group (L = 2^252 + 27742317777372353535851937790883648493).
const ORDER: U256 = [0xc09318d2e7ae9f68, 0xa6f7cef517bce6b2, 0, 0x8000000000000000];

/// One Euclidean step on (r0, r1) with the coefficients' magnitudes (t0, t1):
/// r0 ← r0 mod r1, t0 ← t0 + (r0 div r1)·t1. Coefficients alternate in sign, so magnitudes add.
fn step(r0: &mut U256, r1: &U256, t0: &mut U256, t1: &U256) {
    let (b0, b1) = (bits(r0), bits(r1));
    if b0 < b1 {
        return;
    }
    for s in (0..=b0 - b1).rev() {
        let m = shl(r1, s);
        if ge(r0, &m) {
            sub_in_place(r0, &m);
            add_in_place(t0, &shl(t1, s));
        }
    }
}

/// `(d0, |d1|, d1 < 0)` with `d0 ≡ d1·k (mod 8L)`, `d1` odd, both of about 128 bits (see the module
/// docs). `k < L`.
fn reduce(k: &[u8; 32]) -> (U256, U256, bool) {
    let (mut r0, mut r1) = (ORDER, u256(k));
    let (mut t0, mut t1) = ([0u64; 4], [1u64, 0, 0, 0]);
    // The sign of the coefficient of r1 (t1 = +1 for r1 = k); each step flips it.
    let mut negative = false;
    while bits(&r1) > 128 {
        step(&mut r0, &r1, &mut t0, &t1);
        core::mem::swap(&mut r0, &mut r1);
        core::mem::swap(&mut t0, &mut t1);
        negative = !negative;
    }
    if t1[0] & 1 == 1 {
        return (r1, t1, negative);
    }
    // Consecutive coefficients are coprime, so the previous and the next one are odd: the shorter pair.
    let previous = (r0, t0, !negative);
    step(&mut r0, &r1, &mut t0, &t1);
    let longest = |(d0, d1, _): &(U256, U256, bool)| bits(d0).max(bits(d1));
    if longest(&previous) <= longest(&(r0, t0, false)) {
        previous
    } else {
        (r0, t0, !negative)
    }
}

/// Width-w non-adjacent form of `x < 2^255`, least significant digit first: odd digits in
/// (-2^(w-1), 2^(w-1)), each followed by at least w-1 zeros.
fn naf(x: &U256, w: u32) -> [i8; 256] {
    let mut out = [0i8; 256];
    let limbs = [x[0], x[1], x[2], x[3], 0];
    let (width, mask) = (1u64 << w, (1u64 << w) - 1);
    let mut pos = 0usize;
    let mut carry = 0u64;
    while pos < 256 {
        let (i, b) = (pos / 64, pos % 64);
        let window = if b + w as usize <= 64 { limbs[i] >> b } else { limbs[i] >> b | limbs[i + 1] << (64 - b) };
        let window = carry + (window & mask);
        if window & 1 == 0 {
            pos += 1;
            continue;
        }
        if window < width / 2 {
            carry = 0;
            out[pos] = window as i8;
        } else {
            carry = 1;
            out[pos] = (window as i64 - width as i64) as i8;
        }
        pos += w as usize;
    }
    out
}

/// Multipliers longer than this (a remainder of the reduction that came out tiny: about one `k` in
/// 2^100) are not used: the check then runs on `d0 = k`, `d1 = 1`, the unreduced equation itself
/// (twice the doublings), so that the digits always fit [`naf`].
const MAX_BITS: u32 = 200;

/// Whether `[S]B - [k]A = R` (cofactorless), with `-A` already decoded and `R`'s encoding canonical.
pub fn verify(minus_a: &Point, s: &Scalar, k: &Scalar, r: &[u8; 32]) -> bool {
    let (mut d0, mut d1, mut d1_negative) = reduce(k.as_bytes());
    if bits(&d0) > MAX_BITS || bits(&d1) > MAX_BITS {
        (d0, d1, d1_negative) = (u256(k.as_bytes()), [1, 0, 0, 0], false);
    }
    verify_with(minus_a, s, r, &d0, &d1, d1_negative)
}

/// `[d1]([S]B - [k]A - R)` is the identity, for `d0 ≡ d1·k (mod 8L)`, `d1` odd, `0 < |d1| < L`.
fn verify_with(minus_a: &Point, s: &Scalar, r: &[u8; 32], d0: &U256, d1: &U256, d1_negative: bool) -> bool {
    let Some(r) = Point::decompress(r) else { return false };
    // [d1]P = [d1·S]B - [d0]A - [d1]R
    let d1_scalar = Scalar::from_bytes_mod_order(to_bytes(d1));
    let sb = (if d1_negative { -d1_scalar } else { d1_scalar }) * s;
    let sb = u256(sb.as_bytes());
    let (s_lo, s_hi) = ([sb[0], sb[1], 0, 0], [sb[2], sb[3], 0, 0]);
    let r_term = if d1_negative { r } else { r.neg() };
    let (a_table, r_table) = (odd_multiples::<8>(minus_a), odd_multiples::<8>(&r_term));
    let [b_table, b128_table] = base_tables();
    let nafs = [naf(d0, 5), naf(d1, 5), naf(&s_lo, 8), naf(&s_hi, 8)];
    let tables: [&[Niels]; 4] = [&a_table, &r_table, b_table, b128_table];
    let top = (0..256).rev().find(|&i| nafs.iter().any(|n| n[i] != 0));
    let mut acc = Projective::IDENTITY;
    for i in (0..=top.unwrap_or(0)).rev() {
        let mut t = acc.double();
        for (n, table) in nafs.iter().zip(tables) {
            let digit = n[i];
            if digit != 0 {
                if let Some(q) = table.get((digit.unsigned_abs() / 2) as usize) {
                    t = t.extended().add(q, digit < 0);
                }
            }
        }
        acc = t.projective();
    }
    acc.is_identity()
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
    
    fn scalar(i: u64) -> Scalar {
        Scalar::from_bytes_mod_order_wide(&[(i % 251) as u8 + 1; 64]) * Scalar::from(i + 1)
    }

    #[test]
    fn order_is_eight_l() {
        // L - 1 is -1 as a scalar; 8L is L shifted by three bits.
        let l_minus_1 = u256((-Scalar::ONE).as_bytes());
        let mut l = l_minus_1;
        add_in_place(&mut l, &[1, 0, 0, 0]);
        assert_eq!(shl(&l, 3), ORDER);
    }

    #[test]
    fn base_tables_hold_odd_multiples() {
        let [b, b128] = base_tables();
        let two128 = Scalar::from(1u128 << 64) * Scalar::from(1u128 << 64);
        for (m, slot) in [(1u64, 0usize), (3, 1), (127, 63)] {
            let want = [ED25519_BASEPOINT_POINT * Scalar::from(m), ED25519_BASEPOINT_POINT * (two128 * Scalar::from(m))];
            for (table, want) in [b, b128].into_iter().zip(want) {
                // Adding the table entry to the identity gives the point back.
                let got = Point::IDENTITY.add(&table[slot], false).extended();
                assert_eq!(got.compress(), want.compress().to_bytes());
            }
        }
    }

    #[test]
    fn reduction_gives_short_odd_multipliers() {
        let mut long = 0;
        for i in 0..2000u64 {
            let k = scalar(i * 7919);
            let (d0, d1, negative) = reduce(k.as_bytes());
            assert_eq!(d1[0] & 1, 1, "d1 odd");
            assert!(bits(&d0) <= 140 && bits(&d1) <= 140, "{} {}", bits(&d0), bits(&d1));
            long += (bits(&d0).max(bits(&d1)) > 130) as u32;
            // d0 ≡ d1·k (mod L) checked with dalek's scalars (mod 8L follows from the Euclidean invariant).
            let d1s = Scalar::from_bytes_mod_order(to_bytes(&d1));
            let d1s = if negative { -d1s } else { d1s };
            assert_eq!(Scalar::from_bytes_mod_order(to_bytes(&d0)), d1s * k);
        }
        // Half the doublings is the point: nearly every k gives multipliers of at most 130 bits.
        assert!(long < 40, "{long} of 2000 longer than 130 bits");
    }

    /// The fallback for a badly reducing `k` (d0 = k, d1 = 1, never reached by chance) decides the
    /// same equation: good signatures pass, each tampered one fails, as the reduced check says.
    #[test]
    fn unreduced_check_is_the_equation() {
        use sha2::{Digest, Sha512};
        for i in 0..40u32 {
            let mut seed = [7u8; 32];
            seed[..4].copy_from_slice(&i.to_le_bytes());
            let kp = crate::ed25519::Keypair::from_seed(&seed).expect("seed");
            let pk = kp.public_key();
            let minus_a = Point::decompress(&pk).expect("key").neg();
            let msg = format!("message {i}").into_bytes();
            let sig = kp.sign(&msg);
            for flip in [None, Some(3usize), Some(40), Some(63)] {
                let mut sig = sig;
                if let Some(at) = flip {
                    sig[at] ^= 0x10;
                }
                let r: [u8; 32] = sig[..32].try_into().expect("R");
                let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(sig[32..].try_into().expect("S"))) else { continue };
                let k = Scalar::from_bytes_mod_order_wide(&Sha512::new().chain_update(r).chain_update(pk).chain_update(&msg).finalize().into());
                let unreduced = verify_with(&minus_a, &s, &r, &u256(k.as_bytes()), &[1, 0, 0, 0], false);
                assert_eq!(unreduced, flip.is_none(), "key {i}, flip {flip:?}");
                assert_eq!(verify(&minus_a, &s, &k, &r), unreduced, "key {i}, flip {flip:?}: reduced");
            }
        }
    }

    #[test]
    fn naf_recomposes() {
        for i in 0..200u64 {
            let x = u256(scalar(i).as_bytes());
            for w in [5, 8] {
                let n = naf(&x, w);
                let mut acc = Scalar::ZERO;
                for &digit in n.iter().rev() {
                    acc = acc + acc;
                    acc += if digit < 0 { -Scalar::from(digit.unsigned_abs()) } else { Scalar::from(digit as u8) };
                    assert!(digit == 0 || (digit & 1 != 0 && (digit.unsigned_abs() as u64) < 1 << (w - 1)));
                }
                assert_eq!(acc.as_bytes(), scalar(i).as_bytes());
            }
        }
    }
}
