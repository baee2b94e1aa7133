//! Go `encoding/json` canonical form, as the rin.host/v2 reference hashes it, with the strict wire
//! parser in front of it. The TypeScript twin is ts/crypto/gojson.ts; both read the vectors in
//! test-vectors/rin/gojson.json, whose expectations come from Go itself.
//!
//! Parsing (the reader in json_text.rs) accepts what the reference's `jsonwire.Validate` accepts and
//! reports the same class of fault first, each with a [`GoJsonFault`] saying where:
//! - a text over the size bound is [`Error::GoJsonSize`]; then bytes that are not UTF-8 are
//!   [`Error::GoJsonUtf8`];
//! - then the grammar, as Go's scanner reads it: the first fault from the left is
//!   [`Error::GoJsonSyntax`], [`Error::GoJsonTrailing`] (anything but whitespace after the value) or
//!   [`Error::GoJsonDepth`] (more open arrays and objects than the bound; Go's is 10000);
//! - only a grammatical text is judged for escaped surrogates that do not pair
//!   ([`Error::GoJsonSurrogate`]), and only one free of those for a member name repeated at any depth,
//!   compared after unescaping ([`Error::GoJsonDuplicate`]): the reference runs these checks in this
//!   order over the whole text.
//!
//! The canonical form is `json.Marshal` of the value decoded with `UseNumber`: members sorted by the
//! UTF-8 bytes of their unescaped names, no whitespace, number lexemes verbatim (`1.0`, `-0`, `1e400`),
//! and Go's HTML-safe string escaping ([`write_string`]).
//!
//! Parsing, writing and dropping the tree all use explicit stacks, so 10000 levels of nesting cannot
//! overflow the (small, in WebAssembly) call stack. Memory is bounded by the text's size, at most
//! [`MAX_INPUT_BYTES`]: about 20 bytes per value on wasm32 plus the output.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::error::{Error, Result};
use crate::json_text::{self, Fault, FaultKind, NumberPart, Scalar, Str, Surrogates};
use std::borrow::Cow;
use std::collections::HashSet;

/// The deepest nesting accepted by default: Go's scanner refuses its 10001st level.
pub const MAX_DEPTH: usize = 10_000;

/// The longest text accepted by default, in UTF-8 bytes (8 MiB): the reference control plane's largest
/// request body, so no wire text is longer. A hostile text at the bound (`[0,0,…]`) needs about
/// 300 MiB for its tree on wasm32.
pub const MAX_INPUT_BYTES: usize = 8 << 20;

/// One step from the root towards a fault: a member name or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathItem {
    Name(String),
    Index(usize),
}

/// Where a refused wire text is at fault, carried by the `GoJson*` variants of [`Error`]: `message`
/// is the reference's wording for the fault class, `detail` says where and what exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoJsonFault {
    pub path: Vec<PathItem>,
    pub message: String,
    pub detail: String,
}

impl GoJsonFault {
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

/// Builds the tree from what the reader reads, keeps the first unpaired surrogate and the first
/// repeated name for after the grammar, and words faults as Go's scanner does.
struct Builder<'a> {
    text: &'a str,
    max_depth: usize,
    stack: Vec<Frame<'a>>,
    root: Option<Node<'a>>,
    /// The escaped string being decoded, taken when it ends.
    scratch: String,
    surrogate: Option<Error>,
    duplicate: Option<Error>,
}

impl<'a> Builder<'a> {
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

    fn here(&self, message: impl Into<String>, detail: String) -> Box<GoJsonFault> {
        Box::new(GoJsonFault { path: self.path(), message: message.into(), detail })
    }

    fn string(&mut self, s: Str) -> Cow<'a, str> {
        if s.decoded {
            // The scratch holds this string alone: each one is taken as it ends.
            Cow::Owned(std::mem::take(&mut self.scratch))
        } else {
            Cow::Borrowed(self.text.get(s.at..s.at + s.len).unwrap_or(""))
        }
    }

    fn attach(&mut self, value: Node<'a>) {
        match self.stack.last_mut() {
            Some(top) => match &mut top.container {
                Container::Array(items) => items.push(value),
                Container::Object(members) => members.push((top.pending.clone().unwrap_or_default(), value)),
            },
            None => self.root = Some(value),
        }
    }

    fn surrogate_at(&self, at: usize) -> Error {
        let esc = self.text.get(at..at + 6).unwrap_or("");
        Error::GoJsonSurrogate(self.here(BAD_ESCAPE, format!("unpaired escaped surrogate {esc} at offset {at}")))
    }
}

impl<'a> json_text::Handler for Builder<'a> {
    fn decoded(&mut self) -> &mut String {
        &mut self.scratch
    }

    fn open(&mut self, obj: bool) -> Result<()> {
        let container = if obj { Container::Object(Vec::new()) } else { Container::Array(Vec::new()) };
        self.stack.push(Frame { container, names: HashSet::new(), pending: None });
        Ok(())
    }

    fn key(&mut self, name: Str, end: usize) -> Result<()> {
        let name = self.string(name);
        let repeated = match self.stack.last_mut() {
            Some(top) => {
                top.pending = Some(name.clone());
                !top.names.insert(name.clone())
            }
            None => false,
        };
        if repeated && self.duplicate.is_none() {
            let m = format!("duplicate object name {}", go_quote(&name));
            let detail = format!("{m} at offset {end}");
            self.duplicate = Some(Error::GoJsonDuplicate(self.here(m, detail)));
        }
        Ok(())
    }

    fn next_member(&mut self) {
        if let Some(top) = self.stack.last_mut() {
            top.pending = None;
        }
    }

    fn scalar(&mut self, value: Scalar) -> Result<()> {
        let node = match value {
            Scalar::Null => Node::Null,
            Scalar::True => Node::Bool(true),
            Scalar::False => Node::Bool(false),
            Scalar::Number { at, len, .. } => Node::Number(self.text.get(at..at + len).unwrap_or("")),
            Scalar::Str(s) => Node::String(self.string(s)),
        };
        self.attach(node);
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        let node = match self.stack.pop().map(|f| f.container) {
            Some(Container::Object(members)) => Node::Object(members),
            Some(Container::Array(items)) => Node::Array(items),
            None => Node::Null, // not reached: a close follows an open
        };
        self.attach(node);
        Ok(())
    }

    fn lone_surrogate(&mut self, at: usize) {
        if self.surrogate.is_none() {
            self.surrogate = Some(self.surrogate_at(at));
        }
    }

    fn fault(&self, fault: Fault) -> Error {
        let at = fault.at;
        let context: String = match fault.kind {
            FaultKind::Value => "looking for beginning of value".into(),
            FaultKind::Key => "looking for beginning of object key string".into(),
            FaultKind::Colon => "after object key".into(),
            FaultKind::AfterMember => "after object key:value pair".into(),
            FaultKind::AfterElement => "after array element".into(),
            FaultKind::Trailing => "after top-level value".into(),
            FaultKind::Depth => {
                return Error::GoJsonDepth(self.here(INVALID_JSON, format!("nesting deeper than {} at offset {at}", self.max_depth)));
            }
            FaultKind::Literal { start, word } => {
                let expecting = word.get(at - start..=at - start).unwrap_or("");
                format!("in literal {word} (expecting {expecting:?})")
            }
            FaultKind::Number { part: NumberPart::Integer, .. } => "in numeric literal".into(),
            FaultKind::Number { part: NumberPart::Fraction, .. } => "after decimal point in numeric literal".into(),
            FaultKind::Number { part: NumberPart::Exponent, .. } => "in exponent of numeric literal".into(),
            FaultKind::InString => "in string literal".into(),
            FaultKind::Escape { .. } => "in string escape code".into(),
            FaultKind::Hex { .. } => "in \\u hexadecimal character escape".into(),
            // Not reached: surrogates are read as Go reads them and reported after the grammar.
            FaultKind::LoneSurrogate { .. } => return self.surrogate_at(at),
        };
        let what = match self.text.get(at..).and_then(|rest| rest.chars().next()) {
            None => format!("unexpected end of JSON input {context}"),
            Some(c) => format!("invalid character {c:?} {context}"),
        };
        let here = self.here(INVALID_JSON, format!("{what} at offset {at}"));
        if fault.kind == FaultKind::Trailing {
            Error::GoJsonTrailing(here)
        } else {
            Error::GoJsonSyntax(here)
        }
    }
}

/// Parses a wire text strictly (see the module documentation), with the given bounds.
pub fn parse_with(text: &[u8], max_bytes: usize, max_depth: usize) -> Result<Node<'_>> {
    if text.len() > max_bytes {
        return Err(Error::GoJsonSize(Box::new(GoJsonFault {
            path: Vec::new(),
            message: format!("must be at most {max_bytes} bytes"),
            detail: format!("JSON text of {} bytes is over the {max_bytes}-byte limit", text.len()),
        })));
    }
    let s = std::str::from_utf8(text).map_err(|e| {
        Error::GoJsonUtf8(Box::new(GoJsonFault {
            path: Vec::new(),
            message: INVALID_JSON.into(),
            detail: format!("text is not valid UTF-8 at byte {}", e.valid_up_to()),
        }))
    })?;
    let mut b = Builder { text: s, max_depth, stack: Vec::new(), root: None, scratch: String::new(), surrogate: None, duplicate: None };
    json_text::read(s, json_text::Options { max_depth, surrogates: Surrogates::Replace }, &mut b)?;
    if let Some(e) = b.surrogate.take() {
        return Err(e);
    }
    if let Some(e) = b.duplicate.take() {
        return Err(e);
    }
    Ok(b.root.take().unwrap_or(Node::Null))
}

/// [`parse_with`] with the default bounds.
pub fn parse(text: &[u8]) -> Result<Node<'_>> {
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
pub fn canonicalize(text: &[u8]) -> Result<Vec<u8>> {
    let root = parse(text)?;
    let mut out = Vec::with_capacity(text.len());
    write_node(&mut out, &root);
    Ok(out)
}
