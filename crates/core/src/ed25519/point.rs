//! Edwards points for verification, on the field of `field.rs`: decoding (RFC 8032 §5.1.3), and the
//! extended-coordinate formulas of Hisil, Wong, Carter and Dawson ("Twisted Edwards curves revisited",
//! 2008) for a = -1, laid out as curve25519-dalek lays them out (completed points, Niels forms), whose
//! point types are private. Used by the reduced check (`reduced.rs`) and the per-key tables
//! (`cache.rs`); tested against dalek's points.

use super::field::{self, add, carry, mul, neg, square, sub, Fe, Lfe, ONE, ZERO};

/// A point in extended coordinates: x = X/Z, y = Y/Z, xy = T/Z.
#[derive(Clone, Copy)]
pub struct Point {
    x: Fe,
    y: Fe,
    z: Fe,
    t: Fe,
}

/// X, Y, Z only: enough to double.
#[derive(Clone, Copy)]
pub struct Projective {
    x: Fe,
    y: Fe,
    z: Fe,
}

/// ((X:Z), (Y:T)) with x = X/Z, y = Y/T: the result of an addition or a doubling, before choosing
/// whether T is needed.
pub struct Completed {
    x: Lfe,
    y: Lfe,
    z: Lfe,
    t: Lfe,
}

/// A point ready to be added: (Y+X, Y-X, 2Z, 2d·T).
#[derive(Clone, Copy)]
pub struct Niels {
    y_plus_x: Fe,
    y_minus_x: Fe,
    z2: Fe,
    t2d: Fe,
}

/// A point with Z = 1 ready to be added: (y+x, y-x, 2d·xy). A quarter smaller than [`Niels`], and
/// its addition needs one multiplication fewer (2·Z1 is an addition): for tables kept and read often.
#[derive(Clone, Copy)]
pub struct AffineNiels {
    y_plus_x: Fe,
    y_minus_x: Fe,
    xy2d: Fe,
}

impl Point {
    pub const IDENTITY: Point = Point { x: ZERO, y: ONE, z: ONE, t: ZERO };

    /// RFC 8032 §5.1.3 decoding; `None` when `y` has no matching `x`. The caller has refused
    /// non-canonical encodings (y ≥ p, or x = 0 with the sign bit set) on the bytes.
    pub fn decompress(bytes: &[u8; 32]) -> Option<Point> {
        let y = Fe::from_bytes(bytes);
        let yy = square(&y.relax());
        let u = carry(&sub(&yy, &ONE));
        let v = carry(&add(&mul(&field::D.relax(), &yy.relax()), &ONE));
        // x = u v^3 (u v^7)^((p-5)/8)
        let v3 = mul(&square(&v.relax()).relax(), &v.relax());
        let v7 = mul(&square(&v3.relax()).relax(), &v.relax());
        let uv3 = mul(&u.relax(), &v3.relax());
        let mut x = mul(&uv3.relax(), &mul(&u.relax(), &v7.relax()).pow_p58().relax());
        let vxx = mul(&v.relax(), &square(&x.relax()).relax());
        if !vxx.eq(&u) {
            if !vxx.eq(&carry(&neg(&u))) {
                return None;
            }
            x = mul(&x.relax(), &field::SQRT_M1.relax());
        }
        let sign = bytes[31] >> 7 == 1;
        if x.is_zero() && sign {
            return None;
        }
        if x.is_negative() != sign {
            x = carry(&neg(&x));
        }
        Some(Point { x, y, z: ONE, t: mul(&x.relax(), &y.relax()) })
    }

    pub fn neg(&self) -> Point {
        Point { x: carry(&neg(&self.x)), y: self.y, z: self.z, t: carry(&neg(&self.t)) }
    }

    /// RFC 8032 encoding.
    pub fn compress(&self) -> [u8; 32] {
        self.encode(&self.z.invert())
    }

    /// The encodings of `points`, as [`Point::compress`] gives them, for one field inversion instead of
    /// one each (see [`invert_z`]). An inversion is about 265 field operations, a sixth of a
    /// verification with a table.
    pub fn compress_batch(points: &[Point]) -> Vec<[u8; 32]> {
        points.iter().zip(&invert_z(points)).map(|(p, inv)| p.encode(inv)).collect()
    }

    /// `points` with Z = 1, ready to be added, for one field inversion: how window tables are stored.
    pub fn affine_niels_batch(points: &[Point]) -> Vec<AffineNiels> {
        points
            .iter()
            .zip(&invert_z(points))
            .map(|(p, inv)| {
                let (x, y) = (mul(&p.x.relax(), &inv.relax()), mul(&p.y.relax(), &inv.relax()));
                AffineNiels {
                    y_plus_x: carry(&add(&y, &x)),
                    y_minus_x: carry(&sub(&y, &x)),
                    xy2d: mul(&mul(&x.relax(), &y.relax()).relax(), &field::D2.relax()),
                }
            })
            .collect()
    }

    /// The encoding, given 1/Z.
    fn encode(&self, inv_z: &Fe) -> [u8; 32] {
        let x = mul(&self.x.relax(), &inv_z.relax());
        let mut out = mul(&self.y.relax(), &inv_z.relax()).to_bytes();
        out[31] |= (x.is_negative() as u8) << 7;
        out
    }

    pub fn projective(&self) -> Projective {
        Projective { x: self.x, y: self.y, z: self.z }
    }

    pub fn niels(&self) -> Niels {
        Niels {
            y_plus_x: carry(&add(&self.y, &self.x)),
            y_minus_x: carry(&sub(&self.y, &self.x)),
            z2: carry(&add(&self.z, &self.z)),
            t2d: mul(&self.t.relax(), &field::D2.relax()),
        }
    }

    pub fn add(&self, q: &Niels, subtract: bool) -> Completed {
        self.sum(&q.y_plus_x, &q.y_minus_x, &q.t2d, mul(&self.z.relax(), &q.z2.relax()), subtract)
    }

    /// [`Point::add`] for a point with Z = 1: 2·Z1·Z2 is 2·Z1.
    pub fn add_affine(&self, q: &AffineNiels, subtract: bool) -> Completed {
        self.sum(&q.y_plus_x, &q.y_minus_x, &q.xy2d, carry(&add(&self.z, &self.z)), subtract)
    }

    /// The sum (or difference) with q = (Y+X, Y-X, 2d·T) in Niels form, given 2·Z1·Z2.
    #[inline(always)]
    fn sum(&self, y_plus_x: &Fe, y_minus_x: &Fe, t2d: &Fe, zz2: Fe, subtract: bool) -> Completed {
        let (qp, qm) = if subtract { (y_minus_x, y_plus_x) } else { (y_plus_x, y_minus_x) };
        let pp = mul(&add(&self.y, &self.x), &qp.relax());
        let mm = mul(&sub(&self.y, &self.x), &qm.relax());
        let tt2d = mul(&self.t.relax(), &t2d.relax());
        let (z, t) = if subtract { (sub(&zz2, &tt2d), add(&zz2, &tt2d)) } else { (add(&zz2, &tt2d), sub(&zz2, &tt2d)) };
        Completed { x: sub(&pp, &mm), y: add(&pp, &mm), z, t }
    }
}

/// 1/Z of each point for one field inversion (Montgomery's trick: invert the product of every Z,
/// then peel each 1/Z off it with three multiplications). Should some Z be 0, which points reached by
/// the complete formulas from points of the curve never have, each is inverted on its own (0 for 0).
fn invert_z(points: &[Point]) -> Vec<Fe> {
    let mut before = Vec::with_capacity(points.len());
    let mut product = ONE;
    for p in points {
        before.push(product);
        product = mul(&product.relax(), &p.z.relax());
    }
    if product.is_zero() {
        return points.iter().map(|p| p.z.invert()).collect();
    }
    let mut inv = product.invert();
    let mut out = vec![ZERO; points.len()];
    for ((p, before), slot) in points.iter().zip(&before).zip(out.iter_mut()).rev() {
        // inv is 1 / (Z_0 ⋯ Z_i) here.
        *slot = mul(&inv.relax(), &before.relax());
        inv = mul(&inv.relax(), &p.z.relax());
    }
    out
}

impl Projective {
    pub const IDENTITY: Projective = Projective { x: ZERO, y: ONE, z: ONE };

    pub fn double(&self) -> Completed {
        let xx = square(&self.x.relax());
        let yy = square(&self.y.relax());
        let zz = square(&self.z.relax());
        let zz2 = carry(&add(&zz, &zz));
        let x_plus_y_sq = square(&add(&self.x, &self.y));
        let yy_plus_xx = carry(&add(&yy, &xx));
        let yy_minus_xx = carry(&sub(&yy, &xx));
        Completed { x: sub(&x_plus_y_sq, &yy_plus_xx), y: yy_plus_xx.relax(), z: yy_minus_xx.relax(), t: sub(&zz2, &yy_minus_xx) }
    }

    pub fn is_identity(&self) -> bool {
        self.x.is_zero() && self.y.eq(&self.z)
    }
}

impl Point {
    /// `2^k · self`, k ≥ 1: the intermediate doublings skip T.
    pub fn mul_pow2(&self, k: u32) -> Point {
        let mut p = self.projective().double();
        for _ in 1..k {
            p = p.projective().double();
        }
        p.extended()
    }
}

impl Completed {
    pub fn extended(&self) -> Point {
        Point { x: mul(&self.x, &self.t), y: mul(&self.y, &self.z), z: mul(&self.z, &self.t), t: mul(&self.x, &self.y) }
    }

    pub fn projective(&self) -> Projective {
        Projective { x: mul(&self.x, &self.t), y: mul(&self.y, &self.z), z: mul(&self.z, &self.t) }
    }
}

/// `P, 3P, 5P, …, (2^(w-1) - 1)P`: the positive odd digits of a width-w NAF.
pub fn odd_multiples<const N: usize>(p: &Point) -> [Niels; N] {
    let p2 = p.projective().double().extended().niels();
    let mut out = [p.niels(); N];
    let mut acc = *p;
    for slot in out.iter_mut().skip(1) {
        acc = acc.add(&p2, false).extended();
        *slot = acc.niels();
    }
    out
}

/// The base point's encoding (RFC 8032 §5.1: y = 4/5, x even).
pub const BASEPOINT: [u8; 32] = [
    0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
    0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
];

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
    use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
    use curve25519_dalek::scalar::Scalar;

    fn scalar(i: u64) -> Scalar {
        Scalar::from_bytes_mod_order_wide(&[(i % 251) as u8 + 1; 64]) * Scalar::from(i + 1)
    }

    #[test]
    fn decompress_agrees_with_dalek() {
        // Points, and byte strings that mostly are not points.
        for i in 0..300u64 {
            let p = EdwardsPoint::mul_base(&scalar(i));
            let enc = p.compress().to_bytes();
            assert_eq!(Point::decompress(&enc).map(|q| q.compress()), Some(enc));
            let mut junk = [0u8; 32];
            for (j, b) in junk.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(97).wrapping_add((j as u8).wrapping_mul(31));
            }
            junk[31] &= 0x7f;
            let ours = Point::decompress(&junk).map(|q| q.compress());
            let theirs = CompressedEdwardsY(junk).decompress().map(|q| q.compress().to_bytes());
            assert_eq!(ours, theirs, "{i}");
        }
    }

    #[test]
    fn arithmetic_agrees_with_dalek() {
        let b = Point::decompress(&BASEPOINT).expect("B decodes");
        assert_eq!(b.compress(), ED25519_BASEPOINT_POINT.compress().to_bytes());
        for i in 1..50u64 {
            let (p, q) = (EdwardsPoint::mul_base(&scalar(i)), EdwardsPoint::mul_base(&scalar(i + 1000)));
            let (ours_p, ours_q) = (Point::decompress(&p.compress().to_bytes()).unwrap(), Point::decompress(&q.compress().to_bytes()).unwrap());
            assert_eq!(ours_p.add(&ours_q.niels(), false).extended().compress(), (p + q).compress().to_bytes());
            assert_eq!(ours_p.add(&ours_q.niels(), true).extended().compress(), (p - q).compress().to_bytes());
            assert_eq!(ours_p.neg().compress(), (-p).compress().to_bytes());
            assert_eq!(ours_p.mul_pow2(5).compress(), (p * Scalar::from(32u8)).compress().to_bytes());
            let odd = odd_multiples::<8>(&ours_p);
            let fifteen = Point::IDENTITY.add(&odd[7], false).extended();
            assert_eq!(fifteen.compress(), (p * Scalar::from(15u8)).compress().to_bytes());
        }
        assert!(Point::IDENTITY.projective().is_identity());
        assert!(!b.projective().is_identity());
    }

    /// Batches of every size up to 9, of points with Z far from 1 (sums and multiples) and the
    /// identity, encode as each point alone does and as dalek does.
    #[test]
    fn compress_batch_is_compress_of_each() {
        let b = Point::decompress(&BASEPOINT).expect("B decodes");
        let mut points = vec![Point::IDENTITY];
        let mut acc = b;
        for i in 1..9u32 {
            acc = acc.add(&b.mul_pow2(i).niels(), i % 2 == 0).extended();
            points.push(acc);
        }
        for n in 0..=points.len() {
            let batch = &points[..n];
            let want: Vec<[u8; 32]> = batch.iter().map(Point::compress).collect();
            assert_eq!(Point::compress_batch(batch), want, "batch of {n}");
            for (p, enc) in batch.iter().zip(&want) {
                let theirs = CompressedEdwardsY(*enc).decompress().expect("a point").compress().to_bytes();
                assert_eq!(&theirs, enc);
                assert_eq!(enc, &p.compress());
            }
        }
        assert!(points.iter().filter(|p| !p.z.eq(&ONE)).count() >= 7, "most Z are not 1");
    }

    /// Adding and subtracting the Z = 1 form of a point gives what the general form gives, for sums
    /// with Z far from 1 on both sides, the identity included.
    #[test]
    fn affine_addition_is_addition() {
        let b = Point::decompress(&BASEPOINT).expect("B decodes");
        let mut points = vec![Point::IDENTITY, b];
        for i in 1..10u32 {
            let last = points[points.len() - 1];
            points.push(last.add(&b.mul_pow2(i).niels(), i % 3 == 0).extended());
        }
        let affine = Point::affine_niels_batch(&points);
        for acc in &points {
            for (q, aq) in points.iter().zip(&affine) {
                for subtract in [false, true] {
                    let want = acc.add(&q.niels(), subtract).extended().compress();
                    assert_eq!(acc.add_affine(aq, subtract).extended().compress(), want);
                }
            }
        }
    }
}
