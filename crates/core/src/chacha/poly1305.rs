//! Poly1305 (RFC 8439 §2.5) for the AEAD, behind the small interface the construction needs.
use poly1305::universal_hash::{KeyInit, UniversalHash};

pub struct Poly1305(poly1305::Poly1305);

impl Poly1305 {
    pub fn new(key: &[u8; 32]) -> Self {
        Self(poly1305::Poly1305::new(key.into()))
    }
    /// Absorbs `data` zero-padded to a multiple of 16 bytes.
    pub fn update_padded(&mut self, data: &[u8]) {
        self.0.update_padded(data);
    }
    pub fn finalize(self) -> [u8; 16] {
        self.0.finalize().into()
    }
}
