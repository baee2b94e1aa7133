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
//! 5.25 times: `1e20` prints as 21 digits); for each member of an object still open, 16 bytes in
//! wasm32, on one stack grown by doubling; and for an object whose keys are out of order, a copy of its
//! canonical bytes while they are reordered, in one buffer kept for the whole text. So `[0,0,…]` needs
//! N, and the worst case is about 3 N plus 32 bytes per member. Each
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
    /// The members of every object still open, innermost last: one stack rather than a vector an object.
    members: Vec<Member>,
    /// Where an object whose keys are out of order is copied while it is rewritten in order.
    scratch: Vec<u8>,
    /// Where the first member in canonical order of a top-level object lies in `buf`, once written.
    first: Option<(usize, usize)>,
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
/// back from there when the members are sorted, so that a member costs a few words and no copy.
#[derive(Clone, Copy)]
struct Member {
    /// The key's opening quote.
    start: usize,
    /// The key's closing quote.
    key_end: usize,
    /// Whether the key's literal holds an escape, so that its bytes are not its UTF-8.
    escaped: bool,
    end: usize,
}

impl Member {
    fn key<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        &buf[self.start + 1..self.key_end]
    }
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
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> core::result::Result<(), E> {
        write_plain(self.0, v)
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
        let base = out.members.len();
        let mut in_order = true;
        while let Some(Key(key)) = map.next_key()? {
            if out.members.len() > base {
                out.put::<A::Error>(b",")?;
            }
            if out.members.try_reserve(1).is_err() {
                return Err(out.stop(Error::OutOfMemory));
            }
            let start = out.buf.len();
            match &key {
                Cow::Borrowed(plain) => write_plain::<A::Error>(out, plain)?,
                Cow::Owned(decoded) => write_str::<A::Error>(out, decoded)?,
            }
            let key_end = out.buf.len() - 1;
            // Escaping only ever lengthens a key, so a literal longer than the key holds an escape.
            let mut member = Member { start, key_end, escaped: key_end - start - 1 != key.len(), end: 0 };
            if out.members.len() > base {
                in_order = in_order && cmp_keys(&out.buf, &out.members[out.members.len() - 1], &member) == Ordering::Less;
            }
            out.put::<A::Error>(b":")?;
            // A nested object's members go on the stack above these and are gone again when it closes.
            map.next_value_seed(Value(&mut *out, false))?;
            member.end = out.buf.len();
            out.members.push(member);
        }
        // Repeated keys are looked for here, at the '}': keys in ascending order have none.
        if !in_order {
            if let Err(e) = sort_members(&mut out.buf, region, &mut out.members[base..], &mut out.scratch) {
                return Err(out.stop(e));
            }
        }
        // Only the text's own value starts at the first byte.
        if region == 1 {
            if let Some(m) = out.members.get(base) {
                out.first = Some((region, region + m.end - m.start));
            }
        }
        out.members.truncate(base);
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

/// Orders the keys of two members as RFC 8785 §3.2.3 does. Keys without an escape compare as their
/// UTF-8 bytes, corrected where UTF-8 and UTF-16 orders differ ([`cmp_utf16_bytes`]).
fn cmp_keys(buf: &[u8], a: &Member, b: &Member) -> Ordering {
    if !a.escaped && !b.escaped {
        return cmp_utf16_bytes(a.key(buf), b.key(buf));
    }
    key_units(buf, a.start).cmp(key_units(buf, b.start))
}

/// Sorts the members of an object, which lie comma-separated from `region` to the end of `buf`, by
/// key, refusing a key that appears twice, and rewrites them in that order.
fn sort_members(buf: &mut [u8], region: usize, members: &mut [Member], old: &mut Vec<u8>) -> Result<()> {
    members.sort_unstable_by(|x, y| cmp_keys(buf, x, y));
    if let Some(w) = members.windows(2).find(|w| cmp_keys(buf, &w[0], &w[1]) == Ordering::Equal) {
        let units: Vec<u16> = key_units(buf, w[0].start).collect();
        let key = String::from_utf16_lossy(&units);
        return Err(Error::JsonDuplicateKey(format!("duplicate object key {key:?} (I-JSON forbids repeated keys)")));
    }
    old.clear();
    old.try_reserve(buf.len() - region).map_err(|_| Error::OutOfMemory)?;
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

/// Orders two strings by their UTF-16 code units.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    cmp_utf16_bytes(a.as_bytes(), b.as_bytes())
}

/// Orders the UTF-8 of two strings by their UTF-16 code units. UTF-8 byte order is code point order;
/// it disagrees with UTF-16 order only where a supplementary character (lead byte F0..F4, a surrogate
/// pair in UTF-16) meets one in U+E000..U+FFFF (lead byte EE or EF), so compare bytes up to the first
/// difference and look at the lead byte of the character that holds it.
fn cmp_utf16_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (Some(&x), Some(&y)) = (a.get(common), b.get(common)) else {
        return a.len().cmp(&b.len());
    };
    // Both characters start at the same place (their bytes agree up to `common`): back up to it.
    let mut lead = common;
    while lead > 0 && a[lead] & 0xC0 == 0x80 {
        lead -= 1;
    }
    let (la, lb) = (a[lead], b[lead]);
    let supplementary = |l: u8| l >= 0xF0;
    let upper_bmp = |l: u8| l == 0xEE || l == 0xEF;
    if supplementary(la) && upper_bmp(lb) {
        Ordering::Less
    } else if upper_bmp(la) && supplementary(lb) {
        Ordering::Greater
    } else {
        x.cmp(&y)
    }
}

/// Writes a string that `serde_json` lent from the text, which it does only for a string with no
/// escape in it: such a string holds no quote, backslash or control character (the grammar forbids
/// them unescaped), so it is its own canonical form.
fn write_plain<E: de::Error>(out: &mut Out, s: &str) -> core::result::Result<(), E> {
    debug_assert!(!s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\'), "a lent string has nothing to escape");
    if out.buf.capacity() - out.buf.len() < s.len() + 2 && out.buf.try_reserve(s.len() + 2).is_err() {
        return Err(out.stop(Error::OutOfMemory));
    }
    out.buf.push(b'"');
    out.buf.extend_from_slice(s.as_bytes());
    out.buf.push(b'"');
    Ok(())
}

fn write_str<E: de::Error>(out: &mut Out, s: &str) -> core::result::Result<(), E> {
    let bytes = s.as_bytes();
    // Most strings have nothing to escape: room for them and their quotes is made once.
    if out.buf.capacity() - out.buf.len() < bytes.len() + 2 && out.buf.try_reserve(bytes.len() + 2).is_err() {
        return Err(out.stop(Error::OutOfMemory));
    }
    out.buf.push(b'"');
    let mut from = 0;
    while let Some(skip) = bytes[from..].iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\') {
        let i = from + skip;
        out.put::<E>(&bytes[from..i])?;
        let b = bytes[i];
        match b {
            b'"' => out.put::<E>(b"\\\"")?,
            b'\\' => out.put::<E>(b"\\\\")?,
            0x08 => out.put::<E>(b"\\b")?,
            0x09 => out.put::<E>(b"\\t")?,
            0x0a => out.put::<E>(b"\\n")?,
            0x0c => out.put::<E>(b"\\f")?,
            0x0d => out.put::<E>(b"\\r")?,
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.put::<E>(&[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]])?;
            }
        }
        from = i + 1;
    }
    out.put::<E>(&bytes[from..])?;
    out.put(b"\"")
}

/// The canonical form (RFC 8785) of the JSON `text`, as UTF-8 bytes.
pub fn canonicalize(text: &str) -> Result<Vec<u8>> {
    run(text).map(|out| out.buf)
}

fn run(text: &str) -> Result<Out> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(Error::JsonTooLarge(text.len()));
    }
    let mut out = Out { buf: Vec::new(), fail: None, members: Vec::new(), scratch: Vec::new(), first: None };
    out.buf.try_reserve(text.len()).map_err(|_| Error::OutOfMemory)?;
    // A small document (a frame, an envelope) gets room for its members and for reordering at once,
    // rather than growing them piece by piece; a large one grows them only if it needs them.
    if text.len() <= 4096 {
        out.members.try_reserve(16).map_err(|_| Error::OutOfMemory)?;
        out.scratch.try_reserve(text.len()).map_err(|_| Error::OutOfMemory)?;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    match Value(&mut out, false).deserialize(&mut de).and_then(|()| de.end()) {
        Ok(()) => Ok(out),
        Err(e) => Err(out.fail.take().unwrap_or_else(|| classify(e))),
    }
}

/// SHA-256 of the canonical form of the value of `text`'s first member when that member is `name`,
/// the whole text checked as [`canonicalize`] checks it; `None` when the text is not an object whose
/// first member in canonical order is `name` (written as it is: a name that JSON would escape is never
/// found). RFC 8785 writes each member's value in its own canonical form, so the value's bytes are
/// read out of the whole text's, not canonicalized a second time.
pub fn first_member_sha256(text: &str, name: &str) -> Result<Option<[u8; 32]>> {
    let out = run(text)?;
    let Some((start, end)) = out.first else { return Ok(None) };
    let member = &out.buf[start..end];
    let value = member.strip_prefix(b"\"").and_then(|m| m.strip_prefix(name.as_bytes())).and_then(|m| m.strip_prefix(b"\":"));
    Ok(value.map(crate::hash::sha256))
}

/// [`canonicalize`] for bytes that must first be checked to be UTF-8.
pub fn canonicalize_bytes(bytes: &[u8]) -> Result<Vec<u8>> {
    canonicalize(text_of(bytes)?)
}

/// [`first_member_sha256`] for bytes that must first be checked to be UTF-8.
pub fn first_member_sha256_bytes(bytes: &[u8], name: &str) -> Result<Option<[u8; 32]>> {
    first_member_sha256(text_of(bytes)?, name)
}

/// The text of UTF-8 bytes, refused unread when over [`MAX_INPUT_BYTES`].
fn text_of(bytes: &[u8]) -> Result<&str> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(Error::JsonTooLarge(bytes.len()));
    }
    std::str::from_utf8(bytes).map_err(|_| Error::Utf8)
}

#[cfg(test)]
mod first_member_tests {
    use super::*;

    #[test]
    fn hashes_the_first_members_canonical_value() {
        let cases: [(&str, &str, Option<&str>); 12] = [
            (r#"{"b": {"y":1, "x":[1, "a,}"]}, "c": 2}"#, "b", Some(r#"{"x":[1,"a,}"],"y":1}"#)),
            (r#"{"b": "q\"}", "c": 2}"#, "b", Some(r#""q\"}""#)),
            (r#"{"b": 1e0}"#, "b", Some("1")),
            (r#"{"c": 1, "a": 2}"#, "a", Some("2")),
            (r#"{"c": 1, "a": 2}"#, "c", None),
            (r#"[1]"#, "b", None),
            (r#"{}"#, "b", None),
            (r#"{"bb": 1}"#, "b", None),
            (" \n{\"b\" : [1, {\"z\":0,\"y\":1}] } ", "b", Some(r#"[1,{"y":1,"z":0}]"#)),
            // Only the text's own object counts, not one inside it.
            (r#"[{"b": 1}]"#, "b", None),
            (r#"{"a": {"b": 1}}"#, "b", None),
            (r#"{"\u0062": 1, "c": 2}"#, "b", Some("1")),
        ];
        for (text, name, value) in cases {
            let got = first_member_sha256(text, name).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got, value.map(|v| crate::hash::sha256(v.as_bytes())), "{text}");
        }
        assert!(first_member_sha256(r#"{"b": 1, "b": 2}"#, "b").is_err());
    }
}

#[cfg(test)]
mod key_order_tests {
    use super::*;

    /// Keys sort by their UTF-16 code units: compared here with the units themselves, over keys that
    /// mix ASCII, the upper BMP (U+E000..U+FFFF, which UTF-16 sorts after every surrogate pair) and
    /// supplementary characters, where UTF-8 byte order disagrees.
    #[test]
    fn keys_compare_as_utf16_code_units() {
        let pieces = ["", "a", "b", "\u{7f}", "\u{80}", "\u{7ff}", "\u{800}", "\u{d7ff}", "\u{e000}", "\u{ffff}", "\u{10000}", "\u{10ffff}", "\u{1f600}", "ab"];
        let mut keys = Vec::new();
        for x in pieces {
            for y in pieces {
                keys.push(format!("{x}{y}"));
            }
        }
        for a in &keys {
            for b in &keys {
                let want = a.encode_utf16().cmp(b.encode_utf16());
                assert_eq!(cmp_utf16(a, b), want, "{a:?} vs {b:?}");
            }
        }
    }
}
