//! Montgomery arithmetic and exponentiation modulo a secret odd 1024-bit prime, for the CRT halves of
//! the RSA private operation, written for WebAssembly's instruction set.
//!
//! Why not crypto-bigint's Montgomery form: WASM has a 32×32→64-bit multiply but no 64×64→128, so a
//! 32-bit-limb multiply-accumulate must split every product and carry between words. Here a number is
//! 37 limbs of 28 bits in u32s (1036 bits); a product of two limbs is below 2^56, and one column of a
//! product-scanning Montgomery multiplication (at most 74 products and the carry) stays below 2^63, so
//! the inner loops are bare multiply-adds into one u64, with a carry only once per column. LLVM turns
//! them into WASM SIMD (`i64x2.extmul_low/high_i32x4_u`, two products an instruction). With
//! R = 2^1036 > 4p, inputs below 2p give results below 2p (Walter's bound), so no step subtracts p
//! conditionally; the one constant-time subtraction is when leaving Montgomery form.
//!
//! Constant-time: every loop runs a number of times fixed by the sizes; exponentiation uses fixed
//! 4-bit windows over all 1024 exponent bits, and reads every table entry for each window, masked.
//! No branch and no memory index depends on the modulus, the base or the exponent.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use subtle::{ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroize;

/// Bits of a limb.
const W: u32 = 28;
const MASK: u32 = (1 << W) - 1;
/// Limbs of a number: 37·28 = 1036 bits.
pub(super) const L: usize = 37;
/// Bytes of the plain integers this module reads and writes (1024 bits, little-endian).
pub(super) const BYTES: usize = 128;
const WINDOW: u32 = 4;
const TABLE: usize = 1 << WINDOW;

pub(super) type Limbs = [u32; L];

/// 1024-bit little-endian bytes as limbs.
pub(super) fn from_le_bytes(bytes: &[u8; BYTES]) -> Limbs {
    let mut out = [0u32; L];
    let (mut acc, mut bits, mut i) = (0u64, 0u32, 0usize);
    for &b in bytes {
        acc |= u64::from(b) << bits;
        bits += 8;
        if bits >= W {
            if let Some(o) = out.get_mut(i) {
                *o = acc as u32 & MASK;
            }
            acc >>= W;
            bits -= W;
            i += 1;
        }
    }
    if let Some(o) = out.get_mut(i) {
        *o = acc as u32;
    }
    out
}

/// Limbs of a number below 2^1024 as little-endian bytes.
pub(super) fn to_le_bytes(x: &Limbs) -> [u8; BYTES] {
    let mut out = [0u8; BYTES];
    let (mut acc, mut bits, mut o) = (0u64, 0u32, out.iter_mut());
    for &limb in x {
        acc |= u64::from(limb) << bits;
        bits += W;
        while bits >= 8 {
            if let Some(b) = o.next() {
                *b = acc as u8;
            }
            acc >>= 8;
            bits -= 8;
        }
    }
    out
}

/// An odd modulus below 2^1024 with what its Montgomery arithmetic needs.
pub(super) struct Modulus {
    n: Limbs,
    /// n's limbs in reverse order, so that the columns' inner loops read both operands forwards.
    n_rev: Limbs,
    /// −n⁻¹ mod 2^28.
    n_inv: u32,
    /// R² mod n, R = 2^1036: a Montgomery product with it enters Montgomery form.
    r2: Limbs,
    /// R mod n: one in Montgomery form.
    one: Limbs,
}

impl Drop for Modulus {
    fn drop(&mut self) {
        self.n.zeroize();
        self.n_rev.zeroize();
        self.n_inv.zeroize();
        self.r2.zeroize();
        self.one.zeroize();
    }
}

fn reversed(x: &Limbs) -> Limbs {
    let mut r = *x;
    r.reverse();
    r
}

/// Column sum Σ x[i]·y_rev[i] over equal-length slices: the products of one column.
#[inline(always)]
fn dot(x: &[u32], y_rev: &[u32]) -> u64 {
    x.iter().zip(y_rev).map(|(&a, &b)| u64::from(a) * u64::from(b)).sum()
}

impl Modulus {
    /// `n` odd and below 2^1024, with R mod n and R² mod n (R = 2^1036) computed by the caller
    /// (constant-time, once per key).
    pub(super) fn new(n: &Limbs, r_mod_n: &Limbs, r2_mod_n: &Limbs) -> Modulus {
        // Newton's iteration for n⁻¹ mod 2^32: each step doubles the correct low bits (n·n ≡ 1 mod 8).
        let n0 = n.first().copied().unwrap_or(1);
        let mut inv = n0;
        for _ in 0..4 {
            inv = inv.wrapping_mul(2u32.wrapping_sub(n0.wrapping_mul(inv)));
        }
        Modulus { n: *n, n_rev: reversed(n), n_inv: inv.wrapping_neg() & MASK, r2: *r2_mod_n, one: *r_mod_n }
    }

    /// The Montgomery reduction step closing column k: the multiplier m_k making the column's low
    /// 28 bits zero, and the carry into the next column.
    #[inline(always)]
    fn close(&self, acc: u64, m: &mut u32) -> u64 {
        let mk = (acc as u32).wrapping_mul(self.n_inv) & MASK;
        *m = mk;
        let n0 = self.n.first().copied().unwrap_or(0);
        (acc + u64::from(mk) * u64::from(n0)) >> W
    }

    /// The reduction's contributions to the columns k = L..2L−1 and their output limbs. `partial[j]`
    /// holds the product part of column L + j.
    #[inline(always)]
    fn finish(&self, m: &Limbs, partial: &[u64; L], mut carry: u64) -> Limbs {
        let mut out = [0u32; L];
        for (j, (o, &p)) in out.iter_mut().zip(partial).enumerate().take(L - 1) {
            // Column L + j: m[j+1..L] with n[L-1..j+1] (n_rev from index 0 up).
            let (ms, ns) = (m.get(j + 1..).unwrap_or_default(), self.n_rev.get(..L - 1 - j).unwrap_or_default());
            let acc = carry + p + dot(ms, ns);
            *o = acc as u32 & MASK;
            carry = acc >> W;
        }
        if let Some(last) = out.last_mut() {
            // Below 2^17: the result is below 2p < 2^1025.
            *last = carry as u32;
        }
        out
    }

    /// a·b·R⁻¹ mod n, below 2n for a, b below 2n.
    pub(super) fn mul(&self, a: &Limbs, b: &Limbs) -> Limbs {
        let b_rev = reversed(b);
        let mut m = [0u32; L];
        let mut carry = 0u64;
        for k in 0..L {
            // Column k < L: a[0..=k]·b[k..=0] and m[0..k]·n[k..=1]; m_k·n[0] comes with m_k.
            let ab = dot(a.get(..=k).unwrap_or_default(), b_rev.get(L - 1 - k..).unwrap_or_default());
            let mn = dot(m.get(..k).unwrap_or_default(), self.n_rev.get(L - 1 - k..L - 1).unwrap_or_default());
            let acc = carry + ab + mn;
            if let Some(mk) = m.get_mut(k) {
                carry = self.close(acc, mk);
            }
        }
        let mut partial = [0u64; L];
        for (j, p) in partial.iter_mut().enumerate().take(L - 1) {
            // Column L + j: a[j+1..L]·b[L-1..j+1].
            *p = dot(a.get(j + 1..).unwrap_or_default(), b_rev.get(..L - 1 - j).unwrap_or_default());
        }
        self.finish(&m, &partial, carry)
    }

    /// a²·R⁻¹ mod n, below 2n for a below 2n: each cross product once, doubled.
    pub(super) fn square(&self, a: &Limbs) -> Limbs {
        let a_rev = reversed(a);
        // Column k of a²: 2·Σ_{i<k−i} a_i·a_{k−i} + a_{k/2}² when k is even.
        let col = |k: usize| -> u64 {
            let lo = (k + 1).saturating_sub(L);
            let hi = k.div_ceil(2); // i < hi ⇔ i < k − i
            let cross = if hi > lo { dot(a.get(lo..hi).unwrap_or_default(), a_rev.get(L - 1 + lo - k..L - 1 + hi - k).unwrap_or_default()) } else { 0 };
            let diag = if k & 1 == 0 { a.get(k / 2).map_or(0, |&x| u64::from(x) * u64::from(x)) } else { 0 };
            2 * cross + diag
        };
        let mut m = [0u32; L];
        let mut carry = 0u64;
        for k in 0..L {
            let mn = dot(m.get(..k).unwrap_or_default(), self.n_rev.get(L - 1 - k..L - 1).unwrap_or_default());
            let acc = carry + col(k) + mn;
            if let Some(mk) = m.get_mut(k) {
                carry = self.close(acc, mk);
            }
        }
        let mut partial = [0u64; L];
        for (j, p) in partial.iter_mut().enumerate().take(L - 1) {
            *p = col(L + j);
        }
        self.finish(&m, &partial, carry)
    }

    /// x·R mod n (below 2n) for x below 2^1036.
    pub(super) fn to_mont(&self, x: &Limbs) -> Limbs {
        self.mul(x, &self.r2)
    }

    /// x·R⁻¹ mod n, fully reduced (below n), for x below 2n.
    pub(super) fn plain(&self, x: &Limbs) -> Limbs {
        let mut one = [0u32; L];
        if let Some(o) = one.first_mut() {
            *o = 1;
        }
        let y = self.mul(x, &one);
        self.reduce_once(&y)
    }

    /// y − n when y ≥ n, else y, in constant time.
    fn reduce_once(&self, y: &Limbs) -> Limbs {
        let mut diff = [0u32; L];
        let mut borrow = 0u32;
        for ((d, &a), &b) in diff.iter_mut().zip(y).zip(&self.n) {
            let t = a.wrapping_sub(b).wrapping_sub(borrow);
            borrow = t >> 31;
            *d = t & MASK;
        }
        // No borrow out: y ≥ n, keep the difference.
        let keep_y = subtle::Choice::from(borrow as u8);
        let mut out = [0u32; L];
        for ((o, &a), &d) in out.iter_mut().zip(y).zip(&diff) {
            *o = u32::conditional_select(&d, &a, keep_y);
        }
        out
    }

    /// base^exp mod n in Montgomery form (below 2n) for base in Montgomery form below 2n and a
    /// 1024-bit exponent given as 128 little-endian bytes.
    pub(super) fn pow(&self, base: &Limbs, exp: &[u8; BYTES]) -> Limbs {
        let mut table = [[0u32; L]; TABLE];
        let mut prev = self.one;
        for (i, t) in table.iter_mut().enumerate() {
            *t = match i {
                0 => self.one,
                1 => *base,
                _ => self.mul(&prev, base),
            };
            prev = *t;
        }
        let mut z = self.one;
        for byte in exp.iter().rev() {
            for shift in [4u32, 0] {
                for _ in 0..WINDOW {
                    z = self.square(&z);
                }
                let idx = u32::from(*byte >> shift) & (TABLE as u32 - 1);
                let mut pick = [0u32; L];
                for (j, t) in (0u32..).zip(&table) {
                    let hit = j.ct_eq(&idx);
                    for (p, &x) in pick.iter_mut().zip(t) {
                        p.conditional_assign(&x, hit);
                    }
                }
                z = self.mul(&z, &pick);
                pick.zeroize();
            }
        }
        for t in &mut table {
            t.zeroize();
        }
        z
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crypto_bigint::modular::{FixedMontyForm, FixedMontyParams};
    use crypto_bigint::{Odd, U1024};

    fn limbs(x: &U1024) -> Limbs {
        let mut b = [0u8; BYTES];
        b.copy_from_slice(x.to_le_bytes().as_ref());
        from_le_bytes(&b)
    }

    fn int(x: &Limbs) -> U1024 {
        U1024::from_le_slice(&to_le_bytes(x))
    }

    /// A deterministic stream of test numbers (splitmix64).
    struct Stream(u64);
    impl Stream {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn bytes(&mut self) -> [u8; BYTES] {
            let mut b = [0u8; BYTES];
            for c in b.chunks_mut(8) {
                c.copy_from_slice(&self.next().to_le_bytes());
            }
            b
        }
    }

    fn modulus(n: &U1024) -> (Modulus, FixedMontyParams<{ U1024::LIMBS }>) {
        let params = FixedMontyParams::new(Odd::new(*n).unwrap());
        // R = 2^1036 = 2^1024 · 2^12: double crypto-bigint's R mod n 12 times, its R² 24 times.
        let odd = Odd::new(*n).unwrap();
        let nz = odd.as_nz_ref();
        let mut r = *params.one();
        let mut r2 = *params.r2();
        for _ in 0..12 {
            r = r.add_mod(&r, nz);
        }
        for _ in 0..24 {
            r2 = r2.add_mod(&r2, nz);
        }
        (Modulus::new(&limbs(n), &limbs(&r), &limbs(&r2)), params)
    }

    #[test]
    fn limbs_round_trip() {
        let mut s = Stream(1);
        for _ in 0..20 {
            let b = s.bytes();
            assert_eq!(to_le_bytes(&from_le_bytes(&b)), b);
        }
    }

    #[test]
    fn agrees_with_crypto_bigint() {
        let mut s = Stream(7);
        for round in 0..12 {
            let mut nb = s.bytes();
            nb[0] |= 1;
            nb[BYTES - 1] |= 0x80;
            if round == 0 {
                nb = [0xff; BYTES]; // the largest modulus
            }
            let n = U1024::from_le_slice(&nb);
            let (m, params) = modulus(&n);
            let odd = Odd::new(n).unwrap();
            let nz = odd.as_nz_ref();
            for _ in 0..6 {
                let (a, b) = (U1024::from_le_slice(&s.bytes()).rem(nz), U1024::from_le_slice(&s.bytes()).rem(nz));
                let (am, bm) = (m.to_mont(&limbs(&a)), m.to_mont(&limbs(&b)));
                let want = FixedMontyForm::new(&a, &params) * FixedMontyForm::new(&b, &params);
                assert_eq!(int(&m.plain(&m.mul(&am, &bm))), want.retrieve());
                assert_eq!(int(&m.plain(&m.square(&am))), FixedMontyForm::new(&a, &params).square().retrieve());
                let e = s.bytes();
                let want = FixedMontyForm::new(&a, &params).pow(&U1024::from_le_slice(&e)).retrieve();
                assert_eq!(int(&m.plain(&m.pow(&am, &e))), want);
            }
            // Edge bases and exponents: 0, 1, n − 1; exponent 0 and all ones.
            let n1 = n.wrapping_sub(&U1024::ONE);
            for a in [U1024::ZERO, U1024::ONE, n1] {
                for e in [[0u8; BYTES], [0xff; BYTES]] {
                    let want = FixedMontyForm::new(&a, &params).pow(&U1024::from_le_slice(&e)).retrieve();
                    assert_eq!(int(&m.plain(&m.pow(&m.to_mont(&limbs(&a)), &e))), want);
                }
            }
        }
    }
}
