//! Go encoding/json canonical form: test-vectors/rin/gojson.json (expectations from Go itself, the
//! same file vitest runs against both JS backends) and the canonicalization part of the reference's
//! rin conformance corpus (../shared/conformance/rin-reference, read in place; missing fails).

mod common;
use aigenora_core::gojson::{self, GoJsonFault, Node, PathItem};
use aigenora_core::Error;
use common::{conformance, hex, vectors};
use serde_json::Value;

fn outcome(r: Result<Vec<u8>, Error>) -> Result<String, String> {
    r.map(|b| String::from_utf8(b).unwrap()).map_err(|e| e.code().to_string())
}

fn fault(e: Error) -> GoJsonFault {
    e.go_json_fault().unwrap().clone()
}

#[test]
fn go_vectors() {
    let cases = vectors("rin/gojson.json");
    assert!(cases.len() > 100);
    let mut accepted = 0;
    for c in &cases {
        let id = c["id"].as_str().unwrap();
        let bytes = match (c["text"].as_str(), c["hex"].as_str()) {
            (Some(t), _) => t.as_bytes().to_vec(),
            (None, Some(h)) => hex(h),
            _ => panic!("{id}: no input"),
        };
        let got = outcome(gojson::canonicalize(&bytes));
        match (c["canonical"].as_str(), c["error"].as_str()) {
            (Some(want), None) => {
                accepted += 1;
                assert_eq!(got, Ok(want.to_string()), "{id}");
            }
            (None, Some(code)) => {
                assert_eq!(got, Err(code.to_string()), "{id}");
                // Where the reference's own wording is specific, it is ours too.
                if code == "JSON_DUPLICATE" || code == "JSON_SURROGATE" {
                    let e = fault(gojson::canonicalize(&bytes).unwrap_err());
                    assert_eq!(Some(e.message.as_str()), c["go_error"].as_str(), "{id}");
                }
            }
            _ => panic!("{id}: neither canonical nor error"),
        }
    }
    assert!(accepted > 30);
}

fn corpus(name: &str) -> Vec<Value> {
    let path = conformance(&format!("rin-reference/{name}"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn member<'n, 'a>(node: &'n Node<'a>, name: &str) -> &'n Node<'a> {
    match node {
        Node::Object(members) => &members.iter().find(|(n, _)| n == name).unwrap().1,
        _ => panic!("not an object"),
    }
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn reference_normalized_arguments() {
    let cases = corpus("action-request-digest.json");
    assert!(cases.len() >= 40);
    for c in cases {
        let text = c["request_json"].as_str().unwrap();
        let root = gojson::parse(text.as_bytes()).unwrap();
        let mut out = Vec::new();
        gojson::write_node(&mut out, member(&root, "arguments"));
        assert_eq!(String::from_utf8(out).unwrap(), c["expect"]["normalized_arguments"].as_str().unwrap(), "{}", c["id"]);
    }
}

#[test]
#[cfg_attr(corpora_skipped, ignore = "AIGENORA_SKIP_CORPORA=1 and ../shared/conformance is absent")]
fn reference_schema_documents() {
    let cases = corpus("schema-canonicalization.json");
    let (mut accepted, mut refused) = (0, 0);
    for c in cases {
        let doc = c["document"].as_str().unwrap().as_bytes();
        let id = c["id"].as_str().unwrap();
        if let Some(want) = c["expect"]["canonical"].as_str() {
            accepted += 1;
            let got = gojson::canonicalize(doc).unwrap();
            assert_eq!(String::from_utf8(got.clone()).unwrap(), want, "{id}");
            assert_eq!(hex_lower(&aigenora_core::hash::sha256(&got)), c["expect"]["sha256"].as_str().unwrap(), "{id}");
        } else if c["expect"]["error"]["field"] == "schema.document" {
            let message = c["expect"]["error"]["message"].as_str().unwrap();
            if ["must be valid UTF-8 JSON", "must contain well-formed escaped Unicode", "duplicate object name "].iter().any(|p| message.starts_with(p)) {
                refused += 1;
                assert_eq!(fault(gojson::canonicalize(doc).unwrap_err()).message, message, "{id}");
            }
        }
    }
    assert!(accepted >= 20 && refused >= 6, "{accepted} accepted, {refused} refused");
}

fn hex_lower(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn fault_paths_and_bounds() {
    let path = |t: &str| fault(gojson::parse(t.as_bytes()).unwrap_err()).path;
    let n = |s: &str| PathItem::Name(s.into());
    assert_eq!(path(r#"{"x":[1,{"y":1,"y":2}]}"#), vec![n("x"), PathItem::Index(1), n("y")]);
    assert_eq!(path(r#"{"x":[1,{"y":"\ud800"}]}"#), vec![n("x"), PathItem::Index(1), n("y")]);
    assert_eq!(path(r#"{"x":[1,{"y":tru}]}"#), vec![n("x"), PathItem::Index(1), n("y")]);
    assert_eq!(path("[[0],[1,2,x]]"), vec![PathItem::Index(1), PathItem::Index(2)]);
    let e = fault(gojson::parse(br#"{"a\n<":{"b":1,"b":2}}"#).unwrap_err());
    assert_eq!(e.path_json(), r#"["a\n\u003c","b"]"#);
    assert_eq!(e.message, r#"duplicate object name "b""#);
    assert_eq!(gojson::parse_with("\"ééé\"".as_bytes(), 7, 10).unwrap_err().code(), "JSON_SIZE");
    assert!(gojson::parse_with("\"ééé\"".as_bytes(), 8, 10).is_ok());
    assert_eq!(gojson::parse_with(b"[[[1]]]", 100, 2).unwrap_err().code(), "JSON_DEPTH");
    assert!(gojson::parse_with(b"[[[1]]]", 100, 3).is_ok());
}

#[test]
fn deep_values_do_not_overflow_the_stack() {
    // Built, canonicalized and dropped at Go's depth limit, with objects and arrays alternating.
    let text = format!("{}1{}", r#"{"a":["#.repeat(5000), "]}".repeat(5000));
    let out = gojson::canonicalize(text.as_bytes()).unwrap();
    assert_eq!(out, text.as_bytes());
    let deeper = format!("{}1{}", "[".repeat(10_001), "]".repeat(10_001));
    assert_eq!(gojson::canonicalize(deeper.as_bytes()).unwrap_err().code(), "JSON_DEPTH");
}
