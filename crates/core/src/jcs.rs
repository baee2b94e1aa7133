//! RFC 8785 JSON Canonicalization Scheme from JSON text, with the I-JSON checks RFC 8785 §3.1 requires.
//!
//! Parsing is `serde_json`'s (it rejects lone surrogates, raw or escaped, and numbers outside the
//! finite doubles); what it reads is written straight to the output rather than into a tree, and
//! duplicate keys, which `serde_json::Value` silently merges, are seen and refused. Serialization is
//! ours rather than `serde_json_canonicalizer`'s: that crate agrees byte for byte on every corpus (a
//! test checks it), but it re-parses every key and copies every value once per nesting level, and it
//! cannot see duplicates that the parser already merged.
//!
//! - keys are sorted by UTF-16 code units (RFC 8785 §3.2.3), not by code point or UTF-8 bytes;
//! - numbers are printed as ECMAScript `Number.prototype.toString` (`ryu-js`), so `1.0` → `1`,
//!   `1e21` → `1e+21`, `-0` → `0`, and integers above 2^53 take their nearest double;
//! - strings are printed as ECMAScript `JSON.stringify` does: only `"`, `\`, and U+0000..U+001F are
//!   escaped, with the short forms `\b \t \n \f \r` and lower-case `\u00xx` for the rest.
//!
//! A text with several faults is refused for the first one met reading it from the left, an object's
//! repeated key being met at its closing `}`, so that the TypeScript twin can report the same code for
//! every input.
//!
//! Memory: for a text of N bytes (at most [`MAX_INPUT_BYTES`]), beside the text itself, the output
//! buffer, reserved at N and grown by doubling (a canonical form can be longer than its text, at most
//! 5.25 times: `1e20` prints as 21 digits); for each object still open, two words per member (8 bytes
//! in wasm32); and for an object whose keys are out of order, a copy of its canonical bytes while they
//! are reordered. So `[0,0,…]` needs N, and the worst case is about 3 N plus 16 bytes per member. Each
//! of these allocations is fallible: running out of memory is [`Error::OutOfMemory`], never an abort
//! (in WebAssembly an abort is a trap that leaves the instance unusable).

use crate::error::{Error, Result};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

/// The deepest nesting of arrays and objects accepted: `serde_json` refuses its 128th level, and the
/// TypeScript twin applies the same bound so that both backends agree on every input.
pub const MAX_DEPTH: usize = 127;

/// The longest text accepted, in UTF-8 bytes (64 MiB). Protocol documents are far smaller (a spec is
/// at most 4 MiB, a frame 1 MiB); the bound keeps the worst case of a hostile text well inside the
/// 4 GiB of a WebAssembly instance, and both backends apply it before reading anything.
pub const MAX_INPUT_BYTES: usize = 64 << 20;

/// The canonical form under construction, and the typed error that stopped it (serde only carries
/// strings through its errors).
struct Out {
    buf: Vec<u8>,
    fail: Option<Error>,
}

impl Out {
    #[inline]
    fn put<E: de::Error>(&mut self, bytes: &[u8]) -> core::result::Result<(), E> {
        if self.buf.capacity() - self.buf.len() < bytes.len() && self.buf.try_reserve(bytes.len()).is_err() {
            return Err(self.stop(Error::OutOfMemory));
        }
        // Most pieces are a byte or two: copy them without a call to memmove.
        if let [b] = bytes {
            self.buf.push(*b);
        } else {
            self.buf.extend_from_slice(bytes);
        }
        Ok(())
    }

    /// Records why parsing stops; the message handed to serde is never shown.
    fn stop<E: de::Error>(&mut self, e: Error) -> E {
        self.fail = Some(e);
        E::custom("stopped by the canonicalizer")
    }
}

struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
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

/// Writes the canonical form of the next value as serde reads it, after a comma when `.1` is set
/// (serde only tells that an array has one more element by reading it).
struct Value<'o>(&'o mut Out, bool);

impl<'de> DeserializeSeed<'de> for Value<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> core::result::Result<(), D::Error> {
        if self.1 {
            self.0.put::<D::Error>(b",")?;
        }
        d.deserialize_any(self)
    }
}

/// Where one member `"key":value` of an object being written sits in the output. Its key is read
/// back from there when the members are sorted, so that a member costs two words and no copy.
#[derive(Clone, Copy)]
struct Member {
    start: usize,
    end: usize,
}

impl<'de> Visitor<'de> for Value<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> core::result::Result<(), E> {
        self.0.put(b"null")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> core::result::Result<(), E> {
        self.0.put(if v { b"true" } else { b"false" })
    }
    // Integers are exact here. Up to 2^53 a double holds them exactly and ECMAScript prints their
    // digits; beyond, converting to f64 rounds them correctly, which is what parsing their decimal
    // text as a double would give.
    fn visit_u64<E: de::Error>(self, v: u64) -> core::result::Result<(), E> {
        if v > 1 << 53 {
            return self.visit_f64(v as f64);
        }
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut v = v;
        loop {
            at -= 1;
            digits[at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.0.put(&digits[at..])
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> core::result::Result<(), E> {
        if !(-(1 << 53)..0).contains(&v) {
            return self.visit_f64(v as f64);
        }
        self.0.put::<E>(b"-")?;
        self.visit_u64(v.unsigned_abs())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> core::result::Result<(), E> {
        if !v.is_finite() {
            // Display's words for the three values, spelled out: formatting an f64 would link Rust's float
            // printer into the core .wasm every page fetches (9 KiB gzipped).
            let word = if v.is_nan() { "NaN" } else if v > 0.0 { "inf" } else { "-inf" };
            return Err(self.0.stop(number_range(word)));
        }
        self.0.put(ryu_js::Buffer::new().format_finite(v).as_bytes())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> core::result::Result<(), E> {
        write_str(self.0, v)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> core::result::Result<(), A::Error> {
        let out = self.0;
        out.put::<A::Error>(b"[")?;
        let mut first = true;
        while seq.next_element_seed(Value(&mut *out, !first))?.is_some() {
            first = false;
        }
        out.put(b"]")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> core::result::Result<(), A::Error> {
        let out = self.0;
        out.put::<A::Error>(b"{")?;
        let region = out.buf.len();
        let mut members: Vec<Member> = Vec::new();
        let mut in_order = true;
        while let Some(Key(key)) = map.next_key()? {
            if !members.is_empty() {
                out.put::<A::Error>(b",")?;
            }
            if members.try_reserve(1).is_err() {
                return Err(out.stop(Error::OutOfMemory));
            }
            let start = out.buf.len();
            write_str::<A::Error>(out, &key)?;
            if let Some(last) = members.last() {
                in_order = in_order && cmp_keys(&out.buf, last.start, start) == Ordering::Less;
            }
            out.put::<A::Error>(b":")?;
            map.next_value_seed(Value(&mut *out, false))?;
            members.push(Member { start, end: out.buf.len() });
        }
        // Repeated keys are looked for here, at the '}': keys in ascending order have none.
        if !in_order {
            if let Err(e) = sort_members(&mut out.buf, region, &mut members) {
                return Err(out.stop(e));
            }
        }
        out.put::<A::Error>(b"}")
    }
}

/// The UTF-16 code units of the key whose canonical string literal starts at `buf[at]`.
fn key_units(buf: &[u8], at: usize) -> impl Iterator<Item = u16> + '_ {
    // The literal ends at the first unescaped quote; the output is UTF-8 written by `write_str`.
    let body = &buf[at + 1..];
    let mut chars = std::str::from_utf8(&body[..literal_len(body)]).expect("written as UTF-8").chars();
    let mut pending: Option<u16> = None;
    std::iter::from_fn(move || {
        if let Some(u) = pending.take() {
            return Some(u);
        }
        let c = match chars.next()? {
            '\\' => match chars.next().expect("complete escape") {
                'b' => '\u{8}',
                't' => '\t',
                'n' => '\n',
                'f' => '\u{c}',
                'r' => '\r',
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    char::from_u32(u32::from_str_radix(&hex, 16).expect("hex")).expect("a control character")
                }
                c => c, // '"' and '\\'
            },
            c => c,
        };
        let mut units = [0u16; 2];
        let units = c.encode_utf16(&mut units);
        if units.len() == 2 {
            pending = Some(units[1]);
        }
        Some(units[0])
    })
}

/// The length of a canonical string literal's body, up to (not including) its closing quote.
fn literal_len(body: &[u8]) -> usize {
    let mut i = 0;
    while body[i] != b'"' {
        i += if body[i] == b'\\' { 2 } else { 1 };
    }
    i
}

/// Orders the keys whose literals start at `a` and `b` as RFC 8785 §3.2.3 does. Literals without a
/// backslash compare on their bytes up to the first difference, where the characters are compared.
fn cmp_keys(buf: &[u8], a: usize, b: usize) -> Ordering {
    let (la, lb) = (literal_len(&buf[a + 1..]), literal_len(&buf[b + 1..]));
    let (ka, kb) = (&buf[a + 1..a + 1 + la], &buf[b + 1..b + 1 + lb]);
    if !ka.contains(&b'\\') && !kb.contains(&b'\\') {
        // Both are the UTF-8 of their keys.
        return cmp_utf16(std::str::from_utf8(ka).expect("UTF-8"), std::str::from_utf8(kb).expect("UTF-8"));
    }
    key_units(buf, a).cmp(key_units(buf, b))
}

/// Sorts the members of an object, which lie comma-separated from `region` to the end of `buf`, by
/// key, refusing a key that appears twice, and rewrites them in that order.
fn sort_members(buf: &mut [u8], region: usize, members: &mut [Member]) -> Result<()> {
    members.sort_unstable_by(|x, y| cmp_keys(buf, x.start, y.start));
    if let Some(w) = members.windows(2).find(|w| cmp_keys(buf, w[0].start, w[1].start) == Ordering::Equal) {
        let units: Vec<u16> = key_units(buf, w[0].start).collect();
        let key = String::from_utf16_lossy(&units);
        return Err(Error::JsonDuplicateKey(format!("duplicate object key {key:?} (I-JSON forbids repeated keys)")));
    }
    let mut old = Vec::new();
    old.try_reserve_exact(buf.len() - region).map_err(|_| Error::OutOfMemory)?;
    old.extend_from_slice(&buf[region..]);
    let mut at = region;
    for (i, m) in members.iter().enumerate() {
        if i > 0 {
            buf[at] = b',';
            at += 1;
        }
        let bytes = &old[m.start - region..m.end - region];
        buf[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    }
    Ok(())
}

/// Maps `serde_json`'s messages onto our codes. `serde_json` does not expose its error kinds, so the
/// match is on its wording; a test pins each wording so that a dependency update cannot silently turn a
/// typed rejection into a generic syntax error.
fn classify(e: serde_json::Error) -> Error {
    let msg = e.to_string();
    // A high surrogate not followed by `\u` is reported as an "unexpected end of hex escape".
    if msg.contains("surrogate") || msg.starts_with("unexpected end of hex escape") {
        Error::JsonLoneSurrogate("string contains an unpaired UTF-16 surrogate (I-JSON forbids it)".into())
    } else if msg.starts_with("number out of range") {
        number_range(&msg)
    } else if msg.starts_with("recursion limit exceeded") {
        Error::JsonTooDeep(format!("JSON nesting is deeper than {MAX_DEPTH}"))
    } else {
        Error::JsonSyntax(format!("not valid JSON: {msg}"))
    }
}

fn number_range(what: &str) -> Error {
    Error::JsonNumberRange(format!("number is not a finite IEEE-754 double: {what}"))
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

fn write_str<E: de::Error>(out: &mut Out, s: &str) -> core::result::Result<(), E> {
    out.put::<E>(b"\"")?;
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
        out.put::<E>(&bytes[from..i])?;
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.put::<E>(&[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]])?;
        } else {
            out.put::<E>(esc)?;
        }
        from = i + 1;
    }
    out.put::<E>(&bytes[from..])?;
    out.put(b"\"")
}

/// The canonical form (RFC 8785) of the JSON `text`, as UTF-8 bytes.
pub fn canonicalize(text: &str) -> Result<Vec<u8>> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(Error::JsonTooLarge(text.len()));
    }
    let mut out = Out { buf: Vec::new(), fail: None };
    out.buf.try_reserve(text.len()).map_err(|_| Error::OutOfMemory)?;
    let mut de = serde_json::Deserializer::from_str(text);
    match Value(&mut out, false).deserialize(&mut de).and_then(|()| de.end()) {
        Ok(()) => Ok(out.buf),
        Err(e) => Err(out.fail.take().unwrap_or_else(|| classify(e))),
    }
}

/// SHA-256 of the canonical form of the value of `text`'s first member when that member is `name`,
/// the whole text checked as [`canonicalize`] checks it; `None` when the text is not an object whose
/// first member in canonical order is `name` (written as it is: a name that JSON would escape is never
/// found). RFC 8785 writes each member's value in its own canonical form, so the value's bytes are
/// read out of the whole text's, not canonicalized a second time.
pub fn first_member_sha256(text: &str, name: &str) -> Result<Option<[u8; 32]>> {
    let canonical = canonicalize(text)?;
    Ok(first_member_value(&canonical, name).map(crate::hash::sha256))
}

/// The bytes of the first member's value in a canonical object text when its name is `name`: from
/// after `{"name":` to the first `,` or `}` outside strings and nested brackets.
fn first_member_value<'a>(canonical: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let rest = canonical.strip_prefix(b"{\"")?.strip_prefix(name.as_bytes())?.strip_prefix(b"\":")?;
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &c) in rest.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => depth -= 1,
            b',' | b'}' if depth == 0 => return rest.get(..i),
            _ => {}
        }
    }
    None
}

/// [`canonicalize`] for bytes that must first be checked to be UTF-8.
pub fn canonicalize_bytes(bytes: &[u8]) -> Result<Vec<u8>> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(Error::JsonTooLarge(bytes.len()));
    }
    canonicalize(std::str::from_utf8(bytes).map_err(|_| Error::Utf8)?)
}

#[cfg(test)]
mod first_member_tests {
    use super::*;

    #[test]
    fn hashes_the_first_members_canonical_value() {
        let cases: [(&str, &str, Option<&str>); 8] = [
            (r#"{"b": {"y":1, "x":[1, "a,}"]}, "c": 2}"#, "b", Some(r#"{"x":[1,"a,}"],"y":1}"#)),
            (r#"{"b": "q\"}", "c": 2}"#, "b", Some(r#""q\"}""#)),
            (r#"{"b": 1e0}"#, "b", Some("1")),
            (r#"{"c": 1, "a": 2}"#, "a", Some("2")),
            (r#"{"c": 1, "a": 2}"#, "c", None),
            (r#"[1]"#, "b", None),
            (r#"{}"#, "b", None),
            (r#"{"bb": 1}"#, "b", None),
        ];
        for (text, name, value) in cases {
            let got = first_member_sha256(text, name).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got, value.map(|v| crate::hash::sha256(v.as_bytes())), "{text}");
        }
        assert!(first_member_sha256(r#"{"b": 1, "b": 2}"#, "b").is_err());
    }
}
