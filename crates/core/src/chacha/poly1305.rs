//! Poly1305 (RFC 8439 §2.5) for the AEAD, which only ever absorbs whole zero-padded 16-byte blocks.
//!
//! Arithmetic mod 2^130 - 5 in five 26-bit limbs (poly1305-donna-32): each limb product fits a u64.
//! Long inputs run two Horner chains side by side, one per 64-bit lane (wasm simd128
//! `i64x2.extmul_low_i32x4_u`, or a portable pair elsewhere): the chains multiply by r^2 and the last
//! step by (r^2, r), so `m1 r^2n + m2 r^(2n-1) + ... + m2n r` is the sum of the two lanes.
//! No branch or index depends on secret data.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

const M26: u32 = 0x3ff_ffff;
/// 2^128 in the top limb: the 1 appended to every full block.
const HIBIT: u32 = 1 << 24;

pub struct Poly1305 {
    r: [u32; 5],
    /// r^2 mod p, limbs at most a little over 2^26.
    r2: [u32; 5],
    h: [u32; 5],
    pad: [u32; 4],
}

#[inline(always)]
fn le32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).and_then(|s| <[u8; 4]>::try_from(s).ok()).map_or(0, u32::from_le_bytes)
}

/// The five 26-bit limbs of a full 16-byte block, with the 2^128 bit.
#[inline(always)]
fn limbs(m: &[u8]) -> [u32; 5] {
    [
        le32(m, 0) & M26,
        (le32(m, 3) >> 2) & M26,
        (le32(m, 6) >> 4) & M26,
        (le32(m, 9) >> 6) & M26,
        (le32(m, 12) >> 8) | HIBIT,
    ]
}

/// h * r mod p, partially reduced (limbs below 2^26 but h1, a little over).
#[inline(always)]
fn mul(h: [u32; 5], r: &[u32; 5]) -> [u32; 5] {
    let [h0, h1, h2, h3, h4] = h.map(u64::from);
    let [r0, r1, r2, r3, r4] = r.map(u64::from);
    let [s1, s2, s3, s4] = [r1 * 5, r2 * 5, r3 * 5, r4 * 5];
    let d0 = h0 * r0 + h1 * s4 + h2 * s3 + h3 * s2 + h4 * s1;
    let d1 = h0 * r1 + h1 * r0 + h2 * s4 + h3 * s3 + h4 * s2;
    let d2 = h0 * r2 + h1 * r1 + h2 * r0 + h3 * s4 + h4 * s3;
    let d3 = h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * s4;
    let d4 = h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0;
    carry([d0, d1, d2, d3, d4])
}

#[inline(always)]
fn carry(d: [u64; 5]) -> [u32; 5] {
    let [d0, mut d1, mut d2, mut d3, mut d4] = d;
    let m = u64::from(M26);
    d1 += d0 >> 26;
    d2 += d1 >> 26;
    d3 += d2 >> 26;
    d4 += d3 >> 26;
    let h0 = (d0 & m) + (d4 >> 26) * 5;
    let h1 = (d1 & m) + (h0 >> 26);
    [h0 & m, h1, d2 & m, d3 & m, d4 & m].map(|x| x as u32)
}

#[inline(always)]
fn add(a: [u32; 5], b: [u32; 5]) -> [u32; 5] {
    let [a0, a1, a2, a3, a4] = a;
    let [b0, b1, b2, b3, b4] = b;
    [a0 + b0, a1 + b1, a2 + b2, a3 + b3, a4 + b4]
}

impl Poly1305 {
    pub fn new(key: &[u8; 32]) -> Self {
        // r clamped as RFC 8439 §2.5 asks, split into 26-bit limbs.
        let r = [
            le32(key, 0) & 0x3ff_ffff,
            (le32(key, 3) >> 2) & 0x3ff_ff03,
            (le32(key, 6) >> 4) & 0x3ff_c0ff,
            (le32(key, 9) >> 6) & 0x3f0_3fff,
            (le32(key, 12) >> 8) & 0x00f_ffff,
        ];
        let pad = [le32(key, 16), le32(key, 20), le32(key, 24), le32(key, 28)];
        Self { r, r2: mul(r, &r), h: [0; 5], pad }
    }

    /// Absorbs `data` zero-padded to a multiple of 16 bytes.
    pub fn update_padded(&mut self, data: &[u8]) {
        let pairs = data.len() / 32;
        let (wide, rest) = data.split_at(pairs * 32);
        if pairs > 0 {
            self.h = two_chains(self.h, &self.r, &self.r2, wide);
        }
        for block in rest.chunks(16) {
            let mut full = [0u8; 16];
            full.iter_mut().zip(block).for_each(|(f, b)| *f = *b);
            self.h = mul(add(self.h, limbs(&full)), &self.r);
        }
    }

    pub fn finalize(self) -> [u8; 16] {
        let [mut h0, mut h1, mut h2, mut h3, mut h4] = self.h;
        // Full carry, then h - p computed alongside and kept when it does not borrow (h >= p).
        let mut c;
        c = h1 >> 26;
        h1 &= M26;
        h2 += c;
        c = h2 >> 26;
        h2 &= M26;
        h3 += c;
        c = h3 >> 26;
        h3 &= M26;
        h4 += c;
        c = h4 >> 26;
        h4 &= M26;
        h0 += c * 5;
        c = h0 >> 26;
        h0 &= M26;
        h1 += c;

        let mut g0 = h0 + 5;
        c = g0 >> 26;
        g0 &= M26;
        let mut g1 = h1 + c;
        c = g1 >> 26;
        g1 &= M26;
        let mut g2 = h2 + c;
        c = g2 >> 26;
        g2 &= M26;
        let mut g3 = h3 + c;
        c = g3 >> 26;
        g3 &= M26;
        let g4 = (h4 + c).wrapping_sub(1 << 26);
        // All ones when g4 did not borrow, that is when h >= p.
        let keep_g = (g4 >> 31).wrapping_sub(1);
        let sel = |h: u32, g: u32| (h & !keep_g) | (g & keep_g);
        let (h0, h1, h2, h3, h4) = (sel(h0, g0), sel(h1, g1), sel(h2, g2), sel(h3, g3), sel(h4, g4));

        // h mod 2^128 in 32-bit words, plus the pad, mod 2^128.
        let words = [h0 | (h1 << 26), (h1 >> 6) | (h2 << 20), (h2 >> 12) | (h3 << 14), (h3 >> 18) | (h4 << 8)];
        let mut out = [0u8; 16];
        let mut f = 0u64;
        for ((o, w), p) in out.chunks_exact_mut(4).zip(words).zip(self.pad) {
            f = u64::from(w) + u64::from(p) + (f >> 32);
            o.copy_from_slice(&(f as u32).to_le_bytes());
        }
        out
    }
}

/// The Horner evaluation of `data` (a whole number of 32-byte pairs of blocks) continuing from `h`,
/// as two interleaved chains: lane A takes the odd blocks, lane B the even ones.
fn two_chains(h: [u32; 5], r: &[u32; 5], r2: &[u32; 5], data: &[u8]) -> [u32; 5] {
    use lanes::{Pair, Wide};
    let by_r2 = r2.map(|x| Pair::new(x, x));
    let mut by_last = by_r2;
    for (p, (x, y)) in by_last.iter_mut().zip(r2.iter().zip(r)) {
        *p = Pair::new(*x, *y);
    }
    let mut acc = h.map(|x| Pair::new(x, 0));
    let mut pairs = data.chunks_exact(32).peekable();
    while let Some(pair) = pairs.next() {
        let (a, b) = pair.split_at(16);
        for ((h, x), y) in acc.iter_mut().zip(limbs(a)).zip(limbs(b)) {
            *h = h.add(Pair::new(x, y));
        }
        let [h0, h1, h2, h3, h4] = acc;
        let r = if pairs.peek().is_some() { &by_r2 } else { &by_last };
        let [r0, r1, r2, r3, r4] = *r;
        let [s1, s2, s3, s4] = [r1.times5(), r2.times5(), r3.times5(), r4.times5()];
        let d0 = h0.mul(r0).add(h1.mul(s4)).add(h2.mul(s3)).add(h3.mul(s2)).add(h4.mul(s1));
        let d1 = h0.mul(r1).add(h1.mul(r0)).add(h2.mul(s4)).add(h3.mul(s3)).add(h4.mul(s2));
        let d2 = h0.mul(r2).add(h1.mul(r1)).add(h2.mul(r0)).add(h3.mul(s4)).add(h4.mul(s3));
        let d3 = h0.mul(r3).add(h1.mul(r2)).add(h2.mul(r1)).add(h3.mul(r0)).add(h4.mul(s4));
        let d4 = h0.mul(r4).add(h1.mul(r3)).add(h2.mul(r2)).add(h3.mul(r1)).add(h4.mul(r0));
        let d1 = d1.add(d0.shr26());
        let d2 = d2.add(d1.shr26());
        let d3 = d3.add(d2.shr26());
        let d4 = d4.add(d3.shr26());
        let h0 = d0.mask26().add(d4.shr26().times5());
        let h1 = d1.mask26().add(h0.shr26());
        acc = [h0.mask26(), h1, d2.mask26(), d3.mask26(), d4.mask26()].map(Wide::narrow);
    }
    // Each lane's limbs are below 2^27, so their sum fits before one more carry pass.
    let sum = acc.map(|p| {
        let (x, y) = p.lanes();
        u64::from(x) + u64::from(y)
    });
    carry(sum)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod lanes {
    use core::arch::wasm32::{
        i32x4_shuffle, u32x4, u32x4_add, u32x4_extract_lane, u64x2_add, u64x2_extmul_low_u32x4, u64x2_shl,
        u64x2_shr, u64x2_splat, v128, v128_and,
    };

    /// Two u32 limbs, one per chain, in lanes 0 and 1.
    #[derive(Clone, Copy)]
    pub struct Pair(v128);
    /// Two u64 limb products or sums, one per chain.
    #[derive(Clone, Copy)]
    pub struct Wide(v128);

    impl Pair {
        #[inline(always)]
        pub fn new(a: u32, b: u32) -> Self {
            Self(u32x4(a, b, 0, 0))
        }
        #[inline(always)]
        pub fn add(self, o: Self) -> Self {
            Self(u32x4_add(self.0, o.0))
        }
        #[inline(always)]
        pub fn times5(self) -> Self {
            Self(u32x4_add(self.0, core::arch::wasm32::u32x4_shl(self.0, 2)))
        }
        #[inline(always)]
        pub fn mul(self, o: Self) -> Wide {
            Wide(u64x2_extmul_low_u32x4(self.0, o.0))
        }
        pub fn lanes(self) -> (u32, u32) {
            (u32x4_extract_lane::<0>(self.0), u32x4_extract_lane::<1>(self.0))
        }
    }

    impl Wide {
        #[inline(always)]
        pub fn add(self, o: Self) -> Self {
            Self(u64x2_add(self.0, o.0))
        }
        #[inline(always)]
        pub fn shr26(self) -> Self {
            Self(u64x2_shr(self.0, 26))
        }
        #[inline(always)]
        pub fn mask26(self) -> Self {
            Self(v128_and(self.0, u64x2_splat(0x3ff_ffff)))
        }
        #[inline(always)]
        pub fn times5(self) -> Self {
            Self(u64x2_add(self.0, u64x2_shl(self.0, 2)))
        }
        /// Back to u32 limbs (the values fit): the low halves of both lanes into lanes 0 and 1.
        #[inline(always)]
        pub fn narrow(self) -> Pair {
            Pair(i32x4_shuffle::<0, 2, 0, 2>(self.0, self.0))
        }
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod lanes {
    #[derive(Clone, Copy)]
    pub struct Pair(u32, u32);
    #[derive(Clone, Copy)]
    pub struct Wide(u64, u64);

    impl Pair {
        #[inline(always)]
        pub fn new(a: u32, b: u32) -> Self {
            Self(a, b)
        }
        #[inline(always)]
        pub fn add(self, o: Self) -> Self {
            Self(self.0 + o.0, self.1 + o.1)
        }
        #[inline(always)]
        pub fn times5(self) -> Self {
            Self(self.0 * 5, self.1 * 5)
        }
        #[inline(always)]
        pub fn mul(self, o: Self) -> Wide {
            Wide(u64::from(self.0) * u64::from(o.0), u64::from(self.1) * u64::from(o.1))
        }
        pub fn lanes(self) -> (u32, u32) {
            (self.0, self.1)
        }
    }

    impl Wide {
        #[inline(always)]
        pub fn add(self, o: Self) -> Self {
            Self(self.0 + o.0, self.1 + o.1)
        }
        #[inline(always)]
        pub fn shr26(self) -> Self {
            Self(self.0 >> 26, self.1 >> 26)
        }
        #[inline(always)]
        pub fn mask26(self) -> Self {
            Self(self.0 & 0x3ff_ffff, self.1 & 0x3ff_ffff)
        }
        #[inline(always)]
        pub fn times5(self) -> Self {
            Self(self.0 * 5, self.1 * 5)
        }
        #[inline(always)]
        pub fn narrow(self) -> Pair {
            Pair(self.0 as u32, self.1 as u32)
        }
    }
}
