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
//! Parsing refuses exactly what the twin's `parseJson(text, { rawNumbers: true })` refuses, with the
//! same code and message, for the first fault met reading from the left: strict RFC 8259 syntax
//! (offsets in the message count UTF-16 code units, as JavaScript indexes the text), escaped unpaired
//! surrogates, non-integer numbers that are not finite doubles, nesting deeper than [`MAX_DEPTH`], and
//! a key repeated in one object, met at its closing `}` and named as the smallest such key in UTF-16
//! order. Over-long text is refused before anything is read.
//!
//! The text is parsed into a flat tape of tokens that borrow from it (escaped strings are decoded into
//! one side buffer), each object's members sorted once as it closes; parsing and writing use explicit
//! stacks, so no input can overflow the small WebAssembly call stack. Memory: about 16 bytes per value
//! and 4 per object member on wasm32, plus the decoded escaped strings and the output; every buffer
//! that grows with the input grows fallibly ([`Code::OutOfMemory`], never an abort).

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::hash;
pub use crate::jcs::{MAX_DEPTH, MAX_INPUT_BYTES};
use std::cmp::Ordering;
use std::fmt;

/// The fault classes, with the stable codes of [`crate::Error`] (the TypeScript twin throws
/// `CryptoError` with the same code and message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Syntax,
    DuplicateKey,
    LoneSurrogate,
    NumberRange,
    TooDeep,
    TooLarge,
    OutOfMemory,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Syntax => "JSON_SYNTAX",
            Code::DuplicateKey => "JSON_DUPLICATE_KEY",
            Code::LoneSurrogate => "JSON_LONE_SURROGATE",
            Code::NumberRange => "JSON_NUMBER_RANGE",
            Code::TooDeep => "JSON_TOO_DEEP",
            Code::TooLarge => "JSON_TOO_LARGE",
            Code::OutOfMemory => "OUT_OF_MEMORY",
        }
    }
}

/// A refusal: the code, and the message word for word as the TypeScript twin words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyJsonError {
    pub code: Code,
    pub message: String,
}

impl fmt::Display for PyJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for PyJsonError {}

type Result<T> = core::result::Result<T, PyJsonError>;

fn fail(code: Code, message: impl Into<String>) -> PyJsonError {
    PyJsonError { code, message: message.into() }
}

fn oom() -> PyJsonError {
    fail(Code::OutOfMemory, "out of memory")
}

/// `v.push(x)`, refusing rather than aborting when memory runs out.
#[inline]
fn push<T>(v: &mut Vec<T>, x: T) -> Result<()> {
    if v.len() == v.capacity() {
        v.try_reserve(1).map_err(|_| oom())?;
    }
    v.push(x);
    Ok(())
}

#[inline]
fn put(out: &mut Vec<u8>, bytes: &[u8]) -> Result<()> {
    if out.capacity() - out.len() < bytes.len() {
        out.try_reserve(bytes.len()).map_err(|_| oom())?;
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
        return Err(fail(Code::NumberRange, format!("{name} has no JSON form")));
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

/// Whether any of the eight bytes of `w` is `"`, `\\` or below 0x20 (exact: each test finds a byte
/// below a bound, and a borrow only carries past a byte that was already found).
#[inline]
fn special_byte_in(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    (below(quote, 1) | below(backslash, 1) | below(w, 0x20)) != 0
}

struct Open {
    tok: u32,
    obj: bool,
    keys_from: usize,
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    doc: Doc<'a>,
    /// The keys of the members of the objects still open.
    keys: Vec<Key>,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn syntax(&self, msg: &str, at: usize) -> PyJsonError {
        fail(Code::Syntax, format!("{msg} at offset {}", utf16_offset(self.b, at)))
    }

    #[inline]
    fn ws(&mut self) {
        // Compact text has none; indented text has a newline and a run of spaces.
        if let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            let rest = self.b.get(self.i..).unwrap_or(&[]);
            self.i += rest.iter().position(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t')).unwrap_or(rest.len());
        }
    }

    fn emit(&mut self, t: Tok) -> Result<u32> {
        let at = self.doc.toks.len() as u32;
        push(&mut self.doc.toks, t)?;
        Ok(at)
    }

    fn parse(mut self) -> Result<Doc<'a>> {
        let mut stack: Vec<Open> = Vec::new();
        'value: loop {
            self.ws();
            let start = self.i;
            match self.peek() {
                Some(c @ (b'{' | b'[')) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(fail(Code::TooDeep, format!("nesting deeper than {MAX_DEPTH}")));
                    }
                    let obj = c == b'{';
                    self.i += 1;
                    let tok = self.emit(if obj { Tok::Obj { end: 0, first: 0, n: 0 } } else { Tok::Arr { end: 0 } })?;
                    push(&mut stack, Open { tok, obj, keys_from: self.keys.len() })?;
                    self.ws();
                    if self.peek() == Some(if obj { b'}' } else { b']' }) {
                        self.i += 1;
                        self.close(&mut stack)?;
                    } else {
                        if obj {
                            self.member_key()?;
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    let t = self.string()?;
                    self.emit(t)?;
                }
                Some(b't') => self.literal("true", Tok::True)?,
                Some(b'f') => self.literal("false", Tok::False)?,
                Some(b'n') => self.literal("null", Tok::Null)?,
                Some(c) if c == b'-' || c.is_ascii_digit() => self.number()?,
                Some(_) => {
                    let c = self.s.get(start..).and_then(|r| r.chars().next()).unwrap_or('\u{fffd}');
                    return Err(self.syntax(&format!("unexpected character {}", js_unit_literal(c)), start));
                }
                None => return Err(self.syntax("unexpected end of input", start)),
            }
            // A value is complete: go on in the container it is in.
            loop {
                let Some(top) = stack.last() else { break 'value };
                let obj = top.obj;
                self.ws();
                let at = self.i;
                let c = self.peek();
                self.i += 1;
                match (obj, c) {
                    (true, Some(b'}')) | (false, Some(b']')) => self.close(&mut stack)?,
                    (true, Some(b',')) => {
                        self.member_key()?;
                        continue 'value;
                    }
                    (false, Some(b',')) => continue 'value,
                    (true, _) => return Err(self.syntax("expected ',' or '}'", at)),
                    (false, _) => return Err(self.syntax("expected ',' or ']'", at)),
                }
            }
        }
        self.ws();
        if self.i != self.b.len() {
            return Err(self.syntax("trailing characters", self.i));
        }
        Ok(self.doc)
    }

    /// Reads `"key" :` of the next member of the innermost object.
    fn member_key(&mut self) -> Result<()> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.syntax("expected a string key", self.i));
        }
        let t = self.string()?;
        let tok = self.emit(t)?;
        let mut head = [0u8; 8];
        let key = self.doc.key(tok).as_bytes();
        let n = key.len().min(8);
        if let (Some(d), Some(k)) = (head.get_mut(..n), key.get(..n)) {
            d.copy_from_slice(k);
        }
        push(&mut self.keys, Key { prefix: u64::from_be_bytes(head), tok })?;
        self.ws();
        let at = self.i;
        self.i += 1;
        if self.b.get(at) != Some(&b':') {
            return Err(self.syntax("expected ':'", at));
        }
        Ok(())
    }

    /// Completes the innermost container; an object's keys are sorted and checked for repeats here.
    fn close(&mut self, stack: &mut Vec<Open>) -> Result<()> {
        let Some(open) = stack.pop() else { return Ok(()) };
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
                    return Err(fail(
                        Code::DuplicateKey,
                        format!("duplicate object key {} (I-JSON forbids repeated keys)", String::from_utf8_lossy(&lit)),
                    ));
                }
            }
            order.try_reserve(n).map_err(|_| oom())?;
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

    fn literal(&mut self, word: &str, t: Tok) -> Result<()> {
        if !self.b.get(self.i..).is_some_and(|r| r.starts_with(word.as_bytes())) {
            return Err(self.syntax("invalid literal", self.i));
        }
        self.i += word.len();
        self.emit(t)?;
        Ok(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    /// The number grammar as the twin's regular expression reads it: the longest match, then a
    /// refusal if the grammar would have gone on (a digit after a leading 0, a `.` or an exponent with
    /// no digit after it).
    fn number(&mut self) -> Result<()> {
        let start = self.i;
        let b = self.b;
        let digit = |k: usize| b.get(k).is_some_and(|c| c.is_ascii_digit());
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.syntax("invalid number", start)),
        }
        let mut fraction = false;
        if self.peek() == Some(b'.') && digit(self.i + 1) {
            self.i += 1;
            self.digits();
            fraction = true;
        }
        let mut exponent = false;
        if let Some(b'e' | b'E') = self.peek() {
            let sign = usize::from(matches!(b.get(self.i + 1), Some(b'+' | b'-')));
            if digit(self.i + 1 + sign) {
                self.i += 1 + sign;
                self.digits();
                exponent = true;
            }
        }
        match self.peek() {
            Some(b'0'..=b'9') => return Err(self.syntax("invalid number", start)),
            Some(b'.') if !fraction && !exponent => return Err(self.syntax("invalid number", start)),
            Some(b'e' | b'E') if !exponent => return Err(self.syntax("invalid number", start)),
            _ => {}
        }
        let integer = !fraction && !exponent;
        let t = self.s.get(start..self.i).unwrap_or("");
        if integer {
            self.emit(Tok::Int { at: start as u32, len: (self.i - start) as u32 })?;
            return Ok(());
        }
        match t.parse::<f64>() {
            Ok(x) if x.is_finite() => {
                self.emit(Tok::Float(x))?;
                Ok(())
            }
            _ => Err(fail(Code::NumberRange, format!("{} is not a finite double", t.get(..40).unwrap_or(t)))),
        }
    }

    /// A string at the cursor (on its opening quote).
    fn string(&mut self) -> Result<Tok> {
        self.i += 1;
        let start = self.i;
        self.plain_run();
        match self.peek() {
            None => return Err(self.syntax("unterminated string", self.i)),
            Some(b'"') => {
                self.i += 1;
                return Ok(Tok::Str { at: start as u32, len: (self.i - 1 - start) as u32, decoded: false });
            }
            Some(b'\\') => {}
            Some(_) => return Err(self.syntax("unescaped control character in string", self.i)),
        }
        let at = self.doc.decoded.len();
        self.copy(start)?;
        loop {
            match self.peek() {
                None => return Err(self.syntax("unterminated string", self.i)),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Tok::Str { at: at as u32, len: (self.doc.decoded.len() - at) as u32, decoded: true });
                }
                Some(b'\\') => self.escape()?,
                Some(c) if c < 0x20 => return Err(self.syntax("unescaped control character in string", self.i)),
                Some(_) => {
                    let from = self.i;
                    self.plain_run();
                    self.copy(from)?;
                }
            }
        }
    }

    /// Moves the cursor past characters that stand for themselves in a string.
    #[inline]
    fn plain_run(&mut self) {
        let rest = self.b.get(self.i..).unwrap_or(&[]);
        // Eight bytes at a time while none of them is special (wasm32 has 64-bit integer operations).
        let mut k = 0;
        for chunk in rest.chunks_exact(8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            if special_byte_in(u64::from_le_bytes(w)) {
                break;
            }
            k += 8;
        }
        let tail = rest.get(k..).unwrap_or(&[]);
        self.i += k + tail.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).unwrap_or(tail.len());
    }

    /// Appends the text from `from` to the cursor (ending before an ASCII byte, so on a character
    /// boundary) to the decoded strings.
    fn copy(&mut self, from: usize) -> Result<()> {
        let run = self.s.get(from..self.i).unwrap_or("");
        self.doc.decoded.try_reserve(run.len()).map_err(|_| oom())?;
        self.doc.decoded.push_str(run);
        Ok(())
    }

    fn push_char(&mut self, c: char) -> Result<()> {
        self.doc.decoded.try_reserve(4).map_err(|_| oom())?;
        self.doc.decoded.push(c);
        Ok(())
    }

    /// The escape at the cursor; an escaped high surrogate takes its low one along.
    fn escape(&mut self) -> Result<()> {
        let simple = match self.b.get(self.i + 1) {
            Some(b'"') => Some('"'),
            Some(b'\\') => Some('\\'),
            Some(b'/') => Some('/'),
            Some(b'b') => Some('\u{8}'),
            Some(b'f') => Some('\u{c}'),
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b't') => Some('\t'),
            Some(b'u') => None,
            _ => return Err(self.syntax("invalid escape", self.i)),
        };
        if let Some(c) = simple {
            self.i += 2;
            return self.push_char(c);
        }
        let unit = self.hex4()?;
        if (0xdc00..0xe000).contains(&unit) {
            return Err(fail(Code::LoneSurrogate, "unpaired low surrogate in string"));
        }
        let lone = || fail(Code::LoneSurrogate, "unpaired high surrogate in string");
        if !(0xd800..0xdc00).contains(&unit) {
            return self.push_char(char::from_u32(unit).ok_or_else(lone)?);
        }
        // A high surrogate must be followed by `\u` and a low one. The end of the text on the way is a
        // syntax error (the string is unterminated); any other character, an unpaired surrogate.
        for want in [b'\\', b'u'] {
            match self.peek() {
                None => return Err(self.syntax("unterminated string", self.i)),
                Some(c) if c != want => return Err(lone()),
                Some(_) => self.i += 1,
            }
        }
        self.i -= 2;
        let low = self.hex4()?;
        if !(0xdc00..0xe000).contains(&low) {
            return Err(lone());
        }
        let c = char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)).ok_or_else(lone)?;
        self.push_char(c)
    }

    /// Consumes `\uXXXX` at the cursor and returns its code unit.
    fn hex4(&mut self) -> Result<u32> {
        let mut v = 0;
        for k in 2..6 {
            let d = match self.b.get(self.i + k) {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.syntax("invalid \\u escape", self.i)),
            };
            v = v << 4 | u32::from(d);
        }
        self.i += 6;
        Ok(v)
    }
}

/// The text of a key token, for the sort in [`Parser::close`] (which holds the order buffer mutably).
fn doc_key<'d>(toks: &[Tok], decoded: &'d str, text: &'d str, i: u32) -> &'d str {
    match toks.get(i as usize) {
        Some(&Tok::Str { at, len, decoded: d }) => (if d { decoded } else { text }).get(at as usize..(at + len) as usize).unwrap_or(""),
        _ => "",
    }
}

fn parse(text: &str) -> Result<Doc<'_>> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(fail(Code::TooLarge, format!("JSON text of {} bytes is over the {MAX_INPUT_BYTES}-byte limit", text.len())));
    }
    let mut toks = Vec::new();
    toks.try_reserve(text.len() / 4 + 16).map_err(|_| oom())?;
    let doc = Doc { text, toks, order: Vec::new(), decoded: String::new() };
    Parser { s: text, b: text.as_bytes(), i: 0, doc, keys: Vec::new() }.parse()
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
                    out.try_reserve(body.len() + 2).map_err(|_| oom())?;
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
                                out.try_reserve(body.len() + 3).map_err(|_| oom())?;
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
            return Err(fail(Code::Syntax, "spec.json must be a JSON object"));
        }
        let mut out = Vec::new();
        out.try_reserve(self.text.len() + 16).map_err(|_| oom())?;
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
    out.try_reserve(text.len() + 16).map_err(|_| oom())?;
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
