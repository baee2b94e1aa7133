//! Aira content ids (test-vectors/aira/ids.json): the core's JCS and SHA-256 give the ids an
//! independent tool computed, so the TypeScript `contentId` and the core agree through the vectors.
mod common;

use aigenora_core::{hash, jcs};
use common::vectors;

#[test]
fn aira_content_id_vectors() {
    let cases = vectors("aira/ids.json");
    assert!(!cases.is_empty());
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let mut value = c["value"].as_object().unwrap().clone();
        if let Some(member) = c.get("idMember").and_then(|m| m.as_str()) {
            value.remove(member);
        }
        let bytes = jcs::canonicalize(&serde_json::Value::Object(value).to_string()).unwrap();
        assert_eq!(String::from_utf8(bytes.clone()).unwrap(), c["jcs"].as_str().unwrap(), "{name}: canonical text");
        let id = format!("{}:sha256:{}", c["prefix"].as_str().unwrap(), hash::to_hex(&hash::sha256(&bytes)));
        assert_eq!(id, c["id"].as_str().unwrap(), "{name}");
    }
}
