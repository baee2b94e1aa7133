//! protocol_id in the core: test-vectors/protocol-id.json (ids and contract texts from Python's own
//! json.dumps; refusals with the TypeScript parser's code and message, written by hand), the 20
//! reference built-ins stored under their ids (../shared/reference, read in place; missing fails), and
//! hostile texts, which must be refused without a panic or a deep call stack.

mod common;
use aigenora_core::pyjson::{self, MAX_INPUT_BYTES};
use common::repo_root;
use serde_json::Value;

fn doc() -> Value {
    let path = repo_root().join("test-vectors/protocol-id.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(doc["source"].is_string() && doc["errors_source"].is_string());
    doc
}

fn text(v: &[u8]) -> String {
    String::from_utf8(v.to_vec()).unwrap()
}

#[test]
fn python_vectors() {
    let doc = doc();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 37);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let spec = c["spec"].as_str().unwrap();
        assert_eq!(text(&pyjson::contract_bytes(spec).unwrap()), c["contract"].as_str().unwrap(), "{name}");
        assert_eq!(pyjson::protocol_id_hex(spec).unwrap(), c["protocol_id"].as_str().unwrap(), "{name}");
    }
}

#[test]
fn refusals_match_the_typescript_parser() {
    let doc = doc();
    let errors = doc["errors"].as_array().unwrap();
    assert!(errors.len() > 60);
    for e in errors {
        let name = e["name"].as_str().unwrap();
        let got = pyjson::protocol_id_hex(e["spec"].as_str().unwrap()).unwrap_err();
        assert_eq!(got.code(), e["code"].as_str().unwrap(), "{name}");
        assert_eq!(got.to_string(), e["message"].as_str().unwrap(), "{name}");
    }
}

#[test]
fn reference_builtins_hash_to_their_stored_ids() {
    let root = repo_root().join("../shared/reference/aigenora/src/aigenora/protocols");
    assert!(root.exists(), "{} is absent: the built-in specs cannot be checked", root.display());
    let index: Value = serde_json::from_str(&std::fs::read_to_string(root.join("index.json")).unwrap()).unwrap();
    let protocols = index["protocols"].as_array().unwrap();
    assert_eq!(protocols.len(), 20);
    for p in protocols {
        let spec = std::fs::read_to_string(root.join(p["path"].as_str().unwrap()).join("spec.json")).unwrap();
        assert_eq!(pyjson::protocol_id_hex(&spec).unwrap(), p["protocol_id"].as_str().unwrap(), "{}", p["alias"]);
    }
}

fn repr(x: f64) -> String {
    let mut out = Vec::new();
    pyjson::write_float_repr(&mut out, x).unwrap();
    text(&out)
}

#[test]
fn python_float_repr() {
    // Python 3: repr(x) for each.
    for (x, want) in [
        (1.0, "1.0"),
        (1e16, "1e+16"),
        (1e15, "1000000000000000.0"),
        (9999999999999998.0, "9999999999999998.0"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.5e300, "1.5e+300"),
        (0.1, "0.1"),
        (123456789.125, "123456789.125"),
        (2.5e-7, "2.5e-07"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-1234.5, "-1234.5"),
        (0.30000000000000004, "0.30000000000000004"),
        (1e100, "1e+100"),
        (-1.25e-100, "-1.25e-100"),
        (12345.0, "12345.0"),
        // Two 17-digit strings read back as this double; repr takes the closer one.
        (198868371166802.12, "198868371166802.12"),
        (1.2345678901234568e20, "1.2345678901234568e+20"),
        (1e21, "1e+21"),
        (1e-7, "1e-07"),
        (0.000123, "0.000123"),
    ] {
        assert_eq!(repr(x), want, "{x}");
    }
    assert_eq!(pyjson::write_float_repr(&mut Vec::new(), f64::NAN).unwrap_err().code(), "JSON_NUMBER_RANGE");
    assert_eq!(pyjson::write_float_repr(&mut Vec::new(), f64::INFINITY).unwrap_err().code(), "JSON_NUMBER_RANGE");
}

#[test]
fn python_json_of_any_value() {
    assert_eq!(text(&pyjson::python_json(r#" {"b":[1.0,-0,"\u00e9"],"a":null} "#).unwrap()), r#"{"a":null,"b":[1.0,0,"é"]}"#);
    assert_eq!(text(&pyjson::python_json("-0.0").unwrap()), "-0.0");
    assert_eq!(text(&pyjson::python_json(r#""\ud83d\ude00""#).unwrap()), "\"😀\"");
}

#[test]
fn deep_and_hostile_texts_are_refused_without_a_deep_stack() {
    // Run on a thread with a small stack: recursion per level would overflow it.
    std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(|| {
            for open in ["[", "{\"a\":", "[{\"a\":"] {
                let e = pyjson::protocol_id(&open.repeat(1_000_000)).unwrap_err();
                assert_eq!((e.code(), e.to_string().as_str()), ("JSON_TOO_DEEP", "nesting deeper than 127"));
            }
            let deep = format!("{{\"rules\":{}{}}}", "[".repeat(126), "]".repeat(126));
            pyjson::protocol_id(&deep).unwrap();
            let wide = format!("{{\"rules\":[{}0]}}", "0,".repeat(200_000));
            pyjson::protocol_id(&wide).unwrap();
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn over_long_text_is_refused_before_parsing() {
    let big = " ".repeat(MAX_INPUT_BYTES + 1);
    let e = pyjson::protocol_id(&big).unwrap_err();
    assert_eq!(e.code(), "JSON_TOO_LARGE");
    assert_eq!(e.to_string(), format!("JSON text of {} bytes is over the {MAX_INPUT_BYTES}-byte limit", MAX_INPUT_BYTES + 1));
}

/// Every prefix, and texts with bytes replaced, of every vector: each is an id or a typed refusal.
#[test]
fn mutated_texts_never_panic() {
    let doc = doc();
    let specs: Vec<String> = doc["cases"].as_array().unwrap().iter().chain(doc["errors"].as_array().unwrap()).map(|c| c["spec"].as_str().unwrap().to_owned()).collect();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    const BYTES: &[u8] = b"{}[]\",:\\u0123456789.eE+-tfnl \nad\x01";
    let mut outcomes = [0usize; 2];
    for spec in &specs {
        for cut in (0..=spec.len()).filter(|&k| spec.is_char_boundary(k)) {
            outcomes[usize::from(pyjson::protocol_id(&spec[..cut]).is_ok())] += 1;
        }
        for _ in 0..200 {
            let mut b = spec.clone().into_bytes();
            for _ in 0..1 + rand() % 3 {
                if b.is_empty() {
                    break;
                }
                let at = (rand() % b.len() as u64) as usize;
                if b[at].is_ascii() {
                    b[at] = BYTES[(rand() % BYTES.len() as u64) as usize];
                }
            }
            outcomes[usize::from(pyjson::protocol_id(&text(&b)).is_ok())] += 1;
        }
    }
    assert!(outcomes[0] > 1000 && outcomes[1] > 1000, "{outcomes:?}");
}
