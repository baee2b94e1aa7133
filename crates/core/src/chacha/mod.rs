//! ChaCha20 (RFC 8439, 32-bit block counter, 96-bit nonce) and HChaCha20 (the XChaCha20 subkey step).
//!
//! Keystream is made four blocks at a time: each of the 16 state words is a group of four lanes, one
//! per block, so that a quarter-round advances four blocks with one instruction per step on wasm
//! simd128 (see `lanes`). Single blocks (the Poly1305 key, short tails, HChaCha20) run the same rounds
//! on plain `u32`s. Nothing here branches on or indexes by secret data.

mod lanes;
pub mod poly1305;

use lanes::{xor_into, U32x4, WIDE};

/// "expand 32-byte k"
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// What a quarter-round needs of a word: `u32` for one block, [`U32x4`] for four.
trait Word: Copy {
    fn add(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn rotl16(self) -> Self;
    fn rotl12(self) -> Self;
    fn rotl8(self) -> Self;
    fn rotl7(self) -> Self;
}

impl Word for u32 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn rotl16(self) -> Self {
        self.rotate_left(16)
    }
    #[inline(always)]
    fn rotl12(self) -> Self {
        self.rotate_left(12)
    }
    #[inline(always)]
    fn rotl8(self) -> Self {
        self.rotate_left(8)
    }
    #[inline(always)]
    fn rotl7(self) -> Self {
        self.rotate_left(7)
    }
}

impl Word for U32x4 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        U32x4::add(self, o)
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        U32x4::xor(self, o)
    }
    #[inline(always)]
    fn rotl16(self) -> Self {
        U32x4::rotl16(self)
    }
    #[inline(always)]
    fn rotl12(self) -> Self {
        U32x4::rotl12(self)
    }
    #[inline(always)]
    fn rotl8(self) -> Self {
        U32x4::rotl8(self)
    }
    #[inline(always)]
    fn rotl7(self) -> Self {
        U32x4::rotl7(self)
    }
}

#[inline(always)]
fn quarter<W: Word>(a: W, b: W, c: W, d: W) -> (W, W, W, W) {
    let a = a.add(b);
    let d = d.xor(a).rotl16();
    let c = c.add(d);
    let b = b.xor(c).rotl12();
    let a = a.add(b);
    let d = d.xor(a).rotl8();
    let c = c.add(d);
    let b = b.xor(c).rotl7();
    (a, b, c, d)
}

/// The 20 rounds (10 column + diagonal double rounds), without the final addition of the input.
#[inline(always)]
fn rounds<W: Word>(s: &[W; 16]) -> [W; 16] {
    let [mut x0, mut x1, mut x2, mut x3, mut x4, mut x5, mut x6, mut x7, mut x8, mut x9, mut x10, mut x11, mut x12, mut x13, mut x14, mut x15] =
        *s;
    for _ in 0..10 {
        (x0, x4, x8, x12) = quarter(x0, x4, x8, x12);
        (x1, x5, x9, x13) = quarter(x1, x5, x9, x13);
        (x2, x6, x10, x14) = quarter(x2, x6, x10, x14);
        (x3, x7, x11, x15) = quarter(x3, x7, x11, x15);
        (x0, x5, x10, x15) = quarter(x0, x5, x10, x15);
        (x1, x6, x11, x12) = quarter(x1, x6, x11, x12);
        (x2, x7, x8, x13) = quarter(x2, x7, x8, x13);
        (x3, x4, x9, x14) = quarter(x3, x4, x9, x14);
    }
    [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15]
}

fn words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    let mut w = [0u32; N];
    for (w, b) in w.iter_mut().zip(bytes.chunks_exact(4)) {
        *w = <[u8; 4]>::try_from(b).map_or(0, u32::from_le_bytes);
    }
    w
}

/// A ChaCha20 key and 96-bit nonce, ready to produce keystream from any block counter.
pub struct ChaCha20 {
    state: [u32; 16],
}

impl ChaCha20 {
    pub fn new(key: &[u8; 32], nonce: &[u8; 12]) -> Self {
        let mut state = [0u32; 16];
        let (head, rest) = state.split_at_mut(4);
        let (k, rest) = rest.split_at_mut(8);
        let (_counter, n) = rest.split_at_mut(1);
        head.copy_from_slice(&SIGMA);
        k.copy_from_slice(&words::<8>(key));
        n.copy_from_slice(&words::<3>(nonce));
        Self { state }
    }

    fn with_counter(&self, counter: u32) -> [u32; 16] {
        let mut s = self.state;
        s[12] = counter;
        s
    }

    /// Keystream block number `counter`.
    pub fn block(&self, counter: u32) -> [u8; 64] {
        let s = self.with_counter(counter);
        let x = rounds(&s);
        let mut out = [0u8; 64];
        for ((o, x), s) in out.chunks_exact_mut(4).zip(x).zip(s) {
            o.copy_from_slice(&x.wrapping_add(s).to_le_bytes());
        }
        out
    }

    /// XORs the keystream starting at block `counter` into `buf`. The caller keeps
    /// `counter + ceil(len / 64)` within 2^32 (RFC 8439's limit on one message).
    pub fn apply(&self, mut counter: u32, buf: &mut [u8]) {
        let mut lanes = self.state.map(U32x4::splat);
        let steps = U32x4::new(0, 1, 2, 3);
        let mut chunks = buf.chunks_exact_mut(WIDE);
        for chunk in &mut chunks {
            if let Ok(chunk) = <&mut [u8; WIDE]>::try_from(chunk) {
                lanes[12] = U32x4::splat(counter).add(steps);
                wide(&lanes, chunk);
            }
            counter = counter.wrapping_add(4);
        }
        let tail = chunks.into_remainder();
        if tail.len() > 64 {
            let mut ks = [0u8; WIDE];
            lanes[12] = U32x4::splat(counter).add(steps);
            wide(&lanes, &mut ks);
            xor(tail, &ks);
        } else if !tail.is_empty() {
            xor(tail, &self.block(counter));
        }
    }
}

#[inline(always)]
fn wide(s: &[U32x4; 16], buf: &mut [u8; WIDE]) {
    let mut x = rounds(s);
    for (x, s) in x.iter_mut().zip(s) {
        *x = x.add(*s);
    }
    xor_into(&x, buf);
}

fn xor(buf: &mut [u8], ks: &[u8]) {
    for (b, k) in buf.iter_mut().zip(ks) {
        *b ^= k;
    }
}

/// HChaCha20 (draft-irtf-cfrg-xchacha §2.2): the subkey for the first 16 bytes of an XChaCha20 nonce.
pub fn hchacha20(key: &[u8; 32], nonce: &[u8; 16]) -> [u8; 32] {
    let mut s = [0u32; 16];
    let (head, rest) = s.split_at_mut(4);
    let (k, n) = rest.split_at_mut(8);
    head.copy_from_slice(&SIGMA);
    k.copy_from_slice(&words::<8>(key));
    n.copy_from_slice(&words::<4>(nonce));
    let x = rounds(&s);
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(x.iter().take(4).chain(x.iter().skip(12))) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn seq_key() -> [u8; 32] {
        core::array::from_fn(|i| i as u8)
    }

    #[test]
    fn rfc8439_block_function() {
        // RFC 8439 §2.3.2.
        let nonce: [u8; 12] = hex("000000090000004a00000000").try_into().unwrap();
        let want = hex(
            "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e
             d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e",
        );
        assert_eq!(ChaCha20::new(&seq_key(), &nonce).block(1).to_vec(), want);
    }

    #[test]
    fn hchacha20_test_vector() {
        // draft-irtf-cfrg-xchacha-03 §2.2.1.
        let nonce: [u8; 16] = hex("000000090000004a0000000031415927").try_into().unwrap();
        let want = hex("82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc");
        assert_eq!(hchacha20(&seq_key(), &nonce).to_vec(), want);
    }

    /// The 4-lane path must produce exactly the blocks of the one-block path, in order, for every
    /// length and starting counter (each lane carries its own counter).
    #[test]
    fn four_lane_keystream_equals_consecutive_blocks() {
        let c = ChaCha20::new(&seq_key(), &[9u8; 12]);
        for start in [0u32, 1, 2, 3, 7, 0xffff_fff0] {
            let mut want = Vec::new();
            for i in 0..12u32 {
                want.extend_from_slice(&c.block(start.wrapping_add(i)));
            }
            for len in 0..=want.len() {
                let mut got = vec![0u8; len];
                c.apply(start, &mut got);
                assert_eq!(got, want[..len], "start {start} len {len}");
            }
        }
    }
}
