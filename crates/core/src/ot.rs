//! Blind-RSA token oblivious transfer for mental poker, as the reference defines it (engine/ot.py).
//!
//! A Sender with a per-game RSA-2048 key (e = 65537) seals each label's payload under a key derived
//! from token = FDH(context)^d mod n. A Receiver obtains one token without revealing which label:
//! it sends z = FDH(context)·r^e, gets y = z^d and computes token = y·r⁻¹. After the game, tokens and
//! witnesses (label, r) are disclosed and checked with the public key alone.
//!
//! The arithmetic is RustCrypto's `crypto-bigint` (constant-time Montgomery arithmetic): heap-backed
//! for the public-key side, fixed-width for the private operation (`crt`: CRT over the two 1024-bit
//! primes, blinded, with a fault check). Keys are imported, never generated here: the platform's
//! generator (WebCrypto) is as fast or faster, and a generator would weigh on the WASM binary. Nothing
//! here draws randomness: nonces and r are the caller's, and the blinding stream is seeded by a
//! per-key secret the caller draws.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::aead::{self, Cipher, KEY_LEN, NONCE_LEN};
use crate::error::{fixed, Error, Result};
use crypto_bigint::modular::{BoxedMontyForm, BoxedMontyParams};
use crypto_bigint::{BoxedUint, NonZero, Odd, U1024, U2048};
use hkdf::Hkdf;
use sha2::{Digest, Sha256};
use zeroize::{Zeroize, Zeroizing};

mod crt;
mod mont;

/// Bytes of a 2048-bit integer (the wire's 512 hex characters).
pub const RSA_BYTES: usize = 256;
pub const RSA_BITS: u32 = 2048;
pub const RSA_E: u64 = 65537;
pub const ROLE_HOST: u8 = 1;
pub const ROLE_GUEST: u8 = 2;
pub const PAYLOAD_K_INNER: u8 = 1;
pub const PAYLOAD_K_OUTER: u8 = 2;
pub const TOKEN_KEY_LEN: usize = 32;

const CONTEXT_MAGIC: &[u8] = b"aigenora.mp.v1";
const TOKEN_KEY_INFO: &[u8] = b"aigenora.mp.tokenkey.v1";
const E_BITS: u32 = 17;

pub type Int = [u8; RSA_BYTES];

fn push_str(out: &mut Vec<u8>, s: &str) {
    // Strings of the context are labels and ids; a length beyond u32 cannot be built on our targets,
    // and saturating keeps this total rather than panicking.
    out.extend_from_slice(&u32::try_from(s.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// `aigenora.mp.v1` ‖ u32be(len) protocol_id ‖ u32be(len) session_id ‖ role ‖ type ‖ u32be(len) label.
/// The role and the payload type must each be 1 or 2.
pub fn context(protocol_id: &str, session_id: &str, sender_role: u8, payload_type: u8, label: &str) -> Result<Vec<u8>> {
    if !matches!(sender_role, ROLE_HOST | ROLE_GUEST) {
        return Err(Error::OtContextInvalid("sender role"));
    }
    if !matches!(payload_type, PAYLOAD_K_INNER | PAYLOAD_K_OUTER) {
        return Err(Error::OtContextInvalid("payload type"));
    }
    let mut out = Vec::with_capacity(CONTEXT_MAGIC.len() + 14 + protocol_id.len() + session_id.len() + label.len());
    out.extend_from_slice(CONTEXT_MAGIC);
    push_str(&mut out, protocol_id);
    push_str(&mut out, session_id);
    out.push(sender_role);
    out.push(payload_type);
    push_str(&mut out, label);
    Ok(out)
}

/// Bit length of a big-endian integer.
fn bit_len(bytes: &[u8]) -> usize {
    match bytes.iter().position(|&b| b != 0) {
        Some(i) => (bytes.len() - i) * 8 - bytes.get(i).map_or(0, |b| b.leading_zeros() as usize),
        None => 0,
    }
}

fn odd_modulus_message() -> String {
    "RSA modulus must be an odd integer > 1".to_owned()
}

/// A checked RSA-2048 modulus with its Montgomery parameters.
#[derive(Clone, Debug)]
pub struct Modulus {
    n: Odd<BoxedUint>,
    params: BoxedMontyParams,
    bytes: Int,
    /// n at crypto-bigint's fixed width, whose gcd and inversion are about twice as fast as the
    /// heap-backed ones.
    fixed: Odd<U2048>,
}

impl Modulus {
    /// 256 big-endian bytes, exactly 2048 bits, odd.
    pub fn from_bytes(bytes: &[u8]) -> Result<Modulus> {
        let b: Int = bytes
            .try_into()
            .map_err(|_| Error::OtModulusInvalid(format!("RSA modulus must be {RSA_BYTES} bytes, got {}", bytes.len())))?;
        let bits = bit_len(&b);
        if bits != RSA_BITS as usize {
            return Err(Error::OtModulusInvalid(format!("RSA modulus must be 2048-bit, got {bits}")));
        }
        let odd = BoxedUint::from_be_slice(&b, RSA_BITS).ok().and_then(|x| Odd::new(x).into_option());
        let n = odd.ok_or_else(|| Error::OtModulusInvalid(odd_modulus_message()))?;
        let fixed = Odd::new(U2048::from_be_slice(&b)).into_option().ok_or_else(|| Error::OtModulusInvalid(odd_modulus_message()))?;
        Ok(Modulus { params: BoxedMontyParams::new(n.clone()), n, bytes: b, fixed })
    }

    pub fn bytes(&self) -> &Int {
        &self.bytes
    }

    fn n(&self) -> &BoxedUint {
        self.n.as_ref()
    }

    /// A value of any width, or `None` unless it is below n.
    fn below_n(&self, bytes: &[u8]) -> Option<BoxedUint> {
        let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
        let significant = bytes.get(start..)?;
        let pad = RSA_BYTES.checked_sub(significant.len())?;
        let mut buf = [0u8; RSA_BYTES];
        buf.get_mut(pad..)?.copy_from_slice(significant);
        let x = BoxedUint::from_be_slice(&buf, RSA_BITS).ok()?;
        (x < *self.n()).then_some(x)
    }

    /// An operand of an operation: exactly 256 bytes (`Length`) and below n (`OtIntRange`).
    fn operand(&self, what: &'static str, bytes: &[u8]) -> Result<BoxedUint> {
        let _: Int = fixed(what, bytes)?;
        self.below_n(bytes).ok_or(Error::OtIntRange(what))
    }

    /// r for blinding: 256 bytes, 1 ≤ r < n, and a unit mod n.
    fn unit(&self, r: &[u8]) -> Result<BoxedUint> {
        let r = self.operand("r", r)?;
        if r.is_zero().into() {
            return Err(Error::OtIntRange("r"));
        }
        if !self.is_unit(&r) {
            return Err(Error::OtNotUnit);
        }
        Ok(r)
    }

    /// gcd(x, n) = 1, in constant time (x may be a secret blinding value).
    fn is_unit(&self, x: &BoxedUint) -> bool {
        U2048::from_be_slice(&to_int(x)).gcd(self.fixed.as_ref()) == U2048::ONE
    }

    /// gcd(x, n) = 1 for a public x, in variable time.
    fn is_unit_vartime(&self, x: &BoxedUint) -> bool {
        U2048::from_be_slice(&to_int(x)).gcd_vartime(self.fixed.as_ref()) == U2048::ONE
    }

    /// x⁻¹ mod n in Montgomery form, in constant time; `None` unless gcd(x, n) = 1.
    fn invert(&self, x: &BoxedUint) -> Option<BoxedMontyForm> {
        let inv = U2048::from_be_slice(&to_int(x)).invert_odd_mod(&self.fixed).into_option()?;
        let inv = BoxedUint::from_be_slice(&inv.to_be_bytes(), RSA_BITS).ok()?;
        Some(self.monty(inv))
    }

    fn monty(&self, x: BoxedUint) -> BoxedMontyForm {
        BoxedMontyForm::new(x, &self.params)
    }

    fn pow_e(&self, x: &BoxedUint) -> BoxedMontyForm {
        self.monty(x.clone()).pow_bounded_exp(&BoxedUint::from(RSA_E), E_BITS)
    }
}

/// The low `width` bytes of x, big-endian. Every value passed here is below n (or below p for the
/// CRT numbers), so nothing significant is cut whatever the storage width.
fn to_width(x: &BoxedUint, width: usize) -> Vec<u8> {
    let bytes = x.to_be_bytes();
    let mut out = vec![0u8; width];
    let take = bytes.len().min(width);
    if let (Some(dst), Some(src)) = (out.get_mut(width - take..), bytes.get(bytes.len() - take..)) {
        dst.copy_from_slice(src);
    }
    out
}

fn to_int(x: &BoxedUint) -> Int {
    let mut out = [0u8; RSA_BYTES];
    out.copy_from_slice(&to_width(x, RSA_BYTES));
    out
}

/// MGF1-SHA256 of `seed`, 256 bytes.
fn mgf1(seed: &[u8]) -> Int {
    let mut out = [0u8; RSA_BYTES];
    for (i, chunk) in (0u32..).zip(out.chunks_exact_mut(32)) {
        chunk.copy_from_slice(&Sha256::new().chain_update(seed).chain_update(i.to_be_bytes()).finalize());
    }
    out
}

/// FDH candidate `counter`: MGF1-SHA256(context ‖ u32be(counter)), before any check.
pub fn fdh_candidate(context: &[u8], counter: u32) -> Int {
    let mut seed = Vec::with_capacity(context.len() + 4);
    seed.extend_from_slice(context);
    seed.extend_from_slice(&counter.to_be_bytes());
    mgf1(&seed)
}

fn fdh_int(m: &Modulus, context: &[u8]) -> Result<(BoxedUint, u32)> {
    for counter in 0..=u32::MAX {
        let c = fdh_candidate(context, counter);
        if let Some(h) = m.below_n(&c) {
            // h is public (anyone can compute it), so the variable-time gcd is fine.
            if !bool::from(h.is_zero()) && m.is_unit_vartime(&h) {
                return Ok((h, counter));
            }
        }
    }
    Err(Error::OtFdhExhausted)
}

/// The first candidate h with 0 < h < n and gcd(h, n) = 1, and its counter.
pub fn fdh(m: &Modulus, context: &[u8]) -> Result<(Int, u32)> {
    fdh_int(m, context).map(|(h, c)| (to_int(&h), c))
}

/// HKDF-SHA256 (no salt, info `aigenora.mp.tokenkey.v1`) of I2OSP(token, 256) ‖ context.
pub fn token_key(token: &[u8], context: &[u8]) -> Result<[u8; TOKEN_KEY_LEN]> {
    let token: Int = fixed("token", token)?;
    let mut ikm = Zeroizing::new(Vec::with_capacity(RSA_BYTES + context.len()));
    ikm.extend_from_slice(&token);
    ikm.extend_from_slice(context);
    let mut okm = [0u8; TOKEN_KEY_LEN];
    // 32 bytes is far below HKDF-SHA256's 8160-byte limit.
    Hkdf::<Sha256>::new(None, &ikm)
        .expand(TOKEN_KEY_INFO, &mut okm)
        .map_err(|_| Error::Length("HKDF output", TOKEN_KEY_LEN, TOKEN_KEY_LEN))?;
    Ok(okm)
}

/// nonce ‖ ChaCha20-Poly1305(key, payload, AAD = context).
pub fn seal_payload(key: &[u8], nonce: &[u8], payload: &[u8], context: &[u8]) -> Result<Vec<u8>> {
    let _: [u8; KEY_LEN] = fixed("token key", key)?;
    let n: [u8; NONCE_LEN] = fixed("sealed payload nonce", nonce)?;
    let mut out = Vec::with_capacity(NONCE_LEN + payload.len() + aead::TAG_LEN);
    out.extend_from_slice(&n);
    out.extend_from_slice(&aead::seal(Cipher::ChaCha20Poly1305, key, &n, payload, context)?);
    Ok(out)
}

/// The payload of nonce ‖ ciphertext; `AeadOpenFailed` for anything that does not authenticate,
/// including sealed bytes too short for a nonce and a tag (the reference fails those the same way).
pub fn open_payload(key: &[u8], sealed: &[u8], context: &[u8]) -> Result<Vec<u8>> {
    let _: [u8; KEY_LEN] = fixed("token key", key)?;
    if sealed.len() < NONCE_LEN + aead::TAG_LEN {
        return Err(Error::AeadOpenFailed);
    }
    let (nonce, ct) = sealed.split_at(NONCE_LEN);
    aead::open(Cipher::ChaCha20Poly1305, key, nonce, ct, context)
}

/// `open_payload(token_key(token, context), sealed, context)`.
pub fn open_sealed(token: &[u8], context: &[u8], sealed: &[u8]) -> Result<Vec<u8>> {
    let key = Zeroizing::new(token_key(token, context)?);
    open_payload(&*key, sealed, context)
}

/// Whether r (256 bytes) is a valid blinding value: 1 ≤ r < n and gcd(r, n) = 1.
pub fn is_unit(m: &Modulus, r: &[u8]) -> bool {
    m.unit(r).is_ok()
}

/// z = FDH(context)·r^e mod n.
pub fn blind(m: &Modulus, context: &[u8], r: &[u8]) -> Result<Int> {
    let r = m.unit(r)?;
    let (h, _) = fdh_int(m, context)?;
    Ok(to_int(&(m.monty(h) * m.pow_e(&r)).retrieve()))
}

/// token = y·r⁻¹ mod n.
pub fn unblind(m: &Modulus, y: &[u8], r: &[u8]) -> Result<Int> {
    let y = m.operand("y", y)?;
    let r = m.operand("r", r)?;
    if r.is_zero().into() {
        return Err(Error::OtIntRange("r"));
    }
    // The inversion fails exactly when gcd(r, n) ≠ 1, so it doubles as the unit check.
    let r_inv = m.invert(&r).ok_or(Error::OtNotUnit)?;
    Ok(to_int(&(m.monty(y) * r_inv).retrieve()))
}

/// The post-game witness check: 1 ≤ r < n, gcd(r, n) = 1 and z == FDH(context)·r^e mod n. z and r may
/// have any width; out of range is false.
pub fn check_witness(m: &Modulus, context: &[u8], z: &[u8], r: &[u8]) -> Result<bool> {
    let (h, _) = fdh_int(m, context)?;
    let Some(r) = m.below_n(r).filter(|r| !bool::from(r.is_zero()) && m.is_unit(r)) else {
        return Ok(false);
    };
    let Some(z) = m.below_n(z) else {
        return Ok(false);
    };
    Ok((m.monty(h) * m.pow_e(&r)).retrieve() == z)
}

/// The token check: 1 ≤ token < n and token^e ≡ FDH(context) mod n. Any width; out of range is false.
pub fn check_token(m: &Modulus, context: &[u8], token: &[u8]) -> Result<bool> {
    let Some(t) = m.below_n(token).filter(|t| !bool::from(t.is_zero())) else {
        return Ok(false);
    };
    let (h, _) = fdh_int(m, context)?;
    Ok(m.pow_e(&t).retrieve() == h)
}

fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        for nibble in [b >> 4, b & 15] {
            s.push(char::from(DIGITS.get(usize::from(nibble)).copied().unwrap_or(b'0')));
        }
    }
    s
}

/// The wire `rsa_pub`: `{"e":65537,"n":"<512 lowercase hex>"}`.
pub fn encode_rsa_pub(m: &Modulus) -> String {
    format!(r#"{{"e":65537,"n":"{}"}}"#, lower_hex(&m.bytes))
}

fn malformed(m: &str) -> Error {
    Error::OtRsaPubMalformed(m.to_owned())
}

/// Whether e is 65537, and e as the reference's message shows it.
fn rsa_pub_exponent(v: &serde_json::Value) -> Result<(bool, String)> {
    use serde_json::Value;
    match v {
        Value::Number(x) => {
            if let Some(u) = x.as_u64() {
                Ok((u == RSA_E, u.to_string()))
            } else if let Some(i) = x.as_i64() {
                Ok((false, i.to_string()))
            } else {
                match x.as_f64() {
                    // An integral double (65537.0, 6.5537e4): the reference's int() takes it.
                    Some(f) if f.is_finite() && f.fract() == 0.0 => Ok((f == RSA_E as f64, format!("{f:.0}"))),
                    _ => Err(malformed("rsa_pub e must be an integer")),
                }
            }
        }
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            let digits = s.trim_start_matches('0');
            let shown = if digits.is_empty() { "0" } else { digits };
            Ok((shown == "65537", shown.to_owned()))
        }
        _ => Err(malformed("rsa_pub e must be the number 65537 or the string \"65537\"")),
    }
}

/// Decodes the wire `rsa_pub` (JSON text). Accepted as the reference does: e as the number 65537 (an
/// integral double too) or a decimal string of it, n as hex digits of either case, padded or not.
/// Refused where the reference is looser: other keys, other spellings of e, anything but hex digits
/// in n (`OtRsaPubMalformed`). Then, in the reference's order, e ≠ 65537 (`OtRsaPubExponent`), n not
/// exactly 2048 bits, n even (`OtModulusInvalid`, the reference's messages).
pub fn decode_rsa_pub(text: &str) -> Result<Modulus> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::OtRsaPubMalformed(format!("rsa_pub is not JSON: {e}")))?;
    let obj = v.as_object().ok_or_else(|| malformed("rsa_pub must be a JSON object"))?;
    let (Some(e), Some(n), 2) = (obj.get("e"), obj.get("n"), obj.len()) else {
        return Err(malformed("rsa_pub must have exactly the keys e and n"));
    };
    let (e_ok, e_shown) = rsa_pub_exponent(e)?;
    let n_hex = n.as_str().filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()));
    let n_hex = n_hex.ok_or_else(|| malformed("rsa_pub n must be a string of hex digits"))?;
    if !e_ok {
        return Err(Error::OtRsaPubExponent(e_shown));
    }
    let digits = n_hex.trim_start_matches('0').as_bytes();
    let first = digits.first().map_or(0, |&d| hex_value(d));
    let bits = if digits.is_empty() { 0 } else { 4 * (digits.len() - 1) + (8 - first.leading_zeros() as usize) };
    if bits != RSA_BITS as usize {
        return Err(Error::OtModulusInvalid(format!("RSA modulus must be 2048-bit, got {bits}")));
    }
    let mut bytes = [0u8; RSA_BYTES];
    // 2048 bits is 512 digits, the first non-zero: pair them into bytes.
    for (b, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
        if let [hi, lo] = pair {
            *b = hex_value(*hi) << 4 | hex_value(*lo);
        }
    }
    Modulus::from_bytes(&bytes)
}

fn hex_value(d: u8) -> u8 {
    match d {
        b'0'..=b'9' => d - b'0',
        b'a'..=b'f' => d - b'a' + 10,
        b'A'..=b'F' => d - b'A' + 10,
        _ => 0,
    }
}

/// The numbers of a private key, big-endian, any width (leading zeros allowed).
pub struct KeyParts<'a> {
    pub n: &'a [u8],
    pub e: u64,
    pub d: &'a [u8],
    pub p: &'a [u8],
    pub q: &'a [u8],
    pub dp: &'a [u8],
    pub dq: &'a [u8],
    pub qi: &'a [u8],
}

/// Bytes of each prime and of the CRT numbers of a 2048-bit key.
pub const PRIME_BYTES: usize = RSA_BYTES / 2;

/// The same numbers, owned: n and d 256 bytes, the others 128.
pub struct KeyNumbers {
    pub n: Vec<u8>,
    pub d: Vec<u8>,
    pub p: Vec<u8>,
    pub q: Vec<u8>,
    pub dp: Vec<u8>,
    pub dq: Vec<u8>,
    pub qi: Vec<u8>,
}

fn trimmed(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    b.get(start..).unwrap_or_default()
}

fn key_invalid(m: impl Into<String>) -> Error {
    Error::OtKeyInvalid(m.into())
}

/// A big-endian number of at most 256 significant bytes as a U2048.
fn wide_int(what: &str, b: &[u8]) -> Result<U2048> {
    let b = trimmed(b);
    let pad = RSA_BYTES.checked_sub(b.len()).ok_or_else(|| key_invalid(format!("{what} is wider than n")))?;
    let mut buf = Zeroizing::new([0u8; RSA_BYTES]);
    buf.get_mut(pad..).ok_or_else(|| key_invalid(what.to_owned()))?.copy_from_slice(b);
    Ok(U2048::from_be_slice(&*buf))
}

/// x mod m for m > 0, in constant time.
fn rem(x: &U2048, m: &U2048) -> Option<U2048> {
    let m = NonZero::new(*m).into_option()?;
    Some(x.rem(&m))
}

/// The secret numbers, kept for export; zeroized on drop.
struct Secret {
    d: U2048,
    p: U1024,
    q: U1024,
    dp: U1024,
    dq: U1024,
    qi: U1024,
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.d.zeroize();
        for x in [&mut self.p, &mut self.q, &mut self.dp, &mut self.dq, &mut self.qi] {
            x.zeroize();
        }
    }
}

/// A Sender's RSA-2048 private key (e = 65537), imported from its numbers (keys are made by the
/// platform's generator), with its CRT form for the private operation. Zeroized on drop.
pub struct PrivateKey {
    modulus: Modulus,
    secret: Secret,
    crt: crt::CrtKey,
}

impl core::fmt::Debug for PrivateKey {
    /// The modulus only: the secret numbers never reach a log.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "PrivateKey {{ n: {} }}", lower_hex(&self.modulus.bytes))
    }
}

impl PrivateKey {
    /// A key from its numbers; `blind_secret` (32 bytes from a CSPRNG) seeds the blinding. Refused
    /// (`OtKeyInvalid`) unless e = 65537, n is a 2048-bit odd modulus, p and q are odd, distinct and
    /// p·q = n, d < n, d·e ≡ 1 mod p−1 and q−1, and dp, dq, qi are d mod p−1, d mod q−1 and q⁻¹ mod p;
    /// a trial private operation is checked.
    pub fn from_parts(parts: &KeyParts<'_>, blind_secret: &[u8]) -> Result<PrivateKey> {
        let seed: [u8; 32] = fixed("blinding secret", blind_secret)?;
        if parts.e != RSA_E {
            return Err(key_invalid(format!("e must be 65537, got {}", parts.e)));
        }
        let n_bytes = trimmed(parts.n);
        let mut n = [0u8; RSA_BYTES];
        let pad = RSA_BYTES.checked_sub(n_bytes.len()).ok_or_else(|| key_invalid("n is wider than 2048 bits"))?;
        n.get_mut(pad..).ok_or_else(|| key_invalid("n"))?.copy_from_slice(n_bytes);
        let modulus = Modulus::from_bytes(&n).map_err(|e| key_invalid(e.to_string()))?;
        let (d, p, q) = (wide_int("d", parts.d)?, wide_int("p", parts.p)?, wide_int("q", parts.q)?);
        let bad = |why: &str| key_invalid(format!("the numbers do not make an RSA key: {why}"));
        let two = U2048::from_u8(2);
        let (p_odd, q_odd) = (bool::from(p.is_odd()), bool::from(q.is_odd()));
        if p < two || q < two || p == q || !p_odd || !q_odd {
            return Err(bad("invalid prime"));
        }
        let (lo, hi) = p.widening_mul(&q);
        if !bool::from(hi.is_zero()) || lo != *modulus.fixed.as_ref() {
            return Err(bad("invalid modulus"));
        }
        if p.bit_width() > RSA_BITS / 2 || q.bit_width() > RSA_BITS / 2 {
            return Err(bad("invalid prime"));
        }
        if d >= *modulus.fixed.as_ref() {
            return Err(bad("invalid exponent"));
        }
        let e = U2048::from_u64(RSA_E);
        let (p1, q1) = (p.wrapping_sub(&U2048::ONE), q.wrapping_sub(&U2048::ONE));
        let crt_exp = |m: &U2048| -> Result<U2048> {
            let x = rem(&d, m).ok_or_else(|| bad("invalid prime"))?;
            // x < 2^1024, so x·e does not wrap.
            match rem(&x.wrapping_mul(&e), m) {
                Some(one) if one == U2048::ONE => Ok(x),
                _ => Err(bad("invalid exponent")),
            }
        };
        let (dp, dq) = (crt_exp(&p1)?, crt_exp(&q1)?);
        let half = |x: &U2048| -> U1024 { x.resize() };
        let (p, q, dp, dq) = (half(&p), half(&q), half(&dp), half(&dq));
        let p_mod = Odd::new(p).into_option().ok_or_else(|| bad("invalid prime"))?;
        let qi = q.invert_odd_mod(&p_mod).into_option().unwrap_or(U1024::ZERO);
        let same = |what: &str, want: &U1024, got: &[u8]| -> Result<()> {
            let want = want.to_be_bytes();
            if trimmed(want.as_ref()) == trimmed(got) {
                Ok(())
            } else {
                Err(key_invalid(format!("{what} does not match p, q and d")))
            }
        };
        same("dp", &dp, parts.dp)?;
        same("dq", &dq, parts.dq)?;
        same("qi", &qi, parts.qi)?;
        let crt = crt::CrtKey::new(modulus.fixed.as_ref(), &p, &q, &dp, &dq, &qi, seed).ok_or_else(|| bad("invalid prime"))?;
        let k = PrivateKey { modulus, secret: Secret { d, p, q, dp, dq, qi }, crt };
        let mut two = [0u8; RSA_BYTES];
        if let Some(last) = two.last_mut() {
            *last = 2;
        }
        k.private_op(&two).map_err(|_| key_invalid("a trial private operation failed"))?;
        Ok(k)
    }

    pub fn modulus(&self) -> &Modulus {
        &self.modulus
    }

    /// x^d mod n for 256-byte x below n: CRT over constant-time fixed-width Montgomery
    /// exponentiation, with the input blinded and the result checked by the public operation
    /// (see `crt` for what is constant-time).
    pub fn private_op(&self, x: &[u8]) -> Result<Int> {
        let _: Int = fixed("x", x)?;
        let c = U2048::from_be_slice(x);
        if c >= *self.modulus.fixed.as_ref() {
            return Err(Error::OtIntRange("x"));
        }
        let y = self.crt.private_op(&c)?;
        let mut out = [0u8; RSA_BYTES];
        out.copy_from_slice(y.to_be_bytes().as_ref());
        Ok(out)
    }

    /// A label's token: FDH(context)^d mod n.
    pub fn token(&self, context: &[u8]) -> Result<Int> {
        let (h, _) = fdh(&self.modulus, context)?;
        self.private_op(&h)
    }

    /// One sealed-table entry: the token and nonce ‖ AEAD(token_key(token, context), payload, context).
    pub fn seal_label(&self, context: &[u8], payload: &[u8], nonce: &[u8]) -> Result<(Int, Vec<u8>)> {
        let _: [u8; NONCE_LEN] = fixed("sealed payload nonce", nonce)?;
        let token = self.token(context)?;
        let key = Zeroizing::new(token_key(&token, context)?);
        Ok((token, seal_payload(&*key, nonce, payload, context)?))
    }

    /// The key's numbers (secret), each at its fixed width.
    pub fn numbers(&self) -> KeyNumbers {
        let s = &self.secret;
        let half = |x: &U1024| x.to_be_bytes().as_ref().to_vec();
        KeyNumbers {
            n: self.modulus.bytes.to_vec(),
            d: s.d.to_be_bytes().as_ref().to_vec(),
            p: half(&s.p),
            q: half(&s.q),
            dp: half(&s.dp),
            dq: half(&s.dq),
            qi: half(&s.qi),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_lengths() {
        assert_eq!(bit_len(&[0, 0]), 0);
        assert_eq!(bit_len(&[0, 1]), 1);
        assert_eq!(bit_len(&[0x80, 0]), 16);
        assert_eq!(bit_len(&[0, 0x7f, 0]), 15);
    }

    #[test]
    fn context_refuses_other_roles_and_types() {
        assert_eq!(context("p", "s", 3, 1, "l"), Err(Error::OtContextInvalid("sender role")));
        assert_eq!(context("p", "s", 1, 0, "l"), Err(Error::OtContextInvalid("payload type")));
    }
}
