//! The reference's AGBX1 box and registration proof-of-work vectors
//! (../shared/conformance/aigenora-reference/aigenora-{box,pow}-vectors.json, read in place): every
//! case, with the number of each kind pinned. A missing file fails; AIGENORA_SKIP_CORPORA=1 makes these
//! tests ignored instead (build.rs).

mod common;
use aigenora_core::{ed25519, hash, pow, sealed_box, x25519, Error};
use common::{conformance, field, hex};
use serde_json::Value;
use std::collections::BTreeMap;

fn load(name: &str, format: &str) -> Vec<Value> {
    let path = conformance(&format!("aigenora-reference/{name}"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(doc["format"], format);
    doc["cases"].as_array().unwrap().clone()
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// The reference's exception class for each refusal of ours (the vectors name the class).
fn class(e: &Error) -> &'static str {
    match e {
        Error::BoxTooShort(_) | Error::BoxBadMagic | Error::X25519LowOrder => "ValueError",
        Error::AeadOpenFailed => "InvalidTag",
        other => panic!("unexpected error {other:?}"),
    }
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn reference_box_vectors() {
    let mut counts = BTreeMap::<String, usize>::new();
    let mut tampered_count = 0;
    for c in load("aigenora-box-vectors.json", "aigenora-box-vectors/1") {
        let id = s(&c, "id");
        match s(&c, "kind") {
            "convert" => {
                assert_eq!(ed25519::public_key(&field(&c, "ed25519_seed")).unwrap().to_vec(), field(&c, "ed25519_public"), "{id}");
                assert_eq!(sealed_box::x25519_private_from_ed25519_seed(&field(&c, "ed25519_seed")).unwrap().to_vec(), field(&c, "x25519_private"), "{id}");
                assert_eq!(sealed_box::x25519_public_from_ed25519(&field(&c, "ed25519_public")).unwrap().to_vec(), field(&c, "x25519_public"), "{id}");
                // The two conversions describe one key pair.
                let xsk = sealed_box::x25519_private_from_ed25519_seed(&field(&c, "ed25519_seed")).unwrap();
                assert_eq!(x25519::public_key(&xsk).unwrap().to_vec(), field(&c, "x25519_public"), "{id} pair");
            }
            "seal" => {
                let eph = field(&c, "ephemeral_x25519_private");
                assert_eq!(x25519::public_key(&eph).unwrap().to_vec(), field(&c, "ephemeral_x25519_public"), "{id}");
                let boxed = sealed_box::seal(&field(&c, "recipient_public_key"), &eph, &field(&c, "nonce"), &field(&c, "plaintext")).unwrap();
                assert_eq!(boxed, field(&c, "ciphertext"), "{id} ciphertext");
                assert_eq!(sealed_box::open(&field(&c, "recipient_seed"), &boxed).unwrap(), field(&c, "plaintext"), "{id} open");
                for t in c["tampered"].as_array().unwrap() {
                    let name = s(t, "name");
                    let e = &t["expect"];
                    assert_eq!(e["ok"], false, "{id} {name}");
                    let err = sealed_box::open(&field(t, "recipient_seed"), &field(t, "ciphertext")).unwrap_err();
                    assert_eq!(class(&err), s(e, "error"), "{id} {name}: {err}");
                    tampered_count += 1;
                }
            }
            "decrypt_only" => {
                let err = sealed_box::open(&field(&c, "recipient_seed"), &field(&c, "ciphertext")).unwrap_err();
                assert_eq!(err, Error::BoxTooShort(64), "{id}");
                assert_eq!(class(&err), s(&c["expect"], "error"), "{id}");
            }
            other => panic!("{id}: unknown kind {other}"),
        }
        *counts.entry(s(&c, "kind").to_owned()).or_default() += 1;
    }
    let want: BTreeMap<String, usize> = [("convert", 8), ("seal", 5), ("decrypt_only", 1)].map(|(k, n)| (k.to_owned(), n)).into();
    assert_eq!(counts, want);
    assert_eq!(tampered_count, 40);
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn reference_pow_vectors() {
    let cases = load("aigenora-pow-vectors.json", "aigenora-pow-vectors/1");
    assert_eq!(cases.len(), 6);
    for c in &cases {
        let id = s(c, "id");
        assert_eq!(s(c, "kind"), "pow");
        let (nonce, pk) = (s(c, "nonce"), s(c, "public_key"));
        let d = c["difficulty"].as_u64().unwrap() as u32;
        let sol = &c["solution"];
        let counter = pow::solve(nonce, pk, d).unwrap();
        assert_eq!(counter, sol["counter"].as_u64().unwrap(), "{id} counter");
        assert_eq!(format!("{nonce}{pk}{counter}"), s(c, "preimage"), "{id} preimage");
        assert_eq!(hash::sha256(s(c, "preimage").as_bytes()).to_vec(), hex(s(sol, "digest")), "{id} digest");
        assert!(pow::check(nonce, pk, counter, d).unwrap(), "{id} check");
        for bad in c["invalid_solutions"].as_array().unwrap() {
            assert!(!pow::check(nonce, pk, bad["counter"].as_u64().unwrap(), d).unwrap(), "{id} invalid {bad}");
        }
        let seed = field(c, "seed");
        assert_eq!(hex(pk), ed25519::public_key(&seed).unwrap().to_vec(), "{id} key");
        let reg = &c["register"];
        assert_eq!(format!("{nonce}:{pk}:{}", s(reg, "nickname")), s(reg, "proof_string"), "{id} proof string");
        assert_eq!(ed25519::sign(&seed, s(reg, "proof_string").as_bytes()).unwrap().to_vec(), hex(s(reg, "signature")), "{id} signature");
        let ra = &c["rest_auth"];
        let signed = field(ra, "signed_bytes");
        assert_eq!(ed25519::sign(&seed, &signed).unwrap().to_vec(), hex(s(&ra["headers"], "X-Signature")), "{id} header signature");
    }
}
