//! RFC 8785 JSON Canonicalization Scheme from JSON text, with the I-JSON checks RFC 8785 §3.1 requires.
//!
//! Parsing is `serde_json`'s (it rejects lone surrogates, raw or escaped, and numbers outside the
//! finite doubles); the tree it fills is ours, so that duplicate keys, which `serde_json::Value`
//! silently merges, are seen and refused. Serialization is ours too rather than
//! `serde_json_canonicalizer`'s: that crate agrees byte for byte on every corpus (a test checks it),
//! but it re-parses every key and copies every value once per nesting level, several times slower on
//! large documents, and it cannot see duplicates that the parser already merged.
//!
//! - keys are sorted by UTF-16 code units (RFC 8785 §3.2.3), not by code point or UTF-8 bytes;
//! - numbers are printed as ECMAScript `Number.prototype.toString` (`ryu-js`), so `1.0` → `1`,
//!   `1e21` → `1e+21`, `-0` → `0`, and integers above 2^53 take their nearest double;
//! - strings are printed as ECMAScript `JSON.stringify` does: only `"`, `\`, and U+0000..U+001F are
//!   escaped, with the short forms `\b \t \n \f \r` and lower-case `\u00xx` for the rest.

use crate::error::{Error, Result};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

/// The deepest nesting of arrays and objects accepted: `serde_json` refuses its 128th level, and the
/// TypeScript twin applies the same bound so that both backends agree on every input.
pub const MAX_DEPTH: usize = 127;

enum Node<'a> {
    Null,
    Bool(bool),
    Num(f64),
    Str(Cow<'a, str>),
    Arr(Vec<Node<'a>>),
    Obj(Vec<(Cow<'a, str>, Node<'a>)>),
}

struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> core::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> core::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> core::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> core::result::Result<Node<'de>, E> {
                Ok(Node::Null)
            }
            fn visit_bool<E>(self, v: bool) -> core::result::Result<Node<'de>, E> {
                Ok(Node::Bool(v))
            }
            // Integers are exact here; converting to f64 then rounds them correctly, which is what
            // parsing their decimal text as a double would give.
            fn visit_u64<E>(self, v: u64) -> core::result::Result<Node<'de>, E> {
                Ok(Node::Num(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> core::result::Result<Node<'de>, E> {
                Ok(Node::Num(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> core::result::Result<Node<'de>, E> {
                if v.is_finite() {
                    Ok(Node::Num(v))
                } else {
                    Err(E::custom("number out of range"))
                }
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> core::result::Result<Node<'de>, E> {
                Ok(Node::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> core::result::Result<Node<'de>, E> {
                Ok(Node::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> core::result::Result<Node<'de>, E> {
                Ok(Node::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> core::result::Result<Node<'de>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Node::Arr(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> core::result::Result<Node<'de>, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(Key(k)) = map.next_key()? {
                    entries.push((k, map.next_value()?));
                }
                Ok(Node::Obj(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// Maps `serde_json`'s messages onto our codes. `serde_json` does not expose its error kinds, so the
/// match is on its wording; a test pins each wording so that a dependency update cannot silently turn a
/// typed rejection into a generic syntax error.
fn classify(e: serde_json::Error) -> Error {
    let msg = e.to_string();
    // A high surrogate not followed by `\u` is reported as an "unexpected end of hex escape".
    if msg.contains("surrogate") || msg.starts_with("unexpected end of hex escape") {
        Error::JsonLoneSurrogate
    } else if msg.starts_with("number out of range") {
        Error::JsonNumberRange(msg)
    } else if msg.starts_with("recursion limit exceeded") {
        Error::JsonTooDeep
    } else {
        Error::JsonSyntax(msg)
    }
}

fn parse(text: &str) -> Result<Node<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let node = Node::deserialize(&mut de).map_err(classify)?;
    de.end().map_err(classify)?;
    Ok(node)
}

/// The first UTF-16 code unit of `c` and the second (0 if there is none): comparing these pairs orders
/// characters as RFC 8785 §3.2.3 sorts keys.
fn utf16_units(c: char) -> (u32, u32) {
    let c = c as u32;
    if c < 0x10000 {
        (c, 0)
    } else {
        let v = c - 0x10000;
        (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
    }
}

/// Orders two strings by their UTF-16 code units.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // UTF-8 byte order is code point order; it only disagrees with UTF-16 order when a supplementary
    // character meets one in U+E000..U+FFFF, so compare bytes up to the first difference and look at
    // the characters there.
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    // Back up to the start of the character that contains the first differing byte.
    let mut start = common;
    while start > 0 && !a.is_char_boundary(start) {
        start -= 1;
    }
    match (a[start..].chars().next(), b[start..].chars().next()) {
        (Some(x), Some(y)) => utf16_units(x).cmp(&utf16_units(y)),
        (x, y) => x.is_some().cmp(&y.is_some()),
    }
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0a => b"\\n",
            0x0c => b"\\f",
            0x0d => b"\\r",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        } else {
            out.extend_from_slice(esc);
        }
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
}

fn write_node(out: &mut Vec<u8>, node: &mut Node<'_>) -> Result<()> {
    match node {
        Node::Null => out.extend_from_slice(b"null"),
        Node::Bool(true) => out.extend_from_slice(b"true"),
        Node::Bool(false) => out.extend_from_slice(b"false"),
        Node::Num(n) => out.extend_from_slice(ryu_js::Buffer::new().format_finite(*n).as_bytes()),
        Node::Str(s) => write_str(out, s),
        Node::Arr(items) => {
            out.push(b'[');
            for (i, item) in items.iter_mut().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_node(out, item)?;
            }
            out.push(b']');
        }
        Node::Obj(entries) => {
            entries.sort_unstable_by(|(a, _), (b, _)| cmp_utf16(a, b));
            if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(Error::JsonDuplicateKey(w[0].0.to_string()));
            }
            out.push(b'{');
            for (i, (k, v)) in entries.iter_mut().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_node(out, v)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// The canonical form (RFC 8785) of the JSON `text`, as UTF-8 bytes.
pub fn canonicalize(text: &str) -> Result<Vec<u8>> {
    let mut node = parse(text)?;
    let mut out = Vec::with_capacity(text.len());
    write_node(&mut out, &mut node)?;
    Ok(out)
}

/// [`canonicalize`] for bytes that must first be checked to be UTF-8.
pub fn canonicalize_bytes(bytes: &[u8]) -> Result<Vec<u8>> {
    canonicalize(std::str::from_utf8(bytes).map_err(|_| Error::Utf8)?)
}
