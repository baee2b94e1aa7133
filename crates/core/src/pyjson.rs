//! protocol_id (../shared/reference/NOTES.md A2) from spec text in one pass through the core: a strict
//! lossless parse, the contract subset, Python's `json.dumps(sort_keys=True, ensure_ascii=False,
//! separators=(",", ":"))` of it, and SHA-256. The TypeScript twin is ts/crypto/pyjson.ts; both read
//! test-vectors/protocol-id.json, whose ids come from Python itself.
//!
//! The serialization is Python's, not RFC 8785's: keys sort by code point (the UTF-8 byte order, not
//! UTF-16's), integers print exactly as written at any size (`-0` as `0`, as Python's int does), other
//! numbers as Python's float repr (shortest round-trip digits; exponent form below 1e-4 and from 1e16:
//! `1.0`, `1e-05`, `1e+16`, `-0.0`), and strings escape only `"`, `\` and U+0000..U+001F (`\n` and the
//! other short forms, else `\u00xx`), non-ASCII raw.
//!
//! Parsing (the reader in json_text.rs) refuses exactly what the twin's `parseJson(text, { rawNumbers:
//! true })` refuses, with the same code and message, for the first fault met reading from the left:
//! strict RFC 8259 syntax (offsets in the message count UTF-16 code units, as JavaScript indexes the
//! text), escaped unpaired surrogates, non-integer numbers that are not finite doubles, nesting deeper
//! than [`MAX_DEPTH`], and a key repeated in one object, met at its closing `}` and named as the
//! smallest such key in UTF-16 order. Over-long text is refused before anything is read. The errors
//! are the `Json*` variants of [`Error`] that jcs.rs gives for the same faults, worded as the twin.
//!
//! The text is parsed into a flat tape of tokens that borrow from it (escaped strings are decoded into
//! one side buffer), each object's members sorted once as it closes; parsing and writing use explicit
//! stacks, so no input can overflow the small WebAssembly call stack. Memory: about 16 bytes per value
//! and 4 per object member on wasm32, plus the decoded escaped strings and the output; every buffer
//! that grows with the input grows fallibly ([`Error::OutOfMemory`], never an abort).

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::error::{Error, Result};
use crate::hash;
pub use crate::jcs::{MAX_DEPTH, MAX_INPUT_BYTES};
use crate::json_text::{self, push, Fault, FaultKind, Scalar, Str, Surrogates};
use std::cmp::Ordering;

#[inline]
fn put(out: &mut Vec<u8>, bytes: &[u8]) -> Result<()> {
    if out.capacity() - out.len() < bytes.len() {
        out.try_reserve(bytes.len()).map_err(|_| Error::OutOfMemory)?;
    }
    out.extend_from_slice(bytes);
    Ok(())
}

/// One value of the tape. A container's elements follow it; an object's are key, value, key, value.
#[derive(Clone, Copy, Debug)]
enum Tok {
    Null,
    True,
    False,
    /// An integer literal as written (`text[at..at + len]`).
    Int { at: u32, len: u32 },
    /// A number with a fraction or an exponent, as the double it denotes.
    Float(f64),
    /// A string: its UTF-8 in the text (no escape in it) or, decoded, in the side buffer.
    Str { at: u32, len: u32, decoded: bool },
    /// `end` is the index of the token after the array's last element.
    Arr { end: u32 },
    /// `end` as for arrays; `order[first..first + n]` are its keys' token indexes in code-point order.
    Obj { end: u32, first: u32, n: u32 },
}

/// A parsed text.
struct Doc<'a> {
    text: &'a str,
    toks: Vec<Tok>,
    order: Vec<u32>,
    decoded: String,
}

const NO_TOKEN: Tok = Tok::Null;

impl<'a> Doc<'a> {
    fn tok(&self, i: u32) -> Tok {
        self.toks.get(i as usize).copied().unwrap_or(NO_TOKEN)
    }

    fn str_of(&self, at: u32, len: u32, decoded: bool) -> &str {
        let src = if decoded { self.decoded.as_str() } else { self.text };
        src.get(at as usize..(at + len) as usize).unwrap_or("")
    }

    /// The text of the string token at `i` ("" for any other token).
    fn key(&self, i: u32) -> &str {
        match self.tok(i) {
            Tok::Str { at, len, decoded } => self.str_of(at, len, decoded),
            _ => "",
        }
    }

    /// The index of the token after the value at `i`.
    fn skip(&self, i: u32) -> u32 {
        match self.tok(i) {
            Tok::Arr { end } | Tok::Obj { end, .. } => end,
            _ => i + 1,
        }
    }

    fn members(&self, obj: u32) -> &[u32] {
        match self.tok(obj) {
            Tok::Obj { first, n, .. } => self.order.get(first as usize..(first + n) as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The value of `key` in the object at `obj`.
    fn get(&self, obj: u32, key: &str) -> Option<u32> {
        let m = self.members(obj);
        m.binary_search_by(|&k| self.key(k).as_bytes().cmp(key.as_bytes())).ok().and_then(|p| m.get(p)).map(|k| k + 1)
    }

    fn is_obj(&self, i: u32) -> bool {
        matches!(self.tok(i), Tok::Obj { .. })
    }

    /// Python truthiness of the value at `i`.
    fn truthy(&self, i: u32) -> bool {
        match self.tok(i) {
            Tok::Null | Tok::False => false,
            Tok::True => true,
            Tok::Int { at, len } => self.text.get(at as usize..(at + len) as usize).is_some_and(|t| t.bytes().any(|b| (b'1'..=b'9').contains(&b))),
            Tok::Float(x) => x != 0.0,
            Tok::Str { len, .. } => len > 0,
            Tok::Arr { end } => end > i + 1,
            Tok::Obj { n, .. } => n > 0,
        }
    }
}

/// Number of UTF-16 code units in `b[..at]`, the offset JavaScript reports for a position.
fn utf16_offset(b: &[u8], at: usize) -> usize {
    b.get(..at).unwrap_or(b).iter().map(|&c| usize::from(c & 0xc0 != 0x80) + usize::from(c >= 0xf0)).sum()
}

/// The lowercase hex digit of `n` (0..16).
fn hex_digit(n: u8) -> u8 {
    if n < 10 { b'0' + n } else { b'a' + n - 10 }
}

/// `s` as a JSON string literal, escaped as Python's json (ensure_ascii=False) and ECMAScript's
/// JSON.stringify both escape well-formed text.
fn write_string(out: &mut Vec<u8>, s: &str) -> Result<()> {
    put(out, b"\"")?;
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
        put(out, bytes.get(from..i).unwrap_or(&[]))?;
        if esc.is_empty() {
            put(out, &[b'\\', b'u', b'0', b'0', hex_digit(b >> 4), hex_digit(b & 15)])?;
        } else {
            put(out, esc)?;
        }
        from = i + 1;
    }
    put(out, bytes.get(from..).unwrap_or(&[]))?;
    put(out, b"\"")
}

/// JSON.stringify of the first UTF-16 code unit of `c`: what the twin shows for an unexpected character.
fn js_unit_literal(c: char) -> String {
    let mut units = [0u16; 2];
    let unit = c.encode_utf16(&mut units).first().copied().unwrap_or(0);
    if (0xd800..0xe000).contains(&unit) {
        return format!("\"\\u{unit:04x}\"");
    }
    let mut out = Vec::new();
    let mut buf = [0u8; 4];
    // A unit that is not a surrogate is the whole character.
    match write_string(&mut out, c.encode_utf8(&mut buf)) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Python's repr() of a finite double: the shortest digits that read back as `x`, the closest to it
/// when several do (ryu's, as ECMAScript's Number::toString prints them), in positional notation when
/// the decimal exponent is in -4..16, else as `d.ddde±XX`.
pub fn write_float_repr(out: &mut Vec<u8>, x: f64) -> Result<()> {
    if !x.is_finite() {
        // Named as ECMAScript prints them (the TypeScript twin's message), and without formatting a
        // float: f64's Display would link core's float printer into the WebAssembly module.
        let name = if x.is_nan() { "NaN" } else if x > 0.0 { "Infinity" } else { "-Infinity" };
        return Err(Error::JsonNumberRange(format!("{name} has no JSON form")));
    }
    if x == 0.0 {
        return put(out, if x.is_sign_negative() { b"-0.0" } else { b"0.0" });
    }
    let mut buf = ryu_js::Buffer::new();
    let text = buf.format_finite(x).as_bytes();
    // ECMAScript writes `ddd.ddd`, `0.000ddd`, `ddd000` (up to 21 digits) or `d.ddde±k`: read the
    // significant digits and the decimal exponent `k` of the first one back out of any of these.
    let (neg, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mant, e) = match text.iter().position(|&c| c == b'e') {
        Some(p) => (text.get(..p).unwrap_or(&[]), std::str::from_utf8(text.get(p + 1..).unwrap_or(&[])).ok().and_then(|e| e.parse::<i32>().ok()).unwrap_or(0)),
        None => (text, 0),
    };
    let point = mant.iter().position(|&c| c == b'.').unwrap_or(mant.len());
    let mut digits = [0u8; 32];
    let mut nd = 0;
    let mut lead = 0;
    for &c in mant.iter().filter(|c| c.is_ascii_digit()) {
        if nd == 0 && c == b'0' {
            lead += 1;
        } else if let Some(d) = digits.get_mut(nd) {
            *d = c;
            nd += 1;
        }
    }
    while nd > 1 && digits.get(nd - 1) == Some(&b'0') {
        nd -= 1;
    }
    let digits = digits.get(..nd).unwrap_or(&[]);
    let k = point as i32 - 1 - lead + e;
    if neg {
        put(out, b"-")?;
    }
    if (-4..16).contains(&k) {
        if k >= 0 {
            let int = (k + 1) as usize;
            for p in 0..int {
                put(out, &[digits.get(p).copied().unwrap_or(b'0')])?;
            }
            put(out, b".")?;
            match digits.get(int..) {
                Some(frac) if !frac.is_empty() => put(out, frac)?,
                _ => put(out, b"0")?,
            }
        } else {
            put(out, b"0.")?;
            for _ in 0..(-k - 1) {
                put(out, b"0")?;
            }
            put(out, digits)?;
        }
        return Ok(());
    }
    let (first, rest) = digits.split_first().map(|(f, r)| (*f, r)).unwrap_or((b'0', &[]));
    put(out, &[first])?;
    if !rest.is_empty() {
        put(out, b".")?;
        put(out, rest)?;
    }
    put(out, if k < 0 { b"e-" } else { b"e+" })?;
    let a = k.unsigned_abs();
    if a < 10 {
        put(out, b"0")?;
    }
    put(out, a.to_string().as_bytes())
}

/// A member's key token, with the first eight bytes of its UTF-8 (big-endian, zero-padded) to sort on.
#[derive(Clone, Copy)]
struct Key {
    prefix: u64,
    tok: u32,
}

struct Open {
    tok: u32,
    obj: bool,
    keys_from: usize,
}

/// Builds the tape from what the reader reads, and words its faults as the TypeScript twin does.
struct Builder<'a> {
    doc: Doc<'a>,
    /// The containers still open.
    open: Vec<Open>,
    /// The keys of the members of the objects still open.
    keys: Vec<Key>,
}

fn syntax(text: &str, msg: &str, at: usize) -> Error {
    Error::JsonSyntax(format!("{msg} at offset {}", utf16_offset(text.as_bytes(), at)))
}

impl Builder<'_> {
    fn emit(&mut self, t: Tok) -> Result<u32> {
        let at = self.doc.toks.len() as u32;
        push(&mut self.doc.toks, t)?;
        Ok(at)
    }
}

impl json_text::Handler for Builder<'_> {
    fn decoded(&mut self) -> &mut String {
        &mut self.doc.decoded
    }

    fn open(&mut self, obj: bool) -> Result<()> {
        let tok = self.emit(if obj { Tok::Obj { end: 0, first: 0, n: 0 } } else { Tok::Arr { end: 0 } })?;
        push(&mut self.open, Open { tok, obj, keys_from: self.keys.len() })
    }

    fn key(&mut self, name: Str, _end: usize) -> Result<()> {
        let tok = self.emit(Tok::Str { at: name.at as u32, len: name.len as u32, decoded: name.decoded })?;
        let mut head = [0u8; 8];
        let key = self.doc.key(tok).as_bytes();
        let n = key.len().min(8);
        if let (Some(d), Some(k)) = (head.get_mut(..n), key.get(..n)) {
            d.copy_from_slice(k);
        }
        push(&mut self.keys, Key { prefix: u64::from_be_bytes(head), tok })
    }

    fn scalar(&mut self, value: Scalar) -> Result<()> {
        let t = match value {
            Scalar::Null => Tok::Null,
            Scalar::True => Tok::True,
            Scalar::False => Tok::False,
            Scalar::Str(s) => Tok::Str { at: s.at as u32, len: s.len as u32, decoded: s.decoded },
            Scalar::Number { at, len, integer } => {
                let text = self.doc.text;
                // The twin's regular expression takes the longest match and refuses a digit after it,
                // which can only follow a leading 0.
                if text.as_bytes().get(at + len).is_some_and(|c| c.is_ascii_digit()) {
                    return Err(syntax(text, "invalid number", at));
                }
                if integer {
                    Tok::Int { at: at as u32, len: len as u32 }
                } else {
                    let t = text.get(at..at + len).unwrap_or("");
                    match t.parse::<f64>() {
                        Ok(x) if x.is_finite() => Tok::Float(x),
                        _ => return Err(Error::JsonNumberRange(format!("{} is not a finite double", t.get(..40).unwrap_or(t)))),
                    }
                }
            }
        };
        self.emit(t).map(|_| ())
    }

    /// Completes the innermost container; an object's keys are sorted and checked for repeats here.
    fn close(&mut self) -> Result<()> {
        let Some(open) = self.open.pop() else { return Ok(()) };
        let end = self.doc.toks.len() as u32;
        let t = if open.obj {
            let first = self.doc.order.len();
            let Doc { text, toks, order, decoded } = &mut self.doc;
            let (text, toks, decoded) = (*text, &*toks, decoded.as_str());
            let keys = self.keys.get_mut(open.keys_from..).unwrap_or(&mut []);
            let n = keys.len();
            // Most comparisons are settled by the first eight bytes.
            let by_key = |x: &Key, y: &Key| {
                x.prefix.cmp(&y.prefix).then_with(|| doc_key(toks, decoded, text, x.tok).as_bytes().cmp(doc_key(toks, decoded, text, y.tok).as_bytes()))
            };
            if !keys.windows(2).all(|w| matches!(w, [x, y] if by_key(x, y) == Ordering::Less)) {
                keys.sort_unstable_by(by_key);
                let mut repeated: Option<&str> = None;
                for w in keys.windows(2) {
                    if let [x, y] = w {
                        if by_key(x, y) == Ordering::Equal {
                            let k = doc_key(toks, decoded, text, x.tok);
                            if repeated.is_none_or(|r| crate::jcs::cmp_utf16(k, r) == Ordering::Less) {
                                repeated = Some(k);
                            }
                        }
                    }
                }
                if let Some(k) = repeated {
                    let mut lit = Vec::new();
                    write_string(&mut lit, k)?;
                    return Err(Error::JsonDuplicateKey(format!("duplicate object key {} (I-JSON forbids repeated keys)", String::from_utf8_lossy(&lit))));
                }
            }
            order.try_reserve(n).map_err(|_| Error::OutOfMemory)?;
            order.extend(keys.iter().map(|k| k.tok));
            self.keys.truncate(open.keys_from);
            Tok::Obj { end, first: first as u32, n: n as u32 }
        } else {
            Tok::Arr { end }
        };
        if let Some(slot) = self.doc.toks.get_mut(open.tok as usize) {
            *slot = t;
        }
        Ok(())
    }

    fn fault(&self, fault: Fault) -> Error {
        let text = self.doc.text;
        let at = fault.at;
        let msg = match fault.kind {
            FaultKind::Value if at < text.len() => {
                let c = text.get(at..).and_then(|r| r.chars().next()).unwrap_or('\u{fffd}');
                format!("unexpected character {}", js_unit_literal(c))
            }
            FaultKind::Value => "unexpected end of input".into(),
            FaultKind::Key => "expected a string key".into(),
            FaultKind::Colon => "expected ':'".into(),
            FaultKind::AfterMember => "expected ',' or '}'".into(),
            FaultKind::AfterElement => "expected ',' or ']'".into(),
            FaultKind::Trailing => "trailing characters".into(),
            FaultKind::Depth => return Error::JsonTooDeep(format!("nesting deeper than {MAX_DEPTH}")),
            FaultKind::Literal { start, .. } => return syntax(text, "invalid literal", start),
            FaultKind::Number { start, .. } => return syntax(text, "invalid number", start),
            FaultKind::InString if at < text.len() => "unescaped control character in string".into(),
            FaultKind::InString => "unterminated string".into(),
            FaultKind::Escape { start } => return syntax(text, "invalid escape", start),
            FaultKind::Hex { start } => return syntax(text, "invalid \\u escape", start),
            FaultKind::LoneSurrogate { high } => {
                return Error::JsonLoneSurrogate(format!("unpaired {} surrogate in string", if high { "high" } else { "low" }));
            }
        };
        syntax(text, &msg, at)
    }
}

/// The text of a key token, for the sort in [`Builder::close`] (which holds the order buffer mutably).
fn doc_key<'d>(toks: &[Tok], decoded: &'d str, text: &'d str, i: u32) -> &'d str {
    match toks.get(i as usize) {
        Some(&Tok::Str { at, len, decoded: d }) => (if d { decoded } else { text }).get(at as usize..(at + len) as usize).unwrap_or(""),
        _ => "",
    }
}

fn parse(text: &str) -> Result<Doc<'_>> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(Error::JsonTooLarge(text.len()));
    }
    let mut toks = Vec::new();
    toks.try_reserve(text.len() / 4 + 16).map_err(|_| Error::OutOfMemory)?;
    let mut builder = Builder { doc: Doc { text, toks, order: Vec::new(), decoded: String::new() }, open: Vec::new(), keys: Vec::new() };
    json_text::read(text, json_text::Options { max_depth: MAX_DEPTH, surrogates: Surrogates::Refuse }, &mut builder)?;
    Ok(builder.doc)
}

/// How the members of an object being written are filtered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    All,
    /// The `parameters` object: each member that is an object is written without its `default`.
    Parameters,
    /// One parameter: `default` is left out.
    NoDefault,
}

enum Frame {
    Arr { at: u32, end: u32, first: bool },
    Obj { pos: usize, left: usize, first: bool, mode: Mode },
}

impl Doc<'_> {
    fn write_scalar(&self, out: &mut Vec<u8>, t: Tok) -> Result<()> {
        match t {
            Tok::Null => put(out, b"null"),
            Tok::True => put(out, b"true"),
            Tok::False => put(out, b"false"),
            Tok::Int { at, len } => {
                let lit = self.text.get(at as usize..(at + len) as usize).unwrap_or("0");
                put(out, if lit == "-0" { b"0" } else { lit.as_bytes() })
            }
            Tok::Float(x) => write_float_repr(out, x),
            Tok::Str { at, len, decoded: false } => {
                // The text holds no escape and so nothing that needs one.
                let body = self.str_of(at, len, false).as_bytes();
                if out.capacity() - out.len() < body.len() + 2 {
                    out.try_reserve(body.len() + 2).map_err(|_| Error::OutOfMemory)?;
                }
                out.push(b'"');
                out.extend_from_slice(body);
                out.push(b'"');
                Ok(())
            }
            Tok::Str { at, len, decoded: true } => write_string(out, self.str_of(at, len, true)),
            Tok::Arr { .. } | Tok::Obj { .. } => Ok(()),
        }
    }

    /// Writes the value at `root` as Python's json.dumps(sort_keys=True) would.
    fn write(&self, out: &mut Vec<u8>, root: u32, mode: Mode) -> Result<()> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut next = Some((root, mode));
        loop {
            if let Some((i, mode)) = next.take() {
                match self.tok(i) {
                    Tok::Arr { end } => {
                        put(out, b"[")?;
                        push(&mut stack, Frame::Arr { at: i + 1, end, first: true })?;
                    }
                    Tok::Obj { first, n, .. } => {
                        put(out, b"{")?;
                        push(&mut stack, Frame::Obj { pos: first as usize, left: n as usize, first: true, mode })?;
                    }
                    t => self.write_scalar(out, t)?,
                }
            }
            let Some(top) = stack.last_mut() else { return Ok(()) };
            match top {
                Frame::Arr { at, end, first } => {
                    if *at >= *end {
                        put(out, b"]")?;
                        stack.pop();
                        continue;
                    }
                    if !*first {
                        put(out, b",")?;
                    }
                    *first = false;
                    next = Some((*at, Mode::All));
                    *at = self.skip(*at);
                }
                Frame::Obj { pos, left, first, mode } => {
                    if *left == 0 {
                        put(out, b"}")?;
                        stack.pop();
                        continue;
                    }
                    let k = self.order.get(*pos).copied().unwrap_or(0);
                    *pos += 1;
                    *left -= 1;
                    if *mode == Mode::NoDefault && self.key(k) == "default" {
                        continue;
                    }
                    if !*first {
                        put(out, b",")?;
                    }
                    *first = false;
                    match self.tok(k) {
                        Tok::Str { at, len, decoded: false } => {
                            // A key with no escape in the text, written in one piece.
                            let body = self.str_of(at, len, false).as_bytes();
                            if out.capacity() - out.len() < body.len() + 3 {
                                out.try_reserve(body.len() + 3).map_err(|_| Error::OutOfMemory)?;
                            }
                            out.push(b'"');
                            out.extend_from_slice(body);
                            out.extend_from_slice(b"\":");
                        }
                        t => {
                            self.write_scalar(out, t)?;
                            put(out, b":")?;
                        }
                    }
                    let child = if *mode == Mode::Parameters && self.is_obj(k + 1) { Mode::NoDefault } else { Mode::All };
                    next = Some((k + 1, child));
                }
            }
        }
    }

    /// The contract subset (NOTES A2 steps 1–2) of the parsed spec, serialized.
    fn contract(&self) -> Result<Vec<u8>> {
        if !self.is_obj(0) {
            return Err(Error::JsonSyntax("spec.json must be a JSON object".into()));
        }
        let mut out = Vec::new();
        out.try_reserve(self.text.len() + 16).map_err(|_| Error::OutOfMemory)?;
        put(&mut out, b"{")?;
        let mut first = true;
        // Members in code-point order of their keys: choices, commit_reveal, flow, messages,
        // parameters, rules, timing.
        let mut member = |out: &mut Vec<u8>, key: &[u8]| -> Result<()> {
            put(out, if first { b"\"" } else { b",\"" })?;
            first = false;
            put(out, key)?;
            put(out, b"\":")
        };
        for key in ["choices", "commit_reveal"] {
            if let Some(v) = self.get(0, key) {
                member(&mut out, key.as_bytes())?;
                self.write(&mut out, v, Mode::All)?;
            }
        }
        if let Some(flow) = self.get(0, "flow").filter(|&f| self.is_obj(f)) {
            let phases = self.get(flow, "phases").filter(|&p| self.truthy(p));
            let mode = self.get(flow, "mode").and_then(|m| match self.tok(m) {
                Tok::Str { at, len, decoded } if len > 0 && self.str_of(at, len, decoded) != "session_loop" => Some(m),
                _ => None,
            });
            let conf = mode.and_then(|m| {
                let key = match self.key(m) {
                    "simultaneous_round" => "round",
                    "authoritative_realtime" => "realtime",
                    "authoritative_group" => "group",
                    _ => return None,
                };
                self.get(flow, key).filter(|&c| self.is_obj(c)).map(|c| (key, c))
            });
            if phases.is_some() || mode.is_some() {
                member(&mut out, b"flow")?;
                // In code-point order: group, mode, phases, realtime, round.
                let mut fields: [Option<(&str, u32)>; 3] = [None, mode.map(|m| ("mode", m)), phases.map(|p| ("phases", p))];
                let mut last = None;
                match conf {
                    Some(("group", c)) => fields[0] = Some(("group", c)),
                    Some(c) => last = Some(c),
                    None => {}
                }
                let mut sep: &[u8] = b"{\"";
                for (key, v) in fields.into_iter().chain([last]).flatten() {
                    put(&mut out, sep)?;
                    sep = b",\"";
                    put(&mut out, key.as_bytes())?;
                    put(&mut out, b"\":")?;
                    self.write(&mut out, v, Mode::All)?;
                }
                put(&mut out, b"}")?;
            }
        }
        if let Some(v) = self.get(0, "messages") {
            member(&mut out, b"messages")?;
            self.write(&mut out, v, Mode::All)?;
        }
        if let Some(v) = self.get(0, "parameters").filter(|&p| self.is_obj(p)) {
            member(&mut out, b"parameters")?;
            self.write(&mut out, v, Mode::Parameters)?;
        }
        for key in ["rules", "timing"] {
            if let Some(v) = self.get(0, key) {
                member(&mut out, key.as_bytes())?;
                self.write(&mut out, v, Mode::All)?;
            }
        }
        put(&mut out, b"}")?;
        Ok(out)
    }
}

/// The serialized contract subset of a spec text: the exact bytes protocol_id hashes.
pub fn contract_bytes(spec_text: &str) -> Result<Vec<u8>> {
    parse(spec_text)?.contract()
}

/// Python's json.dumps(sort_keys=True, ensure_ascii=False, separators=(",", ":")) of a whole JSON
/// text, parsed as strictly as [`contract_bytes`] parses a spec.
pub fn python_json(text: &str) -> Result<Vec<u8>> {
    let doc = parse(text)?;
    let mut out = Vec::new();
    out.try_reserve(text.len() + 16).map_err(|_| Error::OutOfMemory)?;
    doc.write(&mut out, 0, Mode::All)?;
    Ok(out)
}

/// protocol_id: SHA-256 of [`contract_bytes`].
pub fn protocol_id(spec_text: &str) -> Result<[u8; 32]> {
    Ok(hash::sha256(&contract_bytes(spec_text)?))
}

/// [`protocol_id`] as 64 lowercase hex digits.
pub fn protocol_id_hex(spec_text: &str) -> Result<String> {
    let id = protocol_id(spec_text)?;
    let mut s = String::with_capacity(64);
    for b in id {
        s.push(char::from(hex_digit(b >> 4)));
        s.push(char::from(hex_digit(b & 15)));
    }
    Ok(s)
}
