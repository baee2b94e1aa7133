//! The JSON text reader behind pyjson.rs and gojson.rs: RFC 8259's grammar, read once from the left
//! with an explicit stack (no input can overflow the small WebAssembly call stack), each value handed
//! to a [`Handler`] as it is met. jcs.rs parses through `serde_json` instead and maps its refusals
//! onto the same codes as pyjson.rs.
//!
//! The two dialects accept the same texts but refuse them differently, so the reader decides only
//! what is common and leaves the rest to its caller:
//! - a fault of the text is reported as what broke and where ([`Fault`]); the dialect words it (the
//!   TypeScript twin's messages, Go's scanner's) and gives it its code in [`crate::Error`];
//! - the nesting bound and what an escaped surrogate that does not pair is ([`Options`]) are parameters;
//! - what a dialect refuses beyond the grammar (a repeated key, a number that is not a double, a digit
//!   after a leading zero) it refuses in its handler, whose error stops the reading where it is.
//!
//! Strings with no escape are handed over as a place in the text; escaped ones are decoded into the
//! handler's buffer, which grows fallibly ([`Error::OutOfMemory`], never an abort).

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::error::{Error, Result};

/// What the dialect decides.
#[derive(Clone, Copy)]
pub(crate) struct Options {
    /// The most arrays and objects open at once; the next `[` or `{` is [`FaultKind::Depth`].
    pub max_depth: usize,
    pub surrogates: Surrogates,
}

/// What an escaped surrogate that does not pair is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Surrogates {
    /// A fault where it is met ([`FaultKind::LoneSurrogate`]). A text that ends where the low half of
    /// a pair should start leaves the string unterminated ([`FaultKind::InString`]).
    Refuse,
    /// Read as U+FFFD and reported to [`Handler::lone_surrogate`], as Go's decoder reads it; a second
    /// escape that does not complete the pair is then read on its own.
    Replace,
}

/// A string: `len` bytes at `at` in the text (no escape in it) or, `decoded`, in the handler's buffer.
#[derive(Clone, Copy)]
pub(crate) struct Str {
    pub at: usize,
    pub len: usize,
    pub decoded: bool,
}

/// A value that is not a container.
#[derive(Clone, Copy)]
pub(crate) enum Scalar {
    Null,
    True,
    False,
    /// The `len` bytes of a number at `at` in the text; `integer` when it has no fraction or exponent.
    Number { at: usize, len: usize, integer: bool },
    Str(Str),
}

/// Where a number stopped following the grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumberPart {
    /// No digit after the sign.
    Integer,
    /// No digit after the decimal point.
    Fraction,
    /// No digit after `e` and its sign.
    Exponent,
}

/// A fault of the text: what the reader met at byte `at` (the text's length if it ended there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fault {
    pub at: usize,
    pub kind: FaultKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FaultKind {
    /// No value starts at `at`.
    Value,
    /// No member name starts at `at` (after `{` or a member's `,`).
    Key,
    /// No `:` after a member name.
    Colon,
    /// Neither `,` nor `}` after a member's value.
    AfterMember,
    /// Neither `,` nor `]` after an array element.
    AfterElement,
    /// Something other than whitespace after the value.
    Trailing,
    /// A `[` or `{` that would open one level more than [`Options::max_depth`].
    Depth,
    /// The literal `word` starting at `start` differs from the text at `at`.
    Literal { start: usize, word: &'static str },
    /// The number starting at `start` breaks off at `at`.
    Number { start: usize, part: NumberPart },
    /// A string ends at `at` without its closing quote, or holds a raw control character there.
    InString,
    /// The escape whose backslash is at `start` is not one of JSON's (`at` is the byte after it).
    Escape { start: usize },
    /// The `\u` escape whose backslash is at `start` has no hex digit at `at`.
    Hex { start: usize },
    /// Under [`Surrogates::Refuse`], the escape at `at` is an unpaired high (or low) surrogate.
    LoneSurrogate { high: bool },
}

/// What a dialect does with the values as they are read. Events come in text order; an error from
/// any of them stops the reading and is what [`read`] returns.
pub(crate) trait Handler {
    /// The buffer escaped strings are decoded into, at its end.
    fn decoded(&mut self) -> &mut String;
    /// A `[` (or, `obj`, a `{`) opens a container.
    fn open(&mut self, obj: bool) -> Result<()>;
    /// The name of a member of the innermost object, ending (closing quote included) before `end`.
    fn key(&mut self, name: Str, end: usize) -> Result<()>;
    /// The `,` after a member's value: the next member begins.
    fn next_member(&mut self) {}
    fn scalar(&mut self, value: Scalar) -> Result<()>;
    /// The innermost container closes.
    fn close(&mut self) -> Result<()>;
    /// Under [`Surrogates::Replace`], the escape at `at` is an unpaired surrogate.
    fn lone_surrogate(&mut self, _at: usize) {}
    /// The dialect's error for a fault of the text, given in the state the events so far left.
    fn fault(&self, fault: Fault) -> Error;
}

/// Reads `text`, a whole JSON text, into `handler`.
pub(crate) fn read<H: Handler>(text: &str, options: Options, handler: &mut H) -> Result<()> {
    Reader { s: text, b: text.as_bytes(), i: 0, options, open: Vec::new() }.run(handler)
}

/// `v.push(x)`, refusing rather than aborting when memory runs out.
#[inline]
pub(crate) fn push<T>(v: &mut Vec<T>, x: T) -> Result<()> {
    if v.len() == v.capacity() {
        v.try_reserve(1).map_err(|_| Error::OutOfMemory)?;
    }
    v.push(x);
    Ok(())
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

struct Reader<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    options: Options,
    /// For each container still open, whether it is an object.
    open: Vec<bool>,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn ws(&mut self) {
        // Compact text has none; indented text has a newline and a run of spaces.
        if let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            let rest = self.b.get(self.i..).unwrap_or(&[]);
            self.i += rest.iter().position(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t')).unwrap_or(rest.len());
        }
    }

    fn run<H: Handler>(mut self, h: &mut H) -> Result<()> {
        'value: loop {
            self.ws();
            let start = self.i;
            match self.peek() {
                Some(c @ (b'{' | b'[')) => {
                    if self.open.len() >= self.options.max_depth {
                        return Err(h.fault(Fault { at: start, kind: FaultKind::Depth }));
                    }
                    let obj = c == b'{';
                    self.i += 1;
                    h.open(obj)?;
                    push(&mut self.open, obj)?;
                    self.ws();
                    if self.peek() == Some(if obj { b'}' } else { b']' }) {
                        self.i += 1;
                        self.open.pop();
                        h.close()?;
                    } else {
                        if obj {
                            self.key(h)?;
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    let s = self.string(h)?;
                    h.scalar(Scalar::Str(s))?;
                }
                Some(b't') => self.literal(h, "true", Scalar::True)?,
                Some(b'f') => self.literal(h, "false", Scalar::False)?,
                Some(b'n') => self.literal(h, "null", Scalar::Null)?,
                Some(b'-' | b'0'..=b'9') => {
                    let integer = self.number(h)?;
                    h.scalar(Scalar::Number { at: start, len: self.i - start, integer })?;
                }
                _ => return Err(h.fault(Fault { at: start, kind: FaultKind::Value })),
            }
            // A value is complete: go on in the container it is in.
            loop {
                let Some(&obj) = self.open.last() else { break 'value };
                self.ws();
                let at = self.i;
                match (obj, self.peek()) {
                    (true, Some(b'}')) | (false, Some(b']')) => {
                        self.i += 1;
                        self.open.pop();
                        h.close()?;
                    }
                    (true, Some(b',')) => {
                        self.i += 1;
                        h.next_member();
                        self.key(h)?;
                        continue 'value;
                    }
                    (false, Some(b',')) => {
                        self.i += 1;
                        continue 'value;
                    }
                    (true, _) => return Err(h.fault(Fault { at, kind: FaultKind::AfterMember })),
                    (false, _) => return Err(h.fault(Fault { at, kind: FaultKind::AfterElement })),
                }
            }
        }
        self.ws();
        if self.i < self.b.len() {
            return Err(h.fault(Fault { at: self.i, kind: FaultKind::Trailing }));
        }
        Ok(())
    }

    /// Reads `"name" :` of the next member of the innermost object.
    fn key<H: Handler>(&mut self, h: &mut H) -> Result<()> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(h.fault(Fault { at: self.i, kind: FaultKind::Key }));
        }
        let name = self.string(h)?;
        h.key(name, self.i)?;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(h.fault(Fault { at: self.i, kind: FaultKind::Colon }));
        }
        self.i += 1;
        Ok(())
    }

    fn literal<H: Handler>(&mut self, h: &mut H, word: &'static str, value: Scalar) -> Result<()> {
        let start = self.i;
        for w in word.bytes() {
            if self.peek() != Some(w) {
                return Err(h.fault(Fault { at: self.i, kind: FaultKind::Literal { start, word } }));
            }
            self.i += 1;
        }
        h.scalar(value)
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    /// Moves past the number at the cursor; whether it is an integer (no fraction, no exponent).
    fn number<H: Handler>(&mut self, h: &mut H) -> Result<bool> {
        let start = self.i;
        let fault = |at, part| h.fault(Fault { at, kind: FaultKind::Number { start, part } });
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(fault(self.i, NumberPart::Integer)),
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(fault(self.i, NumberPart::Fraction));
            }
            self.digits();
            integer = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(fault(self.i, NumberPart::Exponent));
            }
            self.digits();
            integer = false;
        }
        Ok(integer)
    }

    /// A string at the cursor (on its opening quote).
    fn string<H: Handler>(&mut self, h: &mut H) -> Result<Str> {
        self.i += 1;
        let start = self.i;
        self.plain_run();
        match self.peek() {
            Some(b'"') => {
                self.i += 1;
                return Ok(Str { at: start, len: self.i - 1 - start, decoded: false });
            }
            Some(b'\\') => {}
            _ => return Err(h.fault(Fault { at: self.i, kind: FaultKind::InString })),
        }
        let at = h.decoded().len();
        self.copy(h, start)?;
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Str { at, len: h.decoded().len() - at, decoded: true });
                }
                Some(b'\\') => self.escape(h)?,
                Some(c) if c >= 0x20 => {
                    let from = self.i;
                    self.plain_run();
                    self.copy(h, from)?;
                }
                _ => return Err(h.fault(Fault { at: self.i, kind: FaultKind::InString })),
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
    fn copy<H: Handler>(&mut self, h: &mut H, from: usize) -> Result<()> {
        let run = self.s.get(from..self.i).unwrap_or("");
        let buf = h.decoded();
        buf.try_reserve(run.len()).map_err(|_| Error::OutOfMemory)?;
        buf.push_str(run);
        Ok(())
    }

    fn push_char<H: Handler>(h: &mut H, c: char) -> Result<()> {
        let buf = h.decoded();
        buf.try_reserve(4).map_err(|_| Error::OutOfMemory)?;
        buf.push(c);
        Ok(())
    }

    /// The escape at the cursor; an escaped high surrogate takes its low one along.
    fn escape<H: Handler>(&mut self, h: &mut H) -> Result<()> {
        let esc = self.i;
        let short = match self.b.get(esc + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let unit = self.hex4(h, esc)?;
                return self.unicode_escape(h, esc, unit);
            }
            _ => return Err(h.fault(Fault { at: esc + 1, kind: FaultKind::Escape { start: esc } })),
        };
        self.i += 2;
        Self::push_char(h, short)
    }

    /// The character of the `\u` escape at `esc` (read up to the cursor), which stands for `unit`.
    fn unicode_escape<H: Handler>(&mut self, h: &mut H, esc: usize, unit: u32) -> Result<()> {
        if (0xdc00..0xe000).contains(&unit) {
            return self.lone_surrogate(h, esc, false);
        }
        if !(0xd800..0xdc00).contains(&unit) {
            return Self::push_char(h, char::from_u32(unit).unwrap_or('\u{fffd}'));
        }
        // A high surrogate pairs only with an escaped low one right after it.
        let second = self.i;
        match (self.b.get(second), self.b.get(second + 1)) {
            (Some(b'\\'), Some(b'u')) => {
                let low = self.hex4(h, second)?;
                if (0xdc00..0xe000).contains(&low) {
                    let c = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                    return Self::push_char(h, char::from_u32(c).unwrap_or('\u{fffd}'));
                }
                self.i = second;
            }
            (None, _) if self.options.surrogates == Surrogates::Refuse => {
                return Err(h.fault(Fault { at: second, kind: FaultKind::InString }));
            }
            (Some(b'\\'), None) if self.options.surrogates == Surrogates::Refuse => {
                return Err(h.fault(Fault { at: second + 1, kind: FaultKind::InString }));
            }
            _ => {}
        }
        self.lone_surrogate(h, esc, true)
    }

    fn lone_surrogate<H: Handler>(&mut self, h: &mut H, esc: usize, high: bool) -> Result<()> {
        match self.options.surrogates {
            Surrogates::Refuse => Err(h.fault(Fault { at: esc, kind: FaultKind::LoneSurrogate { high } })),
            Surrogates::Replace => {
                h.lone_surrogate(esc);
                Self::push_char(h, '\u{fffd}')
            }
        }
    }

    /// Consumes the `\uXXXX` escape at `esc` and returns its code unit.
    fn hex4<H: Handler>(&mut self, h: &mut H, esc: usize) -> Result<u32> {
        let mut v = 0;
        for k in esc + 2..esc + 6 {
            let d = match self.b.get(k) {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(h.fault(Fault { at: k, kind: FaultKind::Hex { start: esc } })),
            };
            v = v << 4 | u32::from(d);
        }
        self.i = esc + 6;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes the events as a line of text; a fault as its Debug form.
    struct Trace<'a> {
        text: &'a str,
        buf: String,
        out: String,
    }

    impl Handler for Trace<'_> {
        fn decoded(&mut self) -> &mut String {
            &mut self.buf
        }
        fn open(&mut self, obj: bool) -> Result<()> {
            self.out.push(if obj { '{' } else { '[' });
            Ok(())
        }
        fn key(&mut self, name: Str, end: usize) -> Result<()> {
            self.scalar(Scalar::Str(name))?;
            self.out.push_str(&format!("@{end}:"));
            Ok(())
        }
        fn next_member(&mut self) {
            self.out.push(',');
        }
        fn scalar(&mut self, value: Scalar) -> Result<()> {
            let s = match value {
                Scalar::Null | Scalar::True | Scalar::False => "lit".to_string(),
                Scalar::Number { at, len, integer } => format!("{}{}", self.text.get(at..at + len).unwrap_or("?"), if integer { "i" } else { "f" }),
                Scalar::Str(s) => format!("{:?}", (if s.decoded { &self.buf } else { self.text }).get(s.at..s.at + s.len).unwrap_or("?")),
            };
            self.out.push_str(&s);
            self.out.push(' ');
            Ok(())
        }
        fn close(&mut self) -> Result<()> {
            self.out.push('}');
            Ok(())
        }
        fn lone_surrogate(&mut self, at: usize) {
            self.out.push_str(&format!("lone@{at} "));
        }
        fn fault(&self, fault: Fault) -> Error {
            Error::JsonSyntax(format!("{fault:?}"))
        }
    }

    fn trace(text: &str, surrogates: Surrogates) -> String {
        let mut t = Trace { text, buf: String::new(), out: String::new() };
        match read(text, Options { max_depth: 2, surrogates }, &mut t) {
            Ok(()) => t.out,
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn events_and_faults() {
        use Surrogates::{Refuse, Replace};
        for (text, surrogates, want) in [
            (r#" {"a" : [1.5, -0, "x\n"], "b":null} "#, Refuse, r#"{"a" @5:[1.5f -0i "x\n" },"b" @29:lit }"#),
            (r#""\ud83d\ude00\u00e9""#, Refuse, r#""😀é" "#),
            ("[[[1]]]", Refuse, "Fault { at: 2, kind: Depth }"),
            ("[1 2]", Refuse, "Fault { at: 3, kind: AfterElement }"),
            ("{\"a\":1,}", Refuse, "Fault { at: 7, kind: Key }"),
            ("1 x", Refuse, "Fault { at: 2, kind: Trailing }"),
            ("[tru]", Refuse, r#"Fault { at: 4, kind: Literal { start: 1, word: "true" } }"#),
            ("1.e5", Refuse, "Fault { at: 2, kind: Number { start: 0, part: Fraction } }"),
            ("\"a\u{1}\"", Refuse, "Fault { at: 2, kind: InString }"),
            (r#""\x""#, Refuse, "Fault { at: 2, kind: Escape { start: 1 } }"),
            (r#""\u12g4""#, Refuse, "Fault { at: 5, kind: Hex { start: 1 } }"),
            // An unpaired surrogate: refused where it is, or read as U+FFFD and the reading goes on.
            (r#""\ud800\u0041""#, Refuse, "Fault { at: 1, kind: LoneSurrogate { high: true } }"),
            (r#""\ud800\u0041""#, Replace, "lone@1 \"\u{fffd}A\" "),
            (r#""\udc00""#, Refuse, "Fault { at: 1, kind: LoneSurrogate { high: false } }"),
            // The text ending where the low half should be: unterminated, or read on to the same end.
            (r#""\ud800\"#, Refuse, "Fault { at: 8, kind: InString }"),
            (r#""\ud800\"#, Replace, "Fault { at: 8, kind: Escape { start: 7 } }"),
        ] {
            assert_eq!(trace(text, surrogates), want, "{text}");
        }
    }
}
