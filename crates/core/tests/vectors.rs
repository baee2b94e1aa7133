//! The project's own vectors in test-vectors/, the same files vitest runs against both JS backends.

mod common;
use aigenora_core::{aead, commit, ed25519, hash, jcs, pow, sealed_box, x25519, Error};
use common::{field, hex, vectors};

fn code<T>(r: Result<T, Error>) -> String {
    r.err().map(|e| e.code().to_string()).unwrap_or_else(|| "ok".into())
}

#[test]
fn ed25519_vectors() {
    for c in vectors("ed25519.json") {
        let name = c["name"].as_str().unwrap();
        let (pk, msg, sig) = (field(&c, "public_key"), field(&c, "message"), field(&c, "signature"));
        if c["valid"].as_bool().unwrap() {
            if c.get("seed").is_some() {
                let seed = field(&c, "seed");
                assert_eq!(ed25519::public_key(&seed).unwrap().to_vec(), pk, "{name}: public key");
                assert_eq!(ed25519::sign(&seed, &msg).unwrap().to_vec(), sig, "{name}: signature");
            }
            assert_eq!(ed25519::verify(&pk, &msg, &sig), Ok(()), "{name}");
        } else {
            let want = c["error"].as_str().unwrap();
            let got = if name == "short-seed-sign" {
                code(ed25519::sign(&field(&c, "seed"), &msg))
            } else {
                code(ed25519::verify(&pk, &msg, &sig))
            };
            assert_eq!(got, want, "{name}");
        }
    }
}

#[test]
fn ed25519_verify_many_matches_single() {
    let cases = vectors("ed25519.json");
    let parts: Vec<_> = cases.iter().map(|c| (field(c, "public_key"), field(c, "message"), field(c, "signature"))).collect();
    let items: Vec<_> = parts.iter().map(|(p, m, s)| ed25519::Item { public_key: p, message: m, signature: s }).collect();
    let got = ed25519::verify_many(&items);
    let want: Vec<bool> = cases.iter().map(|c| c["valid"].as_bool().unwrap() || c["name"] == "short-seed-sign").collect();
    assert_eq!(got, want);
    assert!(ed25519::verify_many(&[]).is_empty());
}

#[test]
fn sha256_vectors() {
    for c in vectors("sha256.json") {
        let msg = match c.get("message") {
            Some(m) => hex(m.as_str().unwrap()),
            None => vec![hex(c["message_repeat"]["byte"].as_str().unwrap())[0]; c["message_repeat"]["count"].as_u64().unwrap() as usize],
        };
        assert_eq!(hash::to_hex(&hash::sha256(&msg)), c["sha256"].as_str().unwrap());
        assert_eq!(hash::sha256_prefixed(&msg), c["prefixed"].as_str().unwrap());
    }
}

fn cipher(c: &serde_json::Value) -> aead::Cipher {
    match c["cipher"].as_str().unwrap() {
        "chacha20-poly1305" => aead::Cipher::ChaCha20Poly1305,
        "xchacha20-poly1305" => aead::Cipher::XChaCha20Poly1305,
        other => panic!("unknown cipher {other}"),
    }
}

#[test]
fn aead_vectors() {
    for c in vectors("aead.json") {
        let name = c["name"].as_str().unwrap();
        let (key, nonce, aad, pt, sealed) = (field(&c, "key"), field(&c, "nonce"), field(&c, "aad"), field(&c, "plaintext"), field(&c, "sealed"));
        let opened = aead::open(cipher(&c), &key, &nonce, &sealed, &aad);
        if c["valid"].as_bool().unwrap() {
            assert_eq!(aead::seal(cipher(&c), &key, &nonce, &pt, &aad).unwrap(), sealed, "{name}");
            assert_eq!(opened.unwrap(), pt, "{name}");
        } else {
            let want = c["error"].as_str().unwrap();
            assert_eq!(code(opened), want, "{name}");
            if want == "BAD_LENGTH" {
                assert_eq!(code(aead::seal(cipher(&c), &key, &nonce, &pt, &aad)), want, "{name} seal");
            }
        }
    }
}

#[test]
fn x25519_vectors() {
    for c in vectors("x25519.json") {
        let name = c["name"].as_str().unwrap();
        let sk = field(&c, "private_key");
        if c.get("public_of_private").is_some() {
            assert_eq!(x25519::public_key(&sk).unwrap().to_vec(), field(&c, "public_of_private"), "{name}");
            continue;
        }
        let got = x25519::shared_secret(&sk, &field(&c, "public_key"));
        if c["valid"].as_bool().unwrap() {
            assert_eq!(got.unwrap().to_vec(), field(&c, "shared"), "{name}");
        } else {
            assert_eq!(code(got), c["error"].as_str().unwrap(), "{name}");
        }
    }
}

#[test]
fn box_vectors() {
    for c in vectors("box.json") {
        let name = c["name"].as_str().unwrap();
        let seed = field(&c, "ed25519_seed");
        let boxed = field(&c, "box");
        if !c["valid"].as_bool().unwrap() {
            assert_eq!(code(sealed_box::open(&seed, &boxed)), c["error"].as_str().unwrap(), "{name}");
            continue;
        }
        let pk = field(&c, "ed25519_public");
        assert_eq!(sealed_box::x25519_public_from_ed25519(&pk).unwrap().to_vec(), field(&c, "x25519_public"), "{name}");
        assert_eq!(sealed_box::x25519_private_from_ed25519_seed(&seed).unwrap().to_vec(), field(&c, "x25519_private"), "{name}");
        let sealed = sealed_box::seal(&pk, &field(&c, "ephemeral_private"), &field(&c, "nonce"), &field(&c, "plaintext")).unwrap();
        assert_eq!(sealed, boxed, "{name} seal");
        assert_eq!(sealed_box::open(&seed, &boxed).unwrap(), field(&c, "plaintext"), "{name} open");
    }
}

#[test]
fn pow_vectors() {
    for c in vectors("pow.json") {
        let name = c["name"].as_str().unwrap();
        let (nonce, pk) = (c["nonce"].as_str().unwrap(), c["public_key"].as_str().unwrap());
        let (difficulty, counter) = (c["difficulty"].as_u64().unwrap() as u32, c["counter"].as_u64().unwrap());
        assert_eq!(pow::solve(nonce, pk, difficulty).unwrap(), counter, "{name}");
        assert!(pow::check(nonce, pk, counter, difficulty).unwrap(), "{name} check");
    }
}

#[test]
fn commit_vectors() {
    for c in vectors("commit.json") {
        let (choice, nonce, want) = (c["choice"].as_str().unwrap(), c["nonce"].as_str().unwrap(), c["commit"].as_str().unwrap());
        assert_eq!(commit::commit(choice, nonce), want);
        assert!(commit::verify_reveal(want, choice, nonce));
        assert!(!commit::verify_reveal(want, &format!("{choice}x"), nonce));
        assert!(!commit::verify_reveal(want, choice, &format!("{nonce}x")));
        assert!(!commit::verify_reveal(&want.to_uppercase(), choice, nonce) || want.to_uppercase() == want);
        assert!(!commit::verify_reveal(&want[..63], choice, nonce));
    }
}

#[test]
fn jcs_vectors() {
    for c in vectors("jcs.json") {
        let name = c["name"].as_str().unwrap();
        let got = jcs::canonicalize(c["input"].as_str().unwrap());
        match c.get("output") {
            Some(out) => assert_eq!(String::from_utf8(got.unwrap()).unwrap(), out.as_str().unwrap(), "{name}"),
            None => assert_eq!(code(got), c["error"].as_str().unwrap(), "{name}"),
        }
    }
}

#[test]
fn jcs_rejects_non_utf8_bytes() {
    assert_eq!(code(jcs::canonicalize_bytes(b"\"\xff\"")), "UTF8_INVALID");
    assert_eq!(jcs::canonicalize_bytes(b"{\"b\":1,\"a\":2}").unwrap(), b"{\"a\":2,\"b\":1}");
}

/// `classify` maps serde_json's wording onto our codes; pin each wording so that a serde_json
/// release that rewords an error fails here instead of silently degrading a code to JSON_SYNTAX.
#[test]
fn serde_json_error_wordings_are_still_recognised() {
    assert_eq!(code(jcs::canonicalize("\"\\ud800\"")), "JSON_LONE_SURROGATE");
    assert_eq!(code(jcs::canonicalize("\"\\udc00\"")), "JSON_LONE_SURROGATE");
    assert_eq!(code(jcs::canonicalize("1e400")), "JSON_NUMBER_RANGE");
    assert_eq!(code(jcs::canonicalize(&"[".repeat(200))), "JSON_TOO_DEEP");
}
