//! The per-key verification cache against the uncached path (ed25519-dalek's own verification): on
//! every vector and public corpus, each case checked with the key unknown (cold), then again once the
//! key holds a table (warm); the cache's bounds and eviction; and when it builds a table (the adaptive
//! threshold), with the uncached verdicts in each of its states. A missing corpus fails (see
//! common::conformance), unless AIGENORA_SKIP_CORPORA=1 makes the corpus test ignored.

mod common;
use aigenora_core::ed25519::{self, VerifyCache, BUILD_AFTER_USES, DECAY_CALLS, PAYBACK_USES};
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
    // All cases in one batch, each pass with more keys holding tables (their last steps batched),
    // in a cache with room for every key's table; and in small batches through the small cache.
    let items: Vec<_> = cases.iter().map(|(pk, msg, sig)| ed25519::Item { public_key: pk, message: msg, signature: sig }).collect();
    let roomy = VerifyCache::new(4096, 64);
    for pass in 0..(BUILD_AFTER_USES + 2) {
        assert_eq!(roomy.verify_many(&items), wants, "{what}: one batch, pass {pass}");
        for (k, (batch, want)) in items.chunks(3).zip(wants.chunks(3)).enumerate() {
            assert_eq!(shared.verify_many(batch), want, "{what}: batch {k} of 3, pass {pass}");
        }
    }
    assert!(roomy.verify_many(&[]).is_empty());
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

/// Verifies one signature by `kp` of `msg` through `c`, and asserts the uncached verdict is the same.
fn use_key(c: &VerifyCache, kp: &ed25519::Keypair, msg: &str) {
    let (pk, sig) = (kp.public_key(), kp.sign(msg.as_bytes()));
    assert_eq!(c.verify(&pk, msg.as_bytes(), &sig), Ok(()), "{msg}");
    assert_eq!(ed25519::verify_uncached(&pk, msg.as_bytes(), &sig), Ok(()), "{msg}: uncached");
}

/// Tampered variants of a good signature by `kp`: bits of R and S flipped, the message changed, and
/// another key. Returns the good (message, signature) and the variants.
type Tampered = (Vec<u8>, [u8; 64], Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>);
fn tampered(kp: &ed25519::Keypair, what: &str) -> Tampered {
    let (pk, msg) = (kp.public_key(), format!("{what}: tampered").into_bytes());
    let sig = kp.sign(&msg);
    let mut cases = Vec::new();
    for byte in [0, 31, 32, 63] {
        let mut s = sig.to_vec();
        s[byte] ^= 0x04;
        cases.push((pk.to_vec(), msg.clone(), s));
    }
    let mut m = msg.clone();
    m[0] ^= 1;
    cases.push((pk.to_vec(), m, sig.to_vec()));
    cases.push((keypair(9_999).public_key().to_vec(), msg.clone(), sig.to_vec()));
    (msg, sig, cases)
}

/// `c`'s verdict on each tampered variant equals the uncached one (a refusal), and the good
/// signature still verifies after each; `table` is whether `kp` holds a table throughout.
fn tampered_agree(c: &VerifyCache, kp: &ed25519::Keypair, what: &str, table: bool) {
    let (msg, sig, cases) = tampered(kp, what);
    for (i, (k, m, s)) in cases.iter().enumerate() {
        let want = ed25519::verify_uncached(k, m, s);
        assert_eq!(want, Err(Error::SignatureInvalid), "{what} tampered {i}: uncached");
        assert_eq!(c.verify(k, m, s), want, "{what} tampered {i}");
        assert_eq!(c.verify(&kp.public_key(), &msg, &sig), Ok(()), "{what} tampered {i}: the good one after");
        assert_eq!(c.has_table(&kp.public_key()), table, "{what} tampered {i}: table");
    }
}

/// Like [`tampered_agree`] for a key that must stay below the threshold: each variant under its own
/// key, prepared by `uses` good verifications, so that no key reaches the threshold while checked.
fn tampered_agree_below(c: &VerifyCache, first: u32, uses: u32, what: &str) {
    let n = tampered(&keypair(first), what).2.len() as u32;
    for i in 0..n {
        let kp = keypair(first + i);
        for u in 0..uses {
            use_key(c, &kp, &format!("{what} {u}"));
        }
        let (msg, sig, cases) = tampered(&kp, what);
        let (k, m, s) = &cases[i as usize];
        let want = ed25519::verify_uncached(k, m, s);
        assert_eq!(want, Err(Error::SignatureInvalid), "{what} tampered {i}: uncached");
        assert_eq!(c.verify(k, m, s), want, "{what} tampered {i}");
        assert_eq!(c.verify(&kp.public_key(), &msg, &sig), Ok(()), "{what} tampered {i}: the good one after");
        assert!(!c.has_table(&kp.public_key()), "{what} tampered {i}: no table");
    }
}

/// A key verified once (the common case for a verifier of many agents' envelopes) does the uncached
/// path's work: no table is built or evicted, and the threshold does not move.
#[test]
fn a_key_seen_once_builds_nothing() {
    let c = VerifyCache::new(8, 2);
    let hot = keypair(50);
    make_hot(&c, &hot);
    for i in 0..40 {
        let kp = keypair(2_000 + i);
        use_key(&c, &kp, "once");
        assert!(!c.has_table(&kp.public_key()));
        assert_eq!(c.len().1, 1, "only the hot key holds a table");
        assert_eq!(c.build_after(), BUILD_AFTER_USES);
    }
    assert!(c.has_table(&hot.public_key()));
}

/// Keys each used exactly BUILD_AFTER_USES times and then never again: a table built at the last use
/// serves that use only and costs about 1.5 verifications more than it saves. Under the former fixed
/// rule (build at the 4th use) all 40 keys built one; now the first unpaid eviction doubles the
/// threshold and the keys after it build none.
#[test]
fn keys_used_a_few_times_stop_building_tables() {
    let c = VerifyCache::new(64, 2);
    let mut built = 0;
    for k in 0..40 {
        let kp = keypair(1_000 + k);
        for u in 0..BUILD_AFTER_USES {
            use_key(&c, &kp, &format!("use {u}"));
        }
        built += u32::from(c.has_table(&kp.public_key()));
    }
    // Two fill the free slots; the third evicts the first, used once, and doubles the threshold.
    assert_eq!(built, 3);
    assert_eq!(c.build_after(), 2 * BUILD_AFTER_USES);
    let kp = keypair(1_100);
    for u in 0..(2 * BUILD_AFTER_USES) {
        assert!(!c.has_table(&kp.public_key()), "use {u}");
        use_key(&c, &kp, &format!("use {u}"));
    }
    assert!(c.has_table(&kp.public_key()), "a key used as often as the raised threshold still gets one");
}

/// More keys in round robin than there are tables: the former rule rebuilt tables that were evicted
/// before their next use (each a loss); now unpaid evictions raise the threshold and the tables that
/// stay are used every round.
#[test]
fn more_keys_in_turn_than_tables_build_rarely() {
    let c = VerifyCache::new(64, 4);
    let keys: Vec<_> = (0..12).map(|k| keypair(3_000 + k)).collect();
    let mut builds = 0;
    for round in 0..100 {
        for kp in &keys {
            let before = c.has_table(&kp.public_key());
            use_key(&c, kp, &format!("round {round}"));
            builds += u32::from(!before && c.has_table(&kp.public_key()));
        }
    }
    // 1,200 verifications (deterministic): the former fixed rule built 220 tables here, most evicted
    // before their next use; this one builds 26, a few each time the threshold is reached.
    assert!(builds <= 40, "{builds} tables built");
    assert_eq!(c.len().1, 4);
}

/// The threshold comes back down: DECAY_CALLS verifications after it was raised, a key used
/// BUILD_AFTER_USES times gets its table again. A table that paid back does not raise it.
#[test]
fn the_threshold_decays_and_paid_tables_do_not_raise_it() {
    let c = VerifyCache::new(16, 1);
    let (a, b, d) = (keypair(4_000), keypair(4_001), keypair(4_002));
    make_hot(&c, &a);
    for u in 0..PAYBACK_USES {
        use_key(&c, &a, &format!("paid {u}"));
    }
    make_hot(&c, &b); // evicts a's table, which paid back
    assert!(!c.has_table(&a.public_key()));
    assert_eq!(c.build_after(), BUILD_AFTER_USES);
    make_hot(&c, &d); // evicts b's table, used once
    assert_eq!(c.build_after(), 2 * BUILD_AFTER_USES);
    // Cheap verifications that still count: a canonical R that is not the signature's (y = 2).
    let mut r_wrong = [0u8; 64];
    r_wrong[0] = 2;
    for _ in 0..DECAY_CALLS {
        assert_eq!(c.verify(&d.public_key(), b"decay", &r_wrong), Err(Error::SignatureInvalid));
    }
    assert_eq!(c.build_after(), BUILD_AFTER_USES);
    make_hot(&c, &a);
    tampered_agree(&c, &a, "after decay", true);
}

/// The verdicts in each state of the policy are the uncached ones: a fresh key, a key remembered
/// without a table, a key with one, an evicted one, and, with the threshold raised, keys past
/// BUILD_AFTER_USES uses still without one; each with good and tampered signatures.
#[test]
fn verdicts_match_uncached_in_every_state_of_the_policy() {
    let c = VerifyCache::new(64, 1);
    tampered_agree_below(&c, 5_000, 0, "fresh");
    tampered_agree_below(&c, 5_100, 1, "remembered");
    let hot = keypair(5_200);
    make_hot(&c, &hot);
    tampered_agree(&c, &hot, "with a table", true);
    let other = keypair(5_201);
    make_hot(&c, &other); // evicts hot's table, which paid back: the threshold stays
    assert_eq!(c.build_after(), BUILD_AFTER_USES);
    make_hot(&c, &keypair(5_202)); // evicts other's table, used once: the threshold doubles
    assert_eq!(c.build_after(), 2 * BUILD_AFTER_USES);
    tampered_agree_below(&c, 5_300, BUILD_AFTER_USES, "raised threshold, no table yet");
    // The evicted key starts over, remembered again without a table: still the uncached verdicts.
    let (msg, sig, cases) = tampered(&hot, "evicted");
    for (i, (k, m, s)) in cases.iter().take(3).enumerate() {
        assert_eq!(c.verify(k, m, s), ed25519::verify_uncached(k, m, s), "evicted tampered {i}");
    }
    assert_eq!(c.verify(&hot.public_key(), &msg, &sig), Ok(()));
    assert!(!c.has_table(&hot.public_key()));
}

/// Keys and `R`s with a small-order component (mixed order), where the cofactorless equation and the
/// cofactored one part: `[S]B - [k]A - R` is then the torsion point `-[k]T_A - T_R`, the identity for
/// about one case in eight. A key seen for the first time is checked by a reduced equation
/// (`[d1]([S]B - [k]A - R)` with a short odd `d1`, ed25519/reduced.rs) that must decide exactly the
/// cofactorless one: every verdict equals the uncached one (ed25519-dalek's), valid and invalid cases
/// both occur, and so do cases that only the cofactored equation would accept.
#[test]
fn mixed_order_keys_and_commitments_get_the_cofactorless_verdict() {
    use curve25519_dalek::constants::ED25519_BASEPOINT_POINT as B;
    use curve25519_dalek::scalar::Scalar;
    use sha2::{Digest, Sha512};
    let torsion: Vec<_> = (0u8..8)
        .map(|i| {
            // The eight small-order points: multiples of one of order 8.
            let t8 = CompressedEdwardsY(hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05").try_into().unwrap()).decompress().unwrap();
            t8 * Scalar::from(i)
        })
        .collect();
    let (mut valid, mut invalid, mut cofactored_only) = (0, 0, 0);
    for i in 0u32..800 {
        let scalar = |tag: u8| Scalar::from_bytes_mod_order_wide(&[[tag; 4], i.to_le_bytes()].concat().repeat(8).try_into().unwrap());
        let (a, r) = (scalar(1), scalar(2));
        let big_a = B * a + torsion[(i % 8) as usize];
        let big_r = B * r + torsion[(i / 8 % 8) as usize];
        let (a_enc, r_enc) = (big_a.compress().to_bytes(), big_r.compress().to_bytes());
        let msg = format!("mixed order {i}");
        let k = Scalar::from_bytes_mod_order_wide(&Sha512::new().chain_update(r_enc).chain_update(a_enc).chain_update(&msg).finalize().into());
        let s = r + k * a;
        let sig = [r_enc, s.to_bytes()].concat();
        let want = ed25519::verify_uncached(&a_enc, msg.as_bytes(), &sig);
        let cold = VerifyCache::new(16, 0);
        assert_eq!(cold.verify(&a_enc, msg.as_bytes(), &sig), want, "case {i}: first sight");
        assert_eq!(cold.verify(&a_enc, msg.as_bytes(), &sig), want, "case {i}: remembered");
        let mut bad = sig.clone();
        bad[40] ^= 1;
        assert_eq!(cold.verify(&a_enc, msg.as_bytes(), &bad), ed25519::verify_uncached(&a_enc, msg.as_bytes(), &bad), "case {i}: tampered S");
        let p = B * s - big_a * k - big_r;
        match want {
            Ok(()) => valid += 1,
            Err(_) => {
                invalid += 1;
                cofactored_only += p.is_small_order() as u32;
            }
        }
    }
    assert!(valid >= 50 && invalid >= 500 && cofactored_only >= 500, "valid {valid}, invalid {invalid}, cofactored-only {cofactored_only}");
}

/// Valid and tampered signatures under hot keys, interleaved in one batch (so that their last steps
/// share one inversion), with the uncached verdict for each; a refused item among them (wrong
/// length, non-canonical key) changes no other item's answer.
#[test]
fn a_batch_under_hot_keys_answers_each_item_as_alone() {
    let c = VerifyCache::new(16, 4);
    let kps: Vec<_> = (0..3).map(keypair).collect();
    for kp in &kps {
        make_hot(&c, kp);
        assert!(c.has_table(&kp.public_key()));
    }
    let mut cases: Vec<Case> = Vec::new();
    for (i, kp) in kps.iter().enumerate() {
        let (msg, sig, variants) = tampered(kp, &format!("batch {i}"));
        cases.push((kp.public_key().to_vec(), msg, sig.to_vec()));
        cases.extend(variants);
    }
    cases.insert(5, (vec![1u8; 31], b"short key".to_vec(), vec![0u8; 64]));
    cases.insert(2, ([0xffu8; 32].to_vec(), b"non-canonical key".to_vec(), vec![0u8; 64]));
    let items: Vec<_> = cases.iter().map(|(pk, msg, sig)| ed25519::Item { public_key: pk, message: msg, signature: sig }).collect();
    let wants: Vec<_> = cases.iter().map(|(pk, msg, sig)| ed25519::verify_uncached(pk, msg, sig)).collect();
    assert_eq!(wants.iter().filter(|w| w.is_ok()).count(), 3, "one good signature per key, the rest refused");
    assert_eq!(c.verify_many(&items), wants);
    for (i, it) in items.iter().enumerate() {
        assert_eq!(c.verify_many(std::slice::from_ref(it)), vec![wants[i].clone()], "item {i} alone");
    }
}
