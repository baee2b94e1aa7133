//! Arithmetic modulo p = 2^255 - 19 for the reduced verification (see `reduced.rs`), on the
//! formally verified field code of fiat-crypto: on wasm32 the 32-bit limbs curve25519-dalek's fiat
//! backend runs there (wasm has no 64x64->128 multiply), elsewhere the 64-bit limbs. dalek keeps its
//! own field type private, hence this thin wrapper.
//!
//! fiat-crypto's two types carry the limb bounds: sums and differences are *loose* and must go
//! through a multiplication, a squaring or [`carry`] before being added again, so a forgotten carry is
//! a type error rather than an overflow.

#[cfg(not(target_pointer_width = "64"))]
use fiat_crypto::curve25519_32 as fiat;
#[cfg(target_pointer_width = "64")]
use fiat_crypto::curve25519_64 as fiat;
use super::hex32;
use fiat::{
    fiat_25519_add, fiat_25519_carry, fiat_25519_carry_mul, fiat_25519_carry_square, fiat_25519_from_bytes, fiat_25519_loose_field_element as Loose,
    fiat_25519_opp, fiat_25519_relax, fiat_25519_sub, fiat_25519_tight_field_element as Tight, fiat_25519_to_bytes,
};

/// A field element with tight limb bounds.
#[derive(Clone, Copy)]
pub struct Fe(Tight);

/// A sum, difference or negation: only good as an input of [`mul`], [`square`] or [`carry`].
#[derive(Clone, Copy)]
pub struct Lfe(Loose);

/// The limbs of one element: ten of 25.5 bits, or five of 51.
#[cfg(not(target_pointer_width = "64"))]
type Limbs = [u32; 10];
#[cfg(target_pointer_width = "64")]
type Limbs = [u64; 5];

/// The element `low` (a small integer).
const fn limbs(low: u8) -> Limbs {
    let mut l: Limbs = zero_limbs();
    l[0] = low as _;
    l
}

const fn zero_limbs() -> Limbs {
    #[cfg(not(target_pointer_width = "64"))]
    return [0; 10];
    #[cfg(target_pointer_width = "64")]
    return [0; 5];
}

pub const ZERO: Fe = Fe(Tight(limbs(0)));
pub const ONE: Fe = Fe(Tight(limbs(1)));

impl Fe {
    /// The element whose little-endian encoding is `bytes`, bit 255 ignored. Values from p to 2^255 - 1
    /// are read modulo p: callers that need canonical input check it on the bytes first.
    pub const fn from_bytes(bytes: &[u8; 32]) -> Fe {
        let mut b = *bytes;
        b[31] &= 0x7f;
        let mut out = Tight(limbs(0));
        fiat_25519_from_bytes(&mut out, &b);
        Fe(out)
    }

    /// The canonical (fully reduced) little-endian encoding.
    pub fn to_bytes(self) -> [u8; 32] {
        let mut out = [0u8; 32];
        fiat_25519_to_bytes(&mut out, &self.0);
        out
    }

    pub fn is_zero(&self) -> bool {
        self.to_bytes() == [0u8; 32]
    }

    /// Whether the canonical value is odd: the "sign" of RFC 8032's point encoding.
    pub fn is_negative(&self) -> bool {
        self.to_bytes()[0] & 1 == 1
    }

    pub fn relax(&self) -> Lfe {
        let mut out = Loose(limbs(0));
        fiat_25519_relax(&mut out, &self.0);
        Lfe(out)
    }

    pub fn eq(&self, other: &Fe) -> bool {
        self.to_bytes() == other.to_bytes()
    }

    /// `self^(2^k)`.
    pub fn pow2k(&self, k: u32) -> Fe {
        let mut r = *self;
        for _ in 0..k {
            r = square(&r.relax());
        }
        r
    }

    /// `1/self = self^(p - 2) = (self^((p - 5) / 8))^8 · self^3`; zero for zero.
    pub fn invert(&self) -> Fe {
        let z = self.relax();
        let z3 = mul(&square(&z).relax(), &z);
        mul(&self.pow_p58().pow2k(3).relax(), &z3.relax())
    }

    /// `self^((p - 5) / 8) = self^(2^252 - 3)`, the exponent of the square root in decompression
    /// (RFC 8032 §5.1.3), by the usual addition chain: 250 squarings and 11 multiplications.
    pub fn pow_p58(&self) -> Fe {
        let z = self.relax();
        let z2 = square(&z);
        let z8 = z2.pow2k(2);
        let z9 = mul(&z, &z8.relax());
        let z11 = mul(&z2.relax(), &z9.relax());
        let z22 = square(&z11.relax());
        let e5 = mul(&z9.relax(), &z22.relax()); // 2^5 - 1
        let e10 = mul(&e5.pow2k(5).relax(), &e5.relax());
        let e20 = mul(&e10.pow2k(10).relax(), &e10.relax());
        let e40 = mul(&e20.pow2k(20).relax(), &e20.relax());
        let e50 = mul(&e40.pow2k(10).relax(), &e10.relax());
        let e100 = mul(&e50.pow2k(50).relax(), &e50.relax());
        let e200 = mul(&e100.pow2k(100).relax(), &e100.relax());
        let e250 = mul(&e200.pow2k(50).relax(), &e50.relax());
        mul(&e250.pow2k(2).relax(), &z) // 2^252 - 4 + 1
    }
}

pub fn mul(a: &Lfe, b: &Lfe) -> Fe {
    let mut out = Tight(limbs(0));
    fiat_25519_carry_mul(&mut out, &a.0, &b.0);
    Fe(out)
}

pub fn square(a: &Lfe) -> Fe {
    let mut out = Tight(limbs(0));
    fiat_25519_carry_square(&mut out, &a.0);
    Fe(out)
}

pub fn add(a: &Fe, b: &Fe) -> Lfe {
    let mut out = Loose(limbs(0));
    fiat_25519_add(&mut out, &a.0, &b.0);
    Lfe(out)
}

pub fn sub(a: &Fe, b: &Fe) -> Lfe {
    let mut out = Loose(limbs(0));
    fiat_25519_sub(&mut out, &a.0, &b.0);
    Lfe(out)
}

pub fn neg(a: &Fe) -> Lfe {
    let mut out = Loose(limbs(0));
    fiat_25519_opp(&mut out, &a.0);
    Lfe(out)
}

pub fn carry(a: &Lfe) -> Fe {
    let mut out = Tight(limbs(0));
    fiat_25519_carry(&mut out, &a.0);
    Fe(out)
}

/// `d = -121665 / 121666` (RFC 8032 §5.1), `2d`, and a square root of -1 (`2^((p-1)/4)`), decoded at
/// compile time from their little-endian encodings; the tests check each against its definition.
pub const D: Fe = Fe::from_bytes(&hex32("a3785913ca4deb75abd841414d0a700098e879777940c78c73fe6f2bee6c0352"));
pub const D2: Fe = Fe::from_bytes(&hex32("59f1b226949bd6eb56b183829a14e00030d1f3eef2808e19e7fcdf56dcd90624"));
pub const SQRT_M1: Fe = Fe::from_bytes(&hex32("b0a00e4a271beec478e42fad0618432fa7d7fb3d99004d2b0bdfc14f8024832b"));

#[cfg(test)]
mod tests {
    use super::*;

    fn small(n: u32) -> Fe {
        let mut b = [0u8; 32];
        b[..4].copy_from_slice(&n.to_le_bytes());
        Fe::from_bytes(&b)
    }

    #[test]
    fn constants_are_what_they_claim() {
        let (d, d2, i) = (D, D2, SQRT_M1);
        // d · 121666 = -121665
        assert!(mul(&d.relax(), &small(121666).relax()).eq(&carry(&neg(&small(121665)))));
        assert!(carry(&add(&d, &d)).eq(&d2));
        assert!(square(&i.relax()).eq(&carry(&neg(&ONE))));
    }

    #[test]
    fn pow_p58_matches_square_and_multiply() {
        // 2^252 - 3 in binary: bit 252 clear... computed the slow way from its bits.
        let mut e = [0xffu8; 32];
        e[0] = 0xfd;
        e[31] = 0x0f;
        for n in [2u32, 3, 5, 121666, 0xdead_beef] {
            let x = small(n);
            let mut acc = ONE;
            for byte in e.iter().rev() {
                for bit in (0..8).rev() {
                    acc = square(&acc.relax());
                    if byte >> bit & 1 == 1 {
                        acc = mul(&acc.relax(), &x.relax());
                    }
                }
            }
            assert!(acc.eq(&x.pow_p58()), "{n}");
        }
    }

    #[test]
    fn encoding_is_canonical() {
        // p itself reads as zero; p + 1 as one.
        let p = hex32("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
        assert!(Fe::from_bytes(&p).is_zero());
        let mut p1 = p;
        p1[0] += 1;
        assert_eq!(Fe::from_bytes(&p1).to_bytes(), ONE.to_bytes());
    }
}
