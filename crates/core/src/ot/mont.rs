//! Montgomery arithmetic and exponentiation modulo a secret odd 1024-bit prime, for the CRT halves of
//! the RSA private operation, written for WebAssembly's instruction set.
//!
//! Why not crypto-bigint's Montgomery form: WASM has a 32×32→64-bit multiply but no 64×64→128, so a
//! 32-bit-limb multiply-accumulate must split every product and carry between words. Here a number is
//! 37 limbs of 28 bits in u32s (1036 bits); a product of two limbs is below 2^56, so a column of the
//! product plus the reduction (at most 74 products) and a carry stays below 2^63. The product and the
//! reduction are rows of constant length of bare multiply-adds into u64 column sums (operand
//! scanning), with one carry per column: in WASM this measured about 2× crypto-bigint's fixed-width
//! exponentiation, and about 1.4× product scanning, whose columns of varying length cost as much in
//! bookkeeping as in products. A squaring adds each cross product once and doubles the columns
//! (n(n − 1)/2 + n limb products instead of n²): about 12% less time than a multiplication, the
//! reduction (half of a multiplication) being the same. With R = 2^1036 > 4p, inputs below 2p give
//! results below 2p (Walter's bound), so no step subtracts p conditionally; the one constant-time
//! subtraction is when leaving Montgomery form.
//!
//! LLVM vectorizes the rows with `i64x2.mul`, which engines lower to several 32-bit multiplies where
//! the CPU has no 64-bit lane multiply: measured on x86-64 (V8 11, Node 20), still about 1.2× the same
//! code built without SIMD. Measured not to pay there, per 1024-bit exponentiation (best of many
//! interleaved runs, against 1.19 ms for this code with 4-bit windows):
//! - `i64x2.extmul_{low,high}_i32x4_u` (two 32×32→64 products an instruction) written as
//!   intrinsics: LLVM turns them back into `i64x2.mul` whenever one operand is a splat it can see or
//!   a loop-invariant value it can widen once, so they survive only with the splat hidden behind an
//!   opaque copy per row, and then ran at 1.41 ms (V8 adds two shuffles to each extmul).
//! - 45 limbs of 23 bits multiplied in `f64x2` lanes (products below 2^46, exact column sums below
//!   2^53), rows in blocks of four and eight with the block's reduction multipliers computed ahead in
//!   scalar code: a multiplication in 0.91 µs against 0.97 µs, but 1.48× the limb products and no
//!   cheaper squaring, so 1.33 ms.
//!
//! Exponentiation uses fixed 5-bit windows: 36 fewer multiplications than 4-bit ones (204 windows and
//! a table of 32, against 256 and 16), measured 2.4% faster despite a table scan twice as long.
//!
//! Constant-time: every loop runs a number of times fixed by the sizes; the windows cover all 1024
//! exponent bits (the top one 4), and every table entry is read for each window, masked. No branch
//! and no memory index depends on the modulus, the base or the exponent.
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
const WINDOW: u32 = 5;
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
        self.n_inv.zeroize();
        self.r2.zeroize();
        self.one.zeroize();
    }
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
        Modulus { n: *n, n_inv: inv.wrapping_neg() & MASK, r2: *r2_mod_n, one: *r_mod_n }
    }

    /// Adds the reduction rows to the column sums `t` of a product (each below 2^62 and carrying
    /// nothing yet) and returns the result's limbs: row i adds m_i·n, with m_i making column i
    /// divisible by 2^28, whose quotient then carries into column i + 1.
    #[inline(always)]
    fn reduce(&self, t: &mut [u64; 2 * L]) -> Limbs {
        for i in 0..L {
            let Some(ti) = t.get(i).copied() else { continue };
            let mi = u64::from((ti as u32).wrapping_mul(self.n_inv) & MASK);
            if let Some(row) = t.get_mut(i..i + L) {
                for (tj, nj) in row.iter_mut().zip(&self.n) {
                    *tj += mi * u64::from(*nj);
                }
            }
            if let (Some(&ti), Some(next)) = (t.get(i), t.get(i + 1)) {
                let next = *next + (ti >> W);
                if let Some(n) = t.get_mut(i + 1) {
                    *n = next;
                }
            }
        }
        let mut out = [0u32; L];
        let mut carry = 0u64;
        for (o, &tk) in out.iter_mut().zip(t.get(L..).unwrap_or_default()) {
            let v = tk + carry;
            *o = v as u32 & MASK;
            carry = v >> W;
        }
        // The result is below 2n < 2^1025, so nothing is left in `carry`.
        out
    }

    /// a·b·R⁻¹ mod n, below 2n for a, b below 2n. Rows of constant length, which LLVM unrolls:
    /// column sums first, then the reduction.
    pub(super) fn mul(&self, a: &Limbs, b: &Limbs) -> Limbs {
        let mut t = [0u64; 2 * L];
        for (i, &ai) in a.iter().enumerate() {
            let ai = u64::from(ai);
            if let Some(row) = t.get_mut(i..i + L) {
                for (tj, bj) in row.iter_mut().zip(b) {
                    *tj += ai * u64::from(*bj);
                }
            }
        }
        self.reduce(&mut t)
    }

    /// a²·R⁻¹ mod n, below 2n for a below 2n: each cross product once, doubled, then the squares.
    pub(super) fn square(&self, a: &Limbs) -> Limbs {
        let mut t = [0u64; 2 * L];
        for (i, &ai) in a.iter().enumerate() {
            let ai = u64::from(ai);
            if let (Some(row), Some(rest)) = (t.get_mut(2 * i + 1..i + L), a.get(i + 1..)) {
                for (tj, aj) in row.iter_mut().zip(rest) {
                    *tj += ai * u64::from(*aj);
                }
            }
        }
        for (pair, &ai) in t.chunks_exact_mut(2).zip(a) {
            let ai = u64::from(ai);
            if let [even, odd] = pair {
                *even = 2 * *even + ai * ai;
                *odd *= 2;
            }
        }
        self.reduce(&mut t)
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
        prev.zeroize();
        // The top window holds the bits above the last whole window: it starts z, with no squaring
        // of one before it.
        let windows = (8 * BYTES as u32).div_ceil(WINDOW);
        let mut z = pick(&table, window(exp, (windows - 1) * WINDOW));
        for w in (0..windows - 1).rev() {
            for _ in 0..WINDOW {
                z = self.square(&z);
            }
            let mut entry = pick(&table, window(exp, w * WINDOW));
            z = self.mul(&z, &entry);
            entry.zeroize();
        }
        for t in &mut table {
            t.zeroize();
        }
        z
    }
}

/// The WINDOW exponent bits from bit `at` (bits past the end read as zero).
fn window(exp: &[u8; BYTES], at: u32) -> u32 {
    let byte = (at / 8) as usize;
    let lo = u32::from(exp.get(byte).copied().unwrap_or(0));
    let hi = u32::from(exp.get(byte + 1).copied().unwrap_or(0));
    ((lo | hi << 8) >> (at % 8)) & (TABLE as u32 - 1)
}

/// table[idx], reading every entry.
fn pick(table: &[Limbs; TABLE], idx: u32) -> Limbs {
    let mut out = [0u32; L];
    for (j, t) in (0u32..).zip(table) {
        let hit = j.ct_eq(&idx);
        for (o, &x) in out.iter_mut().zip(t) {
            o.conditional_assign(&x, hit);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crypto_bigint::modular::{FixedMontyForm, FixedMontyParams};
    use crypto_bigint::{Odd, U1024, U2048};

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

    /// Limbs of any number below 2^1036 (the operands below 2n may exceed 1024 bits).
    fn limbs_wide(x: &U2048) -> Limbs {
        let mut out = [0u32; L];
        let (mut acc, mut bits, mut i) = (0u64, 0u32, 0usize);
        for &b in x.to_le_bytes().as_ref() {
            acc |= u64::from(b) << bits;
            bits += 8;
            while bits >= W {
                if let Some(o) = out.get_mut(i) {
                    *o = acc as u32 & MASK;
                }
                acc >>= W;
                bits -= W;
                i += 1;
            }
        }
        out
    }

    fn int_wide(x: &Limbs) -> U2048 {
        x.iter().rev().fold(U2048::ZERO, |acc, &l| acc.shl_vartime(W).wrapping_add(&U2048::from_u32(l)))
    }

    /// Montgomery products and squares of operands anywhere below 2n, the range the exponentiation
    /// feeds them (0, 1, n − 1, n, n + 1, 2n − 1, random below n and in [n, 2n)): each result is below
    /// 2n and is a·b·R⁻¹ mod n, checked as result·R ≡ a·b (mod n) in wide integers; a square is
    /// limb for limb the product of the operand with itself.
    #[test]
    fn products_and_squares_of_edge_operands() {
        let mut s = Stream(11);
        for round in 0..6 {
            let mut nb = s.bytes();
            nb[0] |= 1;
            nb[BYTES - 1] |= 0x80;
            match round {
                0 => nb = [0xff; BYTES],
                1 => {
                    nb = [0; BYTES];
                    nb[0] = 1;
                    nb[BYTES - 1] = 0x80;
                }
                _ => {}
            }
            let n = U1024::from_le_slice(&nb);
            let (m, _) = modulus(&n);
            let nz = Odd::new(n).unwrap();
            let n2: U2048 = n.resize();
            let below_n = |s: &mut Stream| -> U2048 { U1024::from_le_slice(&s.bytes()).rem(nz.as_nz_ref()).resize() };
            let mut ops = vec![U2048::ZERO, U2048::ONE, n2.wrapping_sub(&U2048::ONE), n2, n2.wrapping_add(&U2048::ONE), n2.shl_vartime(1).wrapping_sub(&U2048::ONE)];
            for _ in 0..4 {
                ops.push(below_n(&mut s));
                ops.push(below_n(&mut s).wrapping_add(&n2));
            }
            let wide_n = Odd::new(n.resize::<{ crypto_bigint::U4096::LIMBS }>()).unwrap();
            let rem = |x: crypto_bigint::U4096| x.rem(wide_n.as_nz_ref());
            for a in &ops {
                for b in &ops {
                    let r = m.mul(&limbs_wide(a), &limbs_wide(b));
                    let rw = int_wide(&r);
                    assert!(rw < n2.shl_vartime(1), "result not below 2n");
                    let want = rem(a.concatenating_mul(b));
                    assert_eq!(rem(rw.resize::<{ crypto_bigint::U4096::LIMBS }>().shl_vartime(L as u32 * W)), want);
                    if a == b {
                        assert_eq!(m.square(&limbs_wide(a)), r);
                    }
                }
            }
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
