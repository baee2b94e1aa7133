//! The RSA-2048 private operation x^d mod n on fixed-width integers: CRT over the two 1024-bit primes,
//! Garner recombination, input blinding and a fault check.
//!
//! Constant-time (no branch and no memory index depends on a secret): the reductions of x mod p and
//! mod q, both exponentiations (fixed 5-bit windows over all 1024 exponent bits, every table entry
//! read for each window), the recombination, the blinding and unblinding, the fault check's
//! arithmetic. Not constant-time: its verdict (a fault aborts the operation, which says only that a
//! fault happened); the refresh of the blinding pair every `BLIND_USES` operations (a public count),
//! whose draw loop ends after a number of tries that depends on the ChaCha20 stream, not on the key.
//! Key import (once per key) checks its numbers with crypto-bigint's constant-time arithmetic but
//! returns early on the first failed check.
//!
//! Blinding is kept although the exponentiation is constant-time as written: what an engine makes of
//! the WASM (its instruction choice, a multiply's timing on some CPU) is beyond this code, and the
//! input is the attacker's choice. With x·b^e exponentiated instead of x, for a secret uniform unit b,
//! whatever might leak is of data the attacker neither chose nor knows. As in OpenSSL, a pair
//! (b^e, b⁻¹) serves one operation and is then squared; a fresh pair, with its one inversion, is drawn
//! every `BLIND_USES` operations from a ChaCha20 stream seeded by the key's blinding secret (an
//! inversion each time would add about 0.7 ms in WASM, a sixth of the operation). The exponent is not
//! blinded (d + k·φ(n)): that defends one device against power analysis, not a remote observer.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::mont;
use crate::error::{Error, Result};
use chacha20::rand_core::{Rng, SeedableRng};
use chacha20::ChaCha20Rng;
use crypto_bigint::modular::{FixedMontyForm, FixedMontyParams};
use crypto_bigint::{Choice, CtEq, CtLt, Odd, U1024, U2048};
use std::sync::Mutex;
use zeroize::{Zeroize, Zeroizing};

const HALF_LIMBS: usize = U1024::LIMBS;
const FULL_LIMBS: usize = U2048::LIMBS;
type HalfMonty = FixedMontyForm<HALF_LIMBS>;
type FullMonty = FixedMontyForm<FULL_LIMBS>;

/// Operations one blinding pair serves (squared after each) before a fresh pair is drawn.
const BLIND_USES: u32 = 32;
const E: u32 = 65537;
const E_BITS: u32 = 17;

fn key_invalid(m: &str) -> Error {
    Error::OtKeyInvalid(m.to_owned())
}

/// One prime of the key with its Montgomery parameters (crypto-bigint's, to reduce inputs; `mont`'s,
/// to exponentiate) and CRT exponent.
struct Prime {
    params: FixedMontyParams<HALF_LIMBS>,
    mont: mont::Modulus,
    /// d mod (prime − 1), little-endian.
    exp: [u8; mont::BYTES],
}

fn limbs(x: &U1024) -> mont::Limbs {
    let mut b = Zeroizing::new([0u8; mont::BYTES]);
    b.copy_from_slice(x.to_le_bytes().as_ref());
    mont::from_le_bytes(&b)
}

impl Prime {
    fn new(p: &U1024, exp: &U1024) -> Option<Prime> {
        let odd = Odd::new(*p).into_option()?;
        let params = FixedMontyParams::new(odd);
        // mont's R is 2^1036 = 2^1024·2^12: crypto-bigint's R mod p doubled 12 times, its R² 24 times.
        let (mut r, mut r2) = (*params.one(), *params.r2());
        for _ in 0..12 {
            r = r.add_mod(&r, odd.as_nz_ref());
        }
        for _ in 0..24 {
            r2 = r2.add_mod(&r2, odd.as_nz_ref());
        }
        let mont = mont::Modulus::new(&limbs(p), &limbs(&r), &limbs(&r2));
        r.zeroize();
        r2.zeroize();
        let mut e = [0u8; mont::BYTES];
        e.copy_from_slice(exp.to_le_bytes().as_ref());
        Some(Prime { params, mont, exp: e })
    }

    /// x mod p for any 2048-bit x: x = hi·R + lo with R = 2^1024, and Mont(hi)·R² (R² being R²'s
    /// own Montgomery representation) is hi·R in Montgomery form.
    fn reduce(&self, x: &U2048) -> U1024 {
        let (lo, hi): (U1024, U1024) = x.split();
        let r2 = HalfMonty::from_montgomery(*self.params.r2(), &self.params);
        (HalfMonty::new(&lo, &self.params) + HalfMonty::new(&hi, &self.params) * r2).retrieve()
    }

    /// x^exp mod p for x < p.
    fn pow(&self, x: &U1024) -> U1024 {
        let m = &self.mont;
        let y = m.plain(&m.pow(&m.to_mont(&limbs(x)), &self.exp));
        U1024::from_le_slice(&mont::to_le_bytes(&y))
    }

    /// Whether y^e ≡ x mod p (e = 65537 = 2^16 + 1), for any 2048-bit x and y.
    fn checks(&self, y: &U2048, x: &U2048) -> Choice {
        let m = &self.mont;
        let base = m.to_mont(&limbs(&self.reduce(y)));
        let mut z = base;
        for _ in 0..16 {
            z = m.square(&z);
        }
        let ye = U1024::from_le_slice(&mont::to_le_bytes(&m.plain(&m.mul(&z, &base))));
        ye.ct_eq(&self.reduce(x))
    }
}

impl Drop for Prime {
    fn drop(&mut self) {
        self.params.zeroize();
        self.exp.zeroize();
    }
}

/// (b^e, b⁻¹) mod n in Montgomery form for a secret uniform unit b, and how often it has served.
struct Blinding {
    rng: ChaCha20Rng,
    pair: Option<(FullMonty, FullMonty)>,
    uses: u32,
}

/// A private key's CRT numbers, ready for the private operation.
pub(super) struct CrtKey {
    n: FixedMontyParams<FULL_LIMBS>,
    p: Prime,
    q: Prime,
    q_int: U1024,
    /// q⁻¹ mod p in Montgomery form: a Montgomery product with it of a plain integer is plain.
    qinv: HalfMonty,
    blinding: Mutex<Blinding>,
}

impl CrtKey {
    /// From checked numbers: p, q, dp, dq, qi each below 2^1024, p·q = n odd. `blind_seed` seeds the
    /// blinding stream.
    pub(super) fn new(n: &U2048, p: &U1024, q: &U1024, dp: &U1024, dq: &U1024, qi: &U1024, blind_seed: [u8; 32]) -> Option<CrtKey> {
        let n = FixedMontyParams::new(Odd::new(*n).into_option()?);
        let pp = Prime::new(p, dp)?;
        let qq = Prime::new(q, dq)?;
        let qinv = HalfMonty::new(qi, &pp.params);
        let blinding = Blinding { rng: ChaCha20Rng::from_seed(blind_seed), pair: None, uses: 0 };
        Some(CrtKey { n, p: pp, q: qq, q_int: *q, qinv, blinding: Mutex::new(blinding) })
    }

    /// x^d mod n for x < n, checked by x == y^e mod n (a fault in the CRT halves would otherwise
    /// leak a factor of n through the output).
    pub(super) fn private_op(&self, x: &U2048) -> Result<U2048> {
        let (blind, unblind) = self.blinding_pair()?;
        let xb = (FullMonty::new(x, &self.n) * blind).retrieve();
        let yb = self.crt(&xb);
        // y^e ≡ x mod p and mod q is y^e ≡ x mod n (CRT), at a fraction of the cost of working mod n.
        if !bool::from(self.p.checks(&yb, &xb) & self.q.checks(&yb, &xb)) {
            return Err(key_invalid("the private operation failed its check"));
        }
        Ok((FullMonty::new(&yb, &self.n) * unblind).retrieve())
    }

    /// m1 = x^dp mod p, m2 = x^dq mod q, y = m2 + q·((m1 − m2)·qinv mod p), which is below p·q.
    fn crt(&self, x: &U2048) -> U2048 {
        let m1 = self.p.pow(&self.p.reduce(x));
        let m2 = self.q.pow(&self.q.reduce(x));
        // m1 < p; m2 < q < 2^1024 = R, so both have a Montgomery form mod p.
        let diff = HalfMonty::new(&m1, &self.p.params) - HalfMonty::new(&m2, &self.p.params);
        // diff is (m1 − m2)·R: its Montgomery product with qinv (also ·R) is (m1 − m2)·qinv·R.
        let h = (diff * self.qinv).retrieve();
        let (lo, hi) = h.widening_mul(&self.q_int);
        let hq: U2048 = lo.concat(&hi);
        hq.wrapping_add(&m2.resize())
    }

    /// The current pair, then squared for the next operation; a fresh one every `BLIND_USES`.
    fn blinding_pair(&self) -> Result<(FullMonty, FullMonty)> {
        let mut state = self.blinding.lock().map_err(|_| key_invalid("the blinding state is unusable"))?;
        let current = match state.pair {
            Some(pair) if state.uses < BLIND_USES => pair,
            _ => {
                let pair = self.fresh_pair(&mut state.rng)?;
                state.uses = 0;
                pair
            }
        };
        state.pair = Some((current.0.square(), current.1.square()));
        state.uses += 1;
        Ok(current)
    }

    fn fresh_pair(&self, rng: &mut ChaCha20Rng) -> Result<(FullMonty, FullMonty)> {
        let modulus = self.n.modulus();
        let mut buf = Zeroizing::new([0u8; 256]);
        // Each draw is below n with probability over 1/2 and a unit unless it hits a factor of n.
        for _ in 0..256 {
            rng.fill_bytes(&mut *buf);
            let mut b = U2048::from_be_slice(&*buf);
            let usable = b.ct_lt(modulus.as_ref()) & !b.is_zero();
            if bool::from(usable) {
                let inv = b.invert_odd_mod(modulus).into_option();
                if let Some(mut inv) = inv {
                    let bm = FullMonty::new(&b, &self.n);
                    let pair = (bm.pow_bounded_exp(&U2048::from_u32(E), E_BITS), FullMonty::new(&inv, &self.n));
                    b.zeroize();
                    inv.zeroize();
                    return Ok(pair);
                }
            }
            b.zeroize();
        }
        Err(key_invalid("no blinding factor found"))
    }
}

impl Drop for CrtKey {
    fn drop(&mut self) {
        self.q_int.zeroize();
        self.qinv.zeroize();
        if let Ok(mut state) = self.blinding.lock() {
            if let Some((a, b)) = state.pair.as_mut() {
                a.zeroize();
                b.zeroize();
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use rsa::traits::{PrivateKeyParts, PublicKeyParts};

    /// The fault check refuses a result wrong mod p only (the Bellcore fault that would reveal q),
    /// mod q only, or both, and passes the right one.
    #[test]
    fn fault_check_catches_a_wrong_half() {
        let key = rsa::PrivateKey::new(&mut ChaCha20Rng::from_seed([5; 32]), 2048).unwrap();
        let wide = |x: &crypto_bigint::BoxedUint| U2048::from_be_slice(&{
            let b = x.to_be_bytes();
            let mut out = [0u8; 256];
            out[256 - b.len()..].copy_from_slice(&b);
            out
        });
        let half = |x: &crypto_bigint::BoxedUint| -> U1024 { wide(x).resize() };
        let (p, q) = (half(key.primes()[0].as_ref()), half(key.primes()[1].as_ref()));
        let crt = CrtKey::new(&wide(key.n().as_ref()), &p, &q, &half(key.dp().unwrap()), &half(key.dq().unwrap()), &half(&key.crt_coefficient().unwrap()), [1; 32]).unwrap();
        let x = U2048::from_u64(0x1234_5678_9abc_def0).wrapping_mul(&U2048::from_u64(0xfeed_beef_cafe_f00d));
        let y = crt.crt(&x);
        let ok = |y: &U2048| bool::from(crt.p.checks(y, &x) & crt.q.checks(y, &x));
        assert!(ok(&y));
        let (p2, q2): (U2048, U2048) = (p.resize(), q.resize());
        // y + q is y mod q but not mod p; y + p the reverse; y + 1 neither.
        for bad in [y.wrapping_add(&q2), y.wrapping_add(&p2), y.wrapping_add(&U2048::ONE)] {
            assert!(!ok(&bad));
        }
        assert!(!bool::from(crt.p.checks(&y.wrapping_add(&q2), &x)) && bool::from(crt.q.checks(&y.wrapping_add(&q2), &x)));
    }
}
