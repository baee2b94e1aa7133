//! Four `u32` lanes: word `i` of four consecutive ChaCha20 blocks side by side, so that one
//! quarter-round step advances all four blocks. On wasm32 with simd128 a lane group is one `v128`;
//! elsewhere it is a plain array, so that native `cargo test` runs the very same 4-block algorithm.

/// Bytes of keystream one lane group produces: four 64-byte blocks.
pub const WIDE: usize = 256;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod imp {
    use super::WIDE;
    use core::arch::wasm32::{
        i32x4_shuffle, i8x16_shuffle, u32x4, u32x4_add, u32x4_shl, u32x4_shr, u32x4_splat, v128, v128_load,
        v128_or, v128_store, v128_xor,
    };

    #[derive(Clone, Copy)]
    pub struct U32x4(v128);

    impl U32x4 {
        #[inline(always)]
        pub fn splat(x: u32) -> Self {
            Self(u32x4_splat(x))
        }
        #[inline(always)]
        pub fn new(a: u32, b: u32, c: u32, d: u32) -> Self {
            Self(u32x4(a, b, c, d))
        }
        #[inline(always)]
        pub fn add(self, o: Self) -> Self {
            Self(u32x4_add(self.0, o.0))
        }
        #[inline(always)]
        pub fn xor(self, o: Self) -> Self {
            Self(v128_xor(self.0, o.0))
        }
        // Rotations by whole bytes are one byte shuffle (little-endian lanes); the others shift twice.
        #[inline(always)]
        pub fn rotl16(self) -> Self {
            Self(i8x16_shuffle::<2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13>(self.0, self.0))
        }
        #[inline(always)]
        pub fn rotl8(self) -> Self {
            Self(i8x16_shuffle::<3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14>(self.0, self.0))
        }
        #[inline(always)]
        pub fn rotl12(self) -> Self {
            Self(v128_or(u32x4_shl(self.0, 12), u32x4_shr(self.0, 20)))
        }
        #[inline(always)]
        pub fn rotl7(self) -> Self {
            Self(v128_or(u32x4_shl(self.0, 7), u32x4_shr(self.0, 25)))
        }
    }

    #[inline(always)]
    fn xor16(out: &mut [u8; 16], ks: v128) {
        let p = out.as_mut_ptr().cast::<v128>();
        // SAFETY: `out` is 16 valid, writable bytes; wasm loads and stores need no alignment.
        unsafe { v128_store(p, v128_xor(v128_load(p), ks)) }
    }

    /// XORs the four blocks held lane-wise in `x` into `buf` (block `j` at byte `64 * j`).
    #[inline(always)]
    pub fn xor_into(x: &[U32x4; 16], buf: &mut [u8; WIDE]) {
        let (b0, rest) = buf.split_at_mut(64);
        let (b1, rest) = rest.split_at_mut(64);
        let (b2, b3) = rest.split_at_mut(64);
        let mut blocks = [b0, b1, b2, b3].map(|b| b.chunks_exact_mut(16));
        for g in x.chunks_exact(4) {
            let [a, b, c, d] = [g[0].0, g[1].0, g[2].0, g[3].0];
            // 4x4 transpose: lane j of words 4g..4g+3 becomes 16 bytes of block j.
            let t0 = i32x4_shuffle::<0, 4, 1, 5>(a, b);
            let t1 = i32x4_shuffle::<0, 4, 1, 5>(c, d);
            let t2 = i32x4_shuffle::<2, 6, 3, 7>(a, b);
            let t3 = i32x4_shuffle::<2, 6, 3, 7>(c, d);
            let ks = [
                i32x4_shuffle::<0, 1, 4, 5>(t0, t1),
                i32x4_shuffle::<2, 3, 6, 7>(t0, t1),
                i32x4_shuffle::<0, 1, 4, 5>(t2, t3),
                i32x4_shuffle::<2, 3, 6, 7>(t2, t3),
            ];
            for (it, k) in blocks.iter_mut().zip(ks) {
                if let Some(chunk) = it.next().and_then(|c| <&mut [u8; 16]>::try_from(c).ok()) {
                    xor16(chunk, k);
                }
            }
        }
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod imp {
    use super::WIDE;

    #[derive(Clone, Copy)]
    pub struct U32x4([u32; 4]);

    impl U32x4 {
        #[inline(always)]
        pub fn splat(x: u32) -> Self {
            Self([x; 4])
        }
        #[inline(always)]
        pub fn new(a: u32, b: u32, c: u32, d: u32) -> Self {
            Self([a, b, c, d])
        }
        #[inline(always)]
        fn map2(self, o: Self, f: impl Fn(u32, u32) -> u32) -> Self {
            let [a, b, c, d] = self.0;
            let [e, g, h, i] = o.0;
            Self([f(a, e), f(b, g), f(c, h), f(d, i)])
        }
        #[inline(always)]
        pub fn add(self, o: Self) -> Self {
            self.map2(o, u32::wrapping_add)
        }
        #[inline(always)]
        pub fn xor(self, o: Self) -> Self {
            self.map2(o, |a, b| a ^ b)
        }
        #[inline(always)]
        pub fn rotl16(self) -> Self {
            Self(self.0.map(|a| a.rotate_left(16)))
        }
        #[inline(always)]
        pub fn rotl8(self) -> Self {
            Self(self.0.map(|a| a.rotate_left(8)))
        }
        #[inline(always)]
        pub fn rotl12(self) -> Self {
            Self(self.0.map(|a| a.rotate_left(12)))
        }
        #[inline(always)]
        pub fn rotl7(self) -> Self {
            Self(self.0.map(|a| a.rotate_left(7)))
        }
    }

    /// XORs the four blocks held lane-wise in `x` into `buf` (block `j` at byte `64 * j`).
    #[inline(always)]
    pub fn xor_into(x: &[U32x4; 16], buf: &mut [u8; WIDE]) {
        for (j, block) in buf.chunks_exact_mut(64).enumerate() {
            for (word, out) in x.iter().zip(block.chunks_exact_mut(4)) {
                let k = word.0.get(j).copied().unwrap_or(0).to_le_bytes();
                for (o, k) in out.iter_mut().zip(k) {
                    *o ^= k;
                }
            }
        }
    }
}

pub use imp::{xor_into, U32x4};
