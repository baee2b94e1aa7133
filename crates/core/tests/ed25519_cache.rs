//! The per-key verification cache against the uncached path (ed25519-dalek's own verification): on
//! every vector and public corpus, each case checked with the key unknown (cold), then again once the
//! key holds a table (warm); and the cache's bounds and eviction. A missing corpus fails (see
//! common::conformance), unless AIGENORA_SKIP_CORPORA=1 makes the corpus test ignored.

mod common;
use aigenora_core::ed25519::{self, VerifyCache, BUILD_AFTER_USES};
use aigenora_core::Error;
use common::{conformance, field, hex, vectors};
use curve25519_dalek::edwards::CompressedEdwardsY;
use serde_json::Value;

type Case = (Vec<u8>, Vec<u8>, Vec<u8>);

/// Whether the strict policy lets a table be built for this key: inputs of the right sizes (lengths
/// are refused before the key is looked at), and a canonical encoding (checked on the bytes by
/// curve25519-dalek's round trip) of a point that is not of small order.
fn table_expected(pk: &[u8], sig: &[u8]) -> bool {
    let Ok(bytes) = <[u8; 32]>::try_from(pk) else { return false };
    if sig.len() != 64 {
        return false;
    }
    match CompressedEdwardsY(bytes).decompress() {
        Some(p) => p.compress().to_bytes() == bytes && !p.is_small_order(),
        None => false,
    }
}

/// Each case in a fresh cache: cold, then used until its table exists, then warm; every answer equal
/// to the uncached one. Then all cases through one small shared cache, twice, so that keys evict each
/// other. Returns how many cases were checked warm with a table.
fn check_cases(what: &str, cases: &[Case]) -> usize {
    let mut warm = 0;
    let wants: Vec<_> = cases.iter().map(|(pk, msg, sig)| ed25519::verify_uncached(pk, msg, sig)).collect();
    for (i, ((pk, msg, sig), want)) in cases.iter().zip(&wants).enumerate() {
        let want = want.clone();
        let c = VerifyCache::new(4, 2);
        assert_eq!(c.verify(pk, msg, sig), want, "{what} case {i}: cold");
        for _ in 0..BUILD_AFTER_USES {
            assert_eq!(c.verify(pk, msg, sig), want, "{what} case {i}: warming");
        }
        let key: Option<[u8; 32]> = pk.as_slice().try_into().ok();
        let has = key.is_some_and(|k| c.has_table(&k));
        assert_eq!(has, table_expected(pk, sig), "{what} case {i}: table built exactly for a valid, non-weak key");
        assert_eq!(c.verify(pk, msg, sig), want, "{what} case {i}: warm");
        warm += has as usize;
    }
    let shared = VerifyCache::new(8, 2);
    for pass in 0..(BUILD_AFTER_USES + 1) {
        for (i, ((pk, msg, sig), want)) in cases.iter().zip(&wants).enumerate() {
            assert_eq!(&shared.verify(pk, msg, sig), want, "{what} case {i}: shared pass {pass}");
            let (entries, tables) = shared.len();
            assert!(entries <= 8 && tables <= 2, "{what}: bounds exceeded ({entries}, {tables})");
        }
    }
    // And the process-wide cache behind `verify`, cold and hot.
    for pass in 0..(BUILD_AFTER_USES + 1) {
        for (i, ((pk, msg, sig), want)) in cases.iter().zip(&wants).enumerate() {
            assert_eq!(&ed25519::verify(pk, msg, sig), want, "{what} case {i}: global pass {pass}");
        }
    }
    warm
}

fn load(rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(conformance(rel)).unwrap()).unwrap()
}

#[test]
fn project_vectors_agree_cold_and_warm() {
    let cases: Vec<Case> = vectors("ed25519.json")
        .iter()
        .filter(|c| c["name"] != "short-seed-sign")
        .map(|c| (field(c, "public_key"), field(c, "message"), field(c, "signature")))
        .collect();
    assert!(cases.len() > 10);
    assert!(check_cases("ed25519.json", &cases) > 0);
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn corpora_agree_cold_and_warm() {
    let s = |v: &Value, k: &str| v[k].as_str().unwrap().to_string();

    let speccheck: Vec<Case> = load("ed25519-speccheck/cases.json").as_array().unwrap().iter()
        .map(|c| (hex(&s(c, "pub_key")), hex(&s(c, "message")), hex(&s(c, "signature")))).collect();
    assert_eq!(speccheck.len(), 12);
    check_cases("speccheck", &speccheck);

    let cctv: Vec<Case> = load("cctv-ed25519/ed25519vectors.json").as_array().unwrap().iter()
        .map(|v| (hex(&s(v, "key")), s(v, "msg").into_bytes(), hex(&s(v, "sig")))).collect();
    assert_eq!(cctv.len(), 914);
    assert!(check_cases("cctv", &cctv) > 0);

    let doc = load("wycheproof/testvectors_v1/ed25519_test.json");
    let mut wycheproof = Vec::new();
    for g in doc["testGroups"].as_array().unwrap() {
        for t in g["tests"].as_array().unwrap() {
            wycheproof.push((hex(g["publicKey"]["pk"].as_str().unwrap()), hex(&s(t, "msg")), hex(&s(t, "sig"))));
        }
    }
    assert_eq!(wycheproof.len(), 151);
    assert!(check_cases("wycheproof", &wycheproof) > 0);

    let rfc: Vec<Case> = load("rfc8032/ed25519.json").as_array().unwrap().iter()
        .map(|v| (hex(&s(v, "publicKey")), hex(&s(v, "message")), hex(&s(v, "signature")))).collect();
    assert_eq!(rfc.len(), 5);
    assert_eq!(check_cases("rfc8032", &rfc), 5);
}

fn keypair(i: u32) -> ed25519::Keypair {
    let mut seed = [0x5au8; 32];
    seed[..4].copy_from_slice(&i.to_le_bytes());
    ed25519::Keypair::from_seed(&seed).unwrap()
}

fn make_hot(c: &VerifyCache, kp: &ed25519::Keypair) {
    for i in 0..BUILD_AFTER_USES {
        let m = format!("warm {i}");
        assert_eq!(c.verify(&kp.public_key(), m.as_bytes(), &kp.sign(m.as_bytes())), Ok(()));
    }
    assert!(c.has_table(&kp.public_key()));
}

#[test]
fn tampering_under_a_hot_key_is_refused_and_the_key_still_verifies() {
    const L: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    let c = VerifyCache::new(16, 4);
    let kp = keypair(1);
    let pk = kp.public_key();
    make_hot(&c, &kp);
    let msg = b"frame 42 of the session".to_vec();
    let sig = kp.sign(&msg);
    assert_eq!(c.verify(&pk, &msg, &sig), Ok(()));

    let mut bad: Vec<(String, Vec<u8>, Vec<u8>)> = Vec::new();
    for byte in [0, 17, 31, 32, 45, 63] {
        for bit in [0, 3, 7] {
            let mut s = sig.to_vec();
            s[byte] ^= 1 << bit;
            bad.push((format!("signature byte {byte} bit {bit}"), msg.clone(), s));
        }
    }
    for at in 0..msg.len() {
        let mut m = msg.clone();
        m[at] ^= 0x01;
        bad.push((format!("message byte {at}"), m, sig.to_vec()));
    }
    bad.push(("message truncated".into(), msg[..msg.len() - 1].to_vec(), sig.to_vec()));
    bad.push(("message extended".into(), [msg.as_slice(), b"!"].concat(), sig.to_vec()));
    // S + L: the same point equation, refused because S is not reduced.
    let mut s_plus_l = sig.to_vec();
    let mut carry = 0u16;
    for i in 0..32 {
        let v = s_plus_l[32 + i] as u16 + L[i] as u16 + carry;
        s_plus_l[32 + i] = v as u8;
        carry = v >> 8;
    }
    bad.push(("S + L".into(), msg.clone(), s_plus_l));
    // Small-order R (the identity) with S = 0 or anything else.
    let mut ident = [0u8; 64];
    ident[0] = 1;
    bad.push(("identity R, zero S".into(), msg.clone(), ident.to_vec()));
    // Non-canonical R: y = p (encodes 0 as y >= p).
    let mut r_p = sig.to_vec();
    r_p[..32].copy_from_slice(&hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"));
    bad.push(("R = p".into(), msg.clone(), r_p));

    for (what, m, s) in &bad {
        assert_eq!(ed25519::verify_uncached(&pk, m, s), Err(Error::SignatureInvalid), "{what}: uncached");
        assert_eq!(c.verify(&pk, m, s), Err(Error::SignatureInvalid), "{what}: under the hot key");
        assert!(c.has_table(&pk), "{what}: a failing signature does not drop the key");
        assert_eq!(c.verify(&pk, &msg, &sig), Ok(()), "{what}: the key verifies after the failure");
    }
    // Wrong sizes are length errors before anything else, also for a hot key.
    assert_eq!(c.verify(&pk, &msg, &sig[..63]).unwrap_err().code(), "BAD_LENGTH");
    assert_eq!(c.verify(&pk[..31], &msg, &sig).unwrap_err().code(), "BAD_LENGTH");
    // Another key's signature under the hot key, and the hot key's signature under another key.
    let other = keypair(2);
    assert_eq!(c.verify(&pk, &msg, &other.sign(&msg)), Err(Error::SignatureInvalid));
    assert_eq!(c.verify(&other.public_key(), &msg, &sig), Err(Error::SignatureInvalid));
}

#[test]
fn many_fresh_keys_do_not_evict_hot_keys_and_the_bounds_hold() {
    let c = VerifyCache::new(8, 2);
    let (a, b, d) = (keypair(10), keypair(11), keypair(12));
    make_hot(&c, &a);
    make_hot(&c, &b);
    // A stream of keys each used once: none gets a table, none evicts one.
    for i in 100..400 {
        let kp = keypair(i);
        let m = format!("fresh {i}");
        assert_eq!(c.verify(&kp.public_key(), m.as_bytes(), &kp.sign(m.as_bytes())), Ok(()));
        let mut bad = kp.sign(m.as_bytes());
        bad[40] ^= 4;
        assert_eq!(c.verify(&kp.public_key(), m.as_bytes(), &bad), Err(Error::SignatureInvalid));
        assert!(!c.has_table(&kp.public_key()));
        let (entries, tables) = c.len();
        assert!(entries <= 8 && tables == 2, "({entries}, {tables})");
    }
    assert!(c.has_table(&a.public_key()) && c.has_table(&b.public_key()));
    // A third hot key evicts the least recently used table (a: b is used just before d warms).
    assert_eq!(c.verify(&a.public_key(), b"x", &a.sign(b"x")), Ok(()));
    assert_eq!(c.verify(&b.public_key(), b"y", &b.sign(b"y")), Ok(()));
    make_hot(&c, &d);
    assert!(!c.has_table(&a.public_key()) && c.has_table(&b.public_key()) && c.has_table(&d.public_key()));
    assert_eq!(c.len().1, 2);
    // The evicted key still verifies (cold again), and refuses a tampered signature.
    let mut bad = a.sign(b"z");
    assert_eq!(c.verify(&a.public_key(), b"z", &bad), Ok(()));
    bad[5] ^= 1;
    assert_eq!(c.verify(&a.public_key(), b"z", &bad), Err(Error::SignatureInvalid));

    // No room at all: still the same answers.
    let none = VerifyCache::new(0, 0);
    for _ in 0..(BUILD_AFTER_USES + 1) {
        assert_eq!(none.verify(&a.public_key(), b"x", &a.sign(b"x")), Ok(()));
    }
    assert!(none.is_empty());
    c.clear();
    assert!(c.is_empty());
}

#[test]
fn invalid_and_weak_keys_never_get_a_table() {
    let c = VerifyCache::new(8, 4);
    let identity = hex("0100000000000000000000000000000000000000000000000000000000000000");
    let mut sig = [0u8; 64];
    sig[..32].copy_from_slice(&identity);
    // The identity as A with the identity as R and S = 0 satisfies the equation; the policy refuses it.
    for _ in 0..(BUILD_AFTER_USES * 2) {
        assert_eq!(c.verify(&identity, b"m", &sig), Err(Error::SignatureInvalid));
        assert_eq!(ed25519::verify_uncached(&identity, b"m", &sig), Err(Error::SignatureInvalid));
    }
    assert!(!c.has_table(identity.as_slice().try_into().unwrap()));
    // y = p: not canonical, so not a key at all.
    let y_p = hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
    for _ in 0..(BUILD_AFTER_USES * 2) {
        assert_eq!(c.verify(&y_p, b"m", &sig), Err(Error::PublicKeyInvalid));
    }
    assert_eq!(c.len(), (1, 0));
}
