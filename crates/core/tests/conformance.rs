//! The public corpora in ../shared/conformance (read in place, never copied), checked natively against
//! the expectations of its README, with the number of cases of each file pinned. A missing corpus
//! fails; AIGENORA_SKIP_CORPORA=1 makes these tests ignored instead (build.rs).

mod common;
use aigenora_core::{aead, ed25519, jcs, x25519};
use common::{conformance, hex};
use serde_json::Value;
use std::fs;

fn load(rel: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(conformance(rel)).unwrap()).unwrap()
}

fn tests_of(doc: &Value) -> impl Iterator<Item = (&Value, &Value)> {
    doc["testGroups"].as_array().unwrap().iter().flat_map(|g| g["tests"].as_array().unwrap().iter().map(move |t| (g, t)))
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn wycheproof_ed25519() {
    let doc = load("wycheproof/testvectors_v1/ed25519_test.json");
    let mut n = 0;
    for (g, t) in tests_of(&doc) {
        let pk = hex(g["publicKey"]["pk"].as_str().unwrap());
        let ok = ed25519::is_valid(&pk, &hex(t["msg"].as_str().unwrap()), &hex(t["sig"].as_str().unwrap()));
        assert_eq!(ok, t["result"] == "valid", "tcId {}", t["tcId"]);
        n += 1;
    }
    assert_eq!(n, 151);
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn speccheck_only_case_3_verifies() {
    let doc = load("ed25519-speccheck/cases.json");
    let got: Vec<bool> = doc.as_array().unwrap().iter().map(|c| {
        ed25519::is_valid(&hex(c["pub_key"].as_str().unwrap()), &hex(c["message"].as_str().unwrap()), &hex(c["signature"].as_str().unwrap()))
    }).collect();
    assert_eq!(got, (0..12).map(|i| i == 3).collect::<Vec<_>>());
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn cctv_flags_decide_acceptance() {
    let doc = load("cctv-ed25519/ed25519vectors.json");
    let (mut accepted, mut n) = (0, 0);
    for v in doc.as_array().unwrap() {
        let flags: Vec<&str> = v["flags"].as_array().map(|f| f.iter().map(|x| x.as_str().unwrap()).collect()).unwrap_or_default();
        let want = flags.iter().all(|f| *f == "low_order_component_A" || *f == "low_order_component_R");
        let got = ed25519::is_valid(&hex(v["key"].as_str().unwrap()), v["msg"].as_str().unwrap().as_bytes(), &hex(v["sig"].as_str().unwrap()));
        assert_eq!(got, want, "vector {} flags {flags:?}", v["number"]);
        accepted += got as usize;
        n += 1;
    }
    assert_eq!((n, accepted), (914, 43));
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn sign_input_reproduces() {
    let text = fs::read_to_string(conformance("noble-ed25519/vectors.txt")).unwrap();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split(':').collect();
        let (sk, pk, msg, sm) = (hex(f[0]), hex(f[1]), hex(f[2]), hex(f[3]));
        assert_eq!(ed25519::public_key(&sk[..32]).unwrap().to_vec(), pk);
        assert_eq!(ed25519::sign(&sk[..32], &msg).unwrap().to_vec(), sm[..64].to_vec(), "line {n}");
        assert!(ed25519::is_valid(&pk, &msg, &sm[..64]));
        n += 1;
    }
    assert_eq!(n, 1024);
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn rfc8032_reproduces() {
    let doc = load("rfc8032/ed25519.json");
    let mut n = 0;
    for v in doc.as_array().unwrap() {
        let sk = hex(v["secretKey"].as_str().unwrap());
        let msg = hex(v["message"].as_str().unwrap());
        assert_eq!(ed25519::sign(&sk, &msg).unwrap().to_vec(), hex(v["signature"].as_str().unwrap()));
        assert!(ed25519::is_valid(&hex(v["publicKey"].as_str().unwrap()), &msg, &hex(v["signature"].as_str().unwrap())));
        n += 1;
    }
    assert_eq!(n, 5);
}

fn check_aead_file(rel: &str, cipher: aead::Cipher, count: usize) {
    let doc = load(rel);
    let mut n = 0;
    for (_, t) in tests_of(&doc) {
        let f = |k: &str| hex(t[k].as_str().unwrap());
        let (key, iv, aad, msg) = (f("key"), f("iv"), f("aad"), f("msg"));
        let sealed = [f("ct"), f("tag")].concat();
        let opened = aead::open(cipher, &key, &iv, &sealed, &aad);
        match t["result"].as_str().unwrap() {
            "valid" => {
                assert_eq!(opened.unwrap(), msg, "tcId {}", t["tcId"]);
                assert_eq!(aead::seal(cipher, &key, &iv, &msg, &aad).unwrap(), sealed, "tcId {}", t["tcId"]);
            }
            _ => assert!(opened.is_err(), "tcId {} must not open", t["tcId"]),
        }
        n += 1;
    }
    assert_eq!(n, count);
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn wycheproof_aead() {
    check_aead_file("wycheproof/testvectors_v1/chacha20_poly1305_test.json", aead::Cipher::ChaCha20Poly1305, 325);
    check_aead_file("wycheproof/testvectors_v1/xchacha20_poly1305_test.json", aead::Cipher::XChaCha20Poly1305, 315);
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn rfc8439_aead() {
    let doc = load("rfc8439/chacha20_poly1305_aead.json");
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2);
    for t in tests {
        let f = |k: &str| hex(t[k].as_str().unwrap());
        let sealed = [f("ciphertext"), f("tag")].concat();
        let c = aead::Cipher::ChaCha20Poly1305;
        assert_eq!(aead::seal(c, &f("key"), &f("nonce"), &f("plaintext"), &f("aad")).unwrap(), sealed);
        assert_eq!(aead::open(c, &f("key"), &f("nonce"), &sealed, &f("aad")).unwrap(), f("plaintext"));
    }
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn wycheproof_x25519() {
    let doc = load("wycheproof/testvectors_v1/x25519_test.json");
    let (mut n, mut refused) = (0, 0);
    for (_, t) in tests_of(&doc) {
        let got = x25519::shared_secret(&hex(t["private"].as_str().unwrap()), &hex(t["public"].as_str().unwrap()));
        let shared = hex(t["shared"].as_str().unwrap());
        match got {
            Ok(s) => assert_eq!(s.to_vec(), shared, "tcId {}", t["tcId"]),
            // Refusal is allowed only for `acceptable` cases whose expected secret is all zero.
            Err(e) => {
                assert_eq!(e.code(), "X25519_LOW_ORDER");
                assert!(t["result"] == "acceptable" && shared.iter().all(|&b| b == 0), "tcId {}", t["tcId"]);
                refused += 1;
            }
        }
        n += 1;
    }
    assert_eq!(n, 518);
    assert!(refused > 0);
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn rfc8785_testdata() {
    let dir = conformance("json-canonicalization/testdata");
    let mut n = 0;
    for entry in fs::read_dir(dir.join("input")).unwrap() {
        let path = entry.unwrap().path();
        let want = fs::read(dir.join("output").join(path.file_name().unwrap())).unwrap();
        let input = fs::read_to_string(&path).unwrap();
        let got = jcs::canonicalize(&input).unwrap();
        assert_eq!(got, want, "{}", path.display());
        // The issue's named crate agrees wherever it accepts the input.
        assert_eq!(serde_json_canonicalizer::pipe(&input).unwrap().into_bytes(), want, "{}", path.display());
        n += 1;
    }
    assert_eq!(n, 6);
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn es6_numbers() {
    let p = conformance("json-canonicalization/es6numbers/es6testfile_first10000.txt");
    let text = fs::read_to_string(p).unwrap();
    let mut n = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (bits, want) = line.split_once(',').unwrap();
        let v = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
        // Feed the double as shortest round-trip text, the way any JSON producer would write it.
        let got = jcs::canonicalize(&format!("{v:e}")).unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), want, "{bits}");
        n += 1;
    }
    assert_eq!(n, 10_000);
}

/// The project's serializer and `serde_json_canonicalizer` agree on every accepted vector input.
#[test]
fn agrees_with_serde_json_canonicalizer() {
    let doc: Value = serde_json::from_str(&fs::read_to_string(common::repo_root().join("test-vectors/jcs.json")).unwrap()).unwrap();
    for c in doc["cases"].as_array().unwrap() {
        let input = c["input"].as_str().unwrap();
        if let Ok(ours) = jcs::canonicalize(input) {
            if let Ok(theirs) = serde_json_canonicalizer::pipe(input) {
                assert_eq!(String::from_utf8(ours).unwrap(), theirs, "{}", c["name"]);
            }
        }
    }
    // Where it falls short: serde_json merges duplicate keys before the canonicalizer sees them.
    assert_eq!(serde_json_canonicalizer::pipe(r#"{"a":1,"a":2}"#).unwrap(), r#"{"a":2}"#);
    assert_eq!(jcs::canonicalize(r#"{"a":1,"a":2}"#).unwrap_err().code(), "JSON_DUPLICATE_KEY");
}
