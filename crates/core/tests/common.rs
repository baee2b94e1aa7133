//! Helpers shared by the integration tests: locating the shared vector files and decoding hex.
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn vectors(name: &str) -> Vec<Value> {
    let path = repo_root().join("test-vectors").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert!(doc["source"].is_string(), "{name} must say where its cases come from");
    doc["cases"].as_array().unwrap().clone()
}

/// `../shared/conformance/<rel>`, which must exist: a corpus test that cannot find its corpus fails
/// rather than passing with nothing checked. `AIGENORA_SKIP_CORPORA=1` skips them instead, as ignored
/// tests (build.rs).
pub fn conformance(rel: &str) -> PathBuf {
    let p = repo_root().join("../shared/conformance").join(rel);
    assert!(
        p.exists(),
        "../shared/conformance/{rel} is absent, so this corpus test cannot check anything; \
         put the corpora there, or set AIGENORA_SKIP_CORPORA=1 to skip these tests (reported as ignored)"
    );
    p
}

pub fn hex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

pub fn field(case: &Value, key: &str) -> Vec<u8> {
    hex(case[key].as_str().unwrap_or_else(|| panic!("{key} missing in {case}")))
}
