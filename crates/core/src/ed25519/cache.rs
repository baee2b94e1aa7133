//! Per-key precomputation for strict verification, for the workload sessions have: thousands of
//! signatures checked under the same few peer keys.
//!
//! Verifying under a key seen for the first time costs a field square root to decompress `A`, then
//! the check of `[S]B - [k]A = R`: in `reduced.rs`, a lattice reduction of `k` and about 128
//! doublings with additions (another square root decompresses `R`). With `A` fixed, two things can be
//! kept:
//!
//! - the decompressed point and whether it has small order (every key that has been seen: it saves
//!   the square root on the next use);
//! - once a key has been used often enough (see "When a table is built" below), a window table of
//!   multiples of `A` (and, shared by every key, the same table of the base point `B`), with which
//!   `[S]B - [k]A` is about 100 additions and 5 doublings.
//!
//! All of this is **variable time**: which entries are read, and which additions are skipped, depend on
//! the scalars. That is sound here because everything a verifier handles (key, message, signature) is
//! public; none of this code may be used with a secret scalar.
//!
//! Bounds (see [`VerifyCache::new`]): at most `entries` keys remembered with their decompressed point
//! (about 250 bytes each with its index entry) in a first-in-first-out ring, and at most `tables` keys
//! holding a table ([`TABLE_BYTES`] each, least recently used evicted).
//!
//! # When a table is built
//!
//! Measured on wasm32 (Node 20, this module's own build): a verification under a key seen for the
//! first time takes about 89 µs, under a remembered key 79 µs, with a table 47 µs; the call that
//! builds a table about 310 µs. So building costs about 230 µs more than it saves at once, each later
//! use saves about 32 µs, and a table has paid for itself at its [`PAYBACK_USES`]th use. A table built
//! for a key that is then used only a few more times is a loss, and with more keys in turn than
//! tables, each table is evicted before it pays back.
//!
//! Nothing in one key's history says how often it will be used again, but evicted tables say whether
//! building paid lately, so the threshold adapts:
//!
//! - a key is promoted at its `build_after`th use, which starts at [`BUILD_AFTER_USES`];
//! - a table evicted before its [`PAYBACK_USES`]th use was a loss: `build_after` doubles (at most
//!   [`MAX_BUILD_AFTER_USES`]);
//! - every [`DECAY_CALLS`] verifications it halves again (never below [`BUILD_AFTER_USES`]), so that a
//!   burst of short-lived keys does not keep a later session's keys slow for long.
//!
//! A key seen once (the common case for a verifier of many agents' envelopes) is decompressed, checked
//! and remembered: it never builds or evicts a table, nor moves the threshold. A session's few peer
//! keys, used thousands of times, get their tables at the 4th use while the threshold is at its
//! floor, and a few uses later after a burst raised it.

use super::reduced;
use crate::error::{Error, Result};
use super::point::{AffineNiels, Point, BASEPOINT};
use curve25519_dalek::scalar::Scalar;
use sha2::{Digest, Sha512};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Window width in bits: signed digits in [-16, 16). Measured on wasm32 against 4 bits: about 10%
/// faster verification for a table of 49 KiB instead of 30 KiB (points with Z = 1).
const W: usize = 5;
/// Largest digit magnitude, and the number of multiples kept per table row.
const HALF: usize = 1 << (W - 1);
/// Digits of a scalar below 2^253 (every reduced scalar is below L < 2^253).
const DIGITS: usize = 253_usize.div_ceil(W);
/// Rows: one per even digit position (the odd positions reuse them after multiplying by 2^W).
const ROWS: usize = DIGITS.div_ceil(2);

/// Bytes of one key's table: `ROWS * HALF` points of three field elements (40 bytes each on both the
/// 32-bit and the 64-bit field backends).
pub const TABLE_BYTES: usize = ROWS * HALF * core::mem::size_of::<AffineNiels>();

/// Uses of a key (counting the current one) at which its table is built while tables pay: the initial
/// and lowest value of the adaptive threshold (see the module docs).
pub const BUILD_AFTER_USES: u32 = 4;

/// Uses of a table (the one that built it included) at which it has paid for its building: the first
/// use costs about 230 µs more than without a table, each later one saves about 32 µs (module docs).
pub const PAYBACK_USES: u32 = 9;

/// Highest value of the adaptive threshold: a key used this often in the ring's lifetime is hot
/// whatever the workload.
pub const MAX_BUILD_AFTER_USES: u32 = 1 << 12;

/// Verifications after which a raised threshold halves: about a third of a second of verification on
/// wasm32, so one wasted table (about 230 µs) per period costs well under 1%.
pub const DECAY_CALLS: u64 = 4096;

/// Default bounds of the process-wide cache used by [`super::verify`]: 256 remembered keys (about
/// 64 KiB) and 32 tables (one per participant of the largest group a spec may declare; 32 ×
/// [`TABLE_BYTES`] ≈ 2 MiB, allocated only as keys become hot), plus one table of `B`.
pub const DEFAULT_ENTRIES: usize = 256;
pub const DEFAULT_TABLES: usize = 32;

/// `ROWS` rows of `HALF` points: row `j` holds `m · 2^(2jW) · P` for `m = 1..=HALF`, with Z = 1.
pub struct Table(Box<[AffineNiels]>);

impl Table {
    pub fn new(point: &Point) -> Table {
        let mut t = Vec::with_capacity(ROWS * HALF);
        let mut base = *point;
        for _ in 0..ROWS {
            let step = base.niels();
            let mut m = base;
            t.push(m);
            for _ in 1..HALF {
                m = m.add(&step, false).extended();
                t.push(m);
            }
            // HALF · base = 2^(W-1) · base; the next row starts at 2^(2W) · base.
            base = m.mul_pow2(W as u32 + 1);
        }
        // One inversion for the whole table (about 1% of building it), then a multiplication fewer
        // in each of a verification's hundred additions.
        Table(Point::affine_niels_batch(&t).into_boxed_slice())
    }

    #[inline]
    fn add_digit(&self, acc: &mut Point, row: usize, digit: i8, negate: bool) {
        let m = digit.unsigned_abs() as usize;
        if m == 0 {
            return;
        }
        if let Some(p) = self.0.get(row * HALF + m - 1) {
            *acc = acc.add_affine(p, (digit < 0) != negate).extended();
        }
    }
}

/// Signed radix-2^W digits of a scalar below 2^253, each in [-HALF, HALF), least significant first.
fn digits(s: &Scalar) -> [i8; DIGITS] {
    let b = s.as_bytes();
    let mut out = [0i8; DIGITS];
    let mut carry = 0i32;
    for (i, d) in out.iter_mut().enumerate() {
        let bit = i * W;
        let lo = b.get(bit / 8).copied().unwrap_or(0) as u32;
        let hi = b.get(bit / 8 + 1).copied().unwrap_or(0) as u32;
        let raw = (((hi << 8 | lo) >> (bit % 8)) & ((1 << W) - 1)) as i32 + carry;
        carry = (raw + HALF as i32) >> W;
        *d = (raw - (carry << W)) as i8;
    }
    // A scalar below 2^253 leaves no carry past the top digit (its top digit is at most 1 + 1).
    debug_assert_eq!(carry, 0);
    out
}

fn base_table() -> &'static Table {
    static B: OnceLock<Table> = OnceLock::new();
    B.get_or_init(|| Table::new(&Point::decompress(&BASEPOINT).unwrap_or(Point::IDENTITY)))
}

/// `[s]B - [k]A` with A's table.
fn combine(s: &Scalar, k: &Scalar, a: &Table) -> Point {
    let (sd, kd) = (digits(s), digits(k));
    let b = base_table();
    let mut acc = Point::IDENTITY;
    for i in (1..DIGITS).step_by(2) {
        b.add_digit(&mut acc, i / 2, sd[i], false);
        a.add_digit(&mut acc, i / 2, kd[i], true);
    }
    acc = acc.mul_pow2(W as u32);
    for i in (0..DIGITS).step_by(2) {
        b.add_digit(&mut acc, i / 2, sd[i], false);
        a.add_digit(&mut acc, i / 2, kd[i], true);
    }
    acc
}

/// A verification before its last step (see [`VerifyCache::verify_many`]).
enum Step {
    Done(Result<()>),
    /// Valid exactly when the point's encoding is these bytes (R's).
    Compare(Point, [u8; 32]),
}

fn verdict(valid: bool) -> Result<()> {
    if valid {
        Ok(())
    } else {
        Err(Error::SignatureInvalid)
    }
}

/// What the cache knows of a key.
enum Known {
    Table(Arc<Table>),
    Point { minus_a: Point, weak: bool },
}

struct Remembered {
    key: [u8; 32],
    minus_a: Point,
    weak: bool,
    uses: u32,
}

struct Hot {
    key: [u8; 32],
    table: Arc<Table>,
    last: u64,
    /// Verifications this table served, the one that built it included.
    uses: u32,
}

struct State {
    ring: Vec<Option<Remembered>>,
    next: usize,
    index: BTreeMap<[u8; 32], usize>,
    hot: Vec<Hot>,
    clock: u64,
    /// The adaptive threshold: uses of a key at which its table is built.
    build_after: u32,
}

/// A bounded cache of per-key precomputation for strict verification (see the module docs).
pub struct VerifyCache {
    entries: usize,
    tables: usize,
    state: Mutex<State>,
}

enum Found {
    Known(Known),
    Promote(Point),
    Unknown,
}

impl VerifyCache {
    /// At most `entries` keys remembered with their decompressed point (about 250 bytes each), of
    /// which at most `tables` (each [`TABLE_BYTES`]) hold a window table. `entries = 0` remembers
    /// nothing; `tables = 0` builds no table.
    pub const fn new(entries: usize, tables: usize) -> VerifyCache {
        VerifyCache {
            entries,
            tables,
            state: Mutex::new(State {
                ring: Vec::new(),
                next: 0,
                index: BTreeMap::new(),
                hot: Vec::new(),
                clock: 0,
                build_after: BUILD_AFTER_USES,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while the lock is held; a poisoned lock still holds consistent state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn find(&self, key: &[u8; 32]) -> Found {
        let mut st = self.lock();
        st.clock += 1;
        let now = st.clock;
        // `is_multiple_of` is newer (1.87) than the workspace's rust-version (1.85).
        #[allow(clippy::manual_is_multiple_of)]
        if now % DECAY_CALLS == 0 {
            st.build_after = (st.build_after / 2).max(BUILD_AFTER_USES);
        }
        if let Some(h) = st.hot.iter_mut().find(|h| h.key == *key) {
            h.last = now;
            h.uses = h.uses.saturating_add(1);
            return Found::Known(Known::Table(h.table.clone()));
        }
        let build_after = st.build_after;
        let Some(&at) = st.index.get(key) else { return Found::Unknown };
        let Some(Some(r)) = st.ring.get_mut(at) else { return Found::Unknown };
        r.uses = r.uses.saturating_add(1);
        let (minus_a, weak, uses) = (r.minus_a, r.weak, r.uses);
        if !weak && self.tables > 0 && uses >= build_after {
            st.index.remove(key);
            if let Some(slot) = st.ring.get_mut(at) {
                *slot = None;
            }
            return Found::Promote(minus_a);
        }
        Found::Known(Known::Point { minus_a, weak })
    }

    fn remember(&self, key: [u8; 32], minus_a: Point, weak: bool) {
        if self.entries == 0 {
            return;
        }
        let mut st = self.lock();
        if st.index.contains_key(&key) || st.hot.iter().any(|h| h.key == key) {
            return;
        }
        let at = st.next;
        st.next = (at + 1) % self.entries;
        if st.ring.len() < self.entries {
            st.ring.push(None);
        }
        let entry = Some(Remembered { key, minus_a, weak, uses: 1 });
        let Some(slot) = st.ring.get_mut(at) else { return };
        let old = core::mem::replace(slot, entry);
        if let Some(old) = old {
            st.index.remove(&old.key);
        }
        st.index.insert(key, at);
    }

    fn keep_table(&self, key: [u8; 32], table: Arc<Table>) {
        let mut st = self.lock();
        let now = st.clock;
        if st.hot.iter().any(|h| h.key == key) {
            return;
        }
        if st.hot.len() >= self.tables {
            // The least recently used table goes; its key starts over as unknown.
            let lru = st.hot.iter().enumerate().min_by_key(|(_, h)| h.last).map(|(i, _)| i);
            if let Some(i) = lru {
                let gone = st.hot.swap_remove(i);
                if gone.uses < PAYBACK_USES {
                    // It cost more than it saved: build less eagerly until tables pay again.
                    st.build_after = st.build_after.saturating_mul(2).min(MAX_BUILD_AFTER_USES);
                }
            }
        }
        st.hot.push(Hot { key, table, last: now, uses: 1 });
    }

    /// The key's precomputation, decompressing (and remembering) it if it is not known.
    fn known(&self, key: &[u8; 32]) -> Result<Known> {
        match self.find(key) {
            Found::Known(k) => Ok(k),
            Found::Promote(minus_a) => {
                let table = Arc::new(Table::new(&minus_a.neg()));
                self.keep_table(*key, table.clone());
                Ok(Known::Table(table))
            }
            Found::Unknown => {
                let a = Point::decompress(key).ok_or(Error::PublicKeyInvalid)?;
                // The encoding is canonical (checked by the caller), so A has small order exactly when
                // it is one of the eight canonical small-order encodings: no multiplication by 8.
                let (minus_a, weak) = (a.neg(), super::SMALL_ORDER_ENCODINGS.contains(key));
                self.remember(*key, minus_a, weak);
                Ok(Known::Point { minus_a, weak })
            }
        }
    }

    /// [`super::verify`]'s policy, with this cache. Same results, same errors.
    pub fn verify(&self, public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<()> {
        match self.step(public_key, message, signature) {
            Step::Done(verdict) => verdict,
            Step::Compare(p, r) => verdict(p.compress() == r),
        }
    }

    /// [`VerifyCache::verify`] of each item, in order, with one field inversion for all the items
    /// whose keys hold a table (see [`Point::compress_batch`]) instead of one each: the same results
    /// as one call per item.
    pub fn verify_many(&self, items: &[super::Item<'_>]) -> Vec<Result<()>> {
        let steps: Vec<Step> = items.iter().map(|it| self.step(it.public_key, it.message, it.signature)).collect();
        let points: Vec<Point> = steps.iter().filter_map(|s| if let Step::Compare(p, _) = s { Some(*p) } else { None }).collect();
        let mut encodings = Point::compress_batch(&points).into_iter();
        steps
            .into_iter()
            .map(|s| match s {
                Step::Done(verdict) => verdict,
                Step::Compare(_, r) => verdict(encodings.next() == Some(r)),
            })
            .collect()
    }

    /// Everything but the last step of a verification: the policy's refusals, and the equation
    /// decided, or, for a key with a table, the point whose encoding must be `R`'s bytes.
    fn step(&self, public_key: &[u8], message: &[u8], signature: &[u8]) -> Step {
        match self.try_step(public_key, message, signature) {
            Ok(step) => step,
            Err(e) => Step::Done(Err(e)),
        }
    }

    fn try_step(&self, public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<Step> {
        let (pk, sig) = super::sized(public_key, signature)?;
        if super::is_non_canonical(&pk) {
            return Err(Error::PublicKeyInvalid);
        }
        let known = self.known(&pk)?;
        let (r, s) = sig.split_at(32);
        let r: [u8; 32] = r.try_into().map_err(|_| Error::SignatureInvalid)?;
        let s: [u8; 32] = s.try_into().map_err(|_| Error::SignatureInvalid)?;
        let weak = matches!(known, Known::Point { weak: true, .. });
        if super::is_non_canonical(&r) || super::SMALL_ORDER_ENCODINGS.contains(&r) || weak {
            return Err(Error::SignatureInvalid);
        }
        let s = Option::<Scalar>::from(Scalar::from_canonical_bytes(s)).ok_or(Error::SignatureInvalid)?;
        let mut h = Sha512::new();
        h.update(r);
        h.update(pk);
        h.update(message);
        let k = Scalar::from_bytes_mod_order_wide(&h.finalize().into());
        // Cofactorless: the encoding of [S]B - [k]A must be R's bytes exactly.
        Ok(match known {
            Known::Table(t) => Step::Compare(combine(&s, &k, &t), r),
            Known::Point { minus_a, .. } => Step::Done(verdict(reduced::verify(&minus_a, &s, &k, &r))),
        })
    }

    /// Whether `public_key` currently holds a table (for tests and diagnostics).
    pub fn has_table(&self, public_key: &[u8; 32]) -> bool {
        self.lock().hot.iter().any(|h| h.key == *public_key)
    }

    /// Uses of a key at which its table is built now: [`BUILD_AFTER_USES`] while tables pay, more
    /// after tables were evicted before paying back (for tests and diagnostics).
    pub fn build_after(&self) -> u32 {
        self.lock().build_after
    }

    /// (remembered keys, keys with a table).
    pub fn len(&self) -> (usize, usize) {
        let st = self.lock();
        (st.index.len(), st.hot.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == (0, 0)
    }

    /// Forgets every key.
    pub fn clear(&self) {
        let mut st = self.lock();
        st.ring.clear();
        st.index.clear();
        st.hot.clear();
        st.next = 0;
        st.build_after = BUILD_AFTER_USES;
    }
}

/// The cache behind [`super::verify`].
pub static GLOBAL: VerifyCache = VerifyCache::new(DEFAULT_ENTRIES, DEFAULT_TABLES);

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::edwards::EdwardsPoint;

    #[test]
    fn digits_recompose() {
        for seed in 0u8..50 {
            let s = Scalar::from_bytes_mod_order_wide(&[seed.wrapping_mul(37).wrapping_add(1); 64]);
            let d = digits(&s);
            let mut acc = Scalar::ZERO;
            for &x in d.iter().rev() {
                acc *= Scalar::from(1u8 << W);
                acc += if x < 0 { -Scalar::from(x.unsigned_abs()) } else { Scalar::from(x as u8) };
                assert!((-(HALF as i8)..HALF as i8).contains(&x));
            }
            assert_eq!(acc, s);
        }
        let minus_one = -Scalar::ONE;
        let d = digits(&minus_one);
        assert!(d.iter().all(|x| x.unsigned_abs() as usize <= HALF));
    }

    #[test]
    fn table_mul_matches_dalek() {
        let a = EdwardsPoint::mul_base(&Scalar::from(123456789u64));
        let t = Table::new(&Point::decompress(&a.compress().to_bytes()).expect("decodes"));
        for i in 0u8..20 {
            let s = Scalar::from_bytes_mod_order_wide(&[i; 64]);
            let k = Scalar::from_bytes_mod_order_wide(&[i.wrapping_add(99); 64]);
            let want = EdwardsPoint::vartime_double_scalar_mul_basepoint(&k, &-a, &s);
            assert_eq!(combine(&s, &k, &t).compress(), want.compress().to_bytes());
        }
    }
}
