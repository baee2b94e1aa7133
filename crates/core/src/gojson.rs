//! Go `encoding/json` canonical form, as the rin.host/v2 reference hashes it, with the strict wire
//! parser in front of it. The TypeScript twin is ts/crypto/gojson.ts; both read the vectors in
//! test-vectors/rin/gojson.json, whose expectations come from Go itself.
//!
//! Parsing accepts what the reference's `jsonwire.Validate` accepts and reports the same class of
//! fault first:
//! - a text over the size bound is [`Code::Size`]; then bytes that are not UTF-8 are [`Code::Utf8`];
//! - then the grammar, as Go's scanner reads it: the first fault from the left is [`Code::Syntax`],
//!   [`Code::Trailing`] (anything but whitespace after the value) or [`Code::Depth`] (more open arrays
//!   and objects than the bound; Go's is 10000);
//! - only a grammatical text is judged for escaped surrogates that do not pair ([`Code::Surrogate`]),
//!   and only one free of those for a member name repeated at any depth, compared after unescaping
//!   ([`Code::Duplicate`]): the reference runs these checks in this order over the whole text.
//!
//! The canonical form is `json.Marshal` of the value decoded with `UseNumber`: members sorted by the
//! UTF-8 bytes of their unescaped names, no whitespace, number lexemes verbatim (`1.0`, `-0`, `1e400`),
//! and Go's HTML-safe string escaping ([`write_string`]).
//!
//! Parsing, writing and dropping the tree all use explicit stacks, so 10000 levels of nesting cannot
//! overflow the (small, in WebAssembly) call stack. Memory is bounded by the text's size, at most
//! [`MAX_INPUT_BYTES`]: about 20 bytes per value on wasm32 plus the output.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// The deepest nesting accepted by default: Go's scanner refuses its 10001st level.
pub const MAX_DEPTH: usize = 10_000;

/// The longest text accepted by default, in UTF-8 bytes (8 MiB): the reference control plane's largest
/// request body, so no wire text is longer. A hostile text at the bound (`[0,0,…]`) needs about
/// 300 MiB for its tree on wasm32.
pub const MAX_INPUT_BYTES: usize = 8 << 20;

/// The fault classes, with the same stable codes as the TypeScript twin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Syntax,
    Utf8,
    Duplicate,
    Surrogate,
    Trailing,
    Depth,
    Size,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Syntax => "JSON_SYNTAX",
            Code::Utf8 => "JSON_UTF8",
            Code::Duplicate => "JSON_DUPLICATE",
            Code::Surrogate => "JSON_SURROGATE",
            Code::Trailing => "JSON_TRAILING",
            Code::Depth => "JSON_DEPTH",
            Code::Size => "JSON_SIZE",
        }
    }
}

/// One step from the root towards a fault: a member name or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathItem {
    Name(String),
    Index(usize),
}

/// `message` is the reference's wording for the fault class, `detail` says where and what exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoJsonError {
    pub code: Code,
    pub path: Vec<PathItem>,
    pub message: String,
    pub detail: String,
}

impl GoJsonError {
    /// The path as a JSON array (names as Go-escaped strings, indexes as numbers).
    pub fn path_json(&self) -> String {
        let mut out = Vec::new();
        out.push(b'[');
        for (k, item) in self.path.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            match item {
                PathItem::Name(name) => write_string(&mut out, name),
                PathItem::Index(i) => out.extend_from_slice(i.to_string().as_bytes()),
            }
        }
        out.push(b']');
        // Built from valid UTF-8 pieces only.
        String::from_utf8(out).unwrap_or_default()
    }
}

impl fmt::Display for GoJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({})", self.code.as_str(), self.message, self.detail)
    }
}

impl std::error::Error for GoJsonError {}

const INVALID_JSON: &str = "must be valid UTF-8 JSON";
const BAD_ESCAPE: &str = "must contain well-formed escaped Unicode";

/// A parsed value. Strings borrow from the text when they contain no escape.
#[derive(Debug)]
pub enum Node<'a> {
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
    Array(Vec<Node<'a>>),
    String(Cow<'a, str>),
    Number(&'a str),
    Bool(bool),
    Null,
}

impl Drop for Node<'_> {
    // The derived drop would recurse once per level of nesting.
    fn drop(&mut self) {
        let mut pending: Vec<Node<'_>> = match self {
            Node::Array(items) => std::mem::take(items),
            Node::Object(members) => std::mem::take(members).into_iter().map(|(_, v)| v).collect(),
            _ => return,
        };
        while let Some(mut node) = pending.pop() {
            match &mut node {
                Node::Array(items) => pending.append(items),
                Node::Object(members) => pending.extend(std::mem::take(members).into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }
}

/// Code points Go's strconv.IsPrint refuses, beside the ASCII controls: C1 controls, spaces other
/// than U+0020, line and paragraph separators, format characters, private use and noncharacters. Go
/// also escapes unassigned code points, which need Unicode tables; those are written raw here (and in
/// the TypeScript twin), so both backends give the same message.
const NON_PRINT: &[(u32, u32)] = &[
    (0x7f, 0x9f),
    (0xa0, 0xa0),
    (0xad, 0xad),
    (0x600, 0x605),
    (0x61c, 0x61c),
    (0x6dd, 0x6dd),
    (0x70f, 0x70f),
    (0x890, 0x891),
    (0x8e2, 0x8e2),
    (0x1680, 0x1680),
    (0x180e, 0x180e),
    (0x2000, 0x200f),
    (0x2028, 0x202f),
    (0x205f, 0x2064),
    (0x2066, 0x206f),
    (0x3000, 0x3000),
    (0xe000, 0xf8ff),
    (0xfdd0, 0xfdef),
    (0xfeff, 0xfeff),
    (0xfff9, 0xfffb),
    (0x110bd, 0x110bd),
    (0x110cd, 0x110cd),
    (0x13430, 0x1343f),
    (0x1bca0, 0x1bca3),
    (0x1d173, 0x1d17a),
    (0xe0001, 0xe0001),
    (0xe0020, 0xe007f),
    (0xf0000, 0x10ffff),
];

fn go_printable(c: u32) -> bool {
    // U+xFFFE and U+xFFFF of every plane are noncharacters.
    c >= 0x20 && c & 0xfffe != 0xfffe && !NON_PRINT.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Go's %q of a name (strconv.Quote), for the duplicate message; see [`NON_PRINT`] for the one
/// difference.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        let c = ch as u32;
        match ch {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            _ if go_printable(c) => out.push(ch),
            _ if c < 0x20 || c == 0x7f => out.push_str(&format!("\\x{c:02x}")),
            _ if c < 0x10000 => out.push_str(&format!("\\u{c:04x}")),
            _ => out.push_str(&format!("\\U{c:08x}")),
        }
    }
    out.push('"');
    out
}

enum Container<'a> {
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
    Array(Vec<Node<'a>>),
}

struct Frame<'a> {
    container: Container<'a>,
    names: HashSet<Cow<'a, str>>,
    /// The member whose value is being read (objects).
    pending: Option<Cow<'a, str>>,
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    max_depth: usize,
    stack: Vec<Frame<'a>>,
    surrogate: Option<GoJsonError>,
    duplicate: Option<GoJsonError>,
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn hex_value(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some(u32::from(c - b'0')),
        b'a'..=b'f' => Some(u32::from(c - b'a') + 10),
        b'A'..=b'F' => Some(u32::from(c - b'A') + 10),
        _ => None,
    }
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at(&self, k: usize) -> Option<u8> {
        self.b.get(k).copied()
    }

    fn path(&self) -> Vec<PathItem> {
        let mut p = Vec::new();
        for f in &self.stack {
            match &f.container {
                Container::Array(items) => p.push(PathItem::Index(items.len())),
                Container::Object(_) => {
                    if let Some(name) = &f.pending {
                        p.push(PathItem::Name(name.to_string()));
                    }
                }
            }
        }
        p
    }

    fn fault(&self, code: Code, what: &str) -> GoJsonError {
        GoJsonError { code, path: self.path(), message: INVALID_JSON.into(), detail: format!("{what} at offset {}", self.i) }
    }

    fn unexpected(&self, context: &str) -> GoJsonError {
        match self.s.get(self.i..).and_then(|rest| rest.chars().next()) {
            None => self.fault(Code::Syntax, &format!("unexpected end of JSON input {context}")),
            Some(c) => self.fault(Code::Syntax, &format!("invalid character {c:?} {context}")),
        }
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.i += 1;
        }
    }

    fn slice(&self, from: usize, to: usize) -> Result<&'a str, GoJsonError> {
        // Cuts fall next to ASCII bytes, so on character boundaries.
        self.s.get(from..to).ok_or_else(|| self.fault(Code::Syntax, "internal: cut inside a character"))
    }

    fn parse(mut self) -> Result<Node<'a>, GoJsonError> {
        let root = loop {
            self.skip_ws();
            let value = match self.peek() {
                Some(c @ (b'{' | b'[')) => {
                    if self.stack.len() >= self.max_depth {
                        return Err(self.fault(Code::Depth, &format!("nesting deeper than {}", self.max_depth)));
                    }
                    self.i += 1;
                    let container = if c == b'{' { Container::Object(Vec::new()) } else { Container::Array(Vec::new()) };
                    self.stack.push(Frame { container, names: HashSet::new(), pending: None });
                    self.skip_ws();
                    let close = if c == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.i += 1;
                        self.close()
                    } else {
                        if c == b'{' {
                            self.member_name()?;
                        }
                        continue;
                    }
                }
                _ => self.scalar()?,
            };
            // A value is complete: attach it, then read separators and closing brackets.
            let mut value = Some(value);
            let done = loop {
                let Some(v) = value.take() else { break None };
                let Some(top) = self.stack.last_mut() else { break Some(v) };
                match &mut top.container {
                    Container::Array(items) => items.push(v),
                    Container::Object(members) => members.push((top.pending.clone().unwrap_or_default(), v)),
                }
                self.skip_ws();
                let is_obj = matches!(top_kind(&self.stack), Some(true));
                match self.peek() {
                    Some(b',') => {
                        self.i += 1;
                        if is_obj {
                            if let Some(top) = self.stack.last_mut() {
                                top.pending = None;
                            }
                            self.skip_ws();
                            self.member_name()?;
                        }
                        break None;
                    }
                    Some(b'}') if is_obj => {
                        self.i += 1;
                        value = Some(self.close());
                    }
                    Some(b']') if !is_obj => {
                        self.i += 1;
                        value = Some(self.close());
                    }
                    _ => {
                        return Err(self.unexpected(if is_obj { "after object key:value pair" } else { "after array element" }));
                    }
                }
            };
            if let Some(root) = done {
                break root;
            }
        };
        self.skip_ws();
        if self.i < self.b.len() {
            let e = self.unexpected("after top-level value");
            return Err(GoJsonError { code: Code::Trailing, ..e });
        }
        if let Some(e) = self.surrogate.take() {
            return Err(e);
        }
        if let Some(e) = self.duplicate.take() {
            return Err(e);
        }
        Ok(root)
    }

    /// Pops the innermost container as a finished value.
    fn close(&mut self) -> Node<'a> {
        match self.stack.pop().map(|f| f.container) {
            Some(Container::Object(members)) => Node::Object(members),
            Some(Container::Array(items)) => Node::Array(items),
            None => Node::Null, // not reached: close follows an open
        }
    }

    /// At a member name of the object on top: reads `"name" :`.
    fn member_name(&mut self) -> Result<(), GoJsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("looking for beginning of object key string"));
        }
        let name = self.string()?;
        let repeated = match self.stack.last_mut() {
            Some(top) => {
                top.pending = Some(name.clone());
                !top.names.insert(name.clone())
            }
            None => false,
        };
        if repeated && self.duplicate.is_none() {
            let m = format!("duplicate object name {}", go_quote(&name));
            self.duplicate = Some(GoJsonError { code: Code::Duplicate, path: self.path(), detail: format!("{m} at offset {}", self.i), message: m });
        }
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected("after object key"));
        }
        self.i += 1;
        Ok(())
    }

    fn scalar(&mut self) -> Result<Node<'a>, GoJsonError> {
        let start = self.i;
        match self.peek() {
            Some(b'"') => Ok(Node::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                Ok(Node::Number(self.slice(start, self.i)?))
            }
            Some(b't') => self.literal("true", Node::Bool(true)),
            Some(b'f') => self.literal("false", Node::Bool(false)),
            Some(b'n') => self.literal("null", Node::Null),
            _ => Err(self.unexpected("looking for beginning of value")),
        }
    }

    fn literal(&mut self, word: &str, node: Node<'a>) -> Result<Node<'a>, GoJsonError> {
        for (k, w) in word.bytes().enumerate() {
            if self.peek() != Some(w) {
                let expecting = word.get(k..=k).unwrap_or("");
                return Err(self.unexpected(&format!("in literal {word} (expecting {expecting:?})")));
            }
            self.i += 1;
        }
        Ok(node)
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn number(&mut self) -> Result<(), GoJsonError> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.unexpected("in numeric literal")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.unexpected("after decimal point in numeric literal"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.unexpected("in exponent of numeric literal"));
            }
            self.digits();
        }
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, GoJsonError> {
        let mut v = 0;
        for _ in 0..4 {
            let Some(h) = self.peek().and_then(hex_value) else {
                return Err(self.unexpected("in \\u hexadecimal character escape"));
            };
            v = v * 16 + h;
            self.i += 1;
        }
        Ok(v)
    }

    fn bad_surrogate(&mut self, at: usize) {
        if self.surrogate.is_none() {
            let esc = self.s.get(at..at + 6).unwrap_or("");
            self.surrogate = Some(GoJsonError {
                code: Code::Surrogate,
                path: self.path(),
                message: BAD_ESCAPE.into(),
                detail: format!("unpaired escaped surrogate {esc} at offset {at}"),
            });
        }
    }

    /// At a `"`: the unescaped string. An escaped surrogate that does not pair is recorded and read
    /// as U+FFFD, as Go's decoder reads it.
    fn string(&mut self) -> Result<Cow<'a, str>, GoJsonError> {
        self.i += 1;
        let start = self.i;
        // Fast path: no escape.
        loop {
            match self.peek() {
                None => return Err(self.fault(Code::Syntax, "unexpected end of JSON input in string literal")),
                Some(b'"') => {
                    let s = self.slice(start, self.i)?;
                    self.i += 1;
                    return Ok(Cow::Borrowed(s));
                }
                Some(b'\\') => break,
                Some(c) if c < 0x20 => return Err(self.unexpected("in string literal")),
                Some(_) => self.i += 1,
            }
        }
        let mut out = String::from(self.slice(start, self.i)?);
        let mut run = self.i;
        loop {
            match self.peek() {
                None => return Err(self.fault(Code::Syntax, "unexpected end of JSON input in string literal")),
                Some(b'"') => {
                    out.push_str(self.slice(run, self.i)?);
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(c) if c < 0x20 => return Err(self.unexpected("in string literal")),
                Some(b'\\') => {
                    out.push_str(self.slice(run, self.i)?);
                    let esc = self.i;
                    self.i += 1;
                    let short = match self.peek() {
                        Some(b'"') => Some('"'),
                        Some(b'\\') => Some('\\'),
                        Some(b'/') => Some('/'),
                        Some(b'b') => Some('\u{8}'),
                        Some(b'f') => Some('\u{c}'),
                        Some(b'n') => Some('\n'),
                        Some(b'r') => Some('\r'),
                        Some(b't') => Some('\t'),
                        _ => None,
                    };
                    if let Some(ch) = short {
                        out.push(ch);
                        self.i += 1;
                    } else if self.peek() == Some(b'u') {
                        self.i += 1;
                        let unit = self.hex4()?;
                        self.unicode_escape(unit, esc, &mut out)?;
                    } else {
                        return Err(self.unexpected("in string escape code"));
                    }
                    run = self.i;
                }
                Some(_) => self.i += 1,
            }
        }
    }

    fn unicode_escape(&mut self, unit: u32, esc: usize, out: &mut String) -> Result<(), GoJsonError> {
        if (0xD800..=0xDBFF).contains(&unit) {
            // A high surrogate must be followed at once by an escaped low one.
            if self.at(self.i) == Some(b'\\') && self.at(self.i + 1) == Some(b'u') {
                let save = self.i;
                self.i += 2;
                let low = self.hex4()?;
                if (0xDC00..=0xDFFF).contains(&low) {
                    let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                    return Ok(());
                }
                self.i = save; // the second escape is read again on its own
            }
            self.bad_surrogate(esc);
            out.push('\u{FFFD}');
        } else if (0xDC00..=0xDFFF).contains(&unit) {
            self.bad_surrogate(esc);
            out.push('\u{FFFD}');
        } else {
            out.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
        }
        Ok(())
    }
}

/// Whether the innermost open container is an object.
fn top_kind(stack: &[Frame<'_>]) -> Option<bool> {
    stack.last().map(|f| matches!(f.container, Container::Object(_)))
}

/// Parses a wire text strictly (see the module documentation), with the given bounds.
pub fn parse_with(text: &[u8], max_bytes: usize, max_depth: usize) -> Result<Node<'_>, GoJsonError> {
    if text.len() > max_bytes {
        return Err(GoJsonError {
            code: Code::Size,
            path: Vec::new(),
            message: format!("must be at most {max_bytes} bytes"),
            detail: format!("JSON text of {} bytes is over the {max_bytes}-byte limit", text.len()),
        });
    }
    let s = std::str::from_utf8(text).map_err(|e| GoJsonError {
        code: Code::Utf8,
        path: Vec::new(),
        message: INVALID_JSON.into(),
        detail: format!("text is not valid UTF-8 at byte {}", e.valid_up_to()),
    })?;
    Parser { s, b: text, i: 0, max_depth, stack: Vec::new(), surrogate: None, duplicate: None }.parse()
}

/// [`parse_with`] with the default bounds.
pub fn parse(text: &[u8]) -> Result<Node<'_>, GoJsonError> {
    parse_with(text, MAX_INPUT_BYTES, MAX_DEPTH)
}

/// Appends a string as Go's json.Marshal writes it (HTML-safe): `"` `\` and the short forms
/// \b \f \n \r \t, other U+0000–U+001F as \u00xx (lower-case hex), `<` `>` `&` as \u003c \u003e
/// \u0026, U+2028/U+2029 escaped; everything else, DEL included, as itself.
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let escape: Option<&[u8]> = match c {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            b'<' => Some(b"\\u003c"),
            b'>' => Some(b"\\u003e"),
            b'&' => Some(b"\\u0026"),
            0xE2 if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xA8 | 0xA9)) => {
                if b.get(i + 2) == Some(&0xA8) {
                    Some(b"\\u2028")
                } else {
                    Some(b"\\u2029")
                }
            }
            _ => None,
        };
        let width = if c == 0xE2 && escape.is_some() { 3 } else { 1 };
        if escape.is_none() && c >= 0x20 {
            i += 1;
            continue;
        }
        out.extend_from_slice(b.get(run..i).unwrap_or_default());
        match escape {
            Some(e) => out.extend_from_slice(e),
            None => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex_digit(c >> 4), hex_digit(c & 15)]),
        }
        i += width;
        run = i;
    }
    out.extend_from_slice(b.get(run..).unwrap_or_default());
    out.push(b'"');
}

/// Lower-case hex digit of a nibble.
fn hex_digit(n: u8) -> u8 {
    if n < 10 { b'0' + n } else { b'a' + n - 10 }
}

enum Work<'n, 'a> {
    Node(&'n Node<'a>),
    Lit(u8),
    Name(&'n str),
}

/// Appends Go's canonical text of a parsed value.
pub fn write_node(out: &mut Vec<u8>, root: &Node<'_>) {
    let mut work = vec![Work::Node(root)];
    while let Some(item) = work.pop() {
        match item {
            Work::Lit(c) => out.push(c),
            Work::Name(name) => {
                write_string(out, name);
                out.push(b':');
            }
            Work::Node(node) => match node {
                Node::String(s) => write_string(out, s),
                Node::Number(lexeme) => out.extend_from_slice(lexeme.as_bytes()),
                Node::Bool(true) => out.extend_from_slice(b"true"),
                Node::Bool(false) => out.extend_from_slice(b"false"),
                Node::Null => out.extend_from_slice(b"null"),
                Node::Array(items) => {
                    out.push(b'[');
                    work.push(Work::Lit(b']'));
                    for (k, item) in items.iter().enumerate().rev() {
                        work.push(Work::Node(item));
                        if k > 0 {
                            work.push(Work::Lit(b','));
                        }
                    }
                }
                Node::Object(members) => {
                    out.push(b'{');
                    work.push(Work::Lit(b'}'));
                    let mut sorted: Vec<&(Cow<'_, str>, Node<'_>)> = members.iter().collect();
                    // Byte order of UTF-8 is code point order, as Go sorts map keys.
                    sorted.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    for (k, (name, value)) in sorted.into_iter().enumerate().rev() {
                        work.push(Work::Node(value));
                        work.push(Work::Name(name));
                        if k > 0 {
                            work.push(Work::Lit(b','));
                        }
                    }
                }
            },
        }
    }
}

/// The canonical UTF-8 bytes of a wire text (default bounds).
pub fn canonicalize(text: &[u8]) -> Result<Vec<u8>, GoJsonError> {
    let root = parse(text)?;
    let mut out = Vec::with_capacity(text.len());
    write_node(&mut out, &root);
    Ok(out)
}
