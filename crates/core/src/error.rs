//! The core's error type: every fallible function returns [`Error`], and each variant has a stable
//! machine-readable code ([`Error::code`]), which two variants share when they are the same fault found
//! by different parsers (`JSON_SYNTAX`). The seven `GoJson*` variants carry a [`GoJsonFault`], where
//! the wire text is at fault. One refusal is an answer rather than an error: a mental-poker play that
//! breaks the rules is `Ok(Err(`[`crate::deck::PlayRejection`]`))` from `deck::validate_play`.
//!
//! The code is the contract: the WASM layer forwards it as `CODE: message` (a gojson refusal as `CODE:
//! path`, message and detail on lines of their own), the TypeScript layer turns it into a typed error,
//! and tests assert on it. Codes may not change; messages may be reworded, except those of pyjson.rs
//! and gojson.rs, which must stay word for word their TypeScript twins'.

use crate::gojson::GoJsonFault;
use core::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    // The JSON faults of jcs.rs and pyjson.rs, which share these codes. Each parser words its own
    // message (jcs after serde_json, pyjson as its TypeScript twin), so the variants carry it whole.
    /// The text is not JSON (position and reason in the message).
    JsonSyntax(String),
    /// An object repeats a key (I-JSON §2.3); the message names it.
    JsonDuplicateKey(String),
    /// A string holds an unpaired UTF-16 surrogate, raw or as a `\uXXXX` escape (I-JSON §2.1).
    JsonLoneSurrogate(String),
    /// A number that is not a finite IEEE-754 double, such as `1e400` (I-JSON §2.2).
    JsonNumberRange(String),
    /// Nesting deeper than [`crate::jcs::MAX_DEPTH`].
    JsonTooDeep(String),
    /// A JSON text longer than [`crate::jcs::MAX_INPUT_BYTES`] (its length in bytes).
    JsonTooLarge(usize),
    // A wire text refused by gojson.rs, with the codes of the TypeScript twin's GoJsonError and
    // where the fault is (see there for which is reported first).
    /// Not JSON as Go's scanner reads it.
    GoJsonSyntax(Box<GoJsonFault>),
    /// The bytes are not UTF-8.
    GoJsonUtf8(Box<GoJsonFault>),
    /// A member name repeated in one object, compared after unescaping.
    GoJsonDuplicate(Box<GoJsonFault>),
    /// An escaped surrogate that does not pair.
    GoJsonSurrogate(Box<GoJsonFault>),
    /// Anything but whitespace after the value.
    GoJsonTrailing(Box<GoJsonFault>),
    /// More arrays and objects open at once than the bound.
    GoJsonDepth(Box<GoJsonFault>),
    /// A text over the size bound.
    GoJsonSize(Box<GoJsonFault>),
    /// An allocation failed (in WebAssembly: the instance's 4 GiB are used up). Nothing was produced.
    OutOfMemory,
    /// The input bytes are not UTF-8.
    Utf8,
    /// A fixed-size input had the wrong length: (what, expected, got).
    Length(&'static str, usize, usize),
    /// The signature does not verify under the strict policy (see `ed25519.rs`).
    SignatureInvalid,
    /// The public key bytes do not decode to a point, or the encoding is non-canonical.
    PublicKeyInvalid,
    /// AEAD open failed: wrong key, nonce, associated data, or tampered ciphertext/tag.
    AeadOpenFailed,
    /// X25519 produced the all-zero shared secret: the peer key has small order.
    X25519LowOrder,
    /// A card's rank or suit index is not an integer in 0..=255.
    DeckCardRange,
    /// A deck blob (its length in bytes) is too short to hold a nonce and a tag.
    DeckBlobTooShort(usize),
    /// An OT context's sender role or payload type is not 1 or 2.
    OtContextInvalid(&'static str),
    /// An RSA modulus that is not 2048 bits and odd (or, as bytes, not 256 of them).
    OtModulusInvalid(String),
    /// An integer operand (named) outside the range the operation takes.
    OtIntRange(&'static str),
    /// The blinding value r shares a factor with n.
    OtNotUnit,
    /// RSA key numbers that do not make a consistent RSA-2048 key with e = 65537.
    OtKeyInvalid(String),
    /// Key generation failed.
    OtKeygenFailed(String),
    /// An `rsa_pub` that is not the JSON object {"e", "n"} with an integer e and hex n.
    OtRsaPubMalformed(String),
    /// An `rsa_pub` whose exponent is not 65537 (the exponent as written).
    OtRsaPubExponent(String),
    /// No FDH candidate was accepted for any 32-bit counter.
    OtFdhExhausted,
    /// An AGBX1 box shorter than magic, ephemeral key, nonce and tag (its length in bytes).
    BoxTooShort(usize),
    /// A box that does not start with `AGBX1`.
    BoxBadMagic,
    /// A proof-of-work difficulty (zero bytes) above [`crate::pow::MAX_DIFFICULTY`].
    PowDifficultyRange(u32),
}

impl Error {
    /// Where a wire text refused by gojson.rs is at fault, as the reference reports it.
    pub fn go_json_fault(&self) -> Option<&GoJsonFault> {
        match self {
            Error::GoJsonSyntax(r) | Error::GoJsonUtf8(r) | Error::GoJsonDuplicate(r) | Error::GoJsonSurrogate(r)
            | Error::GoJsonTrailing(r) | Error::GoJsonDepth(r) | Error::GoJsonSize(r) => Some(r),
            _ => None,
        }
    }

    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::JsonSyntax(_) => "JSON_SYNTAX",
            Error::JsonDuplicateKey(_) => "JSON_DUPLICATE_KEY",
            Error::JsonLoneSurrogate(_) => "JSON_LONE_SURROGATE",
            Error::JsonNumberRange(_) => "JSON_NUMBER_RANGE",
            Error::JsonTooDeep(_) => "JSON_TOO_DEEP",
            Error::JsonTooLarge(_) => "JSON_TOO_LARGE",
            Error::GoJsonSyntax(_) => "JSON_SYNTAX",
            Error::GoJsonUtf8(_) => "JSON_UTF8",
            Error::GoJsonDuplicate(_) => "JSON_DUPLICATE",
            Error::GoJsonSurrogate(_) => "JSON_SURROGATE",
            Error::GoJsonTrailing(_) => "JSON_TRAILING",
            Error::GoJsonDepth(_) => "JSON_DEPTH",
            Error::GoJsonSize(_) => "JSON_SIZE",
            Error::OutOfMemory => "OUT_OF_MEMORY",
            Error::Utf8 => "UTF8_INVALID",
            Error::Length(..) => "BAD_LENGTH",
            Error::SignatureInvalid => "SIGNATURE_INVALID",
            Error::PublicKeyInvalid => "PUBLIC_KEY_INVALID",
            Error::AeadOpenFailed => "AEAD_OPEN_FAILED",
            Error::X25519LowOrder => "X25519_LOW_ORDER",
            Error::DeckCardRange => "DECK_CARD_RANGE",
            Error::DeckBlobTooShort(_) => "DECK_BLOB_TOO_SHORT",
            Error::OtContextInvalid(_) => "OT_CONTEXT_INVALID",
            Error::OtModulusInvalid(_) => "OT_MODULUS_INVALID",
            Error::OtIntRange(_) => "OT_INT_RANGE",
            Error::OtNotUnit => "OT_NOT_UNIT",
            Error::OtKeyInvalid(_) => "OT_KEY_INVALID",
            Error::OtKeygenFailed(_) => "OT_KEYGEN_FAILED",
            Error::OtRsaPubMalformed(_) => "OT_RSA_PUB_MALFORMED",
            Error::OtRsaPubExponent(_) => "OT_RSA_PUB_EXPONENT",
            Error::OtFdhExhausted => "OT_FDH_EXHAUSTED",
            Error::BoxTooShort(_) => "BOX_TOO_SHORT",
            Error::BoxBadMagic => "BOX_BAD_MAGIC",
            Error::PowDifficultyRange(_) => "POW_DIFFICULTY_RANGE",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::JsonSyntax(m) | Error::JsonDuplicateKey(m) | Error::JsonLoneSurrogate(m) | Error::JsonNumberRange(m) | Error::JsonTooDeep(m) => {
                write!(f, "{m}")
            }
            Error::GoJsonSyntax(r) | Error::GoJsonUtf8(r) | Error::GoJsonDuplicate(r) | Error::GoJsonSurrogate(r)
            | Error::GoJsonTrailing(r) | Error::GoJsonDepth(r) | Error::GoJsonSize(r) => write!(f, "{} ({})", r.message, r.detail),
            Error::JsonTooLarge(n) => write!(f, "JSON text of {n} bytes is over the {}-byte limit", crate::jcs::MAX_INPUT_BYTES),
            Error::OutOfMemory => write!(f, "out of memory"),
            Error::Utf8 => write!(f, "input is not valid UTF-8"),
            Error::Length(what, want, got) => write!(f, "{what} must be {want} bytes, got {got}"),
            Error::SignatureInvalid => write!(f, "signature does not verify (strict Ed25519)"),
            Error::PublicKeyInvalid => write!(f, "public key is not a canonical Ed25519 point encoding"),
            Error::AeadOpenFailed => write!(f, "decryption failed: ciphertext, tag, nonce, key or associated data do not match"),
            Error::X25519LowOrder => write!(f, "X25519 shared secret is all zero: the peer public key has small order"),
            Error::DeckCardRange => write!(f, "card indices must fit one byte each"),
            Error::DeckBlobTooShort(n) => write!(f, "blob too short to contain nonce + tag ({n} bytes, at least {} needed)", crate::deck::MIN_BLOB_LEN),
            Error::OtContextInvalid(what) => write!(f, "{what} must be 1 or 2"),
            Error::OtModulusInvalid(m) | Error::OtKeyInvalid(m) | Error::OtRsaPubMalformed(m) => write!(f, "{m}"),
            Error::OtIntRange(what) => write!(f, "{what} must be a {}-byte integer below n{}", crate::ot::RSA_BYTES, if *what == "r" { " and at least 1" } else { "" }),
            Error::OtNotUnit => write!(f, "r shares a factor with n"),
            Error::OtKeygenFailed(m) => write!(f, "RSA key generation failed: {m}"),
            Error::OtRsaPubExponent(e) => write!(f, "RSA public exponent must be 65537, got {e}"),
            Error::OtFdhExhausted => write!(f, "no FDH candidate below n in 2^32 tries"),
            Error::BoxTooShort(n) => write!(f, "box of {n} bytes is shorter than the {}-byte minimum", crate::sealed_box::MIN_LEN),
            Error::BoxBadMagic => write!(f, "box does not start with AGBX1"),
            Error::PowDifficultyRange(d) => write!(f, "proof-of-work difficulty {d} is above the {}-byte limit", crate::pow::MAX_DIFFICULTY),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = core::result::Result<T, Error>;

/// Checks that `bytes` has exactly `N` bytes and returns it as an array.
pub(crate) fn fixed<const N: usize>(what: &'static str, bytes: &[u8]) -> Result<[u8; N]> {
    bytes.try_into().map_err(|_| Error::Length(what, N, bytes.len()))
}
